/* wgfuse sim: CPU-only checks of the references — the hash RNG pinned to known values (a
 * change would silently change every seeded run), Gymnasium facts of each environment,
 * Rastrigin's minimum, the finsim path's determinism and shape, policy-file errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/sim.h"

int main(void)
{
    struct wgf_t t = {0};

    /* pinned (values from an independent Python transcription): PCG-RXS-M-XS 32 of 0, 1,
     * 0xFFFFFFFF and rand(1, 2, 3, 4) */
    uint32_t h0 = wgf_sim_hash(0), h1 = wgf_sim_hash(1), hm = wgf_sim_hash(0xFFFFFFFFu);
    uint32_t r  = wgf_sim_rand(1, 2, 3, 4);
    wgf_t_check(&t, h0 == 129708002u && h1 == 2831084092u && hm == 3861530882u && r == 1693730102u,
                "hash RNG pinned", "hash(0)=%u hash(1)=%u hash(~0)=%u rand(1,2,3,4)=%u", h0, h1, hm, r);
    double sum = 0, sum2 = 0;
    float  umin = 1, umax = 0;
    for (uint32_t k = 0; k < 20000; k++) {
        float z = wgf_sim_normal(9, 0, 0, WGF_SIM_TAG_NORMAL, k), u = wgf_sim_u01(wgf_sim_rand(9, 1, 0, k));
        sum += z, sum2 += (double)z * z, umin = fminf(umin, u), umax = fmaxf(umax, u);
    }
    double mean = sum / 20000, var = sum2 / 20000 - mean * mean;
    wgf_t_check(&t, fabs(mean) < 0.03 && fabs(var - 1) < 0.05 && umin >= 0 && umax < 1, "normal and uniform draws",
                "N(0,1): mean %.4f var %.4f over 20000; U[0,1): [%.5f, %.5f]", mean, var, umin, umax);

    /* CartPole: reset in U(-0.05, 0.05); pushing right from rest tips the pole left */
    float s[4];
    bool  term = false, ok = true;
    for (uint32_t g = 0; g < 1000; g++) {
        wgf_sim_env_reset(WGF_SIM_CARTPOLE, 1, 0, g, s);
        for (int i = 0; i < 4; i++) ok &= s[i] >= -0.05f && s[i] < 0.05f;
    }
    float s1[4] = {0, 0, 0, 0};
    float rew = wgf_sim_env_step(WGF_SIM_CARTPOLE, s1, 1, &term);
    wgf_sim_env_step(WGF_SIM_CARTPOLE, s1, 1, &term);
    wgf_t_check(&t, ok && rew == 1.0f && s1[1] > 0 && s1[3] < 0 && !term, "cartpole facts",
                "reset range ok=%d, reward %g, after 2 pushes right x_dot %.4f theta_dot %.4f", ok, rew, s1[1], s1[3]);
    float tip[4] = {0, 0, 0.2094f, 1.0f};
    wgf_sim_env_step(WGF_SIM_CARTPOLE, tip, 1, &term);
    wgf_t_check(&t, term, "cartpole terminates past 12 degrees", "theta %.4f", tip[2]);

    /* Acrobot: hanging at rest with no torque stays put (reward -1); angles wrap into [-pi, pi] */
    float a0[4] = {0, 0, 0, 0}, a1[4] = {3.1f, 0, 12.0f, 0};
    float ra = wgf_sim_env_step(WGF_SIM_ACROBOT, a0, 1, &term);
    wgf_sim_env_step(WGF_SIM_ACROBOT, a1, 1, &term);
    wgf_t_check(&t, ra == -1.0f && fabsf(a0[0]) < 1e-6f && fabsf(a0[2]) < 1e-6f && a1[0] >= -3.1416f && a1[0] <= 3.1416f &&
                        fabsf(a1[2]) <= 12.5664f,
                "acrobot facts", "rest -> (%g, %g), fast swing wrapped to %.4f, velocity %.3f", a0[0], a0[2], a1[0], a1[2]);

    /* MountainCar: the left wall stops the car; the goal terminates */
    float m0[4] = {-1.2f, -0.07f, 0, 0}, m1[4] = {0.49f, 0.07f, 0, 0};
    wgf_sim_env_step(WGF_SIM_MOUNTAINCAR, m0, 0, &term);
    bool wall = m0[0] == -1.2f && m0[1] == 0.0f;
    float rm = wgf_sim_env_step(WGF_SIM_MOUNTAINCAR, m1, 2, &term);
    wgf_t_check(&t, wall && term && rm == -1.0f, "mountaincar facts", "wall (%g, %g), goal reached at %.4f", m0[0], m0[1], m1[0]);

    /* Rastrigin: minimum 0 at 0, 10 d + ... at 0.5 */
    float x[100] = {0}, y[100];
    for (int i = 0; i < 100; i++) y[i] = 0.5f;
    float fy = wgf_sim_rastrigin_ref(y, 100);
    wgf_t_check(&t, wgf_sim_rastrigin_ref(x, 100) == 0.0f && fabsf(fy - 100 * (10 + 0.25f + 10)) < 1e-2f, "rastrigin facts",
                "f(0) = %g, f(0.5) = %g (want 2025)", wgf_sim_rastrigin_ref(x, 100), fy);

    /* finsim path: deterministic per seed, different across seeds, signals clipped */
    struct wgf_sim_market a, b, c;
    struct wgf_err err = {0};
    bool gen_ok = wgf_sim_market_generate(1, 400, &a, &err) == WGF_OK && wgf_sim_market_generate(1, 400, &b, &err) == WGF_OK &&
                  wgf_sim_market_generate(2, 400, &c, &err) == WGF_OK;
    if (gen_ok) {
        bool same = memcmp(a.returns, b.returns, 400 * 16 * 4) == 0 && memcmp(a.signals, b.signals, 400 * 36 * 4) == 0;
        bool diff = memcmp(a.returns, c.returns, 400 * 16 * 4) != 0;
        float smax = 0, rmax = 0;
        for (int i = 0; i < 400 * 36; i++) smax = fmaxf(smax, fabsf(a.signals[i]));
        for (int i = 0; i < 400 * 16; i++) rmax = fmaxf(rmax, fabsf(a.returns[i]));
        wgf_t_check(&t, same && diff && smax <= 5 && rmax <= 0.3f && rmax > 0.01f, "finsim path",
                    "seeded %d, differs by seed %d, |signal| <= %.2f, |return| <= %.3f", same, diff, smax, rmax);
        /* a flat policy (all zero weights: o2 = 0 -> never trades) keeps log equity 0 */
        struct wgf_sim_policy p = wgf_sim_policy_for(WGF_SIM_FINSIM, 16, 2);
        float *zero = calloc((size_t)wgf_sim_policy_n_params(&p), 4);
        float  f = wgf_sim_finsim_ref_episode(&a, &p, zero, 400);
        wgf_t_check(&t, f == 0.0f && wgf_sim_policy_n_params(&p) == 246, "finsim flat policy", "log equity %g, %d params", f,
                    wgf_sim_policy_n_params(&p));
        free(zero);
    } else {
        wgf_t_check(&t, false, "finsim path", "%s", err.msg);
    }
    wgf_sim_market_free(&a), wgf_sim_market_free(&b), wgf_sim_market_free(&c);

    /* policy files: malformed inputs are refused with a reason naming the field; every field
     * is checked against the workload the file names (issue 11: a rastrigin header with 8
     * parameters made sim eval read 8,000 bytes past them) */
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"not a policy", "not a policy file"},
        {"wgfuse-sim-policy 1\nworkload cartpole\nshape 4 8 2 0\nparams 58\n1\n2\n", "parameter 2 of 58 missing"},
        {"wgfuse-sim-policy 1\nworkload cartpole\nshape 5 8 2 0\nparams 66\n", "does not fit cartpole"},
        {"wgfuse-sim-policy 1\nworkload nosuch\nshape 4 8 2 0\nparams 58\n", "unknown workload 'nosuch'"},
        {"wgfuse-sim-policy 2\nworkload cartpole\nshape 4 8 2 0\nparams 58\n", "version 2 not supported"},
        {"wgfuse-sim-policy 1\nworkload rastrigin\nshape 0 8 0 0\nparams 8\n1 2 3 4 5 6 7 8\n", "'rastrigin' has no policy file"},
        {"wgfuse-sim-policy 1\nworkload finsim\nshape 8 16 6 2\nparams 246\n", "'finsim' has no policy file"},
        {"wgfuse-sim-policy 1\nworkload cartpole\nshape 4 100 2 0\nparams 702\n", "hidden width 100 not in [1, 64]"},
        {"wgfuse-sim-policy 1\nworkload cartpole\nshape 9 8 7 5\nparams 143\n", "5 fed-back outputs not in [0, 4]"},
        {"wgfuse-sim-policy 1\nworkload cartpole\nshape 4 8 2 0\nparams 57\n", "params 57, but a 4-8-2 policy has 58"},
        {"wgfuse-sim-policy 1\nworkload cartpole\nshape 4 99999999999999999999 2 0\nparams 58\n", "expected 'shape"},
        {"wgfuse-sim-policy 1\nworkload cartpole\nshape 4 8 2 0\nparams -1\n", "expected 'params N'"},
        {"wgfuse-sim-policy 1\nworkload cartpole\nshape 4 1 2 0\nparams 9\n1 2 3 4 5 6 7 8 9 10\n", "text after the 9 parameters"},
        {"wgfuse-sim-policy 1\nworkload cartpole\nshape 4 1 2 0\nparams 9\n1 2 3 4 5 6 7 8 nan\n", "parameter 8 of 9"},
        {"wgfuse-sim-policy 1\nworkload cartpole\nshape 4 1 2 0\nparams 9\n1 2 3 4 5 6 7 8 1e39\n", "parameter 8 of 9"},
        {"wgfuse-sim-policy 1\nworkload cartpole\nshape 4 1 2 0\nparams 9\n1 2 3 4 5 6 7 8 9x\n", "parameter 8 of 9"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        enum wgf_sim_workload w;
        struct wgf_sim_policy p;
        float *params = NULL;
        struct wgf_err e = {0};
        enum wgf_status st = wgf_sim_policy_load(bad[i].text, strlen(bad[i].text), &w, &p, &params, &e);
        char name[96];
        snprintf(name, sizeof name, "policy file refused: %.60s", bad[i].want);
        wgf_t_check(&t, st != WGF_OK && !params && strstr(e.msg, bad[i].want), name,
                    "%s", e.msg);
        free(params);
    }
    /* a NUL inside the file is refused, not read as the end of the file */
    static const char nul[] = "wgfuse-sim-policy 1\nworkload cartpole\nshape 4 1 2 0\nparams 9\n1 2 3 4 5 6 7 8 9\n\0junk";
    {
        enum wgf_sim_workload w;
        struct wgf_sim_policy p;
        float *params = NULL;
        struct wgf_err e = {0};
        enum wgf_status st = wgf_sim_policy_load(nul, sizeof nul - 1, &w, &p, &params, &e);
        wgf_t_check(&t, st != WGF_OK && !params && strstr(e.msg, "NUL byte at offset 79"), "policy file with a NUL refused",
                    "%s", e.msg);
        free(params);
        /* and the same file without the NUL loads: 9 finite parameters */
        st = wgf_sim_policy_load(nul, 79, &w, &p, &params, &e);
        wgf_t_check(&t, st == WGF_OK && params && w == WGF_SIM_CARTPOLE && wgf_sim_policy_n_params(&p) == 9 && params[8] == 9.0f,
                    "policy file 4-1-2 loads", "%s", e.msg);
        free(params);
    }
    return wgf_t_finish(&t);
}
