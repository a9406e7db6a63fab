/* wgfuse sim — the kernel-prelude composer: the const prelude every sim kernel shares
 * (population, policy and episode shapes, workgroup sizes), followed by the WGSL chosen at
 * run time for a workload (the policy, the environment's functions). Fragments a kernel
 * always needs (sim_rng, ga, episode_io, ...) are not composed here: the kernel file names
 * them with //#include and they are appended at build time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

void wgf__sim_prelude(const wgf_sim *sim, char *buf, size_t cap)
{
    const struct wgf_sim_config *c  = &sim->cfg;
    const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(c->workload);
    const struct wgf_sim_policy *p  = &sim->pol;
    snprintf(buf, cap,
             "// prelude rendered by wgf__sim_prelude (src/sim/strategies.c): %s, population %d\n"
             "const POP: u32 = %du;        // genomes (one thread or workgroup each)\n"
             "const N_PARAMS: u32 = %du;   // per genome: N_HID*N_IN + N_HID + N_OUT*N_HID + N_OUT (Rastrigin: DIM)\n"
             "const N_IN: u32 = %du;       // N_OBS + N_FB\n"
             "const N_HID: u32 = %du;      // policy hidden width\n"
             "const N_OUT: u32 = %du;      // N_ACT + N_FB\n"
             "const N_OBS: u32 = %du;      // observation floats\n"
             "const N_ACT: u32 = %du;      // discrete actions / control outputs\n"
             "const N_FB: u32 = %du;       // outputs fed back as inputs\n"
             "const MAX_STEPS: u32 = %du;  // episode length\n"
             "const STRIDE: u32 = %du;     // f32 words per genome state record\n"
             "const WG: u32 = %du;         // threads per workgroup\n"
             "const LANES: u32 = %du;      // fused-wide: lanes per genome, pow2 >= N_HID\n"
             "const GPW: u32 = %du;        // fused-wide: genomes per workgroup, WG / LANES\n"
             "const TOP_WG: u32 = %du;     // evolve_select / evolve_rank: genomes per block\n"
             "const G0: u32 = %du;         // first genome this process evaluates (MPI: its slice)\n"
             "const GN: u32 = %du;         // genomes it evaluates: G0 .. G0 + GN - 1\n",
             wi->name, c->pop, c->pop, sim->n_params, p->n_in ? p->n_in : 1, p->n_hidden ? p->n_hidden : 1,
             p->n_out ? p->n_out : 1, wi->n_obs, wi->n_actions, p->n_feedback, c->max_steps, sim->stride, WGF_SIM_WG,
             wgf__sim_lanes(p->n_hidden), WGF_SIM_WG / wgf__sim_lanes(p->n_hidden), WGF_SIM_TOP_WG, c->eval_first, c->eval_count);
}

/* prelude consts + the given run-time fragments, in order, into a malloc'd string; the
 * pseudo fragment WGF__SIM_POLICY_GEN is sim_policy.wgsl generated straight-line for this
 * policy's shape (wgf__sim_policy_wgsl). */
char *wgf__sim_compose(const wgf_sim *sim, const enum wgf_kernel *fragments, int n, struct wgf_err *err)
{
    char consts[WGF_SIM_PRELUDE_MAX];
    wgf__sim_prelude(sim, consts, sizeof consts);
    size_t      len = strlen(consts) + 1;
    char       *gen = NULL;
    const char *src[4];
    WGF_ASSERT(n >= 0 && n <= 4);
    for (int i = 0; i < n; i++) {
        if (fragments[i] == WGF__SIM_POLICY_GEN) {
            if (!gen && !(gen = wgf__sim_policy_wgsl(&sim->pol))) {
                wgf_fail(err, WGF_ERR_NOMEM, "sim: generated policy code");
                return NULL;
            }
            src[i] = gen;
        } else {
            src[i] = wgf__kernel_wgsl(fragments[i]);
        }
        len += strlen(src[i]) + 1;
    }
    char *out = malloc(len);
    if (!out) {
        free(gen);
        wgf_fail(err, WGF_ERR_NOMEM, "sim: prelude of %zu bytes", len);
        return NULL;
    }
    strcpy(out, consts);
    for (int i = 0; i < n; i++) strcat(strcat(out, src[i]), "\n");
    free(gen);
    return out;
}
