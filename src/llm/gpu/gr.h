/* wgfuse — the "roles" GPU plan: internals shared by the files of src/llm/gpu/.
 *
 *   gr_weights.c  the model's tensors on the GPU: packed f16 (or f32) 16-byte chunks, every
 *                 matrix in row parts that fit one storage binding, placed in a few large
 *                 arena buffers; f32 vectors (norms, biases) in one more
 *   gr_state.c    activations, KV cache, the step state, the RoPE table, read-back ring
 *   gr_kernels.c  one emitter per kernel role: pipeline (role + const prelude), bind group,
 *                 grid and cost, appended to a schedule
 *   plan_roles.c  the plan: the schedules of a decode step and of a prefill chunk, reading
 *                 top to bottom like cpu-ref's forward (src/llm/forward_ref.c)
 *   backend_roles.c  the backend: init, forward (host tokens), decode (tokens sampled and
 *                 fed back on the GPU, several steps per submit), profile
 *
 * Constants both C and WGSL use come from the lists below (rendered into every kernel's
 * prelude by gr_kernels.c): the layout of the step state `st` and of the sampler
 * parameters `sp`. */
#ifndef WGF_LLM_GPU_GR_H
#define WGF_LLM_GPU_GR_H
#include <stdbool.h>
#include <stdint.h>

#include "wgfuse/gpu.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_run.h"

/* The step state: u32 words of the buffer `st`, read by every kernel, written by the host
 * (forward) or by the on-GPU samplers (decode). */
#define GR_ST_LIST(X)                                                                                              \
    X(ST_POS, 0, "decode: position of the token in x; prefill: first position of the chunk")                      \
    X(ST_NTOK, 1, "prefill: tokens in the chunk")                                                                  \
    X(ST_ROPE_LONG, 2, "1: RoPE uses the long (longrope) table: the sequence passed original_max_pos")             \
    X(ST_ERR, 3, "set by a sampler that found no finite logit")                                                    \
    X(ST_RNG, 4, "xoshiro256** state of the seeded sampler: 4 x (lo, hi) words, [4, 12)")                          \
    X(ST_LEN, 16, "words")
/* The sampler parameters: u32 words of `sp` (f32 as bits), written by the host per decode. */
#define GR_SP_LIST(X)                                                                                              \
    X(SP_TEMP, 0, "temperature (f32 bits); 0: the best candidate")                                                 \
    X(SP_TOP_K, 1, "top-k (1..KMAX)")                                                                              \
    X(SP_TOP_P, 2, "top-p (f32 bits)")                                                                             \
    X(SP_PENALTY, 3, "repetition penalty (f32 bits)")                                                              \
    X(SP_LAST_N, 4, "tokens the penalty looks at")                                                                 \
    X(SP_LEN, 8, "words")
#define GR_ENUM(name, v, why) GR_##name = v,
enum { GR_ST_LIST(GR_ENUM) GR_SP_LIST(GR_ENUM) };
#undef GR_ENUM

#define GR_WG 256          /* invocations per workgroup, every role                        */
#define GR_T_MAX 128       /* prefill tokens per chunk (activations are sized for this)     */
#define GR_KMAX 256        /* top-k the GPU sampler handles (== GR_WG: lib_topk)            */
#define GR_NCAND 64        /* vocabulary slices of sample_topk                              */
#define GR_EMB_PARTS 5     /* row parts of the embedding table one kernel can bind (sample_pick:
                              5 bindings + 5 parts = maxStorageBuffersPerShaderStage 10) */
#define GR_STEPS 16        /* decode steps per submit at most                               */
#define GR_SUBMIT_S 0.05   /* the GPU time a decode submit aims at (steps adapt to the rate)  */
#define GR_RING 3          /* submits in flight while decoding                              */
#define GR_MAX_SPLIT 64    /* attention slices at most (the slice length grows with n_ctx)  */

/* A matrix on the GPU in row parts, each within one binding; rows as stored (pair order for
 * attn_qkv, gate/up interleaved for ffn_gate_up). kc chunks of 16 bytes per row. */
struct gr_part {
    wgf_buffer *buf; /* an arena buffer (borrowed from gr.arena)                      */
    uint32_t    arena; /* its index                                                   */
    uint64_t    off, bytes;
    uint32_t    row0, rows;
};
struct gr_mat {
    uint32_t              rows, cols, kc;
    struct wgf_matvec_cfg cfg;   /* decode kernel layout (rpg or pairs per group)       */
    uint32_t              n_parts;
    struct gr_part       *part;  /* (n_parts) owned                                     */
};
/* An f32 vector in the vector arena, zero padded to a multiple of 16. */
struct gr_vec {
    uint64_t off, bytes;
};

struct gr_layer {
    struct gr_mat qkv;                   /* (2 pairs, dim) pair order (lib_pairs)           */
    struct gr_mat wo;                    /* (dim, q_dim)                                     */
    struct gr_mat gu;                    /* (2 hidden, dim) gate/up interleaved              */
    struct gr_mat down;                  /* (dim, hidden)                                    */
    struct gr_vec attn_norm, ffn_norm;   /* (dim)                                            */
    struct gr_vec bias;                  /* (2 pairs) pair order; zeros without bias         */
    wgf_buffer   *kc, *vc;               /* kv_cache_k/v: (n_ctx, kv_dim) f32                */
};

enum gr_sched {
    GR_S_EMBED,       /* x = tok_embd[seq[pos]] (host-chosen token)                        */
    GR_S_LAYERS,      /* every layer at st.pos, attention in one slice (pos < split)       */
    GR_S_LAYERS_LONG, /* the same with split attention + combine                           */
    GR_S_HEAD,        /* lm_head on x, logits + argmax partials                            */
    GR_S_GREEDY,      /* sample_argmax                                                     */
    GR_S_PENALTY,     /* sample_penalty                                                    */
    GR_S_TOPK,        /* sample_topk, sample_pick                                          */
    GR_S_PREFILL,     /* a prefill chunk: embed rows, every layer                          */
    GR_S_HEAD_PRE,    /* lm_head on the chunk's last row                                   */
    GR_S_ALL_LOGITS,  /* final norm + lm_head matmul over every row of the chunk           */
    GR_S_COUNT
};

#define GR_MAX_MM 32 /* distinct matmul row counts (indirect grid slots)                  */

struct gr {
    wgf_ctx                    *ctx; /* borrowed                                              */
    const struct wgf_llm_model *m;
    struct wgf_llm_config       c;
    bool                        f16;  /* weights packed f16 (else f32)                        */
    uint32_t                    sgs;  /* subgroup size the reductions use; 0: workgroup memory */
    uint32_t n_ctx, dim, dimp, q_dim, kv_dim, hd, half, rot, hidden, hidp, vocab, vp, pairs;
    uint32_t qkv_s, gu_s;   /* prefill row strides of the QKV and gate/up outputs          */
    uint32_t split, n_split; /* attention slice length and count                           */
    uint32_t rope_tables, rope_orig;
    float    scale;         /* 1/sqrt(head_dim), rounded to f32 as cpu-ref                 */
    uint64_t max_bind;  /* weights: largest binding (options may lower it: tests)     */
    uint64_t dev_bind;  /* the device's maxStorageBufferBindingSize (state buffers)   */
    uint64_t align, arena_cap;

    /* weights */
    wgf_buffer     **arena;   /* (n_arena) owned                                         */
    uint64_t        *arena_size;
    uint32_t         n_arena, cap_arena;
    wgf_buffer      *vecs;    /* the vector arena                                        */
    uint64_t         vecs_size;
    struct gr_layer *L;       /* (n_layers)                                              */
    struct gr_mat    lm_head;
    struct gr_mat    emb_own; /* tok_embd when not tied                                  */
    const struct gr_mat *emb; /* &lm_head when tied, else &emb_own                         */
    struct gr_vec    out_norm;

    /* state: decode activations */
    wgf_buffer *x;      /* (dimp) residual stream                                         */
    wgf_buffer *q;      /* (q_dim) rotated query                                          */
    wgf_buffer *att;    /* (q_dim) attention output                                       */
    wgf_buffer *h;      /* (hidp) silu(gate) * up                                         */
    wgf_buffer *logits; /* (vp) the last row's logits                                     */
    wgf_buffer *best;   /* (nbest) (f32 bits, id) argmax partials                         */
    uint32_t    nbest;
    wgf_buffer *part;   /* attention partials (rows, heads, n_split, 1 + hd/4) vec4       */
    wgf_buffer *cand;   /* (NCAND, KMAX) (key, id)                                         */
    wgf_buffer *st;     /* (ST_LEN) u32 step state                                        */
    wgf_buffer *seq;    /* (n_ctx + 1) token ids by position                              */
    wgf_buffer *sp;     /* (SP_LEN) sampler parameters                                    */
    wgf_buffer *rope;   /* (rope_tables, n_ctx, half) (cos, sin)                          */
    wgf_buffer *args;   /* prefill indirect grids (3 u32 each)                            */
    wgf_buffer *zero;   /* 256 zero bytes: a binding a kernel declares but a variant skips */
    /* state: prefill activations, GR_T_MAX rows each */
    wgf_buffer *X, *XB, *QKV, *Q, *ATT, *GU, *H;
    wgf_buffer *LOGITS; /* (T_MAX, vp) for all-logits prefill; made on first use          */
    wgf_buffer *MMP;    /* split-K partial tiles: (ks, T_MAX, rows) f32, the largest case    */
    wgf_buffer *rb[GR_RING]; /* read-back ring: GR_STEPS ids + the error word              */
    wgf_buffer **owned;      /* every state buffer, for free                              */
    uint32_t     n_owned, cap_owned;

    /* plan */
    wgf_schedule *s[GR_S_COUNT];
    uint32_t      mm_n[GR_MAX_MM]; /* matmul args slots 2..: rows N and tile (BN, BM) of each    */
    uint32_t      mm_bn[GR_MAX_MM], mm_bm[GR_MAX_MM], mm_ks[GR_MAX_MM];
    uint32_t      n_mm;
    uint32_t      all_logits_made; /* GR_S_ALL_LOGITS exists                              */
};

/* gr_weights.c */
enum wgf_status gr_weights_create(struct gr *g, struct wgf_err *err);
void            gr_weights_free(struct gr *g);
/* gr_state.c */
enum wgf_status gr_state_create(struct gr *g, struct wgf_err *err);
enum wgf_status gr_state_all_logits(struct gr *g, struct wgf_err *err);
void            gr_state_free(struct gr *g);
enum wgf_status gr_buf(struct gr *g, const char *label, uint64_t bytes, unsigned usage, wgf_buffer **out,
                       struct wgf_err *err);

/* gr_kernels.c: emitters, each appends one role's step(s) to schedule s */
enum gr_xsrc { GR_X_DECODE, GR_X_PREFILL_LAST };
enum wgf_status gr_emit_embed(struct gr *g, wgf_schedule *s, wgf_buffer *x, bool rows, struct wgf_err *err);
enum wgf_status gr_emit_attn_qkv(struct gr *g, wgf_schedule *s, int l, struct wgf_err *err);
enum wgf_status gr_emit_attn_split(struct gr *g, wgf_schedule *s, int l, bool prefill, bool direct, struct wgf_err *err);
enum wgf_status gr_emit_attn_combine(struct gr *g, wgf_schedule *s, bool prefill, struct wgf_err *err);
enum wgf_status gr_emit_gemv(struct gr *g, wgf_schedule *s, const char *role, const struct gr_mat *w, wgf_buffer *x,
                             wgf_buffer *y, bool accum, struct wgf_err *err);
enum wgf_status gr_emit_ffn_gate_up(struct gr *g, wgf_schedule *s, int l, struct wgf_err *err);
enum wgf_status gr_emit_lm_head(struct gr *g, wgf_schedule *s, enum gr_xsrc xs, struct wgf_err *err);
enum wgf_status gr_emit_sample_argmax(struct gr *g, wgf_schedule *s, struct wgf_err *err);
enum wgf_status gr_emit_sample_penalty(struct gr *g, wgf_schedule *s, struct wgf_err *err);
enum wgf_status gr_emit_sample_topk(struct gr *g, wgf_schedule *s, struct wgf_err *err);
enum wgf_status gr_emit_rmsnorm_rows(struct gr *g, wgf_schedule *s, wgf_buffer *y, wgf_buffer *x, struct gr_vec gw,
                                     struct wgf_err *err);
enum wgf_status gr_emit_matmul(struct gr *g, wgf_schedule *s, const char *role, const struct gr_mat *w,
                               wgf_buffer *x, uint32_t xs4, wgf_buffer *y, uint32_t ys, bool accum,
                               const struct gr_vec *bias, struct wgf_err *err);
/* K splits of a prefill matmul over a part of `rows` rows and `cols` columns (1: none) */
uint32_t        gr_mm_ksplit(uint32_t rows, uint32_t cols);
enum wgf_status gr_emit_rope_rows(struct gr *g, wgf_schedule *s, int l, struct wgf_err *err);
enum wgf_status gr_emit_silu_mul_rows(struct gr *g, wgf_schedule *s, struct wgf_err *err);
/* prefill grid slots: 0 = (T, 1, 1), 1 = attention, 2.. = matmuls by row count */
#define GR_ARG_ROWS 0u
#define GR_ARG_ATT 1u
void gr_args_fill(const struct gr *g, uint32_t T, uint32_t pos0, uint32_t *args /* 3 * (2 + n_mm) */);

/* plan_roles.c */
enum wgf_status gr_plan_build(struct gr *g, struct wgf_err *err);
enum wgf_status gr_plan_all_logits(struct gr *g, struct wgf_err *err);
void            gr_plan_free(struct gr *g);

/* messages: "gpu-roles: <what>: <runtime's message>" */
enum wgf_status gr_fail(const struct gr *g, struct wgf_err *err, enum wgf_status s, const char *what);

#endif
