/* wgfuse sim — the OpenAI-ES trainer (src/kernels/es.wgsl): antithetic sampling around a
 * centre theta, centered-rank fitness shaping, an Adam step on theta. One generation:
 *
 *   es_sample  es_bg[0][p]   theta -> params[p] (pairs theta +- sigma eps)
 *   reset + episode          the sim's own strategy (fused / chunked / per-step)
 *   es_rank    es_bg[1][p]   fitness -> centered ranks
 *   es_update  es_bg[2][p]   ranks + regenerated eps -> Adam step on theta; ctl[!p] = ctl[p]+1
 *
 * The Adam step count is the generation counter + 1, so set the generation to 0 before
 * training (wgf_sim_create does). */
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim_internal.h"

struct es_uniform {
    float sigma, lr, beta1, beta2, eps, weight_decay, pad[2]; /* 32 bytes */
};

struct wgf_sim_es {
    wgf_sim        *sim;            /* borrowed                                           */
    wgf_buffer     *theta;          /* (n_params) f32, the distribution's centre           */
    wgf_buffer     *adam_m;         /* (n_params) f32                                     */
    wgf_buffer     *adam_v;         /* (n_params) f32                                     */
    wgf_buffer     *ranks;          /* (pop) f32, centered ranks in [-0.5, 0.5]            */
    wgf_buffer     *uniform;        /* 32 B es_uniform                                    */
    wgf_pipeline   *pipe[3];        /* sample, rank, update (MODE 0, 1, 2)                */
    wgf_bind_group *bg[3][2];       /* [mode][params parity]                              */
};

struct wgf_sim_es_config wgf_sim_es_config_default(void)
{
    struct wgf_sim_es_config c = {.sigma = 0.1f, .lr = 0.03f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                                  .weight_decay = 0.005f};
    return c;
}

enum wgf_status wgf_sim_es_create(wgf_sim *sim, const struct wgf_sim_es_config *cfg, const float *theta0,
                                  wgf_sim_es **out, struct wgf_err *err)
{
    *out = NULL;
    if (!sim || sim->cfg.pop % 2) return wgf_fail(err, WGF_ERR_ARG, "sim: ES needs an even population (antithetic pairs)");
    if (!(cfg->sigma > 0) || !(cfg->lr > 0)) return wgf_fail(err, WGF_ERR_ARG, "sim: ES sigma and lr must be > 0");
    wgf_sim_es *es = calloc(1, sizeof *es);
    if (!es) return wgf_fail(err, WGF_ERR_NOMEM, "sim: ES state");
    es->sim = sim;
    wgf_ctx *ctx = sim->ctx;
    size_t   np  = (size_t)sim->n_params;
    float   *t0  = malloc(np * sizeof *t0);
    enum wgf_status s = t0 ? WGF_OK : wgf_fail(err, WGF_ERR_NOMEM, "sim: ES theta");
    struct { const char *label; wgf_buffer **b; uint64_t size; unsigned usage; } bufs[5] = {
        {"sim_es.theta", &es->theta, np * 4, WGF_BUF_STORAGE},
        {"sim_es.adam_m", &es->adam_m, np * 4, WGF_BUF_STORAGE},
        {"sim_es.adam_v", &es->adam_v, np * 4, WGF_BUF_STORAGE},
        {"sim_es.ranks", &es->ranks, (uint64_t)sim->cfg.pop * 4, WGF_BUF_STORAGE},
        {"sim_es.uniform", &es->uniform, sizeof(struct es_uniform), WGF_BUF_UNIFORM},
    };
    for (int i = 0; i < 5 && s == WGF_OK; i++)
        if ((s = wgf_buffer_create(ctx, bufs[i].label, bufs[i].size, bufs[i].usage, bufs[i].b)) != WGF_OK)
            s = wgf__sim_gpu_fail(sim, err, s, bufs[i].label);
    if (s == WGF_OK && !theta0) {
        /* genome 0 of the current population */
        s = wgf_buffer_read(ctx, sim->params[sim->parity], 0, t0, np * 4);
        if (s != WGF_OK) s = wgf__sim_gpu_fail(sim, err, s, "ES theta0");
        theta0 = t0;
    }
    struct es_uniform u = {cfg->sigma, cfg->lr, cfg->beta1, cfg->beta2, cfg->eps, cfg->weight_decay, {0, 0}};
    if (s == WGF_OK && (s = wgf_buffer_write(ctx, es->theta, 0, theta0, np * 4)) != WGF_OK) s = wgf__sim_gpu_fail(sim, err, s, "theta");
    if (s == WGF_OK && (s = wgf_buffer_write(ctx, es->uniform, 0, &u, sizeof u)) != WGF_OK) s = wgf__sim_gpu_fail(sim, err, s, "es uniform");
    free(t0);

    char *prelude = s == WGF_OK ? wgf__sim_compose(sim, NULL, 0, err) : NULL;
    if (s == WGF_OK && !prelude) s = err ? err->status : WGF_ERR_NOMEM;
    static const char *names[3] = {"es_sample", "es_rank", "es_update"};
    for (int m = 0; m < 3 && s == WGF_OK; m++) {
        char label[64];
        snprintf(label, sizeof label, "%s_%s", names[m], wgf_sim_workload_info(sim->cfg.workload)->name);
        struct wgf_constant k = {"MODE", m};
        struct wgf_pipeline_desc d = {.label = label, .wgsl = wgf__kernel_wgsl(WGF_KERNEL_ES), .prelude = prelude,
                                      .constants = &k, .n_constants = 1};
        if ((s = wgf_pipeline_get(ctx, &d, &es->pipe[m])) != WGF_OK) {
            s = wgf__sim_gpu_fail(sim, err, s, label);
            break;
        }
        for (int p = 0; p < 2 && s == WGF_OK; p++) {
            wgf_buffer *b[9] = {sim->params[p], es->ranks, es->theta, es->adam_m, es->adam_v,
                                sim->ctl[!p],   sim->fitness, sim->ctl[p], es->uniform};
            if ((s = wgf_bind_group_create(ctx, es->pipe[m], b, 9, &es->bg[m][p])) != WGF_OK)
                s = wgf__sim_gpu_fail(sim, err, s, label);
        }
    }
    free(prelude);
    if (s != WGF_OK) {
        wgf_sim_es_free(es);
        return s;
    }
    *out = es;
    return WGF_OK;
}

void wgf_sim_es_free(wgf_sim_es *es)
{
    if (!es) return;
    for (int m = 0; m < 3; m++)
        for (int p = 0; p < 2; p++) wgf_bind_group_free(es->bg[m][p]);
    wgf_buffer_free(es->theta);
    wgf_buffer_free(es->adam_m);
    wgf_buffer_free(es->adam_v);
    wgf_buffer_free(es->ranks);
    wgf_buffer_free(es->uniform);
    free(es);
}

/* The first half of an ES generation: sample the population around theta, then evaluate. */
static enum wgf_status record_sample_evaluate(wgf_sim_es *es, wgf_recorder *r, struct wgf_err *err)
{
    wgf_sim *sim    = es->sim;
    uint32_t nx_pop = (uint32_t)((sim->cfg.pop + WGF_SIM_WG - 1) / WGF_SIM_WG);
    enum wgf_status s = wgf_recorder_dispatch(r, es->pipe[0], es->bg[0][sim->parity], nx_pop, 1, 1);
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "ES sample");
    return wgf__sim_record_evaluate(sim, r, err);
}

/* The second half: centered ranks of the fitness, Adam update of theta; the counter advances. */
static enum wgf_status record_update(wgf_sim_es *es, wgf_recorder *r, struct wgf_err *err)
{
    wgf_sim *sim    = es->sim;
    int      p      = sim->parity;
    uint32_t nx_pop = (uint32_t)((sim->cfg.pop + WGF_SIM_WG - 1) / WGF_SIM_WG);
    uint32_t nx_par = (uint32_t)((sim->n_params + WGF_SIM_WG - 1) / WGF_SIM_WG);
    enum wgf_status s = wgf_recorder_dispatch(r, es->pipe[1], es->bg[1][p], nx_pop, 1, 1);
    if (s == WGF_OK) s = wgf_recorder_dispatch(r, es->pipe[2], es->bg[2][p], nx_par, 1, 1);
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "ES update");
    sim->parity = !p;
    sim->gen++;
    return WGF_OK;
}

/* n generations, or (halves 1 / 2) one half of one, in one submit. */
static enum wgf_status es_submit(wgf_sim_es *es, int n, int halves, struct wgf_err *err)
{
    wgf_sim      *sim = es->sim;
    wgf_recorder *r   = NULL;
    enum wgf_status s = wgf_recorder_begin(sim->ctx, "sim_es.generations", NULL, &r);
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "ES generations");
    for (int i = 0; i < n && s == WGF_OK; i++) {
        if (halves & 1) s = record_sample_evaluate(es, r, err);
        if (s == WGF_OK && (halves & 2)) s = record_update(es, r, err);
    }
    if (s != WGF_OK) {
        wgf_recorder_abandon(r);
        return s;
    }
    if ((s = wgf_recorder_submit(r)) != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "ES submit");
    return WGF_OK;
}

enum wgf_status wgf_sim_es_generations(wgf_sim_es *es, int n, struct wgf_err *err) { return es_submit(es, n, 3, err); }
enum wgf_status wgf_sim_es_sample_evaluate(wgf_sim_es *es, struct wgf_err *err) { return es_submit(es, 1, 1, err); }
enum wgf_status wgf_sim_es_update(wgf_sim_es *es, struct wgf_err *err) { return es_submit(es, 1, 2, err); }

enum wgf_status wgf_sim_es_theta_read(wgf_sim_es *es, float *theta, struct wgf_err *err)
{
    enum wgf_status s = wgf_buffer_read(es->sim->ctx, es->theta, 0, theta, (size_t)es->sim->n_params * 4);
    return s == WGF_OK ? WGF_OK : wgf__sim_gpu_fail(es->sim, err, s, "theta read");
}
