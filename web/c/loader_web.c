/* wgfuse runtime, wasm32 build — the WebGPU functions come from the page, not from dlopen().
 *
 * Replaces src/gpu/loader.c in the wasm build (web/CMakeLists.txt). Every wgpu* function that
 * src/gpu/wgpu_abi.h lists becomes a wasm import of module "wgpu" with the C ABI of wasm32
 * (pointers and size_t are i32, uint64_t is i64, a struct passed by value is a pointer to a
 * copy); web/wgfuse.js implements them over navigator.gpu, reading the descriptors from
 * linear memory with the layouts of wgpu_abi.h (checked against wgfw_abi_layout() below at
 * start-up). The optional Dawn extensions (ForceLoss, InjectError) are absent: NULL.
 *
 * Callbacks: the host calls the C function pointers through the wgfw_cb_* trampolines below,
 * always from inside wgpuInstanceProcessEvents (AllowProcessEvents semantics), which is the
 * one import that suspends the wasm stack (JSPI) until some WebGPU promise settles. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_internal.h"

#define WGFW_EXPORT(name) __attribute__((export_name(#name)))

#define WGF__IMPORT(name, ret, args) \
    __attribute__((import_module("wgpu"), import_name("wgpu" #name))) ret wgpu##name args;
WGF_WGPU_REQUIRED_PROCS(WGF__IMPORT)
#undef WGF__IMPORT

#define WGFW_LIB_NAME "navigator.gpu (the browser's WebGPU)"

const char *wgf__resolve_lib_path(const char *requested, char *buf, size_t cap)
{
    (void)requested;
    snprintf(buf, cap, "%s", WGFW_LIB_NAME);
    return buf;
}

const char *wgf_gpu_lib_path(const char *requested, char *buf, size_t cap)
{
    return wgf__resolve_lib_path(requested, buf, cap);
}

enum wgf_status wgf__load_library(const char *path, void **lib, struct wgf__procs *p, char *resolved, size_t cap,
                                  struct wgf_err *err)
{
    (void)err;
    wgf__resolve_lib_path(path, resolved, cap);
    memset(p, 0, sizeof *p);
#define WGF__BIND(name, ret, args) p->name = wgpu##name;
    WGF_WGPU_REQUIRED_PROCS(WGF__BIND)
#undef WGF__BIND
    *lib = NULL;
    return WGF_OK;
}

void wgf__unload_library(void *lib) { (void)lib; }

/* ---- trampolines: the host calls a C callback with the arguments it knows -------------------- */
static WGPUStringView sv_of(const char *s, size_t n)
{
    WGPUStringView v = {s, s ? n : 0};
    return v;
}

WGFW_EXPORT(wgfw_cb_adapter)
void wgfw_cb_adapter(WGPURequestAdapterCallback cb, int st, WGPUAdapter a, const char *msg, size_t n, void *u1, void *u2)
{
    cb((WGPURequestAdapterStatus)st, a, sv_of(msg, n), u1, u2);
}

WGFW_EXPORT(wgfw_cb_device)
void wgfw_cb_device(WGPURequestDeviceCallback cb, int st, WGPUDevice d, const char *msg, size_t n, void *u1, void *u2)
{
    cb((WGPURequestDeviceStatus)st, d, sv_of(msg, n), u1, u2);
}

WGFW_EXPORT(wgfw_cb_map)
void wgfw_cb_map(WGPUBufferMapCallback cb, int st, const char *msg, size_t n, void *u1, void *u2)
{
    cb((WGPUMapAsyncStatus)st, sv_of(msg, n), u1, u2);
}

WGFW_EXPORT(wgfw_cb_pop)
void wgfw_cb_pop(WGPUPopErrorScopeCallback cb, int st, int type, const char *msg, size_t n, void *u1, void *u2)
{
    cb((WGPUPopErrorScopeStatus)st, (WGPUErrorType)type, sv_of(msg, n), u1, u2);
}

WGFW_EXPORT(wgfw_cb_lost)
void wgfw_cb_lost(WGPUDeviceLostCallback cb, WGPUDevice d, int reason, const char *msg, size_t n, void *u1, void *u2)
{
    cb(&d, (WGPUDeviceLostReason)reason, sv_of(msg, n), u1, u2);
}

WGFW_EXPORT(wgfw_cb_uncaptured)
void wgfw_cb_uncaptured(WGPUUncapturedErrorCallback cb, WGPUDevice d, int type, const char *msg, size_t n, void *u1,
                        void *u2)
{
    cb(&d, (WGPUErrorType)type, sv_of(msg, n), u1, u2);
}

/* Compilation info: the host fills `n` messages (text in one buffer it owns) and calls cb. */
WGFW_EXPORT(wgfw_cb_compilation)
void wgfw_cb_compilation(WGPUCompilationInfoCallback cb, int st, WGPUCompilationMessage *msgs, size_t n, void *u1,
                         void *u2)
{
    WGPUCompilationInfo info = {NULL, n, msgs};
    cb((WGPUCompilationInfoRequestStatus)st, &info, u1, u2);
}

/* ---- the struct layouts the host reads and writes, for its start-up check ----------------- */
#define WGFW_LAYOUT(X)                                                                                       \
    X(WGPUAdapterInfo, subgroupMaxSize) X(WGPULimits, maxUniformBufferBindingSize)                           \
    X(WGPULimits, maxBufferSize) X(WGPULimits, maxComputeWorkgroupsPerDimension)                             \
    X(WGPUDeviceDescriptor, deviceLostCallbackInfo) X(WGPUDeviceDescriptor, uncapturedErrorCallbackInfo)     \
    X(WGPUBufferDescriptor, usage) X(WGPUBufferDescriptor, mappedAtCreation)                                 \
    X(WGPUComputePipelineDescriptor, compute) X(WGPUComputeState, constants) X(WGPUConstantEntry, value)     \
    X(WGPUBindGroupEntry, offset) X(WGPUBindGroupEntry, size) X(WGPUBindGroupDescriptor, entries)            \
    X(WGPUComputePassDescriptor, timestampWrites) X(WGPUQuerySetDescriptor, count)                           \
    X(WGPUCompilationMessage, lineNum) X(WGPUCompilationMessage, length) X(WGPUShaderSourceWGSL, code)       \
    X(WGPURequestAdapterOptions, backendType) X(WGPUPassTimestampWrites, endOfPassWriteIndex)
#define WGFW_COUNT(T, f) +1
#define WGFW_OFF(T, f) (uint32_t) offsetof(T, f),
/* "T.f=offset" pairs as text, and sizes, so the host can compare with its own table */
WGFW_EXPORT(wgfw_abi_layout)
const char *wgfw_abi_layout(void)
{
    static char buf[1536];
    static const uint32_t offs[] = {WGFW_LAYOUT(WGFW_OFF)};
#define WGFW_NAME(T, f) #T "." #f,
    static const char *const names[] = {WGFW_LAYOUT(WGFW_NAME)};
#undef WGFW_NAME
    size_t o = 0;
    for (size_t i = 0; i < sizeof offs / sizeof offs[0] && o < sizeof buf; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s=%u;", names[i], offs[i]);
    if (o < sizeof buf)
        snprintf(buf + o, sizeof buf - o, "sizeof.WGPULimits=%u;sizeof.WGPUCompilationMessage=%u;sizeof.WGPUBindGroupEntry=%u",
                 (unsigned)sizeof(WGPULimits), (unsigned)sizeof(WGPUCompilationMessage),
                 (unsigned)sizeof(WGPUBindGroupEntry));
    return buf;
}
