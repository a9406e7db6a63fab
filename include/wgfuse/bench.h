/* wgfuse bench — dispatch-overhead and kernel-fusion characterization.
 *
 * Two experiments families, both measured on the caller's own device:
 *
 *   dispatch  per-dispatch cost by the SEQUENTIAL method (wall time of N back-to-back
 *             dispatches for several N, cost = slope of the least-squares line) and by
 *             SINGLE-OP (one dispatch, submit, wait), for each way of recording dispatches.
 *   fusion    controlled pairs: the same math as k elementary dispatches and as fewer fused
 *             ones (RMSNorm 6->1, MLP 7->3->1, K+V 2->1, ...), each checked against a plain-C
 *             reference before any time is taken.
 *
 * Protocol (docs/methodology.md): correctness check first; warm-up runs; then `reps` timed
 * runs; every timing is summarised as median, bootstrap 95% CI of the median, CV, min, and
 * the count of Tukey outliers (reported, never removed).
 *
 * Ownership: results are plain structs filled by the caller-provided pointer; rendered text
 * (tables, JSON, CSV, SVG) is returned malloc'd and owned by the caller (free()).
 * Errors: enum wgf_status + a one-line message in the caller's struct wgf_err (GPU failures
 * carry the runtime's message, wgf_ctx_last_error, prefixed with the experiment). A kernel
 * whose output is wrong is NOT a status error: its variant has correct = false, no time, and
 * a detail line; renderers print it as WRONG. */
#ifndef WGFUSE_BENCH_H
#define WGFUSE_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wgfuse/gpu.h"
#include "wgfuse/gpu_bench.h" /* struct wgf_call_breakdown */
#include "wgfuse/half.h"
#include "wgfuse/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- statistics (stats.c) ---------------------------------------------------------------- */
struct wgf_stats {
    int    n;
    double median, mean, min, max;
    double stddev;       /* sample standard deviation (n-1)                                */
    double cv;           /* stddev / mean; 0 when mean == 0                                */
    double ci_lo, ci_hi; /* 95% CI of the median: percentile bootstrap, 2000 resamples,
                            fixed seed (so a report is reproducible from its samples)      */
    double q1, q3;       /* quartiles (linear interpolation, as numpy's default)           */
    int    n_outliers;   /* samples outside [q1 - 1.5 IQR, q3 + 1.5 IQR]                   */
};
/* Summarise x[0..n) (n >= 1; borrowed, not modified). */
enum wgf_status wgf_stats_compute(const double *x, int n, struct wgf_stats *out, struct wgf_err *err);
/* Median of x[0..n) (n >= 1), without modifying x. */
double          wgf_stats_median(const double *x, int n);
/* Two-sided 97.5% quantile of Student's t with df degrees of freedom (df >= 1). */
double          wgf_stats_t975(int df);

/* Ratio of two independent samples' medians, median(a) / median(b), with a 95% percentile
 * bootstrap CI (each sample resampled on its own, 2000 times, fixed seed): how a speed-up
 * between two configurations measured in separate runs is reported. b's samples > 0. */
struct wgf_ratio {
    double ratio, ci_lo, ci_hi;
};
enum wgf_status wgf_stats_ratio(const double *a, int na, const double *b, int nb, struct wgf_ratio *out,
                                struct wgf_err *err);

/* Least-squares line y = intercept + slope * x. */
struct wgf_linfit {
    int    n;
    double slope, intercept;
    double slope_ci;  /* half-width of the slope's 95% t interval (0 when n < 3)             */
    double r2;        /* coefficient of determination                                      */
    double resid_rms; /* root mean square of the residuals, in y units                     */
    double resid_max; /* largest |residual|                                                */
};
/* n >= 2 with at least two distinct x. */
enum wgf_status wgf_linfit_compute(const double *x, const double *y, int n, struct wgf_linfit *out,
                                   struct wgf_err *err);

/* ---- dispatch overhead (bench_dispatch.c) -------------------------------------------------- */
enum wgf_dispatch_mode {
    WGF_MODE_ONE_PASS    = 0, /* N dispatches in one compute pass, one submit, one wait     */
    WGF_MODE_PASS_EACH   = 1, /* one pass per dispatch, one encoder, one submit, one wait   */
    WGF_MODE_SUBMIT_EACH = 2, /* one encoder + submit per dispatch, one wait at the end     */
    WGF_MODE_WAIT_EACH   = 3, /* submit and wait per dispatch (single-op, repeated)         */
    WGF_MODE_INDIRECT    = 4, /* as ONE_PASS, each dispatch's grid read from a buffer
                                 (Dawn validates each with a dispatch of its own)        */
    WGF_MODE_COUNT
};
const char *wgf_dispatch_mode_name(enum wgf_dispatch_mode m); /* "one_pass", ...            */
const char *wgf_dispatch_mode_desc(enum wgf_dispatch_mode m); /* one-line description       */

#define WGF_BENCH_MAX_NS   16
#define WGF_BENCH_MAX_REPS 200

struct wgf_dispatch_opts {
    int ns[WGF_BENCH_MAX_NS]; /* dispatch counts of the sequential sweep (ascending)       */
    int n_ns;
    int reps;                 /* timed repetitions of the whole sweep                      */
    int warmup;               /* untimed repetitions first                                 */
    int single_reps;          /* single-op samples per mode                                */
    bool f16_packed;          /* f16 as u32 pairs even where shader-f16 exists (tests)     */
    /* optional progress hook (the CLI prints it; the library never prints) */
    void (*progress)(void *user, const char *what);
    void *progress_user;
    /* optional: polled between recording modes; true stops the run with
     * WGF_ERR_INTERRUPTED, the modes measured so far kept in the report (complete = false) */
    bool (*stop)(void *user);
};
/* quick = under a minute on lavapipe (2 cores, ~16 us/dispatch). */
struct wgf_dispatch_opts wgf_dispatch_opts_default(bool quick);

/* One recording mode, one dtype. */
struct wgf_dispatch_mode_result {
    bool             ran;
    int              n_points;
    int              ns[WGF_BENCH_MAX_NS];
    double           t_us[WGF_BENCH_MAX_NS]; /* median wall time of N dispatches, us       */
    struct wgf_linfit fit;                   /* t_us vs ns (medians)                       */
    struct wgf_stats per_dispatch_us;        /* slope of each repetition's sweep           */
    struct wgf_stats single_op_us;           /* wall time of 1 dispatch in this mode       */
};

enum wgf_bench_dtype { WGF_BENCH_F32 = 0, WGF_BENCH_F16 = 1, WGF_BENCH_DTYPES };

struct wgf_dispatch_report {
    char   adapter[256], backend[16], type[16], driver[256];
    char   date[32];                                   /* UTC, ISO 8601                   */
    struct wgf_dispatch_opts opts;
    struct wgf_dispatch_mode_result mode[WGF_BENCH_DTYPES][WGF_MODE_COUNT];
    bool   has_f16;                                    /* adapter has shader-f16          */
    char   f16_kernel[32];                             /* "tiny_f16" (native f16), or
                                                          "tiny_f16_packed" (f16 pairs in
                                                          u32, unpacked to f32: no feature) */
    char   f16_skip[128];                              /* why f16 did not run             */
    /* headline: single-op (wait_each, 1 dispatch) over sequential (one_pass slope), f32 */
    double sequential_us, single_op_us, single_over_sequential;
    /* GPU timestamps (timestamp-query): one pass per dispatch, and N dispatches in a pass */
    bool   has_gpu_time;
    char   gpu_time_skip[128];
    struct wgf_stats gpu_pass_us;                      /* a pass holding one dispatch     */
    struct wgf_stats gpu_amortized_us;                 /* one pass of N dispatches / N    */
    char   gpu_time_note[160];                         /* set when the timestamps fail a
                                                          sanity check (GPU time of a pass
                                                          longer than its wall time)      */
    bool   has_calls;
    char   calls_skip[128];
    struct wgf_call_breakdown calls;
    bool   complete;                                   /* false: stopped early (opts.stop);
                                                          only modes with ran are measured */
};
/* Run the whole dispatch characterization on ctx (borrowed). Checks the tiny kernels'
 * output (f32 and, where shader-f16 exists, f16) before timing. */
enum wgf_status wgf_bench_dispatch(wgf_ctx *ctx, const struct wgf_dispatch_opts *opts,
                                   struct wgf_dispatch_report *out, struct wgf_err *err);
/* Only `mode` with the f32 tiny kernel (checked before and after): the per-dispatch cost a
 * caller needs for a dispatch floor (the fusion dial). out->per_dispatch_us is the slope. */
enum wgf_status wgf_bench_dispatch_cost(wgf_ctx *ctx, const struct wgf_dispatch_opts *opts, enum wgf_dispatch_mode mode,
                                        struct wgf_dispatch_mode_result *out, struct wgf_err *err);

/* ---- fusion (bench_fusion.c, references in fusion_ref.c) ---------------------------------- */
/* Shapes of one size. "qwen05b" is Qwen2.5-0.5B (config.json of Qwen/Qwen2.5-0.5B);
 * "toy" keeps every dimension small for CPU adapters and tests. */
struct wgf_bench_size {
    char     name[16];
    uint32_t hidden;       /* d_model                                   qwen05b: 896        */
    uint32_t intermediate; /* MLP width                                 qwen05b: 4864       */
    uint32_t n_heads;      /* query heads                               qwen05b: 14         */
    uint32_t n_kv_heads;   /* key/value heads (GQA)                     qwen05b: 2          */
    uint32_t head_dim;     /*                                           qwen05b: 64         */
    uint32_t vocab;        /* logits of the greedy-token experiment     qwen05b: 151936     */
    uint32_t softmax_len;  /* attention-score row length (context)                         */
    float    eps;          /* rms_norm_eps                              qwen05b: 1e-6       */
};
enum wgf_status wgf_bench_size_get(const char *name, struct wgf_bench_size *out, struct wgf_err *err);

enum wgf_fusion_exp {
    WGF_FUSION_RMSNORM = 0, /* 6 elementary dispatches vs 1                                */
    WGF_FUSION_MLP,         /* 7 vs 3 (gate+up in one matvec) vs 1 (mega-kernel)           */
    WGF_FUSION_KV,          /* K and V projections: 2 matvecs vs 1 on concatenated weights  */
    WGF_FUSION_ARGMAX,      /* logits readback + CPU argmax vs on-device argmax            */
    WGF_FUSION_SOFTMAX,     /* one thread per row vs one workgroup per row                 */
    WGF_FUSION_BATCHING,    /* D dispatches submitted k per submit                         */
    WGF_FUSION_POOLING,     /* fresh buffers + bind group per step vs pooled               */
    WGF_FUSION_COUNT
};
const char *wgf_fusion_exp_name(enum wgf_fusion_exp e); /* "rmsnorm", "mlp", ...           */

#define WGF_FUSION_MAX_VARIANTS 6
struct wgf_fusion_variant {
    char   name[48];       /* "unfused_6", "fused_1", "k=16", ...                          */
    int    dispatches;     /* per iteration                                                */
    int    submits;        /* per iteration (0 when several iterations share one)          */
    bool   correct;        /* output matched the C reference (false: no timing below)      */
    double max_abs_err, tol;
    char   detail[160];    /* why it failed, or the check that passed                      */
    struct wgf_stats us;   /* marginal cost per iteration, us: (t(2n) - t(n)) / n per
                              repetition (the sequential method)                           */
    struct wgf_stats us_wall; /* wall time of the 2n run / 2n, us (includes a share of the
                              run's submit + wait)                                         */
    bool   has_gpu;        /* GPU timestamps of the timed runs (one-pass variants only)    */
    struct wgf_stats gpu_us; /* GPU time per iteration, us: (pass(2n) - pass(n)) / n         */
    double speedup;        /* baseline (variant 0) median / this median                    */
};
struct wgf_fusion_result {
    enum wgf_fusion_exp exp;
    char   name[32];
    char   what[160];      /* one-line description with the shapes                         */
    bool   ran;            /* false: skipped, see skip                                     */
    char   skip[128];
    bool   interrupted;    /* not run, or stopped part-way, because opts.stop said so      */
    int    iters;          /* iterations per timed run                                     */
    int    n_variants;
    struct wgf_fusion_variant v[WGF_FUSION_MAX_VARIANTS];
};

struct wgf_fusion_opts {
    struct wgf_bench_size size;
    int      reps;         /* timed runs per variant                                       */
    int      warmup;       /* untimed runs first                                           */
    int      iters;        /* iterations per run; 0 = chosen per experiment and size       */
    bool     check_only;   /* correctness checks only, no timing (tests)                   */
    uint64_t seed;         /* inputs are drawn from this seed                              */
    /* optional kernel lookup replacing wgf_kernel_source (tests inject broken kernels to
     * prove the checks catch them); NULL = the embedded kernels */
    const char *(*kernel_source)(void *user, const char *role);
    void *kernel_user;
    void (*progress)(void *user, const char *what);
    void *progress_user;
    /* optional: polled before each timed variant; true stops with WGF_ERR_INTERRUPTED */
    bool (*stop)(void *user);
};
struct wgf_fusion_opts wgf_fusion_opts_default(const struct wgf_bench_size *size, bool quick);

/* Run one experiment on ctx (borrowed): check every variant against the C reference, then
 * (unless check_only) time the correct ones. */
enum wgf_status wgf_bench_fusion(wgf_ctx *ctx, const struct wgf_fusion_opts *opts, enum wgf_fusion_exp exp,
                                 struct wgf_fusion_result *out, struct wgf_err *err);

/* ---- C references (fusion_ref.c): f32 math, accumulate in double where it sums ------------ */
/* y = x * w / sqrt(mean(x^2) + eps), n elements. */
void     wgf_ref_rmsnorm(float *y, const float *x, const float *w, uint32_t n, float eps);
/* y[r] = sum_k w[r*k_dim + k] * x[k] (+ res[r] when res != NULL), r < rows. */
void     wgf_ref_matvec(float *y, const float *x, const float *w, const float *res, uint32_t rows, uint32_t k_dim);
/* y = x + W_down (silu(W_gate x) * (W_up x)); w_gate_up is (2*inter, hidden): gate rows
 * first, then up rows; w_down is (hidden, inter). */
void     wgf_ref_mlp(float *y, const float *x, const float *w_gate_up, const float *w_down, uint32_t hidden,
                     uint32_t inter);
/* Row-wise softmax of (rows, len), max-subtracted. */
void     wgf_ref_softmax(float *y, const float *x, uint32_t rows, uint32_t len);
/* Index of the largest value, lowest index on ties; NaN never wins. */
uint32_t wgf_ref_argmax(const float *x, uint32_t n);
/* y[i] = 2 x[i] + 1 (the tiny dispatch kernel). */
void     wgf_ref_tiny(float *y, const float *x, uint32_t n);

/* ---- rendering (table.c, svg_plot.c): malloc'd NUL-terminated text, caller frees --------- */
enum wgf_status wgf_bench_dispatch_table(const struct wgf_dispatch_report *r, char **out, struct wgf_err *err);
enum wgf_status wgf_bench_dispatch_json(const struct wgf_dispatch_report *r, char **out, struct wgf_err *err);
enum wgf_status wgf_bench_dispatch_csv(const struct wgf_dispatch_report *r, char **out, struct wgf_err *err);
/* `adapter` names the device in the header line (may be NULL). */
enum wgf_status wgf_bench_fusion_table(const struct wgf_fusion_result *r, int n, const char *adapter,
                                       const struct wgf_bench_size *size, char **out, struct wgf_err *err);
enum wgf_status wgf_bench_fusion_json(const struct wgf_fusion_result *r, int n, const char *adapter,
                                      const struct wgf_bench_size *size, char **out, struct wgf_err *err);
enum wgf_status wgf_bench_fusion_csv(const struct wgf_fusion_result *r, int n, char **out, struct wgf_err *err);
/* SVG: wall time vs N dispatches, one line per mode (f32), log-log axes. */
enum wgf_status wgf_bench_dispatch_svg(const struct wgf_dispatch_report *r, char **out, struct wgf_err *err);
/* SVG: per-iteration time of each variant as bars, one group per experiment. */
/* The fusion dial's plot: one point per plan (decode tok/s vs dispatches per token, log-log,
 * whiskers ci_lo..ci_hi when > 0), the dispatch floor tok/s = 1e6 / (dispatches x
 * dispatch_us) and the bytes floor (horizontal); a floor <= 0 is not drawn. */
struct wgf_dial_point {
    const char *label;
    double      dispatches, tok_s, ci_lo, ci_hi;
};
enum wgf_status wgf_bench_dial_svg(const struct wgf_dial_point *p, int n, double dispatch_us, double bytes_floor,
                                   const char *title, char **out, struct wgf_err *err);
enum wgf_status wgf_bench_fusion_svg(const struct wgf_fusion_result *r, int n, const char *title, char **out,
                                     struct wgf_err *err);

/* ---- matvec at the memory's speed (bench_matvec.c) ----------------------------------------
 * The shared matvec kernel (src/kernels/common/gemv.wgsl, the loop every LLM projection role
 * runs) on the projection shapes of real models, against the copy bandwidth measured in the
 * same run (a copy kernel: bytes read + written per second). Per shape, dtype (f32, packed
 * f16) and variant (invocations per row; subgroup or workgroup-memory reduction): the output
 * is checked against a double-precision C reference first (a wrong variant gets no time),
 * then R back-to-back dispatches in one pass are timed with GPU timestamps (wall clock when
 * the adapter has none), rotating among enough copies of W that they do not fit in the
 * cache. GB/s = (W + x + y bytes) / time per dispatch; % = of the copy bandwidth. */
struct wgf_matvec_shape {
    const char *model; /* "qwen2.5-0.5b", ...                                             */
    const char *name;  /* "attn_qkv", "attn_output", "ffn_gate_up", "ffn_down", "lm_head"  */
    uint32_t    rows, cols;
};
/* The shapes of a model preset ("qwen2.5-0.5b", "qwen2.5-1.5b", "phi-3-mini", "toy"); n = count. */
const struct wgf_matvec_shape *wgf_matvec_shapes(const char *model, int *n);

struct wgf_matvec_row {
    struct wgf_matvec_shape shape;
    bool     f16;
    uint32_t tpr;          /* invocations per weight row                                  */
    uint32_t rpg;          /* rows per row group                                          */
    uint32_t pad;          /* extra 16-byte chunks per row (stride experiments)           */
    bool     subgroups;    /* subgroup reduction (else workgroup memory)                   */
    bool     correct;      /* max rel. error within 1e-4 (f32) / 1e-3 (f16 vs f16 weights) */
    bool     skipped;      /* too large for one binding on this device (would be split)    */
    double   max_rel_err;
    double   us;           /* median time per dispatch                                    */
    double   gbps;         /* bytes / time                                                */
    double   pct_copy;     /* of the copy bandwidth                                       */
};
struct wgf_matvec_report {
    char     adapter[256];
    double   copy_gbps;    /* copy kernel, bytes read + written per second                 */
    bool     gpu_timed;    /* timestamps (else wall clock)                                 */
    int      n;
    struct wgf_matvec_row *rows; /* (n) owned: free with wgf_matvec_report_free            */
};
struct wgf_matvec_opts {
    const char *models;    /* comma list of presets; NULL: the three real models            */
    int         reps;      /* timed repetitions (median), default 7                        */
    uint64_t    rotate_bytes; /* W copies rotate until this many bytes (0: 256 MiB on GPUs,
                                 nothing on CPU adapters)                                   */
    bool        all_variants; /* also TPR x2 and /2, 2 and 4 rows per group, a padded row
                                 stride and the workgroup reduction                         */
    const char *roles;     /* comma list of shape names to run (NULL: all)                  */
    bool        (*stop)(void *user); void *user; /* polled between cases; true: stop        */
};
enum wgf_status wgf_bench_matvec(wgf_ctx *ctx, const struct wgf_matvec_opts *o, struct wgf_matvec_report *out,
                                 struct wgf_err *err);
void            wgf_matvec_report_free(struct wgf_matvec_report *r);
/* The copy bandwidth alone (bytes read + written per second; reps <= 0: 7), for callers that
 * state a bytes floor (the fusion dial). */
enum wgf_status wgf_bench_copy_gbps(wgf_ctx *ctx, int reps, double *gbps, struct wgf_err *err);
enum wgf_status wgf_matvec_table(const struct wgf_matvec_report *r, char **out, struct wgf_err *err);
enum wgf_status wgf_matvec_json(const struct wgf_matvec_report *r, char **out, struct wgf_err *err);

#ifdef __cplusplus
}
#endif
#endif
