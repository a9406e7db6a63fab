/* The advisor's kernel probe and its composition (include/wgfuse/sim_advise.h):
 *   - wgf_sim_probe_run on this device: ok, every time measured and finite, the per-step
 *     kernel's dispatch positive (a step's cost is a difference of two timings: >= 0, noise
 *     can hide it on a loaded CPU adapter), each evolve variant timed, lavapipe (a CPU
 *     adapter) not resident;
 *   - the composition's arithmetic on a synthetic probe, by hand: fused, chunked:K, per-step
 *     and fused-wide at the episode limit; a resident device follows the longest episode,
 *     a non-resident one the SIMD groups' mean; chunks after the episodes ended cost the
 *     dispatch less a step (a CPU adapter: the measured dead dispatch, dead_us, which the
 *     probe must report positive); the host part per dispatch and per submit; rows say "probed";
 *     fused-wide's steps past the knee at the tail's rate (a CPU adapter's probe has no knee);
 *   - a probe that is not ok leaves the static model's numbers. */
#include <math.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/sim_advise.h"

static const struct wgf_sim_plan_prediction *row_of(const struct wgf_sim_advice *a, const char *name)
{
    for (uint32_t i = 0; i < a->n; i++)
        if (!strcmp(a->row[i].name, name)) return &a->row[i];
    return NULL;
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b)); }

int main(void)
{
    struct wgf_t t   = {0};
    wgf_ctx     *ctx = wgf_t_gpu(&t);
    if (!ctx) return wgf_t_finish(&t);
    struct wgf_err        err = {0};
    struct wgf_sim_config c   = wgf_sim_config_default(WGF_SIM_CARTPOLE);
    c.pop = 128, c.max_steps = 20, c.hidden = 8, c.ga.elites = 4;

    /* the probe on this device */
    struct wgf_sim_probe p;
    enum wgf_status      s  = wgf_sim_probe_run(ctx, &c, &p, &err);
    /* a CPU adapter times every part as a difference of two wall clocks: a small one (the reset
     * of 128 genomes under the sanitizers, one evolve variant in a CI run's first stage) can
     * come out 0 on a loaded machine; there each must not be negative and the three evolves
     * together must be positive */
    bool   cpu = !strcmp(wgf_ctx_adapter(ctx)->type, "cpu");
    double ev0 = p.evolve_us[WGF_SIM_EVOLVE_SPLIT], ev1 = p.evolve_us[WGF_SIM_EVOLVE_THREAD],
           ev2 = p.evolve_us[WGF_SIM_EVOLVE_WIDE];
    bool evolves = cpu ? ev0 >= 0 && ev1 >= 0 && ev2 >= 0 && ev0 + ev1 + ev2 > 0 : ev0 > 0 && ev1 > 0 && ev2 > 0;
    bool ok = s == WGF_OK && p.ok && p.chunk_us > 0 && p.step_us >= 0 &&
              (cpu ? p.reset_us >= 0 : p.reset_us > 0) && evolves &&
              p.wide_step_us >= 0 && p.wide_us >= 0 && p.host_us >= 0 &&
              p.submit_us >= 0 && isfinite(p.host_us + p.submit_us + p.wide_us + p.wide_step_us) && p.seconds > 0;
    wgf_t_check(&t, ok, "probe on this device",
                "status %d (%s): chunk %g step %g reset %g evolve %g/%g/%g wide %g+%g host %g submit %g", (int)s, err.msg,
                p.chunk_us, p.step_us, p.reset_us, p.evolve_us[0], p.evolve_us[1], p.evolve_us[2], p.wide_us,
                p.wide_step_us, p.host_us, p.submit_us);
    wgf_t_check(&t, p.resident == !cpu, "resident: a GPU, not a CPU adapter", "resident %d on a %s adapter", p.resident,
                wgf_ctx_adapter(ctx)->type);
    wgf_t_check(&t, isfinite(p.pass_us) && p.pass_us >= 0, "a timed pass's own cost: finite, not negative",
                "pass %g us", p.pass_us);
    wgf_t_check(&t, isfinite(p.wide_tail_us) && p.wide_tail_us >= 0 && p.wide_knee >= 0 && (!cpu || p.wide_knee == 0),
                "fused-wide's tail: finite, no knee on a CPU adapter", "knee %g, tail %g us on a %s adapter", p.wide_knee,
                p.wide_tail_us, wgf_ctx_adapter(ctx)->type);
    wgf_t_check(&t, isfinite(p.dead_us) && (cpu ? p.dead_us >= 0 : p.dead_us > 0),
                "a dispatch after the episodes ended: measured, finite (a GPU: positive)",
                "dead %g us (chunk %g)", p.dead_us, p.chunk_us);
    wgf_t_check(&t, p.chunk_first_us > 0 && isfinite(p.chunk_first_us) && (cpu || p.chunk_first_us == p.chunk_us),
                "the first steps' dispatch: measured; a GPU's chunk_us is it", "first %g us, chunk %g on a %s adapter",
                p.chunk_first_us, p.chunk_us, wgf_ctx_adapter(ctx)->type);

    /* the composition on a synthetic probe */
    struct wgf_sim_probe syn = {.ok = true, .resident = true, .reset_us = 3, .chunk_us = 10, .step_us = 2, .wide_us = 5,
                                .wide_step_us = 1, .evolve_us = {100, 200, 50}, .host_us = 1, .submit_us = 30};
    static const int              chunks[1] = {5};
    struct wgf_sim_advise_options o = {.gens_per_submit = 3, .chunks = chunks, .n_chunks = 1, .probe = &syn};
    struct wgf_device_cost        dev = {.dispatch_us = 5, .read_gbps = 100, .gflops = 1000};
    static struct wgf_sim_advice  a;
    s = wgf_sim_advise(ctx, &c, &dev, &o, &a, &err);
    if (!wgf_t_check(&t, s == WGF_OK && a.n == 12, "advise with a synthetic probe", "status %d (%s), %u rows", (int)s,
                     err.msg, a.n))
        goto done;
    struct {
        const char *name;
        double      episode, evolve;
    } want[] = {
        {"fused/split", 10 + 19 * 2, 50},          {"chunked:5/split", 4 * (10 + 4 * 2), 50},
        {"per-step/split", 20 * 10, 50},           {"fused-wide/split", 5 + 20 * 1, 50},
        {"fused/thread", 10 + 19 * 2, 100},        {"fused-wide/wide", 5 + 20 * 1, 200},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct wgf_sim_plan_prediction *r = row_of(&a, want[i].name);
        double host = r ? r->pred.dispatches * 1.0 + 30.0 / 3 : 0;
        double tot  = want[i].episode + want[i].evolve + 3 + host;
        wgf_t_check(&t,
                    r && r->probed && near(r->episode_us, want[i].episode) && near(r->evolve_us, want[i].evolve + 3) &&
                        near(r->host_us, host) && near(r->pred.total_us, tot),
                    "composition at the episode limit", "%s: episode %g (want %g), reset+evolve %g (%g), host %g (%g), total %g (%g)",
                    want[i].name, r ? r->episode_us : -1, want[i].episode, r ? r->evolve_us : -1, want[i].evolve + 3,
                    r ? r->host_us : -1, host, r ? r->pred.total_us : -1, tot);
    }
    /* episodes shorter than the limit: groups run 8 steps, the longest 12 */
    o.episode_steps = 8, o.longest_steps = 12;
    s = wgf_sim_advise(ctx, &c, &dev, &o, &a, &err);
    const struct wgf_sim_plan_prediction *f = row_of(&a, "fused/split"), *ps = row_of(&a, "per-step/split"),
                                         *ck = row_of(&a, "chunked:5/split");
    /* resident: 12 steps; chunk 3 of chunked:5 runs 2 (10 + 2), chunk 4 none (the dispatch less a step) */
    wgf_t_check(&t,
                s == WGF_OK && f && ps && ck && near(f->episode_us, 10 + 11 * 2) && near(ps->episode_us, 12 * 10 + 8 * 8) &&
                    near(ck->episode_us, 2 * (10 + 4 * 2) + (10 + 1 * 2) + 8),
                "resident: the longest episode", "fused %g, per-step %g, chunked:5 %g", f ? f->episode_us : -1,
                ps ? ps->episode_us : -1, ck ? ck->episode_us : -1);
    /* fused-wide past its knee: 12 steps, 4 at wide_step_us (1), 8 at the tail's 0.25 */
    syn.wide_knee = 4, syn.wide_tail_us = 0.25;
    s = wgf_sim_advise(ctx, &c, &dev, &o, &a, &err);
    const struct wgf_sim_plan_prediction *fw = row_of(&a, "fused-wide/split");
    wgf_t_check(&t, s == WGF_OK && fw && near(fw->episode_us, 5 + 4 * 1 + 8 * 0.25), "fused-wide: the knee and the tail",
                "episode %g (want %g)", fw ? fw->episode_us : -1, 5 + 4 * 1 + 8 * 0.25);
    syn.wide_knee = 0, syn.wide_tail_us = 0;
    /* a measured dead dispatch: a GPU keeps the dispatch less a step (the validated composition) */
    syn.dead_us = 3;
    s = wgf_sim_advise(ctx, &c, &dev, &o, &a, &err);
    ps = row_of(&a, "per-step/split");
    wgf_t_check(&t, s == WGF_OK && ps && near(ps->episode_us, 12 * 10 + 8 * 8), "resident: dead chunks, the dispatch less a step",
                "per-step %g", ps ? ps->episode_us : -1);
    syn.resident = false;
    s = wgf_sim_advise(ctx, &c, &dev, &o, &a, &err);
    ps = row_of(&a, "per-step/split");
    wgf_t_check(&t, s == WGF_OK && ps && near(ps->episode_us, 8 * 10 + 12 * 3), "not resident: dead chunks as measured",
                "per-step %g (want %g)", ps ? ps->episode_us : -1, 8 * 10 + 12 * 3.0);
    syn.dead_us = 0;
    s = wgf_sim_advise(ctx, &c, &dev, &o, &a, &err);
    f = row_of(&a, "fused/split"), ps = row_of(&a, "per-step/split");
    wgf_t_check(&t, s == WGF_OK && f && ps && near(f->episode_us, 10 + 7 * 2) && near(ps->episode_us, 8 * 10 + 12 * 8),
                "not resident: the groups' steps", "fused %g, per-step %g", f ? f->episode_us : -1,
                ps ? ps->episode_us : -1);

    /* a probe that is not ok: the static model */
    syn.ok = false;
    s = wgf_sim_advise(ctx, &c, &dev, &o, &a, &err);
    f = row_of(&a, "fused/split");
    wgf_t_check(&t, s == WGF_OK && f && !f->probed && f->pred.total_us > 0 && f->pred.total_us != f->episode_us,
                "no probe: the static model", "probed %d, total %g", f ? f->probed : -1, f ? f->pred.total_us : -1);
done:
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
