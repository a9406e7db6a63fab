/* Helpers of the GPU-plan tests against cpu-ref (test_forward_roles.c, test_forward_plans.c):
 * the test models (tiny random llama / qwen2 / phi3, test_forward_model.h), the f16 rounding
 * of a model's matrices (the reference of the f16 variants) and a token collector; the
 * tokens and the error measure are test_forward_model.h's tm_tokens and tm_rel_max_f.
 * Header-only (static functions), like test_forward_model.h. */
#ifndef WGF_TEST_GPU_PLANS_H
#define WGF_TEST_GPU_PLANS_H
#include <stdint.h>

#include "harness.h"
#include "test_forward_model.h"

/* every matrix of the model rounded to f16 in place (the reference of the f16 variants) */
static void round_f16(struct tm *tm)
{
    struct wgf_llm_weights *W = &tm->m.weights;
    struct wgf_tensor      *mats[2 + 7 * 16];
    int                     n = 0;
    mats[n++]                 = &W->tok_embd;
    if (W->lm_head.data != W->tok_embd.data) mats[n++] = &W->lm_head;
    for (int l = 0; l < tm->m.cfg.n_layers; l++) {
        struct wgf_layer_weights *L = &W->layers[l];
        mats[n++] = &L->wq, mats[n++] = &L->wk, mats[n++] = &L->wv, mats[n++] = &L->wo;
        mats[n++] = &L->w_gate, mats[n++] = &L->w_up, mats[n++] = &L->w_down;
    }
    for (int i = 0; i < n; i++) {
        if (mats[i]->dtype != WGF_DT_F32) continue; /* f16 exact; bf16 values are f16-exact here */
        float *d = (float *)(uintptr_t)mats[i]->data;
        for (int64_t k = 0; k < wgf_tensor_nelems(mats[i]); k++) d[k] = wgf_f16_to_f32(wgf_f32_to_f16(d[k]));
    }
}

/* generated ids (wgf_gen_callbacks.on_token) */
struct ids {
    int32_t id[64];
    int     n;
};
static int on_token(void *u, int32_t id)
{
    struct ids *x = u;
    if (x->n < 64) x->id[x->n] = id;
    x->n++;
    return 0;
}
/* a logits callback keeps the logits on the host: the CPU sampler picks */
static int on_logits_noop(void *u, const float *l, uint32_t n, uint32_t v)
{
    (void)u, (void)l, (void)n, (void)v;
    return 0;
}

/* llama (GQA, tied head, Llama-3 RoPE scaling), qwen2 (q/k/v bias, untied head, a sliding
 * window of 5 in layer 1 only, as Qwen2's max_window_layers), phi3 (longrope with
 * original_max_pos 16, MHA, head_dim 12, a sliding window of 7 in every layer) */
static const struct tm_dims LLAMA3 = {.arch = WGF_ARCH_LLAMA, .dim = 64, .hidden = 160, .layers = 2, .heads = 4,
                                      .kv_heads = 2, .head_dim = 16, .vocab = 512, .max_seq = 256,
                                      .dtype = WGF_DT_F16, .tied = true, .scaling = WGF_ROPE_SCALING_LLAMA3};
static const struct tm_dims QWEN2 = {.arch = WGF_ARCH_QWEN2, .dim = 64, .hidden = 96, .layers = 2, .heads = 8,
                                     .kv_heads = 2, .head_dim = 8, .vocab = 600, .max_seq = 256,
                                     .dtype = WGF_DT_BF16, .bias = true, .tied = false, .theta = 1000000.0f,
                                     .window = 5, .swa_first = 1};
static const struct tm_dims PHI3 = {.arch = WGF_ARCH_PHI3, .dim = 48, .hidden = 128, .layers = 2, .heads = 4,
                                    .kv_heads = 4, .head_dim = 12, .vocab = 520, .max_seq = 128,
                                    .dtype = WGF_DT_F32, .scaling = WGF_ROPE_SCALING_LONGROPE, .window = 7};

#endif
