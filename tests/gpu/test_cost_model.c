/* The advisor's cost model (src/gpu/cost_model.c) on a synthetic device description, worked
 * by hand: a dispatch-bound, a bytes-bound and a FLOPs-bound step; a one-workgroup step that
 * the per-workgroup bandwidth slows; an indirect step (grid unknown: saturating); a copy; the
 * sums, the bound shares and the dispatch count; descriptions with a zero, negative or NaN
 * rate refused with WGF_ERR_ARG. No GPU needed. */
#include <math.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/gpu_cost.h"

static struct wgf_step_info step(enum wgf_step_kind k, uint32_t wgs, uint64_t rd, uint64_t wr, uint64_t fl)
{
    struct wgf_step_info s;
    memset(&s, 0, sizeof s);
    s.kind    = k;
    s.grid[0] = wgs, s.grid[1] = 1, s.grid[2] = 1;
    s.cost    = (struct wgf_step_cost){rd, wr, fl};
    return s;
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * (fabs(b) + 1); }

int main(void)
{
    struct wgf_t t = {0};
    /* 2 us per dispatch; 100 GB/s whole, 1 GB/s per workgroup; 1000 GFLOP/s whole, 10 per workgroup */
    const struct wgf_device_cost dev = {.dispatch_us = 2, .read_gbps = 100, .read_gbps_wg = 1, .gflops = 1000,
                                        .gflops_wg = 10};
    struct wgf_step_info s[6] = {
        step(WGF_STEP_DISPATCH, 1000, 1000, 0, 10),            /* 1 KB: 0.01 us; dispatch 2 us      */
        step(WGF_STEP_DISPATCH, 1000, 900000, 100000, 0),      /* 1 MB at 100 GB/s: 10 us           */
        step(WGF_STEP_DISPATCH, 1000, 0, 0, 50000000),         /* 5e7 FLOP at 1e3 GFLOP/s: 50 us    */
        step(WGF_STEP_DISPATCH, 4, 1000000, 0, 0),             /* 4 workgroups: 4 GB/s -> 250 us    */
        step(WGF_STEP_DISPATCH_INDIRECT, 0, 2000000, 0, 0),    /* saturating: 20 us                 */
        step(WGF_STEP_COPY, 0, 400000, 400000, 0),             /* 0.8 MB at 100 GB/s: 8 us          */
    };
    const double              want[6]  = {2, 10, 50, 250, 20, 8};
    const enum wgf_cost_bound wantb[6] = {WGF_BOUND_DISPATCH, WGF_BOUND_BYTES, WGF_BOUND_FLOPS,
                                          WGF_BOUND_BYTES,    WGF_BOUND_BYTES, WGF_BOUND_BYTES};
    for (int i = 0; i < 6; i++) {
        double              us;
        enum wgf_cost_bound b;
        enum wgf_status     st = wgf_cost_step(&dev, &s[i], &us, &b);
        wgf_t_check(&t, st == WGF_OK && near(us, want[i]) && b == wantb[i], "one step: time and bound",
                    "step %d: %g us (want %g), bound %s (want %s)", i, us, want[i], wgf_cost_bound_name(b),
                    wgf_cost_bound_name(wantb[i]));
    }
    /* a step of 200 workgroups reaches the whole-device rate (200 GB/s > 100): not scaled up */
    struct wgf_step_info wide = step(WGF_STEP_DISPATCH, 200, 1000000, 0, 0);
    double               us;
    enum wgf_cost_bound  b;
    wgf_cost_step(&dev, &wide, &us, &b);
    wgf_t_check(&t, near(us, 10), "per-workgroup rate capped by the device's", "%g us, want 10", us);

    struct wgf_cost_prediction p;
    enum wgf_status            st = wgf_cost_predict(&dev, s, 6, &p);
    wgf_t_check(&t, st == WGF_OK && near(p.total_us, 340) && near(p.bound_us[WGF_BOUND_DISPATCH], 2) &&
                        near(p.bound_us[WGF_BOUND_BYTES], 288) && near(p.bound_us[WGF_BOUND_FLOPS], 50),
                "sum and shares", "total %g (340), dispatch %g (2), bytes %g (288), flops %g (50)", p.total_us,
                p.bound_us[0], p.bound_us[1], p.bound_us[2]);
    wgf_t_check(&t, p.dispatches == 5 && p.steps == 6 && p.bytes == 1000 + 1000000 + 1000000 + 2000000 + 800000 &&
                        p.flops == 50000010,
                "counts", "dispatches %u, steps %u, bytes %llu, flops %llu", p.dispatches, p.steps,
                (unsigned long long)p.bytes, (unsigned long long)p.flops);
    wgf_t_check(&t, near(wgf_cost_dispatch_share(&p), 2.0 / 340), "dispatch-bound share", "%g",
                wgf_cost_dispatch_share(&p));

    /* no per-workgroup figures: every step at the whole-device rate */
    struct wgf_device_cost flat = dev;
    flat.read_gbps_wg = 0, flat.gflops_wg = 0;
    wgf_cost_step(&flat, &s[3], &us, &b);
    wgf_t_check(&t, near(us, 10), "without per-workgroup rates: no scaling", "%g us, want 10", us);

    struct wgf_device_cost bad[3] = {dev, dev, dev};
    bad[0].read_gbps = 0, bad[1].gflops = -1, bad[2].dispatch_us = NAN;
    for (int i = 0; i < 3; i++) {
        st = wgf_cost_predict(&bad[i], s, 6, &p);
        wgf_t_check(&t, st == WGF_ERR_ARG && p.total_us == 0, "unusable description refused", "case %d: status %d",
                    i, (int)st);
    }
    return wgf_t_finish(&t);
}
