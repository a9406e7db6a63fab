/* The advisor's calibration (src/bench/calibrate.c), for real on the default adapter:
 *   - a quick calibration gives positive, finite rates and a non-negative cost per mode;
 *   - save + load round trip: every field back (to the 9 digits the JSON keeps), also checked
 *     against the same adapter;
 *   - refused with WGF_ERR_FORMAT and a message naming the file: not JSON, cut short (every
 *     prefix of the file tried), another format version, another format, a missing field, a
 *     zero rate, a negative cost, a number no device has (above 1e9, or a nonzero rate below
 *     1e-6: the model's sums overflowed into "inf ms"), a string where a number goes, another adapter;
 *   - a missing file is WGF_ERR_IO (the caller then calibrates without a warning);
 *   - the cache path lies under $XDG_CACHE_HOME/wgfuse, else $HOME/.cache/wgfuse, is the
 *     same for the same adapter twice, and is created. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "wgfuse/bench_calibrate.h"

static bool close9(double a, double b) { return fabs(a - b) <= 1e-8 * (fabs(b) + 1e-12); }

static void write_text(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) fwrite(text, 1, n, f), fclose(f);
}

/* the saved file with one edit: key set to value (JSON text) inside "device" or at the top */
static void expect_refused(struct wgf_t *t, wgf_ctx *ctx, const char *path, const char *name, const char *want)
{
    struct wgf_calibration c;
    struct wgf_err         err = {0};
    enum wgf_status        s   = wgf_calibration_load(path, ctx, &c, &err);
    wgf_t_check(t, s == WGF_ERR_FORMAT && strstr(err.msg, path) && (!want || strstr(err.msg, want)), name,
                "status %d: %s", (int)s, err.msg);
}

static void edited(struct wgf_t *t, wgf_ctx *ctx, const char *good, const char *bad, const char *obj, const char *key,
                   json_t *v, const char *name, const char *want)
{
    json_error_t je;
    json_t      *root = json_load_file(good, 0, &je);
    json_t      *o    = obj ? json_object_get(root, obj) : root;
    if (v) json_object_set_new(o, key, v);
    else json_object_del(o, key);
    json_dump_file(root, bad, 0);
    json_decref(root);
    expect_refused(t, ctx, bad, name, want);
}

int main(void)
{
    struct wgf_t t   = {0};
    wgf_ctx     *ctx = wgf_t_gpu_timeout(&t, 120000);
    if (!ctx) return wgf_t_finish(&t);
    char dir[512], good[700], bad[700], path[4096];
    wgf_t_tmpdir("calibration", dir, sizeof dir);
    snprintf(good, sizeof good, "%s/good.json", dir);
    snprintf(bad, sizeof bad, "%s/bad.json", dir);

    struct wgf_calibration c;
    struct wgf_err         err = {0};
    enum wgf_status        s   = wgf_calibrate(ctx, true, NULL, NULL, &c, &err);
    if (!wgf_t_check(&t, s == WGF_OK, "quick calibration", "%s", err.msg)) goto done;
    bool modes = true;
    for (int m = 0; m < WGF_MODE_COUNT; m++) modes = modes && isfinite(c.mode_us[m]) && c.mode_us[m] >= 0;
    wgf_t_check(&t, modes && c.dev.read_gbps > 0 && c.dev.read_gbps_wg > 0 && c.dev.gflops > 0 && c.dev.gflops_wg > 0 &&
                        c.dev.barrier_ns >= 0 && c.dev.subgroup_ns >= 0 && c.dev.dispatch_us > 0 &&
                        c.dev.dispatch_us_long > 0 && c.dev.len_long > c.dev.len_short && c.dev.len_short >= 1 &&
                        c.dev.serial_gflops_wg > 0 && c.dev.serial_wg >= 64 && c.dev.workgroup_us >= 0 && c.dev.chain_gflops > 0 &&
                        c.adapter[0] && c.seconds > 0 && c.seconds < 60,
                "calibration: every figure finite and positive, under a minute",
                "read %g/%g GB/s, %g/%g GFLOP/s, %g s; d %g/%g us at %g/%g, serial %g at %g, wg %g us, chain %g",
                c.dev.read_gbps, c.dev.read_gbps_wg, c.dev.gflops, c.dev.gflops_wg, c.seconds, c.dev.dispatch_us,
                c.dev.dispatch_us_long, c.dev.len_short, c.dev.len_long, c.dev.serial_gflops_wg, c.dev.serial_wg,
                c.dev.workgroup_us, c.dev.chain_gflops);

    s = wgf_calibration_save(&c, good, &err);
    struct wgf_calibration back;
    if (!s) s = wgf_calibration_load(good, ctx, &back, &err);
    bool same = !s && !strcmp(back.adapter, c.adapter) && !strcmp(back.driver, c.driver) &&
                !strcmp(back.webgpu_lib, c.webgpu_lib) && !strcmp(back.date, c.date) &&
                close9(back.dev.dispatch_us, c.dev.dispatch_us) && close9(back.dev.read_gbps, c.dev.read_gbps) &&
                close9(back.dev.read_gbps_wg, c.dev.read_gbps_wg) && close9(back.dev.gflops, c.dev.gflops) &&
                close9(back.dev.gflops_wg, c.dev.gflops_wg) && close9(back.dev.barrier_ns, c.dev.barrier_ns) &&
                close9(back.dev.subgroup_ns, c.dev.subgroup_ns) && close9(back.dev.dispatch_us_long, c.dev.dispatch_us_long) &&
                close9(back.dev.len_short, c.dev.len_short) && close9(back.dev.len_long, c.dev.len_long) &&
                close9(back.dev.serial_gflops_wg, c.dev.serial_gflops_wg) && close9(back.dev.serial_wg, c.dev.serial_wg) && close9(back.dev.workgroup_us, c.dev.workgroup_us) && close9(back.dev.chain_gflops, c.dev.chain_gflops);
    for (int m = 0; m < WGF_MODE_COUNT; m++) same = same && close9(back.mode_us[m], c.mode_us[m]);
    wgf_t_check(&t, same, "save + load round trip, same adapter", "status %d: %s", (int)s, err.msg);

    /* every proper prefix of the file is refused (truncation anywhere) */
    char  *text = NULL;
    size_t len  = 0;
    FILE  *f    = fopen(good, "rb");
    if (f) {
        text = malloc(1 << 16);
        len  = fread(text, 1, (1 << 16) - 1, f);
        fclose(f);
    }
    bool all = text && len > 100;
    for (size_t n = 0; all && n + 1 < len; n += 7) {
        write_text(bad, text, n);
        all = wgf_calibration_load(bad, ctx, &back, &err) == WGF_ERR_FORMAT;
        if (!all) fprintf(stderr, "prefix of %zu bytes accepted\n", n);
    }
    wgf_t_check(&t, all, "every truncation refused", "%zu bytes", len);
    free(text);

    write_text(bad, "\x89PNG garbage {", 14);
    expect_refused(&t, ctx, bad, "not JSON refused", "corrupt");
    edited(&t, ctx, good, bad, NULL, "version", json_integer(WGF_CALIBRATION_VERSION + 1), "other version refused",
           "version");
    edited(&t, ctx, good, bad, NULL, "format", json_string("something-else"), "other format refused", "not a wgfuse");
    edited(&t, ctx, good, bad, "device", "read_gbps", NULL, "missing field refused", "read_gbps");
    edited(&t, ctx, good, bad, "device", "serial_gflops_wg", NULL, "missing serial term refused", "serial_gflops_wg");
    edited(&t, ctx, good, bad, "device", "dispatch_us_long", json_real(-1), "negative long-schedule cost refused",
           "dispatch_us_long");
    edited(&t, ctx, good, bad, "device", "gflops", json_real(0), "zero rate refused", "gflops");
    /* numbers no device has, which overflowed the model's sums ("predicted inf ms, -nanx faster") */
    edited(&t, ctx, good, bad, "device", "workgroup_us", json_real(1e308), "1e308 refused", "'workgroup_us' is 1e+308");
    edited(&t, ctx, good, bad, "device", "chain_gflops", json_real(1e-300), "a rate of 1e-300 refused", "chain_gflops");
    edited(&t, ctx, good, bad, "dispatch_us_by_mode", "one_pass", json_real(1e300), "1e300 per dispatch refused", "one_pass");
    edited(&t, ctx, good, bad, "dispatch_us_by_mode", "wait_each", json_real(-1), "negative cost refused", "wait_each");
    edited(&t, ctx, good, bad, "device", "dispatch_us", json_string("fast"), "string for a number refused",
           "dispatch_us");
    edited(&t, ctx, good, bad, NULL, "adapter", json_string("Some Other GPU"), "another adapter refused",
           "another adapter");
    /* ...but accepted as a device description for any adapter (ctx NULL) */
    s = wgf_calibration_load(bad, NULL, &back, &err);
    wgf_t_check(&t, s == WGF_OK && !strcmp(back.adapter, "Some Other GPU"), "any-adapter load takes it", "%s",
                err.msg);

    snprintf(path, sizeof path, "%s/none.json", dir);
    s = wgf_calibration_load(path, ctx, &back, &err);
    wgf_t_check(&t, s == WGF_ERR_IO, "missing file: WGF_ERR_IO", "status %d", (int)s);

    char xdg[700], p2[4096];
    snprintf(xdg, sizeof xdg, "%s/xdg", dir);
    mkdir(xdg, 0755);
    setenv("XDG_CACHE_HOME", xdg, 1);
    s = wgf_calibration_path(ctx, path, sizeof path, &err);
    if (!s) s = wgf_calibration_path(ctx, p2, sizeof p2, &err);
    struct stat st;
    char        sub[800];
    snprintf(sub, sizeof sub, "%s/wgfuse/calibration-", xdg);
    wgf_t_check(&t, !s && !strncmp(path, sub, strlen(sub)) && !strcmp(path, p2) && strstr(path, ".json") &&
                        stat(xdg, &st) == 0,
                "cache path under $XDG_CACHE_HOME/wgfuse, stable", "%s", s ? err.msg : path);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", dir, 1);
    s = wgf_calibration_path(ctx, path, sizeof path, &err);
    snprintf(sub, sizeof sub, "%s/.cache/wgfuse/calibration-", dir);
    char made[800];
    snprintf(made, sizeof made, "%s/.cache/wgfuse", dir);
    wgf_t_check(&t, !s && !strncmp(path, sub, strlen(sub)) && stat(made, &st) == 0 && S_ISDIR(st.st_mode),
                "cache path under $HOME/.cache/wgfuse, created", "%s", s ? err.msg : path);
done:
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
