/* wgfuse sim: short fixed-seed training runs improve CartPole's mean return.
 *
 * GA: population 256, 500-step episodes, 20 generations fully on the GPU (reset, fused
 * episode, evolve), fitness read after each. ES: 128 antithetic samples (policy 4-16-2), 12 generations,
 * the centre theta evaluated on 64 fresh episodes before and after. Both must improve the
 * mean return; a policy file written and read back must give identical returns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sim/sim_internal.h"
#include "wgfuse/gpu.h"
#include "wgfuse/sim.h"

#define REQUIRE(t, ok, name, ...) ((ok) ? true : wgf_t_check((t), false, (name), __VA_ARGS__))

static double mean(const float *x, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i];
    return s / n;
}

static void test_ga(struct wgf_t *t, wgf_ctx *ctx)
{
    const char *name = "GA improves cartpole";
    struct wgf_sim_config c = wgf_sim_config_default(WGF_SIM_CARTPOLE);
    c.pop = 256, c.seed = 2024;
    struct wgf_err err = {0};
    wgf_sim *sim = NULL;
    float f[256], first = 0, last = 0, best = 0;
    if (!REQUIRE(t, wgf_sim_create(ctx, &c, &sim, &err) == WGF_OK, name, "%s", err.msg)) return;
    enum wgf_status s = WGF_OK;
    uint64_t t0 = wgf_now_ns();
    for (int g = 0; g < 20 && s == WGF_OK; g++) {
        s = wgf_sim_generations(sim, 1, &err);
        if (s == WGF_OK) s = wgf_sim_fitness_read(sim, f, &err);
        if (g == 0) first = (float)mean(f, c.pop);
        last = (float)mean(f, c.pop);
        for (int i = 0; i < c.pop; i++) best = fmaxf(best, f[i]);
    }
    double secs = (wgf_now_ns() - t0) / 1e9;
    if (REQUIRE(t, s == WGF_OK, name, "%s", err.msg))
        wgf_t_check(t, last > 2 * first && last > first + 30, name, "mean return %.1f (gen 0) -> %.1f (gen 19), best %.0f; 20 gens in %.2f s",
                    first, last, best, secs);

    /* policy file round trip: the best genome of the last evaluated population */
    const char *rt = "policy save/load round trip";
    float *params = malloc((size_t)c.pop * sim->n_params * 4), *loaded = NULL;
    char  *text = NULL;
    size_t len = 0;
    struct wgf_sim_policy p = wgf_sim_policy_of(sim), q;
    enum wgf_sim_workload w;
    s = wgf_sim_params_read(sim, params, &err); /* slot 0 = elite of the last generation */
    if (s == WGF_OK) s = wgf_sim_policy_save(WGF_SIM_CARTPOLE, &p, params, &text, &len, &err);
    if (s == WGF_OK) s = wgf_sim_policy_load(text, len, &w, &q, &loaded, &err);
    if (REQUIRE(t, s == WGF_OK, rt, "%s", err.msg)) {
        float a = wgf_sim_ref_episode(w, &q, loaded, 500, 77, 0, 3, NULL);
        float b = wgf_sim_ref_episode(WGF_SIM_CARTPOLE, &p, params, 500, 77, 0, 3, NULL);
        wgf_t_check(t, w == WGF_SIM_CARTPOLE && memcmp(&p, &q, sizeof p) == 0 &&
                           memcmp(params, loaded, (size_t)sim->n_params * 4) == 0 && a == b,
                    rt, "%zu bytes, %d parameters bitwise equal, return %.0f both", len, sim->n_params, a);
    }
    free(params), free(loaded), free(text);
    wgf_sim_free(sim);
}

/* Mean return of `theta` over `n` episodes (a population of copies). */
static bool eval_theta(wgf_ctx *ctx, const float *theta, int np, int n, uint32_t seed, double *out, struct wgf_err *err)
{
    struct wgf_sim_config c = wgf_sim_config_default(WGF_SIM_CARTPOLE);
    c.pop = n, c.seed = seed, c.hidden = 16;
    wgf_sim *sim = NULL;
    float   *all = malloc((size_t)n * np * 4), f[256];
    for (int i = 0; i < n; i++) memcpy(all + (size_t)i * np, theta, (size_t)np * 4);
    enum wgf_status s = wgf_sim_create(ctx, &c, &sim, err);
    if (s == WGF_OK) s = wgf_sim_params_write(sim, all, err);
    if (s == WGF_OK) s = wgf_sim_evaluate(sim, err);
    if (s == WGF_OK) s = wgf_sim_fitness_read(sim, f, err);
    if (s == WGF_OK) *out = mean(f, n);
    free(all);
    wgf_sim_free(sim);
    return s == WGF_OK;
}

static void test_es(struct wgf_t *t, wgf_ctx *ctx)
{
    const char *name = "ES improves cartpole";
    struct wgf_sim_config c = wgf_sim_config_default(WGF_SIM_CARTPOLE);
    c.pop = 128, c.seed = 31, c.init_sigma = 0.1f, c.hidden = 16;
    struct wgf_err err = {0};
    wgf_sim *sim = NULL;
    wgf_sim_es *es = NULL;
    struct wgf_sim_es_config ec = wgf_sim_es_config_default();
    if (!REQUIRE(t, wgf_sim_create(ctx, &c, &sim, &err) == WGF_OK, name, "%s", err.msg)) return;
    int    np = sim->n_params;
    float *theta = calloc((size_t)np, 4);
    double before = 0, after = 0;
    enum wgf_status s = wgf_sim_es_create(sim, &ec, theta, &es, &err); /* start from zero weights */
    bool ok = s == WGF_OK && eval_theta(ctx, theta, np, 64, 555, &before, &err);
    if (ok) ok = wgf_sim_es_generations(es, 12, &err) == WGF_OK && wgf_sim_es_theta_read(es, theta, &err) == WGF_OK;
    if (ok) ok = eval_theta(ctx, theta, np, 64, 555, &after, &err);
    if (REQUIRE(t, ok, name, "%s", err.msg))
        wgf_t_check(t, after > before + 50, name, "centre's mean return over 64 episodes %.1f -> %.1f after 12 generations",
                    before, after);
    free(theta);
    wgf_sim_es_free(es);
    wgf_sim_free(sim);
}

int main(void)
{
    struct wgf_t t = {0};
    wgf_ctx *ctx = wgf_t_gpu(&t);
    if (!ctx) return wgf_t_finish(&t);
    test_ga(&t, ctx);
    test_es(&t, ctx);
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
