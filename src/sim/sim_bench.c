/* wgfuse sim — the generation-rate benchmark (wgfuse sim bench, the report section, and
 * bench/h200_sim.sh through the CLI).
 *
 * Protocol:
 *   1. warm up: one generation (compiles nothing new: pipelines exist since create).
 *   2. verify: poison the fitness buffer, evaluate the current population, read it back and
 *      compare the first min(pop, 16) genomes with the plain-C reference (classic control:
 *      the return within 5% of C's for >= 75% of them: episodes are chaotic, a one-ulp
 *      difference can flip a late action, see tests/sim/test_sim_strategies.c; Rastrigin and
 *      finsim: |diff| <= 1e-3 (1 + |ref|) for all). No numbers are reported for a kernel that fails this (WGF_ERR_INTERNAL).
 *   3. time `runs` times each, report the median. Every timed block starts from the same
 *      population and generation counter (restored from a snapshot taken after the warm-up),
 *      so the three modes and all runs do identical work: episode lengths, and so the work of
 *      a kernel that stops at termination, depend on how good the population is.
 *        no readback  gens generations recorded into one submit, then wait
 *        readback     gens x (one generation submit + fitness read, as a training loop)
 *        evaluation   gens x (reset + episode) in one submit, then wait (no evolve)
 *   gen/s = gens / wall seconds (host clock around submit and wait).
 *   4. profile (WGF_GPU_PROFILE builds, devices with timestamp-query): up to 9 more
 *      generations recorded as passes, reset | episode | evolve (every other one with the
 *      split evolve's select | rank | breed in passes of their own), timed by GPU timestamps:
 *      where the time of a generation goes, apart from submit and wait (medians).
 *   A generation = evaluate + evolve over the whole population (docs/sim.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

#define BENCH_POISON 0x7FC0DEADu
#define BENCH_VERIFY 16

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double wgf__sim_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static enum wgf_status verify(wgf_sim *sim, struct wgf_sim_bench_result *res, struct wgf_err *err)
{
    int    pop = sim->cfg.pop, np = sim->n_params, n = pop < BENCH_VERIFY ? pop : BENCH_VERIFY;
    float *fit = malloc((size_t)pop * 4), *x = malloc((size_t)n * (size_t)np * 4);
    enum wgf_status s = fit && x ? WGF_OK : wgf_fail(err, WGF_ERR_NOMEM, "sim bench: verify buffers");
    if (s == WGF_OK && (s = wgf_buffer_fill_u32(sim->ctx, sim->fitness, BENCH_POISON)) != WGF_OK)
        s = wgf__sim_gpu_fail(sim, err, s, "poison fitness");
    if (s == WGF_OK && (s = wgf_buffer_read(sim->ctx, sim->params[sim->parity], 0, x, (size_t)n * (size_t)np * 4)) != WGF_OK)
        s = wgf__sim_gpu_fail(sim, err, s, "params read");
    /* the generation counter the kernels will see */
    uint32_t gen = sim->gen;
    if (s == WGF_OK) s = wgf_sim_evaluate(sim, err);
    if (s == WGF_OK) s = wgf_sim_fitness_read(sim, fit, err);
    if (s != WGF_OK) goto out;
    double sum = 0;
    int    bad = 0;
    for (int g = 0; g < pop; g++) {
        uint32_t bits;
        memcpy(&bits, &fit[g], 4);
        if (bits == BENCH_POISON || !isfinite(fit[g])) bad++;
        sum += fit[g];
    }
    res->checksum = sum;
    res->mean_steps = res->group_steps = res->longest_steps = 1;
    if (sim->stride &&
        (s = wgf__sim_episode_lengths(sim, &res->mean_steps, &res->group_steps, &res->longest_steps, err)) != WGF_OK)
        goto out;
    if (bad) {
        s = wgf_fail(err, WGF_ERR_INTERNAL, "sim bench: %d of %d fitness values unwritten or not finite", bad, pop);
        goto out;
    }
    enum wgf_sim_workload w = sim->cfg.workload;
    int matched = 0;
    for (int g = 0; g < n; g++) {
        const float *p = x + (size_t)g * (size_t)np;
        float ref;
        if (w == WGF_SIM_RASTRIGIN) ref = -wgf_sim_rastrigin_ref(p, np);
        else if (w == WGF_SIM_FINSIM) ref = wgf_sim_finsim_ref_episode(&sim->market, &sim->pol, p, sim->cfg.max_steps);
        else ref = wgf_sim_ref_episode(w, &sim->pol, p, sim->cfg.max_steps, sim->cfg.seed, gen, (uint32_t)g, NULL);
        bool classic = w != WGF_SIM_RASTRIGIN && w != WGF_SIM_FINSIM;
        matched += classic ? fabs((double)fit[g] - ref) <= 0.05 * fmax(1.0, fabs(ref))
                           : fabs((double)fit[g] - ref) <= 1e-3 * (1 + fabs(ref));
    }
    res->ref_checked   = n;
    res->ref_matched   = matched;
    res->ref_tolerance = (w == WGF_SIM_RASTRIGIN || w == WGF_SIM_FINSIM) ? 1e-3 : 0.05;
    bool ok = (w == WGF_SIM_RASTRIGIN || w == WGF_SIM_FINSIM) ? matched == n : matched * 4 >= n * 3;
    if (!ok)
        s = wgf_fail(err, WGF_ERR_INTERNAL, "sim bench: only %d of %d genomes agree with the C reference: refusing to time a wrong kernel",
                     matched, n);
out:
    free(fit), free(x);
    return s;
}

/* Step 4: GPU time of reset, episode and evolve (-1 when unavailable; never fails the
 * bench, the timings above stand on their own). Up to PROFILE_REPS generations, each recorded
 * as passes reset | episode | evolve; odd repetitions put each evolve dispatch in its own pass
 * (select | rank | breed), so the evolve's time is known both as one pass (what a generation
 * pays, dispatch boundaries included) and per kernel. Medians; the repetitions stop early
 * once they have taken PROFILE_BUDGET_MS of GPU time (long episodes). */
#define PROFILE_REPS      9
#define PROFILE_BUDGET_MS 2000.0
enum wgf_status wgf__sim_episode_lengths(wgf_sim *sim, double *mean, double *group, double *longest,
                                        struct wgf_err *err)
{
    *mean = *group = *longest = 1;
    if (!sim->stride) return WGF_OK;
    /* the steps each genome took: word `at + 1` of its state record */
    int    at  = sim->cfg.workload == WGF_SIM_FINSIM ? 49 : 9;
    int    pop = sim->cfg.eval_count;
    size_t nst = (size_t)pop * (size_t)sim->stride;
    float *st  = malloc(nst * 4);
    if (!st) return wgf_fail(err, WGF_ERR_NOMEM, "sim: state read of %d genomes", pop);
    enum wgf_status s = wgf_buffer_read(sim->ctx, sim->state_buf[sim->state_parity], 0, st, nst * 4);
    if (s != WGF_OK) {
        free(st);
        return wgf__sim_gpu_fail(sim, err, s, "state read");
    }
    double steps = 0;
    float  top   = 0;
    for (int g = 0; g < pop; g++) {
        float v = st[(size_t)g * (size_t)sim->stride + (size_t)at];
        steps += v;
        if (v > top) top = v;
    }
    *mean    = pop ? steps / pop : 0;
    *longest = top;
    /* a SIMD group runs until its longest episode ends: the mean over groups of their
     * longest. A group: the genomes of one subgroup (32 when the device does not say);
     * fused-wide: of one workgroup (its step loop runs while any of them is alive) */
    uint32_t sgs = 0;
    if (wgf_ctx_subgroup_size(sim->ctx, &sgs) != WGF_OK || !sgs) sgs = 32;
    int gsz = (int)sgs;
    if (sim->cfg.strategy == WGF_SIM_FUSED_WIDE)
        gsz = sim->cfg.workload == WGF_SIM_FINSIM ? WGF_SIM_WG / WGF_FIN_ASSETS : WGF_SIM_WG / wgf__sim_lanes(sim->pol.n_hidden);
    if (gsz < 1) gsz = 1;
    double gsum = 0;
    int    ng   = 0;
    for (int g0 = 0; g0 < pop; g0 += gsz, ng++) {
        float mx = 0;
        for (int g = g0; g < g0 + gsz && g < pop; g++)
            if (st[(size_t)g * (size_t)sim->stride + (size_t)at] > mx) mx = st[(size_t)g * (size_t)sim->stride + (size_t)at];
        gsum += mx;
    }
    *group = ng ? gsum / ng : 0;
    free(st);
    return WGF_OK;
}

static void profile(wgf_sim *sim, struct wgf_sim_bench_result *out)
{
    out->gpu_ms_reset = out->gpu_ms_episode = out->gpu_ms_evolve = -1;
    for (int i = 0; i < 3; i++) out->gpu_us_evolve_pass[i] = -1;
    out->profile_reps = 0;
#ifdef WGF_GPU_PROFILE
    uint32_t nx = (uint32_t)((sim->cfg.eval_count + WGF_SIM_WG - 1) / WGF_SIM_WG);
    double   v_reset[PROFILE_REPS], v_ep[PROFILE_REPS], v_evo[PROFILE_REPS], v_pass[3][PROFILE_REPS], spent = 0;
    int      n_whole = 0, n_split = 0, n_rank = 0;
    for (int rep = 0; rep < PROFILE_REPS && spent < PROFILE_BUDGET_MS; rep++) {
        bool           each = rep % 2 == 1 && sim->cfg.evolve == WGF_SIM_EVOLVE_SPLIT;
        wgf_timer     *t    = NULL;
        wgf_recorder  *r    = NULL;
        struct wgf_err err  = {0};
        double         ns[6] = {0};
        uint32_t       n     = 0;
        if (wgf_timer_create(sim->ctx, "sim.profile", 6, &t) != WGF_OK) return;
        enum wgf_status s = wgf_recorder_begin(sim->ctx, "sim.profile", t, &r);
        if (s == WGF_OK && sim->reset) {
            s = wgf_recorder_dispatch(r, sim->reset, sim->reset_bg[sim->parity], nx, 1, 1);
            if (s == WGF_OK) s = wgf_recorder_end_pass(r);
        }
        for (int c = 0; c < sim->n_chunks && s == WGF_OK; c++)
            s = wgf_recorder_dispatch(r, sim->step, sim->step_bg[sim->parity][c & 1], sim->step_groups, sim->step_groups_y, 1);
        if (s == WGF_OK) s = wgf_recorder_end_pass(r);
        if (s == WGF_OK) s = each ? wgf__sim_record_evolve_passes(sim, r, &err) : wgf__sim_record_evolve(sim, r, &err);
        if (s == WGF_OK) s = wgf_recorder_end_pass(r);
        if (s == WGF_OK) s = wgf_recorder_submit(r);
        else if (r) wgf_recorder_abandon(r);
        if (s == WGF_OK) s = wgf_timer_read(sim->ctx, t, ns, 6, &n);
        wgf_timer_free(t);
        int first = sim->reset ? 1 : 0, evo = sim->cfg.evolve == WGF_SIM_EVOLVE_SPLIT && each ? sim->evolve_dispatches : 1;
        if (s != WGF_OK || n != (uint32_t)(first + 1 + evo)) return;
        spent += (ns[first] + ns[first + 1]) / 1e6;
        if (sim->reset) v_reset[n_whole + n_split] = ns[0] / 1e6;
        v_ep[n_whole + n_split] = ns[first] / 1e6;
        if (!each) {
            v_evo[n_whole++] = ns[first + 1] / 1e6;
        } else {
            v_pass[0][n_split] = ns[first + 1] / 1e3;
            if (sim->rank_bg) v_pass[1][n_rank++] = ns[first + 2] / 1e3;
            v_pass[2][n_split++] = ns[first + evo] / 1e3;
        }
    }
    int n_all = n_whole + n_split;
    if (!n_all || !n_whole) return;
    if (sim->reset) out->gpu_ms_reset = wgf__sim_median(v_reset, n_all);
    out->gpu_ms_episode = wgf__sim_median(v_ep, n_all);
    out->gpu_ms_evolve  = wgf__sim_median(v_evo, n_whole);
    if (n_split) out->gpu_us_evolve_pass[0] = wgf__sim_median(v_pass[0], n_split), out->gpu_us_evolve_pass[2] = wgf__sim_median(v_pass[2], n_split);
    if (n_rank) out->gpu_us_evolve_pass[1] = wgf__sim_median(v_pass[1], n_rank);
    out->profile_reps = n_all;
#else
    (void)sim;
#endif
}

enum wgf_status wgf_sim_bench_run(wgf_sim *sim, int gens, int runs, struct wgf_sim_bench_result *out, struct wgf_err *err)
{
    memset(out, 0, sizeof *out);
    if (gens < 1 || runs < 1 || runs > 101) return wgf_fail(err, WGF_ERR_ARG, "sim bench: gens %d >= 1, runs %d in 1..101", gens, runs);
    out->gens               = gens;
    out->dispatches_per_gen = wgf_sim_dispatches_per_generation(sim);
    size_t n_all = (size_t)sim->cfg.pop * (size_t)sim->n_params;
    float *fit = malloc((size_t)sim->cfg.pop * 4), *snap = malloc(n_all * 4);
    double t_nr[101], t_rb[101], t_ev[101], t_rec[101];
    enum wgf_status s = fit && snap ? WGF_OK : wgf_fail(err, WGF_ERR_NOMEM, "sim bench");
    /* warm up with a submit as the timed runs make: on lavapipe one generation left the first
     * strategy of a `sim bench` call up to 2x slower than the same strategy measured later */
    if (s == WGF_OK) s = wgf_sim_generations(sim, gens, err);
    if (s == WGF_OK && (s = wgf_ctx_wait(sim->ctx)) != WGF_OK) s = wgf__sim_gpu_fail(sim, err, s, "warm-up");
    uint32_t gen0 = sim->gen;
    if (s == WGF_OK) s = wgf_sim_params_read(sim, snap, err);
    if (s == WGF_OK) s = verify(sim, out, err);
#define RESTORE()                                                                        \
    do {                                                                                 \
        if (s == WGF_OK) s = wgf_sim_params_write(sim, snap, err);                       \
        if (s == WGF_OK) s = wgf_sim_generation_set(sim, gen0, err);                     \
        if (s == WGF_OK && (s = wgf_ctx_wait(sim->ctx)) != WGF_OK) s = wgf__sim_gpu_fail(sim, err, s, "restore"); \
    } while (0)
    double *times[3] = {t_nr, t_rb, t_ev};
    for (int r = 0; r < runs && s == WGF_OK; r++)
        for (int mode = 0; mode < 3 && s == WGF_OK; mode++) {
            RESTORE();
            uint64_t      t0  = wgf_now_ns();
            wgf_recorder *rec = NULL;
            if (mode == 0) { /* no readback: gens generations, one submit, one wait */
                s        = wgf_sim_generations(sim, gens, err);
                t_rec[r] = (double)(wgf_now_ns() - t0) / 1e9;
            } else if (mode == 1) { /* readback: submit + fitness read per generation */
                for (int g = 0; g < gens && s == WGF_OK; g++) {
                    s = wgf_sim_generations(sim, 1, err);
                    if (s == WGF_OK) s = wgf_sim_fitness_read(sim, fit, err);
                }
            } else { /* evaluation only: gens x (reset + episode), one submit */
                if ((s = wgf_recorder_begin(sim->ctx, "sim.bench_evaluate", NULL, &rec)) != WGF_OK)
                    s = wgf__sim_gpu_fail(sim, err, s, "recorder");
                for (int g = 0; g < gens && s == WGF_OK; g++) s = wgf__sim_record_evaluate(sim, rec, err);
                if (s != WGF_OK && rec) wgf_recorder_abandon(rec);
                if (s == WGF_OK && (s = wgf_recorder_submit(rec)) != WGF_OK) s = wgf__sim_gpu_fail(sim, err, s, "submit");
            }
            if (s == WGF_OK && (s = wgf_ctx_wait(sim->ctx)) != WGF_OK) s = wgf__sim_gpu_fail(sim, err, s, "wait");
            times[mode][r] = (double)(wgf_now_ns() - t0) / 1e9;
        }
    RESTORE();
    /* the episode lengths of the timed submit's generations, one at a time (untimed) */
    if (s == WGF_OK && sim->stride) {
        double m = 0, g = 0, l = 0;
        for (int k = 0; k < gens && s == WGF_OK; k++) {
            double mk = 0, gk = 0, lk = 0;
            s = wgf_sim_generations(sim, 1, err);
            if (s == WGF_OK) s = wgf__sim_episode_lengths(sim, &mk, &gk, &lk, err);
            m += mk, g += gk, l += lk;
        }
        if (s == WGF_OK) out->mean_steps = m / gens, out->group_steps = g / gens, out->longest_steps = l / gens;
        RESTORE();
    }
#undef RESTORE
    free(fit), free(snap);
    if (s != WGF_OK) return s;
    profile(sim, out);
    out->gen_per_s_noreadback = gens / wgf__sim_median(t_nr, runs);
    out->host_ms_record       = wgf__sim_median(t_rec, runs) * 1e3;
    out->gen_per_s_readback   = gens / wgf__sim_median(t_rb, runs);
    out->eval_per_s           = gens / wgf__sim_median(t_ev, runs);
    return WGF_OK;
}
