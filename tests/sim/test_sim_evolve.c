/* wgfuse sim: the GA evolve kernel keeps the elite and changes the rest.
 *
 * Known population + a hand-written fitness (a permutation of distinct values, NaNs, a
 * three-way tie across evolve blocks) -> one evolve -> slots 0..E-1 must hold the E best
 * genomes in order (bitwise), no NaN genome an elite, ties broken by the lower index; every
 * other slot must differ from every old genome, with each of its parameters either a
 * parent's value at that index (crossover) or mutated (about mut_rate of them); the
 * generation counter must advance on the GPU. Run for one evolve block (population 200) and
 * several (700: evolve_select's lists + evolve_rank), with the split evolve (default) and
 * the one-dispatch evolve.wgsl (cfg.evolve SPLIT and THREAD: explicit, whatever the adapter).
 *
 * Variants: the split evolve (evolve_select + evolve_rank + evolve_breed), evolve.wgsl and
 * evolve_wide.wgsl must give bitwise-identical populations after 3 generations, over
 * elite counts that exercise one block, many blocks with a partial last one, elites >
 * TOP_WG (every genome a candidate) and no elite at all. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sim/sim_internal.h"
#include "wgfuse/gpu.h"
#include "wgfuse/sim.h"

#define REQUIRE(t, ok, name, ...) ((ok) ? true : wgf_t_check((t), false, (name), __VA_ARGS__))

/* The three evolve implementations must give bitwise-identical populations: same counters,
 * same arithmetic. */
static void test_variants(struct wgf_t *t, wgf_ctx *ctx, enum wgf_sim_workload w, int dim, int pop, int elites)
{
    char name[128];
    snprintf(name, sizeof name, "evolve split == evolve == evolve_wide (%s, pop %d, elites %d)",
             wgf_sim_workload_info(w)->name, pop, elites);
    float *p[3] = {NULL, NULL, NULL};
    int    np = 0, disp[3] = {0};
    for (int v = 0; v < 3; v++) {
        struct wgf_sim_config c = wgf_sim_config_default(w);
        c.pop = pop, c.dim = dim, c.seed = 4, c.ga.elites = elites, c.evolve = v == 0 ? WGF_SIM_EVOLVE_SPLIT : v == 1 ? WGF_SIM_EVOLVE_THREAD : WGF_SIM_EVOLVE_WIDE, c.max_steps = 100;
        c.ga.mut_rate = 0.3f;
        struct wgf_err err = {0};
        wgf_sim *sim = NULL;
        enum wgf_status s = wgf_sim_create(ctx, &c, &sim, &err);
        if (s == WGF_OK) {
            np      = wgf_sim_n_params(sim);
            disp[v] = sim->evolve_dispatches;
            p[v]    = malloc((size_t)c.pop * np * 4);
            s       = wgf_sim_generations(sim, 3, &err);
        }
        if (s == WGF_OK) s = wgf_sim_params_read(sim, p[v], &err);
        wgf_sim_free(sim);
        if (!REQUIRE(t, s == WGF_OK, name, "variant %d: %s", v ? v - 1 : 2, err.msg)) {
            free(p[0]), free(p[1]), free(p[2]);
            return;
        }
    }
    size_t n = (size_t)pop * np * 4;
    wgf_t_check(t, memcmp(p[0], p[1], n) == 0 && memcmp(p[1], p[2], n) == 0, name,
                "%d x %d parameters after 3 generations (split evolve: %d dispatches)", pop, np, disp[0]);
    free(p[0]), free(p[1]), free(p[2]);
}

/* One evolve on a hand-written fitness (see the top of the file). */
static void test_elite(struct wgf_t *t, wgf_ctx *ctx, int pop, enum wgf_sim_evolve evolve)
{
    char name[64], what[96];
    snprintf(name, sizeof name, "evolve (pop %d, %s)", pop, evolve == WGF_SIM_EVOLVE_SPLIT ? "split" : "evolve.wgsl");
    struct wgf_sim_config c = wgf_sim_config_default(WGF_SIM_CARTPOLE);
    c.pop = pop, c.ga.elites = 5, c.ga.tournament = 3, c.ga.mut_rate = 0.1f, c.ga.mut_sigma = 0.5f, c.seed = 99;
    c.evolve = evolve;
    struct wgf_err err = {0};
    wgf_sim *sim = NULL;
    if (!REQUIRE(t, pop <= 1024 && wgf_sim_create(ctx, &c, &sim, &err) == WGF_OK, name, "%s", err.msg)) return;
    int    np = sim->n_params, E = c.ga.elites;
    float *old = malloc((size_t)pop * np * 4), *nw = malloc((size_t)pop * np * 4), *fit = malloc((size_t)pop * 4);
    struct wgf_rng r;
    wgf_rng_seed(&r, 5);
    /* fitness: a shuffled 0..pop-1; NaNs (would be the best if compared naively) at 17 and
     * pop - 100; genomes 40, 41 and pop - 1 (another evolve block when pop > 256) tie for the
     * best value */
    for (int g = 0; g < pop; g++) fit[g] = (float)g;
    for (int g = pop - 1; g > 0; g--) {
        int j = (int)wgf_rng_below(&r, (uint32_t)g + 1);
        float x = fit[g];
        fit[g] = fit[j], fit[j] = x;
    }
    fit[17] = fit[pop - 100] = NAN;
    fit[40] = fit[41] = fit[pop - 1] = 1000.0f;
    uint32_t gen_before = wgf_sim_generation(sim), ctl[4] = {0};
    enum wgf_status s = wgf_sim_params_read(sim, old, &err);
    if (s == WGF_OK && (s = wgf_buffer_write(ctx, sim->fitness, 0, fit, (size_t)pop * 4)) != WGF_OK) err.status = s;
    if (s == WGF_OK) s = wgf_sim_evolve(sim, &err);
    if (s == WGF_OK) s = wgf_sim_params_read(sim, nw, &err);
    if (s == WGF_OK) s = wgf_buffer_read(ctx, sim->ctl[sim->parity], 0, ctl, sizeof ctl);
    if (!REQUIRE(t, s == WGF_OK, name, "%s %s", err.msg, wgf_ctx_last_error(ctx))) goto free_all;

    /* expected elite order: descending fitness, ties by index, NaN last */
    int order[8], n = 0;
    bool used[1024] = {false};
    for (int e = 0; e < E; e++) {
        int best = -1;
        for (int g = 0; g < pop; g++)
            if (!used[g] && !isnan(fit[g]) && (best < 0 || fit[g] > fit[best])) best = g;
        used[best] = true, order[n++] = best;
    }
    int elite_ok = 0;
    for (int e = 0; e < E; e++) elite_ok += memcmp(nw + (size_t)e * np, old + (size_t)order[e] * np, (size_t)np * 4) == 0;
    snprintf(what, sizeof what, "%s keeps the elite", name);
    wgf_t_check(t, elite_ok == E && order[0] == 40 && order[1] == 41 && order[2] == pop - 1, what,
                "%d/%d elite slots hold the expected genomes (best first: %d, %d, %d, ...; NaN genomes excluded)",
                elite_ok, E, order[0], order[1], order[2]);

    int copies = 0, from_parent = 0, total = 0;
    for (int g = E; g < pop; g++) {
        const float *child = nw + (size_t)g * np;
        for (int h = 0; h < pop; h++) copies += memcmp(child, old + (size_t)h * np, (size_t)np * 4) == 0;
        for (int k = 0; k < np; k++, total++) {
            bool hit = false;
            for (int h = 0; h < pop && !hit; h++) hit = child[k] == old[(size_t)h * np + k];
            from_parent += hit;
        }
    }
    double frac = (double)from_parent / total;
    snprintf(what, sizeof what, "%s changes the rest", name);
    wgf_t_check(t, copies == 0 && frac > 0.85 && frac < 0.95, what,
                "%d of %d children copy an old genome; %.3f of their parameters are a parent's value (mutation "
                "rate 0.1 -> expect ~0.90)",
                copies, pop - E, frac);
    snprintf(what, sizeof what, "%s advances the generation", name);
    wgf_t_check(t, ctl[0] == gen_before + 1 && wgf_sim_generation(sim) == gen_before + 1 && ctl[1] == c.seed, what,
                "GPU counter %u -> %u (seed %u)", gen_before, ctl[0], ctl[1]);
free_all:
    free(old), free(nw), free(fit);
    wgf_sim_free(sim);
}

int main(void)
{
    struct wgf_t t = {0};
    wgf_ctx *ctx = wgf_t_gpu(&t);
    if (!ctx) return wgf_t_finish(&t);
    test_elite(&t, ctx, 200, WGF_SIM_EVOLVE_SPLIT);
    test_elite(&t, ctx, 700, WGF_SIM_EVOLVE_SPLIT);
    test_elite(&t, ctx, 700, WGF_SIM_EVOLVE_THREAD);
    test_variants(&t, ctx, WGF_SIM_CARTPOLE, 0, 80, 3);     /* one block: no evolve_rank      */
    test_variants(&t, ctx, WGF_SIM_CARTPOLE, 0, 1000, 3);   /* 4 blocks, partial last          */
    test_variants(&t, ctx, WGF_SIM_CARTPOLE, 0, 3000, 46);  /* 12 blocks (the bench: pop / 64) */
    test_variants(&t, ctx, WGF_SIM_CARTPOLE, 0, 700, 300);  /* elites > TOP_WG                 */
    test_variants(&t, ctx, WGF_SIM_CARTPOLE, 0, 600, 0);    /* no elite                        */
    test_variants(&t, ctx, WGF_SIM_RASTRIGIN, 700, 80, 3);
    test_variants(&t, ctx, WGF_SIM_RASTRIGIN, 700, 520, 8);
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
