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
 *   gr_ops.c      the elementary-op emitters and activations of the ops / fused plans
 *   plan_ops.c    plans ops and fused: a decode layer one dispatch per eager-framework op
 *                 (fused: plus exactly three fusions); plan_mega.c: the plan mega, every
 *                 layer of a token in one dispatch of one workgroup (docs/fusion.md)
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
#define GR_MM_MIN_WG 384u  /* prefill matmul: workgroups a full chunk should have (K split)  */
#define GR_MM_MAX_KS 16u   /* prefill matmul: K splits at most                              */
#define GR_MM_MIN_K 512u   /* prefill matmul: columns a K split keeps at least (gr_mm_shape)  */
#define GR_KMAX 256        /* top-k the GPU sampler handles (== GR_WG: lib_topk)            */
#define GR_NCAND 64        /* vocabulary slices of sample_topk                              */
#define GR_EMB_PARTS 5     /* row parts of the embedding table one kernel can bind (sample_pick:
                              5 bindings + 5 parts = maxStorageBuffersPerShaderStage 10) */
#define GR_STEPS 16        /* decode steps per submit at most                               */
#define GR_MAX_RUNS 4      /* row runs of one format a matrix may have (q, k, v + 1); more: float */
#define GR_Q8_MIN_WG 256u /* --activations q8: workgroups a quantized matvec keeps (q_cfg)  */
#define GR_Q_MIN_WG  200u /* f32 activations: workgroups a gemv part keeps with more rows per group (q_cfg) */
#define GR_QK_ITEMS  3u   /* f32 activations: Q4_K / Q6_K items per invocation of the norm-prologue roles (q_cfg) */
#define GR_WG_MAX    512u /* invocations of a matvec workgroup that q_cfg grows to spread a grid over the units */
#define GR_SPREAD_WAVES 4u /* ... for grids of at most this many workgroups a unit (cfg_spread) */
#define GR_SUBMIT_S 0.05   /* the GPU time a decode submit aims at (steps adapt to the rate)  */
#define GR_RING 3          /* submits in flight while decoding                              */
#define GR_ATT_WG_MAX 1024u /* decode attention's invocations per workgroup at most (gr_att_wg)   */
#define GR_ATT_MIN_PG 16u    /* decode attention's value position groups gr_att_wg aims for       */
#define GR_MAX_SPLIT 64    /* attention slices at most (the slice length grows with n_ctx)  */

/* The GPU row formats: GR_QT_F (the plan's float format: f16 or f32 chunks, lib_wchunk) or
 * one of ggml's block types, kept quantized and decoded in the shader (lib_qblock; the codes
 * are the wgf_dtype values, rendered into the kernels as QT_<name>). */
#define GR_QT_F 0
#define GR_QT_LIST(X) X(Q4_0) X(Q4_1) X(Q5_0) X(Q5_1) X(Q8_0) X(Q2_K) X(Q3_K) X(Q4_K) X(Q5_K) X(Q6_K)

/* A matrix on the GPU in row parts, each within one binding and of one row format; rows as
 * stored (pair order for attn_qkv, gate/up interleaved for ffn_gate_up). A matrix whose rows
 * come from tensors of different block types (a Q4_K_M file's q/k and v) gets one part per
 * run of rows of one type. */
struct gr_part {
    wgf_buffer           *buf;   /* an arena buffer (borrowed from gr.arena)                 */
    uint32_t              arena; /* its index                                                */
    uint64_t              off, bytes;
    uint32_t              row0, rows;
    uint32_t              qt;     /* GR_QT_F or a quantized wgf_dtype                         */
    uint32_t              kcs;    /* row stride in 16-byte chunks                             */
    uint32_t              nu;     /* quantized: 32-element units per row (0: float)            */
    uint32_t              ni;     /* quantized: matvec items per row (lib_rows_q)              */
    uint32_t              qa, qb; /* quantized: first words of the row's second/third regions  */
    struct wgf_matvec_cfg cfg;    /* decode kernel layout (rpg or pairs per group)            */
    bool                  x3;     /* quantized: its decode kernel takes the activations as three
                                     int8 digits (lib_rows_q ACT_X3; gr_part_x3)                */
};
/* workgroup bytes of lib_rows_q's int8 input for NU 32-element units: 4 codes a word, d and
 * the codes' sum per unit; three digits (ACT_X3) three words a vec4 of codes */
#define GR_X8_BYTES(nu) (40ull * (nu))
#define GR_X3_BYTES(nu) (104ull * (nu))
struct gr_mat {
    uint32_t              rows, cols, kc; /* kc: chunks per row in the float format        */
    struct wgf_matvec_cfg cfg;   /* decode kernel layout of float rows                      */
    uint32_t              n_parts;
    struct gr_part       *part;  /* (n_parts) owned                                     */
    bool                  quant; /* some part is quantized                                 */
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

/* The granularity of a decode layer: the fusion dial (docs/fusion.md). Everything else (the
 * weights, the embedding, the LM head, the samplers, the decode loop) is the same code in
 * every plan. */
enum gr_plan {
    GR_PLAN_ROLES, /* ~5 hand-written roles per layer (plan_roles.c)                        */
    GR_PLAN_OPS,   /* one dispatch per elementary op of an eager framework (plan_ops.c)     */
    GR_PLAN_FUSED, /* ops + RMSNorm 6->1, gate+up+SiLU 3->1, K+V 2->1 (plan_ops.c)          */
    GR_PLAN_MEGA   /* every layer in one dispatch of one workgroup (plan_mega.c)            */
};

/* The activations of the ops and fused plans, one buffer per tensor an eager framework
 * would allocate (f32; vectors zero padded to 16; pair order as W_qkv's rows, lib_pairs). */
struct gr_ops {
    wgf_buffer *sq;            /* (dimp) x^2                                               */
    wgf_buffer *mean, *var, *rstd; /* (1) mean(x^2), + eps, rsqrt                         */
    wgf_buffer *xs, *xn;       /* (dimp) x * rstd; the normed input: xs * weight          */
    wgf_buffer *q, *qb;        /* (q_dim) Wq xn, + bq (pair order)                        */
    wgf_buffer *kv, *kvb;      /* (2 kv_dim) [Wk xn; Wv xn], + [bk; bv] (k in pair order) */
    wgf_buffer *rc, *rn, *rh, *rs; /* (q_dim) RoPE: x cos, -x2 (q_dim / 2), rotate_half(x), rotate_half(x) sin */
    wgf_buffer *qr, *kr;       /* (q_dim), (kv_dim) rotated q and k (pair order)          */
    wgf_buffer *s, *ss, *sm;   /* (n_heads, n_ctx) scores, scaled, masked                 */
    wgf_buffer *max, *sum;     /* (n_heads) softmax row max, row sum                      */
    wgf_buffer *e, *p;         /* (n_heads, n_ctx) exp(s - max), probabilities            */
    wgf_buffer *o, *x2;        /* (dimp) Wo att; x + o (the residual after attention)     */
    wgf_buffer *gate, *up, *sg;/* (hidp) W_gate xn, W_up xn, silu(gate)                   */
    wgf_buffer *gu;            /* (2 hidp) fused: [silu(gate_i), up_i] interleaved        */
    wgf_buffer *d;             /* (dimp) W_down h                                         */
};

/* The mega plan's state: its KV cache (every layer in one binding), scratch and the table
 * that says where each layer's weights are (plan_mega.c). */
struct gr_mega {
    wgf_buffer *kv;    /* (n_layers, 2, n_ctx, kv_dim) f32: k then v of each layer          */
    wgf_buffer *sc;    /* scratch f32: xn (dimp) | q (q_dim) | att (q_dim) | h (hidp)       */
    wgf_buffer *tab;   /* u32: per layer, vector offsets and every matrix part              */
    uint32_t    wg;    /* invocations of the one workgroup                                  */
    uint32_t    mp;    /* row parts per matrix in the table (the most any matrix has)       */
    uint32_t    na;    /* weight arenas the layers use (the kernel binds these)             */
};

#define GR_MAX_MM 32 /* distinct matmul row counts (prefill grid slots)                   */

struct gr {
    wgf_ctx                    *ctx; /* borrowed                                              */
    enum gr_plan                plan;
    const char                 *name; /* the backend's name, for messages ("gpu-roles")       */
    const struct wgf_llm_model *m;
    struct wgf_llm_config       c;
    bool                        f16;  /* weights packed f16 (else f32)                        */
    uint32_t                    sgs;  /* subgroup size the reductions use; 0: workgroup memory */
    uint32_t n_ctx, dim, dimp, q_dim, kv_dim, hd, half, rot, hidden, hidp, vocab, vp, pairs;
    bool     xw; /* XW: norm-prologue matvecs hold x * g in workgroup memory (DIMP fits) */
    bool     qx8; /* ACT_Q8: quantized rows take int8-rounded activations (opt->act_q8)   */
    bool     qx3; /* quantized decode rows may take three int8 digits (opt->act_i8x3)     */
    uint32_t q8_min_wg; /* qx8: workgroups q_cfg leaves a quantized matvec (GR_Q8_MIN_WG)    */
    uint32_t q_min_wg;  /* f32 activations: workgroups q_cfg leaves a gemv part (GR_Q_MIN_WG) */
    uint32_t cu;        /* compute units one-wave grids are spread over (q_cfg); 0: unknown */
    bool     cu_known;  /* cu measured (wgf_ctx_compute_units) or set by the options      */
    uint64_t widen_left; /* bytes widened matrices may still add (gr_weights.c: ~1/32 of the model) */
    uint32_t qkv_s, gu_s;   /* prefill row strides of the QKV and gate/up outputs          */
    uint32_t split, n_split; /* attention slice length and count                           */
    uint32_t att_wg;         /* decode attention's invocations per workgroup (attn_split)     */
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
    wgf_buffer *zero;   /* 256 zero bytes: a binding a kernel declares but a variant skips */
    /* state: prefill activations, GR_T_MAX rows each */
    wgf_buffer *X, *XB, *QKV, *Q, *ATT, *GU, *H;
    wgf_buffer *XQ; /* qx8: a prefill matmul input rounded to int8 values (qround_rows)    */
    wgf_buffer *LOGITS; /* (T_MAX, vp) for all-logits prefill; made on first use          */
    wgf_buffer *MMP;    /* split-K partial tiles (ks, T_MAX, rows) f32, the largest matmul's */
    wgf_buffer *rb[GR_RING]; /* read-back ring: GR_STEPS ids + the error word              */
    wgf_buffer **owned;      /* every state buffer, for free                              */
    uint32_t     n_owned, cap_owned;

    /* plan */
    wgf_schedule *s[GR_S_COUNT];
    /* the prefill's grids by slot (3 u32 each), set on the host before each chunk's replay
     * (gr_grid_fill; its steps are host-grid dispatches, not indirect ones: bench/RESULTS.md,
     * "Prefill without indirect dispatches") */
    uint32_t      grid[3 * (2 + GR_MAX_MM)];
    uint32_t      mm_n[GR_MAX_MM]; /* matmul grid slots 2..: rows N, tile (BN, BM), K splits */
    uint32_t      mm_bn[GR_MAX_MM], mm_bm[GR_MAX_MM], mm_ks[GR_MAX_MM];
    uint32_t      n_mm;
    uint32_t      all_logits_made; /* GR_S_ALL_LOGITS exists                              */
    struct gr_ops ops;             /* GR_PLAN_OPS, GR_PLAN_FUSED                            */
    struct gr_mega mega;           /* GR_PLAN_MEGA                                          */
};

/* gr_weights.c */
/* The advisor's probe (gr_probe.c): list[0..n_list) is one greedy decode step's schedules;
 * st_words the step state written before each repetition. */
enum wgf_status gr_probe_steps(struct gr *g, const wgf_schedule *const *list, int n_list, const uint32_t st_words[4],
                               struct wgf_llm_probe *out, struct wgf_err *err);
enum wgf_status gr_weights_create(struct gr *g, struct wgf_err *err);
void            gr_weights_free(struct gr *g);
/* gr_state.c */
enum wgf_status gr_state_create(struct gr *g, struct wgf_err *err);
enum wgf_status gr_state_all_logits(struct gr *g, struct wgf_err *err);
void            gr_state_free(struct gr *g);
enum wgf_status gr_buf(struct gr *g, const char *label, uint64_t bytes, unsigned usage, wgf_buffer **out,
                       struct wgf_err *err);
/* gr_weights.c: the decode kernel layout of `rows` rows of kc chunks (paired: two rows per
 * output, as attn_qkv and ffn_gate_up read them) */
struct wgf_matvec_cfg gr_mat_cfg(uint32_t kc, uint32_t rows, bool paired);

/* gr_kernels.c: one step of a role, for emitters in other files. Fill role/label with
 * gr_step_label, then the prelude (gr_prelude_model, or gr_prelude_shapes after a kernel's
 * own workgroup constants), bindings, grid and cost; gr_step_emit makes the pipeline and bind
 * group and appends the step (it frees the prelude). */
struct gr_step {
    const char          *role;
    char                 label[WGF_STEP_LABEL_MAX];
    const char          *frags[4];
    struct wgf_binding   b[10];
    int                  nb;
    uint32_t             gx, gy, gz;
    int                  slot; /* < 0: the direct grid gx x gy x gz; else the prefill grid slot */
    struct wgf_step_cost cost;
    const struct wgf_constant *k; /* override constants (NULL: none)                    */
    int                  nk;
};
void            gr_step_label(const struct gr *g, struct gr_step *st, const char *role, const char *variant);
void            gr_prelude_model(const struct gr *g, struct wgf_prelude *p, struct wgf_matvec_cfg cfg);
void            gr_prelude_shapes(const struct gr *g, struct wgf_prelude *p);
/* the row format of a matrix part: KC, KCS, QT, NU, QA, QB and the QT_* codes (every kernel
 * that reads weight rows; they include lib_qblock) */
void            gr_prelude_part(const struct gr *g, struct wgf_prelude *p, const struct gr_mat *m,
                                const struct gr_part *pt);
/* gr_step_label with the part's row format in place of the plan's float format */
void            gr_step_label_part(const struct gr *g, struct gr_step *st, const char *role, const char *variant,
                                   const struct gr_part *pt);

/* gr_quant.c: the repacked row layout of a quantized type (lib_qblock.wgsl's table) */
struct gr_qlayout {
    uint32_t words;  /* u32 words of one row (before the 16-byte padding)             */
    uint32_t qa, qb; /* first words of the second and third regions                    */
    uint32_t nu;     /* 32-element units                                               */
    uint32_t ni;     /* matvec items (lib_rows_q): 64 elements for Q4_K..Q6_K, else 32  */
};
bool gr_qlayout(enum wgf_dtype t, uint32_t cols, struct gr_qlayout *L);
/* one row of `cols` elements in t's blocks (as in the file) into its layout; dst holds
 * L.words * 4 bytes, zeroed by the caller */
void gr_qrepack_row(enum wgf_dtype t, const uint8_t *src, uint32_t cols, uint8_t *dst);
/* Lossless widening: every block of `from` is a block of `to` with the same values (Q4_0 and
 * Q5_0 codes minus their offset are Q8_0 codes under the same d; a Q4_K block is a Q5_K
 * block whose fifth bits are zero). A matrix whose rows mix such types is repacked as the
 * wider one (gr_weights.c): one dispatch instead of one per run of rows. */
bool gr_qwidens(enum wgf_dtype from, enum wgf_dtype to);
/* one row of `cols` elements of `from` blocks as `to` blocks, ggml's layout (gr_qwidens) */
void gr_qwiden_row(enum wgf_dtype from, enum wgf_dtype to, const uint8_t *src, uint32_t cols, uint8_t *dst);
enum wgf_status gr_step_emit(const struct gr *g, wgf_schedule *s, struct gr_step *st, struct wgf_prelude *p,
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
/* A prefill matmul's tile and K split, for a part of `rows` rows of `cols` columns. Tiles of 64
 * rows x 64 tokens (4 x 4 an invocation) where the matrix has rows or columns enough, else 32 x 32
 * (4 x 1: more workgroups). Where a full chunk (GR_T_MAX tokens) gives fewer than GR_MM_MIN_WG
 * tiles, K is split in 2, 4, ... (at most GR_MM_MAX_KS parts of GR_MM_MIN_K columns or more) and
 * matmul_reduce adds the partials: Phi-3-mini's o_proj and down (3072 rows, 96 large tiles) take
 * 4 parts, Qwen2.5-0.5B's down (896 rows) 8. Parts of fewer columns lost on the H100: the
 * reduce cost what the spread saved (bench/RESULTS.md, "Split K again"). */
struct gr_mm_shape {
    uint32_t bn, tm, bm, ks;
};
struct gr_mm_shape gr_mm_shape(uint32_t rows, uint32_t cols);
enum wgf_status gr_emit_rope_rows(struct gr *g, wgf_schedule *s, int l, struct wgf_err *err);
enum wgf_status gr_emit_silu_mul_rows(struct gr *g, wgf_schedule *s, struct wgf_err *err);
/* prefill grid slots (g->grid): 0 = (T, 1, 1), 1 = attention, 2.. = matmuls by row count */
#define GR_ARG_ROWS 0u
#define GR_ARG_ATT 1u
/* g->grid for a prefill chunk of T tokens from position pos0 */
void gr_grid_fill(struct gr *g, uint32_t T, uint32_t pos0);

/* gr_ops.c: the ops / fused activations and one emitter per elementary op (one dispatch
 * each). A tensor is a buffer and an element offset; len 0 is a score row: the attended
 * positions st.pos + 1, rows n_ctx apart. */
struct gr_ref {
    wgf_buffer *b;
    uint32_t    off; /* elements */
};
enum gr_bcast {
    GR_B_FULL,   /* b as a                                                                    */
    GR_B_ROW,    /* one b per row (softmax's max and sum)                                    */
    GR_B_SCALAR, /* one b (RMSNorm's rsqrt)                                                  */
    GR_B_PAIRS   /* a: the even, b: the odd elements of one interleaved tensor (b.off = a.off + 1) */
};
enum wgf_status gr_ops_state(struct gr *g, struct wgf_err *err);
enum wgf_status gr_op_unary(struct gr *g, wgf_schedule *s, const char *op_name, uint32_t op, float c, struct gr_ref y,
                            struct gr_ref a, uint32_t rows, uint32_t len, struct wgf_err *err);
enum wgf_status gr_op_binary(struct gr *g, wgf_schedule *s, const char *op_name, uint32_t op, struct gr_ref y,
                             struct gr_ref a, struct gr_ref b, enum gr_bcast bc, uint32_t rows, uint32_t len,
                             struct wgf_err *err);
enum wgf_status gr_op_reduce(struct gr *g, wgf_schedule *s, const char *op_name, uint32_t op, struct gr_ref y,
                             struct gr_ref a, uint32_t rows, uint32_t len, struct wgf_err *err);
enum wgf_status gr_op_rope(struct gr *g, wgf_schedule *s, const char *op_name, uint32_t op, struct gr_ref y,
                           struct gr_ref x, struct gr_ref n, uint32_t pair0, uint32_t n_pairs, struct wgf_err *err);
enum wgf_status gr_op_kv_store(struct gr *g, wgf_schedule *s, int l, bool k, struct gr_ref t, struct wgf_err *err);
enum wgf_status gr_op_attn_scores(struct gr *g, wgf_schedule *s, int l, struct gr_ref y, struct gr_ref q,
                                  struct wgf_err *err);
enum wgf_status gr_op_attn_values(struct gr *g, wgf_schedule *s, int l, wgf_buffer *out, struct gr_ref pr,
                                  struct wgf_err *err);
enum wgf_status gr_op_gemv(struct gr *g, wgf_schedule *s, const char *op_name, const struct gr_mat *w, uint32_t first,
                           uint32_t stride, uint32_t n, bool silu_even, struct gr_ref y, wgf_buffer *x,
                           struct wgf_err *err);
enum wgf_status gr_op_rmsnorm(struct gr *g, wgf_schedule *s, wgf_buffer *y, wgf_buffer *x, struct gr_vec w,
                              struct wgf_err *err);
/* plan_ops.c: every decode layer one op per dispatch (fused: with the paper's three fusions) */
enum wgf_status gr_plan_ops_layers(struct gr *g, wgf_schedule *s, bool fused, struct wgf_err *err);
/* plan_mega.c: its state, then every decode layer in one dispatch */
enum wgf_status gr_mega_state(struct gr *g, struct wgf_err *err);
enum wgf_status gr_plan_mega_layers(struct gr *g, wgf_schedule *s, struct wgf_err *err);

/* plan_roles.c (every plan: the shared schedules, and the layers by g->plan) */
enum wgf_status gr_plan_build(struct gr *g, struct wgf_err *err);
enum wgf_status gr_plan_all_logits(struct gr *g, struct wgf_err *err);
void            gr_plan_free(struct gr *g);

/* messages: "<backend name>: <what>: <runtime's message>" ("gpu-roles: ...") */
enum wgf_status gr_fail(const struct gr *g, struct wgf_err *err, enum wgf_status s, const char *what);

#endif
