/* Runtime: the compute-unit probe. Its search (wgf_compute_units_search) over synthetic times
 * finds the step of devices with 1 to 4,095 units under +-10% noise; under +-20% it refuses
 * rather than misreads; a slow spell that lasts the search is refused by the last look; a
 * failed timing or a device past 4,095 units answers 0. On the test device (lavapipe: its
 * threads) the probe answers at most 4x the CPUs (or 0 when a loaded machine's times disagree,
 * a skip), and the same answer when asked again (measured once per context). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "wgfuse/gpu.h"

struct synth {
    uint32_t units;  /* the step: ceil(n / units) rounds of t1                       */
    double   noise;  /* relative, alternating sign by call                            */
    int      calls;
    int      fail_at;  /* this call answers a failed timing (0: never)                */
    int      slow_from; /* from this call on every time is 3x (0: never)              */
};

static double synth_time(void *u, uint32_t n)
{
    struct synth *s = u;
    s->calls++;
    if (s->fail_at && s->calls == s->fail_at) return -1;
    double t = 40000.0 * ((n + s->units - 1) / s->units);
    t *= 1 + ((s->calls % 2) ? s->noise : -s->noise);
    if (s->slow_from && s->calls >= s->slow_from) t *= 3;
    return t;
}

int main(void)
{
    struct wgf_t t = {0};
    static const uint32_t units[] = {1, 2, 3, 7, 16, 108, 132, 144, 1000, 4095};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        struct synth s = {.units = units[i], .noise = 0.1};
        uint32_t     got = wgf_compute_units_search(synth_time, &s);
        wgf_t_check(&t, got == units[i], "search: step function", "%u units (noise +-10%%): found %u in %d timings",
                    units[i], got, s.calls);
    }
    struct synth big = {.units = 4096};
    wgf_t_check(&t, wgf_compute_units_search(synth_time, &big) == 0, "search: more than 4095 units", "answers 0");
    /* noise past what a 1.5x threshold can tell from a second round: refused, not misread */
    struct synth wild = {.units = 132, .noise = 0.2};
    uint32_t     w    = wgf_compute_units_search(synth_time, &wild);
    wgf_t_check(&t, w == 0 || w == 132, "search: +-20% noise", "answers %u (132 or 0 wanted)", w);
    struct synth fail = {.units = 132, .fail_at = 5};
    wgf_t_check(&t, wgf_compute_units_search(synth_time, &fail) == 0, "search: a failed timing", "answers 0");
    /* a spell that slows every time from the third on: the doubling stops early (at 2 or 4)
     * and the last look, slow too, refuses that answer */
    struct synth slow = {.units = 132, .slow_from = 3};
    uint32_t     got  = wgf_compute_units_search(synth_time, &slow);
    wgf_t_check(&t, got == 0, "search: a slow spell", "answers %u (0 wanted)", got);

    /* On the device: a timing-based answer. Where other tests share the CPU that runs lavapipe
     * (CI runs them in parallel), the times may disagree and the probe then says 0 (unknown),
     * as it should; a count it gives is at most the CPU threads the adapter could use. */
    wgf_ctx *ctx = wgf_t_gpu(&t);
    if (ctx) {
        uint32_t n   = wgf_ctx_compute_units(ctx);
        bool     cpu = !strcmp(wgf_ctx_adapter(ctx)->type, "cpu");
        long     nc  = sysconf(_SC_NPROCESSORS_ONLN);
        wgf_t_check(&t, n <= 4095 && (!cpu || n <= 4 * (nc > 0 ? nc : 1)), "probe: the test device's compute units",
                    "%u (%s; %ld CPUs here)", n, n ? "measured" : "unknown: the times disagreed", nc);
        if (!n) wgf_t_skip(&t, "probe: a count on this device", "the times disagreed (a loaded machine)");
        wgf_t_check(&t, wgf_ctx_compute_units(ctx) == n, "probe: measured once per context", "%u again",
                    wgf_ctx_compute_units(ctx));
        wgf_ctx_free(ctx);
    }
    return wgf_t_finish(&t);
}
