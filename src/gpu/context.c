/* wgfuse runtime — the context: instance, adapter choice, device, waits and errors.
 *
 * All waiting goes through wgf__wait(): it polls wgpuInstanceProcessEvents (callbacks are
 * registered in AllowProcessEvents mode) until a flag set by the callback flips, the
 * context's timeout passes (WGF_ERR_TIMEOUT naming what it waited for), or the device is
 * lost. Dawn's asynchronous reports (uncaptured errors, device loss) land in the context
 * and are returned by the next call that checks (wgf__check). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpu/gpu_internal.h"
#include "util/sanitize_pin.h"

#define WGF_MAX_ADAPTERS 16

struct wgf_gpu_options wgf_gpu_options_default(void)
{
    struct wgf_gpu_options o;
    memset(&o, 0, sizeof o); /* timeout_ms 0: by adapter type (wgf_gpu_options) */
    return o;
}

uint64_t wgf_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

enum wgf_status wgf__fail(wgf_ctx *ctx, enum wgf_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char buf[WGF_ERR_MSG_MAX];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return wgf_fail(&ctx->err, s, "%s", buf);
}

/* ---- waiting ------------------------------------------------------------------------------ */

enum wgf_status wgf__wait_instance(WGPUInstance inst, const struct wgf__procs *p, atomic_bool *done,
                                   uint64_t timeout_ns, const char *what, struct wgf_err *err)
{
    uint64_t start = wgf_now_ns();
    unsigned spins = 0;
    while (!atomic_load(done)) {
        p->InstanceProcessEvents(inst);
        if (atomic_load(done)) break;
        uint64_t el = wgf_now_ns() - start;
        if (el > timeout_ns)
            return wgf_fail(err, WGF_ERR_TIMEOUT, "timed out after %.1f s waiting for %s", (double)el * 1e-9, what);
        /* spin for the first ~2 ms (submit+wait latency is what the bench measures), then
         * back off so a long kernel doesn't burn a core */
        if (++spins > 64 && el > 2000000) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
    return WGF_OK;
}

/* On a CPU adapter the device's threads run on the host's cores, and a host thread polling
 * for the ~2 ms above takes one of them: on a 2-core VM with lavapipe the same CartPole
 * per-step generation measured 21 to 37 ms in consecutive processes, wherever the scheduler
 * put the poller (bench/RESULTS.md, the advisor's seventh cut). There the wait blocks in
 * wgpuInstanceWaitAny (timed waits, asked for at instance creation), in slices of at most
 * 100 ms so the overall timeout and a lost device are still seen; a GPU keeps the poll, whose
 * latency is what the dispatch bench measures. */
enum wgf_status wgf__wait_future(wgf_ctx *ctx, WGPUFuture f, atomic_bool *done, const char *what)
{
    if (!ctx->block_waits || !f.id) return wgf__wait_instance(ctx->instance, &ctx->p, done, ctx->timeout_ns, what, &ctx->err);
    uint64_t start = wgf_now_ns();
    while (!atomic_load(done)) {
        uint64_t el = wgf_now_ns() - start;
        if (el > ctx->timeout_ns)
            return wgf_fail(&ctx->err, WGF_ERR_TIMEOUT, "timed out after %.1f s waiting for %s", (double)el * 1e-9,
                            what);
        uint64_t           slice = ctx->timeout_ns - el < 100000000ull ? ctx->timeout_ns - el : 100000000ull;
        WGPUFutureWaitInfo wi    = {f, 0};
        WGPUWaitStatus     st    = ctx->p.InstanceWaitAny(ctx->instance, 1, &wi, slice);
        if (st != WGPUWaitStatus_Success && st != WGPUWaitStatus_TimedOut) { /* not supported after all: poll */
            ctx->block_waits = false;
            return wgf__wait_instance(ctx->instance, &ctx->p, done, ctx->timeout_ns, what, &ctx->err);
        }
        if (atomic_load(&ctx->lost)) break;
    }
    return WGF_OK;
}

enum wgf_status wgf__wait(wgf_ctx *ctx, atomic_bool *done, const char *what)
{
    enum wgf_status s = wgf__wait_instance(ctx->instance, &ctx->p, done, ctx->timeout_ns, what, &ctx->err);
    if (s != WGF_OK) return s;
    return wgf__check(ctx);
}

enum wgf_status wgf__check(wgf_ctx *ctx)
{
    if (atomic_load(&ctx->lost))
        return wgf__fail(ctx, WGF_ERR_DEVICE_LOST, "device lost: %s", ctx->lost_msg);
    if (atomic_load(&ctx->pending_error)) {
        atomic_store(&ctx->pending_error, false);
        return wgf__fail(ctx, ctx->pending_status, "%s", ctx->pending_msg);
    }
    return WGF_OK;
}

/* ---- callbacks ------------------------------------------------------------------------------ */

static size_t sv_len(WGPUStringView v) { return !v.data ? 0 : v.length == WGPU_STRLEN ? strlen(v.data) : v.length; }

static void on_uncaptured_error(const WGPUDevice *dev, WGPUErrorType type, WGPUStringView msg, void *u1, void *u2)
{
    (void)dev;
    (void)u2;
    wgf_ctx *ctx = u1;
    if (atomic_load(&ctx->pending_error)) return; /* keep the first: later ones are usually fallout */
    ctx->pending_status = type == WGPUErrorType_OutOfMemory ? WGF_ERR_GPU_OOM : WGF_ERR_GPU;
    snprintf(ctx->pending_msg, sizeof ctx->pending_msg, "%s error: %.*s",
             type == WGPUErrorType_OutOfMemory ? "GPU out-of-memory"
             : type == WGPUErrorType_Validation ? "WebGPU validation"
                                                 : "WebGPU internal",
             (int)sv_len(msg), msg.data ? msg.data : "");
    atomic_store(&ctx->pending_error, true);
}

static void on_device_lost(const WGPUDevice *dev, WGPUDeviceLostReason reason, WGPUStringView msg, void *u1,
                           void *u2)
{
    (void)dev;
    (void)u2;
    wgf_ctx *ctx = u1;
    if (reason == WGPUDeviceLostReason_CallbackCancelled || reason == WGPUDeviceLostReason_Destroyed) {
        /* our own teardown: not a fault */
        if (reason == WGPUDeviceLostReason_Destroyed) atomic_store(&ctx->lost, true);
        snprintf(ctx->lost_msg, sizeof ctx->lost_msg, "device destroyed");
        return;
    }
    snprintf(ctx->lost_msg, sizeof ctx->lost_msg, "%.*s (reason %d)", (int)sv_len(msg), msg.data ? msg.data : "",
             (int)reason);
    atomic_store(&ctx->lost, true);
}

struct adapter_req {
    atomic_bool done;
    WGPUAdapter adapter;
    char        msg[256];
};
static void on_adapter(WGPURequestAdapterStatus st, WGPUAdapter a, WGPUStringView msg, void *u1, void *u2)
{
    (void)u2;
    struct adapter_req *r = u1;
    if (st == WGPURequestAdapterStatus_Success) r->adapter = a;
    else snprintf(r->msg, sizeof r->msg, "%.*s", (int)sv_len(msg), msg.data ? msg.data : "");
    atomic_store(&r->done, true);
}

struct device_req {
    atomic_bool done;
    WGPUDevice  device;
    char        msg[512];
};
static void on_device(WGPURequestDeviceStatus st, WGPUDevice d, WGPUStringView msg, void *u1, void *u2)
{
    (void)u2;
    struct device_req *r = u1;
    if (st == WGPURequestDeviceStatus_Success) r->device = d;
    else snprintf(r->msg, sizeof r->msg, "%.*s", (int)sv_len(msg), msg.data ? msg.data : "");
    atomic_store(&r->done, true);
}

/* ---- adapters ------------------------------------------------------------------------------ */

struct adapter_set {
    WGPUAdapter             h[WGF_MAX_ADAPTERS];
    struct wgf_adapter_desc d[WGF_MAX_ADAPTERS];
    int                     n;
};

static bool same_adapter(const struct wgf_adapter_desc *a, const struct wgf_adapter_desc *b)
{
    return !strcmp(a->name, b->name) && !strcmp(a->backend, b->backend) && !strcmp(a->type, b->type) &&
           a->vendor_id == b->vendor_id && a->device_id == b->device_id && !strcmp(a->driver, b->driver);
}

void *wgf__req_new(size_t size) { return calloc(1, size); }

void wgf__req_end(struct wgf__parking *pk, void *req, bool fired)
{
    if (!req) return;
    if (fired) {
        free(req);
        return;
    }
    if (pk->n == pk->cap) {
        int    cap = pk->cap ? pk->cap * 2 : 8;
        void **np  = realloc(pk->p, (size_t)cap * sizeof *np);
        if (!np) return; /* leak it: never free memory a callback may still write */
        pk->p   = np;
        pk->cap = cap;
    }
    pk->p[pk->n++] = req;
}

void wgf__parking_free(struct wgf__parking *pk)
{
    for (int i = 0; i < pk->n; i++) free(pk->p[i]);
    free(pk->p);
    memset(pk, 0, sizeof *pk);
}

/* The standard C API has no "enumerate": ask with each preference the API offers and keep
 * the distinct answers. Order: the implementation's default first. */
static enum wgf_status collect_adapters(WGPUInstance inst, const struct wgf__procs *p, uint64_t timeout_ns,
                                        struct adapter_set *set, struct wgf__parking *pk, struct wgf_err *err)
{
    static const struct {
        WGPUPowerPreference pref;
        WGPUBool            fallback;
        WGPUBackendType     backend;
    } asks[] = {
        {WGPUPowerPreference_Undefined, 0, WGPUBackendType_Undefined},
        {WGPUPowerPreference_HighPerformance, 0, WGPUBackendType_Undefined},
        {WGPUPowerPreference_LowPower, 0, WGPUBackendType_Undefined},
        {WGPUPowerPreference_Undefined, 1, WGPUBackendType_Undefined},
        {WGPUPowerPreference_Undefined, 0, WGPUBackendType_Vulkan},
        {WGPUPowerPreference_Undefined, 0, WGPUBackendType_Null},
    };
    set->n = 0;
    for (size_t i = 0; i < sizeof asks / sizeof asks[0]; i++) {
        WGPURequestAdapterOptions o;
        memset(&o, 0, sizeof o);
        o.featureLevel         = WGPUFeatureLevel_Core;
        o.powerPreference      = asks[i].pref;
        o.forceFallbackAdapter = asks[i].fallback;
        o.backendType          = asks[i].backend;
        struct adapter_req *r = wgf__req_new(sizeof *r);
        if (!r) return wgf_fail(err, WGF_ERR_NOMEM, "out of host memory asking for an adapter");
        atomic_init(&r->done, false);
        WGPURequestAdapterCallbackInfo cb = {NULL, WGPUCallbackMode_AllowProcessEvents, on_adapter, r, NULL};
        p->InstanceRequestAdapter(inst, &o, cb);
        enum wgf_status s = wgf__wait_instance(inst, p, &r->done, timeout_ns, "an adapter (requestAdapter)", err);
        WGPUAdapter     a = atomic_load(&r->done) ? r->adapter : NULL;
        wgf__req_end(pk, r, atomic_load(&r->done));
        if (s != WGF_OK) return s;
        if (!a) continue;
        struct wgf_adapter_desc d;
        wgf__describe_adapter(p, a, set->n, &d);
        bool dup = false;
        for (int k = 0; k < set->n && !dup; k++) dup = same_adapter(&set->d[k], &d);
        if (dup || set->n == WGF_MAX_ADAPTERS) {
            p->AdapterRelease(a);
            continue;
        }
        set->h[set->n] = a;
        set->d[set->n] = d;
        set->n++;
    }
    return WGF_OK;
}

static void release_set(const struct wgf__procs *p, struct adapter_set *set, WGPUAdapter keep)
{
    for (int i = 0; i < set->n; i++)
        if (set->h[i] && set->h[i] != keep) p->AdapterRelease(set->h[i]);
    set->n = 0;
}

static int type_rank(const char *t)
{
    return !strcmp(t, "discrete") ? 0 : !strcmp(t, "integrated") ? 1 : !strcmp(t, "cpu") ? 2 : 3;
}

static bool is_null(const struct wgf_adapter_desc *d) { return !strcmp(d->backend, "null"); }

static void list_names(const struct adapter_set *set, char *buf, size_t cap)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < set->n && off < cap; i++)
        off += (size_t)snprintf(buf + off, cap - off, "%s%d: %s [%s, %s]", i ? "; " : "", i, set->d[i].name,
                                set->d[i].backend, set->d[i].type);
    if (set->n == 0) snprintf(buf, cap, "none");
}

static const char *null_hint =
    "install a Vulkan driver (a CPU one works: Mesa lavapipe >= 24 - on Debian 12 `apt-get install -t "
    "bookworm-backports mesa-vulkan-drivers`, which `make setup` does) or point --webgpu-lib at another WebGPU "
    "implementation";

/* Pick per opt->adapter; -1 with a message when nothing matches or only Null remains. */
static int choose_adapter(const struct adapter_set *set, const struct wgf_gpu_options *opt, struct wgf_err *err)
{
    char names[1024];
    list_names(set, names, sizeof names);
    const char *want = opt->adapter && *opt->adapter ? opt->adapter : NULL;
    int pick = -1;
    if (!want) {
        for (int i = 0; i < set->n; i++) {
            if (is_null(&set->d[i])) continue;
            if (pick < 0 || type_rank(set->d[i].type) < type_rank(set->d[pick].type)) pick = i;
        }
        if (pick < 0) {
            if (set->n > 0 && opt->allow_null) return 0;
            wgf_fail(err, WGF_ERR_NO_ADAPTER,
                     "no usable WebGPU adapter: %s (found: %s); %s",
                     set->n ? "only Dawn's Null backend is available, which runs no GPU work"
                            : "the implementation offered none",
                     names, null_hint);
            return -1;
        }
        return pick;
    }
    char *end;
    long idx = strtol(want, &end, 10);
    if (*want && !*end) {
        if (idx < 0 || idx >= set->n) {
            wgf_fail(err, WGF_ERR_NO_ADAPTER, "no WebGPU adapter with index %s (available: %s)", want, names);
            return -1;
        }
        pick = (int)idx;
    } else {
        for (int i = 0; i < set->n && pick < 0; i++)
            if (!strcasecmp(want, set->d[i].type) || !strcasecmp(want, set->d[i].backend)) pick = i;
        if (pick < 0 && !strcasecmp(want, "gpu"))
            for (int i = 0; i < set->n && pick < 0; i++)
                if (type_rank(set->d[i].type) <= 1) pick = i;
        for (int i = 0; i < set->n && pick < 0; i++)
            if (strcasestr(set->d[i].name, want)) pick = i;
        if (pick < 0) {
            wgf_fail(err, WGF_ERR_NO_ADAPTER, "no WebGPU adapter matches --adapter '%s' (available: %s)", want, names);
            return -1;
        }
    }
    if (is_null(&set->d[pick]) && !opt->allow_null) {
        wgf_fail(err, WGF_ERR_NO_ADAPTER,
                 "no usable WebGPU adapter: '%s' is Dawn's Null backend, which runs no GPU work; %s",
                 set->d[pick].name, null_hint);
        return -1;
    }
    return pick;
}

/* An instance with timed WaitAny where the implementation has it (*timed), else a plain one. */
static WGPUInstance make_instance(const struct wgf__procs *p, bool *timed)
{
    WGPUInstanceDescriptor d;
    memset(&d, 0, sizeof d);
    WGPUInstance inst = NULL;
    if (p->InstanceWaitAny) {
        d.capabilities.timedWaitAnyEnable   = 1;
        d.capabilities.timedWaitAnyMaxCount = 1;
        inst                                = p->CreateInstance(&d);
        memset(&d, 0, sizeof d);
    }
    if (timed) *timed = inst != NULL;
    return inst ? inst : p->CreateInstance(&d);
}

/* Dawn probes display backends and complains when XDG_RUNTIME_DIR is unset; give it a
 * private directory so users don't see that noise. */
static void quiet_dawn(void)
{
    wgf_sanitize_pin_drivers(); /* sanitizer builds only; see util/sanitize_pin.c */
    const char *x = getenv("XDG_RUNTIME_DIR");
    if (x && *x) return;
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/wgfuse-xdg-%d", (int)getuid());
    mkdir(dir, 0700);
    setenv("XDG_RUNTIME_DIR", dir, 0);
}

enum wgf_status wgf_gpu_list_adapters(const struct wgf_gpu_options *opt, struct wgf_adapter_desc *out, int cap,
                                      int *n_out, struct wgf_err *err)
{
    struct wgf__procs p;
    void *lib = NULL;
    char path[512];
    *n_out = 0;
    quiet_dawn();
    enum wgf_status s = wgf__load_library(opt ? opt->lib_path : NULL, &lib, &p, path, sizeof path, err);
    if (s != WGF_OK) return s;
    WGPUInstance inst = make_instance(&p, NULL);
    if (!inst) return wgf_fail(err, WGF_ERR_LIB, "%s: wgpuCreateInstance failed", path);
    uint64_t timeout = (uint64_t)(opt && opt->timeout_ms ? opt->timeout_ms : 30000) * 1000000ull;
    struct adapter_set  set;
    struct wgf__parking parked = {0};
    s = collect_adapters(inst, &p, timeout, &set, &parked, err);
    if (s == WGF_OK) {
        for (int i = 0; i < set.n && i < cap; i++) out[i] = set.d[i];
        *n_out = set.n < cap ? set.n : cap;
    }
    release_set(&p, &set, NULL);
    p.InstanceRelease(inst);
    wgf__parking_free(&parked);
    wgf__unload_library(lib);
    return s;
}

/* ---- context ------------------------------------------------------------------------------- */

enum wgf_status wgf_ctx_create(const struct wgf_gpu_options *opt_in, wgf_ctx **out, struct wgf_err *err)
{
    struct wgf_gpu_options opt = opt_in ? *opt_in : wgf_gpu_options_default();
    *out = NULL;
    quiet_dawn();
    wgf_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return wgf_fail(err, WGF_ERR_NOMEM, "out of memory creating the GPU context");
    atomic_init(&ctx->lost, false);
    atomic_init(&ctx->pending_error, false);
    ctx->timeout_ns = (uint64_t)(opt.timeout_ms ? opt.timeout_ms : 30000) * 1000000ull;
    ctx->fault      = opt.fault;

    enum wgf_status s = wgf__load_library(opt.lib_path, &ctx->lib, &ctx->p, ctx->lib_path, sizeof ctx->lib_path, err);
    if (s != WGF_OK) goto fail;
    ctx->instance = make_instance(&ctx->p, &ctx->timed_wait);
    if (!ctx->instance) {
        s = wgf_fail(err, WGF_ERR_LIB, "%s: wgpuCreateInstance failed", ctx->lib_path);
        goto fail;
    }
    struct adapter_set set;
    s = collect_adapters(ctx->instance, &ctx->p, ctx->timeout_ns, &set, &ctx->parked, err);
    if (s != WGF_OK) goto fail;
    int pick = choose_adapter(&set, &opt, err);
    if (pick < 0) {
        release_set(&ctx->p, &set, NULL);
        s = err ? err->status : WGF_ERR_NO_ADAPTER;
        goto fail;
    }
    ctx->adapter = set.h[pick];
    ctx->desc    = set.d[pick];
    /* a CPU adapter runs a model's step 100-1000x slower than a GPU: its waits get 300 s
     * unless the caller set one (a hang is still reported, only later) */
    if (!opt.timeout_ms && !strcmp(ctx->desc.type, "cpu")) ctx->timeout_ns = 300000ull * 1000000ull;
    ctx->block_waits = ctx->timed_wait && !strcmp(ctx->desc.type, "cpu"); /* wgf__wait_future */
    release_set(&ctx->p, &set, ctx->adapter);

    /* the features compute wants, when present, and the adapter's full limits */
    WGPUFeatureName feats[3];
    size_t nf = 0;
    if (ctx->desc.has_f16) feats[nf++] = WGPUFeatureName_ShaderF16;
    if (ctx->desc.has_subgroups) feats[nf++] = WGPUFeatureName_Subgroups;
    if (ctx->desc.has_timestamp) feats[nf++] = WGPUFeatureName_TimestampQuery;
    WGPULimits limits;
    memset(&limits, 0, sizeof limits);
    ctx->p.AdapterGetLimits(ctx->adapter, &limits);
    limits.nextInChain = NULL;
    if (ctx->fault.fail_request_device) limits.maxBufferSize += 1; /* a real refusal, not a shim */

    WGPUDeviceDescriptor dd;
    memset(&dd, 0, sizeof dd);
    /* Dawn rounds timestamps to 2^16 ns by default (a browser's timing-attack defence); a
     * benchmark needs the real values. Only Dawn knows this chained struct: we recognise Dawn
     * by its ForceLoss extension. */
    static const char *const no_quantize[] = {"timestamp_quantization"};
    /* Unless asked to keep them, Dawn's bounds clamps go too (disable_robustness, as native
     * Dawn users with their own shaders do: Skia Graphite in Chrome, ONNX Runtime's WebGPU
     * provider): on the H200 the clamps cost Phi-3-mini Q4_K_M 3.5% of its decode speed
     * (bench/RESULTS.md, "Tenth cut"). Every wgfuse kernel's indices derive from shapes, the
     * st state the host validated and ids it checked (docs/runtime.md). */
    /* With backend_labels, Dawn gives each backend object (a VkPipeline, a VkBuffer) the label
     * wgfuse gave it, so driver-level tools see kernel roles: bench/vkstats's layer reads the
     * compiler's registers per pipeline by label (docs/runtime.md, "Driver statistics per
     * pipeline"). */
    const char *on[2];
    size_t      n_on = 0;
    if (!opt.robust_shaders) on[n_on++] = "disable_robustness";
    if (opt.backend_labels) on[n_on++] = "use_user_defined_labels_in_backend";
    WGPUDawnTogglesDescriptor toggles;
    memset(&toggles, 0, sizeof toggles);
    toggles.chain.sType         = WGPUSType_DawnTogglesDescriptor;
    toggles.disabledToggleCount = 1;
    toggles.disabledToggles     = no_quantize;
    toggles.enabledToggleCount  = n_on;
    toggles.enabledToggles      = on;
    if (ctx->p.DeviceForceLoss) dd.nextInChain = &toggles.chain;
    ctx->robust = opt.robust_shaders || !ctx->p.DeviceForceLoss;
    dd.label                = wgf__sv("wgfuse device");
    dd.requiredFeatureCount = nf;
    dd.requiredFeatures     = feats;
    dd.requiredLimits       = &limits;
    dd.defaultQueue.label   = wgf__sv("wgfuse queue");
    dd.deviceLostCallbackInfo =
        (WGPUDeviceLostCallbackInfo){NULL, WGPUCallbackMode_AllowProcessEvents, on_device_lost, ctx, NULL};
    dd.uncapturedErrorCallbackInfo = (WGPUUncapturedErrorCallbackInfo){NULL, on_uncaptured_error, ctx, NULL};
    struct device_req *dr = wgf__req_new(sizeof *dr);
    if (!dr) {
        s = wgf_fail(err, WGF_ERR_NOMEM, "out of host memory asking for a device");
        goto fail;
    }
    atomic_init(&dr->done, false);
    WGPURequestDeviceCallbackInfo dcb = {NULL, WGPUCallbackMode_AllowProcessEvents, on_device, dr, NULL};
    ctx->p.AdapterRequestDevice(ctx->adapter, &dd, dcb);
    s = wgf__wait_instance(ctx->instance, &ctx->p, &dr->done, ctx->timeout_ns, "the device (requestDevice)", err);
    if (s != WGF_OK) {
        wgf__req_end(&ctx->parked, dr, atomic_load(&dr->done));
        goto fail;
    }
    ctx->device = dr->device;
    if (!ctx->device) s = wgf_fail(err, WGF_ERR_NO_ADAPTER, "requestDevice on '%s' failed: %s", ctx->desc.name, dr->msg);
    wgf__req_end(&ctx->parked, dr, true);
    if (s != WGF_OK) goto fail;
    ctx->queue  = ctx->p.DeviceGetQueue(ctx->device);
    WGPULimits dl;
    memset(&dl, 0, sizeof dl);
    if (ctx->p.DeviceGetLimits(ctx->device, &dl) == WGPUStatus_Success) wgf__limits_from_wgpu(&dl, &ctx->limits);
    else ctx->limits = ctx->desc.limits;
    *out = ctx;
    return WGF_OK;
fail:
    wgf_ctx_free(ctx);
    return s;
}

void wgf_ctx_free(wgf_ctx *ctx)
{
    if (!ctx) return;
    for (int i = 0; i < ctx->n_pipes; i++) {
        wgf_pipeline *pp = ctx->pipes[i];
        WGF_RELEASE(ctx, BindGroupLayout, pp->layout);
        WGF_RELEASE(ctx, ComputePipeline, pp->h);
        free(pp->key);
        free(pp);
    }
    free(ctx->pipes);
    WGF_RELEASE(ctx, Buffer, ctx->staging);
    WGF_RELEASE(ctx, Buffer, ctx->fence);
    WGF_RELEASE(ctx, Queue, ctx->queue);
    if (ctx->device) {
        ctx->p.DeviceDestroy(ctx->device);
        WGF_RELEASE(ctx, Device, ctx->device);
    }
    WGF_RELEASE(ctx, Adapter, ctx->adapter);
    if (ctx->instance) {
        ctx->p.InstanceProcessEvents(ctx->instance); /* flush callbacks that point at ctx */
        WGF_RELEASE(ctx, Instance, ctx->instance);
    }
    wgf__parking_free(&ctx->parked); /* no callback can fire any more */
    wgf__unload_library(ctx->lib);
    free(ctx);
}

const char *wgf_ctx_last_error(const wgf_ctx *ctx) { return ctx ? ctx->err.msg : "no context"; }

enum wgf_status wgf_ctx_err(const wgf_ctx *ctx, struct wgf_err *err, enum wgf_status s, const char *fmt, ...)
{
    char    what[WGF_ERR_MSG_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return wgf_fail(err, s, "%s: %s", what, wgf_ctx_last_error(ctx));
}
enum wgf_status wgf_ctx_status(const wgf_ctx *ctx) { return ctx ? ctx->err.status : WGF_ERR_ARG; }
const struct wgf_adapter_desc *wgf_ctx_adapter(const wgf_ctx *ctx) { return &ctx->desc; }
const struct wgf_limits *wgf_ctx_limits(const wgf_ctx *ctx) { return &ctx->limits; }
bool wgf_ctx_lost(const wgf_ctx *ctx) { return atomic_load(&ctx->lost); }
const char *wgf_ctx_lib_path(const wgf_ctx *ctx) { return ctx->lib_path; }
bool wgf_ctx_robust_shaders(const wgf_ctx *ctx) { return ctx->robust; }

/* ---- error scopes -------------------------------------------------------------------------- */

struct scope_req {
    atomic_bool   done;
    WGPUErrorType type;
    char          msg[WGF_ERR_MSG_MAX - 128];
};
static void on_pop(WGPUPopErrorScopeStatus st, WGPUErrorType type, WGPUStringView msg, void *u1, void *u2)
{
    (void)u2;
    struct scope_req *r = u1;
    r->type = st == WGPUPopErrorScopeStatus_Success ? type : WGPUErrorType_Unknown;
    snprintf(r->msg, sizeof r->msg, "%.*s", (int)sv_len(msg), msg.data ? msg.data : "");
    atomic_store(&r->done, true);
}

void wgf__scope_push(wgf_ctx *ctx)
{
    ctx->p.DevicePushErrorScope(ctx->device, WGPUErrorFilter_Internal);
    ctx->p.DevicePushErrorScope(ctx->device, WGPUErrorFilter_OutOfMemory);
    ctx->p.DevicePushErrorScope(ctx->device, WGPUErrorFilter_Validation);
}

enum wgf_status wgf__scope_pop(wgf_ctx *ctx, enum wgf_status on_validation, const char *what)
{
    struct scope_req *r[3] = {NULL, NULL, NULL};
    enum wgf_status   result = WGF_OK;
    for (int i = 0; i < 3; i++) { /* validation, then OOM, then internal (reverse of push) */
        r[i] = wgf__req_new(sizeof *r[i]);
        if (!r[i]) { /* the scope stays pushed; report rather than pop blind */
            for (int k = 0; k < i; k++) wgf__req_end(&ctx->parked, r[k], atomic_load(&r[k]->done));
            return wgf__fail(ctx, WGF_ERR_NOMEM, "%s: out of host memory popping an error scope", what);
        }
        atomic_init(&r[i]->done, false);
        WGPUPopErrorScopeCallbackInfo cb = {NULL, WGPUCallbackMode_AllowProcessEvents, on_pop, r[i], NULL};
        ctx->p.DevicePopErrorScope(ctx->device, cb);
    }
    for (int i = 0; i < 3 && result == WGF_OK; i++)
        result = wgf__wait_instance(ctx->instance, &ctx->p, &r[i]->done, ctx->timeout_ns, what, &ctx->err);
    if (result == WGF_OK && atomic_load(&ctx->lost))
        result = wgf__fail(ctx, WGF_ERR_DEVICE_LOST, "%s: device lost: %s", what, ctx->lost_msg);
    for (int i = 0; i < 3 && result == WGF_OK; i++) {
        if (r[i]->type == WGPUErrorType_NoError) continue;
        enum wgf_status s = r[i]->type == WGPUErrorType_OutOfMemory ? WGF_ERR_GPU_OOM
                            : r[i]->type == WGPUErrorType_Validation ? on_validation
                                                                     : WGF_ERR_GPU;
        result = wgf__fail(ctx, s, "%s: %s%s", what,
                           r[i]->type == WGPUErrorType_OutOfMemory ? "out of GPU memory: " : "", r[i]->msg);
    }
    for (int i = 0; i < 3; i++) wgf__req_end(&ctx->parked, r[i], atomic_load(&r[i]->done));
    return result;
}

/* ---- queue ----------------------------------------------------------------------------------- */

struct fence_req {
    atomic_bool        done;
    WGPUMapAsyncStatus status;
};
static void on_fence(WGPUMapAsyncStatus st, WGPUStringView msg, void *u1, void *u2)
{
    (void)msg;
    (void)u2;
    struct fence_req *r = u1;
    r->status = st;
    atomic_store(&r->done, true);
}

/* Wait for all submitted work by clearing a 4-byte MapRead buffer in a new submit and
 * mapping it: the map resolves only after that submit, and the queue runs in order.
 * (onSubmittedWorkDone would do, but its callback signature differs between header eras:
 * the map callback's does not.) */
enum wgf_status wgf__queue_idle(wgf_ctx *ctx, const char *what)
{
    enum wgf_status s = wgf__check(ctx);
    if (s != WGF_OK) return s;
    if (!ctx->fence) {
        WGPUBufferDescriptor d;
        memset(&d, 0, sizeof d);
        d.label = wgf__sv("queue fence");
        d.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
        d.size  = 4;
        ctx->fence = ctx->p.DeviceCreateBuffer(ctx->device, &d);
    }
    WGPUCommandEncoder enc = ctx->p.DeviceCreateCommandEncoder(ctx->device, NULL);
    ctx->p.CommandEncoderClearBuffer(enc, ctx->fence, 0, 4);
    WGPUCommandBuffer cb = ctx->p.CommandEncoderFinish(enc, NULL);
    ctx->p.QueueSubmit(ctx->queue, 1, &cb);
    WGF_RELEASE(ctx, CommandBuffer, cb);
    WGF_RELEASE(ctx, CommandEncoder, enc);
    struct fence_req *r = wgf__req_new(sizeof *r);
    if (!r) return wgf__fail(ctx, WGF_ERR_NOMEM, "%s: out of host memory", what);
    atomic_init(&r->done, false);
    WGPUBufferMapCallbackInfo mcb = {NULL, WGPUCallbackMode_AllowProcessEvents, on_fence, r, NULL};
    WGPUFuture f = ctx->p.BufferMapAsync(ctx->fence, WGPUMapMode_Read, 0, 4, mcb);
    /* wait for the map itself first (not wgf__wait, which may return early on a captured
     * error and leave the fence mapped: every later submit would then fail) */
    s = wgf__wait_future(ctx, f, &r->done, what);
    if (s != WGF_OK) {
        /* the map is still pending: drop this fence, the next wait makes a new one */
        wgf__req_end(&ctx->parked, r, atomic_load(&r->done));
        WGF_RELEASE(ctx, Buffer, ctx->fence);
        return s;
    }
    WGPUMapAsyncStatus st = r->status;
    wgf__req_end(&ctx->parked, r, true);
    if (st == WGPUMapAsyncStatus_Success) ctx->p.BufferUnmap(ctx->fence);
    s = wgf__check(ctx);
    if (s != WGF_OK) return s;
    if (st != WGPUMapAsyncStatus_Success)
        return wgf__fail(ctx, WGF_ERR_GPU, "%s: queue fence map failed (status %d)", what, (int)st);
    return WGF_OK;
}

enum wgf_status wgf_ctx_wait(wgf_ctx *ctx) { return wgf__queue_idle(ctx, "submitted GPU work to finish"); }

bool wgf_ctx_waits_block(const wgf_ctx *ctx) { return ctx->block_waits; }

/* ---- Dawn fault hooks ------------------------------------------------------------------------ */

enum wgf_status wgf_ctx_force_loss(wgf_ctx *ctx, const char *why)
{
    if (!ctx->p.DeviceForceLoss)
        return wgf__fail(ctx, WGF_ERR_UNSUPPORTED, "%s has no wgpuDeviceForceLoss", ctx->lib_path);
    ctx->p.DeviceForceLoss(ctx->device, WGPUDeviceLostReason_Unknown, wgf__sv(why ? why : "forced loss"));
    for (int i = 0; i < 8 && !atomic_load(&ctx->lost); i++) ctx->p.InstanceProcessEvents(ctx->instance);
    return WGF_OK;
}

enum wgf_status wgf_ctx_inject_validation_error(wgf_ctx *ctx, const char *msg)
{
    if (!ctx->p.DeviceInjectError)
        return wgf__fail(ctx, WGF_ERR_UNSUPPORTED, "%s has no wgpuDeviceInjectError", ctx->lib_path);
    ctx->p.DeviceInjectError(ctx->device, WGPUErrorType_Validation, wgf__sv(msg));
    return WGF_OK;
}
