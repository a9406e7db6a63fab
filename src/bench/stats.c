/* wgfuse bench — statistics: median, bootstrap CI, CV, outliers, least-squares line.
 *
 * The CI of the median is a percentile bootstrap (2000 resamples) with a fixed seed, so the
 * same samples always print the same interval. Outliers are counted with Tukey's fences and
 * kept in every statistic: a benchmark that drops its slow runs hides the cost it measures. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"
#include "wgfuse/bench.h"

#define WGF__BOOT_RESAMPLES 2000
#define WGF__BOOT_SEED      0x5eedb007ull

static int wgf__cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile of sorted s[0..n) at p in [0,1], linear interpolation between order statistics. */
static double wgf__quantile_sorted(const double *s, int n, double p)
{
    if (n == 1) return s[0];
    double h  = p * (n - 1);
    int    lo = (int)floor(h);
    if (lo >= n - 1) return s[n - 1];
    return s[lo] + (h - lo) * (s[lo + 1] - s[lo]);
}

double wgf_stats_median(const double *x, int n)
{
    if (n <= 0) return NAN;
    double *s = malloc(sizeof *s * (size_t)n);
    if (!s) return NAN;
    memcpy(s, x, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, wgf__cmp_double);
    double m = wgf__quantile_sorted(s, n, 0.5);
    free(s);
    return m;
}

double wgf_stats_t975(int df)
{
    /* Exact table for small df; beyond 30 the Cornish-Fisher expansion around z = 1.96
     * is accurate to < 1e-4. */
    static const double t[31] = {NAN,    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
                                 2.074,  2.069,  2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (df < 1) return NAN;
    if (df <= 30) return t[df];
    double z = 1.959963985, z3 = z * z * z, z5 = z3 * z * z, d = df;
    return z + (z3 + z) / (4 * d) + (5 * z5 + 16 * z3 + 3 * z) / (96 * d * d);
}

enum wgf_status wgf_stats_compute(const double *x, int n, struct wgf_stats *out, struct wgf_err *err)
{
    if (!x || !out || n < 1) return wgf_fail(err, WGF_ERR_ARG, "stats: need at least one sample (n=%d)", n);
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return wgf_fail(err, WGF_ERR_ARG, "stats: sample %d is not finite", i);
    double *s = malloc(sizeof *s * (size_t)n * 2);
    if (!s) return wgf_fail(err, WGF_ERR_NOMEM, "stats: %d samples", n);
    double *boot = s + n;
    memcpy(s, x, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, wgf__cmp_double);

    memset(out, 0, sizeof *out);
    out->n      = n;
    out->min    = s[0];
    out->max    = s[n - 1];
    out->median = wgf__quantile_sorted(s, n, 0.5);
    out->q1     = wgf__quantile_sorted(s, n, 0.25);
    out->q3     = wgf__quantile_sorted(s, n, 0.75);
    double sum  = 0;
    for (int i = 0; i < n; i++) sum += s[i];
    out->mean = sum / n;
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (s[i] - out->mean) * (s[i] - out->mean);
    out->stddev = n > 1 ? sqrt(ss / (n - 1)) : 0;
    out->cv     = out->mean != 0 ? out->stddev / fabs(out->mean) : 0;
    double iqr = out->q3 - out->q1, lo = out->q1 - 1.5 * iqr, hi = out->q3 + 1.5 * iqr;
    for (int i = 0; i < n; i++) out->n_outliers += (s[i] < lo || s[i] > hi);

    /* Percentile bootstrap of the median. The resample reuses the tail of `s`'s allocation
     * one resample at a time; the medians go to a second array. */
    double *meds = malloc(sizeof *meds * WGF__BOOT_RESAMPLES);
    if (!meds) {
        free(s);
        return wgf_fail(err, WGF_ERR_NOMEM, "stats: bootstrap");
    }
    struct wgf_rng rng;
    wgf_rng_seed(&rng, WGF__BOOT_SEED);
    for (int b = 0; b < WGF__BOOT_RESAMPLES; b++) {
        for (int i = 0; i < n; i++) boot[i] = s[wgf_rng_below(&rng, (uint32_t)n)];
        qsort(boot, (size_t)n, sizeof *boot, wgf__cmp_double);
        meds[b] = wgf__quantile_sorted(boot, n, 0.5);
    }
    qsort(meds, WGF__BOOT_RESAMPLES, sizeof *meds, wgf__cmp_double);
    out->ci_lo = wgf__quantile_sorted(meds, WGF__BOOT_RESAMPLES, 0.025);
    out->ci_hi = wgf__quantile_sorted(meds, WGF__BOOT_RESAMPLES, 0.975);
    free(meds);
    free(s);
    return WGF_OK;
}

/* Median of one bootstrap resample of x[0..n) (tmp: n doubles). */
static double wgf__boot_median(const double *x, int n, double *tmp, struct wgf_rng *rng)
{
    for (int i = 0; i < n; i++) tmp[i] = x[wgf_rng_below(rng, (uint32_t)n)];
    qsort(tmp, (size_t)n, sizeof *tmp, wgf__cmp_double);
    return wgf__quantile_sorted(tmp, n, 0.5);
}

enum wgf_status wgf_stats_ratio(const double *a, int na, const double *b, int nb, struct wgf_ratio *out,
                                struct wgf_err *err)
{
    if (!a || !b || !out || na < 1 || nb < 1) return wgf_fail(err, WGF_ERR_ARG, "stats: ratio of %d / %d samples", na, nb);
    for (int i = 0; i < na + nb; i++) {
        double v = i < na ? a[i] : b[i - na];
        if (!isfinite(v) || (i >= na && v <= 0))
            return wgf_fail(err, WGF_ERR_ARG, "stats: ratio sample %d is %g (finite, denominator > 0)", i, v);
    }
    double *tmp = malloc(sizeof *tmp * ((size_t)(na > nb ? na : nb) + WGF__BOOT_RESAMPLES));
    if (!tmp) return wgf_fail(err, WGF_ERR_NOMEM, "stats: ratio bootstrap");
    double *r = tmp + (na > nb ? na : nb);
    out->ratio = wgf_stats_median(a, na) / wgf_stats_median(b, nb);
    struct wgf_rng rng;
    wgf_rng_seed(&rng, WGF__BOOT_SEED);
    for (int k = 0; k < WGF__BOOT_RESAMPLES; k++) {
        double ma = wgf__boot_median(a, na, tmp, &rng);
        r[k]      = ma / wgf__boot_median(b, nb, tmp, &rng);
    }
    qsort(r, WGF__BOOT_RESAMPLES, sizeof *r, wgf__cmp_double);
    out->ci_lo = wgf__quantile_sorted(r, WGF__BOOT_RESAMPLES, 0.025);
    out->ci_hi = wgf__quantile_sorted(r, WGF__BOOT_RESAMPLES, 0.975);
    free(tmp);
    return WGF_OK;
}

enum wgf_status wgf_linfit_compute(const double *x, const double *y, int n, struct wgf_linfit *out,
                                   struct wgf_err *err)
{
    if (!x || !y || !out || n < 2) return wgf_fail(err, WGF_ERR_ARG, "linfit: need at least two points (n=%d)", n);
    double mx = 0, my = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) return wgf_fail(err, WGF_ERR_ARG, "linfit: point %d not finite", i);
        mx += x[i];
        my += y[i];
    }
    mx /= n;
    my /= n;
    double sxx = 0, sxy = 0, syy = 0;
    for (int i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
        syy += (y[i] - my) * (y[i] - my);
    }
    if (sxx <= 0) return wgf_fail(err, WGF_ERR_ARG, "linfit: all x equal (%g)", mx);
    memset(out, 0, sizeof *out);
    out->n         = n;
    out->slope     = sxy / sxx;
    out->intercept = my - out->slope * mx;
    double sse = 0;
    for (int i = 0; i < n; i++) {
        double r = y[i] - (out->intercept + out->slope * x[i]);
        sse += r * r;
        if (fabs(r) > out->resid_max) out->resid_max = fabs(r);
    }
    out->resid_rms = sqrt(sse / n);
    out->r2        = syy > 0 ? 1 - sse / syy : 1;
    if (n >= 3) out->slope_ci = wgf_stats_t975(n - 2) * sqrt(sse / (n - 2) / sxx);
    return WGF_OK;
}
