/* wgfuse — the first GPU forward backend, "gpu-unfused": one kernel role per dispatch.
 *
 * The baseline every fused plan is measured against, and the path that makes the LLM
 * reliability cases real (RELIABILITY.md 32-34): weights go to the GPU at init, a load
 * failure (out of GPU memory included) frees everything it made, a matrix above the
 * binding limit is split by rows at init (never discovered at dispatch), and a device lost
 * in the middle of generation stops the next forward with WGF_ERR_DEVICE_LOST.
 *
 * A plan is a list of steps (a dispatch of one kernel role with its pipeline, bind group
 * and grid, or a copy into the KV cache at the token's position) built once at init;
 * forward() only writes the token's inputs (embedding row, RoPE cos/sin, attended length)
 * and records the list into one submit. plan_unfused() reads top to bottom as the roles
 * of cpu-ref (src/llm/forward_ref.c); a fused plan is another builder over the same
 * buffers.
 *
 * Numerics: weights converted to f32 on the host with the model's own row decoder
 * (wgf_tensor_row_f32), f32 activations and accumulation everywhere. The RoPE angles and
 * their cos/sin are computed on the host with cpu-ref's exact f32 formula; the GPU only
 * rotates. What differs from cpu-ref is the order of the sums (32-lane matvec, 256-lane
 * reductions) and the shader's exp / inverseSqrt: a few ulps per op.
 *
 * Prefill runs the prompt one token at a time (n forwards of one token, each its own
 * submit): correctness first; a batched prefill is a later plan. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/constants.h" /* WGF_MATVEC_ROWS, WGF_ROPE_WG, WGF_WG_SIZE, WGF_EW_*, ... */
#include "kernels/ids.h"
#include "wgfuse/gpu.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_run.h"

#define GPU_UPLOAD_BYTES (4u << 20) /* host staging for weight conversion, per write         */

/* ======================================================================================
 * State
 * ====================================================================================== */

/* A matrix (rows, cols) on the GPU as f32, in row chunks that each fit one storage binding
 * and one matvec grid: chunk i holds rows [row0, row0 + rows). */
struct gmat_chunk {
    wgf_buffer *buf; /* (rows, cols) f32, label "<tensor label>[i]" when split          */
    uint32_t    row0, rows;
};
struct gmat {
    uint32_t           rows, cols;
    uint32_t           n_chunks;
    struct gmat_chunk *chunk; /* (n_chunks), owned                                     */
};

struct glayer {
    wgf_buffer *attn_norm, *ffn_norm;       /* (dim) f32                                    */
    wgf_buffer *bq, *bk, *bv;               /* (q_dim), (kv_dim), (kv_dim) f32; NULL: no bias*/
    struct gmat wq, wk, wv;                 /* (q_dim, dim), (kv_dim, dim) x2                */
    struct gmat wo;                         /* (dim, q_dim)                                  */
    struct gmat w_gate, w_up, w_down;       /* (hidden, dim) x2, (dim, hidden)               */
    wgf_buffer *kv_cache_k, *kv_cache_v;    /* (n_ctx, kv_dim) f32 each                      */
};

enum step_kind {
    STEP_DISPATCH,   /* pipeline + bind group over `groups` workgroups                          */
    STEP_COPY_AT_POS /* src[0, bytes) -> dst[pos * bytes, +bytes): the KV-cache store          */
};
struct step {
    enum step_kind  kind;
    wgf_pipeline   *pl;
    wgf_bind_group *bg; /* owned                                                         */
    uint32_t        groups;
    wgf_buffer     *src, *dst;
    uint64_t        bytes;
};

struct gpu {
    wgf_ctx                     *ctx; /* borrowed                                           */
    const struct wgf_llm_model  *m;
    struct wgf_llm_config        c;
    uint32_t                     n_ctx, q_dim, kv_dim, half;
    uint64_t                     max_bind;  /* storage binding limit in use (bytes)        */
    struct glayer               *layers;    /* (n_layers)                                   */
    wgf_buffer                  *out_norm;  /* (dim) f32                                    */
    struct gmat                  lm_head;   /* (vocab, dim), usually split                  */
    /* activations, all f32 */
    wgf_buffer *x[2];     /* (dim) residual stream, ping-pong: attn residual x[0] -> x[1],
                             ffn residual x[1] -> x[0]; the embedding is written to x[0] */
    wgf_buffer *xb;       /* (dim) normed input of attention / FFN / lm_head             */
    wgf_buffer *q;        /* (q_dim)                                                     */
    wgf_buffer *k, *v;    /* (kv_dim) this token's key/value before the cache store      */
    wgf_buffer *att;      /* (n_heads, n_ctx) attention scores scratch                   */
    wgf_buffer *att_out;  /* (q_dim) attention output (before o_proj)                    */
    wgf_buffer *proj;     /* (dim) o_proj / down output (before the residual add)        */
    wgf_buffer *hb;       /* (2 * hidden) [gate; up]                                     */
    wgf_buffer *hb_act;   /* (hidden) silu(gate) * up                                    */
    wgf_buffer *logits;   /* (vocab)                                                     */
    wgf_buffer *step_buf; /* (1) u32: positions attended (pos + 1)                       */
    wgf_buffer *rope_cs;  /* (2, half) f32: cos, sin of this token's angles              */
    /* every buffer above, in creation order, for free (owned) */
    wgf_buffer **owned;
    uint32_t     n_owned, cap_owned;
    /* the plan */
    const char  *plan_name;
    struct step *steps;
    uint32_t     n_steps, cap_steps;
    /* host side */
    float   *row;      /* (dim) embedding row                                           */
    float   *inv_freq; /* (half) RoPE inverse frequencies                                */
    float   *cs;       /* (2, half) cos/sin for one position                              */
    float    rope_scale;
    int      rope_seq; /* seq_len inv_freq was computed for (-1: none)                    */
};

/* A runtime call failed: its message is on the context. */
static enum wgf_status ctx_fail(struct gpu *g, struct wgf_err *err, enum wgf_status s, const char *what)
{
    return wgf_fail(err, s, "gpu: %s: %s", what, wgf_ctx_last_error(g->ctx));
}

/* ======================================================================================
 * Buffers and uploads
 * ====================================================================================== */

/* Create a labelled storage buffer owned by g (freed by gpu_free). */
static enum wgf_status gbuf(struct gpu *g, const char *label, uint64_t bytes, wgf_buffer **out, struct wgf_err *err)
{
    *out = NULL;
    if (g->n_owned == g->cap_owned) {
        uint32_t     cap = g->cap_owned ? 2 * g->cap_owned : 64;
        wgf_buffer **p   = realloc(g->owned, cap * sizeof *p);
        if (!p) return wgf_fail(err, WGF_ERR_NOMEM, "gpu: buffer list for '%s'", label);
        g->owned     = p;
        g->cap_owned = cap;
    }
    enum wgf_status s = wgf_buffer_create(g->ctx, label, bytes, WGF_BUF_STORAGE, out);
    if (s) return ctx_fail(g, err, s, "load");
    g->owned[g->n_owned++] = *out;
    return WGF_OK;
}

/* An f32 vector of the model (norm weight, bias) as a buffer; NULL when absent. */
static enum wgf_status upload_vec(struct gpu *g, const struct wgf_tensor *t, const char *label, wgf_buffer **out,
                                  struct wgf_err *err)
{
    *out = NULL;
    if (!t->data) return WGF_OK;
    uint64_t        n = (uint64_t)wgf_tensor_nelems(t) * 4;
    enum wgf_status s = gbuf(g, label, n, out, err);
    if (!s && (s = wgf_buffer_write(g->ctx, *out, 0, t->data, (size_t)n))) return ctx_fail(g, err, s, "upload");
    return s;
}

/* Rows per chunk of a matrix with rows of `row_bytes`: what fits one binding, one buffer
 * and one matvec grid. 0 when a single row does not fit. */
static uint64_t rows_per_chunk(const struct gpu *g, uint64_t row_bytes)
{
    const struct wgf_limits *lim = wgf_ctx_limits(g->ctx);
    uint64_t                 cap = g->max_bind < lim->max_buffer_size ? g->max_bind : lim->max_buffer_size;
    uint64_t                 n   = cap / row_bytes;
    uint64_t                 grid = (uint64_t)lim->max_compute_workgroups_per_dimension * WGF_MATVEC_ROWS;
    return n < grid ? n : grid;
}

/* Refuse, before anything is created, a matrix that cannot be split by rows. */
static enum wgf_status check_split(const struct gpu *g, const struct wgf_tensor *t, const char *label,
                                   struct wgf_err *err)
{
    uint64_t row_bytes = (uint64_t)wgf_tensor_ncols(t) * 4;
    if (rows_per_chunk(g, row_bytes) == 0)
        return wgf_fail(err, WGF_ERR_LIMIT,
                        "gpu: tensor '%s' (%s): one row of %lld f32 is %llu bytes, above the storage binding limit of "
                        "%llu bytes; it cannot be split by rows",
                        t->name, label, (long long)wgf_tensor_ncols(t), (unsigned long long)row_bytes,
                        (unsigned long long)g->max_bind);
    return WGF_OK;
}

/* A matrix of the model as f32 row chunks: converted row by row with the model's decoder
 * (wgf_tensor_row_f32: f32/f16/bf16/q8_0/q4_0) through a host staging buffer. */
static enum wgf_status upload_mat(struct gpu *g, const struct wgf_tensor *t, const char *label, struct gmat *out,
                                  struct wgf_err *err)
{
    memset(out, 0, sizeof *out);
    out->rows          = (uint32_t)wgf_tensor_nrows(t);
    out->cols          = (uint32_t)wgf_tensor_ncols(t);
    uint64_t row_bytes = (uint64_t)out->cols * 4;
    uint64_t per       = rows_per_chunk(g, row_bytes);
    if (per == 0) return check_split(g, t, label, err);
    out->n_chunks = (uint32_t)((out->rows + per - 1) / per);
    out->chunk    = calloc(out->n_chunks, sizeof *out->chunk);
    uint32_t stage_rows = GPU_UPLOAD_BYTES / row_bytes ? (uint32_t)(GPU_UPLOAD_BYTES / row_bytes) : 1;
    float   *stage      = malloc((size_t)stage_rows * row_bytes);
    if (!out->chunk || !stage) {
        free(stage);
        return wgf_fail(err, WGF_ERR_NOMEM, "gpu: staging for '%s'", label);
    }
    enum wgf_status s = WGF_OK;
    for (uint32_t i = 0; i < out->n_chunks && !s; i++) {
        struct gmat_chunk *ch = &out->chunk[i];
        ch->row0              = (uint32_t)(i * per);
        ch->rows              = out->rows - ch->row0 < per ? out->rows - ch->row0 : (uint32_t)per;
        char lb[160];
        if (out->n_chunks == 1) snprintf(lb, sizeof lb, "%s", label);
        else snprintf(lb, sizeof lb, "%s[%u]", label, i);
        if ((s = gbuf(g, lb, (uint64_t)ch->rows * row_bytes, &ch->buf, err))) break;
        for (uint32_t r = 0; r < ch->rows && !s; r += stage_rows) {
            uint32_t n = ch->rows - r < stage_rows ? ch->rows - r : stage_rows;
            for (uint32_t j = 0; j < n; j++) wgf_tensor_row_f32(t, (int64_t)ch->row0 + r + j, stage + (size_t)j * out->cols);
            if ((s = wgf_buffer_write(g->ctx, ch->buf, (uint64_t)r * row_bytes, stage, (size_t)n * row_bytes)))
                s = ctx_fail(g, err, s, "upload");
        }
    }
    free(stage);
    return s;
}

/* ======================================================================================
 * The plan: steps built once at init
 * ====================================================================================== */

static struct step *add_step(struct gpu *g, struct wgf_err *err)
{
    if (g->n_steps == g->cap_steps) {
        uint32_t     cap = g->cap_steps ? 2 * g->cap_steps : 64;
        struct step *p   = realloc(g->steps, cap * sizeof *p);
        if (!p) {
            wgf_fail(err, WGF_ERR_NOMEM, "gpu: plan steps");
            return NULL;
        }
        g->steps     = p;
        g->cap_steps = cap;
    }
    struct step *st = &g->steps[g->n_steps++];
    memset(st, 0, sizeof *st);
    return st;
}

/* One dispatch of `kernel` (an embedded kernel) with override constants, over `groups`
 * workgroups, binding bufs[i] at @binding(i). `label` names the pipeline (role + variant). */
static enum wgf_status dispatch(struct gpu *g, const char *label, enum wgf_kernel kernel, const struct wgf_constant *k,
                                int n_k, wgf_buffer *const *bufs, int n_bufs, uint32_t groups, struct wgf_err *err)
{
    struct wgf_pipeline_desc d = {.label = label, .wgsl = wgf__kernel_wgsl(kernel), .constants = k, .n_constants = n_k};
    wgf_pipeline            *pl;
    enum wgf_status          s = wgf_pipeline_get(g->ctx, &d, &pl);
    if (s) return ctx_fail(g, err, s, label);
    struct step *st = add_step(g, err);
    if (!st) return WGF_ERR_NOMEM;
    st->kind   = STEP_DISPATCH;
    st->pl     = pl;
    st->groups = groups;
    if ((s = wgf_bind_group_create(g->ctx, pl, bufs, n_bufs, &st->bg))) return ctx_fail(g, err, s, label);
    return WGF_OK;
}

/* y[row0 + r] = W x (+ bias[row0 + r]) for every chunk of W. */
static enum wgf_status matvec(struct gpu *g, const char *label, wgf_buffer *y, wgf_buffer *x, const struct gmat *w,
                              wgf_buffer *bias, uint32_t y_row0, struct wgf_err *err)
{
    for (uint32_t i = 0; i < w->n_chunks; i++) {
        const struct gmat_chunk *ch  = &w->chunk[i];
        struct wgf_constant      k[] = {{"N", ch->rows},
                                        {"K", w->cols},
                                        {"RESIDUAL", bias ? 1 : 0},
                                        {"ROW0", y_row0 + ch->row0}};
        wgf_buffer *bufs[] = {y, x, ch->buf, bias ? bias : x}; /* r unused without bias: x (read-only) */
        enum wgf_status s  = dispatch(g, label, WGF_KERNEL_MATVEC, k, 4, bufs, 4,
                                      (ch->rows + WGF_MATVEC_ROWS - 1) / WGF_MATVEC_ROWS, err);
        if (s) return s;
    }
    return WGF_OK;
}

static enum wgf_status rmsnorm(struct gpu *g, wgf_buffer *y, wgf_buffer *x, wgf_buffer *w, struct wgf_err *err)
{
    struct wgf_constant k[]    = {{"H", g->c.dim}, {"EPS", g->c.norm_eps}};
    wgf_buffer         *bufs[] = {y, x, w};
    return dispatch(g, "rmsnorm_f32", WGF_KERNEL_RMSNORM, k, 2, bufs, 3, 1, err);
}

static enum wgf_status rope(struct gpu *g, const char *label, wgf_buffer *v, uint32_t n_heads, struct wgf_err *err)
{
    struct wgf_constant k[]    = {{"N_HEADS", n_heads}, {"HEAD_DIM", g->c.head_dim}, {"HALF", g->half}};
    wgf_buffer         *bufs[] = {v, g->rope_cs};
    return dispatch(g, label, WGF_KERNEL_ROPE, k, 3, bufs, 2, (n_heads * g->half + WGF_ROPE_WG - 1) / WGF_ROPE_WG, err);
}

/* y = a + b (elementwise ADD), or y = silu(a[i]) * a[n + i] (SILU_MUL) */
static enum wgf_status elementwise(struct gpu *g, const char *label, int op, uint32_t n, wgf_buffer *y, wgf_buffer *a,
                                   wgf_buffer *b, struct wgf_err *err)
{
    struct wgf_constant k[]    = {{"OP", op}, {"N", n}};
    wgf_buffer         *bufs[] = {y, a, b};
    return dispatch(g, label, WGF_KERNEL_ELEMENTWISE, k, 2, bufs, 3, (n + WGF_WG_SIZE - 1) / WGF_WG_SIZE, err);
}

static enum wgf_status kv_store(struct gpu *g, wgf_buffer *src, wgf_buffer *cache, struct wgf_err *err)
{
    struct step *st = add_step(g, err);
    if (!st) return WGF_ERR_NOMEM;
    st->kind  = STEP_COPY_AT_POS;
    st->src   = src;
    st->dst   = cache;
    st->bytes = (uint64_t)g->kv_dim * 4;
    return WGF_OK;
}

static enum wgf_status attention(struct gpu *g, uint32_t l, struct wgf_err *err)
{
    const struct glayer *L   = &g->layers[l];
    struct wgf_constant  k[] = {{"N_HEADS", g->c.n_heads},  {"N_KV_HEADS", g->c.n_kv_heads}, {"HEAD_DIM", g->c.head_dim},
                                {"N_CTX", g->n_ctx},        {"SCALE", 1.0f / sqrtf((float)g->c.head_dim)},
                                {"WINDOW", wgf_llm_layer_window(&g->c, (int)l)}};
    wgf_buffer *bufs[] = {g->att_out, g->att, g->q, L->kv_cache_k, L->kv_cache_v, g->step_buf};
    return dispatch(g, "attention_f32", WGF_KERNEL_ATTENTION, k, 6, bufs, 6, (uint32_t)g->c.n_heads, err);
}

/* The unfused plan, in cpu-ref's role order. The embedding row is written to x[0] by the
 * host before the steps run. */
static enum wgf_status plan_unfused(struct gpu *g, struct wgf_err *err)
{
    const uint32_t  dim = (uint32_t)g->c.dim, hid = (uint32_t)g->c.hidden_dim;
    enum wgf_status s   = WGF_OK;
    g->plan_name        = "unfused";
    for (uint32_t l = 0; l < (uint32_t)g->c.n_layers && !s; l++) {
        const struct glayer *L = &g->layers[l];
        /* attn_norm: xb = rmsnorm(x) * attn_norm */
        if ((s = rmsnorm(g, g->xb, g->x[0], L->attn_norm, err))) break;
        /* qkv (+bias, Qwen2): q = xb.Wq^T + bq, k = xb.Wk^T + bk, v = xb.Wv^T + bv */
        if ((s = matvec(g, "matvec_attn_q", g->q, g->xb, &L->wq, L->bq, 0, err)) ||
            (s = matvec(g, "matvec_attn_k", g->k, g->xb, &L->wk, L->bk, 0, err)) ||
            (s = matvec(g, "matvec_attn_v", g->v, g->xb, &L->wv, L->bv, 0, err)))
            break;
        /* rope: rotate q and k heads by this token's angles */
        if ((s = rope(g, "rope_q", g->q, (uint32_t)g->c.n_heads, err)) ||
            (s = rope(g, "rope_k", g->k, (uint32_t)g->c.n_kv_heads, err)))
            break;
        /* kv store: cache[l][pos] = k, v */
        if ((s = kv_store(g, g->k, L->kv_cache_k, err)) || (s = kv_store(g, g->v, L->kv_cache_v, err))) break;
        /* attention: att_out = softmax(q.K^T / sqrt(hd), positions 0..pos in the layer's
         * window) . V, GQA */
        if ((s = attention(g, l, err))) break;
        /* o_proj, residual: x[1] = x[0] + att_out.Wo^T */
        if ((s = matvec(g, "matvec_attn_output", g->proj, g->att_out, &L->wo, NULL, 0, err)) ||
            (s = elementwise(g, "add_residual", WGF_EW_ADD, dim, g->x[1], g->x[0], g->proj, err)))
            break;
        /* ffn_norm: xb = rmsnorm(x) * ffn_norm */
        if ((s = rmsnorm(g, g->xb, g->x[1], L->ffn_norm, err))) break;
        /* gate/up into one buffer: hb = [xb.Wgate^T; xb.Wup^T] */
        if ((s = matvec(g, "matvec_ffn_gate", g->hb, g->xb, &L->w_gate, NULL, 0, err)) ||
            (s = matvec(g, "matvec_ffn_up", g->hb, g->xb, &L->w_up, NULL, hid, err)))
            break;
        /* silu*mul: hb_act = silu(gate) * up */
        if ((s = elementwise(g, "silu_mul", WGF_EW_SILU_MUL, hid, g->hb_act, g->hb, g->hb, err))) break;
        /* down, residual: x[0] = x[1] + hb_act.Wdown^T */
        if ((s = matvec(g, "matvec_ffn_down", g->proj, g->hb_act, &L->w_down, NULL, 0, err)) ||
            (s = elementwise(g, "add_residual", WGF_EW_ADD, dim, g->x[0], g->x[1], g->proj, err)))
            break;
    }
    if (s) return s;
    /* final norm + lm_head (in row chunks when split): logits = rmsnorm(x) . lm_head^T */
    if ((s = rmsnorm(g, g->xb, g->x[0], g->out_norm, err))) return s;
    return matvec(g, "matvec_output", g->logits, g->xb, &g->lm_head, NULL, 0, err);
}

/* ======================================================================================
 * Backend glue
 * ====================================================================================== */

static void gmat_free(struct gmat *m)
{
    free(m->chunk); /* the chunk buffers are in g->owned */
    memset(m, 0, sizeof *m);
}

static void gpu_free(struct wgf_llm_backend *b)
{
    struct gpu *g = b->impl;
    if (!g) return;
    for (uint32_t i = 0; i < g->n_steps; i++) wgf_bind_group_free(g->steps[i].bg);
    free(g->steps);
    for (uint32_t i = 0; i < g->n_owned; i++) wgf_buffer_free(g->owned[i]);
    free(g->owned);
    if (g->layers)
        for (int l = 0; l < g->c.n_layers; l++) {
            struct glayer *L = &g->layers[l];
            gmat_free(&L->wq), gmat_free(&L->wk), gmat_free(&L->wv), gmat_free(&L->wo);
            gmat_free(&L->w_gate), gmat_free(&L->w_up), gmat_free(&L->w_down);
        }
    free(g->layers);
    gmat_free(&g->lm_head);
    free(g->row);
    free(g->inv_freq);
    free(g->cs);
    free(g);
    b->impl = NULL;
}

/* Everything that must fit one binding, checked before any buffer exists: a refusal at
 * load leaves nothing behind and names what does not fit. */
static enum wgf_status check_limits(struct gpu *g, struct wgf_err *err)
{
    const struct wgf_llm_config  *c = &g->c;
    const struct wgf_llm_weights *W = &g->m->weights;
    enum wgf_status               s;
    if ((uint32_t)c->head_dim > WGF_ATT_MAX_HEAD_DIM)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "gpu: head_dim %d > %u (attention.wgsl: one thread per dim)",
                        c->head_dim, WGF_ATT_MAX_HEAD_DIM);
    if ((uint32_t)c->n_heads > wgf_ctx_limits(g->ctx)->max_compute_workgroups_per_dimension)
        return wgf_fail(err, WGF_ERR_LIMIT, "gpu: %d heads > maxComputeWorkgroupsPerDimension", c->n_heads);
    if ((s = check_split(g, &W->lm_head, "llm.output.weight", err))) return s;
    for (int l = 0; l < c->n_layers; l++) {
        const struct wgf_layer_weights *L = &W->layers[l];
        const struct {
            const struct wgf_tensor *t;
            const char              *name;
        } mats[] = {{&L->wq, "attn_q"},     {&L->wk, "attn_k"}, {&L->wv, "attn_v"},      {&L->wo, "attn_output"},
                    {&L->w_gate, "ffn_gate"}, {&L->w_up, "ffn_up"}, {&L->w_down, "ffn_down"}};
        for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++) {
            char lb[96];
            snprintf(lb, sizeof lb, "llm.blk%d.%s.weight", l, mats[i].name);
            if ((s = check_split(g, mats[i].t, lb, err))) return s;
        }
    }
    const struct {
        const char *label;
        uint64_t    bytes;
    } act[] = {
        {"llm.blk*.kv_cache_k/v", (uint64_t)g->n_ctx * g->kv_dim * 4},
        {"llm.att", (uint64_t)c->n_heads * g->n_ctx * 4},
        {"llm.hb", (uint64_t)c->hidden_dim * 2 * 4},
        {"llm.q", (uint64_t)g->q_dim * 4},
        {"llm.x", (uint64_t)c->dim * 4},
        {"llm.logits", (uint64_t)c->vocab_size * 4},
    };
    for (size_t i = 0; i < sizeof act / sizeof act[0]; i++)
        if (act[i].bytes > g->max_bind)
            return wgf_fail(err, WGF_ERR_LIMIT,
                            "gpu: buffer '%s' needs %llu bytes in one binding, above the storage binding limit of %llu "
                            "bytes (ctx %u; a smaller --ctx shrinks the KV cache)",
                            act[i].label, (unsigned long long)act[i].bytes, (unsigned long long)g->max_bind, g->n_ctx);
    return WGF_OK;
}

/* Weights first (in model order), then the KV cache and activations. */
static enum wgf_status create_buffers(struct gpu *g, struct wgf_err *err)
{
    const struct wgf_llm_config  *c = &g->c;
    const struct wgf_llm_weights *W = &g->m->weights;
    enum wgf_status               s;
    char                          lb[96];
    for (int l = 0; l < c->n_layers; l++) {
        const struct wgf_layer_weights *M = &W->layers[l];
        struct glayer                  *L = &g->layers[l];
#define LB(what) (snprintf(lb, sizeof lb, "llm.blk%d.%s", l, what), lb)
        if ((s = upload_vec(g, &M->attn_norm, LB("attn_norm.weight"), &L->attn_norm, err)) ||
            (s = upload_mat(g, &M->wq, LB("attn_q.weight"), &L->wq, err)) ||
            (s = upload_mat(g, &M->wk, LB("attn_k.weight"), &L->wk, err)) ||
            (s = upload_mat(g, &M->wv, LB("attn_v.weight"), &L->wv, err)) ||
            (s = upload_vec(g, &M->bq, LB("attn_q.bias"), &L->bq, err)) ||
            (s = upload_vec(g, &M->bk, LB("attn_k.bias"), &L->bk, err)) ||
            (s = upload_vec(g, &M->bv, LB("attn_v.bias"), &L->bv, err)) ||
            (s = upload_mat(g, &M->wo, LB("attn_output.weight"), &L->wo, err)) ||
            (s = upload_vec(g, &M->ffn_norm, LB("ffn_norm.weight"), &L->ffn_norm, err)) ||
            (s = upload_mat(g, &M->w_gate, LB("ffn_gate.weight"), &L->w_gate, err)) ||
            (s = upload_mat(g, &M->w_up, LB("ffn_up.weight"), &L->w_up, err)) ||
            (s = upload_mat(g, &M->w_down, LB("ffn_down.weight"), &L->w_down, err)))
            return s;
    }
    if ((s = upload_vec(g, &W->out_norm, "llm.output_norm.weight", &g->out_norm, err)) ||
        (s = upload_mat(g, &W->lm_head, "llm.output.weight", &g->lm_head, err)))
        return s;
    uint64_t kv_bytes = (uint64_t)g->n_ctx * g->kv_dim * 4;
    for (int l = 0; l < c->n_layers; l++)
        if ((s = gbuf(g, LB("kv_cache_k"), kv_bytes, &g->layers[l].kv_cache_k, err)) ||
            (s = gbuf(g, LB("kv_cache_v"), kv_bytes, &g->layers[l].kv_cache_v, err)))
            return s;
#undef LB
    const uint64_t dim = (uint64_t)c->dim * 4, hid = (uint64_t)c->hidden_dim * 4;
    if ((s = gbuf(g, "llm.x[0]", dim, &g->x[0], err)) || (s = gbuf(g, "llm.x[1]", dim, &g->x[1], err)) ||
        (s = gbuf(g, "llm.xb", dim, &g->xb, err)) || (s = gbuf(g, "llm.q", (uint64_t)g->q_dim * 4, &g->q, err)) ||
        (s = gbuf(g, "llm.k", (uint64_t)g->kv_dim * 4, &g->k, err)) ||
        (s = gbuf(g, "llm.v", (uint64_t)g->kv_dim * 4, &g->v, err)) ||
        (s = gbuf(g, "llm.att", (uint64_t)c->n_heads * g->n_ctx * 4, &g->att, err)) ||
        (s = gbuf(g, "llm.att_out", (uint64_t)g->q_dim * 4, &g->att_out, err)) ||
        (s = gbuf(g, "llm.proj", dim, &g->proj, err)) || (s = gbuf(g, "llm.hb", 2 * hid, &g->hb, err)) ||
        (s = gbuf(g, "llm.hb_act", hid, &g->hb_act, err)) ||
        (s = gbuf(g, "llm.logits", (uint64_t)c->vocab_size * 4, &g->logits, err)) ||
        (s = gbuf(g, "llm.step", 4, &g->step_buf, err)) ||
        (s = gbuf(g, "llm.rope_cs", (uint64_t)g->half * 2 * 4, &g->rope_cs, err)))
        return s;
    return WGF_OK;
}

static enum wgf_status gpu_init(struct wgf_llm_backend *b, const struct wgf_llm_model *m,
                                const struct wgf_llm_backend_options *opt, struct wgf_err *err)
{
    b->impl = NULL;
    if (!opt || !opt->gpu)
        return wgf_fail(err, WGF_ERR_ARG, "gpu: the gpu backend needs a GPU context (wgf_llm_backend_options.gpu)");
    wgf_ctx *ctx = opt->gpu;
    if (opt->act_q8)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED,
                        "gpu (unfused): --activations q8 is not implemented here (it dequantizes to f32 at load); "
                        "the plans roles, fused and ops have it");
    if (wgf_ctx_lost(ctx)) return wgf_fail(err, WGF_ERR_DEVICE_LOST, "gpu: device lost: %s", wgf_ctx_last_error(ctx));
    enum wgf_status s = wgf__llm_check_model(m, "gpu", err);
    if (s) return s;
    const struct wgf_llm_config *c = &m->cfg;
    uint32_t n_ctx = opt->n_ctx ? opt->n_ctx : (uint32_t)(c->max_seq_len > 0 ? c->max_seq_len : 2048);
    if (n_ctx > (1u << 24)) return wgf_fail(err, WGF_ERR_LIMIT, "gpu: context %u > %u", n_ctx, 1u << 24);

    struct gpu *g = calloc(1, sizeof *g);
    if (!g) return wgf_fail(err, WGF_ERR_NOMEM, "gpu: state");
    b->impl     = g;
    g->ctx      = ctx;
    g->m        = m;
    g->c        = *c;
    g->n_ctx    = n_ctx;
    g->q_dim    = (uint32_t)(c->n_heads * c->head_dim);
    g->kv_dim   = (uint32_t)(c->n_kv_heads * c->head_dim);
    g->half     = (uint32_t)c->rope_dim / 2;
    g->rope_seq = -1;
    g->max_bind = wgf_ctx_limits(ctx)->max_storage_buffer_binding_size;
    if (opt->max_binding_bytes && opt->max_binding_bytes < g->max_bind) g->max_bind = opt->max_binding_bytes;
    g->layers   = calloc((size_t)c->n_layers, sizeof *g->layers);
    g->row      = malloc((size_t)c->dim * sizeof *g->row);
    g->inv_freq = malloc((size_t)g->half * sizeof *g->inv_freq);
    g->cs       = malloc((size_t)g->half * 2 * sizeof *g->cs);
    if (!g->layers || !g->row || !g->inv_freq || !g->cs) {
        gpu_free(b);
        return wgf_fail(err, WGF_ERR_NOMEM, "gpu: host state");
    }
    if (!(s = check_limits(g, err)) && !(s = create_buffers(g, err)) && !(s = plan_unfused(g, err)) &&
        (s = wgf_ctx_wait(ctx))) /* the uploads landed and nothing was reported */
        s = ctx_fail(g, err, s, "weight upload");
    if (s) {
        gpu_free(b); /* every buffer and bind group made so far; the context stays usable */
        return s;
    }
    b->n_vocab = (uint32_t)c->vocab_size;
    b->n_ctx   = n_ctx;
    for (uint32_t i = 0; i < g->n_steps; i++) b->dispatches_per_token += g->steps[i].kind == STEP_DISPATCH;
    return WGF_OK;
}

/* One token at position pos: inputs written, every step in one submit; logits read back
 * into `logits` when not NULL. */
static enum wgf_status forward_token(struct gpu *g, int32_t token, uint32_t pos, float *logits, struct wgf_err *err)
{
    char what[64];
    snprintf(what, sizeof what, "forward at position %u", pos);
    /* embed: x[0] = tok_embd[token] (the host copies the row) */
    wgf_tensor_row_f32(&g->m->weights.tok_embd, token, g->row);
    /* rope angles as cpu-ref computes them: (float)pos * inv_freq[i], then cosf/sinf */
    for (uint32_t i = 0; i < g->half; i++) {
        float a            = (float)pos * g->inv_freq[i];
        g->cs[i]           = cosf(a) * g->rope_scale;
        g->cs[g->half + i] = sinf(a) * g->rope_scale;
    }
    uint32_t        n_pos = pos + 1;
    enum wgf_status s;
    if ((s = wgf_buffer_write(g->ctx, g->x[0], 0, g->row, (size_t)g->c.dim * 4)) ||
        (s = wgf_buffer_write(g->ctx, g->rope_cs, 0, g->cs, (size_t)g->half * 2 * 4)) ||
        (s = wgf_buffer_write(g->ctx, g->step_buf, 0, &n_pos, 4)))
        return ctx_fail(g, err, s, what);
    wgf_recorder *r;
    if ((s = wgf_recorder_begin(g->ctx, "llm.token", NULL, &r))) return ctx_fail(g, err, s, what);
    for (uint32_t i = 0; i < g->n_steps && !s; i++) {
        const struct step *st = &g->steps[i];
        if (st->kind == STEP_DISPATCH) s = wgf_recorder_dispatch(r, st->pl, st->bg, st->groups, 1, 1);
        else s = wgf_recorder_copy(r, st->src, 0, st->dst, (uint64_t)pos * st->bytes, st->bytes);
    }
    if (s) {
        wgf_recorder_abandon(r);
        return ctx_fail(g, err, s, what);
    }
    if ((s = wgf_recorder_submit(r))) return ctx_fail(g, err, s, what);
    if (logits && (s = wgf_buffer_read(g->ctx, g->logits, 0, logits, (size_t)g->c.vocab_size * 4)))
        return ctx_fail(g, err, s, what);
    return WGF_OK;
}

static enum wgf_status gpu_forward(struct wgf_llm_backend *b, const int32_t *tokens, uint32_t n, uint32_t pos,
                                   float *logits, bool all_logits, struct wgf_err *err)
{
    struct gpu *g = b->impl;
    if (!g) return wgf_fail(err, WGF_ERR_ARG, "gpu: backend not initialised");
    if (n == 0) return wgf_fail(err, WGF_ERR_ARG, "gpu: forward of zero tokens");
    if (pos > g->n_ctx || n > g->n_ctx - pos)
        return wgf_fail(err, WGF_ERR_CONTEXT, "%llu tokens > ctx %u", (unsigned long long)pos + n, g->n_ctx);
    if (wgf_ctx_lost(g->ctx)) { /* stop before anything is written: the caller keeps its tokens */
        char what[64];
        snprintf(what, sizeof what, "forward at position %u", pos);
        wgf_ctx_wait(g->ctx); /* puts the loss message on the context */
        return ctx_fail(g, err, WGF_ERR_DEVICE_LOST, what);
    }
    const uint32_t V = (uint32_t)g->c.vocab_size;
    for (uint32_t i = 0; i < n; i++)
        if (tokens[i] < 0 || (uint32_t)tokens[i] >= V)
            return wgf_fail(err, WGF_ERR_ARG, "token id %d at position %u out of range [0, %u)", (int)tokens[i], pos + i,
                            V);
    /* inv_freq depends on the sequence length only for longrope; like cpu-ref, one value
     * (seq = pos + n) for the whole call */
    int seq = (int)(pos + n);
    if (g->rope_seq < 0 || (g->c.rope_scaling.type == WGF_ROPE_SCALING_LONGROPE && seq != g->rope_seq)) {
        wgf_llm_rope_inv_freq(&g->c, seq, g->inv_freq, &g->rope_scale);
        g->rope_seq = seq;
    }
    for (uint32_t i = 0; i < n; i++) {
        float          *out = all_logits ? logits + (size_t)i * V : (i + 1 == n ? logits : NULL);
        enum wgf_status s   = forward_token(g, tokens[i], pos + i, out, err);
        if (s) return s;
    }
    return WGF_OK;
}

static void gpu_reset(struct wgf_llm_backend *b)
{
    struct gpu *g = b->impl;
    if (g) g->rope_seq = -1; /* the cache is overwritten position by position */
}

const struct wgf_llm_backend wgf_llm_backend_gpu = {
    .name = "gpu-unfused", .init = gpu_init, .forward = gpu_forward, .reset = gpu_reset, .free = gpu_free,
    .plan = "unfused",
};
