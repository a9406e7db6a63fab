/* wgfuse bench matvec — the shared matvec kernel on real projection shapes, against the copy
 * bandwidth of the same device in the same run.
 *
 * Protocol (docs/methodology.md): per case, the output is checked against a double-precision
 * C reference over the same (f16-rounded where packed) weights before anything is timed; one
 * warm-up; then `reps` timed passes of R back-to-back dispatches (each writes y, so every
 * dispatch waits for the previous one, as in a plan), cycling through copies of W that
 * together exceed the GPU's cache (rotate_bytes) so the weights come from memory. Time per
 * dispatch = GPU pass time / R (timestamps; wall clock of submit + wait otherwise). The copy
 * bandwidth is a grid-stride vec4 copy kernel over a buffer far larger than the cache,
 * counting bytes read plus written. Everything is reported, slow variants included. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_internal.h"
#include "util/rng.h"
#include "wgfuse/bench.h"
#include "wgfuse/half.h"

#define MV_TOL 1e-4

/* name is one of the comma-separated items of list */
static bool wgf__list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        size_t l = strcspn(p, ",");
        if (l == n && !strncmp(p, name, n)) return true;
        p += l + (p[l] == ',');
    }
    return false;
}

static const struct wgf_matvec_shape MV_SHAPES[] = {
    /* Qwen2.5-0.5B: dim 896, 14 q / 2 kv heads of 64, hidden 4864, vocab 151936 */
    {"qwen2.5-0.5b", "attn_qkv", 1152, 896},     {"qwen2.5-0.5b", "attn_output", 896, 896},
    {"qwen2.5-0.5b", "ffn_gate_up", 9728, 896},  {"qwen2.5-0.5b", "ffn_down", 896, 4864},
    {"qwen2.5-0.5b", "lm_head", 151936, 896},
    /* Qwen2.5-1.5B: dim 1536, 12 q / 2 kv heads of 128, hidden 8960 */
    {"qwen2.5-1.5b", "attn_qkv", 2048, 1536},    {"qwen2.5-1.5b", "attn_output", 1536, 1536},
    {"qwen2.5-1.5b", "ffn_gate_up", 17920, 1536}, {"qwen2.5-1.5b", "ffn_down", 1536, 8960},
    {"qwen2.5-1.5b", "lm_head", 151936, 1536},
    /* Phi-3-mini: dim 3072, 32 heads of 96 (no GQA), hidden 8192, vocab 32064 */
    {"phi-3-mini", "attn_qkv", 9216, 3072},      {"phi-3-mini", "attn_output", 3072, 3072},
    {"phi-3-mini", "ffn_gate_up", 16384, 3072},  {"phi-3-mini", "ffn_down", 3072, 8192},
    {"phi-3-mini", "lm_head", 32064, 3072},
    /* toy: for tests on CPU adapters */
    {"toy", "attn_qkv", 96, 64},                 {"toy", "ffn_down", 64, 160},
    {"toy", "lm_head", 1000, 72},
};

const struct wgf_matvec_shape *wgf_matvec_shapes(const char *model, int *n)
{
    int first = -1, count = 0;
    for (int i = 0; i < (int)(sizeof MV_SHAPES / sizeof MV_SHAPES[0]); i++)
        if (!strcmp(MV_SHAPES[i].model, model)) {
            if (first < 0) first = i;
            count++;
        }
    *n = count;
    return first < 0 ? NULL : &MV_SHAPES[first];
}

void wgf_matvec_report_free(struct wgf_matvec_report *r)
{
    if (!r) return;
    free(r->rows);
    r->rows = NULL;
    r->n    = 0;
}

static enum wgf_status mv_fail(wgf_ctx *ctx, struct wgf_err *err, enum wgf_status s, const char *what)
{
    return wgf_ctx_err(ctx, err, s, "bench matvec: %s", what);
}

/* GPU time of one submitted pass (timer) or wall time of submit + wait, in ns. */
enum wgf_status wgf__bench_time_pass(wgf_ctx *ctx, wgf_timer *tm, wgf_pipeline *pl, wgf_bind_group **bg, uint32_t n_bg,
                                     uint32_t reps_in_pass, uint32_t grid, double *ns)
{
    wgf_recorder   *r;
    enum wgf_status s;
    if (tm) wgf_timer_reset(tm);
    uint64_t t0 = wgf_now_ns();
    if ((s = wgf_recorder_begin(ctx, "bench_matvec", tm, &r))) return s;
    for (uint32_t i = 0; i < reps_in_pass && !s; i++) s = wgf_recorder_dispatch(r, pl, bg[i % n_bg], grid, 1, 1);
    if (s) {
        wgf_recorder_abandon(r);
        return s;
    }
    if ((s = wgf_recorder_submit(r)) || (s = wgf_ctx_wait(ctx))) return s;
    uint64_t t1 = wgf_now_ns();
    *ns         = (double)(t1 - t0);
    if (tm) {
        double   pass[1];
        uint32_t n;
        if ((s = wgf_timer_read(ctx, tm, pass, 1, &n))) return s;
        if (n == 1 && pass[0] > 0) *ns = pass[0];
    }
    return WGF_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double wgf__bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Copy bandwidth: bytes read + written per second by copy_vec4. */
static enum wgf_status mv_copy_bw(wgf_ctx *ctx, wgf_timer *tm, bool gpu_adapter, int reps, double *gbps,
                                  struct wgf_err *err)
{
    const struct wgf_limits *lim   = wgf_ctx_limits(ctx);
    uint64_t                 bytes = gpu_adapter ? (256ull << 20) : (32ull << 20);
    if (bytes > lim->max_storage_buffer_binding_size) bytes = lim->max_storage_buffer_binding_size & ~15ull;
    uint64_t n4 = bytes / 16;
    struct wgf_prelude p = {0};
    wgf_prelude_u32(&p, "WG", 256, "invocations per workgroup");
    wgf_prelude_u32(&p, "N4", n4, "vec4 elements copied");
    wgf_buffer     *a = NULL, *b = NULL;
    wgf_pipeline   *pl = NULL;
    wgf_bind_group *bg = NULL;
    enum wgf_status s  = wgf_prelude_status(&p);
    struct wgf_pipeline_desc d = {.label = "copy_vec4", .wgsl = wgf_kernel_source("copy_vec4"), .prelude = p.s};
    if (!s && (s = wgf_pipeline_get(ctx, &d, &pl))) s = mv_fail(ctx, err, s, "copy kernel");
    if (!s && ((s = wgf_buffer_create(ctx, "bench_matvec.copy_src", bytes, WGF_BUF_STORAGE, &a)) ||
               (s = wgf_buffer_create(ctx, "bench_matvec.copy_dst", bytes, WGF_BUF_STORAGE, &b))))
        s = mv_fail(ctx, err, s, "copy buffers");
    wgf_buffer *bufs[2] = {b, a};
    if (!s && (s = wgf_bind_group_create(ctx, pl, bufs, 2, &bg))) s = mv_fail(ctx, err, s, "copy bind group");
    uint64_t groups = (n4 + 255) / 256;
    uint32_t grid   = groups > 8192 ? 8192 : (uint32_t)groups;
    double   t[64];
    int      n = reps < 64 ? reps : 64;
    for (int i = -1; i < n && !s; i++) { /* i = -1: warm-up */
        double ns;
        if ((s = wgf__bench_time_pass(ctx, tm, pl, &bg, 1, 4, grid, &ns))) s = mv_fail(ctx, err, s, "copy pass");
        else if (i >= 0) t[i] = ns / 4;
    }
    if (!s) *gbps = 2.0 * (double)bytes / wgf__bench_median(t, n);
    wgf_bind_group_free(bg);
    wgf_buffer_free(a);
    wgf_buffer_free(b);
    wgf_prelude_free(&p);
    return s;
}

enum wgf_status wgf_bench_copy_gbps(wgf_ctx *ctx, int reps, double *gbps, struct wgf_err *err)
{
    wgf_timer *tm = NULL;
    if (wgf_timer_create(ctx, "bench_copy", 1, &tm) != WGF_OK) tm = NULL; /* wall clock then */
    enum wgf_status s = mv_copy_bw(ctx, tm, strcmp(wgf_ctx_adapter(ctx)->type, "cpu") != 0, reps > 0 ? reps : 7, gbps, err);
    wgf_timer_free(tm);
    return s;
}

struct mv_case {
    const struct wgf_matvec_shape *sh;
    bool                           f16;
    struct wgf_matvec_cfg          cfg;
    uint32_t                       sgs;
    uint32_t                       pad;
};

static enum wgf_status mv_run_case(wgf_ctx *ctx, wgf_timer *tm, const struct mv_case *c, const struct wgf_matvec_opts *o,
                                   bool gpu_adapter, struct wgf_matvec_row *row, struct wgf_err *err)
{
    const struct wgf_limits *lim  = wgf_ctx_limits(ctx);
    const uint32_t           N    = c->sh->rows, K = c->sh->cols;
    const uint32_t           KP   = (K + 15) / 16 * 16, EPC = c->f16 ? 8 : 4, KC = KP / EPC, KCS = KC + c->pad;
    const uint64_t           wrow = (uint64_t)KCS * 16, wbytes = wrow * N;
    const uint64_t           align = lim->min_storage_buffer_offset_alignment ? lim->min_storage_buffer_offset_alignment : 256;
    const uint64_t           wstride = (wbytes + align - 1) / align * align;
    memset(row, 0, sizeof *row);
    row->shape     = *c->sh;
    row->f16       = c->f16;
    row->tpr       = c->cfg.tpr;
    row->rpg       = c->cfg.rpg;
    row->pad       = c->pad;
    row->subgroups = c->sgs != 0;
    if (wbytes > lim->max_storage_buffer_binding_size || wbytes > lim->max_buffer_size) {
        row->skipped = true;
        return WGF_OK;
    }
    uint64_t rotate = o->rotate_bytes ? o->rotate_bytes : (gpu_adapter ? (256ull << 20) : 0);
    uint32_t copies = rotate ? (uint32_t)((rotate + wbytes - 1) / wbytes) : 1;
    if (copies > 256) copies = 256;
    while (copies > 1 && (uint64_t)copies * wstride > lim->max_buffer_size) copies--;

    /* host data: W as chunks, x, and the reference */
    uint32_t *wh  = malloc((size_t)wbytes);
    float    *xh  = calloc(KP, sizeof *xh);
    double   *ref = malloc((size_t)N * sizeof *ref);
    float    *yh  = malloc((size_t)N * sizeof *yh);
    double   *tw  = malloc((size_t)KP * sizeof *tw);
    if (!wh || !xh || !ref || !yh || !tw) {
        free(wh), free(xh), free(ref), free(yh), free(tw);
        return wgf_fail(err, WGF_ERR_NOMEM, "bench matvec: host buffers for %u x %u", N, K);
    }
    struct wgf_rng rng;
    wgf_rng_seed(&rng, 0x6d76ull ^ ((uint64_t)N << 20) ^ K);
    for (uint32_t k = 0; k < K; k++) xh[k] = wgf_rng_uniform(&rng, -1.0f, 1.0f);
    float scale = 1.0f / sqrtf((float)K);
    for (uint32_t r = 0; r < N; r++) {
        uint32_t *dst = wh + (size_t)r * KCS * 4;
        memset(dst, 0, (size_t)KCS * 16);
        double    acc = 0;
        for (uint32_t k = 0; k < KP; k++) {
            float v = k < K ? wgf_rng_uniform(&rng, -scale, scale) : 0.0f;
            if (c->f16) {
                uint16_t h = wgf_f32_to_f16(v);
                v          = wgf_f16_to_f32(h);
                if (k % 2 == 0) dst[k / 2] = h;
                else dst[k / 2] |= (uint32_t)h << 16;
            } else {
                memcpy(&dst[k], &v, 4);
            }
            tw[k] = v;
        }
        for (uint32_t k = 0; k < K; k++) acc += tw[k] * (double)xh[k];
        ref[r] = acc;
    }
    free(tw);

    struct wgf_prelude p = {0};
    if (c->sgs) wgf_prelude_text(&p, "enable subgroups;");
    enum wgf_status s = wgf_matvec_prelude(&p, c->cfg, c->sgs, c->f16);
    wgf_prelude_u32(&p, "KC", KC, "16-byte chunks per weight row");
    wgf_prelude_u32(&p, "KCS", KCS, "row stride in chunks");
    wgf_prelude_u32(&p, "N", N, "rows");
    wgf_prelude_u32(&p, "ROW0", 0, "first output row");
    wgf_prelude_bool(&p, "ACCUM", false, "y = W x");
    if (!s) s = wgf_prelude_fragment(&p, "lib_rows");
    if (!s) s = wgf_prelude_status(&p);
    char label[64];
    snprintf(label, sizeof label, "gemv_%s_tpr%u_r%u_p%u_%s", c->f16 ? "f16" : "f32", c->cfg.tpr, c->cfg.rpg, c->pad,
             c->sgs ? "sg" : "wg");
    wgf_buffer     *wb = NULL, *xb = NULL, *yb = NULL, *w0 = NULL;
    wgf_pipeline   *pl = NULL;
    wgf_bind_group **bg = calloc(copies, sizeof *bg);
    if (!bg) s = WGF_ERR_NOMEM;
    struct wgf_pipeline_desc d = {.label = label, .wgsl = wgf_kernel_source("gemv"), .prelude = p.s};
    if (!s && (s = wgf_pipeline_get(ctx, &d, &pl))) s = mv_fail(ctx, err, s, label);
    if (!s && ((s = wgf_buffer_create(ctx, "bench_matvec.w", wstride * copies, WGF_BUF_STORAGE, &wb)) ||
               (s = wgf_buffer_create(ctx, "bench_matvec.x", (uint64_t)KP * 4, WGF_BUF_STORAGE, &xb)) ||
               (s = wgf_buffer_create(ctx, "bench_matvec.y", (uint64_t)N * 4 + 16, WGF_BUF_STORAGE, &yb)) ||
               (s = wgf_buffer_write(ctx, wb, 0, wh, (size_t)wbytes)) ||
               (copies > 1 && (s = wgf_buffer_create(ctx, "bench_matvec.w0", wbytes, WGF_BUF_STORAGE, &w0))) ||
               (copies > 1 && (s = wgf_buffer_write(ctx, w0, 0, wh, (size_t)wbytes))) ||
               (s = wgf_buffer_write(ctx, xb, 0, xh, (size_t)KP * 4))))
        s = mv_fail(ctx, err, s, "buffers");
    if (!s && copies > 1) { /* replicate on the GPU (a copy needs two buffers) */
        wgf_recorder *r;
        if (!(s = wgf_recorder_begin(ctx, "bench_matvec.replicate", NULL, &r))) {
            for (uint32_t i = 1; i < copies && !s; i++) s = wgf_recorder_copy(r, w0, 0, wb, i * wstride, wbytes);
            if (s) wgf_recorder_abandon(r);
            else s = wgf_recorder_submit(r);
        }
        if (s) s = mv_fail(ctx, err, s, "replicating W");
    }
    for (uint32_t i = 0; i < copies && !s; i++) {
        struct wgf_binding b[3] = {{yb, 0, 0}, {xb, 0, 0}, {wb, i * wstride, wbytes}};
        if ((s = wgf_bind_group_create_ranges(ctx, pl, b, 3, &bg[i]))) s = mv_fail(ctx, err, s, "bind group");
    }
    uint32_t rows_wg = c->cfg.gpw * c->cfg.rpg;
    uint32_t grid    = (N + rows_wg - 1) / rows_wg;
    if (!s && grid > lim->max_compute_workgroups_per_dimension) row->skipped = true;
    /* check */
    if (!s && !row->skipped) {
        if ((s = wgf_buffer_fill_u32(ctx, yb, 0x7fc00000u)) || (s = wgf_dispatch_once(ctx, pl, bg[0], grid, 1, 1)) ||
            (s = wgf_buffer_read(ctx, yb, 0, yh, (size_t)N * 4)))
            s = mv_fail(ctx, err, s, "check run");
        double scale_r = 0, d_max = 0;
        for (uint32_t r = 0; r < N && !s; r++) {
            scale_r = fmax(scale_r, fabs(ref[r]));
            double dd = fabs((double)yh[r] - ref[r]);
            if (!(dd <= d_max)) d_max = isnan(dd) ? INFINITY : dd;
        }
        row->max_rel_err = scale_r > 0 ? d_max / scale_r : d_max;
        row->correct     = !s && row->max_rel_err <= MV_TOL;
    }
    /* time */
    if (!s && row->correct) {
        uint32_t per_pass = copies < 32 ? 32 : copies;
        int      n        = o->reps > 0 ? (o->reps < 64 ? o->reps : 64) : 7;
        double   t[64];
        for (int i = -1; i < n && !s; i++) {
            double ns;
            if ((s = wgf__bench_time_pass(ctx, tm, pl, bg, copies, per_pass, grid, &ns))) s = mv_fail(ctx, err, s, "timed pass");
            else if (i >= 0) t[i] = ns / per_pass;
        }
        if (!s) {
            double ns  = wgf__bench_median(t, n);
            row->us    = ns * 1e-3;
            row->gbps  = (double)(wbytes + (uint64_t)KP * 4 + (uint64_t)N * 4) / ns;
        }
    }
    for (uint32_t i = 0; bg && i < copies; i++) wgf_bind_group_free(bg[i]);
    free(bg);
    wgf_buffer_free(wb), wgf_buffer_free(xb), wgf_buffer_free(yb), wgf_buffer_free(w0);
    wgf_prelude_free(&p);
    free(wh), free(xh), free(ref), free(yh);
    return s;
}

enum wgf_status wgf_bench_matvec(wgf_ctx *ctx, const struct wgf_matvec_opts *o, struct wgf_matvec_report *out,
                                 struct wgf_err *err)
{
    memset(out, 0, sizeof *out);
    const struct wgf_adapter_desc *ad = wgf_ctx_adapter(ctx);
    snprintf(out->adapter, sizeof out->adapter, "%s", ad->name);
    bool gpu_adapter = strcmp(ad->type, "cpu") != 0;
    wgf_timer *tm = NULL;
    if (wgf_timer_create(ctx, "bench_matvec", 1, &tm) != WGF_OK) tm = NULL;
    out->gpu_timed = tm != NULL;
    uint32_t        sgs;
    enum wgf_status s = wgf_ctx_subgroup_size(ctx, &sgs);
    if (!s) s = mv_copy_bw(ctx, tm, gpu_adapter, o->reps > 0 ? o->reps : 7, &out->copy_gbps, err);
    else s = mv_fail(ctx, err, s, "subgroup probe");
    const char *models = o->models ? o->models : "qwen2.5-0.5b,qwen2.5-1.5b,phi-3-mini";
    char        list[256];
    snprintf(list, sizeof list, "%s", models);
    int cap = 0;
    for (char *save = NULL, *m = strtok_r(list, ",", &save); m && !s; m = strtok_r(NULL, ",", &save)) {
        int                            ns;
        const struct wgf_matvec_shape *sh = wgf_matvec_shapes(m, &ns);
        if (!sh) {
            s = wgf_fail(err, WGF_ERR_ARG, "bench matvec: unknown model '%s' (qwen2.5-0.5b, qwen2.5-1.5b, phi-3-mini, toy)", m);
            break;
        }
        for (int i = 0; i < ns && !s; i++)
            for (int f16 = 1; f16 >= 0 && !s; f16--) {
                if (o->roles && !wgf__list_has(o->roles, sh[i].name)) continue;
                uint32_t              kc  = ((sh[i].cols + 15) / 16 * 16) / (f16 ? 8u : 4u);
                struct wgf_matvec_cfg def = wgf_matvec_cfg_pick(kc, 1, 8, 0);
                struct mv_case        cases[8];
                int                   nc = 0;
                cases[nc++] = (struct mv_case){&sh[i], f16 != 0, def, sgs, 0};
                if (o->all_variants) {
                    if (def.tpr > 8) cases[nc++] = (struct mv_case){&sh[i], f16 != 0, wgf_matvec_cfg_pick(kc, 1, 8, def.tpr / 2), sgs, 0};
                    if (def.tpr < 256) cases[nc++] = (struct mv_case){&sh[i], f16 != 0, wgf_matvec_cfg_pick(kc, 1, 8, def.tpr * 2), sgs, 0};
                    cases[nc++] = (struct mv_case){&sh[i], f16 != 0, wgf_matvec_cfg_pick(kc, 2, 8, 0), sgs, 0};
                    cases[nc++] = (struct mv_case){&sh[i], f16 != 0, wgf_matvec_cfg_pick(kc, 4, 16, 0), sgs, 0};
                    cases[nc++] = (struct mv_case){&sh[i], f16 != 0, def, sgs, 1};
                    if (sgs) cases[nc++] = (struct mv_case){&sh[i], f16 != 0, def, 0, 0};
                }
                for (int k = 0; k < nc && !s; k++) {
                    if (o->stop && o->stop(o->user)) {
                        s = WGF_ERR_INTERRUPTED;
                        break;
                    }
                    if (cases[k].cfg.nit > 32) continue; /* too many registers: not a variant */
                    if (out->n == cap) {
                        cap                        = cap ? 2 * cap : 32;
                        struct wgf_matvec_row *nr = realloc(out->rows, (size_t)cap * sizeof *nr);
                        if (!nr) {
                            s = wgf_fail(err, WGF_ERR_NOMEM, "bench matvec: results");
                            break;
                        }
                        out->rows = nr;
                    }
                    struct wgf_matvec_row *row = &out->rows[out->n];
                    s = mv_run_case(ctx, tm, &cases[k], o, gpu_adapter, row, err);
                    if (!s) {
                        row->pct_copy = out->copy_gbps > 0 ? 100.0 * row->gbps / out->copy_gbps : 0;
                        out->n++;
                    }
                }
            }
    }
    wgf_timer_free(tm);
    if (s == WGF_ERR_INTERRUPTED) wgf_fail(err, s, "bench matvec: interrupted after %d cases", out->n);
    return s;
}

/* ---- rendering ---------------------------------------------------------------------------- */

struct mv_sb {
    char  *s;
    size_t len, cap;
    bool   oom;
};
static void sb_printf(struct mv_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void sb_printf(struct mv_sb *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = b->s ? vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap) : -1;
        va_end(ap);
        if (n >= 0 && (size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? 2 * b->cap : 4096;
        char  *p   = realloc(b->s, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->s   = p;
        b->cap = cap;
    }
}

enum wgf_status wgf_matvec_table(const struct wgf_matvec_report *r, char **out, struct wgf_err *err)
{
    struct mv_sb b = {0};
    sb_printf(&b, "matvec bandwidth on %s: copy kernel %.0f GB/s (read + write); %s\n", r->adapter, r->copy_gbps,
              r->gpu_timed ? "GPU timestamps" : "wall clock (no timestamp-query)");
    sb_printf(&b, "%-13s %-12s %14s %-5s %4s %3s %3s %-3s %10s %9s %8s  %s\n", "model", "role", "rows x cols", "dtype",
              "tpr", "rpg", "pad", "red", "us/disp", "GB/s", "% copy", "check");
    for (int i = 0; i < r->n; i++) {
        const struct wgf_matvec_row *x = &r->rows[i];
        char                         dims[32];
        snprintf(dims, sizeof dims, "%u x %u", x->shape.rows, x->shape.cols);
        sb_printf(&b, "%-13s %-12s %14s %-5s %4u %3u %3u %-3s ", x->shape.model, x->shape.name, dims,
                  x->f16 ? "f16" : "f32", x->tpr, x->rpg, x->pad, x->subgroups ? "sg" : "wg");
        if (x->skipped) sb_printf(&b, "%10s %9s %8s  %s\n", "-", "-", "-", "skipped: above one binding");
        else if (!x->correct) sb_printf(&b, "%10s %9s %8s  WRONG (max rel err %.2g)\n", "-", "-", "-", x->max_rel_err);
        else sb_printf(&b, "%10.2f %9.0f %7.1f%%  ok %.1g\n", x->us, x->gbps, x->pct_copy, x->max_rel_err);
    }
    if (b.oom) {
        free(b.s);
        return wgf_fail(err, WGF_ERR_NOMEM, "bench matvec: table");
    }
    *out = b.s;
    return WGF_OK;
}

enum wgf_status wgf_matvec_json(const struct wgf_matvec_report *r, char **out, struct wgf_err *err)
{
    struct mv_sb b = {0};
    sb_printf(&b, "{\"bench\": \"matvec\", \"adapter\": \"%s\", \"copy_gbps\": %.1f, \"gpu_timed\": %s, \"rows\": [",
              r->adapter, r->copy_gbps, r->gpu_timed ? "true" : "false");
    for (int i = 0; i < r->n; i++) {
        const struct wgf_matvec_row *x = &r->rows[i];
        sb_printf(&b,
                  "%s\n  {\"model\": \"%s\", \"role\": \"%s\", \"rows\": %u, \"cols\": %u, \"dtype\": \"%s\", \"tpr\": %u, \"rpg\": %u, "
                  "\"pad\": %u, \"subgroups\": %s, \"skipped\": %s, \"correct\": %s, \"max_rel_err\": %.3g, \"us\": %.3f, "
                  "\"gbps\": %.1f, \"pct_copy\": %.2f}",
                  i ? "," : "", x->shape.model, x->shape.name, x->shape.rows, x->shape.cols, x->f16 ? "f16" : "f32",
                  x->tpr, x->rpg, x->pad, x->subgroups ? "true" : "false", x->skipped ? "true" : "false",
                  x->correct ? "true" : "false", isfinite(x->max_rel_err) ? x->max_rel_err : -1.0, x->us, x->gbps,
                  x->pct_copy);
    }
    sb_printf(&b, "\n]}\n");
    if (b.oom) {
        free(b.s);
        return wgf_fail(err, WGF_ERR_NOMEM, "bench matvec: json");
    }
    *out = b.s;
    return WGF_OK;
}
