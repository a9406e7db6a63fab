/* wgfuse runtime — the public GPU API.
 *
 * A small layer over the standard WebGPU C API (webgpu.h). Only src/gpu/ touches
 * webgpu.h; everything else (bench, sim, llm) uses these opaque handles:
 *
 *   wgf_ctx        instance + adapter + device + queue, the loaded implementation's
 *                  function table, the error slot, the pipeline cache
 *   wgf_buffer     a labelled GPU buffer (storage, uniform or both)
 *   wgf_pipeline   a compute pipeline made from WGSL (+ a const prelude and override
 *                  constants); cached per context by label and code, owned by the context
 *   wgf_bind_group the buffers bound to a pipeline's group 0, binding i = entry i
 *   wgf_recorder   many dispatches/copies into one command encoder (and, by default, one
 *                  compute pass) and one submit
 *   wgf_timer      GPU timestamps around compute passes (timestamp-query), optional
 *
 * Ownership: *_create returns an owned object freed by the matching *_free (free(NULL) is a
 * no-op). Pipelines are owned by the context. Borrowed pointers must outlive the call.
 *
 * Errors: every call returns enum wgf_status; the one-line message is on the context,
 * wgf_ctx_last_error(ctx). Validation errors Dawn reports asynchronously are captured and
 * returned by the next call that waits (submit+wait, read, finish). After device loss every
 * call fails fast with WGF_ERR_DEVICE_LOST. */
#ifndef WGFUSE_GPU_H
#define WGFUSE_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wgfuse/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wgf_ctx        wgf_ctx;
typedef struct wgf_buffer     wgf_buffer;
typedef struct wgf_pipeline   wgf_pipeline;
typedef struct wgf_bind_group wgf_bind_group;
typedef struct wgf_recorder   wgf_recorder;
typedef struct wgf_timer      wgf_timer;

/* ---- fault injection (tests): fail the Nth call of a kind, counting from 1; 0 = never -- */
struct wgf_fault_plan {
    uint32_t fail_buffer_create; /* Nth wgf_buffer_create reports GPU out-of-memory        */
    uint32_t fail_shader;        /* Nth shader-module creation reports a compile failure   */
    uint32_t fail_pipeline;      /* Nth pipeline creation fails                            */
    uint32_t fail_map;           /* Nth buffer map (read-back) fails                       */
    bool     fail_request_device; /* requestDevice asks for maxBufferSize one above the
                                     adapter's, so the implementation itself refuses it    */
};

struct wgf_gpu_options {
    const char *lib_path;   /* webgpu.h implementation (.so); NULL: $WGFUSE_WEBGPU_LIB, then
                               the built-in default (third_party/dawn/libwebgpu_wrapper.so) */
    const char *adapter;    /* NULL/"": the first usable adapter (discrete > integrated > cpu).
                               Else an index ("1"), a type ("cpu", "discrete", "integrated"),
                               or a case-insensitive substring of the adapter's name        */
    bool        allow_null; /* accept Dawn's Null backend (only for tests of the refusal)   */
    uint32_t    timeout_ms; /* every wait's timeout; 0 = 30000                              */
    struct wgf_fault_plan fault;
};
struct wgf_gpu_options wgf_gpu_options_default(void);

/* The limits that matter for compute. */
struct wgf_limits {
    uint64_t max_buffer_size;
    uint64_t max_storage_buffer_binding_size;
    uint64_t max_uniform_buffer_binding_size;
    uint32_t max_storage_buffers_per_shader_stage;
    uint32_t max_uniform_buffers_per_shader_stage;
    uint32_t max_bind_groups;
    uint32_t max_bindings_per_bind_group;
    uint32_t min_storage_buffer_offset_alignment;
    uint32_t min_uniform_buffer_offset_alignment;
    uint32_t max_compute_workgroup_storage_size;
    uint32_t max_compute_invocations_per_workgroup;
    uint32_t max_compute_workgroup_size_x, max_compute_workgroup_size_y, max_compute_workgroup_size_z;
    uint32_t max_compute_workgroups_per_dimension;
};

#define WGF_MAX_FEATURES 64
struct wgf_adapter_desc {
    int      index;           /* position in wgf_gpu_list_adapters() order               */
    char     name[256];       /* e.g. "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)"  */
    char     vendor[128];
    char     architecture[128];
    char     driver[256];     /* the implementation's description (driver version)       */
    char     backend[16];     /* "vulkan", "metal", "d3d12", "null", ...                 */
    char     type[16];        /* "discrete", "integrated", "cpu", "unknown"              */
    uint32_t vendor_id, device_id;
    uint32_t subgroup_min_size, subgroup_max_size;
    bool     has_f16, has_subgroups, has_timestamp;
    int      n_features;
    uint32_t features[WGF_MAX_FEATURES]; /* raw WGPUFeatureName values                   */
    struct wgf_limits limits;
};
/* Name of a WGPUFeatureName value ("shader-f16", "timestamp-query", ...); unknown values
 * (Dawn's own, 0x0005xxxx) are written as hex into buf. Returns a static string or buf. */
const char *wgf_feature_name(uint32_t feature, char buf[16]);

/* List every adapter the implementation offers (each backend/power preference/fallback
 * combination, deduplicated), Null backend included so the caller can show it. */
enum wgf_status wgf_gpu_list_adapters(const struct wgf_gpu_options *opt, struct wgf_adapter_desc *out,
                                      int cap, int *n_out, struct wgf_err *err);

/* The implementation library a context would load for `requested` (NULL: the default),
 * written into buf; returns buf. */
const char *wgf_gpu_lib_path(const char *requested, char *buf, size_t cap);

/* ---- context ---------------------------------------------------------------------------- */
/* Load the implementation, pick the adapter (options->adapter), create the device with the
 * compute features present (shader-f16, subgroups, timestamp-query) and the adapter's full
 * limits. Refuses the Null backend unless allow_null. */
enum wgf_status wgf_ctx_create(const struct wgf_gpu_options *opt, wgf_ctx **out, struct wgf_err *err);
void            wgf_ctx_free(wgf_ctx *ctx);
const char     *wgf_ctx_last_error(const wgf_ctx *ctx);
/* The error bridge: a runtime call on ctx failed with status s (its message is on the
 * context); record "<what>: <context's message>" in *err (may be NULL) and return s. `what`
 * is printf-style and names the caller's object (a plan step, a sim pass, a bench case). */
enum wgf_status wgf_ctx_err(const wgf_ctx *ctx, struct wgf_err *err, enum wgf_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
enum wgf_status wgf_ctx_status(const wgf_ctx *ctx); /* status of the last failure          */
const struct wgf_adapter_desc *wgf_ctx_adapter(const wgf_ctx *ctx);
const struct wgf_limits       *wgf_ctx_limits(const wgf_ctx *ctx);
bool            wgf_ctx_lost(const wgf_ctx *ctx);
const char     *wgf_ctx_lib_path(const wgf_ctx *ctx);
/* Wait until all submitted work is done (and surface any captured error). */
enum wgf_status wgf_ctx_wait(wgf_ctx *ctx);
/* Dawn-only hooks for fault tests; WGF_ERR_UNSUPPORTED when the library lacks them. */
enum wgf_status wgf_ctx_force_loss(wgf_ctx *ctx, const char *why);
enum wgf_status wgf_ctx_inject_validation_error(wgf_ctx *ctx, const char *msg);

/* ---- buffers ---------------------------------------------------------------------------- */
enum wgf_buffer_usage {
    WGF_BUF_STORAGE  = 1u << 0, /* read/write storage binding (+ copy src/dst)              */
    WGF_BUF_UNIFORM  = 1u << 1, /* uniform binding (+ copy dst)                             */
    WGF_BUF_INDIRECT = 1u << 2, /* dispatch-indirect arguments                              */
};
/* Create a zero-initialised buffer of `size` bytes (rounded up to 4 internally; the logical
 * size is kept). `label` is copied; use the owning struct field, e.g. "kv_cache_k[3]". */
enum wgf_status wgf_buffer_create(wgf_ctx *ctx, const char *label, uint64_t size, unsigned usage,
                                  wgf_buffer **out);
void            wgf_buffer_free(wgf_buffer *buf);
uint64_t        wgf_buffer_size(const wgf_buffer *buf);
const char     *wgf_buffer_label(const wgf_buffer *buf);
/* Upload n bytes at offset (queued; ordered before later submits). Offset must be a multiple
 * of 4; n may be any size when offset + n reaches the buffer's end, else a multiple of 4. */
enum wgf_status wgf_buffer_write(wgf_ctx *ctx, wgf_buffer *buf, uint64_t offset, const void *src, size_t n);
/* Download n bytes from offset: waits for all submitted work, then copies. Same alignment
 * rule as write. */
enum wgf_status wgf_buffer_read(wgf_ctx *ctx, wgf_buffer *buf, uint64_t offset, void *dst, size_t n);
/* Fill with a repeated 32-bit pattern (e.g. a poison value before a kernel runs). */
enum wgf_status wgf_buffer_fill_u32(wgf_ctx *ctx, wgf_buffer *buf, uint32_t pattern);

/* ---- kernels and pipelines -------------------------------------------------------------- */
/* Embedded WGSL by role name, or NULL: the file stem of src/kernels/<part>/<role>.wgsl, with
 * the fragments it names (//#include) appended. Returns static text. Inside the library
 * kernels are taken by id instead (WGF_KERNEL_<ROLE>, generated at build time), so a
 * misspelt role there fails to compile. */
const char *wgf_kernel_source(const char *role);
int         wgf_kernel_count(void);
const char *wgf_kernel_name(int i);

struct wgf_constant {
    const char *name;  /* WGSL `override` name */
    double      value;
};
struct wgf_pipeline_desc {
    const char *label;      /* role + variant, e.g. "rmsnorm_fused_f32"; keys the timing too */
    const char *wgsl;       /* shader source (e.g. wgf_kernel_source("rmsnorm_fused"))      */
    const char *prelude;    /* optional text prepended (const declarations), or NULL         */
    const char *entry;      /* entry point; NULL = "main"                                    */
    const struct wgf_constant *constants;
    int         n_constants;
};
/* Get or build a pipeline (layout: auto). Cached by (label, prelude, source, entry,
 * constants): the same request returns the same pipeline; the same code under another label
 * is another pipeline, so errors and timings always carry the caller's label. Owned by the
 * context. A WGSL error returns
 * WGF_ERR_SHADER with the compiler's messages (line:column) in the context's error. */
enum wgf_status wgf_pipeline_get(wgf_ctx *ctx, const struct wgf_pipeline_desc *desc, wgf_pipeline **out);
/* Shorthand: embedded role, entry "main", no prelude, no constants. */
enum wgf_status wgf_pipeline_for_kernel(wgf_ctx *ctx, const char *role, wgf_pipeline **out);
const char     *wgf_pipeline_label(const wgf_pipeline *p);
int             wgf_ctx_pipeline_cache_size(const wgf_ctx *ctx);

/* ---- bind groups ------------------------------------------------------------------------ */
struct wgf_binding {
    wgf_buffer *buf;
    uint64_t    offset; /* bytes; multiple of the device's min offset alignment            */
    uint64_t    size;   /* bytes; 0 = from offset to the end                               */
};
/* Bind bufs[i] at @group(0) @binding(i) of the pipeline. Checks each binding against the
 * device's binding-size limit (WGF_ERR_LIMIT naming the buffer) before calling WebGPU. */
enum wgf_status wgf_bind_group_create(wgf_ctx *ctx, wgf_pipeline *p, wgf_buffer *const *bufs, int n,
                                      wgf_bind_group **out);
enum wgf_status wgf_bind_group_create_ranges(wgf_ctx *ctx, wgf_pipeline *p, const struct wgf_binding *b,
                                             int n, wgf_bind_group **out);
void            wgf_bind_group_free(wgf_bind_group *bg);

/* ---- recording and submitting ----------------------------------------------------------- */
/* A recorder holds one command encoder. Dispatches go into the current compute pass (opened
 * on demand); wgf_recorder_end_pass() closes it so the next dispatch opens a new pass; a copy
 * closes the pass too. wgf_recorder_submit() finishes and submits everything as one command
 * buffer and frees the recorder (also on failure). With a timer, every pass records its
 * begin/end timestamps into the timer's next slot. */
enum wgf_status wgf_recorder_begin(wgf_ctx *ctx, const char *label, wgf_timer *timer, wgf_recorder **out);
enum wgf_status wgf_recorder_dispatch(wgf_recorder *r, wgf_pipeline *p, wgf_bind_group *bg, uint32_t x,
                                      uint32_t y, uint32_t z);
enum wgf_status wgf_recorder_dispatch_indirect(wgf_recorder *r, wgf_pipeline *p, wgf_bind_group *bg,
                                               wgf_buffer *args, uint64_t offset);
enum wgf_status wgf_recorder_end_pass(wgf_recorder *r);
enum wgf_status wgf_recorder_copy(wgf_recorder *r, wgf_buffer *src, uint64_t src_off, wgf_buffer *dst,
                                  uint64_t dst_off, uint64_t n);
enum wgf_status wgf_recorder_submit(wgf_recorder *r);
/* Drop a recorder without submitting. */
void            wgf_recorder_abandon(wgf_recorder *r);
/* Convenience: one dispatch in its own encoder + submit (no wait). */
enum wgf_status wgf_dispatch_once(wgf_ctx *ctx, wgf_pipeline *p, wgf_bind_group *bg, uint32_t x, uint32_t y,
                                  uint32_t z);

/* ---- timing ----------------------------------------------------------------------------- */
/* Monotonic host clock in nanoseconds. */
uint64_t wgf_now_ns(void);
/* GPU timestamps for up to max_passes compute passes. WGF_ERR_UNSUPPORTED when the device
 * lacks timestamp-query: callers fall back to wall-clock timing. */
enum wgf_status wgf_timer_create(wgf_ctx *ctx, const char *label, uint32_t max_passes, wgf_timer **out);
void            wgf_timer_free(wgf_timer *t);
/* Forget recorded passes (slots restart at 0). */
void            wgf_timer_reset(wgf_timer *t);
/* Read back the durations (ns) of the passes recorded since the last reset; *n = count.
 * Waits for submitted work. */
enum wgf_status wgf_timer_read(wgf_ctx *ctx, wgf_timer *t, double *pass_ns, uint32_t cap, uint32_t *n);

/* ---- self-check ------------------------------------------------------------------------- */
/* Run the embedded selfcheck_saxpy kernel on n seeded random values (y = a*x + y) and
 * compare with the same computation in C. *max_abs_err gets the largest difference;
 * WGF_ERR_INTERNAL when it exceeds 1e-6 relative (the GPU computed something else). */
enum wgf_status wgf_gpu_selfcheck(wgf_ctx *ctx, uint32_t n, uint64_t seed, double *max_abs_err);

#ifdef __cplusplus
}
#endif
#endif
