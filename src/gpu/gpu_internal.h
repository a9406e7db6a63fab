/* wgfuse runtime internals, shared by the files of src/gpu only. */
#ifndef WGF_GPU_INTERNAL_H
#define WGF_GPU_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "gpu/wgpu_abi.h"
#include "wgfuse/gpu.h"

#define WGF_LABEL_MAX 96

/* Release a WebGPU handle through the context's table and null it. */
#define WGF_RELEASE(ctx, Kind, h)                                                                                  \
    do {                                                                                                       \
        if (h) {                                                                                               \
            (ctx)->p.Kind##Release(h);                                                                         \
            (h) = NULL;                                                                                        \
        }                                                                                                      \
    } while (0)

static inline WGPUStringView wgf__sv(const char *s)
{
    WGPUStringView v = {s, s ? WGPU_STRLEN : 0};
    return v;
}

struct wgf_pipeline {
    WGPUComputePipeline h;
    WGPUBindGroupLayout layout;          /* group 0, from layout "auto"              */
    char                label[WGF_LABEL_MAX];
    uint64_t            key_hash;
    char               *key;             /* prelude \0 source \0 entry \0 constants    */
    size_t              key_len;
};

struct wgf_buffer {
    wgf_ctx   *ctx;
    WGPUBuffer h;
    uint64_t   size;       /* logical bytes                                             */
    uint64_t   alloc_size; /* size rounded up to 4                                      */
    unsigned   usage;      /* enum wgf_buffer_usage                                     */
    char       label[WGF_LABEL_MAX];
    void      *map_req;    /* WGF_BUF_READBACK: the map in flight (struct wgf__map_req)  */
};

/* A mapAsync in flight (buffer.c); heap-allocated, parked if abandoned (see below). */
struct wgf__map_req {
    atomic_bool        done;
    WGPUFuture         future; /* what wgf__wait_future blocks on                     */
    WGPUMapAsyncStatus status;
    char               msg[256];
};
void wgf__on_map(WGPUMapAsyncStatus st, WGPUStringView msg, void *u1, void *u2);

struct wgf_bind_group {
    wgf_ctx      *ctx;
    WGPUBindGroup h;
};

struct wgf_timer {
    wgf_ctx     *ctx;
    WGPUQuerySet qs;
    WGPUBuffer   resolve;  /* QueryResolve | CopySrc, 8 bytes per timestamp             */
    uint32_t     max_passes;
    uint32_t     used;     /* passes recorded since reset                               */
    char         label[WGF_LABEL_MAX];
};

struct wgf_recorder {
    wgf_ctx               *ctx;
    WGPUCommandEncoder     enc;
    WGPUComputePassEncoder pass;
    wgf_timer             *timer;
    uint32_t               n_dispatches;
    char                   label[WGF_LABEL_MAX];
};

/* Callback targets. A wait can give up (timeout, device loss) while its callback is still
 * pending; the callback then fires later, at the latest while the instance is released.
 * So every target lives on the heap (wgf__req_new), and one whose callback has not fired
 * when its wait ends is parked (wgf__req_end) and freed only after the instance is gone
 * (wgf__parking_free). A target on the stack would be written after its frame is gone. */
struct wgf__parking {
    void **p;
    int    n, cap;
};
void *wgf__req_new(size_t size); /* zeroed; NULL when out of memory                       */
void  wgf__req_end(struct wgf__parking *pk, void *req, bool fired);
void  wgf__parking_free(struct wgf__parking *pk); /* call after the instance is released  */

struct wgf_ctx {
    bool                   robust;     /* shaders keep WebGPU's bounds clamps            */
    struct wgf__procs      p;          /* the loaded implementation's functions          */
    void                  *lib;        /* dlopen handle                                  */
    char                   lib_path[512];
    WGPUInstance           instance;
    WGPUAdapter            adapter;
    WGPUDevice             device;
    WGPUQueue              queue;
    struct wgf_adapter_desc desc;
    struct wgf_limits      limits;     /* the device's limits (= the adapter's)          */
    uint64_t               timeout_ns;
    bool                   timed_wait; /* the instance has timed WaitAny (make_instance)  */
    bool                   block_waits; /* waits block in WaitAny, not poll (a CPU adapter) */
    struct wgf_err         err;        /* last failure                                   */

    /* asynchronous reports from callbacks, surfaced by the next waiting call */
    atomic_bool            lost;
    char                   lost_msg[512];
    atomic_bool            pending_error;
    enum wgf_status        pending_status;
    char                   pending_msg[WGF_ERR_MSG_MAX];

    /* staging buffer for reads (MapRead | CopyDst), grown on demand */
    WGPUBuffer             staging;
    uint64_t               staging_size;
    WGPUBuffer             fence;      /* 4-byte MapRead buffer for wgf__queue_idle       */

    /* pipeline cache */
    wgf_pipeline         **pipes;
    int                    n_pipes, cap_pipes;

    struct wgf__parking    parked;     /* callback targets of abandoned waits            */

    /* subgroup probe (prelude.c), run once */
    bool                   sg_probed;
    uint32_t               sg_size;    /* 0: do not use subgroup reductions              */

    /* compute-unit probe (compute_units.c), run once */
    bool                   cu_probed;
    uint32_t               cu_units;   /* 0: unknown                                      */

    /* fault injection */
    struct wgf_fault_plan  fault;
    uint32_t               n_buffer_creates, n_shaders, n_pipelines, n_maps;
};

/* loader.c */
enum wgf_status wgf__load_library(const char *path, void **lib, struct wgf__procs *p, char *resolved, size_t cap,
                                  struct wgf_err *err);
void            wgf__unload_library(void *lib);
const char     *wgf__resolve_lib_path(const char *requested, char *buf, size_t cap);

/* adapter.c */
void wgf__describe_adapter(const struct wgf__procs *p, WGPUAdapter a, int index, struct wgf_adapter_desc *d);
void wgf__limits_from_wgpu(const WGPULimits *l, struct wgf_limits *out);

/* context.c: waiting and errors */
/* Poll the instance until *done becomes true; WGF_ERR_TIMEOUT naming `what` after the
 * context's timeout, WGF_ERR_DEVICE_LOST if the device is lost meanwhile. */
enum wgf_status wgf__wait(wgf_ctx *ctx, atomic_bool *done, const char *what);
enum wgf_status wgf__wait_instance(WGPUInstance inst, const struct wgf__procs *p, atomic_bool *done,
                                   uint64_t timeout_ns, const char *what, struct wgf_err *err);
/* Wait for `done`, set by the callback of the operation whose future is f: as
 * wgf__wait_instance, but on a CPU adapter (ctx->block_waits) blocked in wgpuInstanceWaitAny. */
enum wgf_status wgf__wait_future(wgf_ctx *ctx, WGPUFuture f, atomic_bool *done, const char *what);
/* Fail fast when the device is lost or an uncaptured error is pending. */
enum wgf_status wgf__check(wgf_ctx *ctx);
/* Error scopes: push validation+OOM (+internal); pop returns the first error, as
 * WGF_ERR_GPU_OOM / WGF_ERR_GPU with "<what>: <message>". */
void            wgf__scope_push(wgf_ctx *ctx);
enum wgf_status wgf__scope_pop(wgf_ctx *ctx, enum wgf_status on_validation, const char *what);
enum wgf_status wgf__fail(wgf_ctx *ctx, enum wgf_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Wait for all submitted work on the queue. */
enum wgf_status wgf__queue_idle(wgf_ctx *ctx, const char *what);
/* Copy n bytes (multiple of 4) from a GPU buffer to host through the staging buffer. */
enum wgf_status wgf__readback(wgf_ctx *ctx, WGPUBuffer src, uint64_t offset, void *dst, uint64_t n,
                              const char *what);

#endif
