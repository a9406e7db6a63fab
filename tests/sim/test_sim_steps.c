/* wgf_sim_generation_steps: the dispatches of a GA generation as the advisor reads them are
 * the ones wgf_sim_generations records (one emitter for both, src/sim/strategies.c):
 *   - for every strategy x evolve variant (and a population that needs evolve_rank, one that
 *     does not): the count equals wgf_sim_dispatches_per_generation, the labels are the
 *     pipelines' (the episode's label names the strategy), every grid is non-empty;
 *   - the episode's FLOPs follow the steps asked: fused at episode_steps L/2 does half the
 *     arithmetic of L; per-step chunks past the episode's end do none but still move the state;
 *   - listing changes nothing: the generation counter and the population's parity stay, and a
 *     generation run afterwards gives the same fitness as on a twin sim never listed;
 *   - a cap too small: WGF_ERR_LIMIT, with the count. */
#include <string.h>

#include "harness.h"
#include "wgfuse/sim.h"

static void one(struct wgf_t *t, wgf_ctx *ctx, enum wgf_sim_strategy st, int chunk, enum wgf_sim_evolve ev, int pop)
{
    struct wgf_sim_config c = wgf_sim_config_default(WGF_SIM_CARTPOLE);
    c.pop = pop, c.max_steps = 12, c.hidden = 16, c.strategy = st, c.chunk = chunk, c.evolve = ev, c.ga.elites = 4;
    wgf_sim       *sim = NULL;
    struct wgf_err err = {0};
    if (!wgf_t_check(t, wgf_sim_create(ctx, &c, &sim, &err) == WGF_OK, "sim create", "%s", err.msg)) return;
    struct wgf_step_info steps[32];
    uint32_t             n = 0;
    enum wgf_status      s = wgf_sim_generation_steps(sim, 0, steps, 32, &n, &err);
    bool ok = s == WGF_OK && (int)n == wgf_sim_dispatches_per_generation(sim);
    for (uint32_t i = 0; ok && i < n; i++) ok = steps[i].label[0] && steps[i].grid[0] * steps[i].grid[1] > 0;
    const char *want = st == WGF_SIM_FUSED ? "cartpole_fused" : st == WGF_SIM_FUSED_WIDE ? "cartpole_fused_wide"
                       : st == WGF_SIM_PER_STEP ? "cartpole_per_step" : "cartpole_chunked";
    ok = ok && n >= 3 && !strncmp(steps[1].label, want, strlen(want)) && !strcmp(steps[0].label, "cartpole_reset");
    wgf_t_check(t, ok, "steps = the recorded dispatches", "%s chunk %d evolve %s pop %d: status %d, %u steps (%d), %s",
                wgf_sim_strategy_name(st), chunk, wgf_sim_evolve_name(ev), pop, (int)s, n,
                wgf_sim_dispatches_per_generation(sim), n ? steps[1].label : "");
    if (st == WGF_SIM_FUSED) {
        struct wgf_step_info half[32];
        uint32_t             nh = 0;
        wgf_sim_generation_steps(sim, 6, half, 32, &nh, &err);
        wgf_t_check(t, nh == n && half[1].cost.flops * 2 == steps[1].cost.flops && steps[1].cost.flops > 0,
                    "episode FLOPs follow the steps run", "%llu vs %llu", (unsigned long long)half[1].cost.flops,
                    (unsigned long long)steps[1].cost.flops);
    }
    if (st == WGF_SIM_PER_STEP) { /* 12 chunks; an episode of 5 steps: chunks 5.. do no arithmetic */
        struct wgf_step_info five[32];
        uint32_t             n5 = 0;
        wgf_sim_generation_steps(sim, 5, five, 32, &n5, &err);
        wgf_t_check(t, n5 == n && five[5].cost.flops > 0 && five[6].cost.flops == 0 && five[6].cost.bytes_written > 0,
                    "per-step chunks past the episode's end", "chunk 5: %llu, chunk 6: %llu FLOPs",
                    (unsigned long long)five[5].cost.flops, (unsigned long long)five[6].cost.flops);
    }
    uint32_t small = 0;
    s              = wgf_sim_generation_steps(sim, 0, steps, 2, &small, &err);
    wgf_t_check(t, s == WGF_ERR_LIMIT && small == n, "a cap too small", "status %d, n %u", (int)s, small);
    wgf_sim_free(sim);
}

int main(void)
{
    struct wgf_t t   = {0};
    wgf_ctx     *ctx = wgf_t_gpu(&t);
    if (!ctx) return wgf_t_finish(&t);
    const enum wgf_sim_evolve ev[3] = {WGF_SIM_EVOLVE_SPLIT, WGF_SIM_EVOLVE_THREAD, WGF_SIM_EVOLVE_WIDE};
    for (int e = 0; e < 3; e++) {
        one(&t, ctx, WGF_SIM_FUSED, 0, ev[e], 600); /* 3 blocks: evolve_rank runs */
        one(&t, ctx, WGF_SIM_FUSED_WIDE, 0, ev[e], 100);
        one(&t, ctx, WGF_SIM_CHUNKED, 5, ev[e], 100);
        one(&t, ctx, WGF_SIM_PER_STEP, 1, ev[e], 100); /* one block: no evolve_rank */
    }

    /* listing changes nothing: a listed sim and a twin give the same fitness afterwards */
    struct wgf_sim_config c = wgf_sim_config_default(WGF_SIM_CARTPOLE);
    c.pop = 128, c.max_steps = 30, c.hidden = 8, c.ga.elites = 4;
    wgf_sim       *a = NULL, *b = NULL;
    struct wgf_err err = {0};
    float          fa[128], fb[128];
    bool           ok = wgf_sim_create(ctx, &c, &a, &err) == WGF_OK && wgf_sim_create(ctx, &c, &b, &err) == WGF_OK;
    uint32_t       n  = 0;
    struct wgf_step_info steps[16];
    ok = ok && wgf_sim_generation_steps(a, 0, steps, 16, &n, &err) == WGF_OK && wgf_sim_generation(a) == 0;
    ok = ok && wgf_sim_generations(a, 2, &err) == WGF_OK && wgf_sim_generations(b, 2, &err) == WGF_OK &&
         wgf_sim_fitness_read(a, fa, &err) == WGF_OK && wgf_sim_fitness_read(b, fb, &err) == WGF_OK;
    wgf_t_check(&t, ok && !memcmp(fa, fb, sizeof fa) && wgf_sim_generation(a) == 2, "listing changes nothing", "%s",
                err.msg);
    wgf_sim_free(a);
    wgf_sim_free(b);
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
