/* wgfuse — the fusion dial: the GPU plans of one model side by side (src/llm/dial.c).
 *
 * The same model, weights format and device run through each plan (ops, fused, roles, mega
 * by default; docs/fusion.md). For each plan, in this order:
 *   1. check: the logits of a check_prompt-token prefill and check_steps decode steps (the
 *      tokens cpu-ref picks greedily, fed to both) against cpu-ref's: max |plan - ref| /
 *      max |ref| <= the tolerance (1e-4 with f32 weights, 2e-2 with f16), and how many rows'
 *      argmax agree. A plan that fails stops the dial (WGF_ERR_INTERNAL: a wrong plan is a bug)
 *      before any of its time is taken;
 *   2. one warm-up generation, then `runs` greedy generations of n_gen tokens after a fixed
 *      n_prompt-token prompt (EOS ignored, sampling on the device where the plan offers it);
 *      the ids must be the same in every run; each run's prefill and decode tok/s are kept
 *      (raw samples: the caller summarises);
 *   3. the host time per decode token (recording + submitting, from the timed runs) and the
 *      GPU time per token (whole decode steps timed on the device, where timestamps exist);
 *   4. optionally the per-role GPU profile over 8 decode steps.
 * Plans run one after the other, each with its own backend (opened, measured, closed), so
 * one plan's memory is free before the next one's is taken. A plan this device cannot run
 * (its init says WGF_ERR_UNSUPPORTED: e.g. mega needs 10 storage buffers per stage) is
 * skipped with the reason in its row; any other failure stops the dial.
 * The library never prints; progress goes through the optional hook. */
#ifndef WGFUSE_LLM_DIAL_H
#define WGFUSE_LLM_DIAL_H

#include <stdbool.h>
#include <stdint.h>

#include "wgfuse/gpu.h"
#include "wgfuse/llm.h"
#include "wgfuse/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WGF_DIAL_MAX_PLANS 8
#define WGF_DIAL_MAX_RUNS  64

struct wgf_dial_opts {
    const char *plans[WGF_DIAL_MAX_PLANS]; /* GPU plan names; n_plans 0 = ops, fused, roles, mega */
    uint32_t    n_plans;
    uint32_t    n_prompt, n_gen, runs;      /* timed runs: prompt tokens, generated, runs (<= 64) */
    uint32_t    check_prompt, check_steps;  /* the check against cpu-ref (check_prompt >= 1)     */
    uint32_t    n_threads;                  /* cpu-ref's threads for the check                   */
    bool        weights_f32, no_subgroups;  /* as wgf_llm_backend_options                        */
    bool        act_q8;                     /* as wgf_llm_backend_options (cpu-ref's check too)  */
    bool        act_i8x3;                   /* as wgf_llm_backend_options                        */
    uint64_t    max_binding_bytes;          /* as wgf_llm_backend_options (0: the device's)      */
    bool        profile;                    /* per-role GPU time of each plan                    */
    void (*progress)(void *user, const char *what);
    bool (*stop)(void *user);               /* polled between runs: true -> WGF_ERR_INTERRUPTED */
    void *user;
};
/* 32-token prompt, 64 generated, 5 runs; check 8 + 8; 1 thread; every default plan. */
struct wgf_dial_opts wgf_dial_opts_default(void);

struct wgf_dial_row {
    char     plan[16];
    char     skipped[WGF_ERR_MSG_MAX];     /* "" or why this device cannot run the plan      */
    const char *weights;                   /* on the GPU: "f16" or "f32" (unfused: always f32)  */
    double   weight_bytes_per_token;       /* every matrix once, in that format                 */
    uint32_t dispatches;                   /* per greedy decode token                           */
    double   check_err, tolerance;         /* relative max error vs cpu-ref, and its bound      */
    uint32_t argmax_agree, check_rows;     /* rows whose argmax equals cpu-ref's, of all rows   */
    double   prefill_tok_s[WGF_DIAL_MAX_RUNS], decode_tok_s[WGF_DIAL_MAX_RUNS];
    uint64_t ids_hash;                     /* FNV-1a of the generated ids (equal in every run)  */
    double   host_us_per_token;            /* recording + submitting, per decode step           */
    double   gpu_us_per_token;             /* 0 when the adapter has no timestamps              */
    struct wgf_profile profile;            /* opts.profile: GPU ns over 8 decode steps by role  */
};

struct wgf_dial_report {
    char     adapter[256];
    uint32_t runs, n_prompt, n_gen;
    uint32_t n;                            /* rows filled                                       */
    struct wgf_dial_row row[WGF_DIAL_MAX_PLANS];
};

/* Runs the dial on model m on ctx. On an error the rows measured so far stay in *out
 * (out->n); free with wgf_dial_report_free either way. */
enum wgf_status wgf_llm_dial(wgf_ctx *ctx, const struct wgf_llm_model *m, const struct wgf_dial_opts *o,
                             struct wgf_dial_report *out, struct wgf_err *err);
void            wgf_dial_report_free(struct wgf_dial_report *r);

/* Weight bytes one decode token reads (every matrix once, the LM head included) at
 * bytes_per_weight bytes each. */
double wgf_llm_weight_bytes_per_token(const struct wgf_llm_config *c, double bytes_per_weight);

#ifdef __cplusplus
}
#endif
#endif
