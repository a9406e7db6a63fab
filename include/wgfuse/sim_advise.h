/* wgfuse — the advisor for the simulation strategies (src/sim/sim_advise.c): for a workload,
 * an episode length and a population, every way `sim` can run a GA generation — episode
 * strategy (fused, fused-wide, chunked:K, per-step) x evolve kernels (split, thread, wide) —
 * built (wgf_sim_create) and read back as its own list of dispatches
 * (wgf_sim_generation_steps: the code that records a generation lists it), and its time per
 * generation predicted on a measured device (gpu_cost.h). Nothing is timed here. */
#ifndef WGFUSE_SIM_ADVISE_H
#define WGFUSE_SIM_ADVISE_H

#include <stdint.h>

#include "wgfuse/gpu.h"
#include "wgfuse/gpu_cost.h"
#include "wgfuse/sim.h"
#include "wgfuse/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WGF_SIM_ADVISE_MAX 24

struct wgf_sim_plan_prediction {
    char                       name[40]; /* "fused/split", "chunked:50/thread", ...          */
    enum wgf_sim_strategy      strategy;
    int                        chunk;    /* chunked: K                                        */
    enum wgf_sim_evolve        evolve;
    char                       skipped[WGF_ERR_MSG_MAX]; /* "" or why it cannot run here     */
    struct wgf_cost_prediction pred;     /* per generation                                    */
    /* probed rows (a probe given, wgf_sim_probe_run): the measured kernels composed; pred's
     * total_us is their sum, its bound_us[DISPATCH] the host part, [CHAIN] the episode,
     * [SERIAL] reset + evolve (bytes, FLOPs and dispatches stay the listing's) */
    bool                       probed;
    double                     host_us, episode_us, evolve_us; /* reset counted in evolve_us */
};

struct wgf_sim_advice {
    uint32_t                       n;
    struct wgf_sim_plan_prediction row[WGF_SIM_ADVISE_MAX];
    int                            best;        /* fastest predicted, -1: none                */
    int                            second;      /* the runner-up, -1: none                    */
    char                           reason[400]; /* one sentence: what and why                 */
};

/* The GPU time of each kernel a generation can run, measured once on this device at one
 * population (wgf_sim_probe_run, src/sim/sim_probe.c says how): with it the advisor predicts
 * a generation as  sum over its dispatches of their GPU time + dispatches x host_us +
 * submit_us / generations per submit,  a dispatch of the thread-per-genome episode kernel
 * running r steps costing chunk_us + (r - 1) step_us, fused-wide's wide_us + r wide_step_us
 * for its first wide_knee steps and wide_tail_us for each later one (on a GPU the groups still
 * running after the first few dozen steps are few, and a step costs less without the others).
 * Host and GPU add up: a submit's dispatches are all recorded before the GPU starts them. */
struct wgf_sim_probe {
    bool   ok;
    bool   resident;       /* the population's workgroups run at once (a GPU): a dispatch lasts
                              as long as its longest episode; false (a CPU adapter): they run
                              in waves and each SIMD group pays for its own steps             */
    double reset_us;       /* the reset dispatch                                              */
    double chunk_us;       /* an episode dispatch of one step (per-step kernel, in a pass of
                              several; a workload without steps: its evaluation dispatch)    */
    double step_us;        /* each further step of a thread-per-genome episode dispatch       */
    double wide_us, wide_step_us; /* fused-wide: its dispatch of r steps                      */
    double wide_knee;      /* fused-wide: steps up to which wide_step_us holds; 0: every step */
    double wide_tail_us;   /* fused-wide: each step past wide_knee (few groups still running) */
    double evolve_us[3];   /* [enum wgf_sim_evolve]: thread, wide, split; -1: cannot run here */
    double chunk_first_us; /* pass A's per-step dispatch, every lane of every group alive; on a
                              CPU adapter chunk_us is A'' (after the lanes diverge), else this */
    double dead_us;        /* an episode dispatch after every episode ended (measured; used
                              on a CPU adapter, where it costs far less than a live one; a
                              GPU's composition keeps chunk_us - step_us)                     */
    double host_us;        /* per dispatch on the host: recording, validation, submit         */
    double submit_us;      /* per submit: submit and wait                                     */
    /* what host_us and submit_us come from (the two host generations): the recording and
     * submit call, the wall clock to the end of the wait, the GPU time; us */
    double record_short_us, record_long_us, wall_short_us, wall_long_us, gpu_short_us, gpu_long_us;
    double pass_us;        /* a timed pass's own cost, taken off every time above (a
                              generation runs in one pass)                                    */
    double seconds;        /* what the probe took                                             */
};
/* Probe base's workload (its pop, hidden, GA settings; strategy, evolve and max_steps are the
 * probe's) on ctx. WGF_ERR_UNSUPPORTED when the device has no timestamp-query. */
enum wgf_status wgf_sim_probe_run(wgf_ctx *ctx, const struct wgf_sim_config *base, struct wgf_sim_probe *out,
                                  struct wgf_err *err);

struct wgf_sim_advise_options {
    uint32_t episode_steps;   /* steps one SIMD group runs per episode; 0: the episode limit   */
    uint32_t longest_steps;   /* the population's longest episode; 0: the episode limit        */
    const struct wgf_sim_probe *probe; /* measured kernels (NULL or !ok: the static model)     */
    uint32_t gens_per_submit; /* generations recorded per submit (the schedule's length); 0: 1 */
    const int *chunks;        /* chunked:K candidates; NULL: 10 and 50                          */
    int        n_chunks;
    bool       evolve_fixed;  /* true: only base->evolve (not auto); false: split, thread, wide */
};

/* Predict every strategy x evolve variant of base (workload, pop, max_steps, hidden, GA
 * settings; its strategy and evolve fields are replaced) on ctx (borrowed), device dev. */
enum wgf_status wgf_sim_advise(wgf_ctx *ctx, const struct wgf_sim_config *base, const struct wgf_device_cost *dev,
                               const struct wgf_sim_advise_options *o, struct wgf_sim_advice *out, struct wgf_err *err);
/* Choose among the rows (the arithmetic of wgf_sim_advise's choice): best, second, reason. */
void            wgf_sim_advice_choose(struct wgf_sim_advice *a);
/* "fused", "fused-wide", "chunked:K", "per-step": what `sim --strategy` takes. */
void            wgf_sim_strategy_spec(enum wgf_sim_strategy s, int chunk, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
