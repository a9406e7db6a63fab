/* wgfuse — the plan "mega": the far end of the fusion dial (docs/fusion.md).
 *
 * Every decode layer of a token is ONE dispatch of ONE workgroup (src/kernels/llm/mega.wgsl):
 * the kernel loops over the layers and separates its phases (norm, QKV, attention, o_proj,
 * norm, gate/up, down) with storage barriers. One workgroup, because WGSL has no barrier
 * across workgroups and WebGPU promises no forward progress to a workgroup that spins waiting
 * for another (a grid-wide spin barrier may hang, and is not allowed here); the alternative
 * that is allowed, a chain of "the last workgroup to finish goes on" (bench's mlp_fused),
 * still funnels every phase's reduction through one workgroup. The price: the whole model's
 * weights stream through one compute unit (one SM of 132 on the H200), so the plan is
 * bandwidth-starved by design. The embedding, the LM head and the sampler are the shared
 * schedules of every plan (plan_roles.c): a token is 1 + lm_head + sampler dispatches.
 *
 * What the kernel needs in its 10 bindings (WebGPU's maxStorageBuffersPerShaderStage on the
 * H200 and lavapipe; the default limit of 8 is not enough and is refused at init):
 *   - the KV cache of every layer in one buffer (the other plans have one per layer and
 *     cannot bind 2 x n_layers buffers in one kernel): kv (n_layers, 2, n_ctx, kv_dim);
 *   - the weights where the loader put them (gr_weights.c): up to 3 arena buffers, found
 *     through a table of every matrix part (arena, chunk offset, first row, rows) and of the
 *     vector offsets, per layer;
 *   - a scratch buffer: xn | q | att | h | y (the matvecs' raw rows). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/gpu/gr.h"

#define MEGA_ARENAS   3u  /* weight arenas the kernel binds (w0..w2)                      */
#define MEGA_BINDINGS 10u /* storage buffers the kernel declares                          */
#define MEGA_U        4u  /* chunks per row each invocation loads before using the first
                             (a GPU; a CPU adapter: 1, loads in flight buy it nothing and
                             lavapipe's compile time grows with the kernel's size)       */

static uint32_t pad16(uint32_t n) { return (n + 15) / 16 * 16; }

/* scratch offsets (f32 elements, multiples of 16) */
static uint32_t sc_q(const struct gr *g) { return g->dimp; }
static uint32_t sc_att(const struct gr *g) { return sc_q(g) + pad16(g->q_dim); }
static uint32_t sc_h(const struct gr *g) { return sc_att(g) + pad16(g->q_dim); }
static uint32_t sc_y(const struct gr *g) { return sc_h(g) + g->hidp; }
static uint32_t sc_len(const struct gr *g)
{
    uint32_t y = 2 * g->pairs > 2 * g->hidden ? 2 * g->pairs : 2 * g->hidden;
    return sc_y(g) + pad16(y > g->dim ? y : g->dim);
}

/* The one workgroup: 1024 invocations where the device allows it; the subgroup reductions
 * keep one slot per subgroup (64), the workgroup-memory ones need WG floats x 5 (and the
 * kernel's own 5 x WG), so without subgroups 256. */
static uint32_t mega_wg(const struct gr *g)
{
    uint32_t wg = wgf_ctx_limits(g->ctx)->max_compute_invocations_per_workgroup;
    if (wg > 1024) wg = 1024;
    uint32_t cap = g->sgs ? 64 * g->sgs : 256;
    if (wg > cap) wg = cap;
    uint32_t p = 1;
    while (p * 2 <= wg) p *= 2;
    return p;
}

static enum wgf_status mega_table(struct gr *g, uint32_t **out, uint32_t *words, struct wgf_err *err)
{
    uint32_t mp = 1;
    for (int l = 0; l < g->c.n_layers; l++) {
        const struct gr_mat *m[4] = {&g->L[l].qkv, &g->L[l].wo, &g->L[l].gu, &g->L[l].down};
        for (int i = 0; i < 4; i++) {
            if (m[i]->quant)
                return wgf_fail(err, WGF_ERR_UNSUPPORTED,
                                "%s: layer %d has quantized weight rows; the one-workgroup kernel reads f16/f32 rows "
                                "only (the roles, fused and ops plans decode blocks)",
                                g->name, l);
            if (m[i]->n_parts > mp) mp = m[i]->n_parts;
            for (uint32_t p = 0; p < m[i]->n_parts; p++) {
                if (m[i]->part[p].arena + 1 > g->mega.na) g->mega.na = m[i]->part[p].arena + 1;
                if (m[i]->part[p].arena >= MEGA_ARENAS)
                    return wgf_fail(err, WGF_ERR_UNSUPPORTED,
                                    "%s: layer %d's weights reach arena %u; the one-workgroup kernel binds %u (a larger "
                                    "storage binding limit puts them in fewer)",
                                    g->name, l, m[i]->part[p].arena, MEGA_ARENAS);
            }
        }
    }
    const uint32_t lt = 4 + 16 * mp;
    uint32_t      *t  = calloc(4 + (size_t)g->c.n_layers * lt, sizeof *t);
    if (!t) return wgf_fail(err, WGF_ERR_NOMEM, "%s: weight table", g->name);
    t[0] = (uint32_t)g->c.n_layers; /* the loop bounds (mega.wgsl says why they are not constants) */
    t[1] = (uint32_t)g->c.n_heads;
    t[2] = 4; /* matvecs per layer */
    for (int l = 0; l < g->c.n_layers; l++) {
        const struct gr_layer *L = &g->L[l];
        uint32_t              *r = t + 4 + (size_t)l * lt;
        r[0]                     = (uint32_t)(L->attn_norm.off / 4);
        r[1]                     = (uint32_t)(L->ffn_norm.off / 4);
        r[2]                     = (uint32_t)(L->bias.off / 4);
        r[3]                     = g->m->weights.layers[l].bq.data != NULL;
        const struct gr_mat *m[4] = {&L->qkv, &L->wo, &L->gu, &L->down};
        for (uint32_t i = 0; i < 4; i++)
            for (uint32_t p = 0; p < m[i]->n_parts; p++) {
                uint32_t *e = r + 4 + (i * mp + p) * 4;
                e[0]        = m[i]->part[p].arena;
                e[1]        = (uint32_t)(m[i]->part[p].off / 16);
                e[2]        = m[i]->part[p].row0;
                e[3]        = m[i]->part[p].rows;
            }
    }
    g->mega.mp = mp;
    *out       = t;
    *words     = 4 + (uint32_t)g->c.n_layers * lt;
    return WGF_OK;
}

enum wgf_status gr_mega_state(struct gr *g, struct wgf_err *err)
{
    const struct wgf_limits *lim = wgf_ctx_limits(g->ctx);
    if (lim->max_storage_buffers_per_shader_stage < MEGA_BINDINGS)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED,
                        "%s: the one-workgroup kernel binds %u storage buffers; this device allows %u per stage",
                        g->name, MEGA_BINDINGS, lim->max_storage_buffers_per_shader_stage);
    g->mega.wg = mega_wg(g);
    uint32_t       *tab = NULL, words = 0;
    enum wgf_status s   = mega_table(g, &tab, &words, err);
    if (s) return s;
    uint64_t kv = (uint64_t)g->c.n_layers * 2 * g->n_ctx * g->kv_dim * 4;
    if ((s = gr_buf(g, "llm.mega.kv_cache", kv, WGF_BUF_STORAGE, &g->mega.kv, err)) ||
        (s = gr_buf(g, "llm.mega.scratch", (uint64_t)sc_len(g) * 4, WGF_BUF_STORAGE, &g->mega.sc, err)) ||
        (s = gr_buf(g, "llm.mega.weight_table", (uint64_t)words * 4, WGF_BUF_STORAGE, &g->mega.tab, err))) {
        free(tab);
        return s;
    }
    if ((s = wgf_buffer_write(g->ctx, g->mega.tab, 0, tab, (size_t)words * 4))) s = gr_fail(g, err, s, "weight table");
    free(tab);
    return s;
}

enum wgf_status gr_plan_mega_layers(struct gr *g, wgf_schedule *s, struct wgf_err *err)
{
    const struct gr_mega *M   = &g->mega;
    const uint32_t        tpr = g->sgs >= 8 ? g->sgs : 32;
    struct gr_step        st  = {0};
    struct wgf_prelude    p   = {0};
    gr_step_label(g, &st, "mega", NULL);
    if (g->sgs) wgf_prelude_text(&p, "enable subgroups;");
    wgf_prelude_text(&p, "// prelude rendered by src/llm/gpu/plan_mega.c for this model");
    wgf_prelude_u32(&p, "WG", M->wg, "invocations of the one workgroup");
    wgf_prelude_u32(&p, "TPR", tpr, "invocations per row group (a subgroup: its sums need no barrier)");
    wgf_prelude_u32(&p, "GPW", M->wg / tpr, "row groups");
    wgf_prelude_u32(&p, "SGS", g->sgs ? g->sgs : 1, g->sgs ? "subgroup size (probe)" : "no subgroups: lib_reduce_wg");
    wgf_prelude_bool(&p, "WF16", g->f16, g->f16 ? "weights: f16 pairs packed in u32" : "weights: f32");
    bool cpu = !strcmp(wgf_ctx_adapter(g->ctx)->type, "cpu");
    wgf_prelude_u32(&p, "U", cpu ? 1 : MEGA_U, "chunks per row each invocation loads before the first is used");
    wgf_prelude_u32(&p, "WINDOW", (uint32_t)g->c.sliding_window, "the sliding window (0: none)");
    wgf_prelude_u32(&p, "SWA_FIRST", (uint32_t)g->c.swa_first_layer, "the first layer with the window");
    /* the arenas past w0 that the layers use, and the load that picks one */
    static const char *const wld[MEGA_ARENAS] = {
        "fn wld(a: u32, i: u32) -> vec4<u32> { return w0[i]; } // one weight arena",
        "@group(0) @binding(8) var<storage, read> w1: array<vec4<u32>>;\n"
        "fn wld(a: u32, i: u32) -> vec4<u32> { if (a == 0u) { return w0[i]; } return w1[i]; }",
        "@group(0) @binding(8) var<storage, read> w1: array<vec4<u32>>;\n"
        "@group(0) @binding(9) var<storage, read> w2: array<vec4<u32>>;\n"
        "fn wld(a: u32, i: u32) -> vec4<u32> {\n"
        "    if (a == 0u) { return w0[i]; } else if (a == 1u) { return w1[i]; } return w2[i];\n}"};
    wgf_prelude_text(&p, wld[M->na - 1]);
    wgf_prelude_u32(&p, "N_LAYERS", (uint64_t)g->c.n_layers, "layers");
    wgf_prelude_u32(&p, "MP", M->mp, "row parts per matrix in the table");
    wgf_prelude_u32(&p, "LT", 4 + 16 * M->mp, "table words per layer");
    wgf_prelude_u32(&p, "KC_D", g->L[0].qkv.kc, "chunks per row of W_qkv and W_gate_up (DIM columns)");
    wgf_prelude_u32(&p, "KC_Q", g->L[0].wo.kc, "chunks per row of Wo (Q_DIM columns)");
    wgf_prelude_u32(&p, "KC_H", g->L[0].down.kc, "chunks per row of W_down (HIDDEN columns)");
    wgf_prelude_u32(&p, "MPG", M->wg / (g->hd / 4), "attention: position groups = WG / D4");
    wgf_prelude_u32(&p, "SC_XN", 0, "scratch: the normed x (DIMP)");
    wgf_prelude_u32(&p, "SC_Q", sc_q(g), "scratch: q, natural order");
    wgf_prelude_u32(&p, "SC_ATT", sc_att(g), "scratch: the attention output");
    wgf_prelude_u32(&p, "SC_H", sc_h(g), "scratch: silu(gate) * up (HIDP)");
    wgf_prelude_u32(&p, "SC_Y", sc_y(g), "scratch: a matvec's raw rows");
    enum wgf_status r = wgf_prelude_fragment(&p, g->sgs ? "lib_reduce_sg" : "lib_reduce_wg");
    if (!r) r = wgf_prelude_fragment(&p, "lib_wchunk");
    if (r) {
        wgf_prelude_free(&p);
        return wgf_fail(err, WGF_ERR_INTERNAL, "%s: mega: a prelude fragment is not embedded", g->name);
    }
    gr_prelude_shapes(g, &p);
    st.frags[0]   = "lib_pairs";
    st.b[st.nb++] = (struct wgf_binding){g->x, 0, 0};
    st.b[st.nb++] = (struct wgf_binding){M->sc, 0, 0};
    st.b[st.nb++] = (struct wgf_binding){M->kv, 0, 0};
    st.b[st.nb++] = (struct wgf_binding){g->vecs, 0, 0};
    st.b[st.nb++] = (struct wgf_binding){g->rope, 0, 0};
    st.b[st.nb++] = (struct wgf_binding){g->st, 0, 0};
    st.b[st.nb++] = (struct wgf_binding){M->tab, 0, 0};
    for (uint32_t i = 0; i < M->na; i++) st.b[st.nb++] = (struct wgf_binding){g->arena[i], 0, 0};
    /* the bytes of every layer's weights (the cache is read at a position-dependent length) */
    uint64_t bytes = 0, flops = 0;
    for (int l = 0; l < g->c.n_layers; l++) {
        const struct gr_mat *m[4] = {&g->L[l].qkv, &g->L[l].wo, &g->L[l].gu, &g->L[l].down};
        for (int i = 0; i < 4; i++) {
            bytes += (uint64_t)m[i]->rows * m[i]->kc * 16;
            flops += 2ull * m[i]->rows * m[i]->cols;
        }
    }
    st.cost = (struct wgf_step_cost){bytes, (uint64_t)g->c.n_layers * 2 * g->kv_dim * 4, flops};
    return gr_step_emit(g, s, &st, &p, err);
}
