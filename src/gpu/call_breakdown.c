/* wgfuse runtime — per-call CPU cost of one dispatch's WebGPU calls (for `wgfuse bench`).
 *
 * Only src/gpu touches webgpu.h, so the bench asks the runtime to time the raw calls: each
 * repetition records one tiny dispatch as createCommandEncoder, beginComputePass,
 * setPipeline, setBindGroup, dispatchWorkgroups, end, finish, queue.submit, with the host
 * clock read between calls. The clock's own cost (measured here as the mean of back-to-back
 * reads) is subtracted from every interval. Releases happen outside the timed intervals; the
 * queue is drained every 256 repetitions so the measurement does not pile up work. Means,
 * not medians: one call is shorter than the clock's resolution on some hosts, and the mean of
 * many intervals is unbiased where a median of quantised ones is not. */
#include <string.h>

#include "gpu/gpu_internal.h"
#include "gpu/kernels.h"
#include "wgfuse/gpu_bench.h"

enum wgf_status wgf_gpu_bench_call_breakdown(wgf_ctx *ctx, int reps, struct wgf_call_breakdown *out)
{
    if (!ctx || !out || reps < 1) return WGF_ERR_ARG;
    enum wgf_status s = wgf__check(ctx);
    if (s != WGF_OK) return s;
    struct wgf_constant      c    = {"N", 64};
    struct wgf_pipeline_desc desc = {.label       = wgf__kernel_role(WGF_KERNEL_TINY_F32),
                                     .wgsl        = wgf__kernel_wgsl(WGF_KERNEL_TINY_F32),
                                     .constants   = &c,
                                     .n_constants = 1};
    wgf_pipeline            *p    = NULL;
    wgf_buffer              *y = NULL, *x = NULL;
    wgf_bind_group          *bg = NULL;
    if ((s = wgf_pipeline_get(ctx, &desc, &p)) ||
        (s = wgf_buffer_create(ctx, "call_breakdown.y", 256, WGF_BUF_STORAGE, &y)) ||
        (s = wgf_buffer_create(ctx, "call_breakdown.x", 256, WGF_BUF_STORAGE, &x)))
        goto out;
    wgf_buffer *bufs[2] = {y, x};
    if ((s = wgf_bind_group_create(ctx, p, bufs, 2, &bg))) goto out;

    /* the clock's cost per read */
    uint64_t c0 = wgf_now_ns();
    for (int i = 0; i < 1000; i++) (void)wgf_now_ns();
    double clock_ns = (double)(wgf_now_ns() - c0) / 1001.0;

    double acc[8] = {0};
    WGPUCommandEncoderDescriptor ed;
    WGPUComputePassDescriptor    pd;
    memset(&ed, 0, sizeof ed);
    memset(&pd, 0, sizeof pd);
    ed.label = wgf__sv("call_breakdown");
    pd.label = wgf__sv("call_breakdown");
    for (int r = -16; r < reps; r++) { /* 16 warm-up repetitions */
        uint64_t t[9];
        t[0]                          = wgf_now_ns();
        WGPUCommandEncoder enc        = ctx->p.DeviceCreateCommandEncoder(ctx->device, &ed);
        t[1]                          = wgf_now_ns();
        WGPUComputePassEncoder pass   = ctx->p.CommandEncoderBeginComputePass(enc, &pd);
        t[2]                          = wgf_now_ns();
        ctx->p.ComputePassEncoderSetPipeline(pass, p->h);
        t[3] = wgf_now_ns();
        ctx->p.ComputePassEncoderSetBindGroup(pass, 0, bg->h, 0, NULL);
        t[4] = wgf_now_ns();
        ctx->p.ComputePassEncoderDispatchWorkgroups(pass, 1, 1, 1);
        t[5] = wgf_now_ns();
        ctx->p.ComputePassEncoderEnd(pass);
        t[6]                 = wgf_now_ns();
        WGPUCommandBuffer cb = ctx->p.CommandEncoderFinish(enc, NULL);
        t[7]                 = wgf_now_ns();
        ctx->p.QueueSubmit(ctx->queue, 1, &cb);
        t[8] = wgf_now_ns();
        WGF_RELEASE(ctx, ComputePassEncoder, pass);
        WGF_RELEASE(ctx, CommandBuffer, cb);
        WGF_RELEASE(ctx, CommandEncoder, enc);
        if (r >= 0)
            for (int k = 0; k < 8; k++) acc[k] += (double)(t[k + 1] - t[k]) - clock_ns;
        if ((r & 255) == 255 && (s = wgf__queue_idle(ctx, "call breakdown submits"))) goto out;
    }
    if ((s = wgf__queue_idle(ctx, "call breakdown submits"))) goto out;
    double us[8];
    for (int k = 0; k < 8; k++) us[k] = acc[k] / reps / 1e3;
    memset(out, 0, sizeof *out);
    out->reps              = reps;
    out->encoder_create_us = us[0];
    out->pass_begin_us     = us[1];
    out->set_pipeline_us   = us[2];
    out->set_bind_group_us = us[3];
    out->dispatch_us       = us[4];
    out->pass_end_us       = us[5];
    out->finish_us         = us[6];
    out->submit_us         = us[7];
    out->total_us          = us[0] + us[1] + us[2] + us[3] + us[4] + us[5] + us[6] + us[7];
out:
    wgf_bind_group_free(bg);
    wgf_buffer_free(y);
    wgf_buffer_free(x);
    return s;
}
