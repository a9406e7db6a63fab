/* wgfuse runtime — recording dispatches into one encoder / pass / submit.
 *
 * The hot path of every plan: per dispatch it costs exactly setPipeline + setBindGroup +
 * dispatchWorkgroups, the same calls a hand-written loop makes (bench/RESULTS.md measures
 * the runtime against raw wgpu* calls). No validation scopes here: errors Dawn finds while
 * encoding arrive through the uncaptured-error callback and are returned by the next
 * waiting call. Device loss is the exception: every recording call reads the context's lost
 * flag (one relaxed atomic load) and fails at once, so a plan recording hundreds of
 * dispatches into a lost device stops at the first one (docs/runtime.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_internal.h"

enum wgf_status wgf_recorder_begin(wgf_ctx *ctx, const char *label, wgf_timer *timer, wgf_recorder **out)
{
    *out = NULL;
    enum wgf_status s = wgf__check(ctx);
    if (s != WGF_OK) return s;
    wgf_recorder *r = calloc(1, sizeof *r);
    if (!r) return wgf__fail(ctx, WGF_ERR_NOMEM, "recorder: out of host memory");
    r->ctx   = ctx;
    r->timer = timer;
    snprintf(r->label, sizeof r->label, "%s", label ? label : "recorder");
    WGPUCommandEncoderDescriptor d;
    memset(&d, 0, sizeof d);
    d.label = wgf__sv(r->label);
    r->enc  = ctx->p.DeviceCreateCommandEncoder(ctx->device, &d);
    if (!r->enc) {
        free(r);
        return wgf__fail(ctx, WGF_ERR_GPU, "recorder '%s': createCommandEncoder failed", label ? label : "");
    }
    *out = r;
    return WGF_OK;
}

/* WGF_ERR_DEVICE_LOST naming the call and the recorder once the device is lost, else OK. */
static enum wgf_status check_lost(wgf_recorder *r, const char *call)
{
    if (!atomic_load_explicit(&r->ctx->lost, memory_order_relaxed)) return WGF_OK;
    return wgf__fail(r->ctx, WGF_ERR_DEVICE_LOST, "device lost: %s (recorder '%s', %s)", r->ctx->lost_msg, r->label,
                     call);
}

static void open_pass(wgf_recorder *r)
{
    wgf_ctx *ctx = r->ctx;
    WGPUComputePassDescriptor d;
    memset(&d, 0, sizeof d);
    d.label = wgf__sv(r->label);
    WGPUPassTimestampWrites tw;
    if (r->timer && r->timer->used < r->timer->max_passes) {
        memset(&tw, 0, sizeof tw);
        tw.querySet                  = r->timer->qs;
        tw.beginningOfPassWriteIndex = 2 * r->timer->used;
        tw.endOfPassWriteIndex       = 2 * r->timer->used + 1;
        d.timestampWrites            = &tw;
        r->timer->used++;
    }
    r->pass = ctx->p.CommandEncoderBeginComputePass(r->enc, &d);
}

enum wgf_status wgf_recorder_end_pass(wgf_recorder *r)
{
    if (r->pass) {
        r->ctx->p.ComputePassEncoderEnd(r->pass);
        WGF_RELEASE(r->ctx, ComputePassEncoder, r->pass);
    }
    return check_lost(r, "end pass");
}

enum wgf_status wgf_recorder_dispatch(wgf_recorder *r, wgf_pipeline *p, wgf_bind_group *bg, uint32_t x, uint32_t y,
                                      uint32_t z)
{
    wgf_ctx *ctx = r->ctx;
    uint32_t lim = ctx->limits.max_compute_workgroups_per_dimension;
    enum wgf_status s = check_lost(r, p->label);
    if (s != WGF_OK) return s;
    if (x > lim || y > lim || z > lim)
        return wgf__fail(ctx, WGF_ERR_LIMIT, "dispatch of '%s': %u x %u x %u workgroups exceeds %u per dimension",
                         p->label, x, y, z, lim);
    if (!r->pass) open_pass(r);
    ctx->p.ComputePassEncoderSetPipeline(r->pass, p->h);
    ctx->p.ComputePassEncoderSetBindGroup(r->pass, 0, bg->h, 0, NULL);
    ctx->p.ComputePassEncoderDispatchWorkgroups(r->pass, x, y, z);
    r->n_dispatches++;
    return WGF_OK;
}

enum wgf_status wgf_recorder_dispatch_indirect(wgf_recorder *r, wgf_pipeline *p, wgf_bind_group *bg, wgf_buffer *args,
                                               uint64_t offset)
{
    wgf_ctx *ctx = r->ctx;
    enum wgf_status s = check_lost(r, p->label);
    if (s != WGF_OK) return s;
    if (!(args->usage & WGF_BUF_INDIRECT))
        return wgf__fail(ctx, WGF_ERR_ARG, "indirect dispatch of '%s': buffer '%s' lacks WGF_BUF_INDIRECT", p->label,
                         args->label);
    if (!r->pass) open_pass(r);
    ctx->p.ComputePassEncoderSetPipeline(r->pass, p->h);
    ctx->p.ComputePassEncoderSetBindGroup(r->pass, 0, bg->h, 0, NULL);
    ctx->p.ComputePassEncoderDispatchWorkgroupsIndirect(r->pass, args->h, offset);
    r->n_dispatches++;
    return WGF_OK;
}

enum wgf_status wgf_recorder_copy(wgf_recorder *r, wgf_buffer *src, uint64_t so, wgf_buffer *dst, uint64_t d_off,
                                  uint64_t n)
{
    wgf_ctx *ctx = r->ctx;
    uint64_t se, de;
    if (so % 4 || d_off % 4 || n % 4 || !wgf_add_u64(so, n, &se) || !wgf_add_u64(d_off, n, &de) ||
        se > src->alloc_size || de > dst->alloc_size)
        return wgf__fail(ctx, WGF_ERR_ARG, "copy '%s' -> '%s': bad range (offsets/size must be 4-aligned and inside)",
                         src->label, dst->label);
    enum wgf_status s = wgf_recorder_end_pass(r);
    if (s != WGF_OK) return s;
    ctx->p.CommandEncoderCopyBufferToBuffer(r->enc, src->h, so, dst->h, d_off, n);
    return WGF_OK;
}

void wgf_recorder_abandon(wgf_recorder *r)
{
    if (!r) return;
    wgf_recorder_end_pass(r);
    WGF_RELEASE(r->ctx, CommandEncoder, r->enc);
    free(r);
}

enum wgf_status wgf_recorder_submit(wgf_recorder *r)
{
    wgf_ctx *ctx = r->ctx;
    wgf_recorder_end_pass(r);
    if (r->timer && r->timer->used)
        ctx->p.CommandEncoderResolveQuerySet(r->enc, r->timer->qs, 0, 2 * r->timer->used, r->timer->resolve, 0);
    WGPUCommandBuffer cb = ctx->p.CommandEncoderFinish(r->enc, NULL);
    if (cb) {
        ctx->p.QueueSubmit(ctx->queue, 1, &cb);
        WGF_RELEASE(ctx, CommandBuffer, cb);
    }
    WGF_RELEASE(ctx, CommandEncoder, r->enc);
    free(r);
    return wgf__check(ctx);
}

enum wgf_status wgf_dispatch_once(wgf_ctx *ctx, wgf_pipeline *p, wgf_bind_group *bg, uint32_t x, uint32_t y, uint32_t z)
{
    wgf_recorder *r;
    enum wgf_status s = wgf_recorder_begin(ctx, p->label, NULL, &r);
    if (s != WGF_OK) return s;
    s = wgf_recorder_dispatch(r, p, bg, x, y, z);
    if (s != WGF_OK) {
        wgf_recorder_abandon(r);
        return s;
    }
    return wgf_recorder_submit(r);
}
