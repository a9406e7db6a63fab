/* wgf_llm_dial (src/llm/dial.c) for real on the default adapter, on a tiny random qwen2 model
 * (tests/llm/test_forward_model.h):
 *   - every plan runs: rows in the order asked, each checked against cpu-ref within its
 *     tolerance with every argmax equal (f32 weights), one positive decode and prefill rate per
 *     run, the same ids in every run, dispatches per token strictly decreasing ops > fused >
 *     roles > mega;
 *   - a plan the device cannot run is skipped with its reason and the others still run: with
 *     40 KiB bindings the model's matrices take more weight arenas than the mega kernel binds
 *     (3), so mega's init says WGF_ERR_UNSUPPORTED (mutation caught: dial.c returning that
 *     status instead of recording it fails the "skipped" check);
 *   - a plan name that does not exist is a WGF_ERR_ARG naming it, and runs past 64 are refused. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "test_forward_model.h"
#include "wgfuse/gpu.h"
#include "wgfuse/llm_dial.h"

static const struct tm_dims QWEN2 = {.arch = WGF_ARCH_QWEN2, .dim = 64, .hidden = 96, .layers = 2, .heads = 8,
                                     .kv_heads = 2, .head_dim = 8, .vocab = 600, .max_seq = 256,
                                     .dtype = WGF_DT_BF16, .bias = true, .tied = false, .theta = 1000000.0f};

static struct wgf_dial_opts small_opts(void)
{
    struct wgf_dial_opts o = wgf_dial_opts_default();
    o.n_prompt = 4, o.n_gen = 3, o.runs = 2, o.check_prompt = 4, o.check_steps = 2, o.weights_f32 = true;
    return o;
}

static void all_plans(struct wgf_t *t, wgf_ctx *ctx, const struct wgf_llm_model *m)
{
    struct wgf_dial_opts   o = small_opts();
    struct wgf_dial_report r;
    struct wgf_err         err = {0};
    enum wgf_status        s   = wgf_llm_dial(ctx, m, &o, &r, &err);
    if (wgf_t_check(t, s == WGF_OK && r.n == 4, "dial: four plans", "status %d, %u rows: %s", s, r.n, err.msg)) {
        const char *want[4] = {"ops", "fused", "roles", "mega"};
        bool        ok      = true;
        for (uint32_t i = 0; i < 4; i++) {
            const struct wgf_dial_row *x = &r.row[i];
            ok = ok && !strcmp(x->plan, want[i]) && !x->skipped[0] && x->check_err <= x->tolerance &&
                 x->tolerance == 1e-4 && x->argmax_agree == x->check_rows && x->check_rows == 6 &&
                 (i == 0 || x->dispatches < r.row[i - 1].dispatches) && x->dispatches > 0;
            for (uint32_t k = 0; k < r.runs; k++) ok = ok && x->decode_tok_s[k] > 0 && x->prefill_tok_s[k] > 0;
            printf("  %-6s %4u dispatches, check %.2e, decode %.1f / %.1f tok/s\n", x->plan, x->dispatches, x->check_err,
                   x->decode_tok_s[0], x->decode_tok_s[1]);
        }
        wgf_t_check(t, ok, "dial: order, checks within 1e-4, argmax equal, rates, fewer dispatches each", NULL);
    }
    wgf_dial_report_free(&r);
}

static void skip_unsupported(struct wgf_t *t, wgf_ctx *ctx, const struct wgf_llm_model *m)
{
    struct wgf_dial_opts o = small_opts();
    o.plans[0] = "roles", o.plans[1] = "mega", o.n_plans = 2;
    o.max_binding_bytes    = 40960; /* the weights in many arenas: more than mega binds */
    struct wgf_dial_report r;
    struct wgf_err         err = {0};
    enum wgf_status        s   = wgf_llm_dial(ctx, m, &o, &r, &err);
    wgf_t_check(t, s == WGF_OK && r.n == 2 && !r.row[0].skipped[0] && r.row[0].decode_tok_s[1] > 0 &&
                       r.row[1].skipped[0] && strstr(r.row[1].skipped, "arena"),
                "dial: mega skipped with its reason, roles measured", "status %d (%s), %u rows, roles '%s', mega '%s'",
                s, err.msg, r.n, r.row[0].skipped, r.row[1].skipped);
    wgf_dial_report_free(&r);
}

static void refusals(struct wgf_t *t, wgf_ctx *ctx, const struct wgf_llm_model *m)
{
    struct wgf_dial_opts o = small_opts();
    o.plans[0] = "fusedd", o.n_plans = 1;
    struct wgf_dial_report r;
    struct wgf_err         err = {0};
    enum wgf_status        s   = wgf_llm_dial(ctx, m, &o, &r, &err);
    wgf_t_check(t, s == WGF_ERR_ARG && strstr(err.msg, "fusedd"), "dial: unknown plan refused, named", "%d: %s", s,
                err.msg);
    wgf_dial_report_free(&r);
    o       = small_opts();
    o.runs  = 65;
    err.msg[0] = 0;
    s       = wgf_llm_dial(ctx, m, &o, &r, &err);
    wgf_t_check(t, s == WGF_ERR_ARG && r.n == 0, "dial: 65 runs refused", "%d: %s", s, err.msg);
    wgf_dial_report_free(&r);
}

int main(void)
{
    struct wgf_t t   = {0};
    wgf_ctx     *ctx = wgf_t_gpu_timeout(&t, 300000);
    if (!ctx) return wgf_t_finish(&t);
    struct tm *tm = tm_build(&QWEN2, 99);
    all_plans(&t, ctx, &tm->m);
    skip_unsupported(&t, ctx, &tm->m);
    refusals(&t, ctx, &tm->m);
    tm_free(tm);
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
