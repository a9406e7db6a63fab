/* wgfuse bench — dispatch overhead by the sequential method and by single-op.
 *
 * Protocol (docs/methodology.md):
 *   1. check: the tiny kernel (y = 2x + 1 on 64 elements) runs in every recording mode and
 *      its output is compared with the C reference, with poison past the end; nothing is
 *      timed for a dtype whose check fails.
 *   2. sequential: for each recording mode, `warmup` untimed sweeps, then `reps` sweeps over
 *      N in opts.ns; a sweep times N back-to-back dispatches (record + submit + wait) for
 *      each N. Per-dispatch cost = slope of the least-squares line of time vs N: the fixed
 *      costs (submit, wait, readiness polling) fall into the intercept. The slope of each
 *      sweep is one sample; the table reports their median, bootstrap CI and CV, and the
 *      fit of the per-N medians with its residual.
 *   3. single-op: one dispatch, submitted and waited for, timed alone (`single_reps` times)
 *      — the method that overstates per-dispatch cost when used to extrapolate.
 *   4. GPU time (timestamp-query, where present): one dispatch per pass, and N in one pass.
 * The report records adapter, driver, backend and UTC date beside the numbers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/ids.h"
#include "wgfuse/bench.h"

#define WGF__TINY_N   64u         /* elements of the tiny kernel                        */
#define WGF__TINY_PAD 16u         /* poisoned elements past y's end                     */
#define WGF__POISON32 0x7fbadbadu /* a NaN: any write over it shows                     */
#define WGF__POISON16 0x7e5au     /* an f16 NaN                                          */

static const char *const wgf__mode_names[WGF_MODE_COUNT] = {"one_pass", "pass_each", "submit_each", "wait_each",
                                                            "indirect"};
static const char *const wgf__mode_desc[WGF_MODE_COUNT]  = {
    "N dispatches in one compute pass, one submit",
    "one compute pass per dispatch, one encoder, one submit",
    "one encoder + submit per dispatch",
    "submit and wait per dispatch (single-op, repeated)",
    "N indirect dispatches in one compute pass (grid from a buffer), one submit",
};

const char *wgf_dispatch_mode_name(enum wgf_dispatch_mode m)
{
    return (unsigned)m < WGF_MODE_COUNT ? wgf__mode_names[m] : "?";
}
const char *wgf_dispatch_mode_desc(enum wgf_dispatch_mode m)
{
    return (unsigned)m < WGF_MODE_COUNT ? wgf__mode_desc[m] : "?";
}

struct wgf_dispatch_opts wgf_dispatch_opts_default(bool quick)
{
    struct wgf_dispatch_opts o;
    memset(&o, 0, sizeof o);
    static const int q[] = {8, 16, 32, 64, 128, 256};
    static const int f[] = {16, 32, 64, 128, 256, 512, 1024};
    const int       *ns  = quick ? q : f;
    o.n_ns               = quick ? (int)(sizeof q / sizeof q[0]) : (int)(sizeof f / sizeof f[0]);
    for (int i = 0; i < o.n_ns; i++) o.ns[i] = ns[i];
    o.reps        = quick ? 11 : 21;
    o.warmup      = quick ? 2 : 3;
    o.single_reps = quick ? 31 : 101;
    return o;
}

/* ---- the tiny kernel ------------------------------------------------------------------- */
struct wgf__tiny {
    enum wgf_bench_dtype dtype;
    uint32_t             elem;  /* bytes per element                                   */
    wgf_buffer          *y;     /* (N + PAD) f32|f16: output, poison past N             */
    wgf_buffer          *x;     /* (N) f32|f16: input, multiples of 1/8, never zero     */
    wgf_pipeline        *pipe;  /* "tiny_f32" | "tiny_f16"                              */
    wgf_bind_group      *bg;
    wgf_buffer          *args;  /* (1, 1, 1): the grid of WGF_MODE_INDIRECT             */
    float                x_host[WGF__TINY_N];
};

static void wgf__tiny_free(struct wgf__tiny *t)
{
    wgf_bind_group_free(t->bg);
    wgf_buffer_free(t->args);
    wgf_buffer_free(t->y);
    wgf_buffer_free(t->x);
    memset(t, 0, sizeof *t);
}

static enum wgf_status wgf__tiny_init(wgf_ctx *ctx, enum wgf_bench_dtype dt, bool packed, struct wgf__tiny *t,
                                      struct wgf_err *err)
{
    memset(t, 0, sizeof *t);
    t->dtype         = dt;
    t->elem          = dt == WGF_BENCH_F16 ? 2 : 4;
    /* f16 without shader-f16: the same bytes, packed two per u32 (tiny_f16_packed.wgsl) */
    bool        native = wgf_ctx_adapter(ctx)->has_f16 && !packed;
    enum wgf_kernel kernel = dt == WGF_BENCH_F32 ? WGF_KERNEL_TINY_F32 : native ? WGF_KERNEL_TINY_F16
                                                                                : WGF_KERNEL_TINY_F16_PACKED;
    const char     *role   = wgf__kernel_role(kernel);
    struct wgf_constant      c    = {"N", WGF__TINY_N};
    struct wgf_pipeline_desc desc = {.label = role, .wgsl = wgf__kernel_wgsl(kernel), .constants = &c, .n_constants = 1};
    enum wgf_status          s    = wgf_pipeline_get(ctx, &desc, &t->pipe);
    if (s) return wgf_ctx_err(ctx, err, s, "bench dispatch: %s", role);
    char label[64];
    snprintf(label, sizeof label, "bench_dispatch.%s.y", role);
    if ((s = wgf_buffer_create(ctx, label, (uint64_t)(WGF__TINY_N + WGF__TINY_PAD) * t->elem, WGF_BUF_STORAGE, &t->y)))
        goto fail;
    snprintf(label, sizeof label, "bench_dispatch.%s.x", role);
    if ((s = wgf_buffer_create(ctx, label, (uint64_t)WGF__TINY_N * t->elem, WGF_BUF_STORAGE, &t->x))) goto fail;
    /* x = ±k/8, k in 1..32: 2x + 1 is exact in f16 and f32 and never 0 */
    uint16_t h[WGF__TINY_N];
    for (uint32_t i = 0; i < WGF__TINY_N; i++) {
        float v      = (float)(1 + (i * 7) % 32) / 8.0f * ((i & 1) ? -1.0f : 1.0f);
        t->x_host[i] = v;
        h[i]         = wgf_f32_to_f16(v);
    }
    if (dt == WGF_BENCH_F16) s = wgf_buffer_write(ctx, t->x, 0, h, sizeof h);
    else s = wgf_buffer_write(ctx, t->x, 0, t->x_host, sizeof t->x_host);
    if (s) goto fail;
    wgf_buffer *bufs[2] = {t->y, t->x};
    if ((s = wgf_bind_group_create(ctx, t->pipe, bufs, 2, &t->bg))) goto fail;
    static const uint32_t grid[3] = {1, 1, 1};
    snprintf(label, sizeof label, "bench_dispatch.%s.grid", role);
    if ((s = wgf_buffer_create(ctx, label, sizeof grid, WGF_BUF_INDIRECT, &t->args)) ||
        (s = wgf_buffer_write(ctx, t->args, 0, grid, sizeof grid)))
        goto fail;
    return WGF_OK;
fail:
    wgf_ctx_err(ctx, err, s, "bench dispatch: %s", role);
    wgf__tiny_free(t);
    return s;
}

/* Record and run n dispatches of the tiny kernel in `mode`, waiting for all of them. */
static enum wgf_status wgf__run_mode(wgf_ctx *ctx, struct wgf__tiny *t, enum wgf_dispatch_mode mode, int n,
                                     wgf_timer *timer)
{
    enum wgf_status s = WGF_OK;
    wgf_recorder   *r = NULL;
    const char     *label = wgf_pipeline_label(t->pipe);
    switch (mode) {
    case WGF_MODE_ONE_PASS:
    case WGF_MODE_PASS_EACH:
    case WGF_MODE_INDIRECT:
        if ((s = wgf_recorder_begin(ctx, label, timer, &r))) return s;
        for (int i = 0; i < n && !s; i++) {
            s = mode == WGF_MODE_INDIRECT ? wgf_recorder_dispatch_indirect(r, t->pipe, t->bg, t->args, 0)
                                          : wgf_recorder_dispatch(r, t->pipe, t->bg, 1, 1, 1);
            if (!s && mode == WGF_MODE_PASS_EACH) s = wgf_recorder_end_pass(r);
        }
        if (s) {
            wgf_recorder_abandon(r);
            return s;
        }
        if ((s = wgf_recorder_submit(r))) return s;
        return wgf_ctx_wait(ctx);
    case WGF_MODE_SUBMIT_EACH:
    case WGF_MODE_WAIT_EACH:
        for (int i = 0; i < n; i++) {
            if ((s = wgf_recorder_begin(ctx, label, timer, &r))) return s;
            if ((s = wgf_recorder_dispatch(r, t->pipe, t->bg, 1, 1, 1))) {
                wgf_recorder_abandon(r);
                return s;
            }
            if ((s = wgf_recorder_submit(r))) return s;
            if (mode == WGF_MODE_WAIT_EACH && (s = wgf_ctx_wait(ctx))) return s;
        }
        return mode == WGF_MODE_SUBMIT_EACH ? wgf_ctx_wait(ctx) : WGF_OK;
    default: return WGF_ERR_ARG;
    }
}

/* Poison y, run 3 dispatches in `mode`, compare y with 2x + 1 and the pad with the poison. */
static enum wgf_status wgf__tiny_check(wgf_ctx *ctx, struct wgf__tiny *t, enum wgf_dispatch_mode mode,
                                       struct wgf_err *err)
{
    const char     *role   = wgf_pipeline_label(t->pipe);
    uint32_t        poison = t->dtype == WGF_BENCH_F16 ? (WGF__POISON16 | (WGF__POISON16 << 16)) : WGF__POISON32;
    enum wgf_status s      = wgf_buffer_fill_u32(ctx, t->y, poison);
    if (!s) s = wgf__run_mode(ctx, t, mode, 3, NULL);
    unsigned char got[(WGF__TINY_N + WGF__TINY_PAD) * 4];
    size_t        nbytes = (size_t)(WGF__TINY_N + WGF__TINY_PAD) * t->elem;
    if (!s) s = wgf_buffer_read(ctx, t->y, 0, got, nbytes);
    if (s) return wgf_ctx_err(ctx, err, s, "bench dispatch: %s", role);
    float want[WGF__TINY_N];
    wgf_ref_tiny(want, t->x_host, WGF__TINY_N);
    for (uint32_t i = 0; i < WGF__TINY_N + WGF__TINY_PAD; i++) {
        float    v;
        uint32_t bits;
        if (t->dtype == WGF_BENCH_F16) {
            uint16_t hv;
            memcpy(&hv, got + 2 * i, 2);
            v    = wgf_f16_to_f32(hv);
            bits = hv;
        } else {
            memcpy(&v, got + 4 * i, 4);
            memcpy(&bits, got + 4 * i, 4);
        }
        if (i < WGF__TINY_N && v != want[i])
            return wgf_fail(err, WGF_ERR_INTERNAL, "bench dispatch: %s (%s): y[%u] = %g, expected %g", role,
                            wgf__mode_names[mode], i, v, want[i]);
        if (i >= WGF__TINY_N && bits != (t->dtype == WGF_BENCH_F16 ? WGF__POISON16 : WGF__POISON32))
            return wgf_fail(err, WGF_ERR_INTERNAL, "bench dispatch: %s (%s): wrote past the output at %u", role,
                            wgf__mode_names[mode], i);
    }
    return WGF_OK;
}

/* ---- measurements ---------------------------------------------------------------------- */
static void wgf__progress(const struct wgf_dispatch_opts *o, const char *fmt, const char *a, const char *b)
{
    if (!o->progress) return;
    char line[160];
    snprintf(line, sizeof line, fmt, a, b);
    o->progress(o->progress_user, line);
}

/* Sequential sweeps and single-op samples for one mode. */
static enum wgf_status wgf__measure_mode(wgf_ctx *ctx, struct wgf__tiny *t, enum wgf_dispatch_mode mode,
                                         const struct wgf_dispatch_opts *o, struct wgf_dispatch_mode_result *res,
                                         struct wgf_err *err)
{
    const char     *role = wgf_pipeline_label(t->pipe);
    enum wgf_status s    = WGF_OK;
    int             reps = o->reps, nn = o->n_ns;
    double         *t_us = calloc((size_t)reps * (size_t)nn + 2 * (size_t)reps + (size_t)o->single_reps, sizeof(double));
    if (!t_us) return wgf_fail(err, WGF_ERR_NOMEM, "bench dispatch: samples");
    double *slopes = t_us + (size_t)reps * (size_t)nn, *single = slopes + (size_t)reps, *col = single + (size_t)o->single_reps; /* col: reps */
    double  xs[WGF_BENCH_MAX_NS];
    for (int i = 0; i < nn; i++) xs[i] = o->ns[i];

    memset(res, 0, sizeof *res);
    for (int rep = -o->warmup; rep < reps && !s; rep++) {
        for (int i = 0; i < nn && !s; i++) {
            /* The trailing one-dispatch round trip is timed with the N: Dawn defers part of
             * the cleanup of a submit (freeing its command buffer) to the next one, and on
             * lavapipe that costs milliseconds after 1024 dispatches. Timing it here charges
             * it to the N that caused it; its own constant cost falls into the intercept. */
            uint64_t t0 = wgf_now_ns();
            s           = wgf__run_mode(ctx, t, mode, o->ns[i], NULL);
            if (!s) s = wgf__run_mode(ctx, t, WGF_MODE_WAIT_EACH, 1, NULL);
            uint64_t t1 = wgf_now_ns();
            if (rep >= 0) t_us[(size_t)rep * (size_t)nn + (size_t)i] = (double)(t1 - t0) / 1e3;
        }
        if (!s && rep >= 0) {
            struct wgf_linfit f;
            if ((s = wgf_linfit_compute(xs, t_us + (size_t)rep * (size_t)nn, nn, &f, err))) goto out;
            slopes[rep] = f.slope;
        }
    }
    if (s) {
        wgf_ctx_err(ctx, err, s, "bench dispatch: %s", role);
        goto out;
    }
    for (int k = 0; k < o->single_reps && !s; k++) {
        /* untimed settle: the previous submit's deferred cleanup is not this dispatch's */
        if ((s = wgf__run_mode(ctx, t, WGF_MODE_WAIT_EACH, 1, NULL))) break;
        uint64_t t0 = wgf_now_ns();
        s           = wgf__run_mode(ctx, t, mode, 1, NULL);
        single[k]   = (double)(wgf_now_ns() - t0) / 1e3;
    }
    if (s) {
        wgf_ctx_err(ctx, err, s, "bench dispatch: %s", role);
        goto out;
    }
    res->n_points = nn;
    for (int i = 0; i < nn; i++) {
        for (int rep = 0; rep < reps; rep++) col[rep] = t_us[(size_t)rep * (size_t)nn + (size_t)i];
        res->ns[i]   = o->ns[i];
        res->t_us[i] = wgf_stats_median(col, reps);
    }
    if ((s = wgf_linfit_compute(xs, res->t_us, nn, &res->fit, err))) goto out;
    if ((s = wgf_stats_compute(slopes, reps, &res->per_dispatch_us, err))) goto out;
    if ((s = wgf_stats_compute(single, o->single_reps, &res->single_op_us, err))) goto out;
    res->ran = true;
out:
    free(t_us);
    return s;
}

/* GPU timestamps: per-pass time of a one-dispatch pass, and of one pass holding n dispatches. */
static enum wgf_status wgf__measure_gpu(wgf_ctx *ctx, struct wgf__tiny *t, const struct wgf_dispatch_opts *o,
                                        struct wgf_dispatch_report *out, struct wgf_err *err)
{
    int        n     = o->ns[o->n_ns - 1];
    int        reps  = o->reps;
    wgf_timer *timer = NULL;
    enum wgf_status s = wgf_timer_create(ctx, "bench_dispatch.timer", (uint32_t)n, &timer);
    if (s == WGF_ERR_UNSUPPORTED) {
        snprintf(out->gpu_time_skip, sizeof out->gpu_time_skip, "no timestamp-query on this adapter");
        return WGF_OK;
    }
    if (s) return wgf_ctx_err(ctx, err, s, "bench dispatch: timer");
    double  *pass   = malloc(sizeof *pass * (size_t)n * (size_t)(reps + 1));
    double  *amort  = malloc(sizeof *amort * (size_t)(reps + 1));
    uint32_t npass  = 0, got = 0;
    int      namort = 0;
    if (!pass || !amort) {
        s = wgf_fail(err, WGF_ERR_NOMEM, "bench dispatch: timestamps");
        goto out;
    }
    for (int rep = -1; rep < reps; rep++) { /* rep -1: warm-up */
        wgf_timer_reset(timer);
        if ((s = wgf__run_mode(ctx, t, WGF_MODE_PASS_EACH, n, timer))) goto gpu_fail;
        if ((s = wgf_timer_read(ctx, timer, pass + npass, (uint32_t)n, &got))) goto gpu_fail;
        if (rep >= 0) npass += got;
        double one[1];
        wgf_timer_reset(timer);
        if ((s = wgf__run_mode(ctx, t, WGF_MODE_ONE_PASS, n, timer))) goto gpu_fail;
        if ((s = wgf_timer_read(ctx, timer, one, 1, &got))) goto gpu_fail;
        if (rep >= 0 && got == 1) amort[namort++] = one[0] / n;
    }
    for (uint32_t i = 0; i < npass; i++) pass[i] /= 1e3;
    for (int i = 0; i < namort; i++) amort[i] /= 1e3;
    if (npass == 0 || namort == 0) {
        snprintf(out->gpu_time_skip, sizeof out->gpu_time_skip, "timer returned no passes");
        goto out;
    }
    if ((s = wgf_stats_compute(pass, (int)npass, &out->gpu_pass_us, err))) goto out;
    if ((s = wgf_stats_compute(amort, namort, &out->gpu_amortized_us, err))) goto out;
    out->has_gpu_time = true;
    goto out;
gpu_fail:
    wgf_ctx_err(ctx, err, s, "bench dispatch: timestamps");
out:
    free(pass);
    free(amort);
    wgf_timer_free(timer);
    return s;
}

/* One recording mode of the f32 tiny kernel, checked before and after: what a caller that
 * needs only the per-dispatch cost (the fusion dial's dispatch floor) measures. */
enum wgf_status wgf_bench_dispatch_cost(wgf_ctx *ctx, const struct wgf_dispatch_opts *opts, enum wgf_dispatch_mode mode,
                                        struct wgf_dispatch_mode_result *out, struct wgf_err *err)
{
    if ((unsigned)mode >= WGF_MODE_COUNT || opts->n_ns < 2 || opts->n_ns > WGF_BENCH_MAX_NS || opts->reps < 2 ||
        opts->reps > WGF_BENCH_MAX_REPS || opts->single_reps < 2 || opts->warmup < 0)
        return wgf_fail(err, WGF_ERR_ARG, "bench dispatch: mode %d, %d counts (2..%d), reps %d (2..%d), single_reps %d (>= 2)",
                        (int)mode, opts->n_ns, WGF_BENCH_MAX_NS, opts->reps, WGF_BENCH_MAX_REPS, opts->single_reps);
    struct wgf__tiny t;
    enum wgf_status  s = wgf__tiny_init(ctx, WGF_BENCH_F32, false, &t, err);
    if (s) return s;
    if (!(s = wgf__tiny_check(ctx, &t, mode, err)) && !(s = wgf__measure_mode(ctx, &t, mode, opts, out, err)))
        s = wgf__tiny_check(ctx, &t, mode, err);
    wgf__tiny_free(&t);
    return s;
}

enum wgf_status wgf_bench_dispatch(wgf_ctx *ctx, const struct wgf_dispatch_opts *opts,
                                   struct wgf_dispatch_report *out, struct wgf_err *err)
{
    if (!ctx || !opts || !out) return wgf_fail(err, WGF_ERR_ARG, "bench dispatch: NULL argument");
    if (opts->n_ns < 2 || opts->n_ns > WGF_BENCH_MAX_NS)
        return wgf_fail(err, WGF_ERR_ARG, "bench dispatch: need 2..%d dispatch counts (got %d)", WGF_BENCH_MAX_NS,
                        opts->n_ns);
    for (int i = 0; i < opts->n_ns; i++)
        if (opts->ns[i] < 1 || (i > 0 && opts->ns[i] <= opts->ns[i - 1]))
            return wgf_fail(err, WGF_ERR_ARG, "bench dispatch: counts must be ascending and >= 1 (ns[%d] = %d)", i,
                            opts->ns[i]);
    if (opts->reps < 2 || opts->reps > WGF_BENCH_MAX_REPS || opts->warmup < 0 || opts->single_reps < 2)
        return wgf_fail(err, WGF_ERR_ARG, "bench dispatch: reps %d (2..%d), warmup %d, single_reps %d (>= 2)",
                        opts->reps, WGF_BENCH_MAX_REPS, opts->warmup, opts->single_reps);

    memset(out, 0, sizeof *out);
    out->opts                         = *opts;
    const struct wgf_adapter_desc *ad = wgf_ctx_adapter(ctx);
    snprintf(out->adapter, sizeof out->adapter, "%s", ad->name);
    snprintf(out->backend, sizeof out->backend, "%s", ad->backend);
    snprintf(out->type, sizeof out->type, "%s", ad->type);
    snprintf(out->driver, sizeof out->driver, "%s", ad->driver);
    time_t    now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(out->date, sizeof out->date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    out->has_f16 = ad->has_f16;
    snprintf(out->f16_kernel, sizeof out->f16_kernel, "%s",
             wgf__kernel_role(ad->has_f16 && !opts->f16_packed ? WGF_KERNEL_TINY_F16 : WGF_KERNEL_TINY_F16_PACKED));
    snprintf(out->calls_skip, sizeof out->calls_skip, "per-call breakdown not built into this runtime");

    enum wgf_status s = WGF_OK;
    for (int dt = 0; dt < WGF_BENCH_DTYPES; dt++) {
        struct wgf__tiny t;
        if ((s = wgf__tiny_init(ctx, (enum wgf_bench_dtype)dt, opts->f16_packed, &t, err))) {
            if (dt == WGF_BENCH_F16) { /* f16 is optional: record why and go on */
                snprintf(out->f16_skip, sizeof out->f16_skip, "%.120s", err->msg);
                s            = WGF_OK;
                continue;
            }
            return s;
        }
        for (int m = 0; m < WGF_MODE_COUNT && !s; m++) s = wgf__tiny_check(ctx, &t, (enum wgf_dispatch_mode)m, err);
        for (int m = 0; m < WGF_MODE_COUNT && !s; m++) {
            if (opts->stop && opts->stop(opts->progress_user)) {
                wgf__tiny_free(&t);
                return wgf_fail(err, WGF_ERR_INTERRUPTED, "bench dispatch: stopped before %s %s (incomplete)",
                                dt ? "f16" : "f32", wgf__mode_names[m]);
            }
            wgf__progress(opts, "dispatch: %s %s", wgf_pipeline_label(t.pipe), wgf__mode_names[m]);
            s = wgf__measure_mode(ctx, &t, (enum wgf_dispatch_mode)m, opts, &out->mode[dt][m], err);
        }
        if (!s && dt == WGF_BENCH_F32 && ad->has_timestamp) {
            wgf__progress(opts, "dispatch: %s %s", wgf_pipeline_label(t.pipe), "gpu timestamps");
            s = wgf__measure_gpu(ctx, &t, opts, out, err);
        } else if (!ad->has_timestamp) {
            snprintf(out->gpu_time_skip, sizeof out->gpu_time_skip, "no timestamp-query on this adapter");
        }
        /* the timed runs must not have broken the kernel either */
        if (!s) s = wgf__tiny_check(ctx, &t, WGF_MODE_ONE_PASS, err);
        wgf__tiny_free(&t);
        if (s) return s;
    }
    const struct wgf_dispatch_mode_result *seq = &out->mode[WGF_BENCH_F32][WGF_MODE_ONE_PASS];
    /* A pass cannot take longer on the GPU than record + submit + wait of the same pass on
     * the host: if it reads so, the adapter's timestamps are not to be trusted (seen on
     * lavapipe: 65.536 us for any one-dispatch pass). Reported, not hidden. */
    if (out->has_gpu_time && seq->ran) {
        int    nmax = opts->ns[opts->n_ns - 1];
        double gpu  = out->gpu_amortized_us.median * nmax, wall = seq->t_us[seq->n_points - 1];
        if (gpu > wall)
            snprintf(out->gpu_time_note, sizeof out->gpu_time_note,
                     "SUSPECT: GPU time of a %d-dispatch pass (%.0f us) exceeds its wall time (%.0f us)", nmax, gpu,
                     wall);
    }
    const struct wgf_dispatch_mode_result *one = &out->mode[WGF_BENCH_F32][WGF_MODE_WAIT_EACH];
    out->sequential_us          = seq->per_dispatch_us.median;
    out->single_op_us           = one->single_op_us.median;
    out->single_over_sequential = out->sequential_us > 0 ? out->single_op_us / out->sequential_us : NAN;
    out->complete               = true;
    return WGF_OK;
}
