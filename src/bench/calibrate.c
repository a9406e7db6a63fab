/* wgfuse bench — the advisor's calibration (include/wgfuse/bench_calibrate.h).
 *
 * Per-dispatch cost reuses the dispatch bench (wgf_bench_dispatch_cost, every recording mode);
 * the rest are four measurement kernels (src/kernels/bench/calib_*.wgsl) timed one pass at a
 * time, GPU timestamps where the adapter has them, else the wall clock of submit + wait.
 * Barrier and subgroup costs are differences of two loop lengths, so the fixed cost of the
 * pass cancels. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench/bench_internal.h"
#include "util/file.h"
#include "util/hash.h"
#include "wgfuse/bench_calibrate.h"

#define CAL_WG   256u
#define CAL_REPS 5

static enum wgf_status cal_fail(wgf_ctx *ctx, struct wgf_err *err, enum wgf_status s, const char *what)
{
    return wgf_fail(err, s, "calibrate: %s: %s", what, wgf_ctx_last_error(ctx));
}

/* One kernel: its pipeline (prelude WG + a u32 constant), output y and optional input x. */
struct cal_kernel {
    wgf_pipeline   *pl;
    wgf_buffer     *y, *x;
    wgf_bind_group *bg;
};

static void cal_kernel_free(struct cal_kernel *k)
{
    wgf_bind_group_free(k->bg);
    wgf_buffer_free(k->y);
    wgf_buffer_free(k->x);
    memset(k, 0, sizeof *k);
}

static enum wgf_status cal_kernel_make_wg(wgf_ctx *ctx, const char *role, const char *cname, uint64_t cval, bool sg,
                                          uint32_t wg, uint64_t y_floats, uint64_t x_bytes, struct cal_kernel *k,
                                          struct wgf_err *err)
{
    memset(k, 0, sizeof *k);
    struct wgf_prelude p = {0};
    char               label[64];
    snprintf(label, sizeof label, "%s_%llu_%u", role, (unsigned long long)cval, wg);
    if (sg) wgf_prelude_text(&p, "enable subgroups;");
    wgf_prelude_u32(&p, "WG", wg, "invocations per workgroup");
    wgf_prelude_u32(&p, cname, cval, "the measured size");
    enum wgf_status          s = wgf_prelude_status(&p);
    struct wgf_pipeline_desc d = {.label = label, .wgsl = wgf_kernel_source(role), .prelude = p.s};
    if (!s && (s = wgf_pipeline_get(ctx, &d, &k->pl))) s = cal_fail(ctx, err, s, label);
    if (!s && (s = wgf_buffer_create(ctx, "calibrate.y", y_floats * 4, WGF_BUF_STORAGE, &k->y)))
        s = cal_fail(ctx, err, s, "output buffer");
    if (!s && x_bytes && (s = wgf_buffer_create(ctx, "calibrate.x", x_bytes, WGF_BUF_STORAGE, &k->x)))
        s = cal_fail(ctx, err, s, "input buffer");
    wgf_buffer *bufs[2] = {k->y, k->x};
    if (!s && (s = wgf_bind_group_create(ctx, k->pl, bufs, x_bytes ? 2 : 1, &k->bg)))
        s = cal_fail(ctx, err, s, "bind group");
    wgf_prelude_free(&p);
    if (s) cal_kernel_free(k);
    return s;
}

static enum wgf_status cal_kernel_make(wgf_ctx *ctx, const char *role, const char *cname, uint64_t cval, bool sg,
                                       uint64_t y_floats, uint64_t x_bytes, struct cal_kernel *k, struct wgf_err *err)
{
    return cal_kernel_make_wg(ctx, role, cname, cval, sg, CAL_WG, y_floats, x_bytes, k, err);
}

/* median ns of one dispatch of k over grid (a warm-up first) */
static enum wgf_status cal_time(wgf_ctx *ctx, wgf_timer *tm, struct cal_kernel *k, uint32_t grid, double *ns,
                                struct wgf_err *err)
{
    double          t[CAL_REPS];
    enum wgf_status s = WGF_OK;
    for (int i = -1; i < CAL_REPS && !s; i++) {
        double v;
        if ((s = wgf__bench_time_pass(ctx, tm, k->pl, &k->bg, 1, 1, grid, &v))) return cal_fail(ctx, err, s, "timed pass");
        if (i >= 0) t[i] = v;
    }
    *ns = wgf__bench_median(t, CAL_REPS);
    return WGF_OK;
}

/* bytes / ns of calib_read over grid workgroups */
static enum wgf_status cal_read(wgf_ctx *ctx, wgf_timer *tm, uint64_t bytes, uint32_t grid, double *gbps,
                                struct wgf_err *err)
{
    const struct wgf_limits *lim = wgf_ctx_limits(ctx);
    if (bytes > lim->max_storage_buffer_binding_size) bytes = lim->max_storage_buffer_binding_size & ~15ull;
    struct cal_kernel k;
    enum wgf_status   s = cal_kernel_make(ctx, "calib_read", "N4", bytes / 16, false, (uint64_t)grid * CAL_WG, bytes, &k, err);
    double            ns = 0;
    if (!s) s = cal_time(ctx, tm, &k, grid, &ns, err);
    cal_kernel_free(&k);
    if (!s) *gbps = ns > 0 ? (double)bytes / ns : 0;
    return s;
}

/* FLOPs / ns of calib_fma over grid workgroups */
static enum wgf_status cal_fma(wgf_ctx *ctx, wgf_timer *tm, uint32_t iter, uint32_t grid, double *gflops,
                               struct wgf_err *err)
{
    struct cal_kernel k;
    enum wgf_status   s = cal_kernel_make(ctx, "calib_fma", "ITER", iter, false, (uint64_t)grid * CAL_WG, 0, &k, err);
    double            ns = 0;
    if (!s) s = cal_time(ctx, tm, &k, grid, &ns, err);
    cal_kernel_free(&k);
    if (!s) *gflops = ns > 0 ? (double)grid * CAL_WG * iter * 16.0 / ns : 0;
    return s;
}

/* per-dispatch cost (us) of a pass of n dependent dispatches (calib_fma, ITER 1, one
 * workgroup: each writes the same y, so consecutive dispatches are ordered as a plan's are),
 * wall clock of record + submit + wait over n: what a replayed schedule of n steps pays each */
static enum wgf_status cal_dispatch_len(wgf_ctx *ctx, uint32_t n, double *us, struct wgf_err *err)
{
    struct cal_kernel k;
    enum wgf_status   s = cal_kernel_make(ctx, "calib_fma", "ITER", 1, false, CAL_WG, 0, &k, err);
    double            t[CAL_REPS];
    for (int i = -1; i < CAL_REPS && !s; i++) {
        double v;
        if ((s = wgf__bench_time_pass(ctx, NULL, k.pl, &k.bg, 1, n, 1, &v))) s = cal_fail(ctx, err, s, "dispatch pass");
        else if (i >= 0) t[i] = v;
    }
    cal_kernel_free(&k);
    if (!s) *us = wgf__bench_median(t, CAL_REPS) * 1e-3 / n;
    return s;
}

/* us per workgroup of a near-empty kernel (calib_fma, 1 iteration) over a grid of g
 * workgroups against one: what launching a workgroup costs with the device's parallelism */
static enum wgf_status cal_workgroup(wgf_ctx *ctx, wgf_timer *tm, uint32_t g, double *us, struct wgf_err *err)
{
    double t[2] = {0, 0};
    for (int j = 0; j < 2; j++) {
        struct cal_kernel k;
        enum wgf_status   s = cal_kernel_make(ctx, "calib_fma", "ITER", 1, false, (uint64_t)(j ? g : 1) * CAL_WG, 0, &k, err);
        if (!s) s = cal_time(ctx, tm, &k, j ? g : 1, &t[j], err);
        cal_kernel_free(&k);
        if (s) return s;
    }
    *us = t[1] > t[0] ? (t[1] - t[0]) * 1e-3 / (g - 1) : 0;
    return WGF_OK;
}

/* FLOPs / ns of calib_dot in one workgroup of wg invocations over n f32 weights */
static enum wgf_status cal_dot(wgf_ctx *ctx, wgf_timer *tm, uint32_t wg, uint64_t n, double *gflops, struct wgf_err *err)
{
    struct wgf_prelude p = {0};
    wgf_prelude_u32(&p, "WG", wg, "invocations of the one workgroup");
    wgf_prelude_u32(&p, "N4", (uint32_t)(n / 4), "vec4 weights streamed");
    struct cal_kernel        k = {0};
    char                     label[48];
    snprintf(label, sizeof label, "calib_dot_%u", wg);
    enum wgf_status          s = wgf_prelude_status(&p);
    struct wgf_pipeline_desc d = {.label = label, .wgsl = wgf_kernel_source("calib_dot"), .prelude = p.s};
    if (!s && (s = wgf_pipeline_get(ctx, &d, &k.pl))) s = cal_fail(ctx, err, s, label);
    if (!s && (s = wgf_buffer_create(ctx, "calibrate.y", (uint64_t)wg * 4, WGF_BUF_STORAGE, &k.y)))
        s = cal_fail(ctx, err, s, "output buffer");
    if (!s && (s = wgf_buffer_create(ctx, "calibrate.w", n * 4, WGF_BUF_STORAGE, &k.x)))
        s = cal_fail(ctx, err, s, "weights buffer");
    if (!s && (s = wgf_buffer_fill_u32(ctx, k.x, 0x3f800000u))) s = cal_fail(ctx, err, s, "weights fill");
    wgf_buffer *bufs[2] = {k.y, k.x};
    if (!s && (s = wgf_bind_group_create(ctx, k.pl, bufs, 2, &k.bg))) s = cal_fail(ctx, err, s, "bind group");
    double ns = 0;
    if (!s) s = cal_time(ctx, tm, &k, 1, &ns, err);
    cal_kernel_free(&k);
    wgf_prelude_free(&p);
    if (!s) *gflops = ns > 0 ? 2.0 * (double)n / ns : 0;
    return s;
}

/* ns per loop step of a one-workgroup kernel: (t(i1) - t(i0)) / (i1 - i0) / per_step */
static enum wgf_status cal_loop(wgf_ctx *ctx, wgf_timer *tm, const char *role, bool sg, uint32_t wg, uint32_t i0,
                                uint32_t i1, double per_step, double *ns_each, struct wgf_err *err)
{
    double          t[2] = {0, 0};
    uint32_t        it[2] = {i0, i1};
    enum wgf_status s = WGF_OK;
    for (int j = 0; j < 2 && !s; j++) {
        struct cal_kernel k;
        if ((s = cal_kernel_make_wg(ctx, role, "ITER", it[j], sg, wg, wg, 0, &k, err))) break;
        s = cal_time(ctx, tm, &k, 1, &t[j], err);
        cal_kernel_free(&k);
    }
    if (!s) *ns_each = t[1] > t[0] ? (t[1] - t[0]) / ((double)(i1 - i0) * per_step) : 0;
    return s;
}

enum wgf_status wgf_calibrate(wgf_ctx *ctx, bool quick, void (*progress)(void *user, const char *what), void *user,
                              struct wgf_calibration *out, struct wgf_err *err)
{
    memset(out, 0, sizeof *out);
    const struct wgf_adapter_desc *ad = wgf_ctx_adapter(ctx);
    snprintf(out->adapter, sizeof out->adapter, "%s", ad->name);
    snprintf(out->driver, sizeof out->driver, "%s", ad->driver);
    snprintf(out->backend, sizeof out->backend, "%s", ad->backend);
    snprintf(out->webgpu_lib, sizeof out->webgpu_lib, "%s", wgf_ctx_lib_path(ctx) ? wgf_ctx_lib_path(ctx) : "");
    time_t    now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(out->date, sizeof out->date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    uint64_t t0 = wgf_now_ns();

    enum wgf_status          s;
    struct wgf_dispatch_opts o = wgf_dispatch_opts_default(true);
    o.reps = quick ? 3 : 5, o.single_reps = 3, o.warmup = 1;
    for (int m = 0; m < WGF_MODE_COUNT; m++) {
        if (progress) progress(user, wgf_dispatch_mode_name((enum wgf_dispatch_mode)m));
        struct wgf_dispatch_mode_result r;
        if ((s = wgf_bench_dispatch_cost(ctx, &o, (enum wgf_dispatch_mode)m, &r, err))) return s;
        out->mode_us[m] = r.per_dispatch_us.median > 0 ? r.per_dispatch_us.median : 0;
    }
    /* the per-dispatch cost of a replayed schedule, short and long (cost model: d(n)) */
    if (progress) progress(user, "dispatch cost by schedule length");
    out->dev.len_short = 16;
    out->dev.len_long  = quick ? 256 : 2048;
    if ((s = cal_dispatch_len(ctx, (uint32_t)out->dev.len_short, &out->dev.dispatch_us, err)) ||
        (s = cal_dispatch_len(ctx, (uint32_t)out->dev.len_long, &out->dev.dispatch_us_long, err)))
        return s;

    wgf_timer *tm = NULL;
    if (wgf_timer_create(ctx, "calibrate", 1, &tm) != WGF_OK) tm = NULL; /* wall clock then */
    bool     gpu  = strcmp(ad->type, "cpu") != 0;
    uint64_t big  = quick || !gpu ? (32ull << 20) : (512ull << 20);
    uint32_t wide = quick || !gpu ? 256 : 8192;
    if (progress) progress(user, "read bandwidth");
    s = cal_read(ctx, tm, big, wide, &out->dev.read_gbps, err);
    if (!s) s = cal_read(ctx, tm, 4ull << 20, 1, &out->dev.read_gbps_wg, err);
    if (!s && progress) progress(user, "f32 FMA rate");
    if (!s) s = cal_fma(ctx, tm, quick || !gpu ? 256 : 4096, quick || !gpu ? 64 : 8192, &out->dev.gflops, err);
    if (!s) s = cal_fma(ctx, tm, quick || !gpu ? 1024 : 65536, 1, &out->dev.gflops_wg, err);
    if (!s && progress) progress(user, "workgroup launch");
    if (!s) s = cal_workgroup(ctx, tm, quick || !gpu ? 1024 : 65535, &out->dev.workgroup_us, err);
    if (!s && progress) progress(user, "one workgroup streaming a dot product");
    uint32_t swg = wgf_ctx_limits(ctx)->max_compute_invocations_per_workgroup;
    swg          = swg >= 1024 ? 1024 : swg >= 256 ? 256 : 64;
    out->dev.serial_wg = swg;
    if (!s) s = cal_dot(ctx, tm, swg, quick || !gpu ? (1u << 20) : (1u << 24), &out->dev.serial_gflops_wg, err);
    if (!s && progress) progress(user, "dependent chain latency");
    double chain_ns = 0; /* ns per FMA of one chain, 64 invocations each running one */
    if (!s) s = cal_loop(ctx, tm, "calib_chain", false, 64, 64, 65600, 1.0, &chain_ns, err);
    if (!s && !(chain_ns > 0)) { /* the two lengths' difference lost in noise (a loaded CPU
                                     adapter): the long one alone, fixed cost included */
        struct cal_kernel k;
        double            t1 = 0;
        if (!(s = cal_kernel_make_wg(ctx, "calib_chain", "ITER", 65600, false, 64, 64, 0, &k, err)))
            s = cal_time(ctx, tm, &k, 1, &t1, err);
        cal_kernel_free(&k);
        chain_ns = t1 / 65600.0;
    }
    out->dev.chain_gflops = chain_ns > 0 ? 2.0 / chain_ns : 0;
    if (!s && progress) progress(user, "barrier");
    if (!s) s = cal_loop(ctx, tm, "calib_barrier", false, CAL_WG, 64, quick ? 1088 : 4160, 2.0, &out->dev.barrier_ns, err);
    uint32_t sgs = 0;
    if (!s && ad->has_subgroups && wgf_ctx_subgroup_size(ctx, &sgs) == WGF_OK && sgs) {
        if (progress) progress(user, "subgroup reduction");
        s = cal_loop(ctx, tm, "calib_subgroup", true, CAL_WG, 64, quick ? 1088 : 4160, 1.0, &out->dev.subgroup_ns, err);
    }
    wgf_timer_free(tm);
    if (s) return s;
    if (!(out->dev.read_gbps > 0) || !(out->dev.gflops > 0))
        return wgf_fail(err, WGF_ERR_INTERNAL, "calibrate: a rate came out as zero (read %.3g GB/s, %.3g GFLOP/s)",
                        out->dev.read_gbps, out->dev.gflops);
    out->seconds = (double)(wgf_now_ns() - t0) * 1e-9;
    return WGF_OK;
}

/* ---- the cache file ------------------------------------------------------------------------ */

static enum wgf_status mkdir_one(const char *dir, struct wgf_err *err)
{
    if (mkdir(dir, 0755) == 0 || errno == EEXIST) return WGF_OK;
    return wgf_fail(err, WGF_ERR_IO, "calibration cache: cannot create %s: %s", dir, strerror(errno));
}

enum wgf_status wgf_calibration_path(const wgf_ctx *ctx, char *buf, size_t cap, struct wgf_err *err)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char        base[3072];
    if (xdg && *xdg == '/') snprintf(base, sizeof base, "%s", xdg);
    else if (home && *home) {
        snprintf(base, sizeof base, "%s/.cache", home);
        enum wgf_status s = mkdir_one(base, err);
        if (s) return s;
    } else
        return wgf_fail(err, WGF_ERR_IO, "calibration cache: neither $XDG_CACHE_HOME nor $HOME is set");
    size_t bl = strlen(base);
    if (bl + 8 >= sizeof base) return wgf_fail(err, WGF_ERR_IO, "calibration cache: the cache path is too long");
    strcat(base, "/wgfuse");
    enum wgf_status s = mkdir_one(base, err);
    if (s) return s;
    const struct wgf_adapter_desc *ad  = wgf_ctx_adapter(ctx);
    const char                    *lib = wgf_ctx_lib_path(ctx) ? wgf_ctx_lib_path(ctx) : "";
    char                           id[1600];
    int                            n = snprintf(id, sizeof id, "%s%c%s%c%s", ad->name, 0, ad->driver, 0, lib);
    static const struct wgf_hash_key key = {0x77676675736563ull, 0x63616c6962ull}; /* fixed: stable names */
    uint64_t                         h   = wgf_hash_bytes(&key, id, n > 0 && (size_t)n < sizeof id ? (size_t)n : sizeof id);
    if ((size_t)snprintf(buf, cap, "%s/calibration-%016llx.json", base, (unsigned long long)h) >= cap)
        return wgf_fail(err, WGF_ERR_IO, "calibration cache: the cache path is too long");
    return WGF_OK;
}

enum wgf_status wgf_calibration_json(const struct wgf_calibration *c, char **out, struct wgf_err *err)
{
    json_t *modes = json_object(), *dev = json_object();
    for (int m = 0; m < WGF_MODE_COUNT; m++)
        json_object_set_new(modes, wgf_dispatch_mode_name((enum wgf_dispatch_mode)m), json_real(c->mode_us[m]));
    json_object_set_new(dev, "dispatch_us", json_real(c->dev.dispatch_us));
    json_object_set_new(dev, "read_gbps", json_real(c->dev.read_gbps));
    json_object_set_new(dev, "read_gbps_wg", json_real(c->dev.read_gbps_wg));
    json_object_set_new(dev, "gflops", json_real(c->dev.gflops));
    json_object_set_new(dev, "gflops_wg", json_real(c->dev.gflops_wg));
    json_object_set_new(dev, "barrier_ns", json_real(c->dev.barrier_ns));
    json_object_set_new(dev, "subgroup_ns", json_real(c->dev.subgroup_ns));
    json_object_set_new(dev, "dispatch_us_long", json_real(c->dev.dispatch_us_long));
    json_object_set_new(dev, "len_short", json_real(c->dev.len_short));
    json_object_set_new(dev, "len_long", json_real(c->dev.len_long));
    json_object_set_new(dev, "serial_gflops_wg", json_real(c->dev.serial_gflops_wg));
    json_object_set_new(dev, "serial_wg", json_real(c->dev.serial_wg));
    json_object_set_new(dev, "workgroup_us", json_real(c->dev.workgroup_us));
    json_object_set_new(dev, "chain_gflops", json_real(c->dev.chain_gflops));
    json_t *root = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:f, s:o, s:o}", "format", "wgfuse-calibration",
                             "version", WGF_CALIBRATION_VERSION, "adapter", c->adapter, "driver", c->driver, "backend",
                             c->backend, "webgpu_lib", c->webgpu_lib, "date", c->date, "seconds", c->seconds,
                             "dispatch_us_by_mode", modes, "device", dev);
    char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) : NULL;
    json_decref(root);
    if (!text) return wgf_fail(err, WGF_ERR_NOMEM, "calibration: cannot render JSON (invalid UTF-8 in a name?)");
    *out = text;
    return WGF_OK;
}

enum wgf_status wgf_calibration_save(const struct wgf_calibration *c, const char *path, struct wgf_err *err)
{
    char           *text;
    enum wgf_status s = wgf_calibration_json(c, &text, err);
    if (s) return s;
    size_t n   = strlen(text);
    s          = wgf_file_write_atomic(path, text, n, err);
    free(text);
    return s;
}

static enum wgf_status get_str(json_t *o, const char *path, const char *key, char *dst, size_t cap, struct wgf_err *err)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: field '%s' missing or not a string", path, key);
    snprintf(dst, cap, "%s", json_string_value(v));
    return WGF_OK;
}

/* A finite number in [0, CAL_MAX] (> 0 when positive; a rate, one of the model's divisors, is 0
 * (not measured) or at least CAL_MIN_RATE). No device comes near either bound (an H200 reads
 * ~4,800 GB/s); past them the cost model's sums overflow: a hand-edited 1e308 printed
 * "predicted inf ms, -nanx faster" with exit 0, and 1e-300 GB/s predicted 1e301 ms. */
#define CAL_MAX      1e9
#define CAL_MIN_RATE 1e-6
static enum wgf_status get_num(json_t *o, const char *path, const char *key, bool positive, bool rate, double *dst,
                               struct wgf_err *err)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: field '%s' missing or not a number", path, key);
    double d = json_number_value(v);
    if (!isfinite(d) || d < 0 || d > CAL_MAX || (positive && d <= 0) || (rate && d > 0 && d < CAL_MIN_RATE))
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: field '%s' is %g (must be %s%g, %g])", path, key, d,
                        positive ? "in [" : rate ? "0 or in [" : "in [", rate ? CAL_MIN_RATE : 0.0, CAL_MAX);
    *dst = d;
    return WGF_OK;
}

static enum wgf_status cal_parse(json_t *root, const char *path, const wgf_ctx *ctx, struct wgf_calibration *c,
                                 struct wgf_err *err)
{
    json_t *fmt = json_object_get(root, "format"), *ver = json_object_get(root, "version");
    if (!json_is_object(root) || !json_is_string(fmt) || strcmp(json_string_value(fmt), "wgfuse-calibration"))
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: not a wgfuse calibration file", path);
    if (!json_is_integer(ver))
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: calibration format version missing or not an integer", path);
    if (json_integer_value(ver) != WGF_CALIBRATION_VERSION)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: calibration format version %lld, this wgfuse reads %d", path,
                        (long long)json_integer_value(ver), WGF_CALIBRATION_VERSION);
    enum wgf_status s;
    if ((s = get_str(root, path, "adapter", c->adapter, sizeof c->adapter, err)) ||
        (s = get_str(root, path, "driver", c->driver, sizeof c->driver, err)) ||
        (s = get_str(root, path, "backend", c->backend, sizeof c->backend, err)) ||
        (s = get_str(root, path, "webgpu_lib", c->webgpu_lib, sizeof c->webgpu_lib, err)) ||
        (s = get_str(root, path, "date", c->date, sizeof c->date, err)) ||
        (s = get_num(root, path, "seconds", false, false, &c->seconds, err)))
        return s;
    json_t *modes = json_object_get(root, "dispatch_us_by_mode"), *dev = json_object_get(root, "device");
    if (!json_is_object(modes) || !json_is_object(dev))
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: 'dispatch_us_by_mode' or 'device' missing or not an object", path);
    for (int m = 0; m < WGF_MODE_COUNT; m++)
        if ((s = get_num(modes, path, wgf_dispatch_mode_name((enum wgf_dispatch_mode)m), false, false, &c->mode_us[m], err)))
            return s;
    struct wgf_device_cost *d = &c->dev;
    /* each field: > 0 required (positive), a rate (0 or >= CAL_MIN_RATE) */
    const struct {
        const char *key;
        bool        positive, rate;
        double     *dst;
    } fields[] = {{"dispatch_us", false, false, &d->dispatch_us},     {"read_gbps", true, true, &d->read_gbps},
                  {"read_gbps_wg", false, true, &d->read_gbps_wg},   {"gflops", true, true, &d->gflops},
                  {"gflops_wg", false, true, &d->gflops_wg},         {"barrier_ns", false, false, &d->barrier_ns},
                  {"subgroup_ns", false, false, &d->subgroup_ns},     {"dispatch_us_long", false, false, &d->dispatch_us_long},
                  {"len_short", false, false, &d->len_short},         {"len_long", false, false, &d->len_long},
                  {"serial_gflops_wg", false, true, &d->serial_gflops_wg}, {"serial_wg", false, false, &d->serial_wg},
                  {"workgroup_us", false, false, &d->workgroup_us},   {"chain_gflops", false, true, &d->chain_gflops}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if ((s = get_num(dev, path, fields[i].key, fields[i].positive, fields[i].rate, fields[i].dst, err))) return s;
    if (ctx) {
        const struct wgf_adapter_desc *ad  = wgf_ctx_adapter(ctx);
        const char                    *lib = wgf_ctx_lib_path(ctx) ? wgf_ctx_lib_path(ctx) : "";
        if (strcmp(c->adapter, ad->name) || strcmp(c->driver, ad->driver) || strcmp(c->webgpu_lib, lib))
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: calibrated for another adapter (%s, %s)", path, c->adapter,
                            c->webgpu_lib);
    }
    return WGF_OK;
}

enum wgf_status wgf_calibration_load(const char *path, const wgf_ctx *ctx, struct wgf_calibration *out,
                                     struct wgf_err *err)
{
    memset(out, 0, sizeof *out);
    char           *text = NULL;
    size_t          len  = 0;
    enum wgf_status s    = wgf_file_read(path, 1u << 20, "a calibration file", &text, &len, err);
    if (s) return s;
    json_error_t je;
    json_t      *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!root) return wgf_fail(err, WGF_ERR_FORMAT, "%s: line %d: %s (corrupt or cut short)", path, je.line, je.text);
    struct wgf_calibration c = {0};
    s                        = cal_parse(root, path, ctx, &c, err);
    json_decref(root);
    if (!s) *out = c;
    return s;
}
