/* wgfuse runtime — the advisor's cost model: a device description measured once
 * (`wgfuse advise --calibrate`, bench_calibrate.h) and the predicted time of a list of
 * schedule steps (the plans' own dispatches with the bytes and FLOPs they carry).
 *
 * Per step:  t = max(dispatch_us, bytes / bw(w), flops / rate(w))
 * where w is the step's workgroups and bw(w) = min(read_gbps, w * read_gbps_wg) (likewise
 * the rate): a dispatch of few workgroups cannot use the whole device, which is what makes a
 * one-workgroup mega-kernel slow on a wide GPU and fast where dispatches are expensive. An
 * indirect dispatch (grid unknown until the GPU writes it) counts as saturating. The
 * barrier and subgroup-reduction costs are measured and reported but not part of the sum:
 * the schedules do not count their barriers (docs/advise.md says what is left).
 * Everything here is arithmetic on caller-owned values; nothing is allocated. */
#ifndef WGFUSE_GPU_COST_H
#define WGFUSE_GPU_COST_H

#include <stdint.h>

#include "wgfuse/gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wgf_device_cost {
    double dispatch_us;      /* per dispatch, dispatches sharing one compute pass (a replay) */
    double read_gbps;        /* read bandwidth of the whole device, GB/s (1e9 bytes/s)       */
    double read_gbps_wg;     /* read bandwidth one workgroup of 256 invocations reaches      */
    double gflops;           /* f32 FMA rate of the whole device, GFLOP/s (an FMA counts 2)  */
    double gflops_wg;        /* the rate of one workgroup of 256 invocations                 */
    double barrier_ns;       /* one workgroupBarrier in a loop, one workgroup                */
    double subgroup_ns;      /* one subgroupAdd in a loop (0: the adapter has no subgroups)  */
};

enum wgf_cost_bound { WGF_BOUND_DISPATCH, WGF_BOUND_BYTES, WGF_BOUND_FLOPS };

struct wgf_cost_prediction {
    double   total_us;                 /* the sum over the steps                            */
    double   bound_us[3];              /* of it, the steps each term bounds (wgf_cost_bound) */
    uint32_t dispatches, steps;
    uint64_t bytes, flops;
};

/* The predicted time of one step and the term that bounds it. WGF_ERR_ARG when dev has a
 * non-positive bandwidth or rate (an unusable description). */
enum wgf_status wgf_cost_step(const struct wgf_device_cost *dev, const struct wgf_step_info *st, double *us,
                              enum wgf_cost_bound *bound);
/* Sum of wgf_cost_step over steps[0..n); *out is overwritten. */
enum wgf_status wgf_cost_predict(const struct wgf_device_cost *dev, const struct wgf_step_info *steps, uint32_t n,
                                 struct wgf_cost_prediction *out);
/* Share of the prediction spent in dispatch-bound steps (0..1). */
double          wgf_cost_dispatch_share(const struct wgf_cost_prediction *p);
const char     *wgf_cost_bound_name(enum wgf_cost_bound b); /* "dispatch", "bytes", "flops" */

#ifdef __cplusplus
}
#endif
#endif
