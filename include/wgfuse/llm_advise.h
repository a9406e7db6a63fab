/* wgfuse — the advisor for the LLM plans (src/llm/advise.c): each GPU plan of the fusion dial
 * (ops, fused, roles, mega) built on the model, its greedy decode step read back as the plan's
 * own list of dispatches with their bytes and FLOPs (wgf_llm_backend.decode_steps), and the
 * time of that list predicted on a measured device (gpu_cost.h). Nothing is timed here.
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

struct wgf_llm_plan_prediction {
    char                       plan[16];
    char                       skipped[WGF_ERR_MSG_MAX]; /* "" or why the device cannot run it */
    const char                *weights;                  /* "f16", "f32", or the quantized type */
    struct wgf_cost_prediction pred;                     /* per greedy decode token               */
};

struct wgf_llm_advice {
    uint32_t                       n;
    struct wgf_llm_plan_prediction row[WGF_ADVISE_MAX_PLANS]; /* ops, fused, roles, mega         */
    int                            best;                      /* index of the fastest, -1: none  */
    char                           reason[320];               /* one sentence: what and why      */
};

/* Predict every plan of model m on ctx (borrowed) with device description dev. bo: the backend
 * options (weights format, subgroups; bo->gpu is set to ctx here). */
enum wgf_status wgf_llm_advise(wgf_ctx *ctx, const struct wgf_llm_model *m, const struct wgf_llm_backend_options *bo,
                               const struct wgf_device_cost *dev, struct wgf_llm_advice *out, struct wgf_err *err);
/* Choose among predictions already made (rows filled; the arithmetic of wgf_llm_advise's
 * choice, also for a second device description): sets out->best and out->reason. */
void            wgf_llm_advice_choose(struct wgf_llm_advice *a);

#ifdef __cplusplus
}
#endif
#endif
