/* wgfuse — running a loaded LLM: the forward backends, sampling, generation, .npy output.
 *
 * Layers:
 *   wgf_llm_backend  one forward implementation behind a small vtable. The plain-C reference
 *                    (wgf_llm_backend_ref, src/llm/forward_ref.c) is the first; GPU fusion
 *                    plans slot in beside it and are checked against it.
 *   wgf_sampler      logits -> token id: greedy, temperature, top-k, top-p, repetition
 *                    penalty; seeded, deterministic (src/llm/sampling.c).
 *   wgf_generate     prompt ids -> prefill -> decode loop with streaming, stop conditions and
 *                    timing stats (src/llm/generate.c).
 *   wgf_npy_writer   float32 (positions, vocab) .npy written atomically (src/llm/npy.c).
 *
 * Ownership: *_init fills a caller-owned struct and *_free releases what it holds
 * (free of a zeroed or already-freed struct is a no-op). Pointers passed in are borrowed
 * and must outlive the object unless a comment says otherwise. Every call returns
 * enum wgf_status and records a one-line message in the caller's struct wgf_err. */
#ifndef WGFUSE_LLM_RUN_H
#define WGFUSE_LLM_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wgfuse/llm.h"
#include "wgfuse/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wgf_llm_model;
struct wgf_tokenizer;
struct wgf_ctx;
struct wgf_profile;
struct wgf_step_info;
struct wgf_sampler;

/* ======================================================================================
 * Backends
 * ====================================================================================== */

struct wgf_llm_backend_options {
    uint32_t        n_ctx;     /* KV-cache length in positions; 0 = the model's context length */
    uint32_t        n_threads; /* CPU worker threads; 0 = 1 (cpu-ref)                        */
    struct wgf_ctx *gpu;       /* GPU context, borrowed (must outlive the backend); required
                                  by the gpu backend, ignored by cpu-ref                     */
    uint64_t        max_binding_bytes; /* gpu: largest storage binding to use; 0 = the device's
                                  maxStorageBufferBindingSize (tests set it small to force
                                  the row-split path); larger values are clamped to it       */
    bool            weights_f32; /* gpu roles: keep weights in f32 (default: f16, packed two
                                  per u32 where the adapter lacks shader-f16, i.e. always) */
    bool            no_subgroups; /* gpu roles: reductions through workgroup memory even where
                                  the adapter has subgroups (the tested fallback)            */
    uint32_t        attn_split; /* gpu roles: positions per attention slice; 0 = 512 (more
                                  when n_ctx / 512 > 64). A context longer than one slice
                                  splits decode attention over workgroups + a combine step */
    uint32_t        attn_wg; /* gpu roles: invocations of a decode attention workgroup (one per
                                  head and slice); 0 = the device's rule (gr_att_wg: 256, or
                                  up to 1024 for a large head_dim), else that power of two
                                  from head_dim / 4 to 1024 and the device's invocation
                                  limit; others are refused at open (tests)                */
    bool            act_q8; /* quantized weight rows multiply activations rounded to int8 per
                                  32-element block (x^ = d q, d = max|x| / 127: llama.cpp's
                                  q8 activations; integer dot products on the GPU). Off: the
                                  exact f32 activations. cpu-ref and the GPU plans round the
                                  same way (wgf__quant_round_q8); float rows are unaffected */
    bool            act_i8x3; /* gpu roles / fused / ops, without act_q8: each activation
                                  enters the quantized decode rows as three int8 digits of its
                                  32-block's scale, x = d (q1 + q2 / 254 + q3 / 254^2), |x -
                                  that| <= ~1.2e-7 max|x| of the block, and the dots are integer
                                  (docs/llm.md). Off (the default): the codes are decoded to
                                  floats against the f32 activations */
    uint32_t        q8_min_workgroups; /* gpu roles, act_q8 or act_i8x3: a quantized matvec gets the most rows per
                                  workgroup that still leave this many workgroups; 0 = 256 (tests
                                  set 1: many items per invocation on small matrices) */
    uint32_t        q_min_workgroups; /* gpu roles, f32 activations: attn_output / ffn_down parts
                                  take up to 4 rows per group while this many workgroups
                                  remain; 0 = 200 (tests set 1: small matrices then take them) */
    uint32_t        compute_units; /* gpu roles / fused / ops, f32 activations: the compute units
                                  the Q4_K / Q5_K / Q6_K norm-prologue matvecs (attn_qkv,
                                  ffn_gate_up, lm_head) spread their one-wave grids over; 0 =
                                  measured on the device (wgf_ctx_compute_units). Speed only:
                                  any value gives the same results (tests set a small one) */
};

/* An on-device decoding request (wgf_llm_backend.decode): sample `max_ids` ids at most,
 * starting at position `pos`, whose logits the last forward left on the device; each id
 * sampled is fed back (embedded, evaluated) on the device without a host round trip, and
 * handed to on_id in order (non-zero: stop; steps computed past the stop are discarded).
 * Positions evaluated stay below the backend's n_ctx. The sampler's parameters apply, and its
 * RNG state is read at the start and advanced by one draw per delivered id when the
 * temperature is > 0, exactly as wgf_sampler_sample would. */
struct wgf_llm_decode_req {
    struct wgf_sampler *sampler;
    uint32_t            pos;
    uint32_t            max_ids;
    int (*on_id)(void *user, int32_t id);
    void *user;
};

/* One forward implementation. `impl` is the backend's private state.
 *
 * forward(b, tokens, n, pos, logits, all_logits, err): evaluates tokens[0..n) at positions
 *   pos..pos+n-1, appending their keys/values to the cache (which must already hold
 *   positions 0..pos-1). Writes logits (vocab floats per row) for every token when
 *   all_logits, else only for the last one. pos+n > n_ctx -> WGF_ERR_CONTEXT.
 * reset(b): forgets the cache (the next forward starts at pos 0).
 * free(b): releases impl; safe on a backend whose init failed or that was never inited. */
/* What the advisor's probe measured of one GPU plan's greedy decode step (wgf_llm_backend.probe):
 * a token costs max(gpu_us, host_us) in the on-device decode loop, where the host records the
 * next submits while the GPU runs the last ones. */
#define WGF_LLM_PROBE_LIST 48
struct wgf_llm_probe {
    double   gpu_us;   /* sum over the step's dispatches of their kind's time in a chain     */
    double   step_us;  /* the whole step in one timed pass of a busy submit (a cross-check)  */
    double   step_first_us; /* the same, the first repetition's (after the warm-up)         */
    double   warm_s;   /* the warm-up: the whole step run until its submits take a steady time */
    uint32_t reps;     /* timed repetitions (each time is their least)                       */
    double   host_us;  /* recording and submitting one step, the loop's steps per submit    */
    uint32_t kinds;    /* kinds of dispatch timed (label, grid and cost alike)              */
    uint32_t dispatches;
    double   seconds;  /* the probe's own wall time                                         */
    /* the first WGF_LLM_PROBE_LIST kinds in step order: label, instances per step, GPU us of
     * one in a chain (gpu_us = the sum of n x us over every kind, listed or not) */
    uint32_t listed;
    struct {
        char     label[64];
        uint32_t n;
        double   us;
    } kind[WGF_LLM_PROBE_LIST];
};

struct wgf_llm_backend {
    const char *name;
    void       *impl;
    uint32_t    n_vocab; /* logits per row                                                */
    uint32_t    n_ctx;   /* positions the cache holds                                     */
    enum wgf_status (*init)(struct wgf_llm_backend *b, const struct wgf_llm_model *m,
                            const struct wgf_llm_backend_options *opt, struct wgf_err *err);
    enum wgf_status (*forward)(struct wgf_llm_backend *b, const int32_t *tokens, uint32_t n,
                               uint32_t pos, float *logits, bool all_logits, struct wgf_err *err);
    void (*reset)(struct wgf_llm_backend *b);
    void (*free)(struct wgf_llm_backend *b);
    /* Optional (NULL: not offered). decode: see struct wgf_llm_decode_req; returns
     * WGF_ERR_UNSUPPORTED, having done nothing, for sampler settings it does not run (the
     * caller then samples on the host). *n_ids = ids delivered. */
    enum wgf_status (*decode)(struct wgf_llm_backend *b, const struct wgf_llm_decode_req *req, uint32_t *n_ids,
                              struct wgf_err *err);
    /* Optional. GPU time per kernel role over n_steps greedy decode steps at positions
     * pos.. (each role timed in its own pass; added to *out). */
    enum wgf_status (*profile)(struct wgf_llm_backend *b, uint32_t pos, uint32_t n_steps, struct wgf_profile *out,
                               struct wgf_err *err);
    /* Optional. GPU time per kernel role of the first batched prefill chunk of an n_tok-token
     * prompt at position 0 (each role timed in its own pass; added to *out); WGF_ERR_UNSUPPORTED where the plan
     * prefills token by token. The cache's first n_tok positions are overwritten. */
    enum wgf_status (*profile_prefill)(struct wgf_llm_backend *b, uint32_t n_tok, struct wgf_profile *out,
                                       struct wgf_err *err);
    /* Optional. GPU time of n_steps whole greedy decode steps at positions pos.., each
     * recorded into one timed compute pass; *ns_per_step = their mean (0 without steps). */
    enum wgf_status (*step_time)(struct wgf_llm_backend *b, uint32_t pos, uint32_t n_steps, double *ns_per_step,
                                 struct wgf_err *err);
    /* Optional (the fusion-dial plans). The steps of one greedy decode step at position pos,
     * in replay order (the plan's own schedules as the on-device decode loop records them:
     * layers, LM head, greedy sampler; dispatches_per_token of them are dispatches),
     * each with its label, grid and cost (bytes, FLOPs) as the plan built them: the first cap
     * copied into out, *n = how many there are (the advisor's cost model reads these). */
    enum wgf_status (*decode_steps)(const struct wgf_llm_backend *b, uint32_t pos, struct wgf_step_info *out,
                                    uint32_t cap, uint32_t *n, struct wgf_err *err);
    /* Optional (the fusion-dial plans; the advisor's probe, src/llm/gpu/gr_probe.c). Time the
     * kinds of dispatch of one greedy decode step at position pos on this device (each kind
     * in chains of its own instances, in one busy submit, GPU timestamps) and the host's
     * recording of the step: *out filled. WGF_ERR_UNSUPPORTED without timestamp-query. The
     * backend's state (activations, cache) is left undefined: forward again before using it. */
    enum wgf_status (*probe)(struct wgf_llm_backend *b, uint32_t pos, struct wgf_llm_probe *out, struct wgf_err *err);
    uint32_t    dispatches_per_token; /* a greedy decode step (0: not a GPU plan)            */
    /* GPU plans: the weight bytes a decode step reads (every layer matrix and the LM head in
     * their formats on the device: f16, f32 or quantized blocks), the weight bytes on the
     * device (every matrix and vector, padding included), and that format in words ("f16",
     * "f32", or the model's stored type when some matrices stay quantized: "q4_k", "mixed") */
    uint64_t    weight_bytes_per_token, gpu_weight_bytes;
    const char *weights;
    const char *plan;                 /* the plan's name ("roles", "ops", ...; NULL: cpu-ref) */
    /* decode(): host seconds spent recording and submitting, and the decode steps they
     * covered, added up over calls (the caller may zero them): host time per token */
    double      decode_host_s;
    uint64_t    decode_host_steps;
};

/* The plain-C reference: f32 accumulation over weights read in their stored dtype
 * (converted per row on the fly), pthreads over output rows. A value, copy it then init. */
extern const struct wgf_llm_backend wgf_llm_backend_ref;

/* The first GPU backend, "gpu-unfused" (src/llm/forward_gpu.c): the unfused plan, one
 * kernel role per dispatch. Weights are converted to f32 and uploaded at init (a matrix
 * above the binding limit is split by rows; one whose single row exceeds it is refused
 * with WGF_ERR_LIMIT naming it); the KV cache (n_ctx positions) lives on the GPU; a token's
 * dispatches go into one submit and only the logits come back. Needs options.gpu. A failed
 * init frees every buffer it made and leaves the context usable; forward on a lost device
 * returns WGF_ERR_DEVICE_LOST. A value, copy it then init (wgf_llm_backend_open). */
extern const struct wgf_llm_backend wgf_llm_backend_gpu;

/* The "roles" GPU backend (src/llm/gpu/): about five hand-written kernel roles per layer,
 * f16 (packed) or f32 weights, batched prefill, and on-device sampling with the token fed
 * back to the next step (decode). Same contract as wgf_llm_backend_gpu. */
extern const struct wgf_llm_backend wgf_llm_backend_gpu_roles;

/* The other plans of the fusion dial (docs/fusion.md), the roles backend with other decode
 * layers: "gpu-ops" (one dispatch per elementary op of an eager framework), "gpu-fused" (ops
 * plus the dispatch paper's three fusions), "gpu-mega" (every layer of a token in one
 * dispatch of one workgroup). Weights, embedding, LM head, samplers and the on-device decode
 * loop are the roles plan's; the prompt runs token by token through the plan's own decode
 * step. Same contract as wgf_llm_backend_gpu_roles. */
extern const struct wgf_llm_backend wgf_llm_backend_gpu_ops;
extern const struct wgf_llm_backend wgf_llm_backend_gpu_fused;
extern const struct wgf_llm_backend wgf_llm_backend_gpu_mega;

/* The backends by name: "cpu-ref", "gpu" (plan: "roles", the default, "ops", "fused", "mega"
 * or "unfused"). NULL when unknown. */
const struct wgf_llm_backend *wgf_llm_backend_find(const char *name, const char *plan);
/* "cpu-ref, gpu" and "roles, ops, fused, mega, unfused", for messages. */
const char *wgf_llm_backend_names(void);
const char *wgf_llm_plan_names(void);

/* cpu-ref probe: called after each role of the forward with that role's output, so a GPU
 * plan can be checked kernel by kernel against the oracle. Roles, in order:
 *   "embed" (layer -1); per layer: "attn_norm", "q", "k", "v" (after bias), "q_rope",
 *   "k_rope", "attention" (before o_proj), "o_proj", "attn_residual", "ffn_norm", "gate",
 *   "up", "silu_mul", "down", "ffn_residual"; then "final_norm", "logits" (layer -1, only
 *   for the rows whose logits are computed).
 * data is (n_rows, width) row-major f32 for positions pos..pos+n_rows-1, borrowed for the
 * call. Prefill micro-batches (32 tokens) call it once per batch. */
typedef void (*wgf_llm_probe_fn)(void *user, const char *role, int layer, uint32_t pos, const float *data,
                                 uint32_t n_rows, uint32_t width);
/* Install (fn NULL removes) on an initialised cpu-ref backend; WGF_ERR_ARG on any other. */
enum wgf_status wgf_llm_ref_set_probe(struct wgf_llm_backend *b, wgf_llm_probe_fn fn, void *user,
                                      struct wgf_err *err);

/* Convenience: copy `proto` into *b and init it on model m. On failure *b is freed. */
enum wgf_status wgf_llm_backend_open(struct wgf_llm_backend *b, const struct wgf_llm_backend *proto,
                                     const struct wgf_llm_model *m,
                                     const struct wgf_llm_backend_options *opt, struct wgf_err *err);
void wgf_llm_backend_close(struct wgf_llm_backend *b);

/* ======================================================================================
 * Sampling
 * ====================================================================================== */

struct wgf_sampler_params {
    float    temperature;    /* 0 = greedy (argmax, lowest id wins ties); else > 0        */
    uint32_t top_k;          /* keep the k most likely; 0 = all                            */
    float    top_p;          /* keep the smallest set with mass >= top_p; 1 = all          */
    float    repeat_penalty; /* > 0; 1 = off. logit>0: /= p, else *= p (llama.cpp's rule)  */
    uint32_t repeat_last_n;  /* how many recent tokens the penalty looks at; 0 = none      */
    uint64_t seed;
};
/* temperature 0.8, top_k 40, top_p 0.95, repeat_penalty 1.0, repeat_last_n 64, seed 0 */
struct wgf_sampler_params wgf_sampler_params_default(void);

struct wgf_sampler {
    struct wgf_sampler_params p;
    uint64_t                  rng[4]; /* xoshiro256** state (src/util/rng.h)       */
    uint32_t                  n_vocab;
    uint8_t                  *seen; /* (n_vocab) repetition-penalty marks               */
    void                     *cand; /* (n_vocab) {logit, id} candidates (private layout)   */
    double                   *pr;   /* (n_vocab) candidate probabilities                   */
};

/* Validates the parameters (NaN, negative, top_p outside (0,1]) -> WGF_ERR_ARG. */
enum wgf_status wgf_sampler_init(struct wgf_sampler *s, const struct wgf_sampler_params *p,
                                 uint32_t n_vocab, struct wgf_err *err);
void wgf_sampler_free(struct wgf_sampler *s);

/* Pick the next token from logits (n_vocab floats; modified in place by the penalty).
 * history: the tokens so far (prompt and generated) for the repetition penalty; may be
 * NULL when n_history is 0. Non-finite logits count as -inf; all of them -inf ->
 * WGF_ERR_FORMAT. The same seed and inputs give the same token on every run. */
enum wgf_status wgf_sampler_sample(struct wgf_sampler *s, float *logits, const int32_t *history,
                                   size_t n_history, int32_t *out, struct wgf_err *err);

/* ======================================================================================
 * .npy output
 * ====================================================================================== */

/* Streams float32 rows of a fixed width into "<path>.tmp.<pid>"; close patches the shape
 * into the header, flushes, and renames over path, so a killed run never leaves a partial
 * file at `path` (an earlier file there stays intact). A character device or FIFO at
 * `path` (/dev/null, a pipe) is written through at close instead, never replaced; a
 * directory, block device or socket is refused at open (the rule of every wgfuse output). */
struct wgf_npy_writer {
    void       *out;  /* the open output (private)                                         */
    const char *path; /* destination, and the temp file being written (NULL when the       */
    const char *tmp;  /* destination is a device or FIFO); both owned by `out`              */
    uint64_t    rows, cols;
};
enum wgf_status wgf_npy_writer_open(struct wgf_npy_writer *w, const char *path, uint64_t cols,
                                    struct wgf_err *err);
enum wgf_status wgf_npy_writer_append(struct wgf_npy_writer *w, const float *rows, uint64_t n_rows,
                                      struct wgf_err *err);
enum wgf_status wgf_npy_writer_close(struct wgf_npy_writer *w, struct wgf_err *err);
/* Drop the temp file (on error paths); no-op on a closed or zeroed writer. */
void wgf_npy_writer_abort(struct wgf_npy_writer *w);
/* One-shot: a (rows, cols) float32 array. */
enum wgf_status wgf_npy_write_f32(const char *path, const float *data, uint64_t rows, uint64_t cols,
                                  struct wgf_err *err);

/* ======================================================================================
 * Generation
 * ====================================================================================== */

#define WGF_GEN_MAX_STOP 8
#define WGF_GEN_MAX_EOS WGF_MAX_EOS /* every id a model config may list */

struct wgf_gen_params {
    uint32_t    max_tokens;    /* tokens to generate at most (0: prefill only)               */
    int32_t     eos_ids[WGF_GEN_MAX_EOS]; /* stop on any of these (and on the tokenizer's
                                             end-of-generation ids); -1 = unused slot      */
    const char *stop[WGF_GEN_MAX_STOP]; /* stop strings (NULL-terminated list); text up to
                                           the match is emitted, the match is not          */
    bool        all_logits;    /* evaluate logits for every prompt position (for npy)       */
    bool        ignore_eos;    /* keep going past EOS (benchmarks)                           */
};
struct wgf_gen_params wgf_gen_params_default(void);

struct wgf_gen_stats {
    uint32_t n_prompt;      /* prompt tokens evaluated                                      */
    uint32_t n_generated;   /* tokens sampled (including a final EOS)                       */
    double   prefill_s;     /* prompt evaluation time                                       */
    double   decode_s;      /* time for the n_generated-1 decode forwards: from the first id
                               (host sampling), from the end of the prefill (decode())       */
    double   ttft_s;        /* start -> first generated token sampled                       */
    double   prefill_tok_s; /* n_prompt / prefill_s                                          */
    double   decode_tok_s;  /* (n_generated-1) / decode_s; 0 when fewer than 2 tokens       */
    const char *stop_reason;/* "eos", "stop string", "max tokens", "context"                 */
};

/* Callbacks; any may be NULL. Returning non-zero from a callback stops generation
 * (stop_reason "callback"). */
struct wgf_gen_callbacks {
    void *user;
    /* each generated token id, in order; non-zero stops after this token: it is counted and
     * its text still reaches on_text (unless it is an EOS, which has no text) */
    int (*on_token)(void *user, int32_t id);
    /* text to print: complete UTF-8 only (a piece that splits a character is held until
     * the character completes; invalid bytes become U+FFFD); stop-string matches withheld */
    int (*on_text)(void *user, const char *text, size_t len);
    /* logits rows as evaluated: n rows of n_vocab (prompt rows when all_logits, then one row
     * per decode step). The logits belong to positions pos..pos+n-1. */
    int (*on_logits)(void *user, const float *logits, uint32_t n, uint32_t n_vocab);
};

/* Runs prompt[0..n_prompt) through the backend from position 0 (resetting it), then samples
 * and decodes up to max_tokens tokens. tok (may be NULL) turns ids into text for on_text
 * and stop strings. n_prompt > n_ctx -> WGF_ERR_CONTEXT "N tokens > ctx M". Generation that
 * reaches n_ctx stops with stop_reason "context" (not an error). */
enum wgf_status wgf_generate(struct wgf_llm_backend *b, const struct wgf_tokenizer *tok,
                             struct wgf_sampler *s, const struct wgf_gen_params *p,
                             const int32_t *prompt, uint32_t n_prompt,
                             const struct wgf_gen_callbacks *cb, struct wgf_gen_stats *stats,
                             struct wgf_err *err);

/* ======================================================================================
 * Tokenizer glue (src/llm/tokenizer_gguf.c)
 * ====================================================================================== */

/* The model's own tokenizer: tokenizer.json (+ tokenizer_config.json) in a Hugging Face
 * directory, tokenizer.ggml.* in a GGUF file. *out = NULL with WGF_OK when the model has
 * none (it can still run from token ids). Free with wgf_tokenizer_free. */
enum wgf_status wgf_llm_tokenizer_load(const struct wgf_llm_model *m, struct wgf_tokenizer **out,
                                       struct wgf_err *err);
/* A tokenizer from a path, without loading weights: a model directory's tokenizer.json
 * (+ tokenizer_config.json), a tokenizer.json file, or a GGUF file's tokenizer.ggml.*
 * (`wgfuse tokenize -m PATH`). *out = NULL with WGF_OK when the path has none; a missing
 * path is WGF_ERR_IO naming it. Free with wgf_tokenizer_free. */
enum wgf_status wgf_llm_tokenizer_load_path(const char *path, struct wgf_tokenizer **out, struct wgf_err *err);

/* Add the GGUF form (tokenizer.ggml.model "gpt2", tokens, token_type, merges, pre, BOS/EOS
 * when >= 0) of a byte-level BPE tokenizer.json to a GGUF writer (src/llm/gguf.h). n_vocab > 0:
 * the model's embedding rows; the token list is padded to it with "[PAD<id>]" tokens of type
 * UNUSED, as convert_hf_to_gguf.py does (llama.cpp wants one token per row), and an id past it
 * is an error. 0: the tokenizer's own size. Ids no token has are padded the same way. */
struct wgf_gguf_writer;
enum wgf_status wgf_llm_gguf_add_tokenizer_json(struct wgf_gguf_writer *w, const char *tokenizer_json_path, int64_t n_vocab,
                                                int32_t bos_id, int32_t eos_id, struct wgf_err *err);

/* Internal, shared by the backends: the model has every tensor the forward indexes, with
 * the config's shapes and enough bytes (messages start with "<who>: "). */
enum wgf_status wgf__llm_check_model(const struct wgf_llm_model *m, const char *who, struct wgf_err *err);

/* Internal, exported for tests: cpu-ref's vectorised f16/bf16 -> f32 row conversion
 * (src may be unaligned). */
void wgf__ref_convert_row(enum wgf_dtype dt, const void *src, float *dst, uint32_t n);

/* Monotonic seconds (for stats and benchmarks). */
double wgf_llm_now(void);

#ifdef __cplusplus
}
#endif
#endif
