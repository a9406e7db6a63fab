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
};

struct wgf_sim_advice {
    uint32_t                       n;
    struct wgf_sim_plan_prediction row[WGF_SIM_ADVISE_MAX];
    int                            best;        /* fastest predicted, -1: none                */
    int                            second;      /* the runner-up, -1: none                    */
    char                           reason[400]; /* one sentence: what and why                 */
};

struct wgf_sim_advise_options {
    uint32_t episode_steps;   /* steps one SIMD group runs per episode; 0: the episode limit   */
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
