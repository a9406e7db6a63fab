/* wgfuse — the advisor for the LLM plans (src/llm/advise.c): each GPU plan of the fusion dial
 * (ops, fused, roles, mega) built on the model, its greedy decode step read back as the plan's
 * own list of dispatches with their bytes and FLOPs (wgf_llm_backend.decode_steps), and the
 * time of that list predicted on a measured device (gpu_cost.h), or composed from its kinds of
 * dispatch timed on this device (the probe, src/llm/gpu/gr_probe.c).
 * Plans are opened one after the other (one plan's memory is free before the next one's is
 * taken); a plan the device cannot run (init: WGF_ERR_UNSUPPORTED) is kept with the reason. */
#ifndef WGFUSE_LLM_ADVISE_H
#define WGFUSE_LLM_ADVISE_H

#include <stdint.h>

#include "wgfuse/gpu.h"
#include "wgfuse/gpu_cost.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WGF_ADVISE_MAX_PLANS 4
/* Decode steps the GPU decode loop records per submit on a GPU (its GR_STEPS, with 3 submits
 * in flight): the schedule length the per-dispatch cost d(n) is charged at is this many
 * tokens' dispatches. */
#define WGF_ADVISE_TOKENS_PER_SUBMIT 16
/* The probe times a decode step at the middle of the context the plans are built for
 * (bo->n_ctx): the mean token of a decode that fills it. */

struct wgf_llm_plan_prediction {
    char                       plan[16];
    char                       skipped[WGF_ERR_MSG_MAX]; /* "" or why the device cannot run it */
    const char                *weights;                  /* "f16", "f32", or the quantized type */
    struct wgf_cost_prediction pred;                     /* per greedy decode token               */
    /* probed (wgf_llm_advise with probe): pred.total_us = max(probe.gpu_us, probe.host_us), the
     * static model's terms scaled to it (their shares kept); static_us the static model's */
    bool                       probed;
    struct wgf_llm_probe       probe;
    double                     static_us;
    char                       probe_error[128];         /* "" or why the probe did not run       */
};

/* One operation of the ops plan (one projection: a unique matvec label), per occurrence (a
 * layer), for the crossover batch B* (wgf_cost_crossover). */
#define WGF_ADVISE_MAX_OPS 16
struct wgf_llm_op {
    char                 label[WGF_STEP_LABEL_MAX];
    uint32_t             count; /* occurrences per token (layers)                       */
    struct wgf_step_cost cost;  /* of one occurrence                                     */
};

struct wgf_llm_advice {
    uint32_t                       n;
    uint32_t                       n_ops;
    struct wgf_llm_op              ops[WGF_ADVISE_MAX_OPS]; /* the ops plan's projections    */
    double                         ops_dispatch_us;          /* d(n) the ops plan was charged */
    struct wgf_llm_plan_prediction row[WGF_ADVISE_MAX_PLANS]; /* ops, fused, roles, mega         */
    int                            best;                      /* index of the fastest, -1: none  */
    char                           reason[320];               /* one sentence: what and why      */
};

/* Predict every plan of model m on ctx (borrowed) with device description dev. bo: the backend
 * options (weights format, subgroups; bo->gpu is set to ctx here). probe: dev describes ctx's
 * own adapter, so time each plan's kinds of dispatch on it (wgf_llm_backend.probe) and compose
 * the step from them; a plan whose probe cannot run (no timestamps) keeps the static model. */
enum wgf_status wgf_llm_advise(wgf_ctx *ctx, const struct wgf_llm_model *m, const struct wgf_llm_backend_options *bo,
                               const struct wgf_device_cost *dev, bool probe, struct wgf_llm_advice *out,
                               struct wgf_err *err);
/* Choose among predictions already made (rows filled; the arithmetic of wgf_llm_advise's
 * choice, also for a second device description): sets out->best and out->reason. */
void            wgf_llm_advice_choose(struct wgf_llm_advice *a);

#ifdef __cplusplus
}
#endif
#endif
