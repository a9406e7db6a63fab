/* Runtime: a kernel's output equals a CPU computation on random input (poison past the
 * output stays untouched); many dispatches in one pass == one pass each == one submit each;
 * a schedule's host-grid step runs the grid set before each replay; the pipeline cache; GPU
 * timestamps. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/gpu.h"

struct params {
    float    a;
    uint32_t n;
};

struct rig {
    wgf_pipeline   *p;
    wgf_buffer     *y, *x, *u;
    wgf_bind_group *bg;
};

static bool rig_init(wgf_ctx *ctx, struct rig *g, uint32_t cap)
{
    memset(g, 0, sizeof *g);
    return wgf_pipeline_for_kernel(ctx, "selfcheck_saxpy", &g->p) == WGF_OK &&
           wgf_buffer_create(ctx, "y", 4ull * cap, WGF_BUF_STORAGE, &g->y) == WGF_OK &&
           wgf_buffer_create(ctx, "x", 4ull * cap, WGF_BUF_STORAGE, &g->x) == WGF_OK &&
           wgf_buffer_create(ctx, "params", sizeof(struct params), WGF_BUF_UNIFORM, &g->u) == WGF_OK &&
           wgf_bind_group_create(ctx, g->p, (wgf_buffer *[]){g->y, g->x, g->u}, 3, &g->bg) == WGF_OK;
}

static void rig_free(struct rig *g)
{
    wgf_bind_group_free(g->bg);
    wgf_buffer_free(g->y);
    wgf_buffer_free(g->x);
    wgf_buffer_free(g->u);
}

/* mode 0: all in one pass; 1: a pass per dispatch; 2: a submit per dispatch */
static enum wgf_status run_chain(wgf_ctx *ctx, struct rig *g, int mode, int k, uint32_t n)
{
    wgf_recorder *r = NULL;
    enum wgf_status s = WGF_OK;
    uint32_t groups = (n + 63) / 64;
    for (int i = 0; i < k && s == WGF_OK; i++) {
        if (!r && (s = wgf_recorder_begin(ctx, "chain", NULL, &r)) != WGF_OK) return s;
        s = wgf_recorder_dispatch(r, g->p, g->bg, groups, 1, 1);
        if (s == WGF_OK && mode == 1) s = wgf_recorder_end_pass(r);
        if (s == WGF_OK && mode == 2) {
            s = wgf_recorder_submit(r);
            r = NULL;
        }
    }
    if (r) s = s == WGF_OK ? wgf_recorder_submit(r) : (wgf_recorder_abandon(r), s);
    return s;
}

int main(void)
{
    struct wgf_t t = {0};
    wgf_ctx *ctx = wgf_t_gpu(&t);
    if (!ctx) return wgf_t_finish(&t);
    struct wgf_rng rng;
    wgf_rng_seed(&rng, 99);

    /* ---- one kernel vs C, with poison past n ---- */
    const uint32_t cap = 4096, n = 3000; /* n not a multiple of the workgroup size */
    struct rig g;
    if (!wgf_t_check(&t, rig_init(ctx, &g, cap), "rig init", "%s", wgf_ctx_last_error(ctx))) goto out;
    float *x = malloc(4 * cap), *y = malloc(4 * cap), *got = malloc(4 * cap), *want = malloc(4 * cap);
    wgf_t_fill(&rng, x, cap, -3, 3);
    wgf_t_fill(&rng, y, cap, -3, 3);
    const uint32_t poison = 0x7FC0DEADu;
    for (uint32_t i = n; i < cap; i++) memcpy(&y[i], &poison, 4);
    struct params pr = {1.75f, n};
    wgf_buffer_write(ctx, g.x, 0, x, 4 * cap);
    wgf_buffer_write(ctx, g.y, 0, y, 4 * cap);
    wgf_buffer_write(ctx, g.u, 0, &pr, sizeof pr);
    enum wgf_status s = run_chain(ctx, &g, 0, 1, n);
    if (s == WGF_OK) s = wgf_buffer_read(ctx, g.y, 0, got, 4 * cap);
    if (wgf_t_check(&t, s == WGF_OK, "saxpy dispatch", "%s", wgf_ctx_last_error(ctx))) {
        for (uint32_t i = 0; i < n; i++) want[i] = pr.a * x[i] + y[i];
        double e = wgf_t_max_abs_diff(got, want, n);
        wgf_t_check(&t, e <= 4e-6, "saxpy == C on random input", "max abs err %g (tolerance 4e-6: f32, 1-2 roundings)", e);
        bool intact = true;
        for (uint32_t i = n; i < cap; i++) intact &= !memcmp(&got[i], &poison, 4);
        wgf_t_check(&t, intact, "poison past the output untouched", NULL);
    }

    /* ---- 200 chained dispatches: one pass vs pass each vs submit each, bitwise equal ---- */
    const int k = 200;
    float *res[3];
    for (int mode = 0; mode < 3; mode++) {
        res[mode] = malloc(4 * n);
        pr.a = 0.999f;
        wgf_buffer_write(ctx, g.y, 0, y, 4 * cap);
        wgf_buffer_write(ctx, g.u, 0, &pr, sizeof pr);
        s = run_chain(ctx, &g, mode, k, n);
        if (s == WGF_OK) s = wgf_buffer_read(ctx, g.y, 0, res[mode], 4 * n);
        wgf_t_check(&t, s == WGF_OK, mode == 0 ? "200 dispatches in one pass" : mode == 1 ? "200 passes" : "200 submits",
                    "%s", s == WGF_OK ? "" : wgf_ctx_last_error(ctx));
    }
    for (uint32_t i = 0; i < n; i++) { /* C: the same 200 steps */
        float v = y[i];
        for (int j = 0; j < k; j++) v = 0.999f * x[i] + v;
        want[i] = v;
    }
    wgf_t_check(&t, !memcmp(res[0], res[1], 4 * n) && !memcmp(res[0], res[2], 4 * n),
                "one pass == pass each == submit each (bitwise)", NULL);
    double rel = wgf_t_rel_l2(res[0], want, n);
    wgf_t_check(&t, rel < 1e-5, "200-step chain == C", "rel L2 %g", rel);
    for (int mode = 0; mode < 3; mode++) free(res[mode]);

    /* ---- pipeline cache: same request, same pipeline; different constants, new one ---- */
    wgf_pipeline *p2 = NULL;
    wgf_pipeline_for_kernel(ctx, "selfcheck_saxpy", &p2);
    wgf_t_check(&t, p2 == g.p, "pipeline cache hit", NULL);
    int before = wgf_ctx_pipeline_cache_size(ctx);
    struct wgf_pipeline_desc d = {"saxpy_with_prelude", wgf_kernel_source("selfcheck_saxpy"), "const UNUSED : u32 = 7u;",
                                  "main", NULL, 0};
    wgf_pipeline *p3 = NULL;
    s = wgf_pipeline_get(ctx, &d, &p3);
    wgf_t_check(&t, s == WGF_OK && p3 != g.p && wgf_ctx_pipeline_cache_size(ctx) == before + 1,
                "a different prelude is a different pipeline", "%s", wgf_ctx_last_error(ctx));
    /* labels are keys: the same code under two labels is two pipelines, each keeping its
     * caller's label (timings and errors name what the caller asked for) */
    struct wgf_pipeline_desc dk = {"matvec_attn_k", wgf_kernel_source("selfcheck_saxpy"), NULL, "main", NULL, 0};
    struct wgf_pipeline_desc dv = dk;
    dv.label                    = "matvec_attn_v";
    wgf_pipeline *pk = NULL, *pv = NULL, *pk2 = NULL;
    s = wgf_pipeline_get(ctx, &dk, &pk);
    if (s == WGF_OK) s = wgf_pipeline_get(ctx, &dv, &pv);
    if (s == WGF_OK) s = wgf_pipeline_get(ctx, &dk, &pk2);
    wgf_t_check(&t, s == WGF_OK && pk != pv && pk == pk2 && !strcmp(wgf_pipeline_label(pk), "matvec_attn_k") &&
                        !strcmp(wgf_pipeline_label(pv), "matvec_attn_v"),
                "the same code under two labels: two pipelines, each with its own label", "%s",
                s == WGF_OK ? (pv ? wgf_pipeline_label(pv) : "") : wgf_ctx_last_error(ctx));

    /* ---- a second instance of a text in one module (wgf_prelude_instance) ---- */
    {
        const char *text = "enable f16;\n// N, f: comments stay as they are\nconst N: u32 = 4u;\n"
                           "struct S { a: u32, }\nvar<private> acc: u32;\n"
                           "fn f(s: S) -> u32 { acc = s.a * N + shared_k; return acc; }\n";
        struct wgf_prelude ip = {0};
        wgf_prelude_instance(&ip, text, "_1");
        const char *want_in[] = {"// N, f: comments stay as they are", "const N_1: u32 = 4u;", "struct S_1 { a: u32, }",
                                 "var<private> acc_1: u32;",
                                 "fn f_1(s: S_1) -> u32 { acc_1 = s.a * N_1 + shared_k; return acc_1; }"};
        bool ok = wgf_prelude_status(&ip) == WGF_OK && ip.s && !strstr(ip.s, "enable");
        for (size_t i = 0; i < sizeof want_in / sizeof want_in[0] && ok; i++) ok = strstr(ip.s, want_in[i]) != NULL;
        wgf_t_check(&t, ok, "prelude instance: declared names suffixed, members and shared names not, directives dropped",
                    "%s", ip.s ? ip.s : "(none)");
        /* both instances and the names they share in one module: it compiles */
        struct wgf_prelude mp = {0};
        wgf_prelude_text(&mp, text + strlen("enable f16;\n"));
        wgf_prelude_instance(&mp, text, "_1");
        wgf_prelude_text(&mp, "const shared_k: u32 = 1u;\n@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n"
                              "@compute @workgroup_size(1) fn main() { o[0] = f(S(2u)) + f_1(S_1(3u)); }");
        struct wgf_pipeline_desc di = {"prelude_instance", "", mp.s, "main", NULL, 0};
        wgf_pipeline            *pi = NULL;
        s = wgf_prelude_status(&mp) == WGF_OK ? wgf_pipeline_get(ctx, &di, &pi) : WGF_ERR_NOMEM;
        wgf_t_check(&t, s == WGF_OK, "prelude instance: a module with both instances compiles", "%s",
                    s == WGF_OK ? "" : wgf_ctx_last_error(ctx));
        wgf_prelude_free(&ip);
        wgf_prelude_free(&mp);
    }

    /* ---- timestamps (lavapipe has timestamp-query) ---- */
    wgf_timer *tm = NULL;
    s = wgf_timer_create(ctx, "test timer", 8, &tm);
    if (s == WGF_ERR_UNSUPPORTED) {
        wgf_t_skip(&t, "gpu timer", "adapter lacks timestamp-query");
    } else if (wgf_t_check(&t, s == WGF_OK, "timer create", "%s", wgf_ctx_last_error(ctx))) {
        wgf_recorder *r = NULL;
        wgf_recorder_begin(ctx, "timed", tm, &r);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 20; j++) wgf_recorder_dispatch(r, g.p, g.bg, (n + 63) / 64, 1, 1);
            wgf_recorder_end_pass(r);
        }
        s = wgf_recorder_submit(r);
        double ns[8];
        uint32_t got_n = 0;
        if (s == WGF_OK) s = wgf_timer_read(ctx, tm, ns, 8, &got_n);
        wgf_t_check(&t, s == WGF_OK && got_n == 3 && ns[0] > 0 && ns[1] > 0 && ns[2] > 0 && ns[0] < 1e10,
                    "3 timed passes", "n=%u, %.0f %.0f %.0f ns", got_n, got_n > 0 ? ns[0] : 0, got_n > 1 ? ns[1] : 0,
                    got_n > 2 ? ns[2] : 0);
        wgf_timer_free(tm);
    }
    /* ---- a host-grid step: each replay dispatches the grid the caller set before it ---- */
    {
        float         ones[4096], zeros[4096], hy[4096];
        uint32_t      grid[3] = {4, 1, 1};
        wgf_schedule *sc      = NULL;
        wgf_bind_group *hbg   = NULL;
        for (uint32_t i = 0; i < cap; i++) ones[i] = 1.0f, zeros[i] = 0.0f;
        struct params hp = {1.0f, cap};
        wgf_buffer_write(ctx, g.x, 0, ones, 4 * cap);
        wgf_buffer_write(ctx, g.y, 0, zeros, 4 * cap);
        wgf_buffer_write(ctx, g.u, 0, &hp, sizeof hp);
        s = wgf_schedule_create(ctx, "host grid", &sc);
        if (s == WGF_OK) s = wgf_bind_group_create(ctx, g.p, (wgf_buffer *[]){g.y, g.x, g.u}, 3, &hbg);
        if (s == WGF_OK) s = wgf_schedule_dispatch_host(sc, "saxpy_host_grid", g.p, hbg, grid, (struct wgf_step_cost){0, 0, 0});
        /* replays with 4, then 10, then 0 workgroups of 64: y = 2 on [0, 256), 1 on [256, 640) */
        const uint32_t xs[3] = {4, 10, 0};
        for (int i = 0; i < 3 && s == WGF_OK; i++) {
            wgf_recorder *r = NULL;
            grid[0]         = xs[i];
            if ((s = wgf_recorder_begin(ctx, "host grid", NULL, &r)) == WGF_OK) {
                s = wgf_schedule_record(sc, r, NULL);
                s = s == WGF_OK ? wgf_recorder_submit(r) : (wgf_recorder_abandon(r), s);
            }
        }
        if (s == WGF_OK) s = wgf_buffer_read(ctx, g.y, 0, hy, 4 * cap);
        bool ok = s == WGF_OK;
        for (uint32_t i = 0; i < cap && ok; i++) ok = hy[i] == (i < 256 ? 2.0f : i < 640 ? 1.0f : 0.0f);
        wgf_t_check(&t, ok && wgf_schedule_dispatches(sc) == 1,
                    "host-grid step: replays run 4, 10, then 0 workgroups as set before each", "%s",
                    ok ? "" : s == WGF_OK ? "wrong values" : wgf_ctx_last_error(ctx));
        /* a grid past the device's limit fails that replay with the step's label */
        grid[0] = wgf_ctx_limits(ctx)->max_compute_workgroups_per_dimension + 1;
        wgf_recorder *r = NULL;
        enum wgf_status sl = sc ? wgf_recorder_begin(ctx, "host grid", NULL, &r) : WGF_ERR_ARG;
        if (sl == WGF_OK) {
            sl = wgf_schedule_record(sc, r, NULL);
            wgf_recorder_abandon(r);
        }
        wgf_t_check(&t, sl == WGF_ERR_LIMIT && strstr(wgf_ctx_last_error(ctx), "'saxpy_host_grid'") != NULL,
                    "host-grid step above the limit: WGF_ERR_LIMIT naming the step", "status %d: %s", (int)sl,
                    wgf_ctx_last_error(ctx));
        wgf_schedule_free(sc);
    }

    free(x);
    free(y);
    free(got);
    free(want);
    rig_free(&g);
out:
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
