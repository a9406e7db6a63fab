/* wgfuse runtime — measurements of the runtime itself: its overhead over raw webgpu.h calls
 * (bench/runtime_overhead) and the CPU cost of each call of one dispatch (wgfuse bench). */
#ifndef WGFUSE_GPU_BENCH_H
#define WGFUSE_GPU_BENCH_H

#include "wgfuse/gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WGF_OVERHEAD_MAX_REPS 64

struct wgf_overhead_result {
    uint32_t n_small, n_large;
    int      reps;
    double   runtime_us_median; /* per-dispatch slope through wgf_recorder_*                */
    double   raw_us_median;     /* the same loop with raw wgpu* calls                       */
    double   ratio;             /* runtime / raw: the runtime's overhead factor             */
    double   runtime_fixed_us, raw_fixed_us; /* median wall time at n_small (submit + wait) */
    double   runtime_us[WGF_OVERHEAD_MAX_REPS], raw_us[WGF_OVERHEAD_MAX_REPS];
};

/* N tiny dependent dispatches in one pass, runtime vs raw calls; see overhead_bench.c. */
enum wgf_status wgf_gpu_bench_overhead(wgf_ctx *ctx, uint32_t n_small, uint32_t n_large, int reps,
                                       struct wgf_overhead_result *out);

/* CPU cost of each WebGPU call of one dispatch, host-timed over many repetitions
 * (call_breakdown.c: only the runtime touches webgpu.h, so the runtime measures it). */
struct wgf_call_breakdown {
    int    reps;
    double encoder_create_us, pass_begin_us, set_pipeline_us, set_bind_group_us;
    double dispatch_us, pass_end_us, finish_us, submit_us;
    double total_us; /* sum of the above                                                   */
};

/* Fill *out over `reps` repetitions of one tiny dispatch (`wgfuse bench dispatch` reports it). */
enum wgf_status wgf_gpu_bench_call_breakdown(wgf_ctx *ctx, int reps, struct wgf_call_breakdown *out);

#ifdef __cplusplus
}
#endif
#endif
