/* wgfuse runtime — the advisor's cost model (include/wgfuse/gpu_cost.h). */
#include <math.h>
#include <string.h>

#include "wgfuse/gpu_cost.h"

static bool finite_nonneg(double v) { return isfinite(v) && v >= 0; }

static bool usable(const struct wgf_device_cost *d)
{
    return d && finite_nonneg(d->dispatch_us) && d->read_gbps > 0 && d->gflops > 0 && isfinite(d->read_gbps) &&
           isfinite(d->gflops) && finite_nonneg(d->read_gbps_wg) && finite_nonneg(d->gflops_wg) &&
           finite_nonneg(d->dispatch_us_long) && finite_nonneg(d->len_short) && finite_nonneg(d->len_long) &&
           finite_nonneg(d->serial_gflops_wg) && finite_nonneg(d->serial_wg) && finite_nonneg(d->workgroup_us) && finite_nonneg(d->chain_gflops);
}

/* rate of a step over w workgroups (w 0: unknown, saturating) */
static double scaled(double whole, double per_wg, double w)
{
    if (w <= 0 || per_wg <= 0) return whole;
    double r = per_wg * w;
    return r < whole ? r : whole;
}

/* per-dispatch slope and per-submit fixed cost from the two measured schedule lengths:
 * t(n) = F + n s through (len_short, len_short d_short) and (len_long, len_long d_long) */
static void dispatch_fit(const struct wgf_device_cost *dev, double *s, double *F)
{
    double a = dev->len_short, b = dev->len_long;
    *s = dev->dispatch_us, *F = 0;
    if (!(dev->dispatch_us_long > 0) || !(a >= 1) || !(b > a)) return;
    *s = (b * dev->dispatch_us_long - a * dev->dispatch_us) / (b - a);
    if (*s < 0) *s = 0;
    *F = a * (dev->dispatch_us - *s);
    if (*F < 0) *F = 0;
}

double wgf_cost_dispatch_at(const struct wgf_device_cost *dev, double n)
{
    double s, F;
    dispatch_fit(dev, &s, &F);
    return n >= 1 ? s + F / n : s + F;
}

enum wgf_status wgf_cost_step_at(const struct wgf_device_cost *dev, const struct wgf_step_info *st, double dispatch_us,
                                 double *us, enum wgf_cost_bound *bound)
{
    *us    = 0;
    *bound = WGF_BOUND_DISPATCH;
    if (!usable(dev) || !st || !finite_nonneg(dispatch_us)) return WGF_ERR_ARG;
    double w = 0;
    if (st->kind == WGF_STEP_DISPATCH) w = (double)st->grid[0] * st->grid[1] * st->grid[2];
    /* a step whose emitter gave its workgroup size: the one-workgroup figures (measured at
     * WGF_COST_WG_CAL invocations) scaled by its share of that (warps on a GPU) */
    double share = st->wg_size && st->wg_size < WGF_COST_WG_CAL ? (double)st->wg_size / WGF_COST_WG_CAL : 1.0;
    double bytes = (double)(st->cost.bytes_read + st->cost.bytes_written);
    double flops = (double)st->cost.flops;
    double t_b   = bytes / (scaled(dev->read_gbps, dev->read_gbps_wg * share, w) * 1e3); /* GB/s -> bytes/us */
    double t_f   = flops / (scaled(dev->gflops, dev->gflops_wg * share, w) * 1e3);
    double t_s   = 0;
    /* the serial term: one-workgroup steps whose emitter does not describe its work's shape
     * (the LLM plans' mega-style kernels: a matvec row loop through one compute unit); the
     * simulation's steps give their workgroup size and dependent chain, the chain term's */
    if (dev->serial_gflops_wg > 0 && w == 1 && st->kind == WGF_STEP_DISPATCH && !st->wg_size && !st->chain_flops)
        t_s = flops / (scaled(dev->gflops, dev->serial_gflops_wg, w) * 1e3);
    /* launching the grid: the dispatch, plus per workgroup what the device pays to start one
     * (workgroup_us, measured over a large grid: microseconds on a CPU adapter, ~0 on a GPU) */
    double t = dispatch_us + (w > 0 ? w * dev->workgroup_us : 0);
    if (t_b > t) t = t_b, *bound = WGF_BOUND_BYTES;
    if (t_f > t) t = t_f, *bound = WGF_BOUND_FLOPS;
    if (t_s > t) t = t_s, *bound = WGF_BOUND_SERIAL;
    double P     = dev->gflops_wg > 0 ? fmax(1.0, floor(dev->gflops / dev->gflops_wg + 0.5)) : 1.0;
    double waves = w > 0 ? ceil(w / P) : 1.0;
    if (st->chain_flops && dev->chain_gflops > 0) {
        double t_c = waves * (double)st->chain_flops / (dev->chain_gflops * 1e3);
        if (t_c > t) t = t_c, *bound = WGF_BOUND_CHAIN;
    }
    if (st->barriers && dev->barrier_ns > 0) {
        double t_bar = waves * (double)st->barriers * dev->barrier_ns * 1e-3;
        if (t_bar > t) *bound = WGF_BOUND_BARRIER;
        t += t_bar;
    }
    *us = t;
    return WGF_OK;
}

enum wgf_status wgf_cost_step(const struct wgf_device_cost *dev, const struct wgf_step_info *st, double *us,
                              enum wgf_cost_bound *bound)
{
    return wgf_cost_step_at(dev, st, dev ? dev->dispatch_us : 0, us, bound);
}

enum wgf_status wgf_cost_predict_replayed(const struct wgf_device_cost *dev, const struct wgf_step_info *steps,
                                          uint32_t n, uint32_t replays, struct wgf_cost_prediction *out)
{
    memset(out, 0, sizeof *out);
    if (!usable(dev) || (n && !steps)) return WGF_ERR_ARG;
    uint32_t disp = 0;
    for (uint32_t i = 0; i < n; i++) disp += steps[i].kind != WGF_STEP_COPY;
    double d = wgf_cost_dispatch_at(dev, (double)disp * (replays ? replays : 1));
    for (uint32_t i = 0; i < n; i++) {
        double              t;
        enum wgf_cost_bound b;
        enum wgf_status     s = wgf_cost_step_at(dev, &steps[i], d, &t, &b);
        if (s) return s;
        out->total_us += t;
        out->bound_us[b] += t;
        out->steps++;
        out->bytes += steps[i].cost.bytes_read + steps[i].cost.bytes_written;
        out->flops += steps[i].cost.flops;
    }
    out->dispatches  = disp;
    out->dispatch_us = d;
    return WGF_OK;
}

enum wgf_status wgf_cost_predict(const struct wgf_device_cost *dev, const struct wgf_step_info *steps, uint32_t n,
                                 struct wgf_cost_prediction *out)
{
    return wgf_cost_predict_replayed(dev, steps, n, 1, out);
}

double wgf_cost_dispatch_share(const struct wgf_cost_prediction *p)
{
    return p && p->total_us > 0 ? p->bound_us[WGF_BOUND_DISPATCH] / p->total_us : 0;
}

const char *wgf_cost_bound_name(enum wgf_cost_bound b)
{
    return b == WGF_BOUND_BYTES    ? "bytes"
           : b == WGF_BOUND_FLOPS  ? "flops"
           : b == WGF_BOUND_SERIAL ? "serial"
           : b == WGF_BOUND_BARRIER ? "barrier"
           : b == WGF_BOUND_CHAIN  ? "chain"
                                    : "dispatch";
}

void wgf_cost_crossover(const struct wgf_device_cost *dev, struct wgf_step_cost c, uint32_t dispatches,
                        double dispatch_us, uint32_t batch, struct wgf_cost_crossover *out)
{
    memset(out, 0, sizeof *out);
    if (!usable(dev) || c.flops == 0) return;
    double t_f1 = (double)c.flops / (dev->gflops * 1e3);                             /* us per batch item */
    double t_d  = (double)dispatches * dispatch_us;
    double t_b  = (double)(c.bytes_read + c.bytes_written) / (dev->read_gbps * 1e3);
    out->b_dispatch = t_d / t_f1;
    out->b_bytes    = t_b / t_f1;
    out->b_star     = out->b_dispatch > out->b_bytes ? out->b_dispatch : out->b_bytes;
    double B        = batch ? (double)batch : 1.0;
    out->us_at_1    = fmax(t_d, fmax(t_b, t_f1));
    out->us_at_b    = fmax(t_d, fmax(t_b, B * t_f1));
    out->bound_at_b = B * t_f1 >= fmax(t_d, t_b) ? WGF_BOUND_FLOPS : t_b > t_d ? WGF_BOUND_BYTES : WGF_BOUND_DISPATCH;
}
