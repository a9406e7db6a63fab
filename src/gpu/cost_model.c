/* wgfuse runtime — the advisor's cost model (include/wgfuse/gpu_cost.h). */
#include <math.h>
#include <string.h>

#include "wgfuse/gpu_cost.h"

static bool usable(const struct wgf_device_cost *d)
{
    return d && d->dispatch_us >= 0 && d->read_gbps > 0 && d->gflops > 0 && d->read_gbps_wg >= 0 &&
           d->gflops_wg >= 0 && isfinite(d->dispatch_us) && isfinite(d->read_gbps) && isfinite(d->gflops);
}

/* rate of a step over w workgroups (w 0: unknown, saturating) */
static double scaled(double whole, double per_wg, uint64_t w)
{
    if (w == 0 || per_wg <= 0) return whole;
    double r = per_wg * (double)w;
    return r < whole ? r : whole;
}

enum wgf_status wgf_cost_step(const struct wgf_device_cost *dev, const struct wgf_step_info *st, double *us,
                              enum wgf_cost_bound *bound)
{
    *us    = 0;
    *bound = WGF_BOUND_DISPATCH;
    if (!usable(dev) || !st) return WGF_ERR_ARG;
    uint64_t w = 0;
    if (st->kind == WGF_STEP_DISPATCH) w = (uint64_t)st->grid[0] * st->grid[1] * st->grid[2];
    double bytes = (double)(st->cost.bytes_read + st->cost.bytes_written);
    double t_b   = bytes / (scaled(dev->read_gbps, dev->read_gbps_wg, w) * 1e3); /* GB/s -> bytes/us */
    double t_f   = (double)st->cost.flops / (scaled(dev->gflops, dev->gflops_wg, w) * 1e3);
    double t     = dev->dispatch_us;
    if (t_b > t) t = t_b, *bound = WGF_BOUND_BYTES;
    if (t_f > t) t = t_f, *bound = WGF_BOUND_FLOPS;
    *us = t;
    return WGF_OK;
}

enum wgf_status wgf_cost_predict(const struct wgf_device_cost *dev, const struct wgf_step_info *steps, uint32_t n,
                                 struct wgf_cost_prediction *out)
{
    memset(out, 0, sizeof *out);
    if (!usable(dev) || (n && !steps)) return WGF_ERR_ARG;
    for (uint32_t i = 0; i < n; i++) {
        double              t;
        enum wgf_cost_bound b;
        enum wgf_status     s = wgf_cost_step(dev, &steps[i], &t, &b);
        if (s) return s;
        out->total_us += t;
        out->bound_us[b] += t;
        out->steps++;
        if (steps[i].kind != WGF_STEP_COPY) out->dispatches++;
        out->bytes += steps[i].cost.bytes_read + steps[i].cost.bytes_written;
        out->flops += steps[i].cost.flops;
    }
    return WGF_OK;
}

double wgf_cost_dispatch_share(const struct wgf_cost_prediction *p)
{
    return p && p->total_us > 0 ? p->bound_us[WGF_BOUND_DISPATCH] / p->total_us : 0;
}

const char *wgf_cost_bound_name(enum wgf_cost_bound b)
{
    return b == WGF_BOUND_BYTES ? "bytes" : b == WGF_BOUND_FLOPS ? "flops" : "dispatch";
}
