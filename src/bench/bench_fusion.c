/* wgfuse bench — controlled fusion experiments: the same math as several elementary
 * dispatches and as fewer fused ones, on the caller's device.
 *
 * Protocol (docs/methodology.md), per experiment:
 *   1. inputs from a seeded RNG, never zero; every output buffer has WGF__PAD poisoned
 *      floats past its end and is bound whole, so a kernel writing past its output shows;
 *   2. check: each variant runs once and its output is compared with the C reference
 *      (fusion_ref.c) — max |err| <= tol * max |ref|; the poison must be intact. A variant
 *      that fails gets correct = false and is NOT timed;
 *   3. time: `warmup` untimed repetitions, then `reps` repetitions, each a run of `iters`
 *      iterations and a run of 2 x `iters`, recorded the way a decode step would be (the
 *      experiment says how); the sample is the marginal cost per iteration,
 *      (t(2n) - t(n)) / n — the sequential method of the dispatch bench. Speedup = median of
 *      variant 0 (the unfused baseline) / median of the variant.
 * All GPU objects are created before the timed loop; the loop only records and submits
 * (except the pooling experiment's fresh_buffers variant, whose point is to create them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/constants.h" /* WGF_WG_SIZE, WGF_MATVEC_ROWS, WGF_MLP_CHUNK, WGF_EW_* */
#include "kernels/ids.h"
#include "util/rng.h"
#include "wgfuse/bench.h"

#define WGF__PAD     16u          /* poisoned elements past every checked output          */
#define WGF__POISON  0x7fbadbadu  /* a NaN bit pattern                                     */
#define WGF__MAX_OBJ 40
#define WGF__MAX_STEPS 8

static const char *const wgf__exp_names[WGF_FUSION_COUNT] = {"rmsnorm", "mlp",      "kv_proj", "argmax",
                                                             "softmax", "batching", "pooling"};
const char *wgf_fusion_exp_name(enum wgf_fusion_exp e)
{
    return (unsigned)e < WGF_FUSION_COUNT ? wgf__exp_names[e] : "?";
}

enum wgf_status wgf_bench_size_get(const char *name, struct wgf_bench_size *out, struct wgf_err *err)
{
    memset(out, 0, sizeof *out);
    if (name && !strcmp(name, "qwen05b")) {
        /* Qwen/Qwen2.5-0.5B config.json: hidden_size 896, intermediate_size 4864,
         * num_attention_heads 14, num_key_value_heads 2, head_dim 896/14 = 64,
         * vocab_size 151936, rms_norm_eps 1e-6. softmax_len: a 1024-token context. */
        *out = (struct wgf_bench_size){"qwen05b", 896, 4864, 14, 2, 64, 151936, 1024, 1e-6f};
        return WGF_OK;
    }
    if (name && !strcmp(name, "toy")) {
        /* every width 256 or 2x256; the real vocabulary (600 KiB of logits is cheap even
         * on a CPU adapter) */
        *out = (struct wgf_bench_size){"toy", 256, 512, 4, 2, 64, 151936, 256, 1e-6f};
        return WGF_OK;
    }
    return wgf_fail(err, WGF_ERR_ARG, "bench fusion: unknown size '%s' (toy, qwen05b)", name ? name : "(null)");
}

struct wgf_fusion_opts wgf_fusion_opts_default(const struct wgf_bench_size *size, bool quick)
{
    struct wgf_fusion_opts o;
    memset(&o, 0, sizeof o);
    o.size   = *size;
    o.reps   = quick ? 7 : 15;
    o.warmup = quick ? 2 : 3;
    o.seed   = 20261130;
    return o;
}

/* ---- experiment state: every object is registered and freed together -------------------- */
struct wgf__fb {
    wgf_ctx                      *ctx;
    const struct wgf_fusion_opts *o;
    struct wgf_err               *err;
    const char                   *exp;
    struct wgf_rng                rng;
    wgf_timer                    *timer; /* one pass; NULL without timestamp-query       */
    wgf_buffer                   *bufs[WGF__MAX_OBJ];
    int                           n_bufs;
    wgf_bind_group               *bgs[WGF__MAX_OBJ];
    int                           n_bgs;
    float                        *host[WGF__MAX_OBJ]; /* host copies (inputs, references)  */
    int                           n_host;
};

static void wgf__fb_free(struct wgf__fb *fb)
{
    for (int i = 0; i < fb->n_bgs; i++) wgf_bind_group_free(fb->bgs[i]);
    for (int i = 0; i < fb->n_bufs; i++) wgf_buffer_free(fb->bufs[i]);
    for (int i = 0; i < fb->n_host; i++) free(fb->host[i]);
    fb->n_bgs = fb->n_bufs = fb->n_host = 0;
}

/* A runtime call failed: "bench fusion <exp>: <what>: <the context's message>". */
static enum wgf_status wgf__fb_gpu_fail(struct wgf__fb *fb, enum wgf_status s, const char *what)
{
    return wgf_ctx_err(fb->ctx, fb->err, s, "bench fusion %s: %s", fb->exp, what);
}

static float *wgf__fb_host(struct wgf__fb *fb, size_t n)
{
    if (fb->n_host == WGF__MAX_OBJ) return NULL;
    float *p = calloc(n ? n : 1, sizeof *p);
    if (p) fb->host[fb->n_host++] = p;
    return p;
}

/* A storage buffer of n floats plus WGF__PAD of slack (poisoned when it is an output). */
static enum wgf_status wgf__fb_buffer(struct wgf__fb *fb, const char *field, size_t n, wgf_buffer **out)
{
    if (fb->n_bufs == WGF__MAX_OBJ) return wgf_fail(fb->err, WGF_ERR_INTERNAL, "bench fusion: too many buffers");
    char label[96];
    snprintf(label, sizeof label, "bench_%s.%s", fb->exp, field);
    enum wgf_status s = wgf_buffer_create(fb->ctx, label, (uint64_t)(n + WGF__PAD) * 4, WGF_BUF_STORAGE, out);
    if (s) return wgf__fb_gpu_fail(fb, s, label);
    fb->bufs[fb->n_bufs++] = *out;
    return WGF_OK;
}

/* Fill host[0..n) uniformly in [lo, hi), never exactly 0, and upload it to buf. */
static enum wgf_status wgf__fb_random(struct wgf__fb *fb, wgf_buffer *buf, float *host, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) {
        float v = wgf_rng_uniform(&fb->rng, lo, hi);
        host[i] = v != 0.0f ? v : hi * 0.5f;
    }
    enum wgf_status s = wgf_buffer_write(fb->ctx, buf, 0, host, n * sizeof *host);
    return s ? wgf__fb_gpu_fail(fb, s, wgf_buffer_label(buf)) : WGF_OK;
}

static enum wgf_status wgf__fb_pipe(struct wgf__fb *fb, enum wgf_kernel kernel, const char *label,
                                    const struct wgf_constant *c, int nc, wgf_pipeline **out)
{
    const char *role = wgf__kernel_role(kernel);
    const char *src  = fb->o->kernel_source ? fb->o->kernel_source(fb->o->kernel_user, role) : wgf__kernel_wgsl(kernel);
    if (!src) return wgf_fail(fb->err, WGF_ERR_INTERNAL, "bench fusion %s: kernel %s not embedded", fb->exp, role);
    struct wgf_pipeline_desc d = {.label = label, .wgsl = src, .constants = c, .n_constants = nc};
    enum wgf_status          s = wgf_pipeline_get(fb->ctx, &d, out);
    return s ? wgf__fb_gpu_fail(fb, s, label) : WGF_OK;
}

/* Bind ranges (size 0 = to the buffer's end: outputs are bound whole, poison included). */
static enum wgf_status wgf__fb_bind(struct wgf__fb *fb, wgf_pipeline *p, const struct wgf_binding *b, int n,
                                    wgf_bind_group **out)
{
    if (fb->n_bgs == WGF__MAX_OBJ) return wgf_fail(fb->err, WGF_ERR_INTERNAL, "bench fusion: too many bind groups");
    enum wgf_status s = wgf_bind_group_create_ranges(fb->ctx, p, b, n, out);
    if (s) return wgf__fb_gpu_fail(fb, s, wgf_pipeline_label(p));
    fb->bgs[fb->n_bgs++] = *out;
    return WGF_OK;
}

/* Shorthand: bind whole buffers. */
static enum wgf_status wgf__fb_bind_bufs(struct wgf__fb *fb, wgf_pipeline *p, wgf_buffer *const *bufs, int n,
                                         wgf_bind_group **out)
{
    struct wgf_binding b[8];
    for (int i = 0; i < n && i < 8; i++) b[i] = (struct wgf_binding){bufs[i], 0, 0};
    return wgf__fb_bind(fb, p, b, n, out);
}

static uint32_t wgf__groups(uint32_t n, uint32_t per) { return (n + per - 1) / per; }

/* ---- plans: a variant as an ordered list of dispatches ------------------------------------ */
struct wgf__step {
    wgf_pipeline   *p;
    wgf_bind_group *bg;
    uint32_t        groups;
};
struct wgf__plan {
    const char      *name;
    int              n_steps;
    struct wgf__step s[WGF__MAX_STEPS];
    int              n_out;           /* checked outputs                                   */
    wgf_buffer      *out[2];
    uint32_t         out_n[2];        /* floats                                            */
    const float     *want[2];         /* reference values                                  */
    double           tol;             /* relative to max |want|                            */
};

/* Append one dispatch of p over `groups` workgroups to pl, its bind group made from the
 * ranges b[0..n) (wgf__plan_step) or the whole buffers bufs[0..n) (wgf__plan_step_bufs) and
 * registered with fb (freed with it). */
static void wgf__plan_add(struct wgf__plan *pl, wgf_pipeline *p, wgf_bind_group *bg, uint32_t groups)
{
    WGF_ASSERT(pl->n_steps < WGF__MAX_STEPS);
    pl->s[pl->n_steps++] = (struct wgf__step){p, bg, groups};
}
static enum wgf_status wgf__plan_step(struct wgf__fb *fb, struct wgf__plan *pl, wgf_pipeline *p,
                                      const struct wgf_binding *b, int n, uint32_t groups)
{
    wgf_bind_group *bg;
    enum wgf_status s = wgf__fb_bind(fb, p, b, n, &bg);
    if (!s) wgf__plan_add(pl, p, bg, groups);
    return s;
}
static enum wgf_status wgf__plan_step_bufs(struct wgf__fb *fb, struct wgf__plan *pl, wgf_pipeline *p,
                                           wgf_buffer *const *bufs, int n, uint32_t groups)
{
    wgf_bind_group *bg;
    enum wgf_status s = wgf__fb_bind_bufs(fb, p, bufs, n, &bg);
    if (!s) wgf__plan_add(pl, p, bg, groups);
    return s;
}

static enum wgf_status wgf__plan_record(wgf_recorder *r, const struct wgf__plan *pl)
{
    enum wgf_status s = WGF_OK;
    for (int i = 0; i < pl->n_steps && !s; i++) s = wgf_recorder_dispatch(r, pl->s[i].p, pl->s[i].bg, pl->s[i].groups, 1, 1);
    return s;
}

/* iters iterations of the plan in one pass, one submit, one wait: a decode step's shape. */
static enum wgf_status wgf__plan_run(wgf_ctx *ctx, const struct wgf__plan *pl, int iters, wgf_timer *timer)
{
    wgf_recorder   *r = NULL;
    enum wgf_status s = wgf_recorder_begin(ctx, pl->name, timer, &r);
    if (s) return s;
    for (int i = 0; i < iters && !s; i++) s = wgf__plan_record(r, pl);
    if (s) {
        wgf_recorder_abandon(r);
        return s;
    }
    if ((s = wgf_recorder_submit(r))) return s;
    return wgf_ctx_wait(ctx);
}

/* Compare got[0..n) with want and check got[n..n+PAD) still holds the poison. */
static void wgf__compare(struct wgf_fusion_variant *v, const char *what, const float *got, const float *want,
                         uint32_t n, double tol)
{
    double err = 0, scale = 0;
    for (uint32_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)want[i]);
        if (!(d <= err)) err = isnan(d) ? INFINITY : d; /* NaN-safe max */
        if (fabs(want[i]) > scale) scale = fabs(want[i]);
    }
    if (err > v->max_abs_err) v->max_abs_err = err;
    v->tol = tol * scale;
    if (!(err <= tol * scale)) {
        v->correct = false;
        snprintf(v->detail, sizeof v->detail, "%s: max|err| %.3g > %.1e x max|ref| %.3g", what, err, tol, scale);
        return;
    }
    for (uint32_t i = n; i < n + WGF__PAD; i++) {
        uint32_t bits;
        memcpy(&bits, got + i, 4);
        if (bits != WGF__POISON) {
            v->correct = false;
            snprintf(v->detail, sizeof v->detail, "%s: wrote past the output (element %u of %u)", what, i, n);
            return;
        }
    }
}

/* Read a plan's outputs and compare them with the references into v (no run). */
static enum wgf_status wgf__plan_verify(struct wgf__fb *fb, const struct wgf__plan *pl, struct wgf_fusion_variant *v)
{
    enum wgf_status s = WGF_OK;
    for (int k = 0; k < pl->n_out && !s && v->correct; k++) {
        float *got = malloc(sizeof *got * (pl->out_n[k] + WGF__PAD));
        if (!got) return wgf_fail(fb->err, WGF_ERR_NOMEM, "bench fusion %s: readback", fb->exp);
        s = wgf_buffer_read(fb->ctx, pl->out[k], 0, got, sizeof *got * (pl->out_n[k] + WGF__PAD));
        if (!s) wgf__compare(v, wgf_buffer_label(pl->out[k]), got, pl->want[k], pl->out_n[k], pl->tol);
        free(got);
    }
    return s;
}

/* Poison the outputs, run the plan once, compare every output with its reference. */
static enum wgf_status wgf__plan_check(struct wgf__fb *fb, const struct wgf__plan *pl, struct wgf_fusion_variant *v)
{
    snprintf(v->name, sizeof v->name, "%s", pl->name);
    v->dispatches = pl->n_steps;
    v->submits    = 0;
    v->correct    = true;
    enum wgf_status s = WGF_OK;
    for (int k = 0; k < pl->n_out && !s; k++) s = wgf_buffer_fill_u32(fb->ctx, pl->out[k], WGF__POISON);
    if (!s) s = wgf__plan_run(fb->ctx, pl, 1, NULL);
    if (!s) s = wgf__plan_verify(fb, pl, v);
    if (s) return wgf__fb_gpu_fail(fb, s, pl->name);
    if (v->correct)
        snprintf(v->detail, sizeof v->detail, "max|err| %.3g <= %.3g (%.0e x max|ref|)", v->max_abs_err, v->tol, pl->tol);
    return WGF_OK;
}

/* ---- timing: any variant as a "run `iters` iterations" function --------------------------- */
typedef enum wgf_status (*wgf__run_fn)(struct wgf__fb *fb, const void *arg, int iters);

static enum wgf_status wgf__run_plan_fn(struct wgf__fb *fb, const void *arg, int iters)
{
    if (fb->timer) wgf_timer_reset(fb->timer);
    return wgf__plan_run(fb->ctx, arg, iters, fb->timer);
}

/* One timed run of n iterations: poison the verified outputs, run, read the pass's GPU
 * time (one-pass plans), then verify after the clock stopped. *wrong set on a mismatch. */
static enum wgf_status wgf__time_once(struct wgf__fb *fb, wgf__run_fn fn, const void *arg, int n,
                                      const struct wgf__plan *verify, double *wall_us, double *gpu_us,
                                      struct wgf_fusion_variant *chk)
{
    enum wgf_status s = WGF_OK;
    for (int k = 0; verify && k < verify->n_out && !s; k++) s = wgf_buffer_fill_u32(fb->ctx, verify->out[k], WGF__POISON);
    if (s) return s;
    uint64_t t0 = wgf_now_ns();
    s           = fn(fb, arg, n);
    *wall_us    = (double)(wgf_now_ns() - t0) / 1e3;
    *gpu_us     = NAN;
    if (!s && fb->timer && fn == wgf__run_plan_fn) {
        double   ns  = 0;
        uint32_t got = 0;
        s            = wgf_timer_read(fb->ctx, fb->timer, &ns, 1, &got);
        if (!s && got == 1) *gpu_us = ns / 1e3;
    }
    if (!s && verify) s = wgf__plan_verify(fb, verify, chk);
    return s;
}

/* Time `fn` by the sequential method: each repetition runs n and then 2n iterations, and its
 * sample is the marginal cost (t(2n) - t(n)) / n, so the once-per-run submit + wait does not
 * leak into the per-iteration cost (it would favour whichever variant is slower per
 * iteration). The wall time of the 2n run / 2n is kept as us_wall. With `verify`, every run
 * starts from poisoned outputs and is compared with the reference after the clock stops: a
 * kernel that fails only sometimes (a race) cannot hide among the timings. */
static enum wgf_status wgf__time(struct wgf__fb *fb, wgf__run_fn fn, const void *arg, int iters,
                                 struct wgf_fusion_variant *v, const struct wgf__plan *verify)
{
    const struct wgf_fusion_opts *o = fb->o;
    if (o->check_only || !v->correct) return WGF_OK;
    if (o->stop && o->stop(o->progress_user))
        return wgf_fail(fb->err, WGF_ERR_INTERRUPTED, "bench fusion %s: stopped before %s (incomplete)", fb->exp, v->name);
    if (o->progress) {
        char line[128];
        snprintf(line, sizeof line, "fusion %s: %s", fb->exp, v->name);
        o->progress(o->progress_user, line);
    }
    double *t = malloc(sizeof *t * (size_t)o->reps * 3);
    if (!t) return wgf_fail(fb->err, WGF_ERR_NOMEM, "bench fusion: samples");
    double         *wall = t + o->reps, *g = wall + o->reps;
    enum wgf_status s     = WGF_OK;
    int             n_gpu = 0;
    for (int rep = -o->warmup; rep < o->reps && !s; rep++) {
        double                    w1, w2, g1, g2;
        struct wgf_fusion_variant chk = {.correct = true};
        s = wgf__time_once(fb, fn, arg, iters, verify, &w1, &g1, &chk);
        if (!s && chk.correct) s = wgf__time_once(fb, fn, arg, 2 * iters, verify, &w2, &g2, &chk);
        if (s) break;
        if (!chk.correct) {
            v->correct = false;
            snprintf(v->detail, sizeof v->detail, "run %d of timing: %.130s", rep, chk.detail);
            free(t);
            return WGF_OK;
        }
        if (rep < 0) continue;
        t[rep]    = (w2 - w1) / iters;
        wall[rep] = w2 / (2 * iters);
        if (isfinite(g1) && isfinite(g2)) g[n_gpu++] = (g2 - g1) / iters;
    }
    if (s) s = wgf__fb_gpu_fail(fb, s, v->name);
    if (!s) s = wgf_stats_compute(t, o->reps, &v->us, fb->err);
    if (!s) s = wgf_stats_compute(wall, o->reps, &v->us_wall, fb->err);
    if (!s && n_gpu >= 1) {
        s          = wgf_stats_compute(g, n_gpu, &v->gpu_us, fb->err);
        v->has_gpu = s == WGF_OK;
    }
    free(t);
    return s;
}

static int wgf__iters(const struct wgf__fb *fb, int dflt) { return fb->o->iters > 0 ? fb->o->iters : dflt; }

/* The protocol's two phases for an experiment whose variants are plans: check every variant
 * against the reference (res->n_variants counts the checked ones), then time the correct
 * ones, each verified again after every timed run. */
static enum wgf_status wgf__check_then_time(struct wgf__fb *fb, struct wgf_fusion_result *res,
                                           const struct wgf__plan *const *pl, int n)
{
    enum wgf_status s;
    for (int i = 0; i < n; i++) {
        if ((s = wgf__plan_check(fb, pl[i], &res->v[i]))) return s;
        res->n_variants = i + 1;
    }
    for (int i = 0; i < n; i++)
        if ((s = wgf__time(fb, wgf__run_plan_fn, pl[i], res->iters, &res->v[i], pl[i]))) return s;
    return WGF_OK;
}

/* ---- RMSNorm: 6 elementary dispatches vs 1 ----------------------------------------------- */
static enum wgf_status wgf__exp_rmsnorm(struct wgf__fb *fb, struct wgf_fusion_result *res)
{
    const uint32_t H   = fb->o->size.hidden;
    const float    eps = fb->o->size.eps;
    enum wgf_status s;
    wgf_buffer *x, *w, *sq, *ms, *mse, *rs, *xn, *y6, *y1;
    float      *hx = wgf__fb_host(fb, H), *hw = wgf__fb_host(fb, H), *ref = wgf__fb_host(fb, H);
    if (!hx || !hw || !ref) return wgf_fail(fb->err, WGF_ERR_NOMEM, "bench fusion rmsnorm: host");
    if ((s = wgf__fb_buffer(fb, "x", H, &x)) || (s = wgf__fb_buffer(fb, "w", H, &w)) ||
        (s = wgf__fb_buffer(fb, "sq", H, &sq)) || (s = wgf__fb_buffer(fb, "mean", 1, &ms)) ||
        (s = wgf__fb_buffer(fb, "mean_eps", 1, &mse)) || (s = wgf__fb_buffer(fb, "rsqrt", 1, &rs)) ||
        (s = wgf__fb_buffer(fb, "x_scaled", H, &xn)) || (s = wgf__fb_buffer(fb, "y_unfused", H, &y6)) ||
        (s = wgf__fb_buffer(fb, "y_fused", H, &y1)))
        return s;
    if ((s = wgf__fb_random(fb, x, hx, H, -2.0f, 2.0f)) || (s = wgf__fb_random(fb, w, hw, H, 0.5f, 1.5f))) return s;
    wgf_ref_rmsnorm(ref, hx, hw, H, eps);

    /* unfused: square, mean, add eps, rsqrt, scale, weight */
    static const struct {
        uint32_t    op;
        const char *label;
        bool        scalar;
    } steps[6] = {{WGF_EW_SQUARE, "elementwise_square", false},  {WGF_EW_MEAN, "elementwise_mean", true},
                  {WGF_EW_ADD_EPS, "elementwise_add_eps", true}, {WGF_EW_RSQRT, "elementwise_rsqrt", true},
                  {WGF_EW_MUL_SCALAR, "elementwise_mul_scalar", false}, {WGF_EW_MUL, "elementwise_mul", false}};
    wgf_buffer *io[6][3] = {{sq, x, x}, {ms, sq, sq}, {mse, ms, ms}, {rs, mse, mse}, {xn, x, rs}, {y6, xn, w}};
    struct wgf__plan un = {.name = "unfused_6", .n_out = 1, .out = {y6}, .out_n = {H}, .want = {ref}, .tol = 1e-4};
    for (int i = 0; i < 6; i++) {
        uint32_t            n = (steps[i].op == WGF_EW_ADD_EPS || steps[i].op == WGF_EW_RSQRT) ? 1 : H;
        struct wgf_constant c[3] = {{"OP", steps[i].op}, {"N", n}, {"EPS", eps}};
        wgf_pipeline       *p;
        if ((s = wgf__fb_pipe(fb, WGF_KERNEL_ELEMENTWISE, steps[i].label, c, 3, &p))) return s;
        if ((s = wgf__plan_step_bufs(fb, &un, p, io[i], 3, steps[i].scalar ? 1 : wgf__groups(H, WGF_WG_SIZE)))) return s;
    }
    struct wgf__plan    fu = {.name = "fused_1", .n_out = 1, .out = {y1}, .out_n = {H}, .want = {ref}, .tol = 1e-4};
    struct wgf_constant c[2] = {{"H", H}, {"EPS", eps}};
    wgf_pipeline       *p;
    wgf_buffer         *b3[3] = {y1, x, w};
    if ((s = wgf__fb_pipe(fb, WGF_KERNEL_RMSNORM, "rmsnorm_f32", c, 2, &p)) ||
        (s = wgf__plan_step_bufs(fb, &fu, p, b3, 3, 1)))
        return s;

    snprintf(res->what, sizeof res->what, "RMSNorm of one row, hidden %u: 6 elementary dispatches vs 1 fused", H);
    res->iters                    = wgf__iters(fb, 64);
    const struct wgf__plan *pl[2] = {&un, &fu};
    return wgf__check_then_time(fb, res, pl, 2);
}

/* matvec.wgsl pipeline for (rows, k, residual) */
static enum wgf_status wgf__matvec(struct wgf__fb *fb, const char *label, uint32_t rows, uint32_t k, int residual,
                                   wgf_pipeline **p)
{
    struct wgf_constant c[3] = {{"N", rows}, {"K", k}, {"RESIDUAL", residual}};
    return wgf__fb_pipe(fb, WGF_KERNEL_MATVEC, label, c, 3, p);
}

/* A binding of `count` floats starting `first` floats into buf; checks the offset alignment. */
static enum wgf_status wgf__range(struct wgf__fb *fb, wgf_buffer *buf, uint64_t first, uint64_t count,
                                  struct wgf_binding *out)
{
    uint32_t align = wgf_ctx_limits(fb->ctx)->min_storage_buffer_offset_alignment;
    if (align && (first * 4) % align)
        return wgf_fail(fb->err, WGF_ERR_LIMIT, "bench fusion %s: offset %llu of %s not a multiple of %u", fb->exp,
                        (unsigned long long)(first * 4), wgf_buffer_label(buf), align);
    *out = (struct wgf_binding){buf, first * 4, count * 4};
    return WGF_OK;
}

/* ---- MLP: 7 dispatches vs 3 vs 1 ---------------------------------------------------------- */
static enum wgf_status wgf__exp_mlp(struct wgf__fb *fb, struct wgf_fusion_result *res)
{
    const uint32_t H = fb->o->size.hidden, I = fb->o->size.intermediate;
    const uint32_t NWG = wgf__groups(I, WGF_MLP_CHUNK); /* mlp_fused.wgsl's workgroups       */
    enum wgf_status s;
    wgf_buffer *x, *wgu, *wd, *g, *u, *sg, *a, *h, *d, *y7, *gu, *h3, *y3, *part, *counter, *y1;
    float *hx = wgf__fb_host(fb, H), *hgu = wgf__fb_host(fb, (size_t)2 * I * H);
    float *hd = wgf__fb_host(fb, (size_t)H * I), *ref = wgf__fb_host(fb, H);
    if (!hx || !hgu || !hd || !ref) return wgf_fail(fb->err, WGF_ERR_NOMEM, "bench fusion mlp: host");
    if ((s = wgf__fb_buffer(fb, "x", H, &x)) || (s = wgf__fb_buffer(fb, "w_gate_up", (size_t)2 * I * H, &wgu)) ||
        (s = wgf__fb_buffer(fb, "w_down", (size_t)H * I, &wd)) || (s = wgf__fb_buffer(fb, "gate", I, &g)) ||
        (s = wgf__fb_buffer(fb, "up", I, &u)) || (s = wgf__fb_buffer(fb, "sigmoid", I, &sg)) ||
        (s = wgf__fb_buffer(fb, "silu", I, &a)) || (s = wgf__fb_buffer(fb, "h", I, &h)) ||
        (s = wgf__fb_buffer(fb, "down", H, &d)) || (s = wgf__fb_buffer(fb, "y_unfused7", H, &y7)) ||
        (s = wgf__fb_buffer(fb, "gate_up", (size_t)2 * I, &gu)) || (s = wgf__fb_buffer(fb, "h3", I, &h3)) ||
        (s = wgf__fb_buffer(fb, "y_tiled3", H, &y3)) || (s = wgf__fb_buffer(fb, "partial", (size_t)NWG * H, &part)) ||
        (s = wgf__fb_buffer(fb, "counter", 1, &counter)) || (s = wgf__fb_buffer(fb, "y_fused1", H, &y1)))
        return s;
    /* weights ~ U(-1, 1) / sqrt(fan_in): activations stay O(1) */
    float sh = 1.0f / sqrtf((float)H), si = 1.0f / sqrtf((float)I);
    if ((s = wgf__fb_random(fb, x, hx, H, -1.0f, 1.0f)) ||
        (s = wgf__fb_random(fb, wgu, hgu, (size_t)2 * I * H, -2 * sh, 2 * sh)) ||
        (s = wgf__fb_random(fb, wd, hd, (size_t)H * I, -2 * si, 2 * si)))
        return s;
    if ((s = wgf_buffer_fill_u32(fb->ctx, counter, 0))) return wgf__fb_gpu_fail(fb, s, "counter");
    wgf_ref_mlp(ref, hx, hgu, hd, H, I);

    wgf_pipeline *mv_i, *mv_h, *mv_2i, *mv_hr, *ew_sig, *ew_mul, *ew_add, *ew_silu, *mega;
    struct wgf_constant c_sig[2] = {{"OP", WGF_EW_SIGMOID}, {"N", I}}, c_mul[2] = {{"OP", WGF_EW_MUL}, {"N", I}};
    struct wgf_constant c_add[2] = {{"OP", WGF_EW_ADD}, {"N", H}}, c_silu[2] = {{"OP", WGF_EW_SILU_MUL}, {"N", I}};
    struct wgf_constant c_mega[2] = {{"H", H}, {"I", I}};
    if ((s = wgf__matvec(fb, "matvec_gate_or_up", I, H, 0, &mv_i)) ||
        (s = wgf__matvec(fb, "matvec_down", H, I, 0, &mv_h)) ||
        (s = wgf__matvec(fb, "matvec_gate_up", 2 * I, H, 0, &mv_2i)) ||
        (s = wgf__matvec(fb, "matvec_down_residual", H, I, 1, &mv_hr)) ||
        (s = wgf__fb_pipe(fb, WGF_KERNEL_ELEMENTWISE, "elementwise_sigmoid", c_sig, 2, &ew_sig)) ||
        (s = wgf__fb_pipe(fb, WGF_KERNEL_ELEMENTWISE, "elementwise_mul", c_mul, 2, &ew_mul)) ||
        (s = wgf__fb_pipe(fb, WGF_KERNEL_ELEMENTWISE, "elementwise_add", c_add, 2, &ew_add)) ||
        (s = wgf__fb_pipe(fb, WGF_KERNEL_ELEMENTWISE, "elementwise_silu_mul", c_silu, 2, &ew_silu)) ||
        (s = wgf__fb_pipe(fb, WGF_KERNEL_MLP_FUSED, "mlp_fused_f32", c_mega, 2, &mega)))
        return s;

    struct wgf_binding wgate, wup;
    if ((s = wgf__range(fb, wgu, 0, (uint64_t)I * H, &wgate)) ||
        (s = wgf__range(fb, wgu, (uint64_t)I * H, (uint64_t)I * H, &wup)))
        return s;
    const uint32_t gI = wgf__groups(I, WGF_WG_SIZE), gH = wgf__groups(H, WGF_WG_SIZE);
    const uint32_t mvI = wgf__groups(I, WGF_MATVEC_ROWS), mvH = wgf__groups(H, WGF_MATVEC_ROWS),
                   mv2I = wgf__groups(2 * I, WGF_MATVEC_ROWS);
#define WHOLE(b) ((struct wgf_binding){(b), 0, 0})

    /* 7: gate, up, sigmoid, silu = gate * sigmoid, h = silu * up, down, residual add */
    struct wgf__plan p7 = {.name = "unfused_7", .n_out = 1, .out = {y7}, .out_n = {H}, .want = {ref}, .tol = 2e-4};
    struct wgf_binding b_gate[4] = {WHOLE(g), WHOLE(x), wgate, WHOLE(x)};
    struct wgf_binding b_up[4]   = {WHOLE(u), WHOLE(x), wup, WHOLE(x)};
    struct wgf_binding b_sig[3]  = {WHOLE(sg), WHOLE(g), WHOLE(g)};
    struct wgf_binding b_silu[3] = {WHOLE(a), WHOLE(g), WHOLE(sg)};
    struct wgf_binding b_h[3]    = {WHOLE(h), WHOLE(a), WHOLE(u)};
    struct wgf_binding b_down[4] = {WHOLE(d), WHOLE(h), WHOLE(wd), WHOLE(h)};
    struct wgf_binding b_add[3]  = {WHOLE(y7), WHOLE(x), WHOLE(d)};
    if ((s = wgf__plan_step(fb, &p7, mv_i, b_gate, 4, mvI))) return s;
    if ((s = wgf__plan_step(fb, &p7, mv_i, b_up, 4, mvI))) return s;
    if ((s = wgf__plan_step(fb, &p7, ew_sig, b_sig, 3, gI))) return s;
    if ((s = wgf__plan_step(fb, &p7, ew_mul, b_silu, 3, gI))) return s;
    if ((s = wgf__plan_step(fb, &p7, ew_mul, b_h, 3, gI))) return s;
    if ((s = wgf__plan_step(fb, &p7, mv_h, b_down, 4, mvH))) return s;
    if ((s = wgf__plan_step(fb, &p7, ew_add, b_add, 3, gH))) return s;

    /* 3: [gate; up] in one matvec, silu * up, down + residual */
    struct wgf__plan   p3 = {.name = "tiled_3", .n_out = 1, .out = {y3}, .out_n = {H}, .want = {ref}, .tol = 2e-4};
    struct wgf_binding b_gu[4] = {WHOLE(gu), WHOLE(x), WHOLE(wgu), WHOLE(x)};
    struct wgf_binding b_sm[3] = {WHOLE(h3), WHOLE(gu), WHOLE(gu)};
    struct wgf_binding b_dr[4] = {WHOLE(y3), WHOLE(h3), WHOLE(wd), WHOLE(x)};
    if ((s = wgf__plan_step(fb, &p3, mv_2i, b_gu, 4, mv2I))) return s;
    if ((s = wgf__plan_step(fb, &p3, ew_silu, b_sm, 3, gI))) return s;
    if ((s = wgf__plan_step(fb, &p3, mv_hr, b_dr, 4, mvH))) return s;

    /* 1: the mega-kernel */
    struct wgf__plan   p1 = {.name = "fused_1", .n_out = 1, .out = {y1}, .out_n = {H}, .want = {ref}, .tol = 2e-4};
    struct wgf_binding b_m[6] = {WHOLE(y1), WHOLE(part), WHOLE(counter), WHOLE(x), WHOLE(wgu), WHOLE(wd)};
    if ((s = wgf__plan_step(fb, &p1, mega, b_m, 6, NWG))) return s;
#undef WHOLE

    snprintf(res->what, sizeof res->what,
             "MLP block y = x + W_down(silu(W_gate x) * W_up x), hidden %u, intermediate %u: 7 vs 3 vs 1 dispatches",
             H, I);
    res->iters                    = wgf__iters(fb, H >= 512 ? 8 : 16);
    const struct wgf__plan *pl[3] = {&p7, &p3, &p1};
    if ((s = wgf__check_then_time(fb, res, pl, 3))) return s;
    /* the mega-kernel re-arms its counter; a second check proves it after the timed runs */
    if (!fb->o->check_only && res->v[2].correct) {
        struct wgf_fusion_variant again = {0};
        if ((s = wgf__plan_check(fb, &p1, &again))) return s;
        if (!again.correct) {
            res->v[2].correct = false;
            snprintf(res->v[2].detail, sizeof res->v[2].detail, "after timing: %.140s", again.detail);
        }
    }
    return WGF_OK;
}

/* ---- K and V projections: 2 matvecs vs 1 over [W_k; W_v] --------------------------------- */
static enum wgf_status wgf__exp_kv(struct wgf__fb *fb, struct wgf_fusion_result *res)
{
    const uint32_t H = fb->o->size.hidden, KV = fb->o->size.n_kv_heads * fb->o->size.head_dim;
    enum wgf_status s;
    wgf_buffer *x, *wkv, *k, *v, *kv;
    float *hx = wgf__fb_host(fb, H), *hw = wgf__fb_host(fb, (size_t)2 * KV * H), *ref = wgf__fb_host(fb, 2 * KV);
    if (!hx || !hw || !ref) return wgf_fail(fb->err, WGF_ERR_NOMEM, "bench fusion kv: host");
    if ((s = wgf__fb_buffer(fb, "x", H, &x)) || (s = wgf__fb_buffer(fb, "w_kv", (size_t)2 * KV * H, &wkv)) ||
        (s = wgf__fb_buffer(fb, "k", KV, &k)) || (s = wgf__fb_buffer(fb, "v", KV, &v)) ||
        (s = wgf__fb_buffer(fb, "kv", 2 * KV, &kv)))
        return s;
    float sh = 1.0f / sqrtf((float)H);
    if ((s = wgf__fb_random(fb, x, hx, H, -1.0f, 1.0f)) ||
        (s = wgf__fb_random(fb, wkv, hw, (size_t)2 * KV * H, -2 * sh, 2 * sh)))
        return s;
    wgf_ref_matvec(ref, hx, hw, NULL, 2 * KV, H);

    wgf_pipeline *p1, *p2;
    if ((s = wgf__matvec(fb, "matvec_k_or_v", KV, H, 0, &p1)) || (s = wgf__matvec(fb, "matvec_kv", 2 * KV, H, 0, &p2)))
        return s;
    struct wgf_binding wk, wv;
    if ((s = wgf__range(fb, wkv, 0, (uint64_t)KV * H, &wk)) || (s = wgf__range(fb, wkv, (uint64_t)KV * H, (uint64_t)KV * H, &wv)))
        return s;
    struct wgf__plan   un = {.name = "unfused_2", .n_out = 2, .out = {k, v}, .out_n = {KV, KV}, .want = {ref, ref + KV},
                             .tol = 1e-4};
    struct wgf_binding bk[4] = {{k, 0, 0}, {x, 0, 0}, wk, {x, 0, 0}}, bv[4] = {{v, 0, 0}, {x, 0, 0}, wv, {x, 0, 0}};
    if ((s = wgf__plan_step(fb, &un, p1, bk, 4, wgf__groups(KV, WGF_MATVEC_ROWS)))) return s;
    if ((s = wgf__plan_step(fb, &un, p1, bv, 4, wgf__groups(KV, WGF_MATVEC_ROWS)))) return s;
    struct wgf__plan fu = {.name = "fused_1", .n_out = 1, .out = {kv}, .out_n = {2 * KV}, .want = {ref}, .tol = 1e-4};
    wgf_buffer      *bf[4] = {kv, x, wkv, x};
    if ((s = wgf__plan_step_bufs(fb, &fu, p2, bf, 4, wgf__groups(2 * KV, WGF_MATVEC_ROWS)))) return s;

    snprintf(res->what, sizeof res->what, "K and V projections, hidden %u -> 2 x %u (%u KV heads x %u): 2 vs 1", H,
             KV, fb->o->size.n_kv_heads, fb->o->size.head_dim);
    res->iters                    = wgf__iters(fb, 32);
    const struct wgf__plan *pl[2] = {&un, &fu};
    return wgf__check_then_time(fb, res, pl, 2);
}

/* ---- softmax: one thread per row vs one workgroup per row -------------------------------- */
static enum wgf_status wgf__exp_softmax(struct wgf__fb *fb, struct wgf_fusion_result *res)
{
    const uint32_t R = fb->o->size.n_heads, L = fb->o->size.softmax_len;
    enum wgf_status s;
    wgf_buffer *x, *yt, *yw;
    float *hx = wgf__fb_host(fb, (size_t)R * L), *ref = wgf__fb_host(fb, (size_t)R * L);
    if (!hx || !ref) return wgf_fail(fb->err, WGF_ERR_NOMEM, "bench fusion softmax: host");
    if ((s = wgf__fb_buffer(fb, "scores", (size_t)R * L, &x)) ||
        (s = wgf__fb_buffer(fb, "probs_thread", (size_t)R * L, &yt)) ||
        (s = wgf__fb_buffer(fb, "probs_wg", (size_t)R * L, &yw)))
        return s;
    if ((s = wgf__fb_random(fb, x, hx, (size_t)R * L, -8.0f, 8.0f))) return s;
    wgf_ref_softmax(ref, hx, R, L);
    struct wgf_constant c[2] = {{"R", R}, {"L", L}};
    wgf_pipeline       *pt, *pw;
    wgf_buffer         *b_t[2] = {yt, x}, *b_w[2] = {yw, x};
    struct wgf__plan st = {.name = "one_thread_per_row", .n_out = 1, .out = {yt}, .out_n = {R * L}, .want = {ref},
                           .tol = 1e-4};
    struct wgf__plan sw = {.name = "workgroup_per_row", .n_out = 1, .out = {yw}, .out_n = {R * L}, .want = {ref},
                           .tol = 1e-4};
    if ((s = wgf__fb_pipe(fb, WGF_KERNEL_SOFTMAX_THREAD, "softmax_thread_f32", c, 2, &pt)) ||
        (s = wgf__fb_pipe(fb, WGF_KERNEL_SOFTMAX_WG, "softmax_wg_f32", c, 2, &pw)) ||
        (s = wgf__plan_step_bufs(fb, &st, pt, b_t, 2, wgf__groups(R, WGF_SOFTMAX_THREAD_WG))) ||
        (s = wgf__plan_step_bufs(fb, &sw, pw, b_w, 2, R)))
        return s;
    snprintf(res->what, sizeof res->what, "softmax of %u rows (heads) x %u (context): 1 thread vs 256 per row", R, L);
    res->iters                    = wgf__iters(fb, 32);
    const struct wgf__plan *pl[2] = {&st, &sw};
    return wgf__check_then_time(fb, res, pl, 2);
}

/* ---- greedy token: logits readback + CPU argmax vs device argmax -------------------------- */
struct wgf__argmax {
    wgf_buffer     *logits, *out;
    wgf_pipeline   *p;
    wgf_bind_group *bg;
    float          *host;   /* (V) readback target                                       */
    uint32_t        V;
    uint32_t        last;   /* token chosen by the last iteration                        */
};

static enum wgf_status wgf__argmax_readback(struct wgf__fb *fb, const void *arg, int iters)
{
    struct wgf__argmax *a = (struct wgf__argmax *)arg;
    for (int i = 0; i < iters; i++) {
        enum wgf_status s = wgf_buffer_read(fb->ctx, a->logits, 0, a->host, sizeof(float) * a->V);
        if (s) return s;
        a->last = wgf_ref_argmax(a->host, a->V);
    }
    return WGF_OK;
}

static enum wgf_status wgf__argmax_device(struct wgf__fb *fb, const void *arg, int iters)
{
    struct wgf__argmax *a = (struct wgf__argmax *)arg;
    for (int i = 0; i < iters; i++) {
        wgf_recorder   *r = NULL;
        uint32_t        got[2];
        enum wgf_status s = wgf_recorder_begin(fb->ctx, "argmax", NULL, &r);
        if (s) return s;
        if ((s = wgf_recorder_dispatch(r, a->p, a->bg, 1, 1, 1))) {
            wgf_recorder_abandon(r);
            return s;
        }
        if ((s = wgf_recorder_submit(r)) || (s = wgf_buffer_read(fb->ctx, a->out, 0, got, sizeof got))) return s;
        a->last = got[0];
    }
    return WGF_OK;
}

static enum wgf_status wgf__exp_argmax(struct wgf__fb *fb, struct wgf_fusion_result *res)
{
    const uint32_t     V = fb->o->size.vocab;
    enum wgf_status    s;
    struct wgf__argmax a = {.V = V};
    float             *hl = wgf__fb_host(fb, V);
    a.host                = wgf__fb_host(fb, V);
    if (!hl || !a.host) return wgf_fail(fb->err, WGF_ERR_NOMEM, "bench fusion argmax: host");
    if ((s = wgf__fb_buffer(fb, "logits", V, &a.logits)) || (s = wgf__fb_buffer(fb, "token", 2, &a.out))) return s;
    /* random logits, then one clear winner at a random index away from the ends */
    for (uint32_t i = 0; i < V; i++) hl[i] = wgf_rng_uniform(&fb->rng, -10.0f, 10.0f);
    uint32_t win = V / 3 + wgf_rng_below(&fb->rng, V / 3);
    hl[win]      = 12.5f;
    if ((s = wgf_buffer_write(fb->ctx, a.logits, 0, hl, sizeof(float) * V))) return wgf__fb_gpu_fail(fb, s, "logits");
    uint32_t            ref = wgf_ref_argmax(hl, V);
    struct wgf_constant c   = {"V", V};
    wgf_buffer         *b[2] = {a.out, a.logits};
    if ((s = wgf__fb_pipe(fb, WGF_KERNEL_ARGMAX, "argmax_f32", &c, 1, &a.p)) || (s = wgf__fb_bind_bufs(fb, a.p, b, 2, &a.bg)))
        return s;
    snprintf(res->what, sizeof res->what,
             "greedy token over %u logits: readback (%u KiB) + CPU argmax vs device argmax + 8-byte readback", V,
             V * 4 / 1024);
    res->iters      = wgf__iters(fb, 8);
    res->n_variants = 2;

    /* checks: the CPU path on the read-back logits; the device path with poison past out */
    struct wgf_fusion_variant *rb = &res->v[0], *dv = &res->v[1];
    snprintf(rb->name, sizeof rb->name, "readback_cpu");
    rb->dispatches = 0;
    rb->submits    = 0;
    if ((s = wgf__argmax_readback(fb, &a, 1))) return wgf__fb_gpu_fail(fb, s, "readback");
    rb->correct = a.last == ref;
    snprintf(rb->detail, sizeof rb->detail, "token %u, reference %u", a.last, ref);
    snprintf(dv->name, sizeof dv->name, "device_argmax");
    dv->dispatches = 1;
    dv->submits    = 1;
    uint32_t got[2 + WGF__PAD];
    if ((s = wgf_buffer_fill_u32(fb->ctx, a.out, WGF__POISON)) || (s = wgf__argmax_device(fb, &a, 1)) ||
        (s = wgf_buffer_read(fb->ctx, a.out, 0, got, sizeof got)))
        return wgf__fb_gpu_fail(fb, s, "device argmax");
    uint32_t want_bits;
    memcpy(&want_bits, &hl[ref], 4);
    bool pad_ok = true;
    for (uint32_t i = 2; i < 2 + WGF__PAD; i++) pad_ok &= got[i] == WGF__POISON;
    dv->correct = got[0] == ref && got[1] == want_bits && pad_ok;
    snprintf(dv->detail, sizeof dv->detail, "token %u (max bits %08x), reference %u (%08x)%s", got[0], got[1], ref,
             want_bits, pad_ok ? "" : "; wrote past the output");
    if ((s = wgf__time(fb, wgf__argmax_readback, &a, res->iters, rb, NULL))) return s;
    if ((s = wgf__time(fb, wgf__argmax_device, &a, res->iters, dv, NULL))) return s;
    if (!fb->o->check_only && (a.last != ref)) { /* the timed runs chose the same token */
        dv->correct = false;
        snprintf(dv->detail, sizeof dv->detail, "timed runs chose %u, reference %u", a.last, ref);
    }
    return WGF_OK;
}

/* ---- command batching: D dispatches, k per submit ----------------------------------------- */
struct wgf__batch {
    const struct wgf__plan *pl; /* one rmsnorm_fused dispatch                              */
    int                     d;  /* dispatches per iteration                                */
    int                     k;  /* dispatches per submit                                   */
};

static enum wgf_status wgf__batch_run(struct wgf__fb *fb, const void *arg, int iters)
{
    const struct wgf__batch *b = arg;
    enum wgf_status          s = WGF_OK;
    for (int it = 0; it < iters && !s; it++) {
        for (int done = 0; done < b->d && !s; done += b->k) {
            wgf_recorder *r = NULL;
            if ((s = wgf_recorder_begin(fb->ctx, "batching", NULL, &r))) return s;
            for (int i = 0; i < b->k && done + i < b->d && !s; i++) s = wgf__plan_record(r, b->pl);
            if (s) {
                wgf_recorder_abandon(r);
                return s;
            }
            s = wgf_recorder_submit(r);
        }
    }
    return s ? s : wgf_ctx_wait(fb->ctx);
}

/* The batching and pooling experiments run a fused RMSNorm (one dispatch) as their unit. */
struct wgf__unit {
    struct wgf__plan pl;   /* the one dispatch, its output checked against ref            */
    wgf_buffer      *x, *w; /* (H) input and norm weight                                   */
    wgf_pipeline    *p;    /* rmsnorm_f32                                                 */
    float           *ref;  /* (H) reference output                                        */
};

static enum wgf_status wgf__unit_rmsnorm(struct wgf__fb *fb, struct wgf__unit *u)
{
    const uint32_t H = fb->o->size.hidden;
    enum wgf_status s;
    wgf_buffer     *y;
    float          *hx = wgf__fb_host(fb, H), *hw = wgf__fb_host(fb, H);
    u->ref             = wgf__fb_host(fb, H);
    if (!hx || !hw || !u->ref) return wgf_fail(fb->err, WGF_ERR_NOMEM, "bench fusion %s: host", fb->exp);
    if ((s = wgf__fb_buffer(fb, "x", H, &u->x)) || (s = wgf__fb_buffer(fb, "w", H, &u->w)) ||
        (s = wgf__fb_buffer(fb, "y", H, &y)))
        return s;
    if ((s = wgf__fb_random(fb, u->x, hx, H, -2.0f, 2.0f)) || (s = wgf__fb_random(fb, u->w, hw, H, 0.5f, 1.5f)))
        return s;
    wgf_ref_rmsnorm(u->ref, hx, hw, H, fb->o->size.eps);
    struct wgf_constant c[2] = {{"H", H}, {"EPS", fb->o->size.eps}};
    wgf_buffer         *b[3] = {y, u->x, u->w};
    u->pl = (struct wgf__plan){
        .name = "rmsnorm_fused", .n_out = 1, .out = {y}, .out_n = {H}, .want = {u->ref}, .tol = 1e-4};
    if ((s = wgf__fb_pipe(fb, WGF_KERNEL_RMSNORM, "rmsnorm_f32", c, 2, &u->p))) return s;
    return wgf__plan_step_bufs(fb, &u->pl, u->p, b, 3, 1);
}

static enum wgf_status wgf__exp_batching(struct wgf__fb *fb, struct wgf_fusion_result *res)
{
    struct wgf__unit u;
    enum wgf_status  s = wgf__unit_rmsnorm(fb, &u);
    if (s) return s;
    static const int ks[4] = {1, 4, 16, 64};
    const int        D     = 64;
    struct wgf__batch b[4];
    snprintf(res->what, sizeof res->what,
             "%d fused-RMSNorm dispatches (hidden %u) per iteration, submitted k per submit", D, fb->o->size.hidden);
    res->iters = wgf__iters(fb, 1);
    for (int i = 0; i < 4; i++) {
        b[i] = (struct wgf__batch){&u.pl, D, ks[i]};
        struct wgf_fusion_variant *v = &res->v[i];
        if ((s = wgf__plan_check(fb, &u.pl, v))) return s;
        snprintf(v->name, sizeof v->name, "k=%d", ks[i]);
        v->dispatches   = D;
        v->submits      = D / ks[i];
        res->n_variants = i + 1;
    }
    for (int i = 0; i < 4; i++)
        if ((s = wgf__time(fb, wgf__batch_run, &b[i], res->iters, &res->v[i], &u.pl))) return s;
    /* after the timed runs the output must still be right */
    struct wgf_fusion_variant again = {0};
    if ((s = wgf__plan_check(fb, &u.pl, &again))) return s;
    for (int i = 0; i < 4 && !again.correct; i++) {
        res->v[i].correct = false;
        snprintf(res->v[i].detail, sizeof res->v[i].detail, "after timing: %.140s", again.detail);
    }
    return WGF_OK;
}

/* ---- buffer pooling: a fresh output buffer + bind group per step vs pooled ones ----------- */
struct wgf__pool {
    const struct wgf__plan *pl;   /* pooled: the unit plan                                 */
    wgf_pipeline           *p;
    wgf_buffer             *x, *w;
    uint32_t                H;
    bool                    fresh;
};

static enum wgf_status wgf__pool_run(struct wgf__fb *fb, const void *arg, int iters)
{
    const struct wgf__pool *pp = arg;
    enum wgf_status         s  = WGF_OK;
    for (int it = 0; it < iters && !s; it++) {
        wgf_buffer     *y  = NULL;
        wgf_bind_group *bg = NULL;
        wgf_recorder   *r  = NULL;
        if (pp->fresh) {
            if ((s = wgf_buffer_create(fb->ctx, "bench_pooling.y_fresh", (uint64_t)pp->H * 4, WGF_BUF_STORAGE, &y)))
                break;
            wgf_buffer *b[3] = {y, pp->x, pp->w};
            if ((s = wgf_bind_group_create(fb->ctx, pp->p, b, 3, &bg))) {
                wgf_buffer_free(y);
                break;
            }
        }
        if (!(s = wgf_recorder_begin(fb->ctx, "pooling", NULL, &r))) {
            if (pp->fresh) s = wgf_recorder_dispatch(r, pp->p, bg, 1, 1, 1);
            else s = wgf__plan_record(r, pp->pl);
            if (s) wgf_recorder_abandon(r);
            else s = wgf_recorder_submit(r);
        }
        wgf_bind_group_free(bg); /* WebGPU keeps in-flight objects alive until done          */
        wgf_buffer_free(y);
    }
    return s ? s : wgf_ctx_wait(fb->ctx);
}

static enum wgf_status wgf__exp_pooling(struct wgf__fb *fb, struct wgf_fusion_result *res)
{
    struct wgf__unit u;
    enum wgf_status  s = wgf__unit_rmsnorm(fb, &u);
    if (s) return s;
    const uint32_t   H = fb->o->size.hidden;
    struct wgf__pool fresh = {&u.pl, u.p, u.x, u.w, H, true}, pooled = {&u.pl, u.p, u.x, u.w, H, false};
    snprintf(res->what, sizeof res->what,
             "one fused-RMSNorm step (hidden %u) per submit: output buffer + bind group created per step vs pooled", H);
    res->iters      = wgf__iters(fb, 32);
    res->n_variants = 2;
    /* pooled: the unit plan's check. fresh: the same pipeline into a fresh buffer, read back
     * before it is freed (one step of wgf__pool_run, unrolled to keep the buffer). */
    if ((s = wgf__plan_check(fb, &u.pl, &res->v[1]))) return s;
    snprintf(res->v[1].name, sizeof res->v[1].name, "pooled");
    struct wgf_fusion_variant *v = &res->v[0];
    snprintf(v->name, sizeof v->name, "fresh_buffers");
    v->dispatches = 1;
    v->correct    = true;
    wgf_buffer *y;
    if ((s = wgf__fb_buffer(fb, "y_fresh_check", H, &y))) return s;
    struct wgf__plan fpl = {.name = "fresh_buffers", .n_out = 1, .out = {y}, .out_n = {H}, .want = {u.ref}, .tol = 1e-4};
    wgf_buffer      *b[3] = {y, u.x, u.w};
    if ((s = wgf__plan_step_bufs(fb, &fpl, u.p, b, 3, 1))) return s;
    if ((s = wgf__plan_check(fb, &fpl, v))) return s;
    v->submits = res->v[1].submits = 1;
    if ((s = wgf__time(fb, wgf__pool_run, &fresh, res->iters, &res->v[0], NULL))) return s;
    if ((s = wgf__time(fb, wgf__pool_run, &pooled, res->iters, &res->v[1], &u.pl))) return s;
    return WGF_OK;
}

/* ---- entry ------------------------------------------------------------------------------- */
enum wgf_status wgf_bench_fusion(wgf_ctx *ctx, const struct wgf_fusion_opts *opts, enum wgf_fusion_exp exp,
                                 struct wgf_fusion_result *out, struct wgf_err *err)
{
    if (!ctx || !opts || !out) return wgf_fail(err, WGF_ERR_ARG, "bench fusion: NULL argument");
    if ((unsigned)exp >= WGF_FUSION_COUNT) return wgf_fail(err, WGF_ERR_ARG, "bench fusion: experiment %d", (int)exp);
    const struct wgf_bench_size *z = &opts->size;
    if (!z->hidden || !z->intermediate || !z->n_heads || !z->n_kv_heads || !z->head_dim || !z->vocab ||
        !z->softmax_len || !(z->eps > 0))
        return wgf_fail(err, WGF_ERR_ARG, "bench fusion: size '%s' has a zero dimension", z->name);
    if (!opts->check_only && (opts->reps < 2 || opts->reps > WGF_BENCH_MAX_REPS || opts->warmup < 0 || opts->iters < 0))
        return wgf_fail(err, WGF_ERR_ARG, "bench fusion: reps %d (2..%d), warmup %d, iters %d", opts->reps,
                        WGF_BENCH_MAX_REPS, opts->warmup, opts->iters);
    memset(out, 0, sizeof *out);
    out->exp = exp;
    snprintf(out->name, sizeof out->name, "%s", wgf__exp_names[exp]);

    struct wgf__fb fb = {.ctx = ctx, .o = opts, .err = err, .exp = wgf__exp_names[exp]};
    wgf_rng_seed(&fb.rng, opts->seed ^ ((uint64_t)exp << 32));
    enum wgf_status s = WGF_OK;
    if (!opts->check_only && wgf_ctx_adapter(ctx)->has_timestamp &&
        (s = wgf_timer_create(ctx, "bench_fusion.timer", 1, &fb.timer)))
        return wgf_ctx_err(ctx, err, s, "bench fusion %s: timer", fb.exp);
    switch (exp) {
    case WGF_FUSION_RMSNORM: s = wgf__exp_rmsnorm(&fb, out); break;
    case WGF_FUSION_MLP: s = wgf__exp_mlp(&fb, out); break;
    case WGF_FUSION_KV: s = wgf__exp_kv(&fb, out); break;
    case WGF_FUSION_ARGMAX: s = wgf__exp_argmax(&fb, out); break;
    case WGF_FUSION_SOFTMAX: s = wgf__exp_softmax(&fb, out); break;
    case WGF_FUSION_BATCHING: s = wgf__exp_batching(&fb, out); break;
    case WGF_FUSION_POOLING: s = wgf__exp_pooling(&fb, out); break;
    default: break;
    }
    wgf__fb_free(&fb);
    wgf_timer_free(fb.timer);
    if (s) return s;
    out->ran = true;
    double base = out->v[0].us.median;
    for (int i = 0; i < out->n_variants; i++) {
        struct wgf_fusion_variant *v = &out->v[i];
        /* a slope at or below 0 (noise swamping a tiny cost) has no meaningful ratio: 0 = none */
        v->speedup = (v->correct && out->v[0].correct && v->us.n && v->us.median > 0 && base > 0)
                         ? base / v->us.median
                         : 0;
    }
    return WGF_OK;
}
