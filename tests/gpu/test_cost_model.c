/* The advisor's cost model (src/gpu/cost_model.c) on a synthetic device description, worked
 * by hand: a dispatch-bound, a bytes-bound and a FLOPs-bound step; a one-workgroup step that
 * the per-workgroup bandwidth slows; an indirect step (grid unknown: saturating); a copy; the
 * sums, the bound shares and the dispatch count; descriptions with a zero, negative or NaN
 * rate refused with WGF_ERR_ARG; the per-dispatch cost by schedule length (d(n) interpolated in
 * log n between the two measured lengths), the serial term of a one-workgroup step, the
 * per-workgroup rates scaled by a step's workgroup size, the barrier term, and the crossover
 * batch B*. No GPU needed. */
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

    /* d(n): 3 us at 16 dispatches (48 us), 1048 us for 1016: t(n) = 32 + n, so d(n) = 1 + 32 / n */
    struct wgf_device_cost dl = dev;
    dl.dispatch_us = 3, dl.dispatch_us_long = 1048.0 / 1016.0, dl.len_short = 16, dl.len_long = 1016;
    wgf_t_check(&t, near(wgf_cost_dispatch_at(&dl, 8), 5) && near(wgf_cost_dispatch_at(&dl, 32), 2) &&
                        near(wgf_cost_dispatch_at(&dl, 3200), 1.01) && near(wgf_cost_dispatch_at(&dev, 5000), 2),
                "dispatch cost by schedule length", "d(8) %g, d(32) %g, d(3200) %g, flat %g",
                wgf_cost_dispatch_at(&dl, 8), wgf_cost_dispatch_at(&dl, 32), wgf_cost_dispatch_at(&dl, 3200),
                wgf_cost_dispatch_at(&dev, 5000));
    /* 64 tiny steps replayed twice: 128 dispatches charged 1.25 us each */
    struct wgf_step_info tiny[64];
    for (int i = 0; i < 64; i++) tiny[i] = step(WGF_STEP_DISPATCH, 1000, 8, 0, 0);
    st = wgf_cost_predict_replayed(&dl, tiny, 64, 2, &p);
    wgf_t_check(&t, st == WGF_OK && near(p.total_us, 64 * 1.25) && near(p.dispatch_us, 1.25) && p.dispatches == 64,
                "a replayed schedule is charged d(dispatches x replays)", "total %g, d %g", p.total_us, p.dispatch_us);
    /* launching workgroups: 1000 workgroups x 0.01 us on top of the 2 us dispatch */
    struct wgf_device_cost dw = dev;
    dw.workgroup_us = 0.01;
    wgf_cost_step(&dw, &s[0], &us, &b);
    wgf_t_check(&t, near(us, 12) && b == WGF_BOUND_DISPATCH, "workgroup launch cost", "%g us %s", us,
                wgf_cost_bound_name(b));

    /* serial term: one workgroup of 1e5 FLOPs at 0.5 GFLOP/s = 200 us (the FMA rate per
     * workgroup, 10 GFLOP/s, would give 10 us); two workgroups: no serial term (a grid): 1e5 at 20 GFLOP/s = 5 us */
    struct wgf_device_cost ds = dev;
    ds.serial_gflops_wg = 0.5, ds.serial_wg = 1024;
    struct wgf_step_info one = step(WGF_STEP_DISPATCH, 1, 1000, 0, 100000);
    wgf_cost_step(&ds, &one, &us, &b);
    wgf_t_check(&t, near(us, 200) && b == WGF_BOUND_SERIAL, "serial term of a one-workgroup step", "%g us %s", us,
                wgf_cost_bound_name(b));
    one.wg_size = 512; /* a step that describes its shape (the simulation's): no serial term,
                          the per-workgroup FMA rate: 1e5 at 10 GFLOP/s = 10 us */
    wgf_cost_step(&ds, &one, &us, &b);
    wgf_t_check(&t, near(us, 10) && b == WGF_BOUND_FLOPS, "no serial term for a described step", "%g us %s", us,
                wgf_cost_bound_name(b));
    struct wgf_step_info two = step(WGF_STEP_DISPATCH, 2, 1000, 0, 100000);
    wgf_cost_step(&ds, &two, &us, &b);
    wgf_t_check(&t, near(us, 5) && b == WGF_BOUND_FLOPS, "no serial term on a grid", "%g us %s", us,
                wgf_cost_bound_name(b));

    /* per-workgroup rates scaled by a known workgroup size: 4 workgroups of 64 invocations read
     * at 4 x 1 GB/s x 64/256 = 1 GB/s: 1 MB in 1000 us */
    struct wgf_step_info small = step(WGF_STEP_DISPATCH, 4, 1000000, 0, 0);
    small.wg_size = 64;
    wgf_cost_step(&dev, &small, &us, &b);
    wgf_t_check(&t, near(us, 1000), "per-workgroup bandwidth scaled by the workgroup size", "%g us", us);

    /* barrier term: P = 1000 / 10 = 100 workgroups at once; 250 workgroups = 3 waves x 100
     * barriers x 50 ns = 15 us, on top of the 2 us dispatch */
    struct wgf_device_cost db = dev;
    db.barrier_ns = 50;
    struct wgf_step_info bar = step(WGF_STEP_DISPATCH, 250, 8, 0, 0);
    bar.barriers = 100;
    wgf_cost_step(&db, &bar, &us, &b);
    wgf_t_check(&t, near(us, 17) && b == WGF_BOUND_BARRIER, "barrier term", "%g us %s", us, wgf_cost_bound_name(b));

    /* chain term: P = 100; 250 workgroups = 3 waves x 1e4 chain FLOPs at 1 GFLOP/s = 30 us */
    struct wgf_device_cost dc = dev;
    dc.chain_gflops = 1;
    struct wgf_step_info ch = step(WGF_STEP_DISPATCH, 250, 8, 0, 1000);
    ch.chain_flops = 10000;
    wgf_cost_step(&dc, &ch, &us, &b);
    wgf_t_check(&t, near(us, 30) && b == WGF_BOUND_CHAIN, "chain term", "%g us %s", us, wgf_cost_bound_name(b));

    /* crossover: 1e6 FLOPs per token at 1000 GFLOP/s = 1 us; 2 dispatches x 2 us = 4 us ->
     * B*_dispatch 4; 500 KB at 100 GB/s = 5 us -> B*_bytes 5; B* 5; at batch 8: 8 us, flops */
    struct wgf_cost_crossover x;
    wgf_cost_crossover(&dev, (struct wgf_step_cost){500000, 0, 1000000}, 2, 2.0, 8, &x);
    wgf_t_check(&t, near(x.b_dispatch, 4) && near(x.b_bytes, 5) && near(x.b_star, 5) && near(x.us_at_1, 5) &&
                        near(x.us_at_b, 8) && x.bound_at_b == WGF_BOUND_FLOPS,
                "crossover batch", "B*_disp %g, B*_bytes %g, B* %g, t(1) %g, t(8) %g", x.b_dispatch, x.b_bytes,
                x.b_star, x.us_at_1, x.us_at_b);
    wgf_cost_crossover(&dev, (struct wgf_step_cost){500000, 0, 1000000}, 2, 2.0, 3, &x);
    wgf_t_check(&t, near(x.us_at_b, 5) && x.bound_at_b == WGF_BOUND_BYTES, "below B*: bytes-bound, batch free",
                "t(3) %g %s", x.us_at_b, wgf_cost_bound_name(x.bound_at_b));
    return wgf_t_finish(&t);
}
