/* wgfuse — the elementary ops of the ops and fused plans (plan_ops.c): their activations and
 * one emitter per op kernel (src/kernels/llm/op_*.wgsl), each appending one dispatch to a
 * schedule with its pipeline, bind group, grid and cost, like the role emitters of
 * gr_kernels.c. The matmuls are the roles plan's own gemv kernel (src/kernels/common/gemv.wgsl)
 * over rows of the shared weights: the same kernel quality at every point of the dial.
 *
 * A tensor is a buffer and an element offset (struct gr_ref); the offsets are prelude
 * constants, so the bindings stay whole buffers. Labels: the kernel and the op
 * ("op_binary_add_f16_sg"), so the profile sums an op over the layers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/constants.h"
#include "llm/gpu/gr.h"

#define GR_OP_NWG_MAX 256u /* workgroups of an elementwise op at most (they stride)       */

static uint32_t cdiv(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

/* A tensor as a binding at the aligned offset at or below it, and the elements left over:
 * a norm weight or a bias of layer l binds at its own offset, so the kernel's constants, and
 * its pipeline, are the same for every layer. */
static struct wgf_binding BT(const struct gr *g, struct gr_ref t, uint32_t *elems)
{
    uint64_t bytes = (uint64_t)t.off * 4, off = bytes / g->align * g->align;
    *elems         = (uint32_t)((bytes - off) / 4);
    return (struct wgf_binding){t.b, off, 0};
}
static uint32_t pad16(uint32_t n) { return (n + 15) / 16 * 16; }
static struct wgf_binding B(wgf_buffer *b) { return (struct wgf_binding){b, 0, 0}; }

enum wgf_status gr_ops_state(struct gr *g, struct wgf_err *err)
{
    struct gr_ops *o  = &g->ops;
    const uint64_t sc = (uint64_t)g->c.n_heads * g->n_ctx * 4, q = pad16(g->q_dim) * 4ull;
    const struct {
        wgf_buffer **b;
        const char  *label;
        uint64_t     bytes;
    } list[] = {
        {&o->sq, "llm.ops.sq", g->dimp * 4ull},     {&o->mean, "llm.ops.mean", 16},
        {&o->var, "llm.ops.var", 16},               {&o->rstd, "llm.ops.rstd", 16},
        {&o->xs, "llm.ops.xs", g->dimp * 4ull},     {&o->xn, "llm.ops.xn", g->dimp * 4ull},
        {&o->q, "llm.ops.q", q},                    {&o->qb, "llm.ops.qb", q},
        {&o->kv, "llm.ops.kv", pad16(2 * g->kv_dim) * 4ull}, {&o->kvb, "llm.ops.kvb", pad16(2 * g->kv_dim) * 4ull},
        {&o->rc, "llm.ops.rope_cos", q},            {&o->rn, "llm.ops.rope_neg", q / 2},
        {&o->rh, "llm.ops.rope_rotate_half", q},    {&o->rs, "llm.ops.rope_sin", q},
        {&o->qr, "llm.ops.q_rope", q},              {&o->kr, "llm.ops.k_rope", pad16(g->kv_dim) * 4ull},
        {&o->s, "llm.ops.scores", sc},              {&o->ss, "llm.ops.scores_scaled", sc},
        {&o->sm, "llm.ops.scores_masked", sc},      {&o->max, "llm.ops.softmax_max", (uint64_t)g->c.n_heads * 4},
        {&o->e, "llm.ops.softmax_exp", sc},         {&o->sum, "llm.ops.softmax_sum", (uint64_t)g->c.n_heads * 4},
        {&o->p, "llm.ops.probs", sc},               {&o->o, "llm.ops.o", g->dimp * 4ull},
        {&o->x2, "llm.ops.x_attn", g->dimp * 4ull}, {&o->gate, "llm.ops.gate", g->hidp * 4ull},
        {&o->up, "llm.ops.up", g->hidp * 4ull},     {&o->sg, "llm.ops.silu_gate", g->hidp * 4ull},
        {&o->gu, "llm.ops.gate_up_silu", g->hidp * 8ull}, {&o->d, "llm.ops.down", g->dimp * 4ull},
    };
    enum wgf_status s = WGF_OK;
    for (size_t i = 0; i < sizeof list / sizeof list[0] && !s; i++)
        s = gr_buf(g, list[i].label, list[i].bytes, WGF_BUF_STORAGE, list[i].b, err);
    return s;
}

/* the prelude of every op kernel: the model, reductions over the whole workgroup */
static void pre(const struct gr *g, struct gr_step *st, struct wgf_prelude *p, const char *role, const char *op)
{
    struct wgf_matvec_cfg plain = {GR_WG, 1, 1, 1};
    gr_step_label(g, st, role, op);
    gr_prelude_model(g, p, plain);
}

/* elements (positions: n_ctx per row when len is 0) and the grid that strides over them */
static uint32_t nwg(const struct gr *g, uint32_t rows, uint32_t len)
{
    uint32_t n = cdiv((uint64_t)rows * (len ? len : g->n_ctx), GR_WG);
    return n < GR_OP_NWG_MAX ? n : GR_OP_NWG_MAX;
}

static void rows_pre(const struct gr *g, struct wgf_prelude *p, uint32_t rows, uint32_t len)
{
    wgf_prelude_u32(p, "ROWS", rows, "rows");
    wgf_prelude_u32(p, "LEN", len, len ? "elements per row" : "0: the attended positions st.pos + 1");
    wgf_prelude_u32(p, "NWG", nwg(g, rows, len), "workgroups (they stride over the elements)");
}

/* bytes an elementwise op moves: len 0 (positions) is not known when recorded */
static struct wgf_step_cost ew_cost(uint32_t rows, uint32_t len, uint32_t inputs)
{
    uint64_t n = (uint64_t)rows * len * 4;
    return (struct wgf_step_cost){n * inputs, n, 0};
}

/* y and a as bindings 0 and 1, the step state as binding 2, and their offsets Y0, A0 */
static void bind_ya(const struct gr *g, struct gr_step *st, struct wgf_prelude *p, struct gr_ref y, struct gr_ref a)
{
    uint32_t a0, y0;
    st->b[st->nb++] = BT(g, y, &y0);
    st->b[st->nb++] = BT(g, a, &a0);
    st->b[st->nb++] = B(g->st);
    wgf_prelude_u32(p, "A0", a0, "a offset past its binding's");
    wgf_prelude_u32(p, "Y0", y0, "y offset past its binding's");
}

enum wgf_status gr_op_unary(struct gr *g, wgf_schedule *s, const char *op_name, uint32_t op, float c, struct gr_ref y,
                            struct gr_ref a, uint32_t rows, uint32_t len, struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    uint32_t           rs = len ? len : g->n_ctx;
    pre(g, &st, &p, "op_unary", op_name);
    rows_pre(g, &p, rows, len);
    wgf_prelude_u32(&p, "OP", op, op_name);
    wgf_prelude_f32(&p, "C", c, "the constant of OPU_ADD_C / OPU_MUL_C");
    wgf_prelude_u32(&p, "WIN", op == WGF_OPU_MASK ? (uint32_t)c : 0, "OPU_MASK: the sliding window (0: none), passed as c");
    wgf_prelude_u32(&p, "AS", rs, "a row stride");
    wgf_prelude_u32(&p, "YS", rs, "y row stride");
    bind_ya(g, &st, &p, y, a);
    st.gx         = nwg(g, rows, len);
    st.cost       = ew_cost(rows, len, 1);
    return gr_step_emit(g, s, &st, &p, err);
}

enum wgf_status gr_op_binary(struct gr *g, wgf_schedule *s, const char *op_name, uint32_t op, struct gr_ref y,
                             struct gr_ref a, struct gr_ref b, enum gr_bcast bc, uint32_t rows, uint32_t len,
                             struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    uint32_t           rs = len ? len : g->n_ctx, ae = bc == GR_B_PAIRS ? 2 : 1;
    pre(g, &st, &p, "op_binary", op_name);
    rows_pre(g, &p, rows, len);
    wgf_prelude_u32(&p, "OP", op, op_name);
    wgf_prelude_u32(&p, "BMODE", bc == GR_B_ROW ? 1 : bc == GR_B_SCALAR ? 2 : 0,
                    "b: 0 elementwise, 1 one per row, 2 a scalar");
    wgf_prelude_u32(&p, "AS", rs, "a row stride");
    wgf_prelude_u32(&p, "AE", ae, "a element stride (2: the even elements of interleaved pairs)");
    wgf_prelude_u32(&p, "BS", rs, "b row stride");
    wgf_prelude_u32(&p, "BE", ae, "b element stride");
    wgf_prelude_u32(&p, "YS", rs, "y row stride");
    uint32_t a0, b0, y0;
    st.b[st.nb++] = BT(g, y, &y0);
    st.b[st.nb++] = BT(g, a, &a0);
    st.b[st.nb++] = BT(g, b, &b0);
    st.b[st.nb++] = B(g->st);
    wgf_prelude_u32(&p, "A0", a0, "a offset past its binding's");
    wgf_prelude_u32(&p, "B0", b0, "b offset past its binding's");
    wgf_prelude_u32(&p, "Y0", y0, "y offset past its binding's");
    st.gx         = nwg(g, rows, len);
    st.cost       = ew_cost(rows, len, bc == GR_B_FULL || bc == GR_B_PAIRS ? 2 : 1);
    return gr_step_emit(g, s, &st, &p, err);
}

enum wgf_status gr_op_reduce(struct gr *g, wgf_schedule *s, const char *op_name, uint32_t op, struct gr_ref y,
                             struct gr_ref a, uint32_t rows, uint32_t len, struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    pre(g, &st, &p, "op_reduce", op_name);
    wgf_prelude_u32(&p, "OP", op, op_name);
    wgf_prelude_u32(&p, "LEN", len, len ? "elements per row" : "0: the attended positions st.pos + 1");
    wgf_prelude_u32(&p, "AS", len ? len : g->n_ctx, "a row stride");
    bind_ya(g, &st, &p, y, a);
    st.gx         = rows;
    st.cost       = (struct wgf_step_cost){(uint64_t)rows * len * 4, rows * 4ull, 0};
    return gr_step_emit(g, s, &st, &p, err);
}

enum wgf_status gr_op_rope(struct gr *g, wgf_schedule *s, const char *op_name, uint32_t op, struct gr_ref y,
                           struct gr_ref x, struct gr_ref n, uint32_t pair0, uint32_t n_pairs, struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    uint32_t           ng = cdiv(n_pairs, GR_WG);
    WGF_ASSERT(y.off == 0 && x.off == 0 && n.off == 0);
    pre(g, &st, &p, "op_rope", op_name);
    wgf_prelude_u32(&p, "OP", op, op_name);
    wgf_prelude_u32(&p, "N_PAIRS", n_pairs, "pairs of this tensor");
    wgf_prelude_u32(&p, "PAIR0", pair0, "its first pair in [q; k; v] (lib_pairs)");
    wgf_prelude_u32(&p, "NWG", ng, "workgroups");
    st.frags[0]   = "lib_pairs";
    st.b[st.nb++] = B(y.b);
    st.b[st.nb++] = B(x.b);
    st.b[st.nb++] = B(n.b);
    st.b[st.nb++] = B(g->rope);
    st.b[st.nb++] = B(g->st);
    st.gx         = ng;
    st.cost       = ew_cost(2 * n_pairs, 1, op == WGF_ROPE_CAT ? 2 : 1);
    return gr_step_emit(g, s, &st, &p, err);
}

enum wgf_status gr_op_kv_store(struct gr *g, wgf_schedule *s, int l, bool k, struct gr_ref t, struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    uint32_t           ng = cdiv(g->kv_dim / 2, GR_WG);
    pre(g, &st, &p, "op_kv_store", k ? "k" : "v");
    wgf_prelude_u32(&p, "PAIR0", (g->q_dim + (k ? 0 : g->kv_dim)) / 2, "the tensor's first pair in [q; k; v]");
    wgf_prelude_u32(&p, "BASE", g->q_dim + (k ? 0 : g->kv_dim), "its first row in [q; k; v]");
    uint32_t a0;
    st.b[st.nb++] = B(k ? g->L[l].kc : g->L[l].vc);
    st.b[st.nb++] = BT(g, t, &a0);
    wgf_prelude_u32(&p, "A0", a0, "t offset past its binding's");
    wgf_prelude_u32(&p, "NWG", ng, "workgroups");
    st.frags[0]   = "lib_pairs";
    st.b[st.nb++] = B(g->st);
    st.gx         = ng;
    st.cost       = ew_cost(g->kv_dim, 1, 1);
    return gr_step_emit(g, s, &st, &p, err);
}

enum wgf_status gr_op_attn_scores(struct gr *g, wgf_schedule *s, int l, struct gr_ref y, struct gr_ref q,
                                  struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    uint32_t           ng = nwg(g, 1, 0);
    WGF_ASSERT(y.off == 0 && q.off == 0);
    pre(g, &st, &p, "op_attn_scores", NULL);
    wgf_prelude_u32(&p, "NWG", ng, "workgroups per head (they stride over the positions)");
    st.b[st.nb++] = B(y.b);
    st.b[st.nb++] = B(q.b);
    st.b[st.nb++] = B(g->L[l].kc);
    st.b[st.nb++] = B(g->st);
    st.gx = (uint32_t)g->c.n_heads, st.gy = ng;
    /* the cache bytes depend on the position: the profile shows time, not GB/s, here */
    st.cost = (struct wgf_step_cost){(uint64_t)g->q_dim * 4, 0, 0};
    return gr_step_emit(g, s, &st, &p, err);
}

enum wgf_status gr_op_attn_values(struct gr *g, wgf_schedule *s, int l, wgf_buffer *out, struct gr_ref pr,
                                  struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    WGF_ASSERT(pr.off == 0);
    pre(g, &st, &p, "op_attn_values", NULL);
    st.b[st.nb++] = B(out);
    st.b[st.nb++] = B(pr.b);
    st.b[st.nb++] = B(g->L[l].vc);
    st.b[st.nb++] = B(g->st);
    st.gx         = (uint32_t)g->c.n_heads;
    st.cost       = (struct wgf_step_cost){0, (uint64_t)g->q_dim * 4, 0};
    return gr_step_emit(g, s, &st, &p, err);
}

/* y[y0 + k] = W[first + k stride] . x for k < n: rows of a stored matrix through the shared gemv
 * (stride 2 picks the gate or the up rows of the interleaved gate/up matrix); silu_even: the
 * gate rows come out as silu(gate) (the fused plan's gate + up + SiLU). One dispatch per row
 * part of the matrix the rows fall in. */
enum wgf_status gr_op_gemv(struct gr *g, wgf_schedule *s, const char *op_name, const struct gr_mat *w, uint32_t first,
                           uint32_t stride, uint32_t n, bool silu_even, struct gr_ref y, wgf_buffer *x,
                           struct wgf_err *err)
{
    for (uint32_t i = 0; i < w->n_parts; i++) {
        const struct gr_part *pt = &w->part[i];
        /* the rows k of this part: first + k stride in [row0, row0 + rows) */
        uint32_t k0 = pt->row0 > first ? cdiv(pt->row0 - first, stride) : 0;
        uint32_t k1 = pt->row0 + pt->rows > first ? cdiv(pt->row0 + pt->rows - first, stride) : 0;
        if (k1 > n) k1 = n;
        if (k0 >= k1) continue;
        uint32_t              rows = k1 - k0;
        struct wgf_matvec_cfg cfg  = silu_even || pt->qt != GR_QT_F ? pt->cfg : gr_mat_cfg(w->kc, rows, false);
        struct wgf_constant   k[2] = {{"WOFF", (double)(first + k0 * stride - pt->row0) * pt->kcs},
                                      {"SILU_EVEN", silu_even ? 1.0 : 0.0}};
        struct gr_step        st   = {0};
        struct wgf_prelude    p    = {0};
        struct gr_part        ps   = *pt; /* every stride-th row: the row stride grows */
        ps.kcs *= stride;
        gr_step_label_part(g, &st, "gemv", op_name, pt);
        gr_prelude_model(g, &p, cfg);
        gr_prelude_part(g, &p, w, &ps);
        wgf_prelude_u32(&p, "N", rows, "rows read in this part");
        uint32_t y0;
        struct wgf_binding yb = BT(g, y, &y0);
        wgf_prelude_u32(&p, "ROW0", y0 + k0, "first output past y's binding");
        wgf_prelude_bool(&p, "ACCUM", false, "y = W x (the residual add is its own op)");
        st.k          = k;
        st.nk         = 2;
        st.frags[0]   = pt->qt == GR_QT_F ? "lib_rows" : "lib_rows_q";
        st.frags[1]   = pt->qt == GR_QT_F ? NULL : "lib_qblock";
        st.b[st.nb++] = yb;
        st.b[st.nb++] = B(x);
        st.b[st.nb++] = (struct wgf_binding){pt->buf, pt->off, pt->bytes};
        st.gx         = cdiv(rows, (uint64_t)cfg.gpw * cfg.rpg);
        st.cost       = (struct wgf_step_cost){(uint64_t)rows * pt->kcs * 16 + (uint64_t)w->kc * 32,
                                               (uint64_t)rows * 4, 2ull * rows * w->cols};
        enum wgf_status r = gr_step_emit(g, s, &st, &p, err);
        if (r) return r;
    }
    return WGF_OK;
}

/* RMSNorm in one dispatch (the fused plan): the roles plan's prefill kernel on one row */
enum wgf_status gr_op_rmsnorm(struct gr *g, wgf_schedule *s, wgf_buffer *y, wgf_buffer *x, struct gr_vec w,
                              struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    pre(g, &st, &p, "rmsnorm_rows", "one");
    st.b[st.nb++] = B(y);
    st.b[st.nb++] = B(x);
    st.b[st.nb++] = (struct wgf_binding){g->vecs, w.off, w.bytes};
    st.cost       = (struct wgf_step_cost){g->dimp * 8ull, g->dimp * 4ull, 0};
    return gr_step_emit(g, s, &st, &p, err);
}
