/* wgfuse — the plans "ops" and "fused": the unfused end of the fusion dial (docs/fusion.md).
 *
 * ops: a decode layer as an eager framework runs it (Hugging Face's Qwen2/Llama decoder layer
 * in PyTorch eager, as torch-webgpu dispatches it): one dispatch per elementary op, every op
 * reading its inputs from and writing its output to memory. The matmuls are the roles plan's
 * gemv over the same weights, so only the granularity differs from the roles plan.
 *
 * fused: ops plus exactly the three fusions of the dispatch paper, nothing else:
 *   RMSNorm 6 -> 1           (square, mean, + eps, rsqrt, * rstd, * weight: rmsnorm_rows)
 *   MLP gate + up + SiLU 3 -> 1 (one gemv over the interleaved gate/up rows, SiLU on the
 *                             gate rows; the mul stays its own op)
 *   K + V 2 -> 1             (one gemv over the k and v rows of W_qkv; with a bias, one add)
 *
 * Dispatches per layer (Qwen2, with q/k/v bias; Llama/Phi-3 have no bias adds):
 *                                          ops   fused
 *   attn_norm                               6      1
 *   q, k, v matmuls                         3      2
 *   q, k, v bias adds                       3      2
 *   RoPE q, k (x cos, -x2, cat, x sin, add) 10     10
 *   KV-cache store k, v                     2      2
 *   scores, scale, mask                     3      3
 *   softmax (max, sub-exp, sum, div)        4      4
 *   values, o_proj, residual add            3      3
 *   ffn_norm                                6      1
 *   gate, up, SiLU                          3      1
 *   mul, down, residual add                 3      3
 *   total                                   46     32   (Llama / Phi-3: 43, 30)
 * The embedding, the LM head (final norm + logits + argmax partials) and the sampler are the
 * shared schedules of every plan (plan_roles.c).
 *
 * Layout: W_qkv's rows are stored in RoPE pair order (lib_pairs), so q and k stay in that
 * order from the matmul to the cache store, which puts k into the cache in natural order; the
 * score matmul reads q through the inverse map. Every op writes a tensor of its own
 * (struct gr_ops), as an eager framework allocates one per op. */
#include "kernels/constants.h"
#include "llm/gpu/gr.h"

struct plan {
    struct gr      *g;
    wgf_schedule   *s;
    bool            fused;
    struct wgf_err *err;
};

static struct gr_ref T(wgf_buffer *b) { return (struct gr_ref){b, 0}; }
static struct gr_ref TO(wgf_buffer *b, uint32_t off) { return (struct gr_ref){b, off}; }
static struct gr_ref VEC(const struct gr *g, struct gr_vec v, uint32_t off)
{
    return (struct gr_ref){g->vecs, (uint32_t)(v.off / 4) + off};
}

/* xn = rmsnorm(x) * w, as torch: x.pow(2).mean(-1) + eps, rsqrt, x * rstd, weight * (.) */
static enum wgf_status rmsnorm(struct plan *P, wgf_buffer *x, struct gr_vec w)
{
    struct gr     *g = P->g;
    struct gr_ops *o = &g->ops;
    enum wgf_status r;
    if (P->fused) return gr_op_rmsnorm(g, P->s, o->xn, x, w, P->err);
    if ((r = gr_op_unary(g, P->s, "square", WGF_OPU_SQUARE, 0, T(o->sq), T(x), 1, g->dim, P->err)) ||
        (r = gr_op_reduce(g, P->s, "mean", WGF_OPR_MEAN, T(o->mean), T(o->sq), 1, g->dim, P->err)) ||
        (r = gr_op_unary(g, P->s, "add_eps", WGF_OPU_ADD_C, g->c.norm_eps, T(o->var), T(o->mean), 1, 1, P->err)) ||
        (r = gr_op_unary(g, P->s, "rsqrt", WGF_OPU_RSQRT, 0, T(o->rstd), T(o->var), 1, 1, P->err)) ||
        (r = gr_op_binary(g, P->s, "mul_rstd", WGF_OPB_MUL, T(o->xs), T(x), T(o->rstd), GR_B_SCALAR, 1, g->dim,
                          P->err)))
        return r;
    return gr_op_binary(g, P->s, "mul_weight", WGF_OPB_MUL, T(o->xn), T(o->xs), VEC(g, w, 0), GR_B_FULL, 1, g->dim,
                        P->err);
}

/* y = x cos + rotate_half(x) sin over n_pairs pairs from pair0, x and y in pair order */
static enum wgf_status rope(struct plan *P, wgf_buffer *y, struct gr_ref x, uint32_t pair0, uint32_t n_pairs)
{
    struct gr     *g = P->g;
    struct gr_ops *o = &g->ops;
    enum wgf_status r;
    if ((r = gr_op_rope(g, P->s, "mul_cos", WGF_ROPE_MUL_COS, T(o->rc), x, x, pair0, n_pairs, P->err)) ||
        (r = gr_op_rope(g, P->s, "neg", WGF_ROPE_NEG, T(o->rn), x, x, pair0, n_pairs, P->err)) ||
        (r = gr_op_rope(g, P->s, "cat", WGF_ROPE_CAT, T(o->rh), x, T(o->rn), pair0, n_pairs, P->err)) ||
        (r = gr_op_rope(g, P->s, "mul_sin", WGF_ROPE_MUL_SIN, T(o->rs), T(o->rh), T(o->rh), pair0, n_pairs, P->err)))
        return r;
    return gr_op_binary(g, P->s, "add", WGF_OPB_ADD, T(y), T(o->rc), T(o->rs), GR_B_FULL, 1, 2 * n_pairs, P->err);
}

/* one decode layer at st.pos; x = the residual stream, in place across the layer */
static enum wgf_status layer(struct plan *P, int l)
{
    struct gr             *g = P->g;
    struct gr_ops         *o = &g->ops;
    const struct gr_layer *L = &g->L[l];
    wgf_schedule          *s = P->s;
    struct wgf_err        *e = P->err;
    const uint32_t         H = (uint32_t)g->c.n_heads, Q = g->q_dim, KV = g->kv_dim;
    const bool             bias = g->m->weights.layers[l].bq.data != NULL;
    enum wgf_status        r;

    /* attn_norm: xn = rmsnorm(x) * attn_norm */
    if ((r = rmsnorm(P, g->x, L->attn_norm))) return r;
    /* q = Wq xn (+ bq); k, v = Wk xn, Wv xn (+ bk, bv): rows of the stored W_qkv */
    if ((r = gr_op_gemv(g, s, "q", &L->qkv, 0, 1, Q, false, T(o->q), o->xn, e))) return r;
    if (bias && (r = gr_op_binary(g, s, "bias", WGF_OPB_ADD, T(o->qb), T(o->q), VEC(g, L->bias, 0), GR_B_FULL, 1, Q, e)))
        return r;
    if (P->fused) { /* K + V 2 -> 1 */
        if ((r = gr_op_gemv(g, s, "kv", &L->qkv, Q, 1, 2 * KV, false, T(o->kv), o->xn, e))) return r;
        if (bias && (r = gr_op_binary(g, s, "bias", WGF_OPB_ADD, T(o->kvb), T(o->kv), VEC(g, L->bias, Q), GR_B_FULL, 1,
                                      2 * KV, e)))
            return r;
    } else {
        if ((r = gr_op_gemv(g, s, "k", &L->qkv, Q, 1, KV, false, T(o->kv), o->xn, e))) return r;
        if (bias && (r = gr_op_binary(g, s, "bias", WGF_OPB_ADD, T(o->kvb), T(o->kv), VEC(g, L->bias, Q), GR_B_FULL,
                                      1, KV, e)))
            return r;
        if ((r = gr_op_gemv(g, s, "v", &L->qkv, Q + KV, 1, KV, false, TO(o->kv, KV), o->xn, e))) return r;
        if (bias && (r = gr_op_binary(g, s, "bias", WGF_OPB_ADD, TO(o->kvb, KV), TO(o->kv, KV),
                                      VEC(g, L->bias, Q + KV), GR_B_FULL, 1, KV, e)))
            return r;
    }
    wgf_buffer *q = bias ? o->qb : o->q, *kv = bias ? o->kvb : o->kv;
    /* RoPE: q_embed = q cos + rotate_half(q) sin; the same for k */
    if ((r = rope(P, o->qr, T(q), 0, Q / 2)) || (r = rope(P, o->kr, T(kv), Q / 2, KV / 2))) return r;
    /* the KV cache at st.pos: kc[pos] = k, vc[pos] = v */
    if ((r = gr_op_kv_store(g, s, l, true, T(o->kr), e)) || (r = gr_op_kv_store(g, s, l, false, TO(kv, KV), e)))
        return r;
    /* attention over positions 0..pos: scores q k^T, * 1/sqrt(head_dim), + causal mask (and
     * the layer's sliding window, passed as the op's constant) */
    if ((r = gr_op_attn_scores(g, s, l, T(o->s), T(o->qr), e)) ||
        (r = gr_op_unary(g, s, "scale", WGF_OPU_MUL_C, g->scale, T(o->ss), T(o->s), H, 0, e)) ||
        (r = gr_op_unary(g, s, "mask", WGF_OPU_MASK, (float)wgf_llm_layer_window(&g->c, l), T(o->sm), T(o->ss), H, 0, e)))
        return r;
    /* softmax: max, exp(s - max), sum, / sum */
    if ((r = gr_op_reduce(g, s, "max", WGF_OPR_MAX, T(o->max), T(o->sm), H, 0, e)) ||
        (r = gr_op_binary(g, s, "sub_exp", WGF_OPB_SUB_EXP, T(o->e), T(o->sm), T(o->max), GR_B_ROW, H, 0, e)) ||
        (r = gr_op_reduce(g, s, "sum", WGF_OPR_SUM, T(o->sum), T(o->e), H, 0, e)) ||
        (r = gr_op_binary(g, s, "div", WGF_OPB_DIV, T(o->p), T(o->e), T(o->sum), GR_B_ROW, H, 0, e)))
        return r;
    /* att = probabilities times the cached values */
    if ((r = gr_op_attn_values(g, s, l, g->att, T(o->p), e))) return r;
    /* o_proj, then the residual: x2 = x + Wo att */
    if ((r = gr_op_gemv(g, s, "o", &L->wo, 0, 1, g->dim, false, T(o->o), g->att, e)) ||
        (r = gr_op_binary(g, s, "residual", WGF_OPB_ADD, T(o->x2), T(g->x), T(o->o), GR_B_FULL, 1, g->dim, e)))
        return r;
    /* ffn_norm: xn = rmsnorm(x2) * ffn_norm */
    if ((r = rmsnorm(P, o->x2, L->ffn_norm))) return r;
    /* MLP: h = silu(W_gate xn) * (W_up xn); gate and up rows interleaved in the stored matrix */
    if (P->fused) { /* gate + up + SiLU 3 -> 1 */
        if ((r = gr_op_gemv(g, s, "gate_up_silu", &L->gu, 0, 1, 2 * g->hidden, true, T(o->gu), o->xn, e)) ||
            (r = gr_op_binary(g, s, "mul", WGF_OPB_MUL, T(g->h), T(o->gu), TO(o->gu, 1), GR_B_PAIRS, 1, g->hidden, e)))
            return r;
    } else {
        if ((r = gr_op_gemv(g, s, "gate", &L->gu, 0, 2, g->hidden, false, T(o->gate), o->xn, e)) ||
            (r = gr_op_gemv(g, s, "up", &L->gu, 1, 2, g->hidden, false, T(o->up), o->xn, e)) ||
            (r = gr_op_unary(g, s, "silu", WGF_OPU_SILU, 0, T(o->sg), T(o->gate), 1, g->hidden, e)) ||
            (r = gr_op_binary(g, s, "mul", WGF_OPB_MUL, T(g->h), T(o->sg), T(o->up), GR_B_FULL, 1, g->hidden, e)))
            return r;
    }
    /* down, then the residual: x = x2 + W_down h */
    if ((r = gr_op_gemv(g, s, "down", &L->down, 0, 1, g->dim, false, T(o->d), g->h, e))) return r;
    return gr_op_binary(g, s, "residual", WGF_OPB_ADD, T(g->x), T(o->x2), T(o->d), GR_B_FULL, 1, g->dim, e);
}

enum wgf_status gr_plan_ops_layers(struct gr *g, wgf_schedule *s, bool fused, struct wgf_err *err)
{
    struct plan     P = {g, s, fused, err};
    enum wgf_status r = WGF_OK;
    for (int l = 0; l < g->c.n_layers && !r; l++) r = layer(&P, l);
    return r;
}
