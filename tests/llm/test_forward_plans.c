/* The plans of the fusion dial against cpu-ref, for real on the default adapter (lavapipe in
 * CI), on tiny random models (tests/llm/test_forward_model.h): ops (one dispatch per eager
 * op), fused (ops + RMSNorm 6->1, gate+up+SiLU 3->1, K+V 2->1) and mega (every layer in one
 * dispatch of one workgroup). The roles plan has its own test (test_forward_roles.c).
 *   - logits of an 8-token prefill (every row; token by token through the plan's decode step)
 *     and of 32 decode steps match cpu-ref on llama (GQA, tied head, Llama-3 RoPE scaling),
 *     qwen2 (q/k/v bias, untied head, a sliding window in layer 1) and phi3 (longrope
 *     crossing original_max_pos, head_dim 12, a sliding window in every layer), with f32 and packed-f16 weights; qwen2 also with workgroup-memory reductions;
 *   - greedy generation on the device (the shared sampler, tokens fed back) gives cpu-ref's
 *     ids (f32 weights);
 *   - the dispatches per token are what plan_ops.c's table says.
 * Tolerance: max |gpu - cpu| / max |cpu| over every logit: 1e-4 with f32 weights; 2e-2 with
 * f16 weights, against cpu-ref on the same f16-rounded weights. Observed errors are printed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test_forward_model.h"
#include "test_gpu_plans.h"
#include "wgfuse/gpu.h"
#include "wgfuse/llm_run.h"

#define N_PRE 8
#define N_DEC 32
#define N_GEN 16

struct variant {
    const char *name;
    bool        f32, no_sg;
};

static enum wgf_status greedy(struct wgf_llm_backend *b, const int32_t *prompt, uint32_t n_prompt, bool host,
                              struct ids *out, struct wgf_err *err)
{
    struct wgf_sampler        s  = {0};
    struct wgf_sampler_params sp = wgf_sampler_params_default();
    sp.temperature               = 0;
    enum wgf_status st           = wgf_sampler_init(&s, &sp, b->n_vocab, err);
    if (st) return st;
    struct wgf_gen_params gp = wgf_gen_params_default();
    gp.max_tokens            = N_GEN;
    gp.ignore_eos            = true;
    /* a logits callback keeps the logits on the host: the CPU sampler picks */
    struct wgf_gen_callbacks cb = {.user = out, .on_token = on_token, .on_logits = host ? on_logits_noop : NULL};
    struct wgf_gen_stats     stats;
    st = wgf_generate(b, NULL, &s, &gp, prompt, n_prompt, &cb, &stats, err);
    wgf_sampler_free(&s);
    return st;
}

/* decode dispatches per layer (plan_ops.c's table; mega: one for every layer) */
static uint32_t per_layer(const char *plan, bool bias)
{
    if (!strcmp(plan, "ops")) return bias ? 46 : 43;
    if (!strcmp(plan, "fused")) return bias ? 32 : 30;
    return 0;
}

static void check_plan(struct wgf_t *t, wgf_ctx *ctx, const struct wgf_llm_backend *proto, const char *mname,
                       const struct tm_dims *d, const struct variant *v)
{
    char           nm[200], what[400];
    struct tm     *tm = tm_build(d, 4321);
    const int      V = d->vocab, n_all = N_PRE + N_DEC;
    const uint32_t n_ctx = (uint32_t)(n_all + N_GEN + 8);
    int32_t        tok[N_PRE + N_DEC];
    struct wgf_err err = {0};
    struct wgf_llm_backend cpu = {0}, gpu = {0};
    float *lc = malloc((size_t)n_all * V * sizeof *lc), *lg = malloc((size_t)n_all * V * sizeof *lg);
    WGF_ASSERT(lc && lg);
    if (!v->f32) round_f16(tm);
    tm_tokens(tok, n_all, V, 77);
    snprintf(nm, sizeof nm, "%s %s %s", proto->plan, mname, v->name);

    struct wgf_llm_backend_options co = {.n_ctx = n_ctx, .n_threads = 1};
    struct wgf_llm_backend_options go = {.n_ctx = n_ctx, .gpu = ctx, .weights_f32 = v->f32, .no_subgroups = v->no_sg};
    if (!wgf_t_check(t, wgf_llm_backend_open(&cpu, &wgf_llm_backend_ref, &tm->m, &co, &err) == WGF_OK, nm, "cpu-ref: %s",
                     err.msg) ||
        !wgf_t_check(t, wgf_llm_backend_open(&gpu, proto, &tm->m, &go, &err) == WGF_OK, nm, "%s init: %s", proto->name,
                     err.msg))
        goto out;
    uint32_t want = per_layer(proto->plan, d->bias) * (uint32_t)d->layers;
    if (!want) want = 1;
    snprintf(what, sizeof what, "%s: dispatches per token", nm);
    wgf_t_check(t, gpu.dispatches_per_token == want + 2, what, "%u (layers %u + lm_head + sampler)",
                gpu.dispatches_per_token, want);

    enum wgf_status s1 = cpu.forward(&cpu, tok, N_PRE, 0, lc, true, &err);
    enum wgf_status s2 = s1 ? s1 : gpu.forward(&gpu, tok, N_PRE, 0, lg, true, &err);
    double          e_pre = s2 ? INFINITY : tm_rel_max_f(lg, lc, (size_t)N_PRE * V);
    for (int i = N_PRE; i < n_all && !s2; i++) {
        s1 = cpu.forward(&cpu, tok + i, 1, (uint32_t)i, lc + (size_t)i * V, false, &err);
        s2 = s1 ? s1 : gpu.forward(&gpu, tok + i, 1, (uint32_t)i, lg + (size_t)i * V, false, &err);
    }
    double e_dec = s2 ? INFINITY : tm_rel_max_f(lg + (size_t)N_PRE * V, lc + (size_t)N_PRE * V, (size_t)N_DEC * V);
    double tol   = v->f32 ? 1e-4 : 2e-2;
    snprintf(what, sizeof what, "%s: logits match cpu-ref (prefill %d + decode %d)", nm, N_PRE, N_DEC);
    wgf_t_check(t, s2 == WGF_OK && e_pre <= tol && e_dec <= tol, what,
                "max |diff| / max |logit|: prefill %.3g, decode %.3g (tolerance %.0e) %s", e_pre, e_dec, tol,
                s2 ? err.msg : "");

    /* greedy on the device = cpu-ref's ids (f32: identical logits up to rounding) */
    struct ids a = {0}, b = {0};
    s1 = greedy(&cpu, tok, 6, true, &a, &err);
    s2 = s1 ? s1 : greedy(&gpu, tok, 6, false, &b, &err);
    snprintf(what, sizeof what, "%s: greedy on the GPU, %d ids %s cpu-ref's", nm, N_GEN, v->f32 ? "=" : "vs");
    int diff = 0;
    while (diff < N_GEN && a.id[diff] == b.id[diff]) diff++;
    if (v->f32) wgf_t_check(t, s2 == WGF_OK && a.n == N_GEN && b.n == N_GEN && diff == N_GEN, what,
                            "%d vs %d ids, first difference at %d %s", a.n, b.n, diff, s2 ? err.msg : "");
    else wgf_t_check(t, s2 == WGF_OK && b.n == N_GEN, what, "%d ids, equal to cpu-ref's up to index %d %s", b.n, diff,
                     s2 ? err.msg : "");
out:
    wgf_llm_backend_close(&gpu);
    wgf_llm_backend_close(&cpu);
    free(lc);
    free(lg);
    tm_free(tm);
}

int main(void)
{
    struct wgf_t t = {0};
    /* lavapipe on a 2-core CI machine busy with other tests (test_forward_roles.c) */
    wgf_ctx *ctx = wgf_t_gpu_timeout(&t, 300000);
    if (!ctx) return wgf_t_finish(&t);
    uint32_t sgs = 0;
    wgf_ctx_subgroup_size(ctx, &sgs);
    printf("subgroup reductions: %s (size %u)\n", sgs ? "available" : "not available", sgs);
    const struct wgf_llm_backend *plans[] = {&wgf_llm_backend_gpu_ops, &wgf_llm_backend_gpu_fused,
                                             &wgf_llm_backend_gpu_mega};
    const struct variant vs[] = {{"f32", true, false}, {"f16 packed", false, false}, {"f32 no-subgroups", true, true}};
    const char *only  = getenv("WGF_TEST_ONLY");    /* plan indices, for iterating    */
    const char *vonly = getenv("WGF_TEST_VARIANT"); /* variant indices                */
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        if (only && !strchr(only, (int)('0' + p))) continue;
        for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
            if (vonly && !strchr(vonly, (int)('0' + i))) continue;
            /* the workgroup-memory reductions on one model (qwen2: bias, GQA): on lavapipe the
             * test's time is the kernels' compile, ~10 s per model and variant cold */
            bool   all = !vs[i].no_sg;
            double t0  = wgf_llm_now();
            if (all) check_plan(&t, ctx, plans[p], "llama gqa llama3-rope f16 tied", &LLAMA3, &vs[i]);
            double t1 = wgf_llm_now();
            check_plan(&t, ctx, plans[p], "qwen2 bias bf16 untied window 5 in layer 1", &QWEN2, &vs[i]);
            double t2 = wgf_llm_now();
            if (all) check_plan(&t, ctx, plans[p], "phi3 longrope f32 window 7", &PHI3, &vs[i]);
            printf("%s '%s': %.1f s, %.1f s, %.1f s\n", plans[p]->plan, vs[i].name, t1 - t0, t2 - t1,
                   wgf_llm_now() - t2);
        }
    }
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
