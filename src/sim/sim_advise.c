/* wgfuse sim — the advisor over the strategies (include/wgfuse/sim_advise.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"
#include "wgfuse/sim_advise.h"

void wgf_sim_strategy_spec(enum wgf_sim_strategy s, int chunk, char *buf, size_t cap)
{
    if (s == WGF_SIM_CHUNKED) snprintf(buf, cap, "chunked:%d", chunk);
    else snprintf(buf, cap, "%s", wgf_sim_strategy_name(s));
}

void wgf_sim_advice_choose(struct wgf_sim_advice *a)
{
    a->best = a->second = -1;
    for (uint32_t i = 0; i < a->n; i++) {
        if (a->row[i].skipped[0]) continue;
        double t = a->row[i].pred.total_us;
        if (a->best < 0 || t < a->row[a->best].pred.total_us) a->second = a->best, a->best = (int)i;
        else if (a->second < 0 || t < a->row[a->second].pred.total_us) a->second = (int)i;
    }
    if (a->best < 0) {
        snprintf(a->reason, sizeof a->reason, "no strategy can run on this device");
        return;
    }
    const struct wgf_sim_plan_prediction *b = &a->row[a->best];
    const struct wgf_cost_prediction     *p = &b->pred;
    int bound = 0;
    for (int k = 1; k < WGF_BOUND_COUNT; k++)
        if (p->bound_us[k] > p->bound_us[bound]) bound = k;
    /* the per-step plan (most dispatches) for contrast: what fusing saves */
    const struct wgf_sim_plan_prediction *ps = NULL;
    for (uint32_t i = 0; i < a->n; i++)
        if (!a->row[i].skipped[0] && a->row[i].evolve == b->evolve &&
            (!ps || a->row[i].pred.dispatches > ps->pred.dispatches))
            ps = &a->row[i];
    int n = snprintf(a->reason, sizeof a->reason, "%s: predicted %.4f ms/generation", b->name, p->total_us * 1e-3);
    if (a->second >= 0 && n > 0 && (size_t)n < sizeof a->reason)
        n += snprintf(a->reason + n, sizeof a->reason - (size_t)n, ", %.2fx faster than %s",
                      a->row[a->second].pred.total_us / p->total_us, a->row[a->second].name);
    if (n > 0 && (size_t)n < sizeof a->reason && b->probed)
        n += snprintf(a->reason + n, sizeof a->reason - (size_t)n,
                      " (%u dispatches per generation; measured kernels: episode %.4f ms, reset + evolve %.4f ms, "
                      "host %.4f ms",
                      p->dispatches, b->episode_us * 1e-3, b->evolve_us * 1e-3, b->host_us * 1e-3);
    else if (n > 0 && (size_t)n < sizeof a->reason)
        n += snprintf(a->reason + n, sizeof a->reason - (size_t)n,
                      " (%u dispatches per generation, %.0f%% of its time dispatch-bound, mostly %s-bound",
                      p->dispatches, 100.0 * wgf_cost_dispatch_share(p), wgf_cost_bound_name((enum wgf_cost_bound)bound));
    if (ps && ps != b && n > 0 && (size_t)n < sizeof a->reason)
        n += snprintf(a->reason + n, sizeof a->reason - (size_t)n, "; %s runs %u dispatches, %.2fx the time", ps->name,
                      ps->pred.dispatches, ps->pred.total_us / p->total_us);
    if (n > 0 && (size_t)n < sizeof a->reason) snprintf(a->reason + n, sizeof a->reason - (size_t)n, ")");
}

/* The probe's composition (sim_advise.h): every dispatch of a generation at its measured
 * GPU time, plus the host's part. The steps an episode dispatch lasts: the population's
 * longest episode where its workgroups run at once (a GPU), else the SIMD groups' mean. */
static void compose(const wgf_sim *sim, const struct wgf_sim_probe *p, const struct wgf_sim_advise_options *o,
                    struct wgf_sim_plan_prediction *row)
{
    const struct wgf_sim_config        *c  = &sim->cfg;
    const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(c->workload);
    double L  = c->max_steps;
    double T  = o->episode_steps && o->episode_steps < L ? o->episode_steps : L;
    double Lg = o->longest_steps && o->longest_steps < L ? o->longest_steps : L;
    double Te = p->resident ? (Lg > T ? Lg : T) : T;
    double ep = 0;
    if (!wi->sequential) ep = p->chunk_us;
    else if (c->strategy == WGF_SIM_FUSED_WIDE) {
        double knee = p->wide_knee > 0 ? fmin(Te, p->wide_knee) : Te;
        ep          = p->wide_us + knee * p->wide_step_us + (Te - knee) * p->wide_tail_us;
    }
    else {
        double K    = ceil(L / sim->n_chunks);
        /* a chunk after every episode ended: on a GPU what is left of a chunk at zero steps
         * (the validated composition); a CPU adapter's measured one (it skips the policy) */
        double dead = !p->resident && p->dead_us > 0 ? p->dead_us : fmax(0, p->chunk_us - p->step_us);
        for (int ch = 0; ch < sim->n_chunks; ch++) {
            double r = fmin(K, fmax(0, Te - ch * K));
            ep += r >= 1 ? p->chunk_us + (r - 1) * p->step_us : dead;
        }
    }
    double evolve = p->evolve_us[c->evolve] > 0 ? p->evolve_us[c->evolve] : 0;
    double gps    = o->gens_per_submit ? o->gens_per_submit : 1;
    row->probed     = true;
    row->episode_us = ep;
    row->evolve_us  = evolve + (sim->reset ? p->reset_us : 0);
    row->host_us    = row->pred.dispatches * p->host_us + p->submit_us / gps;
    for (int b = 0; b < WGF_BOUND_COUNT; b++) row->pred.bound_us[b] = 0;
    row->pred.bound_us[WGF_BOUND_DISPATCH] = row->host_us;
    row->pred.bound_us[WGF_BOUND_CHAIN]    = ep;
    row->pred.bound_us[WGF_BOUND_SERIAL]   = row->evolve_us;
    row->pred.total_us                     = row->host_us + ep + row->evolve_us;
}

static enum wgf_status predict(wgf_ctx *ctx, const struct wgf_sim_config *c, const struct wgf_device_cost *dev,
                               const struct wgf_sim_advise_options *o, struct wgf_sim_plan_prediction *row,
                               struct wgf_err *err)
{
    wgf_sim        *sim = NULL;
    struct wgf_err  e2  = {0};
    enum wgf_status s   = wgf_sim_create(ctx, c, &sim, &e2);
    if (s == WGF_ERR_UNSUPPORTED || s == WGF_ERR_ARG) {
        snprintf(row->skipped, sizeof row->skipped, "%s", e2.msg);
        return WGF_OK;
    }
    if (s) return wgf_fail(err, s, "advise: %s: %s", row->name, e2.msg);
    uint32_t n = 0;
    s          = wgf_sim_generation_steps(sim, o->episode_steps, NULL, 0, &n, err);
    struct wgf_step_info *steps = NULL;
    if (!s && !(steps = calloc(n ? n : 1, sizeof *steps))) s = wgf_fail(err, WGF_ERR_NOMEM, "advise: %u steps", n);
    if (!s) s = wgf_sim_generation_steps(sim, o->episode_steps, steps, n, &n, err);
    if (!s && wgf_cost_predict_replayed(dev, steps, n, o->gens_per_submit ? o->gens_per_submit : 1, &row->pred))
        s = wgf_fail(err, WGF_ERR_ARG, "advise: the device description has a zero or negative rate");
    row->evolve = wgf_sim_config_of(sim)->evolve;
    if (!s && o->probe && o->probe->ok) compose(sim, o->probe, o, row);
    free(steps);
    wgf_sim_free(sim);
    return s;
}

enum wgf_status wgf_sim_advise(wgf_ctx *ctx, const struct wgf_sim_config *base, const struct wgf_device_cost *dev,
                               const struct wgf_sim_advise_options *o, struct wgf_sim_advice *out, struct wgf_err *err)
{
    memset(out, 0, sizeof *out);
    out->best = out->second = -1;
    const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(base->workload);
    if (!wi) return wgf_fail(err, WGF_ERR_ARG, "advise: unknown workload");
    static const int def_chunks[2] = {10, 50};
    const int       *chunks        = o->chunks ? o->chunks : def_chunks;
    int              nch           = o->chunks ? o->n_chunks : 2;
    int              L             = base->max_steps > 0 ? base->max_steps : wi->max_steps;
    struct cand {
        enum wgf_sim_strategy s;
        int                   k;
    } strat[12];
    int ns = 0;
    strat[ns++] = (struct cand){WGF_SIM_FUSED, 0};
    if (wi->sequential) {
        strat[ns++] = (struct cand){WGF_SIM_FUSED_WIDE, 0};
        for (int i = 0; i < nch && ns < 10; i++)
            if (chunks[i] > 1 && chunks[i] < L) strat[ns++] = (struct cand){WGF_SIM_CHUNKED, chunks[i]};
        if (L > 1) strat[ns++] = (struct cand){WGF_SIM_PER_STEP, 1};
    }
    enum wgf_sim_evolve ev[3] = {WGF_SIM_EVOLVE_SPLIT, WGF_SIM_EVOLVE_THREAD, WGF_SIM_EVOLVE_WIDE};
    int                 nev   = 3;
    if (o->evolve_fixed) ev[0] = base->evolve, nev = 1;
    for (int e = 0; e < nev; e++)
        for (int i = 0; i < ns && out->n < WGF_SIM_ADVISE_MAX; i++) {
            struct wgf_sim_plan_prediction *row = &out->row[out->n];
            memset(row, 0, sizeof *row);
            struct wgf_sim_config c = *base;
            c.strategy = strat[i].s, c.chunk = strat[i].k ? strat[i].k : base->chunk, c.evolve = ev[e];
            row->strategy = c.strategy, row->chunk = c.chunk;
            char spec[24];
            wgf_sim_strategy_spec(c.strategy, c.chunk, spec, sizeof spec);
            snprintf(row->name, sizeof row->name, "%s/%s", spec, wgf_sim_evolve_name(ev[e]));
            enum wgf_status s = predict(ctx, &c, dev, o, row, err);
            if (s) return s;
            out->n++;
        }
    wgf_sim_advice_choose(out);
    return WGF_OK;
}
