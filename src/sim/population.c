/* wgfuse sim — the GPU population object: configuration, creation (every buffer, pipeline
 * and bind group up front: the episode by strategies.c, the evolve step by evolve.c), the
 * population and fitness on the host side, and n generations in one submit.
 *
 *   params[2]    (pop, n_params) f32, ping-pong across evolve; params[parity] is current
 *   state_buf[2] (pop, stride) f32, ping-pong across episode dispatches
 *   ctl[2]       (4) u32 generation, seed; advances on the GPU with params
 *   fitness      (pop) f32, the last evaluation's returns */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

struct wgf_sim_config wgf_sim_config_default(enum wgf_sim_workload w)
{
    struct wgf_sim_config c = {0};
    c.workload      = w;
    c.strategy      = WGF_SIM_FUSED;
    c.chunk         = 50;
    c.pop           = 1024;
    c.n_feedback    = -1;
    c.dim           = 2000;
    c.seed          = 1;
    c.init_sigma    = 1.0f;
    c.ga.elites     = 8;
    c.ga.tournament = 4;
    c.ga.mut_rate   = 0.1f;
    c.ga.mut_sigma  = 0.2f;
    c.evolve        = WGF_SIM_EVOLVE_AUTO;
    if (w == WGF_SIM_RASTRIGIN) c.pop = 4096, c.ga.mut_rate = 0.01f, c.ga.mut_sigma = 0.1f;
    if (w == WGF_SIM_FINSIM) c.pop = 10000, c.init_sigma = 0.5f, c.ga.mut_sigma = 0.05f;
    return c;
}

/* Host-side initial population: N(0, init_sigma^2) (Rastrigin: U(-5.12, 5.12)), drawn
 * from the hash RNG so a seed fixes it on every machine. */
static enum wgf_status init_population(wgf_sim *sim, struct wgf_err *err)
{
    size_t n = (size_t)sim->cfg.pop * (size_t)sim->n_params;
    float *p = malloc(n * sizeof *p);
    if (!p) return wgf_fail(err, WGF_ERR_NOMEM, "sim: initial population (%zu floats)", n);
    for (uint32_t g = 0; g < (uint32_t)sim->cfg.pop; g++)
        for (uint32_t k = 0; k < (uint32_t)sim->n_params; k++) {
            float v;
            if (sim->cfg.workload == WGF_SIM_RASTRIGIN)
                v = -5.12f + 10.24f * wgf_sim_u01(wgf_sim_rand(sim->cfg.seed, 0, g, WGF_SIM_J(WGF_SIM_TAG_INIT, k)));
            else
                v = sim->cfg.init_sigma * wgf_sim_normal(sim->cfg.seed, 0, g, WGF_SIM_TAG_INIT, k);
            p[(size_t)g * (size_t)sim->n_params + k] = v;
        }
    enum wgf_status s = wgf_sim_params_write(sim, p, err);
    free(p);
    return s;
}

static enum wgf_status check_config(wgf_ctx *ctx, struct wgf_sim_config *c, struct wgf_err *err)
{
    const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(c->workload);
    if (!ctx) return wgf_fail(err, WGF_ERR_ARG, "sim: no GPU context");
    if (!wi) return wgf_fail(err, WGF_ERR_ARG, "sim: unknown workload %d", (int)c->workload);
    if (c->pop < 2 || c->pop > (c->workload == WGF_SIM_RASTRIGIN ? 65535 : 4000000))
        return wgf_fail(err, WGF_ERR_ARG, "sim: population %d out of range (2..%d)", c->pop,
                        c->workload == WGF_SIM_RASTRIGIN ? 65535 : 4000000);
    if (c->max_steps <= 0) c->max_steps = wi->max_steps;
    if (c->hidden <= 0) c->hidden = wi->hidden;
    if (c->n_feedback < 0) c->n_feedback = wi->n_feedback;
    if (wi->sequential && (c->max_steps > 1000000))
        return wgf_fail(err, WGF_ERR_ARG, "sim: episode length %d out of range (1..1000000)", c->max_steps);
    if (c->hidden > 64) return wgf_fail(err, WGF_ERR_ARG, "sim: hidden width %d > 64", c->hidden);
    if (c->n_feedback > 4 || (c->workload == WGF_SIM_FINSIM && c->n_feedback != 2))
        return wgf_fail(err, WGF_ERR_ARG, "sim: %d fed-back outputs (0..4; finsim: 2)", c->n_feedback);
    if (c->workload == WGF_SIM_FINSIM && c->hidden != 16)
        return wgf_fail(err, WGF_ERR_ARG, "sim: finsim's policy is 8-16-6 (hidden %d given)", c->hidden);
    if (c->eval_count == 0 && c->eval_first == 0) c->eval_count = c->pop;
    if (c->eval_first < 0 || c->eval_count < 1 || c->eval_first > c->pop - c->eval_count)
        return wgf_fail(err, WGF_ERR_ARG, "sim: evaluated genomes %d .. %d outside the population of %d", c->eval_first,
                        c->eval_first + c->eval_count - 1, c->pop);
    if (c->evolve < WGF_SIM_EVOLVE_AUTO || c->evolve > WGF_SIM_EVOLVE_SPLIT)
        return wgf_fail(err, WGF_ERR_ARG, "sim: evolve %d (-1 auto, 0 thread, 1 wide, 2 split)", (int)c->evolve);
    if (c->evolve == WGF_SIM_EVOLVE_WIDE && c->pop > 65535)
        return wgf_fail(err, WGF_ERR_ARG, "sim: evolve wide needs a population <= 65535 (one workgroup each)");
    if (c->workload == WGF_SIM_RASTRIGIN && (c->dim < 1 || c->dim > 1000000))
        return wgf_fail(err, WGF_ERR_ARG, "sim: Rastrigin dimension %d out of range", c->dim);
    if (c->strategy == WGF_SIM_CHUNKED && c->chunk < 1) return wgf_fail(err, WGF_ERR_ARG, "sim: chunk %d < 1", c->chunk);
    if (c->strategy == WGF_SIM_FUSED_WIDE && c->workload == WGF_SIM_RASTRIGIN)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "sim: fused-wide is for sequential workloads (not rastrigin)");
    if (c->ga.elites < 0 || c->ga.elites >= c->pop || c->ga.tournament < 1 || c->ga.tournament > 64 ||
        !(c->ga.mut_rate >= 0 && c->ga.mut_rate <= 1) || !(c->ga.mut_sigma >= 0))
        return wgf_fail(err, WGF_ERR_ARG, "sim: GA settings: elites %d (0..pop-1), tournament %d (1..64), rate %g, sigma %g",
                        c->ga.elites, c->ga.tournament, c->ga.mut_rate, c->ga.mut_sigma);
    return WGF_OK;
}

enum wgf_status wgf_sim_create(wgf_ctx *ctx, const struct wgf_sim_config *cfg, wgf_sim **out, struct wgf_err *err)
{
    *out = NULL;
    struct wgf_sim_config c = *cfg;
    enum wgf_status s = check_config(ctx, &c, err);
    if (s != WGF_OK) return s;
    wgf_sim *sim = calloc(1, sizeof *sim);
    if (!sim) return wgf_fail(err, WGF_ERR_NOMEM, "sim: %zu bytes", sizeof *sim);
    sim->ctx = ctx;
    if (c.workload == WGF_SIM_RASTRIGIN) {
        sim->n_params = c.dim;
        sim->stride   = 0;
    } else {
        sim->pol      = wgf_sim_policy_for(c.workload, c.hidden, c.n_feedback);
        sim->n_params = wgf_sim_policy_n_params(&sim->pol);
        sim->stride   = c.workload == WGF_SIM_FINSIM ? WGF_SIM_FIN_STRIDE : WGF_SIM_STRIDE;
    }
    /* evolve kernels (src/sim/evolve.c), same bits either way: 2 = split (evolve_select,
     * evolve_rank, evolve_breed), 0 = evolve.wgsl, 1 = evolve_wide.wgsl (one dispatch each).
     * Auto (-1): split on a GPU, where the one-dispatch kernels' serial rank scan is a long
     * latency chain; on a CPU adapter (lavapipe) there is no latency to hide and the split's
     * extra passes and 4,096-workgroup breed cost more than they save, so the one-dispatch
     * kernels (wide from 512 parameters) stay. */
    if (c.evolve == WGF_SIM_EVOLVE_AUTO) {
        const struct wgf_adapter_desc *ad = wgf_ctx_adapter(ctx);
        bool cpu = ad && !strcmp(ad->type, "cpu");
        c.evolve = !cpu                                     ? WGF_SIM_EVOLVE_SPLIT
                   : sim->n_params >= 512 && c.pop <= 65535 ? WGF_SIM_EVOLVE_WIDE
                                                            : WGF_SIM_EVOLVE_THREAD;
    }
    sim->cfg = c;
    uint64_t pop = (uint64_t)c.pop, params_bytes = pop * (uint64_t)sim->n_params * 4u;
    uint64_t state_bytes = pop * (uint64_t)(sim->stride ? sim->stride : 1) * 4u;
    char label[64];
    for (int i = 0; i < 2 && s == WGF_OK; i++) {
        snprintf(label, sizeof label, "sim.params[%d]", i);
        s = wgf__sim_buffer(sim, label, params_bytes, WGF_BUF_STORAGE, &sim->params[i], err);
        snprintf(label, sizeof label, "sim.state_buf[%d]", i);
        if (s == WGF_OK) s = wgf__sim_buffer(sim, label, state_bytes, WGF_BUF_STORAGE, &sim->state_buf[i], err);
        snprintf(label, sizeof label, "sim.ctl[%d]", i);
        if (s == WGF_OK) s = wgf__sim_buffer(sim, label, 16, WGF_BUF_STORAGE, &sim->ctl[i], err);
    }
    if (s == WGF_OK) s = wgf__sim_buffer(sim, "sim.fitness", pop * 4u, WGF_BUF_STORAGE, &sim->fitness, err);
    if (s == WGF_OK && c.workload == WGF_SIM_FINSIM) {
        s = wgf_sim_market_generate(c.seed, c.max_steps, &sim->market, err);
        uint64_t L = (uint64_t)c.max_steps;
        if (s == WGF_OK) s = wgf__sim_buffer(sim, "sim.mkt_returns", L * WGF_FIN_ASSETS * 4u, WGF_BUF_STORAGE, &sim->mkt_returns, err);
        if (s == WGF_OK) s = wgf__sim_buffer(sim, "sim.mkt_signals", L * WGF_FIN_SIGNALS * 4u, WGF_BUF_STORAGE, &sim->mkt_signals, err);
        if (s == WGF_OK && (s = wgf_buffer_write(ctx, sim->mkt_returns, 0, sim->market.returns, L * WGF_FIN_ASSETS * 4u)) != WGF_OK)
            s = wgf__sim_gpu_fail(sim, err, s, "upload market returns");
        if (s == WGF_OK && (s = wgf_buffer_write(ctx, sim->mkt_signals, 0, sim->market.signals, L * WGF_FIN_SIGNALS * 4u)) != WGF_OK)
            s = wgf__sim_gpu_fail(sim, err, s, "upload market signals");
    }
    if (s == WGF_OK) s = wgf__sim_episode_init(sim, err);
    if (s == WGF_OK) s = wgf__sim_evolve_init(sim, err);
    if (s == WGF_OK) s = init_population(sim, err);
    if (s == WGF_OK) s = wgf_sim_generation_set(sim, 0, err);
    if (s != WGF_OK) {
        wgf_sim_free(sim);
        return s;
    }
    *out = sim;
    return WGF_OK;
}

void wgf_sim_free(wgf_sim *sim)
{
    if (!sim) return;
    for (int p = 0; p < 2; p++) {
        wgf_bind_group_free(sim->reset_bg[p]);
        wgf_bind_group_free(sim->evolve_bg[p]);
        wgf_bind_group_free(sim->select_bg[p]);
        wgf_bind_group_free(sim->breed_bg[p]);
        for (int q = 0; q < 2; q++) wgf_bind_group_free(sim->step_bg[p][q]);
        wgf_buffer_free(sim->params[p]);
        wgf_buffer_free(sim->state_buf[p]);
        wgf_buffer_free(sim->ctl[p]);
    }
    wgf_buffer_free(sim->fitness);
    wgf_buffer_free(sim->ga);
    wgf_bind_group_free(sim->rank_bg);
    wgf_buffer_free(sim->sel);
    wgf_buffer_free(sim->cand_idx);
    wgf_buffer_free(sim->cand_fit);
    wgf_buffer_free(sim->elite);
    wgf_buffer_free(sim->mkt_returns);
    wgf_buffer_free(sim->mkt_signals);
    wgf_sim_market_free(&sim->market);
    free(sim); /* pipelines belong to the context */
}

const struct wgf_sim_config *wgf_sim_config_of(const wgf_sim *sim) { return &sim->cfg; }
struct wgf_sim_policy        wgf_sim_policy_of(const wgf_sim *sim) { return sim->pol; }
int                          wgf_sim_n_params(const wgf_sim *sim) { return sim->n_params; }
uint32_t                     wgf_sim_generation(const wgf_sim *sim) { return sim->gen; }
const struct wgf_sim_market *wgf_sim_market_of(const wgf_sim *sim)
{
    return sim->cfg.workload == WGF_SIM_FINSIM ? &sim->market : NULL;
}

enum wgf_status wgf_sim_generation_steps(wgf_sim *sim, uint32_t episode_steps, struct wgf_step_info *out, uint32_t cap,
                                         uint32_t *n, struct wgf_err *err)
{
    struct wgf__sim_emit e = {.steps = out, .cap = cap, .episode_steps = episode_steps};
    enum wgf_status      s = wgf__sim_emit_evaluate(sim, &e, err);
    if (s == WGF_OK) s = wgf__sim_emit_evolve(sim, &e, false, err);
    *n = e.n;
    if (s == WGF_OK && out && e.n > cap)
        s = wgf_fail(err, WGF_ERR_LIMIT, "sim: %u dispatches per generation, room for %u", e.n, cap);
    return s;
}

int wgf_sim_dispatches_per_generation(const wgf_sim *sim)
{
    return (sim->reset ? 1 : 0) + sim->n_chunks + sim->evolve_dispatches;
}

enum wgf_status wgf_sim_fitness_read_range(wgf_sim *sim, int first, int n, float *fitness, struct wgf_err *err)
{
    if (first < 0 || n < 1 || first > sim->cfg.pop - n)
        return wgf_fail(err, WGF_ERR_ARG, "sim: fitness %d .. %d of %d genomes", first, first + n - 1, sim->cfg.pop);
    enum wgf_status s = wgf_buffer_read(sim->ctx, sim->fitness, (uint64_t)first * 4u, fitness, (size_t)n * sizeof(float));
    return s == WGF_OK ? WGF_OK : wgf__sim_gpu_fail(sim, err, s, "fitness read");
}

enum wgf_status wgf_sim_fitness_write(wgf_sim *sim, const float *fitness, struct wgf_err *err)
{
    enum wgf_status s = wgf_buffer_write(sim->ctx, sim->fitness, 0, fitness, (size_t)sim->cfg.pop * sizeof(float));
    return s == WGF_OK ? WGF_OK : wgf__sim_gpu_fail(sim, err, s, "fitness write");
}

uint64_t wgf_sim_gpu_bytes(const wgf_sim *sim) { return sim->gpu_bytes; }
double   wgf_sim_bytes_per_genome(const wgf_sim *sim) { return (double)sim->gpu_bytes / (double)sim->cfg.pop; }

enum wgf_status wgf_sim_params_write(wgf_sim *sim, const float *params, struct wgf_err *err)
{
    size_t n = (size_t)sim->cfg.pop * (size_t)sim->n_params * sizeof(float);
    enum wgf_status s = wgf_buffer_write(sim->ctx, sim->params[sim->parity], 0, params, n);
    return s == WGF_OK ? WGF_OK : wgf__sim_gpu_fail(sim, err, s, "params write");
}

enum wgf_status wgf_sim_params_read(wgf_sim *sim, float *params, struct wgf_err *err)
{
    size_t n = (size_t)sim->cfg.pop * (size_t)sim->n_params * sizeof(float);
    enum wgf_status s = wgf_buffer_read(sim->ctx, sim->params[sim->parity], 0, params, n);
    return s == WGF_OK ? WGF_OK : wgf__sim_gpu_fail(sim, err, s, "params read");
}

enum wgf_status wgf_sim_genome_read(wgf_sim *sim, int genome, float *params, struct wgf_err *err)
{
    if (genome < 0 || genome >= sim->cfg.pop) return wgf_fail(err, WGF_ERR_ARG, "sim: genome %d of %d", genome, sim->cfg.pop);
    size_t n = (size_t)sim->n_params * sizeof(float);
    enum wgf_status s = wgf_buffer_read(sim->ctx, sim->params[sim->parity], (uint64_t)genome * n, params, n);
    return s == WGF_OK ? WGF_OK : wgf__sim_gpu_fail(sim, err, s, "genome read");
}

enum wgf_status wgf_sim_generation_set(wgf_sim *sim, uint32_t gen, struct wgf_err *err)
{
    uint32_t ctl[4] = {gen, sim->cfg.seed, 0, 0};
    enum wgf_status s = wgf_buffer_write(sim->ctx, sim->ctl[sim->parity], 0, ctl, sizeof ctl);
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "generation write");
    sim->gen = gen;
    return WGF_OK;
}

enum wgf_status wgf_sim_generations(wgf_sim *sim, int n, struct wgf_err *err)
{
    wgf_recorder *r = NULL;
    enum wgf_status s = wgf_recorder_begin(sim->ctx, "sim.generations", NULL, &r);
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "generations");
    for (int i = 0; i < n && s == WGF_OK; i++) {
        s = wgf__sim_record_evaluate(sim, r, err);
        if (s == WGF_OK) s = wgf__sim_record_evolve(sim, r, err);
    }
    if (s != WGF_OK) {
        wgf_recorder_abandon(r);
        return s;
    }
    if ((s = wgf_recorder_submit(r)) != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "generations submit");
    return WGF_OK;
}

enum wgf_status wgf_sim_fitness_read(wgf_sim *sim, float *fitness, struct wgf_err *err)
{
    enum wgf_status s = wgf_buffer_read(sim->ctx, sim->fitness, 0, fitness, (size_t)sim->cfg.pop * sizeof(float));
    return s == WGF_OK ? WGF_OK : wgf__sim_gpu_fail(sim, err, s, "fitness read");
}
