/* bench statistics, references and f16 conversion against known values (no GPU). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/bench.h"

static bool near(double a, double b, double tol) { return fabs(a - b) <= tol; }

static void test_median_and_stats(struct wgf_t *t)
{
    double odd[3] = {5, 1, 3}, even[4] = {4, 1, 3, 2};
    wgf_t_check(t, wgf_stats_median(odd, 3) == 3, "median odd", "%g", wgf_stats_median(odd, 3));
    wgf_t_check(t, wgf_stats_median(even, 4) == 2.5, "median even", "%g", wgf_stats_median(even, 4));
    wgf_t_check(t, odd[0] == 5 && even[0] == 4, "median leaves input", NULL);

    /* mean 5, sample sd sqrt(32/7), quartiles (numpy linear) 4 and 5.5, 9 beyond q3 + 1.5 IQR */
    double          x[8] = {2, 4, 4, 4, 5, 5, 7, 9};
    struct wgf_stats s;
    struct wgf_err  err = {0};
    wgf_t_check(t, wgf_stats_compute(x, 8, &s, &err) == WGF_OK, "stats ok", "%s", err.msg);
    wgf_t_check(t, s.n == 8 && s.median == 4.5 && s.mean == 5 && s.min == 2 && s.max == 9, "stats median/mean/min/max",
                "median %g mean %g", s.median, s.mean);
    wgf_t_check(t, near(s.stddev, sqrt(32.0 / 7), 1e-12) && near(s.cv, sqrt(32.0 / 7) / 5, 1e-12), "stats sd/cv",
                "sd %.15g cv %.15g", s.stddev, s.cv);
    wgf_t_check(t, s.q1 == 4 && s.q3 == 5.5, "stats quartiles", "%g %g", s.q1, s.q3);
    wgf_t_check(t, s.n_outliers == 1, "stats outliers counted (kept)", "%d", s.n_outliers);
    wgf_t_check(t, s.ci_lo <= s.median && s.median <= s.ci_hi && s.ci_lo >= 2 && s.ci_hi <= 9, "bootstrap CI brackets",
                "[%g, %g]", s.ci_lo, s.ci_hi);
    struct wgf_stats s2;
    wgf_stats_compute(x, 8, &s2, &err);
    wgf_t_check(t, s2.ci_lo == s.ci_lo && s2.ci_hi == s.ci_hi, "bootstrap CI reproducible", NULL);

    double c[5] = {7, 7, 7, 7, 7};
    wgf_stats_compute(c, 5, &s, &err);
    wgf_t_check(t, s.ci_lo == 7 && s.ci_hi == 7 && s.cv == 0 && s.n_outliers == 0, "constant samples", NULL);
    wgf_stats_compute(c, 1, &s, &err);
    wgf_t_check(t, s.median == 7 && s.stddev == 0, "one sample", NULL);

    double bad[2] = {1, NAN};
    wgf_t_check(t, wgf_stats_compute(bad, 2, &s, &err) == WGF_ERR_ARG, "NaN sample rejected", "%s", err.msg);
    wgf_t_check(t, wgf_stats_compute(x, 0, &s, &err) == WGF_ERR_ARG, "no samples rejected", "%s", err.msg);
}

static void test_t_and_fit(struct wgf_t *t)
{
    wgf_t_check(t, wgf_stats_t975(1) == 12.706 && wgf_stats_t975(10) == 2.228 && wgf_stats_t975(30) == 2.042,
                "t975 table", NULL);
    /* t_{0.975}(31) = 2.0395, (100) = 1.9840, (1000) = 1.9623 */
    wgf_t_check(t, near(wgf_stats_t975(31), 2.0395, 5e-4) && near(wgf_stats_t975(100), 1.9840, 5e-4) &&
                       near(wgf_stats_t975(1000), 1.9623, 5e-4),
                "t975 large df", "%.5f %.5f %.5f", wgf_stats_t975(31), wgf_stats_t975(100), wgf_stats_t975(1000));

    double            xs[5] = {1, 2, 4, 8, 16}, ys[5];
    struct wgf_linfit f;
    struct wgf_err    err = {0};
    for (int i = 0; i < 5; i++) ys[i] = 3 + 2 * xs[i];
    enum wgf_status st = wgf_linfit_compute(xs, ys, 5, &f, &err);
    wgf_t_check(t, st == WGF_OK && near(f.slope, 2, 1e-12) &&
                       near(f.intercept, 3, 1e-12) && near(f.r2, 1, 1e-12) && f.resid_rms < 1e-12,
                "linfit exact line", "slope %g intercept %g", f.slope, f.intercept);
    /* by hand: slope 1.1, intercept 1.1, residuals -0.1 0.8 -1.3 0.6, SSE 2.7,
     * slope CI = t(2) sqrt(SSE/2/Sxx) = 4.303 sqrt(0.27) */
    double x4[4] = {0, 1, 2, 3}, y4[4] = {1, 3, 2, 5};
    wgf_linfit_compute(x4, y4, 4, &f, &err);
    wgf_t_check(t, near(f.slope, 1.1, 1e-12) && near(f.intercept, 1.1, 1e-12), "linfit slope/intercept", "%g %g",
                f.slope, f.intercept);
    wgf_t_check(t, near(f.resid_rms, sqrt(2.7 / 4), 1e-12) && near(f.resid_max, 1.3, 1e-12), "linfit residuals",
                "rms %g max %g", f.resid_rms, f.resid_max);
    wgf_t_check(t, near(f.slope_ci, 4.303 * sqrt(0.27), 1e-9), "linfit slope CI", "%g", f.slope_ci);
    double same[3] = {2, 2, 2};
    wgf_t_check(t, wgf_linfit_compute(same, ys, 3, &f, &err) == WGF_ERR_ARG, "linfit equal x rejected", "%s", err.msg);
}

static void test_refs(struct wgf_t *t)
{
    float x[4] = {1, 2, 3, 4}, w[4] = {1, 1, 2, 1}, y[4];
    wgf_ref_rmsnorm(y, x, w, 4, 0.0f); /* mean square 7.5 */
    double sc = 1 / sqrt(7.5);
    wgf_t_check(t, near(y[0], sc, 1e-6) && near(y[2], 6 * sc, 1e-6), "ref rmsnorm", "%g %g", y[0], y[2]);

    float m[6] = {1, 2, 3, 4, 5, 6}, v[3] = {1, 0.5f, -1}, r[2] = {10, 20}, o[2];
    wgf_ref_matvec(o, v, m, r, 2, 3); /* [1+1-3, 4+2.5-6] + [10, 20] */
    wgf_t_check(t, o[0] == 9 && o[1] == 20.5f, "ref matvec + residual", "%g %g", o[0], o[1]);

    float sx[6] = {0, 0, 0, 1000, 1000, -1000}, sy[6];
    wgf_ref_softmax(sy, sx, 2, 3);
    wgf_t_check(t, near(sy[0], 1.0 / 3, 1e-7) && near(sy[3], 0.5, 1e-7) && sy[5] == 0, "ref softmax (no overflow)",
                NULL);

    float a[5] = {1, 7, NAN, 7, 3};
    wgf_t_check(t, wgf_ref_argmax(a, 5) == 1, "ref argmax: lowest index on ties, NaN never wins", "%u",
                wgf_ref_argmax(a, 5));

    /* MLP by hand: hidden 1, inter 1: y = x + wd * silu(wg x) * (wu x) */
    float mx[1] = {2}, wgu[2] = {0.5f, 3}, wd[1] = {0.25f}, my[1];
    wgf_ref_mlp(my, mx, wgu, wd, 1, 1);
    double g = 1.0, want = 2 + 0.25 * (g / (1 + exp(-g))) * 6;
    wgf_t_check(t, near(my[0], want, 1e-6), "ref mlp", "%g vs %g", my[0], want);
}

static void test_f16(struct wgf_t *t)
{
    struct {
        float    f;
        uint16_t h;
    } k[] = {{1.0f, 0x3c00}, {-2.0f, 0xc000}, {65504.0f, 0x7bff}, {0.1f, 0x2e66}, {5.9604645e-8f, 0x0001},
             {1e-8f, 0x0000}, {1e6f, 0x7c00}, {0.33325195f, 0x3555}, {1.0009766f, 0x3c01}};
    bool ok = true;
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        uint16_t h = wgf_f32_to_f16(k[i].f);
        if (h != k[i].h) {
            ok = false;
            printf("  f32 %g -> %04x, expected %04x\n", k[i].f, h, k[i].h);
        }
    }
    wgf_t_check(t, ok, "f32 -> f16 known values", NULL);
    /* every finite f16 round-trips */
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00) continue;
        if (wgf_f32_to_f16(wgf_f16_to_f32((uint16_t)h)) != h) bad++;
    }
    wgf_t_check(t, bad == 0, "f16 -> f32 -> f16 round trip", "%d mismatches", bad);
    /* ties to even: 1 + 2^-11 is halfway between 0x3c00 and 0x3c01 */
    wgf_t_check(t, wgf_f32_to_f16(1.00048828125f) == 0x3c00, "f16 ties to even", NULL);
}

/* wgf_stats_ratio: the ratio of medians, a bootstrap CI that contains it and narrows to a
 * point for constant samples, and refusals of a non-positive denominator or NaN. */
static void test_ratio(struct wgf_t *t)
{
    double           a[5] = {10, 12, 11, 13, 9}, b[5] = {5, 6, 5.5, 4, 7}, c[3] = {2, 2, 2}, d[3] = {4, 4, 4};
    struct wgf_ratio q   = {0};
    struct wgf_err   err = {0};
    enum wgf_status s = wgf_stats_ratio(a, 5, b, 5, &q, &err); /* before the checks read q */
    wgf_t_check(t, s == WGF_OK && q.ratio == 11.0 / 5.5, "ratio of medians", "%g (%s)", q.ratio, err.msg);
    wgf_t_check(t, q.ci_lo <= q.ratio && q.ratio <= q.ci_hi && q.ci_lo < q.ci_hi && q.ci_lo >= 9.0 / 7 &&
                       q.ci_hi <= 13.0 / 4,
                "ratio CI contains the ratio, within the extremes", "[%g, %g]", q.ci_lo, q.ci_hi);
    s = wgf_stats_ratio(d, 3, c, 3, &q, &err);
    wgf_t_check(t, s == WGF_OK && q.ratio == 2 && q.ci_lo == 2 && q.ci_hi == 2,
                "constant samples: a point", "%g [%g, %g]", q.ratio, q.ci_lo, q.ci_hi);
    double zero[2] = {1, 0}, nan[2] = {1, NAN};
    s = wgf_stats_ratio(a, 5, zero, 2, &q, &err);
    wgf_t_check(t, s == WGF_ERR_ARG && strstr(err.msg, "denominator"),
                "ratio: zero denominator refused", "%s", err.msg);
    s = wgf_stats_ratio(nan, 2, b, 5, &q, &err);
    wgf_t_check(t, s == WGF_ERR_ARG, "ratio: NaN refused", "%s", err.msg);
}

int main(void)
{
    struct wgf_t t = {0};
    test_median_and_stats(&t);
    test_ratio(&t);
    test_t_and_fit(&t);
    test_refs(&t);
    test_f16(&t);
    return wgf_t_finish(&t);
}
