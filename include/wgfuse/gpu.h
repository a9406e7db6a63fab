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
 * call that touches the device (create, write, read, record a dispatch or copy, end a pass,
 * submit, wait, create a timer) fails at once with WGF_ERR_DEVICE_LOST; calls that only build
 * host-side descriptions (schedule steps, preludes) do not look. */
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
typedef struct wgf_schedule   wgf_schedule;

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
    uint32_t    timeout_ms; /* every wait's timeout; 0 = 30 s on a GPU, 300 s on a CPU adapter */
    bool        robust_shaders; /* keep WebGPU's robustness: Dawn clamps every index into a buffer or
                                   array in every shader. false (default): Dawn's disable_robustness
                                   toggle, for wgfuse's own kernels, whose indices come from shapes
                                   and state the host validated (docs/runtime.md, "Shader
                                   robustness"); other implementations always keep their clamps */
    bool        backend_labels; /* Dawn names each backend object (a VkPipeline, a VkBuffer) after its
                                   wgfuse label (its use_user_defined_labels_in_backend toggle), for
                                   driver-level tools: bench/vkstats (docs/runtime.md, "Driver
                                   statistics per pipeline"). Off by default: with it, LeakSanitizer's
                                   exit-time tracer crashes in a process using Dawn on lavapipe */
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
/* whether the shaders keep WebGPU's bounds clamps (wgf_gpu_options.robust_shaders) */
bool            wgf_ctx_robust_shaders(const wgf_ctx *ctx);
/* Wait until all submitted work is done (and surface any captured error). */
enum wgf_status wgf_ctx_wait(wgf_ctx *ctx);
/* true: waits block in wgpuInstanceWaitAny (a CPU adapter, whose device threads share the
 * host's cores); false: they poll, as on a GPU */
bool            wgf_ctx_waits_block(const wgf_ctx *ctx);
/* Dawn-only hooks for fault tests; WGF_ERR_UNSUPPORTED when the library lacks them. */
enum wgf_status wgf_ctx_force_loss(wgf_ctx *ctx, const char *why);
enum wgf_status wgf_ctx_inject_validation_error(wgf_ctx *ctx, const char *msg);

/* ---- buffers ---------------------------------------------------------------------------- */
enum wgf_buffer_usage {
    WGF_BUF_STORAGE  = 1u << 0, /* read/write storage binding (+ copy src/dst)              */
    WGF_BUF_UNIFORM  = 1u << 1, /* uniform binding (+ copy dst)                             */
    WGF_BUF_INDIRECT = 1u << 2, /* dispatch-indirect arguments                              */
    WGF_BUF_READBACK = 1u << 3, /* host read-back target (MapRead + copy dst; nothing else:
                                   a copy into it, then wgf_buffer_map_begin/_end)          */
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
/* Asynchronous read-back of a WGF_BUF_READBACK buffer, for results the host wants without
 * stalling the queue (tokens streamed while later steps run): after the submit that copies
 * into it, map_begin asks for the mapping and returns at once; map_end waits for it (the
 * context's timeout, device loss: an error naming the buffer), copies n bytes from offset 0
 * into dst and unmaps, so the buffer can be the target of the next copy. A buffer with a
 * map in flight must not be used by a submit. map_end without map_begin is WGF_ERR_ARG. */
enum wgf_status wgf_buffer_map_begin(wgf_ctx *ctx, wgf_buffer *buf);
enum wgf_status wgf_buffer_map_end(wgf_ctx *ctx, wgf_buffer *buf, void *dst, size_t n);
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

/* ---- const preludes: the model- or case-specific constants a kernel is compiled with ----
 * A kernel's numbers (shapes, workgroup layout, flags) come from one C function that renders
 * them as WGSL `const` declarations, each with the comment saying where it comes from; the
 * prelude also carries `enable` directives and shared fragments (src/kernels/common/lib_*).
 * Pass p.s as wgf_pipeline_desc.prelude. An allocation failure is remembered and reported by
 * wgf_prelude_status (the builders never fail individually). */
struct wgf_prelude {
    char  *s;
    size_t len, cap;
    bool   oom;
};
void            wgf_prelude_text(struct wgf_prelude *p, const char *text); /* verbatim        */
void            wgf_prelude_u32(struct wgf_prelude *p, const char *name, uint64_t v, const char *why);
void            wgf_prelude_f32(struct wgf_prelude *p, const char *name, float v, const char *why);
void            wgf_prelude_bool(struct wgf_prelude *p, const char *name, bool v, const char *why);
/* An embedded fragment by name (wgf_kernel_source); WGF_ERR_INTERNAL when it is missing. */
enum wgf_status wgf_prelude_fragment(struct wgf_prelude *p, const char *name);
/* Append `text` (a prelude with its fragments) as a second instance in the same module: every
 * name it declares at module scope gets `suffix` (fn f -> f_1, const N -> N_1, override,
 * struct, alias, var likewise), everywhere in text but after a '.' (members, swizzles); its
 * directives (enable ...;) are dropped, the module having them from the first instance. Names
 * text uses without declaring (the kernel's bindings and helpers) stay shared. */
void            wgf_prelude_instance(struct wgf_prelude *p, const char *text, const char *suffix);
enum wgf_status wgf_prelude_status(const struct wgf_prelude *p);
void            wgf_prelude_free(struct wgf_prelude *p);

/* ---- subgroups ------------------------------------------------------------------------------
 * The subgroup size the reductions of src/kernels/common/lib_reduce_sg may assume: S when the
 * adapter has `subgroups` and a probe kernel (run once per context) saw subgroups of exactly S
 * consecutive local indices in a 256-invocation workgroup (4 <= S <= 64); 0 otherwise (use
 * lib_reduce_wg). A failed probe is not an error: it answers 0. */
enum wgf_status wgf_ctx_subgroup_size(wgf_ctx *ctx, uint32_t *sgs);
/* The workgroups this device runs side by side at full rate (its multiprocessors / compute
 * units; a CPU adapter's threads), measured by timing grids of an arithmetic-bound kernel the
 * first time it is asked (a few ms; src/gpu/compute_units.c). 0 when it cannot be measured
 * (no timestamp queries, a failed step, inconsistent times): callers keep their default
 * layouts. A layout that uses it changes speed only, never results. */
uint32_t        wgf_ctx_compute_units(wgf_ctx *ctx);
/* The probe's search over any timing (tests drive it with synthetic times): time_ns(user, n)
 * is the time of a grid of n workgroups (<= 0: a failed measurement). Answers the largest n
 * whose time stays below 1.5x one workgroup's, found by doubling n and then halving the gap,
 * and looked at once more; 0 when a time fails, the count passes 4095, or the last look
 * disagrees. */
uint32_t        wgf_compute_units_search(double (*time_ns)(void *user, uint32_t n), void *user);

/* ---- the matvec family (src/kernels/common/gemv.wgsl and the LLM roles on its loop) -----
 * A row group of TPR invocations (a power of two, 8..256) owns RPG rows (1..4) of KC 16-byte
 * weight chunks; each invocation loads NIT = ceil(KC / TPR) chunks of each row before using
 * any, and each x chunk it reads serves the RPG rows; GPW = 256 / TPR groups per workgroup
 * (a caller may set more: WG = GPW * TPR invocations, a multiple of 32 up to 512, as the LLM
 * plans do to spread a one-wave grid evenly over the compute units).
 * The default picks the smallest TPR with NIT * RPG <= max_loads (8): enough loads in flight
 * per invocation without spilling registers. */
struct wgf_matvec_cfg {
    uint32_t tpr, gpw, nit, rpg;
};
/* tpr 0: the default; else that TPR (rounded to a power of two in 8..256). rpg 0 = 1. */
struct wgf_matvec_cfg wgf_matvec_cfg_pick(uint32_t kc, uint32_t rpg, uint32_t max_loads, uint32_t tpr);
/* The matvec prelude constants WG, TPR, GPW, RPG, NIT, SGS and the reduction fragment for sgs
 * (0: lib_reduce_wg), plus WF16/EPC and lib_wchunk. */
enum wgf_status wgf_matvec_prelude(struct wgf_prelude *p, struct wgf_matvec_cfg cfg, uint32_t sgs, bool wf16);

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

/* ---- step schedules: record once, replay every step ----------------------------------------
 * A schedule is the ordered list of a plan's steps (a dispatch over a fixed grid, a dispatch
 * whose grid the GPU wrote into an indirect-argument buffer, a dispatch whose grid the host
 * sets before each replay, a buffer copy), built once at init
 * with everything bound, then replayed into a recorder as often as needed (a decode step per
 * token): replay costs exactly the encoding calls, nothing is looked up or allocated.
 *
 * Every step carries a label (the key of its errors and of its GPU time; steps of one kernel
 * role share it, e.g. "attn_qkv_f16_sg") and its cost: the bytes it reads and writes in device
 * memory and its floating-point operations, as the plan counts them. The profile reads GB/s
 * and % of a token from these; a cost model can read them too.
 *
 * Ownership: the schedule owns the bind groups handed to it (freed with it, also when the add
 * fails); pipelines and buffers are borrowed and must outlive it. */
struct wgf_step_cost {
    uint64_t bytes_read;    /* device-memory bytes the step must read (weights, activations)  */
    uint64_t bytes_written; /* bytes it writes                                                 */
    uint64_t flops;         /* floating-point operations (a multiply-add counts 2)             */
};
enum wgf_step_kind { WGF_STEP_DISPATCH, WGF_STEP_DISPATCH_INDIRECT, WGF_STEP_COPY, WGF_STEP_DISPATCH_HOST };
#define WGF_STEP_LABEL_MAX 64
struct wgf_step_info {
    enum wgf_step_kind   kind;
    char                 label[WGF_STEP_LABEL_MAX]; /* timing key: the role and its variant */
    uint32_t             grid[3];                   /* WGF_STEP_DISPATCH                    */
    struct wgf_step_cost cost;
    uint32_t             wg_size; /* invocations per workgroup when the emitter says; 0: unknown */
    uint64_t             barriers; /* workgroup barriers each workgroup runs, when counted     */
    uint64_t             chain_flops; /* the longest dependent chain of FLOPs one invocation
                                         runs (a genome's episode), when counted; 0: none   */
};
enum wgf_status wgf_schedule_create(wgf_ctx *ctx, const char *label, wgf_schedule **out);
void            wgf_schedule_free(wgf_schedule *s);
/* Append a dispatch of p with bg over (x, y, z) workgroups; bg is owned from here on. */
enum wgf_status wgf_schedule_dispatch(wgf_schedule *s, const char *label, wgf_pipeline *p, wgf_bind_group *bg,
                                      uint32_t x, uint32_t y, uint32_t z, struct wgf_step_cost cost);
/* Append a dispatch whose grid is read at run time from args (3 u32 at offset), a buffer
 * made with WGF_BUF_INDIRECT; bg is owned from here on. For grids the GPU computes: Dawn
 * validates each indirect dispatch with an internal dispatch of its own (~0.45 ms of wait a
 * dispatch measured on an H100), so a grid the host knows belongs in a host-grid step. */
enum wgf_status wgf_schedule_dispatch_indirect(wgf_schedule *s, const char *label, wgf_pipeline *p,
                                               wgf_bind_group *bg, wgf_buffer *args, uint64_t offset,
                                               struct wgf_step_cost cost);
/* Append a dispatch whose grid is read from host memory, grid[0..2], each time the schedule is
 * replayed (the caller owns it and keeps it alive as long as the schedule): one batch size's
 * grid per replay without a GPU-side argument buffer. A direct dispatch to the driver, unlike
 * an indirect one, which Dawn validates with a dispatch of its own (on the H200 a 32-token
 * prefill chunk of ~270 indirect dispatches took 5x the time of the same chunk's direct ones,
 * bench/RESULTS.md). A grid above the device's limit fails the replay; a zero grid runs
 * nothing. bg is owned from here on. */
enum wgf_status wgf_schedule_dispatch_host(wgf_schedule *s, const char *label, wgf_pipeline *p, wgf_bind_group *bg,
                                           const uint32_t *grid, struct wgf_step_cost cost);
/* Append a copy of n bytes (multiples of 4). */
enum wgf_status wgf_schedule_copy(wgf_schedule *s, const char *label, wgf_buffer *src, uint64_t src_off,
                                  wgf_buffer *dst, uint64_t dst_off, uint64_t n);
uint32_t                    wgf_schedule_len(const wgf_schedule *s);
uint32_t                    wgf_schedule_dispatches(const wgf_schedule *s); /* every dispatch kind */
const struct wgf_step_info *wgf_schedule_step(const wgf_schedule *s, uint32_t i);
/* Sum of every step's cost. */
struct wgf_step_cost        wgf_schedule_cost(const wgf_schedule *s);

/* Which step each timed pass of a recorder holds (filled by a profiled replay). */
struct wgf_schedule_trace {
    const struct wgf_step_info **step; /* (cap) borrowed from the schedules               */
    uint32_t                     cap, n;
};
/* Replay every step into r, in order. trace NULL: dispatches share the recorder's current
 * pass (the fast path). trace non-NULL (profiling): every step gets its own pass, so a timer
 * attached to r times each one, and trace->step[k] names the step in the timer's slot k
 * (WGF_ERR_LIMIT when the timer or the trace runs out of slots). */
enum wgf_status wgf_schedule_record(const wgf_schedule *s, wgf_recorder *r, struct wgf_schedule_trace *trace);
/* Replay step i alone into r (into the current pass; a copy closes it): the advisor's probe
 * times chains of one kind of step. WGF_ERR_ARG when i is past the end. */
enum wgf_status wgf_schedule_record_step(const wgf_schedule *s, uint32_t i, wgf_recorder *r);

/* GPU time per label, summed over profiled replays (wgf_profile_add), for a table of
 * "where every microsecond of a token goes". Owned by the caller; _free releases rows. */
struct wgf_profile_row {
    char     label[WGF_STEP_LABEL_MAX];
    uint64_t dispatches; /* steps timed under this label                               */
    double   ns;         /* their GPU time                                             */
    uint64_t bytes;      /* bytes read + written, from the steps' costs                 */
    uint64_t flops;
};
struct wgf_profile {
    struct wgf_profile_row *rows; /* in order of first appearance                        */
    uint32_t                n, cap;
    double                  total_ns;
};
/* Add the times of the timer's passes (pass_ns[0..n), from wgf_timer_read) under the labels
 * the trace recorded for them. */
enum wgf_status wgf_profile_add(struct wgf_profile *p, const struct wgf_schedule_trace *trace, const double *pass_ns,
                                uint32_t n);
void            wgf_profile_free(struct wgf_profile *p);

/* ---- timing ----------------------------------------------------------------------------- */
/* Monotonic host clock in nanoseconds. */
uint64_t wgf_now_ns(void);
/* GPU timestamps for up to max_passes compute passes. WGF_ERR_UNSUPPORTED when the device
 * lacks timestamp-query: callers fall back to wall-clock timing. */
enum wgf_status wgf_timer_create(wgf_ctx *ctx, const char *label, uint32_t max_passes, wgf_timer **out);
void            wgf_timer_free(wgf_timer *t);
/* Forget recorded passes (slots restart at 0). */
void            wgf_timer_reset(wgf_timer *t);
/* Timer slots used since the last reset (the slot the next timed pass gets). */
uint32_t        wgf_timer_used(const wgf_timer *t);
/* Read back the durations (ns) of the passes recorded since the last reset; *n = count.
 * Waits for submitted work. */
enum wgf_status wgf_timer_read(wgf_ctx *ctx, wgf_timer *t, double *pass_ns, uint32_t cap, uint32_t *n);

/* ---- self-check ------------------------------------------------------------------------- */
/* Run the embedded selfcheck_saxpy kernel on n seeded random values (y = a*x + y) and
 * compare with the same computation in C. *max_abs_err gets the largest difference;
 * WGF_ERR_INTERNAL when it exceeds 4e-6 absolute (|a*x+y| <= 5 here, so that is about 2 ulp
 * of the largest result, the bound of one or two f32 roundings; more means the GPU computed
 * something else). */
enum wgf_status wgf_gpu_selfcheck(wgf_ctx *ctx, uint32_t n, uint64_t seed, double *max_abs_err);

#ifdef __cplusplus
}
#endif
#endif
