/* wgfuse sim: the three strategies give the same returns, and those agree with the C
 * reference.
 *
 * fused, chunked K (K = 37: the episode does not divide evenly) and per-step run the same
 * kernel source with a different CHUNK, so returns must be bitwise equal; fused-wide (its own
 * kernel, the same arithmetic per value) too. Over several GA
 * generations (evaluate + evolve chained on the GPU) the populations must stay bitwise
 * equal too. Against the C reference an episode is chaotic (a one-ulp difference from a
 * fused multiply-add or the GPU's cos can flip a late action), so the stated tolerance is:
 * at least 90% of genomes with exactly the C return, and mean |diff| <= 2% of the
 * return range, which must not be empty (a population whose returns are all equal proves
 * nothing; MountainCar gets planted controllers that reach the goal, plant_solvers()).
 * Mutation caught (tried): the MountainCar kernel's goal test changed (position >= 0.5 ->
 * >= 0.4) fails "mountaincar returns vs C"; before, every return was -200 either way. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sim/sim_internal.h"
#include "wgfuse/gpu.h"
#include "wgfuse/sim.h"

#define REQUIRE(t, ok, name, ...) ((ok) ? true : wgf_t_check((t), false, (name), __VA_ARGS__))

static const int POP = 96;

/* MountainCar: random genomes never reach the goal in 200 steps, so every return is -200 on
 * the GPU and in C and "returns vs C" held for any kernel (issue 19). Every other genome is
 * made an energy-pumping controller (push the way the car moves: hidden unit 0 =
 * tanh(k * velocity + a * position), out 2 - out 0 = 2 hid0, out 1 just below), with k and a
 * varying per genome, so returns spread over the goal-reaching range. Deterministic: the
 * same population in every run of a test. No-op for other workloads. */
static bool plant_solvers(wgf_sim *sim, enum wgf_sim_workload w, struct wgf_err *err)
{
    if (w != WGF_SIM_MOUNTAINCAR) return true;
    struct wgf_sim_policy p = wgf_sim_policy_of(sim);
    size_t np = (size_t)sim->n_params;
    float *x  = malloc((size_t)POP * np * 4);
    bool   ok = x && wgf_sim_params_read(sim, x, err) == WGF_OK;
    for (int g = 0; ok && g < POP; g += 2) {
        float *w1 = x + (size_t)g * np, *b1 = w1 + p.n_hidden * p.n_in;
        float *w2 = b1 + p.n_hidden, *b2 = w2 + p.n_out * p.n_hidden;
        memset(w1, 0, np * 4);
        w1[0 * p.n_in + 0] = 0.02f * (float)(g % 7);        /* a: position   */
        w1[0 * p.n_in + 1] = 40.0f + 30.0f * (float)(g % 11); /* k: velocity   */
        w2[0 * p.n_hidden + 0] = -1.0f;                        /* out 0: left   */
        w2[2 * p.n_hidden + 0] = 1.0f;                         /* out 2: right  */
        b2[1] = -0.01f;                                        /* out 1: coast  */
    }
    ok = ok && wgf_sim_params_write(sim, x, err) == WGF_OK;
    free(x);
    return ok;
}

/* Evaluate once (gens = 0) or run `gens` generations then evaluate; fitness + params out. */
static bool run(struct wgf_t *t, wgf_ctx *ctx, enum wgf_sim_workload w, enum wgf_sim_strategy st, int max_steps,
                int feedback, int gens, float *fit, float *params, const char *name)
{
    struct wgf_sim_config c = wgf_sim_config_default(w);
    c.pop = POP, c.strategy = st, c.chunk = 37, c.seed = 11, c.max_steps = max_steps, c.n_feedback = feedback;
    c.ga.elites = 4;
    struct wgf_err err = {0};
    wgf_sim *sim = NULL;
    enum wgf_status s = wgf_sim_create(ctx, &c, &sim, &err);
    if (s == WGF_OK && !gens && !plant_solvers(sim, w, &err)) s = WGF_ERR_GPU;
    if (s == WGF_OK && gens) s = wgf_sim_generations(sim, gens, &err);
    if (s == WGF_OK) s = wgf_sim_evaluate(sim, &err);
    if (s == WGF_OK) s = wgf_sim_fitness_read(sim, fit, &err);
    if (s == WGF_OK && params) s = wgf_sim_params_read(sim, params, &err);
    wgf_sim_free(sim);
    return REQUIRE(t, s == WGF_OK, name, "%s: %s", wgf_sim_strategy_name(st), err.msg);
}

static void test_workload(struct wgf_t *t, wgf_ctx *ctx, enum wgf_sim_workload w, int max_steps, int feedback)
{
    const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(w);
    char name[96];
    snprintf(name, sizeof name, "%s%s strategies bitwise", wi->name, feedback > 0 ? " (recurrent)" : "");
    float f[4][POP];
    enum wgf_sim_strategy st[4] = {WGF_SIM_FUSED, WGF_SIM_CHUNKED, WGF_SIM_PER_STEP, WGF_SIM_FUSED_WIDE};
    int   n  = 4; /* finsim's fused-wide is finsim_wide.wgsl, a lane per asset */
    for (int i = 0; i < n; i++)
        if (!run(t, ctx, w, st[i], max_steps, feedback, 0, f[i], NULL, name)) return;
    int diff = 0;
    for (int g = 0; g < POP; g++)
        for (int i = 1; i < n; i++) diff += memcmp(&f[0][g], &f[i][g], 4) != 0;
    wgf_t_check(t, diff == 0, name, "%d genomes x %d steps: %d returns differ between fused / chunked:37 / per-step / fused-wide",
                POP, max_steps, diff);

    /* against the C reference */
    snprintf(name, sizeof name, "%s%s returns vs C", wi->name, feedback > 0 ? " (recurrent)" : "");
    struct wgf_sim_config c = wgf_sim_config_default(w);
    c.pop = POP, c.seed = 11, c.max_steps = max_steps, c.n_feedback = feedback;
    struct wgf_err err = {0};
    wgf_sim *sim = NULL;
    if (!REQUIRE(t, wgf_sim_create(ctx, &c, &sim, &err) == WGF_OK && plant_solvers(sim, w, &err), name, "%s", err.msg))
        return;
    float *x = malloc((size_t)POP * sim->n_params * 4);
    struct wgf_sim_policy p = wgf_sim_policy_of(sim);
    if (REQUIRE(t, wgf_sim_params_read(sim, x, &err) == WGF_OK, name, "%s", err.msg)) {
        int    exact = 0;
        double sum_abs = 0, lo = 1e30, hi = -1e30;
        for (int g = 0; g < POP; g++) {
            float ref = w == WGF_SIM_FINSIM
                            ? wgf_sim_finsim_ref_episode(&sim->market, &p, x + (size_t)g * sim->n_params, max_steps)
                            : wgf_sim_ref_episode(w, &p, x + (size_t)g * sim->n_params, max_steps, c.seed, 0, (uint32_t)g, NULL);
            exact += ref == f[0][g];
            sum_abs += fabs((double)ref - f[0][g]);
            lo = fmin(lo, ref), hi = fmax(hi, ref);
        }
        /* returns that do not vary cannot tell a kernel from C: the span must be real */
        double range = hi > lo ? hi - lo : 0;
        bool   ok    = range > 0 && (w == WGF_SIM_FINSIM ? sum_abs / POP <= 1e-4
                                                        : exact * 10 >= POP * 9 && sum_abs / POP <= 0.02 * range);
        wgf_t_check(t, ok, name, "%d/%d returns bitwise equal to C, mean |diff| %.3g (returns span %.3g .. %.3g)", exact,
                    POP, sum_abs / POP, lo, hi);
    }
    free(x);
    wgf_sim_free(sim);
}

static void test_generations(struct wgf_t *t, wgf_ctx *ctx)
{
    const char *name = "cartpole 3 GA generations: fused == per-step";
    enum wgf_sim_workload w = WGF_SIM_CARTPOLE;
    struct wgf_sim_policy pol = wgf_sim_policy_for(w, 0, -1);
    int    np = wgf_sim_policy_n_params(&pol);
    float  f0[POP], f1[POP], *p0 = malloc((size_t)POP * np * 4), *p1 = malloc((size_t)POP * np * 4);
    if (run(t, ctx, w, WGF_SIM_FUSED, 200, -1, 3, f0, p0, name) && run(t, ctx, w, WGF_SIM_PER_STEP, 200, -1, 3, f1, p1, name))
        wgf_t_check(t, memcmp(f0, f1, sizeof f0) == 0 && memcmp(p0, p1, (size_t)POP * np * 4) == 0, name,
                    "fitness and %d x %d parameters bitwise equal after 3 generations", POP, np);
    free(p0), free(p1);
}

int main(void)
{
    struct wgf_t t = {0};
    wgf_ctx *ctx = wgf_t_gpu(&t);
    if (!ctx) return wgf_t_finish(&t);
    test_workload(&t, ctx, WGF_SIM_CARTPOLE, 500, -1);
    test_workload(&t, ctx, WGF_SIM_CARTPOLE, 500, 2); /* RNN by output feedback */
    test_workload(&t, ctx, WGF_SIM_ACROBOT, 200, -1);
    test_workload(&t, ctx, WGF_SIM_MOUNTAINCAR, 200, -1);
    test_workload(&t, ctx, WGF_SIM_FINSIM, 50, -1);
    test_generations(&t, ctx);
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
