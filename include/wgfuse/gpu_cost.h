/* wgfuse runtime — the advisor's cost model: a device description measured once
 * (`wgfuse advise --calibrate`, bench_calibrate.h) and the predicted time of a list of
 * schedule steps (the plans' own dispatches with the bytes and FLOPs they carry).
 *
 * Per step:  t = max(d(n) + w x workgroup_us, bytes / bw(w), flops / rate(w), flops / serial)
 * where w is the step's workgroups and bw(w) = min(read_gbps, w * read_gbps_wg) (likewise
 * the rate): a dispatch of few workgroups cannot use the whole device, which is what makes a
 * one-workgroup mega-kernel slow on a wide GPU and fast where dispatches are expensive.
 *   d(n): the per-dispatch cost in a schedule of n dispatches replayed in one submit. Measured
 *     at two lengths (dispatch_us at len_short, dispatch_us_long at len_long, wall clock of
 *     record + submit + wait over n), fitted as t(n) = F + n s: a fixed cost F per submit
 *     amortized over the schedule plus a slope s per dispatch, so d(n) = s + F / n. A long
 *     replayed schedule pays less per dispatch than a short one (H200: 4.4 us measured
 *     dispatch by dispatch against ~2.3 us in the 1,106-dispatch ops plan, 16 tokens a submit).
 *   + w x workgroup_us: launching the grid's workgroups (a CPU adapter pays microseconds for
 *     each; measured over a large grid of an empty-ish kernel), part of the dispatch term.
 *   serial: for a step of ONE workgroup whose emitter does not describe its shape (no
 *     workgroup size, no chain: the LLM plans' mega-style kernels), the FLOP rate one
 *     workgroup of serial_wg invocations reaches streaming a matvec row loop from device
 *     memory (calib_dot: loads in flight, the index arithmetic, FMAs): serial_gflops_wg.
 *     The simulation's steps describe theirs and get the chain term below instead.
 *     There the per-element issue rate, not the bytes, sets the time:
 *     the H200's mega took the same 25 ms per token with f16 and f32 weights, and the bytes
 *     term at one workgroup's read bandwidth was off by +32% and +160%.
 * The chain term, for a step whose emitter counted the longest dependent chain one invocation
 *   runs (c FLOPs: a genome's episode in a thread-per-genome simulation): ceil(w / P) x c /
 *   chain_gflops, in the max. Such a kernel is latency-bound: on the H200 CartPole's fused
 *   episode took 1.5 us a step for ~430 operations per genome, 7x what the FMA throughput of
 *   its 64 workgroups predicts; chain_gflops (calib_chain: one dependent FMA chain per
 *   invocation, 64 invocations) measures the latency that sets it.
 * Plus, for a step whose emitter counted its barriers (b per workgroup), the barrier term
 *   ceil(w / P) x b x barrier_ns, P = gflops / gflops_wg the workgroups the device runs at
 *   once (132 on the H200, its SMs; ~2 on lavapipe here, its threads): a barrier is a wait
 *   the other terms do not see (lavapipe: microseconds each), added to the max above.
 * An indirect dispatch (grid unknown until the GPU writes it) counts as saturating. A zero
 * dispatch_us_long or serial_gflops_wg switches its term off (descriptions that lack it). The
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

#define WGF_COST_WG_CAL 256 /* invocations of the one-workgroup read and FMA measurements */

struct wgf_device_cost {
    double dispatch_us;      /* per dispatch, a schedule of len_short dispatches in one pass  */
    double dispatch_us_long; /* per dispatch, a schedule of len_long (0: not measured)       */
    double len_short, len_long; /* the two schedule lengths measured                        */
    double read_gbps;        /* read bandwidth of the whole device, GB/s (1e9 bytes/s)       */
    double read_gbps_wg;     /* read bandwidth one workgroup of 256 invocations reaches      */
                             /* (a step of i < 256 invocations per workgroup: x i / 256)     */
    double gflops;           /* f32 FMA rate of the whole device, GFLOP/s (an FMA counts 2)  */
    double gflops_wg;        /* the rate of one workgroup of 256 invocations                 */
    double barrier_ns;       /* one workgroupBarrier in a loop, one workgroup                */
    double subgroup_ns;      /* one subgroupAdd in a loop (0: the adapter has no subgroups)  */
    double serial_gflops_wg; /* one workgroup streaming a dot product, GFLOP/s (0: no term)  */
    double serial_wg;        /* ... its invocations                                          */
    double workgroup_us;     /* per workgroup launched, a large grid of a near-empty kernel  */
    double chain_gflops;     /* one invocation's dependent FMA chain, GFLOP/s (64 per wg)    */
};

enum wgf_cost_bound {
    WGF_BOUND_DISPATCH,
    WGF_BOUND_BYTES,
    WGF_BOUND_FLOPS,
    WGF_BOUND_SERIAL,
    WGF_BOUND_BARRIER,
    WGF_BOUND_CHAIN,
    WGF_BOUND_COUNT
};

struct wgf_cost_prediction {
    double   total_us;                 /* the sum over the steps                            */
    double   bound_us[WGF_BOUND_COUNT]; /* of it, the steps each term bounds (wgf_cost_bound) */
    double   dispatch_us;              /* d(n) the steps were charged                        */
    uint32_t dispatches, steps;
    uint64_t bytes, flops;
};

/* d(n): the per-dispatch cost in a replayed schedule of n dispatches (see above). */
double          wgf_cost_dispatch_at(const struct wgf_device_cost *dev, double n);
/* The predicted time of one step, charged dispatch_us per dispatch, and the term that bounds
 * it. WGF_ERR_ARG when dev has a non-positive bandwidth or rate (an unusable description). */
enum wgf_status wgf_cost_step_at(const struct wgf_device_cost *dev, const struct wgf_step_info *st, double dispatch_us,
                                 double *us, enum wgf_cost_bound *bound);
/* The same with d = dev->dispatch_us (a short schedule). */
enum wgf_status wgf_cost_step(const struct wgf_device_cost *dev, const struct wgf_step_info *st, double *us,
                              enum wgf_cost_bound *bound);
/* Sum over steps[0..n) of one replay, when `replays` replays of the list share one pass (a
 * submit of 16 decode steps, 10 generations): each dispatch charged d(dispatches x replays).
 * *out is overwritten. wgf_cost_predict: replays 1. */
enum wgf_status wgf_cost_predict_replayed(const struct wgf_device_cost *dev, const struct wgf_step_info *steps,
                                          uint32_t n, uint32_t replays, struct wgf_cost_prediction *out);
enum wgf_status wgf_cost_predict(const struct wgf_device_cost *dev, const struct wgf_step_info *steps, uint32_t n,
                                 struct wgf_cost_prediction *out);
/* Share of the prediction spent in dispatch-bound steps (0..1). */
double          wgf_cost_dispatch_share(const struct wgf_cost_prediction *p);
const char     *wgf_cost_bound_name(enum wgf_cost_bound b); /* "dispatch", "bytes", "flops", "serial", "barrier", "chain" */

/* The crossover batch B* of one operation (a projection or a group of them, batch-1 cost
 * `c` over `dispatches` dispatches): at batch B the operation does B x c.flops FLOPs and
 * reads c.bytes (the weights; the activations' B x (rows + cols) x 4 bytes are left out,
 * they are < 1% at B* for the shapes asked). B*_dispatch = dispatches x d / (c.flops / rate):
 * the batch at which its arithmetic takes as long as its dispatches (the dispatch paper's
 * definition: below it a batch costs the same as one token, the dispatch overhead); and
 * B*_bytes = (c.bytes / bw) / (c.flops / rate): the roofline's ridge, where it stops being
 * bandwidth-bound. B* = max of the two: below B* the operation's time does not grow with
 * the batch, above it grows linearly. Whole-device rates (a batched op fills the device). */
struct wgf_cost_crossover {
    double b_dispatch, b_bytes, b_star;
    double us_at_1, us_at_b;            /* predicted time at batch 1 and at the asked batch */
    enum wgf_cost_bound bound_at_b;     /* what bounds it at the asked batch                */
};
void wgf_cost_crossover(const struct wgf_device_cost *dev, struct wgf_step_cost c, uint32_t dispatches,
                        double dispatch_us, uint32_t batch, struct wgf_cost_crossover *out);

#ifdef __cplusplus
}
#endif
#endif
