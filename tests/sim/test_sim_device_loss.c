/* wgfuse sim: device loss in the middle of training stops at the next step with a clear
 * message (WGF_ERR_DEVICE_LOST naming the generation), never hangs or reports numbers. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/gpu.h"
#include "wgfuse/sim.h"

int main(void)
{
    struct wgf_t t = {0};
    wgf_ctx *ctx = wgf_t_gpu(&t);
    if (!ctx) return wgf_t_finish(&t);
    const char *name = "device loss stops the simulation";
    struct wgf_sim_config c = wgf_sim_config_default(WGF_SIM_CARTPOLE);
    c.pop = 64, c.strategy = WGF_SIM_PER_STEP, c.max_steps = 50;
    struct wgf_err err = {0};
    wgf_sim *sim = NULL;
    float fit[64];
    enum wgf_status s = wgf_sim_create(ctx, &c, &sim, &err);
    if (s == WGF_OK) s = wgf_sim_generations(sim, 2, &err);
    if (s == WGF_OK) s = wgf_sim_fitness_read(sim, fit, &err);
    if (!wgf_t_check(&t, s == WGF_OK, "before the loss", "%s", err.msg)) goto out;
    s = wgf_ctx_force_loss(ctx, "test_sim_device_loss");
    if (s == WGF_ERR_UNSUPPORTED) {
        wgf_t_skip(&t, name, "this WebGPU library cannot force a device loss");
        goto out;
    }
    uint64_t t0 = wgf_now_ns();
    s = wgf_sim_generations(sim, 1, &err);
    if (s == WGF_OK) s = wgf_sim_fitness_read(sim, fit, &err);
    double ms = (wgf_now_ns() - t0) / 1e6;
    wgf_t_check(&t, s == WGF_ERR_DEVICE_LOST && strstr(err.msg, "device lost") && strstr(err.msg, "generation"), name,
                "status %s after %.1f ms: %s", wgf_status_str(s), ms, err.msg);
out:
    wgf_sim_free(sim);
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
