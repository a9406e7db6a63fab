/* wgfuse sim: each workload's WGSL step against its plain-C reference.
 *
 * Classic control: 256 random states x actions (actions forced through the policy: zero
 * weights, output bias one-hot on the wanted action), one per-step dispatch, compared with
 * one C step. Tolerance: |gpu - c| <= 1e-4 * (1 + |c|) per state variable (the GPU may fuse
 * a*b+c and its sin/cos are not libm's), termination flags and rewards equal except where
 * a state variable sits within the tolerance of a threshold. Also: reset states, Rastrigin,
 * and a short finsim episode. Poison past every output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sim/sim_internal.h"
#include "wgfuse/gpu.h"
#include "wgfuse/sim.h"

#define POISON 0x7FC0DEADu
/* A precondition: silent when it holds, a failed check when it does not. */
#define REQUIRE(t, ok, name, ...) ((ok) ? true : wgf_t_check((t), false, (name), __VA_ARGS__))

static void test_env_step(struct wgf_t *t, wgf_ctx *ctx, enum wgf_sim_workload w)
{
    const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(w);
    struct wgf_sim_config c = wgf_sim_config_default(w);
    c.pop      = 256;
    c.strategy = WGF_SIM_PER_STEP;
    c.seed     = 7;
    char name[64];
    snprintf(name, sizeof name, "%s step vs C", wi->name);
    struct wgf_err err = {0};
    wgf_sim *sim = NULL;
    if (!REQUIRE(t, wgf_sim_create(ctx, &c, &sim, &err) == WGF_OK, name, "create: %s", err.msg)) return;
    int np = sim->n_params, S = sim->stride, pop = c.pop;
    float *params = calloc((size_t)pop * np, sizeof(float)), *rec = calloc((size_t)pop * S, sizeof(float));
    float *out = malloc(((size_t)pop * S + 4) * sizeof(float));
    int   *act = malloc(pop * sizeof(int));
    struct wgf_rng r;
    wgf_rng_seed(&r, 1234 + (uint64_t)w);
    /* random states in a range wider than the reset one, still inside the env's domain */
    for (int g = 0; g < pop; g++) {
        float *s = rec + (size_t)g * S;
        if (w == WGF_SIM_CARTPOLE) {
            s[0] = wgf_rng_uniform(&r, -2.3f, 2.3f), s[1] = wgf_rng_uniform(&r, -2, 2);
            s[2] = wgf_rng_uniform(&r, -0.2f, 0.2f), s[3] = wgf_rng_uniform(&r, -2, 2);
        } else if (w == WGF_SIM_ACROBOT) {
            s[0] = wgf_rng_uniform(&r, -3.1f, 3.1f), s[1] = wgf_rng_uniform(&r, -3.1f, 3.1f);
            s[2] = wgf_rng_uniform(&r, -12, 12), s[3] = wgf_rng_uniform(&r, -28, 28);
        } else {
            s[0] = wgf_rng_uniform(&r, -1.2f, 0.6f), s[1] = wgf_rng_uniform(&r, -0.07f, 0.07f);
        }
        if (g == 0 && w == WGF_SIM_MOUNTAINCAR) s[0] = -1.2f, s[1] = -0.07f; /* the left wall */
        act[g] = (int)wgf_rng_below(&r, (uint32_t)wi->n_actions);
        /* zero weights, b2 one-hot: argmax = act[g] */
        params[(size_t)g * np + np - sim->pol.n_out + act[g]] = 1.0f;
    }
    enum wgf_status s = wgf_sim_params_write(sim, params, &err);
    if (s == WGF_OK) s = wgf_buffer_write(ctx, sim->state_buf[0], 0, rec, (size_t)pop * S * 4);
    if (s == WGF_OK) s = wgf_buffer_fill_u32(ctx, sim->state_buf[1], POISON);
    wgf_recorder *rc = NULL;
    if (s == WGF_OK) s = wgf_recorder_begin(ctx, "test.step", NULL, &rc);
    if (s == WGF_OK) s = wgf_recorder_dispatch(rc, sim->step, sim->step_bg[sim->parity][0], (uint32_t)(pop + 63) / 64, 1, 1);
    if (s == WGF_OK) s = wgf_recorder_submit(rc);
    if (s == WGF_OK) s = wgf_buffer_read(ctx, sim->state_buf[1], 0, out, (size_t)pop * S * 4);
    if (!REQUIRE(t, s == WGF_OK, name, "gpu: %s", wgf_ctx_last_error(ctx))) goto done;
    double worst = 0;
    int    bad = 0, flag_mismatch = 0, poisoned = 0;
    for (int g = 0; g < pop; g++) {
        float cs[4];
        memcpy(cs, rec + (size_t)g * S, sizeof cs);
        bool  term = false;
        float rew  = wgf_sim_env_step(w, cs, act[g], &term);
        const float *gs = out + (size_t)g * S;
        uint32_t bits;
        memcpy(&bits, &gs[0], 4);
        if (bits == POISON) poisoned++;
        bool near = false;
        for (int i = 0; i < wi->n_state; i++) {
            double d = fabs((double)gs[i] - cs[i]), tol = 1e-4 * (1 + fabs(cs[i]));
            if (d / (1 + fabs(cs[i])) > worst) worst = d / (1 + fabs(cs[i]));
            if (!(d <= tol)) bad++;
            if (d > 0) near = true;
        }
        if ((gs[8] != rew || (gs[10] != 0) != term) && !near) flag_mismatch++;
        if (gs[9] != 1.0f) bad++;
    }
    wgf_t_check(t, bad == 0 && flag_mismatch == 0 && poisoned == 0, name,
                "%d states, max rel err %.2e (tol 1e-4), %d out of tol, %d reward/termination mismatches, %d unwritten",
                pop, worst, bad, flag_mismatch, poisoned);

    /* reset states: MODE 0 kernel vs wgf_sim_env_reset */
    snprintf(name, sizeof name, "%s reset vs C", wi->name);
    wgf_recorder *rr = NULL;
    s = wgf_recorder_begin(ctx, "test.reset", NULL, &rr);
    if (s == WGF_OK) s = wgf_recorder_dispatch(rr, sim->reset, sim->reset_bg[sim->parity], (uint32_t)(pop + 63) / 64, 1, 1);
    if (s == WGF_OK) s = wgf_recorder_submit(rr);
    if (s == WGF_OK) s = wgf_buffer_read(ctx, sim->state_buf[0], 0, out, (size_t)pop * S * 4);
    if (!REQUIRE(t, s == WGF_OK, name, "gpu: %s", wgf_ctx_last_error(ctx))) goto done;
    worst = 0;
    for (int g = 0; g < pop; g++) {
        float cs[4] = {0};
        wgf_sim_env_reset(w, c.seed, 0, (uint32_t)g, cs);
        for (int i = 0; i < 4; i++) worst = fmax(worst, fabs((double)out[(size_t)g * S + i] - cs[i]));
    }
    wgf_t_check(t, worst <= 1e-7, name, "max abs diff %.2e (tol 1e-7: one f32 rounding of lo + (hi-lo) u)", worst);
done:
    free(params), free(rec), free(out), free(act);
    wgf_sim_free(sim);
}

static void test_rastrigin(struct wgf_t *t, wgf_ctx *ctx)
{
    struct wgf_sim_config c = wgf_sim_config_default(WGF_SIM_RASTRIGIN);
    c.pop = 64, c.dim = 300, c.seed = 3;
    struct wgf_err err = {0};
    wgf_sim *sim = NULL;
    if (!REQUIRE(t, wgf_sim_create(ctx, &c, &sim, &err) == WGF_OK, "rastrigin vs C", "create: %s", err.msg)) return;
    float *x = malloc((size_t)c.pop * c.dim * 4), *f = malloc((size_t)c.pop * 4);
    enum wgf_status s = wgf_buffer_fill_u32(ctx, sim->fitness, POISON);
    if (s == WGF_OK) s = wgf_sim_params_read(sim, x, &err);
    if (s == WGF_OK) s = wgf_sim_evaluate(sim, &err);
    if (s == WGF_OK) s = wgf_sim_fitness_read(sim, f, &err);
    if (REQUIRE(t, s == WGF_OK, "rastrigin vs C", "%s", err.msg)) {
        double worst = 0;
        for (int g = 0; g < c.pop; g++) {
            float ref = -wgf_sim_rastrigin_ref(x + (size_t)g * c.dim, c.dim);
            double d  = fabs((double)f[g] - ref) / (1 + fabs(ref));
            if (!(d <= worst)) worst = d;
        }
        float zero[300] = {0};
        wgf_t_check(t, worst <= 1e-5 && wgf_sim_rastrigin_ref(zero, 300) == 0.0f, "rastrigin vs C",
                    "%d genomes x dim %d, max rel err %.2e (tol 1e-5), f(0) = %g", c.pop, c.dim, worst,
                    wgf_sim_rastrigin_ref(zero, 300));
    }
    free(x), free(f);
    wgf_sim_free(sim);
}

static void test_finsim(struct wgf_t *t, wgf_ctx *ctx)
{
    struct wgf_sim_config c = wgf_sim_config_default(WGF_SIM_FINSIM);
    c.pop = 64, c.max_steps = 60, c.seed = 5;
    struct wgf_err err = {0};
    wgf_sim *sim = NULL;
    if (!REQUIRE(t, wgf_sim_create(ctx, &c, &sim, &err) == WGF_OK, "finsim vs C", "create: %s", err.msg)) return;
    int np = sim->n_params;
    float *x = malloc((size_t)c.pop * np * 4), *f = malloc((size_t)c.pop * 4);
    enum wgf_status s = wgf_buffer_fill_u32(ctx, sim->fitness, POISON);
    if (s == WGF_OK) s = wgf_sim_params_read(sim, x, &err);
    if (s == WGF_OK) s = wgf_sim_evaluate(sim, &err);
    if (s == WGF_OK) s = wgf_sim_fitness_read(sim, f, &err);
    if (REQUIRE(t, s == WGF_OK, "finsim vs C", "%s", err.msg)) {
        double worst = 0, spread = 0;
        struct wgf_sim_policy p = wgf_sim_policy_of(sim);
        for (int g = 0; g < c.pop; g++) {
            float ref = wgf_sim_finsim_ref_episode(&sim->market, &p, x + (size_t)g * np, c.max_steps);
            double d  = fabs((double)f[g] - ref);
            if (!(d <= worst)) worst = d;
            spread = fmax(spread, fabs(ref));
        }
        wgf_t_check(t, worst <= 1e-4 && spread > 0 && np == 246, "finsim vs C",
                    "%d genomes x %d steps, %d params, max |log equity diff| %.2e (tol 1e-4), max |log equity| %.3f",
                    c.pop, c.max_steps, np, worst, spread);
    }
    free(x), free(f);
    wgf_sim_free(sim);
}

int main(void)
{
    struct wgf_t t = {0};
    wgf_ctx *ctx = wgf_t_gpu(&t);
    if (!ctx) return wgf_t_finish(&t);
    test_env_step(&t, ctx, WGF_SIM_CARTPOLE);
    test_env_step(&t, ctx, WGF_SIM_ACROBOT);
    test_env_step(&t, ctx, WGF_SIM_MOUNTAINCAR);
    test_rastrigin(&t, ctx);
    test_finsim(&t, ctx);
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
