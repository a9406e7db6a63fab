/* wgfuse bench — SVG plots: wall time vs N dispatches per recording mode (log-log), and
 * fused vs unfused bars per experiment. Plain SVG 1.1, no scripts, fixed palette. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "wgfuse/bench.h"

static void wgf__xml(FILE *f, const char *s);

static const char *const wgf__palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

static enum wgf_status wgf__svg_open(FILE **f, char **buf, size_t *len, int w, int h, struct wgf_err *err)
{
    *buf = NULL;
    *f   = open_memstream(buf, len);
    if (!*f) return wgf_fail(err, WGF_ERR_NOMEM, "bench: open_memstream");
    fprintf(*f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            w, h, w, h);
    return WGF_OK;
}

/* wgf__svg_open, then the title (escaped) and a grey subtitle line */
static enum wgf_status wgf__svg_open_titled(FILE **f, char **buf, size_t *len, int w, int h, const char *title,
                                            const char *subtitle, struct wgf_err *err)
{
    enum wgf_status s = wgf__svg_open(f, buf, len, w, h, err);
    if (s) return s;
    fprintf(*f, "<text x=\"10\" y=\"24\" font-size=\"15\">");
    wgf__xml(*f, title);
    fprintf(*f, "</text>\n<text x=\"10\" y=\"40\" fill=\"#555\">%s</text>\n", subtitle);
    return WGF_OK;
}

/* buf is read after fclose: open_memstream publishes the pointer only then. */
static enum wgf_status wgf__svg_close(FILE *f, char **buf, char **out, struct wgf_err *err)
{
    fprintf(f, "</svg>\n");
    if (fclose(f) != 0 || !*buf) {
        free(*buf);
        return wgf_fail(err, WGF_ERR_NOMEM, "bench: SVG rendering failed");
    }
    *out = *buf;
    return WGF_OK;
}

/* Text with the five XML specials escaped. */
static void wgf__xml(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc(*s, f);
        }
    }
}

enum wgf_status wgf_bench_dispatch_svg(const struct wgf_dispatch_report *r, char **out, struct wgf_err *err)
{
    const int W = 760, H = 480, L = 80, R = 220, T = 50, B = 60;
    const int pw = W - L - R, ph = H - T - B;
    double    xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
    for (int m = 0; m < WGF_MODE_COUNT; m++) {
        const struct wgf_dispatch_mode_result *x = &r->mode[0][m];
        for (int i = 0; x->ran && i < x->n_points; i++) {
            xmin = fmin(xmin, x->ns[i]);
            xmax = fmax(xmax, x->ns[i]);
            ymin = fmin(ymin, x->t_us[i]);
            ymax = fmax(ymax, x->t_us[i]);
        }
    }
    if (!(xmax > 0) || !(ymin > 0)) return wgf_fail(err, WGF_ERR_ARG, "bench: nothing to plot");
    /* decades that cover the data */
    double lx0 = floor(log10(xmin)), lx1 = ceil(log10(xmax)), ly0 = floor(log10(ymin)), ly1 = ceil(log10(ymax));
    if (lx1 <= lx0) lx1 = lx0 + 1;
    if (ly1 <= ly0) ly1 = ly0 + 1;
#define PX(v) (L + (log10(v) - lx0) / (lx1 - lx0) * pw)
#define PY(v) (T + ph - (log10(v) - ly0) / (ly1 - ly0) * ph)
    FILE           *f;
    char           *buf;
    size_t          len;
    enum wgf_status s = wgf__svg_open(&f, &buf, &len, W, H, err);
    if (s) return s;
    fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"15\">Wall time vs N dispatches (f32), ", L);
    wgf__xml(f, r->adapter);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"40\" fill=\"#555\">median of %d sweeps; slope = per-dispatch cost; ",
            L, r->opts.reps);
    wgf__xml(f, r->date);
    fprintf(f, "</text>\n");
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>\n", L, T, pw, ph);
    for (double e = lx0; e <= lx1; e++) {
        double x = L + (e - lx0) / (lx1 - lx0) * pw;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, T, x, T + ph);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", x, T + ph + 16, pow(10, e));
    }
    for (double e = ly0; e <= ly1; e++) {
        double y = T + ph - (e - ly0) / (ly1 - ly0) * ph;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, y, L + pw, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 6, y + 4, pow(10, e));
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">N dispatches</text>\n", L + pw / 2, H - 20);
    fprintf(f, "<text x=\"20\" y=\"%d\" transform=\"rotate(-90 20 %d)\" text-anchor=\"middle\">wall time (us)</text>\n",
            T + ph / 2, T + ph / 2);
    int row = 0;
    for (int m = 0; m < WGF_MODE_COUNT; m++) {
        const struct wgf_dispatch_mode_result *x = &r->mode[0][m];
        if (!x->ran) continue;
        const char *col = wgf__palette[m % 6];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
        for (int i = 0; i < x->n_points; i++) fprintf(f, "%.1f,%.1f ", PX(x->ns[i]), PY(x->t_us[i]));
        fprintf(f, "\"/>\n");
        for (int i = 0; i < x->n_points; i++)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", PX(x->ns[i]), PY(x->t_us[i]), col);
        int ly = T + 10 + 36 * row++;
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>\n", L + pw + 12,
                ly, L + pw + 32, ly, col);
        fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", L + pw + 38, ly + 4,
                wgf_dispatch_mode_name((enum wgf_dispatch_mode)m));
        fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555\">%.2f us/dispatch</text>\n", L + pw + 38, ly + 18,
                x->per_dispatch_us.median);
    }
#undef PX
#undef PY
    return wgf__svg_close(f, &buf, out, err);
}

enum wgf_status wgf_bench_fusion_svg(const struct wgf_fusion_result *r, int n, const char *title, char **out,
                                     struct wgf_err *err)
{
    /* one panel row per experiment: horizontal bars scaled to that experiment's slowest
     * variant, so experiments of very different cost stay readable */
    const int W = 760, rowh = 22, L = 190, R = 170, T = 50;
    int       nbars = 0;
    for (int e = 0; e < n; e++) nbars += r[e].n_variants + 1;
    const int H  = T + nbars * rowh + 30;
    const int pw = W - L - R;
    FILE     *f;
    char     *buf;
    size_t    len;
    enum wgf_status s = wgf__svg_open_titled(&f, &buf, &len, W, H, title ? title : "fusion",
                                             "us per iteration (median, whiskers = 95% CI); bars scaled per experiment",
                                             err);
    if (s) return s;
    int y = T;
    for (int e = 0; e < n; e++) {
        const struct wgf_fusion_result *x = &r[e];
        fprintf(f, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">", y + 15);
        wgf__xml(f, x->name);
        fprintf(f, "%s</text>\n", x->ran ? "" : " (skipped)");
        y += rowh;
        double vmax = 0;
        for (int i = 0; i < x->n_variants; i++)
            if (x->v[i].correct && x->v[i].us.n) vmax = fmax(vmax, x->v[i].us.ci_hi);
        for (int i = 0; i < x->n_variants; i++) {
            const struct wgf_fusion_variant *v = &x->v[i];
            fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", L - 8, y + 15);
            wgf__xml(f, v->name);
            fprintf(f, "</text>\n");
            if (!v->correct) {
                fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#d62728\">WRONG (not timed)</text>\n", L + 4, y + 15);
            } else if (v->us.n && vmax > 0) {
                double bw = v->us.median / vmax * pw, lo = v->us.ci_lo / vmax * pw, hi = v->us.ci_hi / vmax * pw;
                fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n", L, y + 4, bw,
                        rowh - 8, wgf__palette[i % 6]);
                fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\"/>\n", L + lo,
                        y + rowh / 2, L + hi, y + rowh / 2);
                fprintf(f, "<text x=\"%d\" y=\"%d\">%.1f us", L + pw + 8, y + 15, v->us.median);
                if (i > 0) fprintf(f, "  %.2fx", v->speedup);
                fprintf(f, "</text>\n");
            }
            y += rowh;
        }
    }
    return wgf__svg_close(f, &buf, out, err);
}

enum wgf_status wgf_bench_dial_svg(const struct wgf_dial_point *p, int n, double dispatch_us, double bytes_floor,
                                   const char *title, char **out, struct wgf_err *err)
{
    const int W = 760, H = 480, L = 80, R = 200, T = 50, B = 60;
    const int pw = W - L - R, ph = H - T - B;
    /* log-log: x = dispatches per token, y = tok/s; bounds cover the points and the floors */
    double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
    for (int i = 0; i < n; i++) {
        if (!(p[i].dispatches > 0 && p[i].tok_s > 0)) continue;
        xmin = fmin(xmin, p[i].dispatches), xmax = fmax(xmax, p[i].dispatches);
        ymin = fmin(ymin, p[i].tok_s), ymax = fmax(ymax, p[i].tok_s);
    }
    if (!(xmax > 0)) return wgf_fail(err, WGF_ERR_ARG, "bench: dial plot needs a point with dispatches and tok/s > 0");
    if (bytes_floor > 0) ymax = fmax(ymax, bytes_floor);
    xmin = pow(10, floor(log10(xmin))), xmax = pow(10, ceil(log10(xmax * 1.01)));
    ymin = pow(10, floor(log10(ymin))), ymax = pow(10, ceil(log10(ymax * 1.01)));
    double lx0 = log10(xmin), lx1 = log10(xmax), ly0 = log10(ymin), ly1 = log10(ymax);
#define DIAL_X(v) (L + (log10(v) - lx0) / (lx1 - lx0) * pw)
#define DIAL_Y(v) (T + ph - (log10(v) - ly0) / (ly1 - ly0) * ph)
    FILE           *f;
    char           *buf;
    size_t          len;
    enum wgf_status s = wgf__svg_open_titled(&f, &buf, &len, W, H, title ? title : "fusion dial",
                                             "decode tok/s (median) vs dispatches per token, log-log; whiskers = 95% CI",
                                             err);
    if (s) return s;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n", L, T, pw, ph);
    for (double d = xmin; d <= xmax * 1.001; d *= 10)
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", DIAL_X(d), T + ph + 16, d);
    for (double v = ymin; v <= ymax * 1.001; v *= 10)
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 6, DIAL_Y(v) + 4, v);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">dispatches per token</text>\n", L + pw / 2, H - 20);
    fprintf(f, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">tok/s</text>\n",
            T + ph / 2, T + ph / 2);
    int ly = T + 10;
    if (dispatch_us > 0) { /* tok/s <= 1e6 / (dispatches x us): a line of slope -1 */
        double xa = xmin, xb = xmax, ya = 1e6 / (xa * dispatch_us), yb = 1e6 / (xb * dispatch_us);
        if (ya > ymax) xa = 1e6 / (ymax * dispatch_us), ya = ymax;
        if (yb < ymin) xb = 1e6 / (ymin * dispatch_us), yb = ymin;
        if (xa < xb)
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ff7f0e\" stroke-dasharray=\"6 4\"/>\n",
                    DIAL_X(xa), DIAL_Y(ya), DIAL_X(xb), DIAL_Y(yb));
        fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#ff7f0e\">dispatch floor (%.2f us each)</text>\n", L + pw + 10, ly,
                dispatch_us);
        ly += 18;
    }
    if (bytes_floor > 0) {
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#2ca02c\" stroke-dasharray=\"6 4\"/>\n", L,
                DIAL_Y(bytes_floor), L + pw, DIAL_Y(bytes_floor));
        fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#2ca02c\">bytes floor (%.0f tok/s)</text>\n", L + pw + 10, ly,
                bytes_floor);
        ly += 18;
    }
    for (int i = 0; i < n; i++) {
        if (!(p[i].dispatches > 0 && p[i].tok_s > 0)) continue;
        double x = DIAL_X(p[i].dispatches), y = DIAL_Y(p[i].tok_s);
        if (p[i].ci_lo > 0 && p[i].ci_hi > 0)
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n", x,
                    DIAL_Y(p[i].ci_lo), x, DIAL_Y(p[i].ci_hi));
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"/>\n<text x=\"%.1f\" y=\"%.1f\">", x, y,
                wgf__palette[i % 6], x + 8, y - 6);
        wgf__xml(f, p[i].label);
        fprintf(f, " %.0f</text>\n", p[i].tok_s);
    }
#undef DIAL_X
#undef DIAL_Y
    return wgf__svg_close(f, &buf, out, err);
}
