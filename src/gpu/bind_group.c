/* wgfuse runtime — bind groups: buffer i at @group(0) @binding(i). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_internal.h"

#define WGF_MAX_BINDINGS 16

enum wgf_status wgf_bind_group_create_ranges(wgf_ctx *ctx, wgf_pipeline *p, const struct wgf_binding *b, int n,
                                             wgf_bind_group **out)
{
    *out = NULL;
    enum wgf_status s = wgf__check(ctx);
    if (s != WGF_OK) return s;
    if (n < 0 || n > WGF_MAX_BINDINGS)
        return wgf__fail(ctx, WGF_ERR_ARG, "bind group for '%s': %d bindings (max %d)", p->label, n, WGF_MAX_BINDINGS);
    WGPUBindGroupEntry e[WGF_MAX_BINDINGS];
    for (int i = 0; i < n; i++) {
        wgf_buffer *buf = b[i].buf;
        if (!buf) return wgf__fail(ctx, WGF_ERR_ARG, "bind group for '%s': binding %d is NULL", p->label, i);
        uint64_t size = b[i].size ? b[i].size : buf->alloc_size - b[i].offset;
        uint64_t end;
        if (b[i].offset > buf->alloc_size || !wgf_add_u64(b[i].offset, size, &end) || end > buf->alloc_size)
            return wgf__fail(ctx, WGF_ERR_ARG, "bind group for '%s': binding %d ('%s') range outside the buffer",
                             p->label, i, buf->label);
        bool uniform = (buf->usage & WGF_BUF_UNIFORM) && !(buf->usage & WGF_BUF_STORAGE);
        uint64_t limit = uniform ? ctx->limits.max_uniform_buffer_binding_size
                                 : ctx->limits.max_storage_buffer_binding_size;
        if (size > limit)
            return wgf__fail(ctx, WGF_ERR_LIMIT,
                             "bind group for '%s': binding %d ('%s') is %llu bytes, above the device's "
                             "max%sBufferBindingSize %llu (split the tensor)",
                             p->label, i, buf->label, (unsigned long long)size, uniform ? "Uniform" : "Storage",
                             (unsigned long long)limit);
        memset(&e[i], 0, sizeof e[i]);
        e[i].binding = (uint32_t)i;
        e[i].buffer  = buf->h;
        e[i].offset  = b[i].offset;
        e[i].size    = size;
    }
    wgf_bind_group *bg = calloc(1, sizeof *bg);
    if (!bg) return wgf__fail(ctx, WGF_ERR_NOMEM, "bind group for '%s': out of host memory", p->label);
    bg->ctx = ctx;
    WGPUBindGroupDescriptor d;
    memset(&d, 0, sizeof d);
    d.label      = wgf__sv(p->label); /* bind groups are named after their pipeline */
    d.layout     = p->layout;
    d.entryCount = (size_t)n;
    d.entries    = e;
    wgf__scope_push(ctx);
    bg->h = ctx->p.DeviceCreateBindGroup(ctx->device, &d);
    char what[160];
    snprintf(what, sizeof what, "bind group for '%s'", p->label);
    s = wgf__scope_pop(ctx, WGF_ERR_GPU, what);
    if (s != WGF_OK) {
        wgf_bind_group_free(bg);
        return s;
    }
    *out = bg;
    return WGF_OK;
}

enum wgf_status wgf_bind_group_create(wgf_ctx *ctx, wgf_pipeline *p, wgf_buffer *const *bufs, int n,
                                      wgf_bind_group **out)
{
    struct wgf_binding b[WGF_MAX_BINDINGS];
    if (n < 0 || n > WGF_MAX_BINDINGS)
        return wgf__fail(ctx, WGF_ERR_ARG, "bind group for '%s': %d bindings (max %d)", p->label, n, WGF_MAX_BINDINGS);
    for (int i = 0; i < n; i++) b[i] = (struct wgf_binding){bufs[i], 0, 0};
    return wgf_bind_group_create_ranges(ctx, p, b, n, out);
}

void wgf_bind_group_free(wgf_bind_group *bg)
{
    if (!bg) return;
    WGF_RELEASE(bg->ctx, BindGroup, bg->h);
    free(bg);
}
