/* wgfuse — the roles plan's kernel emitters: one function per kernel role, each appending to
 * a schedule the step(s) of that role with its pipeline (the role's WGSL plus the const
 * prelude rendered here from the model), its bind group and grid, and its cost (bytes of
 * device memory it must move, FLOPs), which the profile turns into GB/s.
 *
 * A matrix split into row parts gives one step per part (its constants say which rows).
 * Labels name the role and its variant ("attn_qkv_f16_sg"); every layer's step of a role
 * shares the label, so the profile sums them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/gpu/gr.h"

enum wgf_status gr_fail(const struct gr *g, struct wgf_err *err, enum wgf_status s, const char *what)
{
    return wgf_ctx_err(g->ctx, err, s, "%s: %s", g->name ? g->name : "gpu-roles", what);
}

/* ---- the prelude every role gets ------------------------------------------------------ */

static struct wgf_matvec_cfg plain_cfg(void)
{
    struct wgf_matvec_cfg c = {GR_WG, 1, 1, 1}; /* reductions over the whole workgroup */
    return c;
}

void gr_prelude_model(const struct gr *g, struct wgf_prelude *p, struct wgf_matvec_cfg cfg)
{
    if (g->sgs) wgf_prelude_text(p, "enable subgroups;");
    wgf_prelude_text(p, "// prelude rendered by src/llm/gpu/gr_kernels.c for this model");
    wgf_matvec_prelude(p, cfg, g->sgs, g->f16); /* status read at the end (wgf_prelude_status) */
    gr_prelude_shapes(g, p);
}

/* The model's shapes and the step-state layout (every role; a kernel with its own workgroup
 * constants takes this part alone). */
void gr_prelude_shapes(const struct gr *g, struct wgf_prelude *p)
{
    const struct wgf_llm_config *c = &g->c;
#define GR_PRE(name, v, why) wgf_prelude_u32(p, #name, v, why);
    GR_ST_LIST(GR_PRE)
    GR_SP_LIST(GR_PRE)
#undef GR_PRE
    wgf_prelude_u32(p, "DIM", g->dim, "hidden size");
    wgf_prelude_u32(p, "DIMP", g->dimp, "DIM padded to 16 (activation row stride)");
    wgf_prelude_u32(p, "Q_DIM", g->q_dim, "n_heads * head_dim");
    wgf_prelude_u32(p, "KV_DIM", g->kv_dim, "n_kv_heads * head_dim");
    wgf_prelude_u32(p, "N_HEADS", (uint64_t)c->n_heads, "query heads");
    wgf_prelude_u32(p, "N_KV_HEADS", (uint64_t)c->n_kv_heads, "key/value heads (GQA)");
    wgf_prelude_u32(p, "HD", g->hd, "head_dim");
    wgf_prelude_u32(p, "D4", g->hd / 4, "head_dim / 4 (vec4 per head)");
    wgf_prelude_u32(p, "PG", GR_WG / (g->hd / 4), "attention: position groups = WG / D4");
    wgf_prelude_u32(p, "HALF", g->half, "rope_dim / 2: rotated pairs per head");
    wgf_prelude_u32(p, "ROT", g->rot, "rope_dim");
    wgf_prelude_u32(p, "ALL_PAIRS", g->pairs, "(Q_DIM + 2 KV_DIM) / 2 rows pairs of attn_qkv");
    wgf_prelude_u32(p, "HIDDEN", g->hidden, "FFN intermediate size");
    wgf_prelude_u32(p, "HIDP", g->hidp, "HIDDEN padded to 16");
    wgf_prelude_u32(p, "VOCAB", g->vocab, "logits");
    wgf_prelude_u32(p, "N_CTX", g->n_ctx, "positions in the KV cache");
    wgf_prelude_f32(p, "EPS", c->norm_eps, "rms_norm_eps");
    wgf_prelude_f32(p, "SCALE", g->scale, "1 / sqrt(head_dim) in f32, as cpu-ref");
    wgf_prelude_u32(p, "SPLIT", g->split, "attention: positions per slice");
    wgf_prelude_u32(p, "N_SPLIT", g->n_split, "attention: slices = ceil(N_CTX / SPLIT)");
    wgf_prelude_u32(p, "ROPE_ORIG", g->rope_orig, "longrope original_max_pos (never: no long table)");
    wgf_prelude_u32(p, "KMAX", GR_KMAX, "top-k the GPU sampler handles (== WG)");
    wgf_prelude_u32(p, "NCAND", GR_NCAND, "sample_topk slices");
    wgf_prelude_u32(p, "SLICE", (g->vocab + GR_NCAND - 1) / GR_NCAND, "vocabulary per slice");
    wgf_prelude_u32(p, "EMB_ROWS", g->emb->part[0].rows, "rows per part of the embedding table");
    wgf_prelude_u32(p, "NBEST", g->nbest, "argmax partials = lm_head workgroups");
}

enum wgf_status gr_step_emit(const struct gr *g, wgf_schedule *s, struct gr_step *st, struct wgf_prelude *p,
                             struct wgf_err *err)
{
    enum wgf_status rs = WGF_OK;
    for (int i = 0; i < 4 && st->frags[i] && !rs; i++) rs = wgf_prelude_fragment(p, st->frags[i]);
    if (!rs) rs = wgf_prelude_status(p);
    if (rs) {
        wgf_prelude_free(p);
        return wgf_fail(err, rs == WGF_ERR_NOMEM ? rs : WGF_ERR_INTERNAL, "%s: %s: prelude (%s)", g->name, st->label,
                        rs == WGF_ERR_NOMEM ? "out of memory" : "a fragment is not embedded");
    }
    const char *src = wgf_kernel_source(st->role);
    if (!src) {
        wgf_prelude_free(p);
        return wgf_fail(err, WGF_ERR_INTERNAL, "%s: kernel '%s' is not embedded", g->name, st->role);
    }
    struct wgf_pipeline_desc d  = {
        .label = st->label, .wgsl = src, .prelude = p->s, .constants = st->k, .n_constants = st->nk};
    wgf_pipeline            *pl = NULL;
    wgf_bind_group          *bg = NULL;
    enum wgf_status          r  = wgf_pipeline_get(g->ctx, &d, &pl);
    wgf_prelude_free(p);
    if (r) return gr_fail(g, err, r, st->label);
    if ((r = wgf_bind_group_create_ranges(g->ctx, pl, st->b, st->nb, &bg))) return gr_fail(g, err, r, st->label);
    if (st->slot < 0) r = wgf_schedule_dispatch(s, st->label, pl, bg, st->gx, st->gy, st->gz, st->cost);
    else r = wgf_schedule_dispatch_host(s, st->label, pl, bg, &g->grid[3 * st->slot], st->cost);
    return r ? gr_fail(g, err, r, st->label) : WGF_OK;
}

void gr_prelude_part(const struct gr *g, struct wgf_prelude *p, const struct gr_mat *m, const struct gr_part *pt)
{
    /* int8 activations live in workgroup memory (lib_rows_q's xq), the x * g copy then has no use */
    bool q8 = (g->qx8 && pt->qt != GR_QT_F) || pt->x3, xw = g->xw && !q8;
    wgf_prelude_bool(p, "ACT_Q8", q8,
                     pt->x3 ? "activations as int8 digits per 32, integer dots"
                     : q8   ? "activations rounded to int8 per 32, integer dots"
                            : "f32 activations");
    wgf_prelude_bool(p, "ACT_X3", pt->x3, "three int8 digits an activation (x = d (q1 + q2 / 254 + q3 / 254^2))");
    wgf_prelude_bool(p, "XW", xw, "norm-prologue matvecs keep x * g in workgroup memory");
    /* A quantized part's lane t reads the copy's vec4 XWP t .. XWP t + XWP (its item): at a
     * 128- or 256-byte stride every lane of a quarter warp hits the same 4 of the 32 banks.
     * One vec4 of padding per item puts them on distinct banks. (The float parts' lanes read
     * 32 bytes apart: no padding, XWP past any index.) */
    uint32_t xwp = pt->qt == GR_QT_F ? 1u << 30 : pt->qt == WGF_DT_Q4_K || pt->qt == WGF_DT_Q5_K ? 16u : 8u;
    wgf_prelude_u32(p, "XWN", xw ? g->dimp / 4 + g->dimp / 4 / xwp + 1 : 1, "vec4 of that workgroup copy, padded");
    wgf_prelude_u32(p, "XWP", xwp, "the copy's padding: vec4 i at i + i / XWP");
#define GR_QT_PRE(name) wgf_prelude_u32(p, "QT_" #name, WGF_DT_##name, "row format: ggml " #name " blocks");
    GR_QT_LIST(GR_QT_PRE)
#undef GR_QT_PRE
    wgf_prelude_u32(p, "QT_F", GR_QT_F, "row format: the plan's float chunks (lib_wchunk)");
    wgf_prelude_u32(p, "QT", pt->qt, "row format of this part");
    wgf_prelude_u32(p, "KC", pt->qt == GR_QT_F ? m->kc : pt->kcs, "16-byte chunks per weight row");
    wgf_prelude_u32(p, "KCS", pt->kcs, "row stride in chunks");
    wgf_prelude_u32(p, "NU", pt->nu, "quantized: 32-element units per row");
    wgf_prelude_u32(p, "NI", pt->ni, "quantized: matvec items per row (lib_rows_q)");
    wgf_prelude_u32(p, "QA", pt->qa, "quantized: first word of the row's second region");
    wgf_prelude_u32(p, "QB", pt->qb, "quantized: first word of the row's third region");
}

/* "_x8": the part multiplies int8 activations (--activations q8), "_x3": three int8 digits of
 * them, "": floats (an embedding gather none of these) */
static const char *gr_part_acts(const struct gr *g, const char *role, const struct gr_part *pt)
{
    if (!strcmp(role, "embed")) return "";
    return g->qx8 ? "_x8" : pt->x3 ? "_x3" : "";
}

void gr_step_label_part(const struct gr *g, struct gr_step *st, const char *role, const char *variant,
                        const struct gr_part *pt)
{
    gr_step_label(g, st, role, variant);
    if (pt->qt == GR_QT_F) return;
    char q[16];
    snprintf(q, sizeof q, "%s", wgf_dtype_str((enum wgf_dtype)pt->qt));
    for (char *c = q; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    snprintf(st->label, sizeof st->label, "%s%s%s_%s%s_%s", role, variant ? "_" : "", variant ? variant : "", q,
             gr_part_acts(g, role, pt), g->sgs ? "sg" : "wg");
}

void gr_step_label(const struct gr *g, struct gr_step *st, const char *role, const char *variant)
{
    st->role = role;
    snprintf(st->label, sizeof st->label, "%s%s%s_%s_%s", role, variant ? "_" : "", variant ? variant : "",
             g->f16 ? "f16" : "f32", g->sgs ? "sg" : "wg");
    st->slot = -1;
    st->gx = st->gy = st->gz = 1;
}

/* the short names the emitters below use */
static void pre_model(const struct gr *g, struct wgf_prelude *p, struct wgf_matvec_cfg cfg)
{
    gr_prelude_model(g, p, cfg);
}
static void label(const struct gr *g, struct gr_step *st, const char *role, const char *variant)
{
    gr_step_label(g, st, role, variant);
}
static enum wgf_status emit(const struct gr *g, wgf_schedule *s, struct gr_step *st, struct wgf_prelude *p,
                            struct wgf_err *err)
{
    return gr_step_emit(g, s, st, p, err);
}

static struct wgf_binding B(wgf_buffer *b, uint64_t off, uint64_t size) { return (struct wgf_binding){b, off, size}; }
static struct wgf_binding BV(const struct gr *g, struct gr_vec v) { return B(g->vecs, v.off, v.bytes); }
static struct wgf_binding BP(const struct gr_part *p) { return B(p->buf, p->off, p->bytes); }

static uint32_t cdiv(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

static uint32_t mm_slot(struct gr *g, uint32_t n, uint32_t bn, uint32_t bm, uint32_t ks)
{
    for (uint32_t i = 0; i < g->n_mm; i++)
        if (g->mm_n[i] == n && g->mm_bn[i] == bn && g->mm_bm[i] == bm && g->mm_ks[i] == ks) return 2 + i;
    WGF_ASSERT(g->n_mm < GR_MAX_MM);
    g->mm_n[g->n_mm]  = n;
    g->mm_bn[g->n_mm] = bn;
    g->mm_bm[g->n_mm] = bm;
    g->mm_ks[g->n_mm] = ks;
    return 2 + g->n_mm++;
}

struct gr_mm_shape gr_mm_shape(uint32_t rows, uint32_t cols)
{
    bool               big = rows >= 4096 || cols >= 2048;
    struct gr_mm_shape m   = {.bn = big ? 64 : 32, .tm = big ? 4 : 1, .ks = 1};
    m.bm                   = (256 / (m.bn / 4)) * m.tm;
    uint64_t tiles         = (uint64_t)cdiv(rows, m.bn) * cdiv(GR_T_MAX, m.bm);
    while (tiles * m.ks < GR_MM_MIN_WG && m.ks < GR_MM_MAX_KS && cols / (2 * m.ks) >= GR_MM_MIN_K) m.ks *= 2;
    return m;
}

void gr_grid_fill(struct gr *g, uint32_t T, uint32_t pos0)
{
    uint32_t *a = g->grid;
    a[0] = T, a[1] = 1, a[2] = 1;
    a[3] = (uint32_t)g->c.n_heads, a[4] = cdiv((uint64_t)pos0 + T, g->split), a[5] = T;
    for (uint32_t i = 0; i < g->n_mm; i++) {
        a[6 + 3 * i] = cdiv(g->mm_n[i], g->mm_bn[i]), a[7 + 3 * i] = cdiv(T, g->mm_bm[i]), a[8 + 3 * i] = g->mm_ks[i];
    }
}

/* the embedding table's parts as bindings (unused slots repeat part 0) */
static void bind_emb(const struct gr *g, struct gr_step *st)
{
    for (uint32_t i = 0; i < GR_EMB_PARTS; i++)
        st->b[st->nb++] = BP(&g->emb->part[i < g->emb->n_parts ? i : 0]);
}

/* ---- decode roles ---------------------------------------------------------------------- */

enum wgf_status gr_emit_embed(struct gr *g, wgf_schedule *s, wgf_buffer *x, bool rows, struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    gr_step_label_part(g, &st, "embed", rows ? "rows" : NULL, &g->emb->part[0]);
    pre_model(g, &p, plain_cfg());
    gr_prelude_part(g, &p, g->emb, &g->emb->part[0]);
    st.frags[0] = "lib_embed";
    st.frags[1] = "lib_qblock";
    st.b[st.nb++] = B(x, 0, 0);
    st.b[st.nb++] = B(g->seq, 0, 0);
    st.b[st.nb++] = B(g->st, 0, 0);
    bind_emb(g, &st);
    if (rows) st.slot = GR_ARG_ROWS;
    st.cost = (struct wgf_step_cost){(uint64_t)g->emb->part[0].kcs * 16, (uint64_t)g->dimp * 4, 0};
    return emit(g, s, &st, &p, err);
}

/* One part's constants and fragments (attn_qkv): its rows start WOFF chunks into the binding. */
static void qkv_part_prelude(const struct gr *g, struct wgf_prelude *p, int l, const struct gr_part *pt)
{
    const struct gr_layer *L = &g->L[l];
    pre_model(g, p, pt->cfg);
    gr_prelude_part(g, p, &L->qkv, pt);
    wgf_prelude_u32(p, "PPG", pt->cfg.rpg / 2, "row pairs per row group");
    wgf_prelude_u32(p, "N_PAIRS", pt->rows / 2, "pairs in this row part");
    wgf_prelude_u32(p, "PAIR0", pt->row0 / 2, "first pair of this row part");
    wgf_prelude_bool(p, "HAS_BIAS", g->m->weights.layers[l].bq.data != NULL, "q/k/v bias (Qwen2)");
    const char *frags[] = {pt->qt == GR_QT_F ? "lib_rows" : "lib_rows_q", "lib_rows_rms", "lib_pairs",
                           pt->qt == GR_QT_F ? NULL : "lib_qblock", "lib_qkv_rows"};
    for (size_t i = 0; i < sizeof frags / sizeof frags[0]; i++)
        if (frags[i] && wgf_prelude_fragment(p, frags[i])) p->oom = true; /* reported as a prelude error */
}

static uint32_t qkv_groups(const struct gr_part *pt) { return cdiv(pt->rows / 2, (uint64_t)pt->cfg.gpw * (pt->cfg.rpg / 2)); }

/* Parts [i0, i1) of layer l's W_qkv in one dispatch (i1 - i0 > 1: every part quantized, one
 * arena): part k's workgroups follow part k - 1's, each part a module instance of its own. */
static enum wgf_status emit_qkv_parts(struct gr *g, wgf_schedule *s, int l, uint32_t i0, uint32_t i1, struct wgf_err *err)
{
    const struct gr_layer *L  = &g->L[l];
    const struct gr_part  *pt = &L->qkv.part[i0];
    struct gr_step         st = {0};
    struct wgf_prelude     p  = {0};
    static const char *const woff[GR_MAX_RUNS] = {"WOFF", "WOFF_1", "WOFF_2", "WOFF_3"};
    struct wgf_constant    k[GR_MAX_RUNS];
    gr_step_label_part(g, &st, "attn_qkv", NULL, pt);
    uint64_t lo = pt->off, hi = pt->off + pt->bytes, bytes = 0, rows = 0;
    for (uint32_t i = i0 + 1; i < i1; i++) { /* "attn_qkv_q4_k+q6_k_sg" */
        const struct gr_part *q = &L->qkv.part[i];
        lo = q->off < lo ? q->off : lo;
        hi = q->off + q->bytes > hi ? q->off + q->bytes : hi;
        char  t[16], at[16];
        snprintf(at, sizeof at, "%s_%s", gr_part_acts(g, "attn_qkv", pt), g->sgs ? "sg" : "wg");
        char *u = strstr(st.label, at);
        snprintf(t, sizeof t, "+%s", wgf_dtype_str((enum wgf_dtype)q->qt));
        for (char *c = t; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
        if (u && strlen(st.label) + strlen(t) < sizeof st.label) {
            memmove(u + strlen(t), u, strlen(u) + 1);
            memcpy(u, t, strlen(t));
        }
    }
    char     disp[1024];
    size_t   dl = (size_t)snprintf(disp, sizeof disp, "fn qkv_dispatch(wg: u32, li: u32) {\n");
    uint32_t w0 = 0;
    for (uint32_t i = i0; i < i1; i++) {
        const struct gr_part *q = &L->qkv.part[i];
        uint32_t              n = qkv_groups(q), ki = i - i0;
        char                  sfx[8] = "";
        if (ki) snprintf(sfx, sizeof sfx, "_%u", ki);
        k[ki] = (struct wgf_constant){woff[ki], (double)((q->off - lo) / 16)};
        if (ki == 0) qkv_part_prelude(g, &p, l, q);
        else {
            struct wgf_prelude pk = {0};
            qkv_part_prelude(g, &pk, l, q);
            if (pk.oom) p.oom = true;
            else wgf_prelude_instance(&p, pk.s, sfx);
            wgf_prelude_free(&pk);
        }
        dl += (size_t)snprintf(disp + dl, dl < sizeof disp ? sizeof disp - dl : 0,
                               "    if (wg < %uu) { qkv_rows%s(wg - %uu, li); return; }\n", w0 + n, sfx, w0);
        w0 += n;
        bytes += q->bytes, rows += q->rows;
    }
    WGF_ASSERT(dl + 2 < sizeof disp);
    wgf_prelude_text(&p, disp);
    wgf_prelude_text(&p, "}");
    st.k          = k;
    st.nk         = (int)(i1 - i0);
    st.b[st.nb++] = B(g->q, 0, 0);
    st.b[st.nb++] = B(L->kc, 0, 0);
    st.b[st.nb++] = B(L->vc, 0, 0);
    st.b[st.nb++] = B(g->x, 0, 0);
    st.b[st.nb++] = BV(g, L->attn_norm);
    st.b[st.nb++] = B(pt->buf, lo, hi - lo);
    st.b[st.nb++] = BV(g, L->bias);
    st.b[st.nb++] = B(g->rope, 0, 0);
    st.b[st.nb++] = B(g->st, 0, 0);
    st.gx   = w0;
    st.cost = (struct wgf_step_cost){bytes + (uint64_t)g->dimp * 8, rows * 4, 2ull * rows * g->dim};
    return emit(g, s, &st, &p, err);
}

/* Whether parts [i0, i1) can share a dispatch: all quantized (one XW choice) with one kind of
 * activations, in one arena buffer, and their instances' workgroup memory within the device's:
 * the kernel's x * g copy plus per instance the reductions' arrays (< 2 KiB) and the int8
 * input under q8 or three digits (GR_X8_BYTES, GR_X3_BYTES). */
static bool qkv_mergeable(const struct gr *g, const struct gr_mat *m, uint32_t i0, uint32_t i1)
{
    uint64_t need = 0;
    bool     xw   = false;
    for (uint32_t i = i0; i < i1; i++) {
        const struct gr_part *q = &m->part[i];
        if (q->qt == GR_QT_F || q->arena != m->part[i0].arena || q->x3 != m->part[i0].x3) return false;
        need += 2048 + (g->qx8 ? GR_X8_BYTES(q->nu) : q->x3 ? GR_X3_BYTES(q->nu) : 0);
        xw |= g->xw && !g->qx8 && !q->x3;
    }
    need += xw ? (uint64_t)g->dimp * 4 : 0;
    return i1 - i0 <= GR_MAX_RUNS && need <= wgf_ctx_limits(g->ctx)->max_compute_workgroup_storage_size;
}

enum wgf_status gr_emit_attn_qkv(struct gr *g, wgf_schedule *s, int l, struct wgf_err *err)
{
    const struct gr_mat *m = &g->L[l].qkv;
    if (m->n_parts > 1 && qkv_mergeable(g, m, 0, m->n_parts)) return emit_qkv_parts(g, s, l, 0, m->n_parts, err);
    for (uint32_t i = 0; i < m->n_parts; i++) {
        enum wgf_status r = emit_qkv_parts(g, s, l, i, i + 1, err);
        if (r) return r;
    }
    return WGF_OK;
}

enum wgf_status gr_emit_attn_split(struct gr *g, wgf_schedule *s, int l, bool prefill, bool direct,
                                   struct wgf_err *err)
{
    const struct gr_layer *L  = &g->L[l];
    struct gr_step         st = {0};
    struct wgf_prelude     p  = {0};
    label(g, &st, "attn_split", prefill ? "rows" : direct ? "one" : NULL);
    struct wgf_matvec_cfg cfg = plain_cfg();
    if (!prefill) cfg.tpr = g->att_wg; /* one workgroup of att_wg invocations per (head, slice) */
    pre_model(g, &p, cfg);
    wgf_prelude_bool(&p, "DIRECT", direct, direct ? "one slice: write the normalised output" : "write partials");
    wgf_prelude_u32(&p, "WINDOW", (uint32_t)wgf_llm_layer_window(&g->c, l), "this layer's sliding window (0: none)");
    st.b[st.nb++] = direct ? B(prefill ? g->ATT : g->att, 0, 0) : B(g->zero, 0, 0);
    st.b[st.nb++] = B(g->part, 0, 0);
    st.b[st.nb++] = B(prefill ? g->Q : g->q, 0, 0);
    st.b[st.nb++] = B(L->kc, 0, 0);
    st.b[st.nb++] = B(L->vc, 0, 0);
    st.b[st.nb++] = B(g->st, 0, 0);
    if (prefill) st.slot = GR_ARG_ATT;
    else st.gx = (uint32_t)g->c.n_heads, st.gy = direct ? 1 : g->n_split;
    /* the cache bytes depend on the position: the profile shows time, not GB/s, here */
    st.cost = (struct wgf_step_cost){(uint64_t)g->q_dim * 4, (uint64_t)g->q_dim * 4, 0};
    return emit(g, s, &st, &p, err);
}

enum wgf_status gr_emit_attn_combine(struct gr *g, wgf_schedule *s, bool prefill, struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    label(g, &st, "attn_combine", prefill ? "rows" : NULL);
    pre_model(g, &p, plain_cfg());
    st.b[st.nb++] = B(prefill ? g->ATT : g->att, 0, 0);
    st.b[st.nb++] = B(g->part, 0, 0);
    st.b[st.nb++] = B(g->st, 0, 0);
    if (prefill) st.slot = GR_ARG_ROWS;
    st.cost = (struct wgf_step_cost){(uint64_t)g->q_dim * 4 * 2, (uint64_t)g->q_dim * 4, 0};
    return emit(g, s, &st, &p, err);
}

enum wgf_status gr_emit_gemv(struct gr *g, wgf_schedule *s, const char *role, const struct gr_mat *w, wgf_buffer *x,
                             wgf_buffer *y, bool accum, struct wgf_err *err)
{
    for (uint32_t i = 0; i < w->n_parts; i++) {
        const struct gr_part *pt = &w->part[i];
        struct gr_step        st = {0};
        struct wgf_prelude    p  = {0};
        gr_step_label_part(g, &st, "gemv", role, pt);
        pre_model(g, &p, pt->cfg);
        gr_prelude_part(g, &p, w, pt);
        wgf_prelude_u32(&p, "N", pt->rows, "rows of this part");
        wgf_prelude_u32(&p, "ROW0", pt->row0, "first row of this part");
        wgf_prelude_bool(&p, "ACCUM", accum, accum ? "y += W x: the residual add" : "y = W x");
        st.frags[0]   = pt->qt == GR_QT_F ? "lib_rows" : "lib_rows_q";
        st.frags[1]   = pt->qt == GR_QT_F ? NULL : "lib_qblock";
        st.b[st.nb++] = B(y, 0, 0);
        st.b[st.nb++] = B(x, 0, 0);
        st.b[st.nb++] = BP(pt);
        st.gx   = cdiv(pt->rows, (uint64_t)pt->cfg.gpw * pt->cfg.rpg);
        st.cost = (struct wgf_step_cost){pt->bytes + (uint64_t)w->kc * 32 + (accum ? pt->rows * 4ull : 0),
                                         (uint64_t)pt->rows * 4, 2ull * pt->rows * w->cols};
        enum wgf_status r = emit(g, s, &st, &p, err);
        if (r) return r;
    }
    return WGF_OK;
}

enum wgf_status gr_emit_ffn_gate_up(struct gr *g, wgf_schedule *s, int l, struct wgf_err *err)
{
    const struct gr_layer *L = &g->L[l];
    for (uint32_t i = 0; i < L->gu.n_parts; i++) {
        const struct gr_part *pt  = &L->gu.part[i];
        const uint32_t        ppg = pt->cfg.rpg / 2;
        struct gr_step        st  = {0};
        struct wgf_prelude    p   = {0};
        gr_step_label_part(g, &st, "ffn_gate_up", NULL, pt);
        pre_model(g, &p, pt->cfg);
        gr_prelude_part(g, &p, &L->gu, pt);
        wgf_prelude_u32(&p, "PPG", ppg, "outputs (gate, up row pairs) per row group");
        wgf_prelude_u32(&p, "N_OUT", pt->rows / 2, "outputs of this row part");
        wgf_prelude_u32(&p, "O0", pt->row0 / 2, "first output of this row part");
        st.frags[0]   = pt->qt == GR_QT_F ? "lib_rows" : "lib_rows_q";
        st.frags[1]   = "lib_rows_rms";
        st.frags[2]   = pt->qt == GR_QT_F ? NULL : "lib_qblock";
        st.b[st.nb++] = B(g->h, 0, 0);
        st.b[st.nb++] = B(g->x, 0, 0);
        st.b[st.nb++] = BV(g, L->ffn_norm);
        st.b[st.nb++] = BP(pt);
        st.gx   = cdiv(pt->rows / 2, (uint64_t)pt->cfg.gpw * ppg);
        st.cost = (struct wgf_step_cost){pt->bytes + (uint64_t)g->dimp * 8, (uint64_t)pt->rows * 2,
                                         2ull * pt->rows * g->dim};
        enum wgf_status r = emit(g, s, &st, &p, err);
        if (r) return r;
    }
    return WGF_OK;
}

enum wgf_status gr_emit_lm_head(struct gr *g, wgf_schedule *s, enum gr_xsrc xs, struct wgf_err *err)
{
    const struct gr_mat *w     = &g->lm_head;
    uint32_t             best0 = 0;
    for (uint32_t i = 0; i < w->n_parts; i++) {
        const struct gr_part *pt = &w->part[i];
        struct gr_step        st = {0};
        struct wgf_prelude    p  = {0};
        gr_step_label_part(g, &st, "lm_head", NULL, pt);
        pre_model(g, &p, pt->cfg);
        gr_prelude_part(g, &p, w, pt);
        wgf_prelude_u32(&p, "N", pt->rows, "vocabulary rows of this part");
        wgf_prelude_u32(&p, "ROW0", pt->row0, "first row of this part");
        wgf_prelude_u32(&p, "BEST0", best0, "first argmax partial of this part");
        wgf_prelude_bool(&p, "ARGMAX", true, "per-workgroup argmax partials for greedy sampling");
        wgf_prelude_bool(&p, "XROW_ST", xs == GR_X_PREFILL_LAST, "x: the prefill chunk's last row");
        st.frags[0]   = pt->qt == GR_QT_F ? "lib_rows" : "lib_rows_q";
        st.frags[1]   = "lib_rows_rms";
        st.frags[2]   = pt->qt == GR_QT_F ? NULL : "lib_qblock";
        st.b[st.nb++] = B(g->logits, 0, 0);
        st.b[st.nb++] = B(g->best, 0, 0);
        st.b[st.nb++] = B(xs == GR_X_PREFILL_LAST ? g->X : g->x, 0, 0);
        st.b[st.nb++] = BV(g, g->out_norm);
        st.b[st.nb++] = BP(pt);
        st.b[st.nb++] = B(g->st, 0, 0);
        st.gx   = cdiv(pt->rows, (uint64_t)pt->cfg.gpw * pt->cfg.rpg);
        st.cost = (struct wgf_step_cost){pt->bytes + (uint64_t)g->dimp * 8, (uint64_t)pt->rows * 4 + st.gx * 8ull,
                                         2ull * pt->rows * g->dim};
        best0 += st.gx;
        enum wgf_status r = emit(g, s, &st, &p, err);
        if (r) return r;
    }
    return WGF_OK;
}

enum wgf_status gr_emit_sample_argmax(struct gr *g, wgf_schedule *s, struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    label(g, &st, "sample_argmax", NULL);
    pre_model(g, &p, plain_cfg());
    gr_prelude_part(g, &p, g->emb, &g->emb->part[0]);
    st.frags[0] = "lib_embed";
    st.frags[1] = "lib_advance";
    st.frags[2] = "lib_qblock";
    st.b[st.nb++] = B(g->x, 0, 0);
    st.b[st.nb++] = B(g->st, 0, 0);
    st.b[st.nb++] = B(g->seq, 0, 0);
    st.b[st.nb++] = B(g->best, 0, 0);
    bind_emb(g, &st);
    st.cost = (struct wgf_step_cost){(uint64_t)g->nbest * 8 + (uint64_t)g->emb->part[0].kcs * 16, (uint64_t)g->dimp * 4,
                                     0};
    return emit(g, s, &st, &p, err);
}

enum wgf_status gr_emit_sample_penalty(struct gr *g, wgf_schedule *s, struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    label(g, &st, "sample_penalty", NULL);
    pre_model(g, &p, plain_cfg());
    st.b[st.nb++] = B(g->logits, 0, 0);
    st.b[st.nb++] = B(g->seq, 0, 0);
    st.b[st.nb++] = B(g->st, 0, 0);
    st.b[st.nb++] = B(g->sp, 0, 0);
    return emit(g, s, &st, &p, err);
}

enum wgf_status gr_emit_sample_topk(struct gr *g, wgf_schedule *s, struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    label(g, &st, "sample_topk", NULL);
    pre_model(g, &p, plain_cfg());
    st.frags[0]   = "lib_topk";
    st.b[st.nb++] = B(g->cand, 0, 0);
    st.b[st.nb++] = B(g->logits, 0, 0);
    st.b[st.nb++] = B(g->sp, 0, 0);
    st.gx         = GR_NCAND;
    st.cost       = (struct wgf_step_cost){(uint64_t)g->vocab * 4, GR_NCAND * GR_KMAX * 8ull, 0};
    enum wgf_status r = emit(g, s, &st, &p, err);
    if (r) return r;
    struct gr_step     pk = {0};
    struct wgf_prelude q  = {0};
    label(g, &pk, "sample_pick", NULL);
    pre_model(g, &q, plain_cfg());
    gr_prelude_part(g, &q, g->emb, &g->emb->part[0]);
    pk.frags[0]   = "lib_topk";
    pk.frags[1]   = "lib_embed";
    pk.frags[2]   = "lib_advance";
    pk.frags[3]   = "lib_qblock";
    pk.b[pk.nb++] = B(g->x, 0, 0);
    pk.b[pk.nb++] = B(g->st, 0, 0);
    pk.b[pk.nb++] = B(g->seq, 0, 0);
    pk.b[pk.nb++] = B(g->cand, 0, 0);
    pk.b[pk.nb++] = B(g->sp, 0, 0);
    bind_emb(g, &pk);
    pk.cost = (struct wgf_step_cost){GR_NCAND * GR_KMAX * 8ull + (uint64_t)g->emb->part[0].kcs * 16,
                                     (uint64_t)g->dimp * 4, 0};
    return emit(g, s, &pk, &q, err);
}

/* ---- prefill roles --------------------------------------------------------------------- */

enum wgf_status gr_emit_rmsnorm_rows(struct gr *g, wgf_schedule *s, wgf_buffer *y, wgf_buffer *x, struct gr_vec gw,
                                     struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    label(g, &st, "rmsnorm_rows", NULL);
    pre_model(g, &p, plain_cfg());
    st.b[st.nb++] = B(y, 0, 0);
    st.b[st.nb++] = B(x, 0, 0);
    st.b[st.nb++] = BV(g, gw);
    st.slot       = GR_ARG_ROWS;
    return emit(g, s, &st, &p, err);
}

/* --activations q8: XQ = x rounded to int8 values per 32-element block (the matmul's quantized
 * parts read it; its float parts read x) */
static enum wgf_status emit_qround_rows(struct gr *g, wgf_schedule *s, wgf_buffer *x, uint32_t xs4, uint32_t cols,
                                       struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    label(g, &st, "qround_rows", NULL);
    pre_model(g, &p, plain_cfg());
    wgf_prelude_u32(&p, "NB", cols / 32, "32-element blocks per row");
    wgf_prelude_u32(&p, "XS4", xs4, "row stride in vec4");
    st.b[st.nb++] = B(g->XQ, 0, 0);
    st.b[st.nb++] = B(x, 0, 0);
    st.slot       = GR_ARG_ROWS;
    st.cost       = (struct wgf_step_cost){(uint64_t)cols * 4, (uint64_t)cols * 4, 0}; /* per row */
    return emit(g, s, &st, &p, err);
}

enum wgf_status gr_emit_matmul(struct gr *g, wgf_schedule *s, const char *role, const struct gr_mat *w,
                               wgf_buffer *x, uint32_t xs4, wgf_buffer *y, uint32_t ys, bool accum,
                               const struct gr_vec *bias, struct wgf_err *err)
{
    bool round = false;
    for (uint32_t i = 0; i < w->n_parts; i++) round |= g->qx8 && w->part[i].qt != GR_QT_F;
    if (round) {
        WGF_ASSERT(g->XQ && w->cols % 32 == 0);
        enum wgf_status r = emit_qround_rows(g, s, x, xs4, w->cols, err);
        if (r) return r;
    }
    for (uint32_t i = 0; i < w->n_parts; i++) {
        const struct gr_part *pt = &w->part[i];
        struct gr_step        st = {0};
        struct wgf_prelude    p  = {0};
        gr_step_label_part(g, &st, "matmul", role, pt);
        pre_model(g, &p, plain_cfg());
        gr_prelude_part(g, &p, w, pt);
        wgf_prelude_u32(&p, "XS4", xs4, "x row stride in vec4");
        wgf_prelude_u32(&p, "YS", ys, "y row stride in floats");
        wgf_prelude_u32(&p, "N", pt->rows, "weight rows of this part");
        wgf_prelude_u32(&p, "ROW0", pt->row0, "first row of this part (y column offset)");
        wgf_prelude_bool(&p, "ACCUM", accum, accum ? "y += x W^T: the residual add" : "y = x W^T");
        wgf_prelude_bool(&p, "HAS_BIAS", bias != NULL, "bias in the epilogue");
        struct gr_mm_shape sh = gr_mm_shape(pt->rows, w->cols);
        wgf_prelude_u32(&p, "BN", sh.bn, "weight rows per tile");
        wgf_prelude_u32(&p, "TM", sh.tm, "tokens per invocation (tile: 1024 / BN * TM tokens)");
        wgf_prelude_u32(&p, "KSPLIT", sh.ks, sh.ks > 1 ? "K in this many parts: partials, then matmul_reduce" : "K whole");
        wgf_prelude_u32(&p, "T_MAX", GR_T_MAX, "tokens of a prefill chunk at most (the partials' stride)");
        st.frags[0]   = "lib_qblock";
        st.frags[1]   = "lib_mm_store";
        st.b[st.nb++] = B(sh.ks > 1 ? g->MMP : y, 0, 0);
        st.b[st.nb++] = B(g->qx8 && pt->qt != GR_QT_F ? g->XQ : x, 0, 0);
        st.b[st.nb++] = BP(pt);
        st.b[st.nb++] = bias ? BV(g, *bias) : B(g->zero, 0, 0);
        st.b[st.nb++] = B(g->st, 0, 0);
        st.slot       = (int)mm_slot(g, pt->rows, sh.bn, sh.bm, sh.ks);
        st.cost       = (struct wgf_step_cost){pt->bytes, 0, 0}; /* per chunk of T tokens */
        enum wgf_status r = emit(g, s, &st, &p, err);
        if (r) return r;
        if (sh.ks == 1) continue;
        /* the partials' sum, with the bias or the residual add */
        struct gr_step     rd = {0};
        struct wgf_prelude q  = {0};
        gr_step_label_part(g, &rd, "matmul_reduce", role, pt);
        rd.frags[0] = "lib_mm_store";
        pre_model(g, &q, plain_cfg());
        wgf_prelude_u32(&q, "N", pt->rows, "weight rows of this part");
        wgf_prelude_u32(&q, "ROW0", pt->row0, "first row of this part (y column offset)");
        wgf_prelude_u32(&q, "YS", ys, "y row stride in floats");
        wgf_prelude_u32(&q, "KSPLIT", sh.ks, "partials to add");
        wgf_prelude_u32(&q, "T_MAX", GR_T_MAX, "tokens of a prefill chunk at most (the partials' stride)");
        wgf_prelude_bool(&q, "ACCUM", accum, accum ? "y += the sum: the residual add" : "y = the sum");
        wgf_prelude_bool(&q, "HAS_BIAS", bias != NULL, "bias");
        rd.b[rd.nb++] = B(y, 0, 0);
        rd.b[rd.nb++] = B(g->MMP, 0, 0);
        rd.b[rd.nb++] = bias ? BV(g, *bias) : B(g->zero, 0, 0);
        rd.slot       = GR_ARG_ROWS;
        rd.cost       = (struct wgf_step_cost){(uint64_t)sh.ks * pt->rows * 4, (uint64_t)pt->rows * 4, 0}; /* per row */
        if ((r = emit(g, s, &rd, &q, err))) return r;
    }
    return WGF_OK;
}

enum wgf_status gr_emit_rope_rows(struct gr *g, wgf_schedule *s, int l, struct wgf_err *err)
{
    const struct gr_layer *L  = &g->L[l];
    struct gr_step         st = {0};
    struct wgf_prelude     p  = {0};
    label(g, &st, "rope_rows", NULL);
    pre_model(g, &p, plain_cfg());
    wgf_prelude_u32(&p, "N_PAIRS", g->pairs, "row pairs of [q; k; v]");
    wgf_prelude_u32(&p, "QKV_S", g->qkv_s, "row stride of the QKV matmul output");
    st.frags[0]   = "lib_pairs";
    st.b[st.nb++] = B(g->Q, 0, 0);
    st.b[st.nb++] = B(L->kc, 0, 0);
    st.b[st.nb++] = B(L->vc, 0, 0);
    st.b[st.nb++] = B(g->QKV, 0, 0);
    st.b[st.nb++] = B(g->rope, 0, 0);
    st.b[st.nb++] = B(g->st, 0, 0);
    st.slot       = GR_ARG_ROWS;
    return emit(g, s, &st, &p, err);
}

enum wgf_status gr_emit_silu_mul_rows(struct gr *g, wgf_schedule *s, struct wgf_err *err)
{
    struct gr_step     st = {0};
    struct wgf_prelude p  = {0};
    label(g, &st, "silu_mul_rows", NULL);
    pre_model(g, &p, plain_cfg());
    wgf_prelude_u32(&p, "GU_S", g->gu_s, "row stride of the gate/up matmul output");
    st.b[st.nb++] = B(g->H, 0, 0);
    st.b[st.nb++] = B(g->GU, 0, 0);
    st.slot       = GR_ARG_ROWS;
    return emit(g, s, &st, &p, err);
}
