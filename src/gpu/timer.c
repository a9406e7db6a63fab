/* wgfuse runtime — GPU timestamps around compute passes (feature timestamp-query).
 * Each pass the recorder opens while a timer is attached writes a begin/end pair into the
 * timer's next slot; submit resolves them; wgf_timer_read returns the durations. Devices
 * without the feature get WGF_ERR_UNSUPPORTED and callers fall back to wall-clock time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_internal.h"

enum wgf_status wgf_timer_create(wgf_ctx *ctx, const char *label, uint32_t max_passes, wgf_timer **out)
{
    *out = NULL;
    enum wgf_status s = wgf__check(ctx);
    if (s != WGF_OK) return s;
    if (!ctx->desc.has_timestamp)
        return wgf__fail(ctx, WGF_ERR_UNSUPPORTED, "timer '%s': adapter '%s' lacks timestamp-query", label,
                         ctx->desc.name);
    if (max_passes == 0 || max_passes > 2048)
        return wgf__fail(ctx, WGF_ERR_ARG, "timer '%s': max_passes %u not in 1..2048", label, max_passes);
    wgf_timer *t = calloc(1, sizeof *t);
    if (!t) return wgf__fail(ctx, WGF_ERR_NOMEM, "timer: out of host memory");
    t->ctx        = ctx;
    t->max_passes = max_passes;
    snprintf(t->label, sizeof t->label, "%s", label);
    WGPUQuerySetDescriptor qd;
    memset(&qd, 0, sizeof qd);
    qd.label = wgf__sv(t->label);
    qd.type  = WGPUQueryType_Timestamp;
    qd.count = 2 * max_passes;
    WGPUBufferDescriptor bd;
    memset(&bd, 0, sizeof bd);
    bd.label = wgf__sv(t->label);
    bd.usage = WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc;
    bd.size  = 16ull * max_passes;
    wgf__scope_push(ctx);
    t->qs      = ctx->p.DeviceCreateQuerySet(ctx->device, &qd);
    t->resolve = ctx->p.DeviceCreateBuffer(ctx->device, &bd);
    char what[160];
    snprintf(what, sizeof what, "timer '%s'", t->label);
    s = wgf__scope_pop(ctx, WGF_ERR_GPU, what);
    if (s != WGF_OK) {
        wgf_timer_free(t);
        return s;
    }
    *out = t;
    return WGF_OK;
}

void wgf_timer_free(wgf_timer *t)
{
    if (!t) return;
    if (t->qs) t->ctx->p.QuerySetDestroy(t->qs);
    WGF_RELEASE(t->ctx, QuerySet, t->qs);
    WGF_RELEASE(t->ctx, Buffer, t->resolve);
    free(t);
}

void wgf_timer_reset(wgf_timer *t) { t->used = 0; }
uint32_t wgf_timer_used(const wgf_timer *t) { return t ? t->used : 0; }

enum wgf_status wgf_timer_read(wgf_ctx *ctx, wgf_timer *t, double *pass_ns, uint32_t cap, uint32_t *n)
{
    *n = 0;
    if (!t->used) return WGF_OK;
    uint64_t *ts = malloc(16ull * t->used);
    if (!ts) return wgf__fail(ctx, WGF_ERR_NOMEM, "timer '%s': out of host memory", t->label);
    char what[128];
    snprintf(what, sizeof what, "timer '%s'", t->label);
    enum wgf_status s = wgf__readback(ctx, t->resolve, 0, ts, 16ull * t->used, what);
    if (s == WGF_OK) {
        for (uint32_t i = 0; i < t->used && i < cap; i++) {
            uint64_t b = ts[2 * i], e = ts[2 * i + 1];
            pass_ns[i] = e >= b ? (double)(e - b) : 0.0;
            (*n)++;
        }
    }
    free(ts);
    return s;
}
