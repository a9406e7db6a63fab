/* wgfuse runtime — labelled GPU buffers, uploads and downloads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_internal.h"

/* Reads go through one MapRead staging buffer per context, in chunks of at most this. */
#define WGF_STAGING_MAX (64ull << 20)

static char *fmt_bytes(uint64_t n, char *buf, size_t cap)
{
    if (n >= (1ull << 30)) snprintf(buf, cap, "%.2f GiB", (double)n / (double)(1ull << 30));
    else if (n >= (1ull << 20)) snprintf(buf, cap, "%.1f MiB", (double)n / (double)(1ull << 20));
    else snprintf(buf, cap, "%llu B", (unsigned long long)n);
    return buf;
}

enum wgf_status wgf_buffer_create(wgf_ctx *ctx, const char *label, uint64_t size, unsigned usage, wgf_buffer **out)
{
    *out = NULL;
    enum wgf_status s = wgf__check(ctx);
    if (s != WGF_OK) return s;
    if (!label || !*label) return wgf__fail(ctx, WGF_ERR_ARG, "wgf_buffer_create: every buffer needs a label");
    if (size == 0) return wgf__fail(ctx, WGF_ERR_ARG, "buffer '%s': size 0", label);
    uint64_t alloc;
    if (!wgf_add_u64(size, 3, &alloc)) return wgf__fail(ctx, WGF_ERR_LIMIT, "buffer '%s': size overflows", label);
    alloc &= ~3ull;
    char a[32], b[32];
    if (alloc > ctx->limits.max_buffer_size)
        return wgf__fail(ctx, WGF_ERR_LIMIT, "buffer '%s': %s exceeds the device's maxBufferSize (%s)", label,
                         fmt_bytes(size, a, sizeof a), fmt_bytes(ctx->limits.max_buffer_size, b, sizeof b));

    if ((usage & WGF_BUF_READBACK) && usage != WGF_BUF_READBACK)
        return wgf__fail(ctx, WGF_ERR_ARG, "buffer '%s': a read-back buffer has no other usage", label);
    WGPUBufferUsage u = WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst;
    if (usage == WGF_BUF_READBACK) u = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
    if (usage & WGF_BUF_STORAGE || !usage) u |= WGPUBufferUsage_Storage;
    if (usage & WGF_BUF_UNIFORM) u |= WGPUBufferUsage_Uniform;
    if (usage & WGF_BUF_INDIRECT) u |= WGPUBufferUsage_Indirect | WGPUBufferUsage_Storage;

    wgf_buffer *buf = calloc(1, sizeof *buf);
    if (!buf) return wgf__fail(ctx, WGF_ERR_NOMEM, "buffer '%s': out of host memory", label);
    buf->ctx        = ctx;
    buf->size       = size;
    buf->alloc_size = alloc;
    buf->usage      = usage;
    snprintf(buf->label, sizeof buf->label, "%s", label);

    WGPUBufferDescriptor d;
    memset(&d, 0, sizeof d);
    d.label = wgf__sv(buf->label);
    d.usage = u;
    d.size  = alloc;
    wgf__scope_push(ctx);
    buf->h = ctx->p.DeviceCreateBuffer(ctx->device, &d);
    ctx->n_buffer_creates++;
    bool inject = ctx->fault.fail_buffer_create && ctx->n_buffer_creates == ctx->fault.fail_buffer_create;
    if (inject && ctx->p.DeviceInjectError) /* drive the real out-of-memory path through the scope */
        ctx->p.DeviceInjectError(ctx->device, WGPUErrorType_OutOfMemory, wgf__sv("injected out-of-memory fault"));
    char what[160];
    snprintf(what, sizeof what, "buffer '%s' (%s)", buf->label, fmt_bytes(size, a, sizeof a));
    s = wgf__scope_pop(ctx, WGF_ERR_GPU, what);
    if (s == WGF_OK && inject) s = wgf__fail(ctx, WGF_ERR_GPU_OOM, "%s: out of GPU memory: injected fault", what);
    if (s == WGF_OK && !buf->h) s = wgf__fail(ctx, WGF_ERR_GPU_OOM, "%s: createBuffer returned nothing", what);
    if (s != WGF_OK) {
        wgf_buffer_free(buf);
        return s;
    }
    *out = buf;
    return WGF_OK;
}

void wgf_buffer_free(wgf_buffer *buf)
{
    if (!buf) return;
    if (buf->map_req) { /* a map still in flight: its callback may fire later */
        struct wgf__map_req *r = buf->map_req;
        wgf__req_end(&buf->ctx->parked, r, atomic_load(&r->done));
        buf->map_req = NULL;
    }
    if (buf->h) {
        buf->ctx->p.BufferDestroy(buf->h); /* frees GPU memory now, not at the last release */
        WGF_RELEASE(buf->ctx, Buffer, buf->h);
    }
    free(buf);
}

uint64_t wgf_buffer_size(const wgf_buffer *buf) { return buf->size; }
const char *wgf_buffer_label(const wgf_buffer *buf) { return buf->label; }

static enum wgf_status check_range(wgf_ctx *ctx, const wgf_buffer *buf, uint64_t off, uint64_t n, const char *op)
{
    uint64_t end;
    if (!wgf_add_u64(off, n, &end) || end > buf->size)
        return wgf__fail(ctx, WGF_ERR_ARG, "%s buffer '%s': range [%llu, +%llu) outside its %llu bytes", op, buf->label,
                         (unsigned long long)off, (unsigned long long)n, (unsigned long long)buf->size);
    if (off % 4 || (n % 4 && end != buf->size))
        return wgf__fail(ctx, WGF_ERR_ARG,
                         "%s buffer '%s': offset and size must be multiples of 4 except for a range ending at the "
                         "buffer's end (offset %llu, size %llu)",
                         op, buf->label, (unsigned long long)off, (unsigned long long)n);
    return WGF_OK;
}

enum wgf_status wgf_buffer_write(wgf_ctx *ctx, wgf_buffer *buf, uint64_t offset, const void *src, size_t n)
{
    enum wgf_status s = wgf__check(ctx);
    if (s != WGF_OK) return s;
    if (n == 0) return WGF_OK;
    s = check_range(ctx, buf, offset, n, "write to");
    if (s != WGF_OK) return s;
    size_t body = n & ~(size_t)3;
    if (body) ctx->p.QueueWriteBuffer(ctx->queue, buf->h, offset, src, body);
    if (body != n) { /* the tail reaches the logical end: pad it into the rounded allocation */
        uint8_t tail[4] = {0, 0, 0, 0};
        memcpy(tail, (const uint8_t *)src + body, n - body);
        ctx->p.QueueWriteBuffer(ctx->queue, buf->h, offset + body, tail, 4);
    }
    return WGF_OK;
}

void wgf__on_map(WGPUMapAsyncStatus st, WGPUStringView msg, void *u1, void *u2)
{
    (void)u2;
    struct wgf__map_req *r = u1;
    r->status = st;
    size_t len = !msg.data ? 0 : msg.length == WGPU_STRLEN ? strlen(msg.data) : msg.length;
    snprintf(r->msg, sizeof r->msg, "%.*s", (int)len, msg.data ? msg.data : "");
    atomic_store(&r->done, true);
}

static enum wgf_status ensure_staging(wgf_ctx *ctx, uint64_t n)
{
    if (ctx->staging && ctx->staging_size >= n) return WGF_OK;
    WGF_RELEASE(ctx, Buffer, ctx->staging);
    uint64_t size = 1u << 16;
    while (size < n) size <<= 1;
    WGPUBufferDescriptor d;
    memset(&d, 0, sizeof d);
    d.label = wgf__sv("readback staging");
    d.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
    d.size  = size;
    wgf__scope_push(ctx);
    ctx->staging = ctx->p.DeviceCreateBuffer(ctx->device, &d);
    enum wgf_status s = wgf__scope_pop(ctx, WGF_ERR_GPU, "buffer 'readback staging'");
    if (s != WGF_OK) {
        WGF_RELEASE(ctx, Buffer, ctx->staging);
        return s;
    }
    ctx->staging_size = size;
    return WGF_OK;
}

/* A map whose callback fired: check its status (and the map fault plan), copy n bytes from
 * the mapped range of `h` (size bytes mapped) into dst, unmap. `r` is released here. */
static enum wgf_status finish_map(wgf_ctx *ctx, WGPUBuffer h, struct wgf__map_req *r, uint64_t size, void *dst,
                                  size_t n, const char *what)
{
    WGPUMapAsyncStatus st = r->status;
    char               why[256];
    snprintf(why, sizeof why, "%s", r->msg[0] ? r->msg : "unknown reason");
    wgf__req_end(&ctx->parked, r, true);
    ctx->n_maps++;
    bool inject = ctx->fault.fail_map && ctx->n_maps == ctx->fault.fail_map;
    if (st != WGPUMapAsyncStatus_Success || inject) {
        if (st == WGPUMapAsyncStatus_Success) ctx->p.BufferUnmap(h);
        enum wgf_status s = wgf__check(ctx); /* device loss explains a failed map better */
        if (s != WGF_OK) return s;
        return wgf__fail(ctx, WGF_ERR_GPU, "%s: mapAsync failed: %s", what, inject ? "injected fault" : why);
    }
    const void *m = ctx->p.BufferGetConstMappedRange(h, 0, (size_t)size);
    if (!m) {
        ctx->p.BufferUnmap(h);
        return wgf__fail(ctx, WGF_ERR_GPU, "%s: mapped range unavailable", what);
    }
    if (n) memcpy(dst, m, n);
    ctx->p.BufferUnmap(h);
    return wgf__check(ctx);
}

enum wgf_status wgf__readback(wgf_ctx *ctx, WGPUBuffer src, uint64_t offset, void *dst, uint64_t n, const char *what)
{
    uint64_t done = 0;
    while (done < n) {
        uint64_t chunk = n - done < WGF_STAGING_MAX ? n - done : WGF_STAGING_MAX;
        enum wgf_status s = ensure_staging(ctx, chunk);
        if (s != WGF_OK) return s;
        WGPUCommandEncoderDescriptor ed;
        memset(&ed, 0, sizeof ed);
        ed.label = wgf__sv("readback copy");
        WGPUCommandEncoder enc = ctx->p.DeviceCreateCommandEncoder(ctx->device, &ed);
        ctx->p.CommandEncoderCopyBufferToBuffer(enc, src, offset + done, ctx->staging, 0, chunk);
        WGPUCommandBuffer cb = ctx->p.CommandEncoderFinish(enc, NULL);
        ctx->p.QueueSubmit(ctx->queue, 1, &cb);
        WGF_RELEASE(ctx, CommandBuffer, cb);
        WGF_RELEASE(ctx, CommandEncoder, enc);

        struct wgf__map_req *r = wgf__req_new(sizeof *r);
        if (!r) return wgf__fail(ctx, WGF_ERR_NOMEM, "read-back of %s: out of host memory", what);
        atomic_init(&r->done, false);
        WGPUBufferMapCallbackInfo mcb = {NULL, WGPUCallbackMode_AllowProcessEvents, wgf__on_map, r, NULL};
        WGPUFuture f = ctx->p.BufferMapAsync(ctx->staging, WGPUMapMode_Read, 0, (size_t)chunk, mcb);
        char wait_what[200];
        snprintf(wait_what, sizeof wait_what, "read-back of %s", what);
        /* wait for the map itself (a captured error must not leave the staging buffer
         * mapped, or every later read-back would fail) */
        s = wgf__wait_future(ctx, f, &r->done, wait_what);
        if (s != WGF_OK) { /* still pending: drop the staging buffer, the next read makes one */
            wgf__req_end(&ctx->parked, r, atomic_load(&r->done));
            WGF_RELEASE(ctx, Buffer, ctx->staging);
            ctx->staging_size = 0;
            return s;
        }
        if ((s = finish_map(ctx, ctx->staging, r, chunk, (uint8_t *)dst + done, (size_t)chunk, wait_what))) return s;
        done += chunk;
    }
    return WGF_OK;
}

enum wgf_status wgf_buffer_read(wgf_ctx *ctx, wgf_buffer *buf, uint64_t offset, void *dst, size_t n)
{
    enum wgf_status s = wgf__check(ctx);
    if (s != WGF_OK) return s;
    if (n == 0) return WGF_OK;
    s = check_range(ctx, buf, offset, n, "read from");
    if (s != WGF_OK) return s;
    size_t body = n & ~(size_t)3;
    char what[128];
    snprintf(what, sizeof what, "buffer '%s'", buf->label);
    if (body) {
        s = wgf__readback(ctx, buf->h, offset, dst, body, what);
        if (s != WGF_OK) return s;
    }
    if (body != n) {
        uint8_t tail[4];
        s = wgf__readback(ctx, buf->h, offset + body, tail, 4, what);
        if (s != WGF_OK) return s;
        memcpy((uint8_t *)dst + body, tail, n - body);
    }
    return wgf__check(ctx);
}

enum wgf_status wgf_buffer_map_begin(wgf_ctx *ctx, wgf_buffer *buf)
{
    enum wgf_status s = wgf__check(ctx);
    if (s != WGF_OK) return s;
    if (buf->usage != WGF_BUF_READBACK || buf->map_req)
        return wgf__fail(ctx, WGF_ERR_ARG, "map of buffer '%s': %s", buf->label,
                         buf->map_req ? "a map is already in flight" : "not a read-back buffer");
    struct wgf__map_req *r = wgf__req_new(sizeof *r);
    if (!r) return wgf__fail(ctx, WGF_ERR_NOMEM, "map of buffer '%s': out of host memory", buf->label);
    atomic_init(&r->done, false);
    buf->map_req                  = r;
    WGPUBufferMapCallbackInfo mcb = {NULL, WGPUCallbackMode_AllowProcessEvents, wgf__on_map, r, NULL};
    r->future = ctx->p.BufferMapAsync(buf->h, WGPUMapMode_Read, 0, (size_t)buf->alloc_size, mcb);
    return WGF_OK;
}

enum wgf_status wgf_buffer_map_end(wgf_ctx *ctx, wgf_buffer *buf, void *dst, size_t n)
{
    struct wgf__map_req *r = buf->map_req;
    if (!r) return wgf__fail(ctx, WGF_ERR_ARG, "map of buffer '%s': no map in flight", buf->label);
    if (n > buf->size) return wgf__fail(ctx, WGF_ERR_ARG, "map of buffer '%s': %zu bytes > its size", buf->label, n);
    char what[160];
    snprintf(what, sizeof what, "read-back of buffer '%s'", buf->label);
    enum wgf_status s = wgf__wait_future(ctx, r->future, &r->done, what);
    buf->map_req      = NULL;
    if (s != WGF_OK) { /* still pending: park the target; the buffer cannot be reused */
        wgf__req_end(&ctx->parked, r, atomic_load(&r->done));
        enum wgf_status c = wgf__check(ctx);
        return c != WGF_OK ? c : s;
    }
    return finish_map(ctx, buf->h, r, buf->alloc_size, dst, n, what);
}

enum wgf_status wgf_buffer_fill_u32(wgf_ctx *ctx, wgf_buffer *buf, uint32_t pattern)
{
    enum wgf_status s = wgf__check(ctx);
    if (s != WGF_OK) return s;
    size_t chunk = 1u << 20;
    uint32_t *tmp = malloc(chunk);
    if (!tmp) return wgf__fail(ctx, WGF_ERR_NOMEM, "fill '%s': out of host memory", buf->label);
    for (size_t i = 0; i < chunk / 4; i++) tmp[i] = pattern;
    for (uint64_t off = 0; off < buf->alloc_size; off += chunk) {
        uint64_t n = buf->alloc_size - off < chunk ? buf->alloc_size - off : chunk;
        ctx->p.QueueWriteBuffer(ctx->queue, buf->h, off, tmp, (size_t)n);
    }
    free(tmp);
    return WGF_OK;
}
