/* wgfuse bench — helpers shared by the bench's experiments (private to src/bench). */
#ifndef WGFUSE_BENCH_INTERNAL_H
#define WGFUSE_BENCH_INTERNAL_H

#include <stdint.h>

#include "wgfuse/gpu.h"

/* Time one compute pass holding reps_in_pass dispatches of pl over grid workgroups (bind
 * groups bg[i % n_bg]): GPU time when tm (a 1-pass timer) is given and reads back, else the
 * wall time of submit + wait. */
enum wgf_status wgf__bench_time_pass(wgf_ctx *ctx, wgf_timer *tm, wgf_pipeline *pl, wgf_bind_group **bg,
                                     uint32_t n_bg, uint32_t reps_in_pass, uint32_t grid, double *ns);
/* Median of t[0..n) (sorts t). */
double          wgf__bench_median(double *t, int n);

#endif
