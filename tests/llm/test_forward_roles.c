/* The "roles" GPU plan against cpu-ref, for real on the default adapter (lavapipe in CI), on
 * tiny random models (tests/llm/test_forward_model.h), for every variant CI can run: f32 and
 * packed-f16 weights, subgroup and workgroup-memory reductions.
 *   - logits of a 40-token batched prefill (every row) and of 48 decode steps match cpu-ref
 *     on llama (GQA, tied head, Llama-3 RoPE scaling), qwen2 (q/k/v bias, untied head, a
 *     sliding window in layer 1) and phi3 (longrope, crossing original_max_pos, MHA, head_dim
 *     12, a sliding window in every layer: slices of 16 wholly before it are empty); a wider qwen2 whose
 *     prefill matmuls split K (gr_mm_shape: q/k/v with the bias, o_proj and down with the
 *     residual add in matmul_reduce, the tied head's all-logits matmul; down's 2064 columns
 *     in four unequal parts; gate/up and down in the large tiles); with attention slices of 16
 *     positions (split attention + combine) and with 40 KiB bindings (every matrix in row
 *     parts); decode attention in workgroups of the device's rule (gr_att_wg: up to 1024), of
 *     256 and of 32 (positions in several blocks);
 *   - greedy generation on the device (sampling on the GPU, tokens fed back) gives cpu-ref's
 *     ids (f32 weights);
 *   - seeded sampling on the device (temperature, top-k, top-p, repetition penalty) gives
 *     the ids the CPU sampler picks from the same backend's logits with the same seed.
 * Tolerance: max |gpu - cpu| / max |cpu| over every logit: 1e-4 with f32 weights; 2e-2 with
 * f16 weights, against cpu-ref on the same f16-rounded weights (the models store f16/bf16 or,
 * for phi3, f32: then cpu-ref runs on an f16-rounded copy). Observed errors are printed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test_forward_model.h"
#include "test_gpu_plans.h"
#include "wgfuse/gpu.h"
#include "wgfuse/llm_run.h"

#define N_PRE 40

/* wide enough that every prefill matmul splits K (gr_mm_shape) */
static const struct tm_dims QWEN2_WIDE = {.arch = WGF_ARCH_QWEN2, .dim = 1024, .hidden = 2064, .layers = 1, .heads = 8,
                                          .kv_heads = 2, .head_dim = 128, .vocab = 300, .max_seq = 256,
                                          .dtype = WGF_DT_BF16, .bias = true, .tied = true, .theta = 1000000.0f};
#define N_DEC 48
#define N_GEN 24

struct variant {
    const char *name;
    bool        f32, no_sg;
    uint32_t    split;
    uint64_t    max_bind;
    uint32_t    attn_wg; /* decode attention's workgroup size (0: the device's rule, gr_att_wg) */
};

static enum wgf_status generate(struct wgf_llm_backend *b, const struct wgf_sampler_params *sp, const int32_t *prompt,
                                uint32_t n_prompt, bool host_sampling, struct ids *out, struct wgf_err *err)
{
    struct wgf_sampler s  = {0};
    enum wgf_status    st = wgf_sampler_init(&s, sp, b->n_vocab, err);
    if (st) return st;
    struct wgf_gen_params gp = wgf_gen_params_default();
    gp.max_tokens            = N_GEN;
    gp.ignore_eos            = true;
    /* a logits callback keeps the logits on the host: the CPU sampler picks */
    struct wgf_gen_callbacks cb = {.user = out, .on_token = on_token, .on_logits = host_sampling ? on_logits_noop : NULL};
    struct wgf_gen_stats     stats;
    st = wgf_generate(b, NULL, &s, &gp, prompt, n_prompt, &cb, &stats, err);
    wgf_sampler_free(&s);
    return st;
}

static void check_model(struct wgf_t *t, wgf_ctx *ctx, const char *mname, const struct tm_dims *d,
                        const struct variant *v)
{
    char           nm[200];
    struct tm     *tm = tm_build(d, 4321);
    const int      V = d->vocab, n_all = N_PRE + N_DEC;
    const uint32_t n_ctx = (uint32_t)(n_all + 8);
    int32_t        tok[N_PRE + N_DEC];
    struct wgf_err err = {0};
    struct wgf_llm_backend cpu = {0}, gpu = {0};
    float *lc = malloc((size_t)n_all * V * sizeof *lc), *lg = malloc((size_t)n_all * V * sizeof *lg);
    WGF_ASSERT(lc && lg);
    if (!v->f32) round_f16(tm);
    tm_tokens(tok, n_all, V, 77);
    snprintf(nm, sizeof nm, "%s %s", mname, v->name);

    struct wgf_llm_backend_options co = {.n_ctx = n_ctx, .n_threads = 1};
    struct wgf_llm_backend_options go = {.n_ctx = n_ctx, .gpu = ctx, .weights_f32 = v->f32, .no_subgroups = v->no_sg,
                                         .attn_split = v->split, .max_binding_bytes = v->max_bind,
                                         .attn_wg = v->attn_wg};
    if (!wgf_t_check(t, wgf_llm_backend_open(&cpu, &wgf_llm_backend_ref, &tm->m, &co, &err) == WGF_OK, nm, "cpu-ref: %s",
                     err.msg) ||
        !wgf_t_check(t, wgf_llm_backend_open(&gpu, &wgf_llm_backend_gpu_roles, &tm->m, &go, &err) == WGF_OK, nm,
                     "gpu-roles init: %s", err.msg))
        goto out;
    enum wgf_status s1 = cpu.forward(&cpu, tok, N_PRE, 0, lc, true, &err);
    enum wgf_status s2 = s1 ? s1 : gpu.forward(&gpu, tok, N_PRE, 0, lg, true, &err);
    double          e_pre = s2 ? INFINITY : tm_rel_max_f(lg, lc, (size_t)N_PRE * V);
    for (int i = N_PRE; i < n_all && !s2; i++) {
        s1 = cpu.forward(&cpu, tok + i, 1, (uint32_t)i, lc + (size_t)i * V, false, &err);
        s2 = s1 ? s1 : gpu.forward(&gpu, tok + i, 1, (uint32_t)i, lg + (size_t)i * V, false, &err);
    }
    double e_dec = s2 ? INFINITY : tm_rel_max_f(lg + (size_t)N_PRE * V, lc + (size_t)N_PRE * V, (size_t)N_DEC * V);
    double tol   = v->f32 ? 1e-4 : 2e-2;
    char   what[400];
    snprintf(what, sizeof what, "%s: logits match cpu-ref (prefill %d + decode %d)", nm, N_PRE, N_DEC);
    wgf_t_check(t, s2 == WGF_OK && e_pre <= tol && e_dec <= tol, what,
                "max |diff| / max |logit|: prefill %.3g, decode %.3g (tolerance %.0e) %s", e_pre, e_dec, tol,
                s2 ? err.msg : "");

    /* greedy on the device = cpu-ref's ids (f32: identical logits up to rounding) */
    struct wgf_sampler_params sp = wgf_sampler_params_default();
    sp.temperature               = 0;
    struct ids a = {0}, b = {0};
    s1 = generate(&cpu, &sp, tok, 6, true, &a, &err);
    s2 = s1 ? s1 : generate(&gpu, &sp, tok, 6, false, &b, &err);
    snprintf(what, sizeof what, "%s: greedy on the GPU, %d ids %s cpu-ref's", nm, N_GEN, v->f32 ? "=" : "vs");
    bool same = a.n == N_GEN && b.n == N_GEN && !memcmp(a.id, b.id, N_GEN * sizeof a.id[0]);
    int  diff = 0;
    while (diff < N_GEN && a.id[diff] == b.id[diff]) diff++;
    if (v->f32) wgf_t_check(t, s2 == WGF_OK && same, what, "%d vs %d ids, first difference at %d %s", a.n, b.n, diff,
                            s2 ? err.msg : "");
    else wgf_t_check(t, s2 == WGF_OK && b.n == N_GEN, what, "%d ids, equal to cpu-ref's up to index %d %s", b.n, diff,
                     s2 ? err.msg : "");

    /* seeded sampling: the device's sampler = the CPU sampler on the same logits */
    sp             = wgf_sampler_params_default();
    sp.seed        = 99;
    sp.repeat_penalty = 1.3f;
    struct ids c = {0}, e = {0};
    s1 = generate(&gpu, &sp, tok, 6, true, &c, &err);
    s2 = s1 ? s1 : generate(&gpu, &sp, tok, 6, false, &e, &err);
    snprintf(what, sizeof what, "%s: seeded sampling on the GPU = CPU sampler (T 0.8, top-k 40, top-p 0.95, penalty 1.3)", nm);
    diff = 0;
    while (diff < N_GEN && c.id[diff] == e.id[diff]) diff++;
    wgf_t_check(t, s2 == WGF_OK && c.n == N_GEN && e.n == N_GEN && diff == N_GEN, what,
                "%d vs %d ids, equal up to index %d %s", c.n, e.n, diff, s2 ? err.msg : "");
out:
    wgf_llm_backend_close(&gpu);
    wgf_llm_backend_close(&cpu);
    free(lc);
    free(lg);
    tm_free(tm);
}

/* attn_wg outside powers of two from head_dim / 4 to the device's limit: refused at init, named */
static void check_bad_attn_wg(struct wgf_t *t, wgf_ctx *ctx)
{
    struct tm             *tm  = tm_build(&LLAMA3, 4321);
    const uint32_t         bad[] = {48, 2048};
    for (int i = 0; i < 2; i++) {
        struct wgf_err                 err = {0};
        struct wgf_llm_backend         b   = {0};
        struct wgf_llm_backend_options go  = {.n_ctx = 64, .gpu = ctx, .weights_f32 = true, .attn_wg = bad[i]};
        enum wgf_status                s   = wgf_llm_backend_open(&b, &wgf_llm_backend_gpu_roles, &tm->m, &go, &err);
        if (s == WGF_OK) wgf_llm_backend_close(&b);
        wgf_t_check(t, s == WGF_ERR_ARG && strstr(err.msg, "attn_wg"), "attn_wg outside its range: refused, named",
                    "attn_wg %u: status %d: %s", bad[i], (int)s, err.msg);
    }
    tm_free(tm);
}

int main(void)
{
    struct wgf_t t = {0};
    /* a 40-token prefill of every variant on a 2-core CI machine busy with other tests:
     * the default 30 s wait is for interactive use, not for lavapipe under load */
    wgf_ctx *ctx = wgf_t_gpu_timeout(&t, 300000);
    if (!ctx) return wgf_t_finish(&t);
    uint32_t sgs = 0;
    wgf_ctx_subgroup_size(ctx, &sgs);
    printf("subgroup reductions: %s (size %u)\n", sgs ? "available" : "not available", sgs);
    const struct variant vs[] = {
        {"f32", true, false, 0, 0, 0},
        {"f16 packed", false, false, 0, 0, 0},
        {"f32 no-subgroups", true, true, 0, 0, 256},
        /* 32 invocations: decode attention over 2-3 blocks of positions (online max and sum) */
        {"f32 attention workgroups of 32", true, false, 0, 0, 32},
        {"f16 packed no-subgroups slices of 16", false, true, 16, 0, 0},
        {"f32 slices of 16, 40 KiB bindings", true, false, 16, 40 << 10, 0},
    };
    const char *only = getenv("WGF_TEST_ONLY"); /* a variant index, for iterating */
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        if (only && !strchr(only, (int)('0' + i))) continue;
        double t0 = wgf_llm_now();
        check_model(&t, ctx, "llama gqa llama3-rope f16 tied", &LLAMA3, &vs[i]);
        double t1 = wgf_llm_now();
        check_model(&t, ctx, "qwen2 bias bf16 untied window 5 in layer 1", &QWEN2, &vs[i]);
        double t2 = wgf_llm_now();
        check_model(&t, ctx, "phi3 longrope f32 window 7", &PHI3, &vs[i]);
        printf("variant '%s': %.1f s, %.1f s, %.1f s\n", vs[i].name, t1 - t0, t2 - t1, wgf_llm_now() - t2);
        if (i < 2) check_model(&t, ctx, "qwen2 dim 1024 split-K prefill bf16 tied", &QWEN2_WIDE, &vs[i]);
    }
    if (!only || strchr(only, 'a')) check_bad_attn_wg(&t, ctx); /* "a": this check alone */
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
