#include "harness.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "util/sanitize_pin.h"
#include "wgfuse/gpu.h"

bool wgf_t_check(struct wgf_t *t, bool ok, const char *name, const char *fmt, ...)
{
    char detail[1024] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
    }
    printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name, detail[0] ? ": " : "", detail);
    fflush(stdout);
    if (ok) t->passed++;
    else t->failed++;
    return ok;
}

void wgf_t_skip(struct wgf_t *t, const char *name, const char *reason)
{
    printf("SKIP %s: %s\n", name, reason);
    t->skipped++;
}

int wgf_t_finish(const struct wgf_t *t)
{
    printf("%d passed, %d failed, %d skipped\n", t->passed, t->failed, t->skipped);
    if (t->failed) return 1;
    if (t->passed == 0 && t->skipped > 0) return 77;
    if (t->passed == 0) return 1; /* a test binary that checked nothing is a defect */
    return 0;
}

struct wgf_ctx *wgf_t_gpu(struct wgf_t *t) { return wgf_t_gpu_timeout(t, 0); }

struct wgf_ctx *wgf_t_gpu_timeout(struct wgf_t *t, uint32_t timeout_ms)
{
    wgf_sanitize_pin_drivers();
    struct wgf_gpu_options opt = wgf_gpu_options_default();
    if (timeout_ms) opt.timeout_ms = timeout_ms;
    struct wgf_ctx *ctx = NULL;
    struct wgf_err err = {0};
    enum wgf_status s = wgf_ctx_create(&opt, &ctx, &err);
    if (s != WGF_OK) {
        wgf_t_check(t, false, "gpu context", "%s", err.msg);
        return NULL;
    }
    return ctx;
}

double wgf_t_max_abs_diff(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (d != d) return INFINITY;
        if (d > m) m = d;
    }
    return m;
}

double wgf_t_rel_l2(const float *a, const float *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)b[i];
        num += d * d;
        den += (double)b[i] * (double)b[i];
    }
    if (num != num) return INFINITY;
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

void wgf_t_fill(struct wgf_rng *r, float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) x[i] = wgf_rng_uniform(r, lo, hi);
    if (n && x[0] == 0.0f) x[0] = hi * 0.5f + lo * 0.5f + 0.125f;
}

const char *wgf_t_tmpdir(const char *name, char *buf, size_t cap)
{
    const char *base = getenv("WGF_TEST_TMP");
    if (!base) base = "/tmp";
    snprintf(buf, cap, "%s/%s", base, name);
    mkdir(base, 0755);
    mkdir(buf, 0755);
    return buf;
}

int wgf_t_run(const char *cmd, char *out, size_t cap)
{
    char full[8192];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *f = popen(full, "r");
    if (!f) return -1;
    size_t n = 0;
    int c;
    while ((c = fgetc(f)) != EOF)
        if (n + 1 < cap) out[n++] = (char)c;
    if (cap) out[n < cap ? n : cap - 1] = '\0';
    int st = pclose(f);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

const char *wgf_t_cli(void)
{
    const char *c = getenv("WGF_CLI");
    return c && *c ? c : "wgfuse";
}

const char *wgf_t_tiny_llama(void)
{
    const char *d = getenv("WGF_TINY_LLAMA");
    return d && *d ? d : "tiny_llama";
}
