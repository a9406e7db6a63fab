/* wgfuse sim — the GPU objects of a population: labelled buffers and bind groups whose
 * failures name the sim object (and the generation when the device was lost). Beneath every
 * other file of src/sim that touches the runtime. */
#include "sim/sim_internal.h"

enum wgf_status wgf__sim_gpu_fail(wgf_sim *sim, struct wgf_err *err, enum wgf_status s, const char *what)
{
    if (s == WGF_ERR_DEVICE_LOST)
        return wgf_ctx_err(sim->ctx, err, s, "sim: %s: device lost at generation %u", what, sim->gen);
    return wgf_ctx_err(sim->ctx, err, s, "sim: %s", what);
}

enum wgf_status wgf__sim_buffer(wgf_sim *sim, const char *label, uint64_t size, unsigned usage, wgf_buffer **out,
                                struct wgf_err *err)
{
    enum wgf_status s = wgf_buffer_create(sim->ctx, label, size, usage, out);
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, label);
    sim->gpu_bytes += size;
    return WGF_OK;
}

enum wgf_status wgf__sim_bind_group(wgf_sim *sim, wgf_pipeline *p, wgf_buffer *const *bufs, int n, wgf_bind_group **out,
                                    struct wgf_err *err)
{
    enum wgf_status s = wgf_bind_group_create(sim->ctx, p, bufs, n, out);
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, wgf_pipeline_label(p));
    return WGF_OK;
}
