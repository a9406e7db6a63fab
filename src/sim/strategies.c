/* wgfuse sim — the fusion strategies: how a population's episode is recorded.
 *
 * wgf_sim_create (population.c) builds everything up front (buffers, pipelines, bind
 * groups); a generation then only records dispatches into one compute pass:
 *
 *   reset                     reset_bg[p]                 state_buf[0] <- initial states
 *   episode chunk c = 0..n-1  step_bg[p][c & 1]           state_buf[c&1] -> state_buf[!(c&1)]
 *   evolve                    evolve_bg[p]                params[p] -> params[!p], p = !p
 *
 * where n = 1 (fused: CHUNK >= episode length), ceil(L / K) (chunked K) or L (per-step:
 * CHUNK 1). All strategies run the same kernel source with a different CHUNK override, so
 * the same seeds give bitwise-identical returns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

enum wgf_status wgf__sim_episode_init(wgf_sim *sim, struct wgf_err *err)
{
    const struct wgf_sim_config *c  = &sim->cfg;
    const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(c->workload);
    char label[96], reset_label[96];
    enum wgf_status s;

    if (c->workload == WGF_SIM_RASTRIGIN) {
        char consts[WGF_SIM_PRELUDE_MAX];
        wgf__sim_prelude(sim, consts, sizeof consts);
        struct wgf_pipeline_desc d = {.label = "rastrigin", .wgsl = wgf__kernel_wgsl(WGF_KERNEL_RASTRIGIN), .prelude = consts};
        if ((s = wgf_pipeline_get(sim->ctx, &d, &sim->step)) != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "rastrigin");
        sim->n_chunks      = 1;
        sim->step_groups   = (uint32_t)c->eval_count; /* pop <= 65535 (check_config) */
        sim->step_groups_y = 1;
        for (int p = 0; p < 2; p++) {
            wgf_buffer *b[2] = {sim->fitness, sim->params[p]};
            for (int q = 0; q < 2; q++)
                if ((s = wgf__sim_bind_group(sim, sim->step, b, 2, &sim->step_bg[p][q], err)) != WGF_OK) return s;
        }
        return WGF_OK;
    }

    /* CHUNK: steps per dispatch. */
    bool wide  = c->strategy == WGF_SIM_FUSED_WIDE;
    int  chunk = c->strategy == WGF_SIM_FUSED || wide ? c->max_steps : c->strategy == WGF_SIM_PER_STEP ? 1 : c->chunk;
    if (chunk > c->max_steps) chunk = c->max_steps;
    sim->n_chunks = (c->max_steps + chunk - 1) / chunk;
    bool fin = c->workload == WGF_SIM_FINSIM;
    /* fused-wide: genomes per workgroup (finsim: a lane per asset; classic control: per hidden
     * unit), the workgroups on a 2D grid past 65,535 (the kernels read wid.x + wid.y * nwg.x) */
    int gpw = fin ? WGF_SIM_WG / WGF_FIN_ASSETS : WGF_SIM_WG / wgf__sim_lanes(sim->pol.n_hidden);
    uint32_t groups = wide ? (uint32_t)((c->eval_count + gpw - 1) / gpw) : (uint32_t)((c->eval_count + WGF_SIM_WG - 1) / WGF_SIM_WG);
    sim->step_groups   = groups <= 65535u ? groups : 65535u;
    sim->step_groups_y = (groups + sim->step_groups - 1) / sim->step_groups;
    if (c->strategy == WGF_SIM_CHUNKED) snprintf(label, sizeof label, "%s_chunked%d", wi->name, chunk);
    else snprintf(label, sizeof label, "%s_%s", wi->name, wide ? "fused_wide" : c->strategy == WGF_SIM_FUSED ? "fused" : "per_step");
    snprintf(reset_label, sizeof reset_label, "%s_reset", wi->name);

    /* classic control: the policy generated straight-line (src/sim/policy.c); finsim: looped */
    const enum wgf_kernel frags[2] = {fin ? WGF_KERNEL_SIM_POLICY : WGF__SIM_POLICY_GEN, wgf__sim_env_kernel(c->workload)};
    char       *prelude  = wgf__sim_compose(sim, frags, fin ? 1 : 2, err);
    if (!prelude) return err ? err->status : WGF_ERR_NOMEM;
    const char *src = wgf__kernel_wgsl(fin ? WGF_KERNEL_FINSIM : WGF_KERNEL_SIM_EPISODE);
    struct wgf_constant reset_k[2] = {{"MODE", 0}, {"CHUNK", 1}};
    struct wgf_constant step_k[2]  = {{"MODE", 1}, {"CHUNK", chunk}};
    struct wgf_pipeline_desc rd = {.label = reset_label, .wgsl = src, .prelude = prelude, .constants = reset_k, .n_constants = 2};
    struct wgf_pipeline_desc sd = {.label = label, .wgsl = src, .prelude = prelude, .constants = step_k, .n_constants = 2};
    /* fused-wide: its own step kernel (no MODE: reset stays sim_episode's / finsim's), no
     * policy fragment (finsim_wide reads the weights from workgroup memory) */
    const enum wgf_kernel wide_frags[1] = {wgf__sim_env_kernel(c->workload)};
    char       *wide_prelude  = wide ? wgf__sim_compose(sim, wide_frags, fin ? 0 : 1, err) : NULL;
    struct wgf_constant wide_k[1] = {{"CHUNK", chunk}};
    if (wide) {
        if (!wide_prelude) {
            free(prelude);
            return err ? err->status : WGF_ERR_NOMEM;
        }
        sd.wgsl    = wgf__kernel_wgsl(fin ? WGF_KERNEL_FINSIM_WIDE : WGF_KERNEL_SIM_EPISODE_WIDE);
        sd.prelude = wide_prelude;
        sd.constants = wide_k, sd.n_constants = 1;
    }
    s = wgf_pipeline_get(sim->ctx, &rd, &sim->reset);
    if (s == WGF_OK) s = wgf_pipeline_get(sim->ctx, &sd, &sim->step);
    free(prelude);
    free(wide_prelude);
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, label);

    for (int p = 0; p < 2; p++) {
        /* reset writes state_buf[0]; chunk c reads state_buf[c & 1] and writes the other */
        wgf_buffer *rb[6] = {sim->state_buf[0], sim->fitness, sim->state_buf[1], sim->params[p], sim->ctl[p], NULL};
        if (fin) rb[4] = sim->mkt_returns, rb[5] = sim->mkt_signals;
        if ((s = wgf__sim_bind_group(sim, sim->reset, rb, fin ? 6 : 5, &sim->reset_bg[p], err)) != WGF_OK) return s;
        for (int q = 0; q < 2; q++) {
            wgf_buffer *b[6] = {sim->state_buf[!q], sim->fitness, sim->state_buf[q], sim->params[p], sim->ctl[p], NULL};
            if (fin) b[4] = sim->mkt_returns, b[5] = sim->mkt_signals;
            if ((s = wgf__sim_bind_group(sim, sim->step, b, fin ? 6 : 5, &sim->step_bg[p][q], err)) != WGF_OK) return s;
        }
    }
    return WGF_OK;
}

enum wgf_status wgf__sim_emit(struct wgf__sim_emit *e, wgf_pipeline *p, wgf_bind_group *bg, uint32_t x, uint32_t y,
                              uint32_t wg_size, uint64_t barriers, uint64_t chain, struct wgf_step_cost cost)
{
    if (e->r) {
        enum wgf_status s = wgf_recorder_dispatch(e->r, p, bg, x, y, 1);
        if (s == WGF_OK) e->n++;
        return s;
    }
    if (e->steps && e->n < e->cap) {
        struct wgf_step_info *st = &e->steps[e->n];
        memset(st, 0, sizeof *st);
        st->kind = WGF_STEP_DISPATCH;
        snprintf(st->label, sizeof st->label, "%s", wgf_pipeline_label(p));
        st->grid[0] = x, st->grid[1] = y, st->grid[2] = 1;
        st->cost    = cost;
        st->wg_size = wg_size;
        st->barriers = barriers;
        st->chain_flops = chain;
    }
    e->n++;
    return WGF_OK;
}

uint64_t wgf__sim_step_flops(const wgf_sim *sim)
{
    /* env_obs + env_step, estimated from the kernels (src/kernels/sim/<env>.wgsl): CartPole's
     * Euler step (sin, cos and ~25 arithmetic ops), Acrobot's RK4 (4 derivative evaluations of
     * ~40 ops with 4 transcendental each, + wrap), MountainCar (one cos, ~10 ops), finsim's
     * 16-asset book (per asset: the policy's 6 outputs, costs, equity ~ 60 ops) */
    static const uint64_t env[WGF_SIM_N_WORKLOADS] = {45, 380, 20, 0, 16 * 60};
    const struct wgf_sim_policy *p = &sim->pol;
    uint64_t pol = 2u * (uint64_t)(p->n_in * p->n_hidden + p->n_hidden * p->n_out) + 10u * (uint64_t)p->n_hidden +
                   (uint64_t)p->n_out; /* the MLP, tanh per hidden unit, argmax */
    if (sim->cfg.workload == WGF_SIM_FINSIM) pol *= WGF_FIN_ASSETS;
    return pol + env[sim->cfg.workload];
}

uint64_t wgf__sim_lane_flops(const wgf_sim *sim)
{
    const struct wgf_sim_policy *p = &sim->pol;
    uint64_t total = wgf__sim_step_flops(sim), full = 2u * (uint64_t)(p->n_in * p->n_hidden + p->n_hidden * p->n_out) +
                                                    10u * (uint64_t)p->n_hidden;
    if (sim->cfg.workload == WGF_SIM_FINSIM) return total / WGF_FIN_ASSETS; /* a lane per asset */
    /* one hidden unit (2 n_in + tanh), then every output over all hidden units, argmax, env */
    return total - full + 2u * (uint64_t)p->n_in + 10u + 2u * (uint64_t)(p->n_hidden * p->n_out);
}

enum wgf_status wgf__sim_emit_evaluate(wgf_sim *sim, struct wgf__sim_emit *e, struct wgf_err *err)
{
    const struct wgf_sim_config *c = &sim->cfg;
    const int p  = sim->parity;
    uint64_t  gn = (uint64_t)c->eval_count, rec = (uint64_t)(sim->stride ? sim->stride : 1) * 4u;
    uint32_t  nx = (uint32_t)((gn + WGF_SIM_WG - 1) / WGF_SIM_WG); /* reset: a thread per genome */
    enum wgf_status s = WGF_OK;
    /* reset: hashes a start state per genome (~20 integer ops per component, counted as FLOPs) */
    if (sim->reset)
        s = wgf__sim_emit(e, sim->reset, sim->reset_bg[p], nx, 1, WGF_SIM_WG, 0, 0,
                          (struct wgf_step_cost){16, gn * (rec + 4u), gn * 80u});
    /* episode chunks: chunk i runs clamp(T - i K, 0, K) steps of every genome still running,
     * T the steps one SIMD group runs (a group runs until its longest episode ends) */
    uint64_t K = c->workload == WGF_SIM_RASTRIGIN ? 1 : (uint64_t)(c->max_steps + sim->n_chunks - 1) / (uint64_t)sim->n_chunks;
    uint64_t T = e->episode_steps && (int)e->episode_steps < c->max_steps ? e->episode_steps : (uint64_t)c->max_steps;
    for (int ch = 0; ch < sim->n_chunks && s == WGF_OK; ch++) {
        struct wgf_step_cost cost;
        uint64_t             bar = 0, chain = 0;
        if (c->workload == WGF_SIM_RASTRIGIN) { /* a workgroup per genome over the dimensions */
            uint64_t d = (uint64_t)sim->n_params;
            cost       = (struct wgf_step_cost){gn * d * 4u, gn * 4u, gn * d * 15u};
            bar        = 8; /* the 64-lane tree sum */
        } else {
            uint64_t done = (uint64_t)ch * K, run = T > done ? (T - done < K ? T - done : K) : 0;
            cost.bytes_read    = gn * rec + (run ? gn * (uint64_t)sim->n_params * 4u : 0) + 16u;
            cost.bytes_written = gn * (rec + 4u);
            cost.flops         = gn * run * wgf__sim_step_flops(sim);
            if (c->workload == WGF_SIM_FINSIM) cost.bytes_read += run * (WGF_FIN_ASSETS + WGF_FIN_SIGNALS) * 4u;
            /* the chain one invocation runs: a genome's steps (thread per genome); fused-wide: a
             * lane's share of a step (its hidden unit, every output, the environment), with 3
             * barriers a step (the live check, hidden units, outputs) */
            if (c->strategy == WGF_SIM_FUSED_WIDE) {
                bar   = 3u * run + 2u;
                chain = run * wgf__sim_lane_flops(sim);
            } else
                chain = run * wgf__sim_step_flops(sim);
        }
        s = wgf__sim_emit(e, sim->step, sim->step_bg[p][ch & 1], sim->step_groups, sim->step_groups_y, WGF_SIM_WG, bar,
                          chain, cost);
    }
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, wgf_pipeline_label(sim->step));
    if (e->r) sim->state_parity = sim->n_chunks & 1;
    return WGF_OK;
}

enum wgf_status wgf__sim_record_evaluate(wgf_sim *sim, wgf_recorder *r, struct wgf_err *err)
{
    struct wgf__sim_emit e = {.r = r};
    return wgf__sim_emit_evaluate(sim, &e, err);
}

enum wgf_status wgf_sim_evaluate(wgf_sim *sim, struct wgf_err *err)
{
    wgf_recorder *r = NULL;
    enum wgf_status s = wgf_recorder_begin(sim->ctx, "sim.evaluate", NULL, &r);
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "evaluate");
    if ((s = wgf__sim_record_evaluate(sim, r, err)) != WGF_OK) {
        wgf_recorder_abandon(r);
        return s;
    }
    if ((s = wgf_recorder_submit(r)) != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "evaluate submit");
    return WGF_OK;
}
