/* wgfuse sim — the GA's evolve step on the GPU (src/kernels/evolve.wgsl).
 *
 * One dispatch turns params[p] into params[!p]: the `elites` best genomes keep their
 * genomes in slots 0..elites-1 (best first), every other slot gets a tournament-selected,
 * uniformly crossed-over, gaussian-mutated child. Thread 0 also advances the generation
 * counter (ctl[!p] = ctl[p] + 1), so generations chain on the GPU without host writes.
 * Two kernels, same results: evolve.wgsl (a thread per genome) and evolve_wide.wgsl (a
 * workgroup per genome, coalesced rows) for genomes of 512 parameters and more. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

struct ga_uniform {
    uint32_t elites, tournament;
    float    mut_rate, mut_sigma;
    uint32_t pad[4]; /* 32 bytes */
};

enum wgf_status wgf__sim_evolve_init(wgf_sim *sim, struct wgf_err *err)
{
    char label[64];
    const char *frags[1] = {"sim_rng"};
    const char *role     = sim->cfg.evolve_wide ? "evolve_wide" : "evolve";
    const char *src      = wgf_kernel_source(role);
    char       *prelude  = wgf__sim_compose(sim, frags, 1, err);
    if (!prelude) return err ? err->status : WGF_ERR_INTERNAL;
    if (!src) {
        free(prelude);
        return wgf_fail(err, WGF_ERR_INTERNAL, "sim: kernel '%s' is not embedded", role);
    }
    snprintf(label, sizeof label, "%s_%s", role, wgf_sim_workload_info(sim->cfg.workload)->name);
    struct wgf_pipeline_desc d = {.label = label, .wgsl = src, .prelude = prelude};
    enum wgf_status s = wgf_pipeline_get(sim->ctx, &d, &sim->evolve);
    free(prelude);
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, label);

    s = wgf_buffer_create(sim->ctx, "sim.ga", sizeof(struct ga_uniform), WGF_BUF_UNIFORM, &sim->ga);
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "sim.ga");
    struct ga_uniform u = {(uint32_t)sim->cfg.ga.elites, (uint32_t)sim->cfg.ga.tournament, sim->cfg.ga.mut_rate,
                           sim->cfg.ga.mut_sigma, {0}};
    if ((s = wgf_buffer_write(sim->ctx, sim->ga, 0, &u, sizeof u)) != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "sim.ga");
    for (int p = 0; p < 2; p++) {
        wgf_buffer *b[6] = {sim->params[!p], sim->ctl[!p], sim->params[p], sim->fitness, sim->ctl[p], sim->ga};
        if ((s = wgf_bind_group_create(sim->ctx, sim->evolve, b, 6, &sim->evolve_bg[p])) != WGF_OK)
            return wgf__sim_gpu_fail(sim, err, s, label);
    }
    return WGF_OK;
}

enum wgf_status wgf__sim_record_evolve(wgf_sim *sim, wgf_recorder *r, struct wgf_err *err)
{
    uint32_t nx = sim->cfg.evolve_wide ? (uint32_t)sim->cfg.pop : (uint32_t)((sim->cfg.pop + WGF_SIM_WG - 1) / WGF_SIM_WG);
    enum wgf_status s = wgf_recorder_dispatch(r, sim->evolve, sim->evolve_bg[sim->parity], nx, 1, 1);
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, wgf_pipeline_label(sim->evolve));
    sim->parity = !sim->parity;
    sim->gen++;
    return WGF_OK;
}

enum wgf_status wgf_sim_evolve(wgf_sim *sim, struct wgf_err *err)
{
    wgf_recorder *r = NULL;
    enum wgf_status s = wgf_recorder_begin(sim->ctx, "sim.evolve", NULL, &r);
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "evolve");
    if ((s = wgf__sim_record_evolve(sim, r, err)) != WGF_OK) {
        wgf_recorder_abandon(r);
        return s;
    }
    if ((s = wgf_recorder_submit(r)) != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "evolve submit");
    return WGF_OK;
}
