/* Every fused/unfused pair of `wgfuse bench fusion` against its C reference on lavapipe at
 * the toy size (random, never-zero inputs; poison past every output), plus proof that the
 * check catches a wrong kernel and one that writes past its output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/bench.h"

static void check_all(struct wgf_t *t, wgf_ctx *ctx, const struct wgf_fusion_opts *o)
{
    for (int e = 0; e < WGF_FUSION_COUNT; e++) {
        struct wgf_fusion_result r;
        struct wgf_err           err = {0};
        char                     name[64];
        snprintf(name, sizeof name, "fusion %s check (toy)", wgf_fusion_exp_name((enum wgf_fusion_exp)e));
        if (!wgf_t_check(t, wgf_bench_fusion(ctx, o, (enum wgf_fusion_exp)e, &r, &err) == WGF_OK, name, "%s", err.msg))
            continue;
        wgf_t_check(t, r.ran && r.n_variants >= 2, name, "%d variants", r.n_variants);
        for (int i = 0; i < r.n_variants; i++) {
            char vn[128];
            snprintf(vn, sizeof vn, "%s %s", r.name, r.v[i].name);
            wgf_t_check(t, r.v[i].correct, vn, "%s", r.v[i].detail);
        }
    }
}

/* rmsnorm variants that must FAIL the check */
static const char *bad_kernel;
static const char *broken_source(void *user, const char *role)
{
    (void)user;
    return !strcmp(role, "rmsnorm") ? bad_kernel : wgf_kernel_source(role);
}

static const char *k_no_weight =
    "override H: u32;\noverride EPS: f32;\n"
    "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
    "@group(0) @binding(1) var<storage, read> x: array<f32>;\n"
    "@group(0) @binding(2) var<storage, read> w: array<f32>;\n"
    "@compute @workgroup_size(1) fn main() {\n"
    "  var s = 0.0; for (var i = 0u; i < H; i++) { s += x[i] * x[i]; }\n"
    "  let sc = inverseSqrt(s / f32(H) + EPS);\n"
    "  for (var i = 0u; i < H; i++) { y[i] = x[i] * sc * select(1.0, w[i], i + 1u < H); }\n"
    "}\n"; /* forgets the weight of the last element */
static const char *k_overrun =
    "override H: u32;\noverride EPS: f32;\n"
    "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
    "@group(0) @binding(1) var<storage, read> x: array<f32>;\n"
    "@group(0) @binding(2) var<storage, read> w: array<f32>;\n"
    "@compute @workgroup_size(1) fn main() {\n"
    "  var s = 0.0; for (var i = 0u; i < H; i++) { s += x[i] * x[i]; }\n"
    "  let sc = inverseSqrt(s / f32(H) + EPS);\n"
    "  for (var i = 0u; i < H; i++) { y[i] = x[i] * sc * w[i]; }\n"
    "  y[H] = 0.0;\n"
    "}\n"; /* right values, then one write past the end */

static void check_catches(struct wgf_t *t, wgf_ctx *ctx, const struct wgf_fusion_opts *base)
{
    struct {
        const char *src, *name;
    } cases[] = {{k_no_weight, "check catches a wrong value"}, {k_overrun, "check catches a write past the output"}};
    for (int c = 0; c < 2; c++) {
        struct wgf_fusion_opts o = *base;
        o.kernel_source          = broken_source;
        bad_kernel               = cases[c].src;
        o.check_only             = false; /* a wrong kernel must not be timed */
        o.reps                   = 2;
        o.warmup                 = 0;
        o.iters                  = 1;
        struct wgf_fusion_result r;
        struct wgf_err           err = {0};
        if (!wgf_t_check(t, wgf_bench_fusion(ctx, &o, WGF_FUSION_RMSNORM, &r, &err) == WGF_OK, cases[c].name, "%s",
                         err.msg))
            continue;
        wgf_t_check(t, r.v[0].correct && !r.v[1].correct && r.v[1].us.n == 0 && r.v[1].speedup == 0, cases[c].name,
                    "fused: %s", r.v[1].detail);
    }
}

static void check_timed(struct wgf_t *t, wgf_ctx *ctx, const struct wgf_fusion_opts *base)
{
    struct wgf_fusion_opts o = *base;
    o.check_only             = false;
    o.reps                   = 3;
    o.warmup                 = 1;
    o.iters                  = 2;
    struct wgf_fusion_result r;
    struct wgf_err           err = {0};
    if (!wgf_t_check(t, wgf_bench_fusion(ctx, &o, WGF_FUSION_MLP, &r, &err) == WGF_OK, "fusion mlp timed", "%s", err.msg))
        return;
    bool ok = r.n_variants == 3;
    for (int i = 0; i < r.n_variants; i++)
        ok &= r.v[i].correct && r.v[i].us.n == 3 && isfinite(r.v[i].us.median) && r.v[i].us_wall.n == 3 &&
              r.v[i].us_wall.median > 0 && isfinite(r.v[i].speedup) && r.v[i].speedup >= 0;
    /* no performance threshold: lavapipe shares 2 cores; only that every number exists */
    wgf_t_check(t, ok, "fusion mlp timed: stats and speedups", "7: %.1f us, 3: %.1f us, 1: %.1f us",
                r.v[0].us.median, r.v[1].us.median, r.v[2].us.median);
    char          *text = NULL;
    struct wgf_err e2   = {0};
    wgf_t_check(t, wgf_bench_fusion_table(&r, 1, "test", &o.size, &text, &e2) == WGF_OK && strstr(text, "tiled_3"),
                "fusion table renders", "%s", e2.msg);
    free(text);
}

int main(void)
{
    struct wgf_t t   = {0};
    wgf_ctx     *ctx = wgf_t_gpu(&t);
    if (!ctx) return wgf_t_finish(&t);
    struct wgf_bench_size size;
    struct wgf_err        err = {0};
    wgf_t_check(&t, wgf_bench_size_get("toy", &size, &err) == WGF_OK && size.hidden == 256, "size toy", "%s", err.msg);
    wgf_t_check(&t, wgf_bench_size_get("qwen05b", &size, &err) == WGF_OK && size.hidden == 896 &&
                        size.intermediate == 4864 && size.n_heads == 14 && size.n_kv_heads == 2 && size.head_dim == 64 &&
                        size.vocab == 151936,
                "size qwen05b", NULL);
    wgf_t_check(&t, wgf_bench_size_get("huge", &size, &err) == WGF_ERR_ARG, "unknown size rejected", "%s", err.msg);
    wgf_bench_size_get("toy", &size, &err);
    struct wgf_fusion_opts o = wgf_fusion_opts_default(&size, true);
    o.check_only             = true;
    check_all(&t, ctx, &o);
    check_catches(&t, ctx, &o);
    check_timed(&t, ctx, &o);
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
