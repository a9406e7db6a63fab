/* wgfuse sim — the workload table, name parsing and the classic-control dispatch. */
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

static const struct wgf_sim_workload_info workloads[WGF_SIM_N_WORKLOADS] = {
    /* name          gym id            state obs act steps  hid fb seq */
    {"cartpole",    "CartPole-v1",    4, 4, 2, 500, 8, 0, true}, /* preprint 4-8-2; the issue bench 4-16-2 */
    {"acrobot",     "Acrobot-v1",     4, 6, 3, 500, 16, 0, true},
    {"mountaincar", "MountainCar-v0", 2, 2, 3, 200, 8, 0, true},
    {"rastrigin",   "rastrigin",      0, 0, 0, 0, 0, 0, false},
    /* finsim: 6 features per asset + 2 fed back = 8 inputs; 4 control outputs + 2 fed back */
    {"finsim",      "finsim",         0, 6, 4, 1500, 16, 2, true},
};

const struct wgf_sim_workload_info *wgf_sim_workload_info(enum wgf_sim_workload w)
{
    if ((unsigned)w >= WGF_SIM_N_WORKLOADS) return NULL;
    return &workloads[w];
}

enum wgf_status wgf_sim_workload_parse(const char *name, enum wgf_sim_workload *out, struct wgf_err *err)
{
    for (int i = 0; i < WGF_SIM_N_WORKLOADS; i++)
        if (name && (strcmp(name, workloads[i].name) == 0 || strcmp(name, workloads[i].gym_id) == 0)) {
            *out = (enum wgf_sim_workload)i;
            return WGF_OK;
        }
    return wgf_fail(err, WGF_ERR_ARG,
                    "sim: unknown workload '%s' (cartpole, acrobot, mountaincar, rastrigin, finsim)",
                    name ? name : "(null)");
}

const char *wgf_sim_strategy_name(enum wgf_sim_strategy s)
{
    switch (s) {
    case WGF_SIM_FUSED: return "fused";
    case WGF_SIM_CHUNKED: return "chunked";
    case WGF_SIM_PER_STEP: return "per-step";
    case WGF_SIM_FUSED_WIDE: return "fused-wide";
    }
    return "?";
}

enum wgf_status wgf_sim_strategy_parse(const char *s, enum wgf_sim_strategy *out, int *chunk, struct wgf_err *err)
{
    if (!s) return wgf_fail(err, WGF_ERR_ARG, "sim: strategy missing");
    if (strcmp(s, "fused") == 0) return *out = WGF_SIM_FUSED, WGF_OK;
    if (strcmp(s, "fused-wide") == 0 || strcmp(s, "fused_wide") == 0) return *out = WGF_SIM_FUSED_WIDE, WGF_OK;
    if (strcmp(s, "per-step") == 0 || strcmp(s, "per_step") == 0) return *out = WGF_SIM_PER_STEP, WGF_OK;
    if (strncmp(s, "chunked", 7) == 0) {
        const char *k = s + 7;
        long v = 50;
        if (*k == ':' || *k == ' ' || *k == '=') {
            char *end = NULL;
            v = strtol(k + 1, &end, 10);
            if (!end || *end || v < 1 || v > 1000000)
                return wgf_fail(err, WGF_ERR_ARG, "sim: bad chunk size in '%s' (want chunked:K, K >= 1)", s);
        } else if (*k) {
            return wgf_fail(err, WGF_ERR_ARG, "sim: unknown strategy '%s'", s);
        }
        *out = WGF_SIM_CHUNKED;
        if (chunk) *chunk = (int)v;
        return WGF_OK;
    }
    return wgf_fail(err, WGF_ERR_ARG, "sim: unknown strategy '%s' (fused, fused-wide, chunked:K, per-step)", s);
}

const char *wgf_sim_evolve_name(enum wgf_sim_evolve e)
{
    switch (e) {
    case WGF_SIM_EVOLVE_AUTO: return "auto";
    case WGF_SIM_EVOLVE_THREAD: return "thread";
    case WGF_SIM_EVOLVE_WIDE: return "wide";
    case WGF_SIM_EVOLVE_SPLIT: return "split";
    }
    return "?";
}

enum wgf_status wgf_sim_evolve_parse(const char *name, enum wgf_sim_evolve *out, struct wgf_err *err)
{
    static const enum wgf_sim_evolve all[] = {WGF_SIM_EVOLVE_AUTO, WGF_SIM_EVOLVE_THREAD, WGF_SIM_EVOLVE_WIDE,
                                              WGF_SIM_EVOLVE_SPLIT};
    for (size_t i = 0; name && i < sizeof all / sizeof all[0]; i++)
        if (!strcmp(name, wgf_sim_evolve_name(all[i]))) return *out = all[i], WGF_OK;
    return wgf_fail(err, WGF_ERR_ARG, "sim: evolve '%s': expected auto, split, thread or wide", name ? name : "(null)");
}

enum wgf_kernel wgf__sim_env_kernel(enum wgf_sim_workload w)
{
    switch (w) {
    case WGF_SIM_CARTPOLE: return WGF_KERNEL_CARTPOLE;
    case WGF_SIM_ACROBOT: return WGF_KERNEL_ACROBOT;
    case WGF_SIM_MOUNTAINCAR: return WGF_KERNEL_MOUNTAINCAR;
    default: return WGF_KERNEL_COUNT;
    }
}

void wgf_sim_env_reset(enum wgf_sim_workload w, uint32_t seed, uint32_t gen, uint32_t genome,
                       float s[WGF_SIM_MAX_STATE])
{
    switch (w) {
    case WGF_SIM_CARTPOLE: wgf__cartpole_reset(seed, gen, genome, s); break;
    case WGF_SIM_ACROBOT: wgf__acrobot_reset(seed, gen, genome, s); break;
    case WGF_SIM_MOUNTAINCAR: wgf__mountaincar_reset(seed, gen, genome, s); break;
    default: WGF_ASSERT(false && "not a classic-control workload");
    }
}

void wgf_sim_env_obs(enum wgf_sim_workload w, const float s[WGF_SIM_MAX_STATE], float *obs)
{
    switch (w) {
    case WGF_SIM_CARTPOLE: wgf__cartpole_obs(s, obs); break;
    case WGF_SIM_ACROBOT: wgf__acrobot_obs(s, obs); break;
    case WGF_SIM_MOUNTAINCAR: wgf__mountaincar_obs(s, obs); break;
    default: WGF_ASSERT(false && "not a classic-control workload");
    }
}

float wgf_sim_env_step(enum wgf_sim_workload w, float s[WGF_SIM_MAX_STATE], int action, bool *terminated)
{
    switch (w) {
    case WGF_SIM_CARTPOLE: return wgf__cartpole_step(s, action, terminated);
    case WGF_SIM_ACROBOT: return wgf__acrobot_step(s, action, terminated);
    case WGF_SIM_MOUNTAINCAR: return wgf__mountaincar_step(s, action, terminated);
    default: WGF_ASSERT(false && "not a classic-control workload");
    }
    return 0.0f;
}
