/* wgfuse sim — the GA's evolve step on the GPU.
 *
 * params[p] -> params[!p]: the `elites` best genomes keep their genomes in slots
 * 0..elites-1 (best first), every other slot gets a tournament-selected, uniformly
 * crossed-over, gaussian-mutated child; the generation counter advances on the GPU
 * (ctl[!p] = ctl[p] + 1), so generations chain without host writes.
 *
 * cfg.evolve SPLIT (the default on GPUs): the split evolve, three small passes in one
 * compute pass:
 *   evolve_select  a thread per genome: its two tournaments and RNG stream -> sel; per
 *                  block of TOP_WG genomes, the block's best min(elites, TOP_WG) in order
 *                  -> cand
 *   evolve_rank    lanes per candidate (one per other block's list): global rank by
 *                  binary searches in the other blocks' sorted lists, summed in workgroup
 *                  memory -> elite (skipped when there is one block)
 *   evolve_breed   a workgroup per child slot: elite copy or crossover + mutation, lanes over
 *                  parameters (coalesced rows); advances the generation counter
 * Why: the one-dispatch kernels (evolve.wgsl, a thread per genome; evolve_wide.wgsl, a
 * workgroup per genome) rank each genome by a serial scan of the whole fitness vector that
 * stops after `elites` better genomes; the elite and near-elite genomes scan all POP, one
 * 4-byte load and compare per step, on 64 workgroups: a latency chain of POP (x elites/rank)
 * steps that dominated a generation on a GPU (H200, 4,096 x 114, 64 elites: 0.38 ms). The
 * split passes give the same bits (tests/sim/test_sim_evolve.c); the one-dispatch kernels
 * (cfg.evolve THREAD / WIDE) stay as references and as the default on CPU adapters, where
 * there is no latency to hide (strategies.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

struct ga_uniform {
    uint32_t elites, tournament;
    float    mut_rate, mut_sigma;
    uint32_t pad[4]; /* 32 bytes */
};

/* Pipeline of an evolve kernel, labelled "<role>_<workload>". */
static enum wgf_status make_pipe(wgf_sim *sim, enum wgf_kernel kernel, const char *prelude, const struct wgf_constant *k,
                                 int nk, wgf_pipeline **out, struct wgf_err *err)
{
    char label[64];
    snprintf(label, sizeof label, "%s_%s", wgf__kernel_role(kernel), wgf_sim_workload_info(sim->cfg.workload)->name);
    struct wgf_pipeline_desc d = {.label       = label,
                                  .wgsl        = wgf__kernel_wgsl(kernel),
                                  .prelude     = prelude,
                                  .constants   = k,
                                  .n_constants = nk};
    enum wgf_status s = wgf_pipeline_get(sim->ctx, &d, out);
    return s == WGF_OK ? WGF_OK : wgf__sim_gpu_fail(sim, err, s, label);
}

/* A storage buffer of at least 16 bytes (a zero-elite population still binds sim.elite). */
static enum wgf_status make_buf(wgf_sim *sim, const char *label, uint64_t bytes, wgf_buffer **out, struct wgf_err *err)
{
    return wgf__sim_buffer(sim, label, bytes < 16 ? 16 : bytes, WGF_BUF_STORAGE, out, err);
}

static enum wgf_status split_init(wgf_sim *sim, const char *prelude, struct wgf_err *err)
{
    int pop = sim->cfg.pop, E = sim->cfg.ga.elites;
    sim->evolve_blocks = (pop + WGF_SIM_TOP_WG - 1) / WGF_SIM_TOP_WG;
    sim->evolve_cand   = E < WGF_SIM_TOP_WG ? E : WGF_SIM_TOP_WG;
    bool rank          = sim->evolve_blocks > 1 && E > 0;
    sim->evolve_dispatches = rank ? 3 : 2;
    uint64_t ncand = (uint64_t)sim->evolve_blocks * (uint64_t)sim->evolve_cand;
    /* evolve_rank: lanes per candidate, the power of two >= the blocks (at most TOP_WG) */
    int lpc = 1;
    while (lpc < sim->evolve_blocks && lpc < WGF_SIM_TOP_WG) lpc <<= 1;
    sim->evolve_lpc = lpc;
    struct wgf_constant k[3] = {{"CE", sim->evolve_cand}, {"NB", sim->evolve_blocks}, {"LPC", lpc}};
    enum wgf_status s = make_pipe(sim, WGF_KERNEL_EVOLVE_SELECT, prelude, k, 1, &sim->evolve_pass[0], err);
    if (s == WGF_OK && rank) s = make_pipe(sim, WGF_KERNEL_EVOLVE_RANK, prelude, k, 3, &sim->evolve_pass[1], err);
    if (s == WGF_OK) s = make_pipe(sim, WGF_KERNEL_EVOLVE_BREED, prelude, NULL, 0, &sim->evolve_pass[2], err);
    if (s == WGF_OK) s = make_buf(sim, "sim.sel", (uint64_t)pop * 16u, &sim->sel, err);
    if (s == WGF_OK) s = make_buf(sim, "sim.cand_idx", ncand * 4u, &sim->cand_idx, err);
    if (s == WGF_OK) s = make_buf(sim, "sim.cand_fit", ncand * 4u, &sim->cand_fit, err);
    if (s == WGF_OK) s = make_buf(sim, "sim.elite", (uint64_t)E * 4u, &sim->elite, err);
    if (s == WGF_OK && rank) {
        wgf_buffer *b[4] = {sim->elite, sim->cand_idx, sim->cand_fit, sim->ga};
        s = wgf__sim_bind_group(sim, sim->evolve_pass[1], b, 4, &sim->rank_bg, err);
    }
    for (int p = 0; p < 2 && s == WGF_OK; p++) {
        wgf_buffer *bs[6] = {sim->sel, sim->cand_idx, sim->cand_fit, sim->fitness, sim->ctl[p], sim->ga};
        s = wgf__sim_bind_group(sim, sim->evolve_pass[0], bs, 6, &sim->select_bg[p], err);
        /* one block: its sorted candidate list is the elite */
        wgf_buffer *bb[7] = {sim->params[!p], sim->ctl[!p],   sim->params[p], sim->sel,
                             rank ? sim->elite : sim->cand_idx, sim->ctl[p], sim->ga};
        if (s == WGF_OK) s = wgf__sim_bind_group(sim, sim->evolve_pass[2], bb, 7, &sim->breed_bg[p], err);
    }
    return s;
}

enum wgf_status wgf__sim_evolve_init(wgf_sim *sim, struct wgf_err *err)
{
    char *prelude = wgf__sim_compose(sim, NULL, 0, err);
    if (!prelude) return err ? err->status : WGF_ERR_INTERNAL;
    enum wgf_status s = wgf__sim_buffer(sim, "sim.ga", sizeof(struct ga_uniform), WGF_BUF_UNIFORM, &sim->ga, err);
    if (s != WGF_OK) {
        free(prelude);
        return s;
    }
    struct ga_uniform u = {(uint32_t)sim->cfg.ga.elites, (uint32_t)sim->cfg.ga.tournament, sim->cfg.ga.mut_rate,
                           sim->cfg.ga.mut_sigma, {0}};
    if ((s = wgf_buffer_write(sim->ctx, sim->ga, 0, &u, sizeof u)) != WGF_OK) {
        free(prelude);
        return wgf__sim_gpu_fail(sim, err, s, "sim.ga");
    }
    if (sim->cfg.evolve == WGF_SIM_EVOLVE_SPLIT) {
        s = split_init(sim, prelude, err);
        free(prelude);
        return s;
    }
    sim->evolve_dispatches = 1;
    s = make_pipe(sim, sim->cfg.evolve == WGF_SIM_EVOLVE_WIDE ? WGF_KERNEL_EVOLVE_WIDE : WGF_KERNEL_EVOLVE, prelude, NULL, 0, &sim->evolve, err);
    free(prelude);
    for (int p = 0; p < 2 && s == WGF_OK; p++) {
        wgf_buffer *b[6] = {sim->params[!p], sim->ctl[!p], sim->params[p], sim->fitness, sim->ctl[p], sim->ga};
        s = wgf__sim_bind_group(sim, sim->evolve, b, 6, &sim->evolve_bg[p], err);
    }
    return s;
}

/* pass_each: end the compute pass after every dispatch, so a timer attached to the recorder
 * times each evolve pass on its own (the bench's profile); otherwise all go into the current
 * pass. Costs (the advisor's): bytes moved in device memory and operations per dispatch, the
 * RNG's integer hashing counted as operations (~10 per draw). */
enum wgf_status wgf__sim_emit_evolve(wgf_sim *sim, struct wgf__sim_emit *e, bool pass_each, struct wgf_err *err)
{
    const int p = sim->parity;
    enum wgf_status s;
    wgf_pipeline   *fail = sim->evolve;
    uint64_t pop = (uint64_t)sim->cfg.pop, np = (uint64_t)sim->n_params, E = (uint64_t)sim->cfg.ga.elites;
    uint64_t T = (uint64_t)sim->cfg.ga.tournament;
    /* a child: two parents read, one written, a crossover and a mutation draw per parameter
     * (4 chained 32-bit hashes each, ~32 ops; a gaussian for the mutated 10%): ~80 ops */
    struct wgf_step_cost breed = {pop * np * 8u + pop * 16u, pop * np * 4u + 16u, pop * np * 80u};
    if (sim->evolve) {
        bool     wide = sim->cfg.evolve == WGF_SIM_EVOLVE_WIDE;
        uint32_t nx   = wide ? (uint32_t)pop : (uint32_t)((pop + WGF_SIM_WG - 1) / WGF_SIM_WG);
        /* + each genome's rank: a scan of the fitness that stops after E better genomes, about
         * E pop / r loads for rank r, all pop for the elites: E pop (1 + ln(pop / E)) compares,
         * and its 2 T tournament draws */
        double scan = (double)E * (double)pop * (1.0 + log((double)pop / (double)(E ? E : 1)));
        breed.flops += (uint64_t)(2.0 * scan) + pop * 2u * T * 10u;
        breed.bytes_read += pop * 4u;
        /* the chain: a genome's rank scan, each element a dependent cached load and compare
         * (counted as 20 operations: a cached load's latency is ~10 FMAs'), then its child's
         * parameters. thread: a workgroup lasts as long as its longest thread, an elite's scan
         * of all pop (the elites sit in few workgroups: one wave); wide: every workgroup is one
         * genome, so the waves add up the mean scan, scan / pop, and a lane's share */
        uint64_t chain = wide ? (uint64_t)(scan / (double)pop) * 20u + (np + WGF_SIM_WG - 1) / WGF_SIM_WG * 80u
                              : pop * 20u + np * 80u;
        s = wgf__sim_emit(e, sim->evolve, sim->evolve_bg[p], nx, 1, WGF_SIM_WG, 0, chain, breed);
    } else {
        uint32_t nx = pop < 65535u ? (uint32_t)pop : 65535u, ny = (uint32_t)((pop + nx - 1) / nx);
        uint64_t ncand = (uint64_t)sim->evolve_blocks * (uint64_t)sim->evolve_cand;
        fail = sim->evolve_pass[0];
        /* select: 2 tournaments of T fitness reads per genome, a block's best E kept sorted */
        struct wgf_step_cost sel = {pop * 4u * (1u + 2u * T), pop * 16u + ncand * 8u, pop * (2u * T * 12u + 20u)};
        s = wgf__sim_emit(e, sim->evolve_pass[0], sim->select_bg[p], (uint32_t)sim->evolve_blocks, 1, WGF_SIM_TOP_WG, 1, 0, sel);
        if (s == WGF_OK && pass_each && e->r) s = wgf_recorder_end_pass(e->r);
        if (s == WGF_OK && sim->rank_bg) {
            fail = sim->evolve_pass[1];
            uint32_t per_wg = (uint32_t)(WGF_SIM_TOP_WG / sim->evolve_lpc); /* candidates per workgroup */
            uint32_t groups = (uint32_t)((ncand + per_wg - 1) / per_wg), gx = groups < 65535u ? groups : 65535u;
            /* every candidate binary-searches every other block's list */
            uint64_t lg = 1;
            while ((1u << lg) < (uint64_t)sim->evolve_cand) lg++;
            struct wgf_step_cost rk = {ncand * 8u, E * 4u, ncand * (uint64_t)sim->evolve_blocks * lg * 4u};
            s = wgf__sim_emit(e, sim->evolve_pass[1], sim->rank_bg, gx, (groups + gx - 1) / gx, WGF_SIM_TOP_WG, 2, 0, rk);
            if (s == WGF_OK && pass_each && e->r) s = wgf_recorder_end_pass(e->r);
        }
        if (s == WGF_OK) {
            fail = sim->evolve_pass[2];
            s    = wgf__sim_emit(e, sim->evolve_pass[2], sim->breed_bg[p], nx, ny, WGF_SIM_WG, 0, 0, breed);
        }
    }
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, wgf_pipeline_label(fail));
    if (e->r) {
        sim->parity = !sim->parity;
        sim->gen++;
    }
    return WGF_OK;
}

static enum wgf_status record_evolve(wgf_sim *sim, wgf_recorder *r, bool pass_each, struct wgf_err *err)
{
    struct wgf__sim_emit e = {.r = r};
    return wgf__sim_emit_evolve(sim, &e, pass_each, err);
}

enum wgf_status wgf__sim_record_evolve(wgf_sim *sim, wgf_recorder *r, struct wgf_err *err)
{
    return record_evolve(sim, r, false, err);
}

enum wgf_status wgf__sim_record_evolve_passes(wgf_sim *sim, wgf_recorder *r, struct wgf_err *err)
{
    return record_evolve(sim, r, true, err);
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
