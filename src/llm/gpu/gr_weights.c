/* wgfuse — the roles plan's weights on the GPU.
 *
 * Format: every matrix row is KC 16-byte chunks: 8 f16 (two per u32, element 2i in the low
 * half, WGSL's unpack2x16float order) or 4 f32, zero padded past `cols` to a multiple of 16
 * elements (so every activation vector is padded the same way and kernels sum whole chunks).
 * f16 comes from the model's own row decoder (wgf_tensor_row_f32: every stored type, the
 * quantized GGUF blocks included: the GPU plans dequantize them at upload, issue 14's kernels
 * for quantized rows are not written yet)
 * rounded to nearest even; a value past f16's range fails the load, naming the tensor (use
 * --weights f32), instead of becoming infinity.
 *
 * Placement: matrices go, in model order, into arena buffers of at most one storage binding
 * each (arena_cap), at offsets aligned to minStorageBufferOffsetAlignment; a matrix larger
 * than a binding is split into row parts (an even number of rows: the paired matrices keep
 * every pair in one part), also kept under the dispatch grid limit. The layout is planned
 * first, then the buffers are created at their exact sizes, then filled; a failure anywhere
 * frees everything (the caller's gr_weights_free).
 *
 * Stored row order: attn_qkv by RoPE pair (lib_pairs: rows 2p, 2p + 1 = pair p), ffn gate/up
 * interleaved (2i = gate i, 2i + 1 = up i), everything else as in the model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/gpu/gr.h"

#define GR_UPLOAD_BYTES (4u << 20) /* host staging per write                               */

/* ---- the pair order of [q; k; v] (the C twin of lib_pairs.wgsl's pair_rows) ---------- */
static void pair_rows(const struct gr *g, uint32_t p, uint32_t *a, uint32_t *b)
{
    uint32_t qk_pairs = (g->q_dim + g->kv_dim) / 2;
    if (p < qk_pairs) {
        uint32_t head = p / (g->hd / 2), i = p % (g->hd / 2), base = head * g->hd;
        if (i < g->half) {
            *a = base + i, *b = base + i + g->half;
            return;
        }
        uint32_t j = i - g->half;
        *a = base + g->rot + 2 * j, *b = *a + 1;
        return;
    }
    uint32_t j = p - qk_pairs;
    *a = g->q_dim + g->kv_dim + 2 * j, *b = *a + 1;
}

/* row r of [q; k; v] (or of the bias) as a source tensor and row */
static const struct wgf_tensor *qkv_src(const struct gr *g, const struct wgf_layer_weights *M, bool bias, uint32_t r,
                                        int64_t *row)
{
    if (r < g->q_dim) {
        *row = r;
        return bias ? &M->bq : &M->wq;
    }
    if (r < g->q_dim + g->kv_dim) {
        *row = r - g->q_dim;
        return bias ? &M->bk : &M->wk;
    }
    *row = r - g->q_dim - g->kv_dim;
    return bias ? &M->bv : &M->wv;
}

enum mat_kind { MK_PLAIN, MK_QKV, MK_GU };
struct mat_src {
    enum mat_kind                   kind;
    const struct wgf_tensor        *t; /* MK_PLAIN                                          */
    const struct wgf_layer_weights *M; /* MK_QKV, MK_GU                                     */
    const char                     *label;
};

/* the source tensor and row of stored row s */
static const struct wgf_tensor *src_of(const struct gr *g, const struct mat_src *src, uint32_t s, int64_t *row_out)
{
    int64_t                  row = s;
    const struct wgf_tensor *t   = src->t;
    if (src->kind == MK_QKV) {
        uint32_t a, b;
        pair_rows(g, s / 2, &a, &b);
        t = qkv_src(g, src->M, false, s % 2 ? b : a, &row);
    } else if (src->kind == MK_GU) {
        t   = s % 2 ? &src->M->w_up : &src->M->w_gate;
        row = s / 2;
    }
    *row_out = row;
    return t;
}

/* ---- layout ------------------------------------------------------------------------------ */

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* A place for `bytes` in the arenas: the current one, or a new one. */
static enum wgf_status place(struct gr *g, uint64_t bytes, uint32_t *arena, uint64_t *off, struct wgf_err *err)
{
    if (g->n_arena == 0 || align_up(g->arena_size[g->n_arena - 1], g->align) + bytes > g->arena_cap) {
        if (g->n_arena == g->cap_arena) {
            uint32_t     cap = g->cap_arena ? 2 * g->cap_arena : 8;
            uint64_t    *sz  = realloc(g->arena_size, cap * sizeof *sz);
            if (!sz) return wgf_fail(err, WGF_ERR_NOMEM, "gpu-roles: weight layout");
            g->arena_size = sz;
            wgf_buffer **ab = realloc(g->arena, cap * sizeof *ab);
            if (!ab) return wgf_fail(err, WGF_ERR_NOMEM, "gpu-roles: weight layout");
            g->arena     = ab;
            g->cap_arena = cap;
        }
        g->arena[g->n_arena]        = NULL;
        g->arena_size[g->n_arena++] = 0;
    }
    *arena                         = g->n_arena - 1;
    *off                           = align_up(g->arena_size[*arena], g->align);
    g->arena_size[g->n_arena - 1] = *off + bytes;
    return WGF_OK;
}

/* The decode layout of a matrix (rows per group, invocations per row): measured on the H200
 * (bench/RESULTS.md, `wgfuse bench matvec`): large matrices gain from 4 rows per group (each
 * x chunk serves 4 rows: lm_head f16 280 -> 188 us), small ones from more invocations per row
 * (fewer loads each, more workgroups: attn_output 5.3 -> 4.1 us). */
struct wgf_matvec_cfg gr_mat_cfg(uint32_t kc, uint32_t rows, bool paired)
{
    uint32_t rpg = paired ? 2 : 1, loads = 8;
    if (rows >= 16384) rpg = 4, loads = 16;
    else if (rows < 4096) loads = 4;
    return wgf_matvec_cfg_pick(kc, rpg, loads, 0);
}

/* The decode layout of a quantized part, counting lib_rows_q's items (64 elements of Q4_K..Q6_K,
 * else 32), 4 rows per group for the large matrices (each activation read serves 4 rows).
 * f32 activations: one item per invocation (more invocations per row, not more items each: on
 * the H200 two items each were 5-20% slower, bench/RESULTS.md), but for Q4_K / Q6_K (below).
 * int8 activations (q8): every
 * workgroup first rounds the whole input into workgroup memory, so a workgroup should own many
 * rows: the fewest invocations per row (down to 8, at most 8 items each) that still leave
 * min_wg workgroups (GR_Q8_MIN_WG unless the options say; on the H200 Phi-3-mini Q4_K_M went
 * 253 -> 401 tok/s with ~128 rows per workgroup of its large matrices, and a floor of 256
 * workgroups beat 64 / 128 / 512 on both Phi-3-mini and Qwen2.5-0.5B: 470 / 994 tok/s against
 * 456 / 954 at 128, bench/RESULTS.md; a small model's matrices never reach the floor and keep
 * one item per invocation).
 * f32 activations, an unpaired matrix under 16384 rows (attn_output, ffn_down: the gemv roles,
 * whose lanes read their item's 32 or 64 activations from memory, 128-256 bytes apart; and a
 * small vocabulary's lm_head): the most rows per group, up to q_rpg_cap, that still leave
 * min_wg workgroups, so one activation read serves several rows. On the H200
 * (bench/RESULTS.md, "Sixth cut: the gemv roles take several rows per group") 2 rows took
 * Phi-3-mini's ffn_down Q4_K from 35.0 to 28.2 us, and 4 rows Phi-3-mini Q4_0 / Q8_0 decode
 * +19%; Q6_K parts were slower with 2 (26.4 -> 27.3 us; before the streamed dots), and
 * below ~200 workgroups (Qwen2.5-0.5B's attn_output at 56) the device runs short of rows in
 * flight.
 * Q4_K / Q5_K / Q6_K, f32 activations (lib_rows_q's streamed dots, which hold one code word's
 * activations at a time): the norm-prologue roles (attn_qkv, ffn_gate_up: paired; lm_head: 2
 * rows) take up to GR_QK_ITEMS items per invocation, so a workgroup owns 2-3x the rows and
 * amortises its x * g copy, while that still leaves min_wg workgroups; in the gemv roles Q4_K
 * takes up to 4 rows, Q5_K 2 rows, Q6_K 2 rows of 2 items. On the H200 (bench/RESULTS.md,
 * "Eighth cut") these took Phi-3-mini Q4_K_M from 344 (streamed dots, one item) to 382 tok/s:
 * attn_qkv Q4_K 28.1 -> 24.7 us, lm_head Q6_K 88.4 -> 60.2, ffn_gate_up 36.3 -> 30.5 (-32.8
 * at 4 rows), ffn_down Q6_K 26.5 -> 24.0; Q5_K's 2 rows ("Ninth cut") took Phi-3-mini Q5_K_M
 * from 315 to 360-365 tok/s (attn_output 23.6 -> 15.3 us, ffn_down 37.2 -> 27.0). */
static uint32_t q_rpg_cap(uint32_t qt)
{
    switch (qt) {
    case WGF_DT_Q4_0: case WGF_DT_Q4_1: case WGF_DT_Q5_0: case WGF_DT_Q5_1: case WGF_DT_Q8_0: case WGF_DT_Q4_K: return 4;
    case WGF_DT_Q5_K: case WGF_DT_Q6_K: return 2;
    default: return 1; /* Q2_K / Q3_K (decoded from memory) */
    }
}

static uint32_t cfg_groups(struct wgf_matvec_cfg c, uint32_t rows) { return (rows + c.gpw * c.rpg - 1) / (c.gpw * c.rpg); }

/* rows the busiest of cu compute units gets when c's workgroups spread over them evenly */
static uint64_t cfg_unit_rows(struct wgf_matvec_cfg c, uint32_t rows, uint32_t cu)
{
    return (uint64_t)((cfg_groups(c, rows) + cu - 1) / cu) * c.gpw * c.rpg;
}

/* The workgroup size of a one-wave grid, spread over the compute units. The norm-prologue
 * roles' K-quant layouts (below) give every workgroup 2-4 rows per group and mostly run in one
 * wave, so a role takes as long as its busiest unit: Phi-3-mini's W_qkv (9,216 rows, 32 a
 * workgroup) is 288 workgroups on the H200's 132 units, three on 24 of them and two on the
 * rest. Keeping each invocation's work, this grows the workgroup by whole subgroups (up to
 * GR_WG_MAX invocations) while that lowers the busiest unit's rows: 36 rows, 256 workgroups, at
 * most two a unit (72 rows where there were 96). On an H100 (132 units, measured) that took
 * Phi-3-mini Q4_K_M from 405.2-405.4 to 414.3-415.1 tok/s (bench/RESULTS.md, "Twentieth cut").
 * A grid of more than GR_SPREAD_WAVES workgroups a unit is left alone: lm_head's 1,002 (7.6 a
 * unit) spread to 891 ran 0.2% slower. Which rows a workgroup takes does not change any sum
 * (the norm's statistic is summed by the first 256 invocations whatever the size:
 * lib_rows_rms), so results are the same for every cu. */
static struct wgf_matvec_cfg cfg_spread(const struct gr *g, struct wgf_matvec_cfg c, uint32_t rows)
{
    uint32_t cu = g->cu, sgs = g->sgs, wg_max = GR_WG_MAX;
    if (!cu || cfg_groups(c, rows) > GR_SPREAD_WAVES * cu) return c; /* several waves even out */
    /* without subgroups the reductions hold 20 bytes an invocation beside the x * g copy */
    const struct wgf_limits *lim  = wgf_ctx_limits(g->ctx);
    uint64_t                 room = lim->max_compute_workgroup_storage_size;
    uint64_t                 used = (g->xw ? (uint64_t)g->dimp * 5 : 0) + 1024; /* the copy, padded (XWN) */
    if (!sgs) wg_max = room > used + 20u * 256 ? (uint32_t)((room - used) / 20 < GR_WG_MAX ? (room - used) / 20 : GR_WG_MAX) : 256;
    /* lib_reduce_sg keeps one slot per subgroup (64); the device's own workgroup limits */
    if (sgs && 64u * sgs < wg_max) wg_max = 64u * sgs;
    if (lim->max_compute_invocations_per_workgroup < wg_max) wg_max = lim->max_compute_invocations_per_workgroup;
    if (lim->max_compute_workgroup_size_x < wg_max) wg_max = lim->max_compute_workgroup_size_x;
    uint32_t unit = 32;
    if (sgs > unit) unit = sgs;
    if (c.tpr > unit) unit = c.tpr;
    uint32_t              step = unit / c.tpr; /* groups a whole number of subgroups holds */
    struct wgf_matvec_cfg best = c;
    uint64_t              load = cfg_unit_rows(c, rows, cu);
    for (uint32_t gpw = c.gpw + step; gpw * c.tpr <= wg_max; gpw += step) {
        struct wgf_matvec_cfg t = c;
        t.gpw                   = gpw;
        uint64_t l              = cfg_unit_rows(t, rows, cu);
        if (l < load) best = t, load = l;
    }
    return best;
}

static struct wgf_matvec_cfg q_cfg(struct gr *g, uint32_t qt, uint32_t ni, uint32_t rows, bool paired, bool q8,
                                   uint32_t min_wg, uint32_t min_wg_rows)
{
    uint32_t rpg = paired ? 2 : 1, loads = 2;
    if (rows >= 16384) rpg = 4, loads = 4;
    else if (rows < 4096) loads = 1;
    struct wgf_matvec_cfg c  = wgf_matvec_cfg_pick(ni, rpg, loads, 0);
    bool                  kq = qt == WGF_DT_Q4_K || qt == WGF_DT_Q5_K || qt == WGF_DT_Q6_K;
    if (!q8 && kq && (paired || rows >= 16384)) {
        uint32_t              r = paired ? rpg : 2;
        struct wgf_matvec_cfg t = wgf_matvec_cfg_pick(ni, r, r * GR_QK_ITEMS, 0);
        if (cfg_groups(t, rows) >= min_wg_rows) {
            if (!g->cu_known) g->cu = wgf_ctx_compute_units(g->ctx), g->cu_known = true;
            return cfg_spread(g, t, rows);
        }
    }
    if (!q8 && !paired && rows < 16384) {
        for (uint32_t r = q_rpg_cap(qt); r > 1; r /= 2) {
            struct wgf_matvec_cfg t = wgf_matvec_cfg_pick(ni, r, r * (qt == WGF_DT_Q6_K ? 2 : 1), 0);
            if (cfg_groups(t, rows) >= min_wg_rows) return t;
        }
    }
    if (!q8) return c;
    for (uint32_t tpr = 8; tpr < c.tpr; tpr *= 2) {
        struct wgf_matvec_cfg t = wgf_matvec_cfg_pick(ni, rpg, 8 * rpg, tpr);
        if (t.nit <= 8 && cfg_groups(t, rows) >= min_wg) return t;
    }
    return c;
}

/* the GPU row format of stored row s: its tensor's block type when the shader decodes it */
static uint32_t row_qt(const struct gr *g, const struct mat_src *src, uint32_t s, uint32_t cols)
{
    int64_t                  row;
    const struct wgf_tensor *t = src_of(g, src, s, &row);
    struct gr_qlayout        L;
    return gr_qlayout(t->dtype, cols, &L) ? (uint32_t)t->dtype : GR_QT_F;
}

#define GR_WIDEN_BYTES (4u << 20) /* bytes a matrix may grow by to read one block type (below) */

/* The one block type rows of several types are repacked as (gr_qwidens), else GR_QT_F. A
 * dispatch less is worth a few more bytes: Qwen2.5-0.5B Q4_K_M's W_qkv is Q5_0 q/k rows and
 * Q8_0 v rows in half its layers, +0.34 MB each as Q8_0 against a ~5 us dispatch on the
 * H200 (bench/RESULTS.md). A matrix may grow by GR_WIDEN_BYTES and all of them together by
 * g->widen_left (1/32 of the model's weight bytes, at least GR_WIDEN_BYTES: a real model's
 * device copy stays within ~1.03x the file); rows interleaving types (gate/up pairs) widen
 * whatever the bytes, the alternative being the float format. */
static uint32_t widen_qt(struct gr *g, const struct mat_src *src, uint32_t rows, uint32_t cols)
{
    uint32_t n[WGF_DT_COUNT] = {0}, runs = 0, prev = GR_QT_F;
    for (uint32_t r = 0; r < rows; r++) {
        uint32_t qt = row_qt(g, src, r, cols);
        if (qt == GR_QT_F) return GR_QT_F;
        n[qt]++;
        runs += r == 0 || qt != prev;
        prev = qt;
    }
    if (runs < 2) return GR_QT_F;
    static const enum wgf_dtype wide[] = {WGF_DT_Q8_0, WGF_DT_Q5_K};
    for (size_t w = 0; w < sizeof wide / sizeof wide[0]; w++) {
        struct gr_qlayout Lw, Lt;
        if (!gr_qlayout(wide[w], cols, &Lw)) continue;
        bool     ok    = true;
        uint64_t extra = 0;
        for (uint32_t t = 0; t < WGF_DT_COUNT && ok; t++) {
            if (!n[t] || t == (uint32_t)wide[w]) continue;
            ok = gr_qwidens((enum wgf_dtype)t, wide[w]) && gr_qlayout((enum wgf_dtype)t, cols, &Lt);
            if (ok) extra += (uint64_t)n[t] * 4u * (Lw.words - Lt.words);
        }
        if (ok && runs > GR_MAX_RUNS) return (uint32_t)wide[w];
        if (ok && extra <= GR_WIDEN_BYTES && extra <= g->widen_left) {
            g->widen_left -= extra;
            return (uint32_t)wide[w];
        }
    }
    return GR_QT_F;
}

/* Plan a matrix: its parts (one run of rows of one format, within one binding) and their
 * places (buffers come later). */
static enum wgf_status plan_mat(struct gr *g, struct gr_mat *m, uint32_t rows, uint32_t cols, bool paired,
                                const struct mat_src *src, struct wgf_err *err)
{
    const char *label = src->label;
    memset(m, 0, sizeof *m);
    m->rows = rows;
    m->cols = cols;
    m->kc   = (cols + 15) / 16 * 16 / (g->f16 ? 8 : 4);
    m->cfg  = gr_mat_cfg(m->kc, rows, paired);
    /* runs of rows of one format (rows of several widened to one where it pays) */
    uint32_t run0[GR_MAX_RUNS + 1], run_qt[GR_MAX_RUNS], n_runs = 0, wide = widen_qt(g, src, rows, cols);
    for (uint32_t r = 0; r < rows; r++) {
        uint32_t qt = wide != GR_QT_F ? wide : row_qt(g, src, r, cols);
        if (n_runs && qt == run_qt[n_runs - 1]) continue;
        if (n_runs == GR_MAX_RUNS) { /* rows of many formats interleaved: the float format */
            /* --activations q8 rounds the input of quantized rows (as cpu-ref does per tensor);
             * rows dequantized to floats here would not be, so refuse rather than differ */
            if (g->qx8)
                return wgf_fail(err, WGF_ERR_UNSUPPORTED,
                                "gpu-roles: --activations q8: '%s' interleaves rows of different types (%s, %s), "
                                "which this plan can only dequantize to floats; use --activations f32",
                                label, run_qt[0] == GR_QT_F ? "float" : wgf_dtype_str((enum wgf_dtype)run_qt[0]),
                                run_qt[1] == GR_QT_F ? "float" : wgf_dtype_str((enum wgf_dtype)run_qt[1]));
            n_runs = 1, run_qt[0] = GR_QT_F;
            break;
        }
        run0[n_runs] = r, run_qt[n_runs++] = qt;
    }
    run0[n_runs] = rows;
    uint32_t cap = 0;
    for (uint32_t ri = 0; ri < n_runs; ri++) {
        struct gr_part    tmpl = {.qt = run_qt[ri], .kcs = m->kc, .cfg = m->cfg};
        struct gr_qlayout L;
        if (tmpl.qt != GR_QT_F) {
            WGF_ASSERT(gr_qlayout((enum wgf_dtype)tmpl.qt, cols, &L));
            tmpl.kcs = (L.words + 3) / 4, tmpl.nu = L.nu, tmpl.ni = L.ni, tmpl.qa = L.qa, tmpl.qb = L.qb;
            /* lib_rows_q's int8 copy of the input (a word per 4 elements, d and the sum per 32;
             * three digits: three words) beside the reductions' arrays (< 4 KiB) */
            uint64_t need = GR_X8_BYTES(L.nu) + 4096, have = wgf_ctx_limits(g->ctx)->max_compute_workgroup_storage_size;
            tmpl.x3  = g->qx3 && tmpl.qt != WGF_DT_Q2_K && tmpl.qt != WGF_DT_Q3_K && GR_X3_BYTES(L.nu) + 4096 <= have;
            tmpl.cfg = q_cfg(g, tmpl.qt, L.ni, rows, paired, g->qx8 || tmpl.x3, g->q8_min_wg, g->q_min_wg);
            m->quant = true;
            if (g->qx8 && need > have)
                return wgf_fail(err, WGF_ERR_UNSUPPORTED,
                                "gpu-roles: --activations q8: tensor '%s' has %u columns; its int8 input needs %llu "
                                "bytes of workgroup memory and this device allows %llu",
                                label, cols, (unsigned long long)need, (unsigned long long)have);
        }
        uint64_t row_bytes = (uint64_t)tmpl.kcs * 16;
        uint64_t per       = g->arena_cap / row_bytes;
        uint64_t grid_rows = 65535ull * tmpl.cfg.gpw * tmpl.cfg.rpg;
        if (per > grid_rows) per = grid_rows;
        per &= ~1ull; /* pairs stay whole */
        if (per == 0)
            return wgf_fail(err, WGF_ERR_LIMIT,
                            "gpu-roles: tensor '%s': one row of %u %s is %llu bytes, above the storage binding limit "
                            "of %llu bytes; it cannot be split by rows",
                            label, cols,
                            tmpl.qt != GR_QT_F ? wgf_dtype_str((enum wgf_dtype)tmpl.qt) : g->f16 ? "f16" : "f32",
                            (unsigned long long)row_bytes, (unsigned long long)g->max_bind);
        for (uint32_t r = run0[ri]; r < run0[ri + 1]; r += (uint32_t)per) {
            if (m->n_parts == cap) {
                cap                 = cap ? 2 * cap : 4;
                struct gr_part *np  = realloc(m->part, cap * sizeof *np);
                if (!np) return wgf_fail(err, WGF_ERR_NOMEM, "gpu-roles: parts of '%s'", label);
                m->part = np;
            }
            struct gr_part *p = &m->part[m->n_parts++];
            *p                = tmpl;
            p->row0           = r;
            p->rows           = run0[ri + 1] - r < per ? run0[ri + 1] - r : (uint32_t)per;
            p->bytes          = p->rows * row_bytes;
            uint32_t        arena = 0;
            enum wgf_status s     = place(g, p->bytes, &arena, &p->off, err);
            if (s) return s;
            p->arena = arena; /* p->buf is set once the arena buffer exists */
        }
    }
    /* one dispatch may run several parts (W_qkv's types: gr_kernels.c's emit_qkv_parts) as
     * instances of one module, which share its workgroup size: a matrix of several parts keeps
     * the default workgroups (cfg_spread counts one part's grid) */
    if (m->n_parts > 1)
        for (uint32_t i = 0; i < m->n_parts; i++) m->part[i].cfg.gpw = 256 / m->part[i].cfg.tpr;
    return WGF_OK;
}

static void resolve_parts(struct gr *g, struct gr_mat *m)
{
    for (uint32_t i = 0; i < m->n_parts; i++) m->part[i].buf = g->arena[m->part[i].arena];
}

static void plan_vec(struct gr *g, struct gr_vec *v, uint32_t n)
{
    v->off       = align_up(g->vecs_size, g->align);
    v->bytes     = (uint64_t)(n + 15) / 16 * 16 * 4;
    g->vecs_size = v->off + v->bytes;
}

/* ---- upload -------------------------------------------------------------------------------- */

/* Fill a planned matrix from its source rows. */
static enum wgf_status upload_mat(struct gr *g, const struct gr_mat *m, const struct mat_src *src, struct wgf_err *err)
{
    uint64_t max_row = (uint64_t)m->kc * 16;
    for (uint32_t pi = 0; pi < m->n_parts; pi++)
        if ((uint64_t)m->part[pi].kcs * 16 > max_row) max_row = (uint64_t)m->part[pi].kcs * 16;
    /* a part stages GR_UPLOAD_BYTES / its row bytes rows at a time (one row when a row is larger) */
    uint8_t *stage     = malloc((size_t)(max_row > GR_UPLOAD_BYTES ? max_row : GR_UPLOAD_BYTES));
    float   *row       = malloc((size_t)m->kc * 8 * sizeof *row);
    uint8_t *wide      = malloc((size_t)max_row); /* a widened row in ggml's blocks (its repack is no larger) */
    if (!stage || !row || !wide) {
        free(stage), free(row), free(wide);
        return wgf_fail(err, WGF_ERR_NOMEM, "gpu-roles: staging for '%s'", src->label);
    }
    enum wgf_status s = WGF_OK;
    for (uint32_t pi = 0; pi < m->n_parts && !s; pi++) {
        const struct gr_part *p          = &m->part[pi];
        uint64_t              row_bytes  = (uint64_t)p->kcs * 16;
        uint32_t              stage_rows = (uint32_t)(GR_UPLOAD_BYTES / row_bytes ? GR_UPLOAD_BYTES / row_bytes : 1);
        for (uint32_t r0 = 0; r0 < p->rows && !s; r0 += stage_rows) {
            uint32_t n = p->rows - r0 < stage_rows ? p->rows - r0 : stage_rows;
            memset(stage, 0, (size_t)(n * row_bytes));
            for (uint32_t j = 0; j < n && !s; j++) {
                int64_t                  sr;
                const struct wgf_tensor *t   = src_of(g, src, p->row0 + r0 + j, &sr);
                uint8_t                 *dst = stage + j * row_bytes;
                if (p->qt != GR_QT_F) { /* the file's blocks (widened: plan_mat), repacked (gr_quant.c) */
                    uint64_t       rb = (uint64_t)m->cols / (uint64_t)wgf_dtype_block_elems(t->dtype) *
                                  (uint64_t)wgf_dtype_block_bytes(t->dtype);
                    const uint8_t *b  = (const uint8_t *)t->data + (size_t)sr * rb;
                    if (t->dtype != (enum wgf_dtype)p->qt) {
                        gr_qwiden_row(t->dtype, (enum wgf_dtype)p->qt, b, m->cols, wide);
                        b = wide;
                    }
                    gr_qrepack_row((enum wgf_dtype)p->qt, b, m->cols, dst);
                    continue;
                }
                if (g->f16 && t->dtype == WGF_DT_F16) { /* stored as f16 already: the bits as they are */
                    memcpy(dst, (const uint8_t *)t->data + (size_t)sr * m->cols * 2, (size_t)m->cols * 2);
                    continue;
                }
                wgf_tensor_row_f32(t, sr, row);
                if (!g->f16) {
                    memcpy(dst, row, (size_t)m->cols * 4);
                    continue;
                }
                for (uint32_t k = 0; k < m->cols; k++) {
                    uint16_t h = wgf_f32_to_f16(row[k]);
                    if ((h & 0x7c00u) == 0x7c00u && (row[k] == row[k]))
                        s = wgf_fail(err, WGF_ERR_UNSUPPORTED,
                                     "gpu-roles: tensor '%s': value %g at row %u, column %u is outside f16's range "
                                     "(|x| < 65520); load the weights as f32 (--weights f32)",
                                     src->label, (double)row[k], p->row0 + r0 + j, k);
                    memcpy(dst + 2 * k, &h, 2);
                }
            }
            if (!s && (s = wgf_buffer_write(g->ctx, p->buf, p->off + r0 * row_bytes, stage, (size_t)(n * row_bytes))))
                s = gr_fail(g, err, s, "weight upload");
        }
    }
    free(stage);
    free(row);
    free(wide);
    return s;
}

/* f32 vector (or zeros when t is absent) into the vector arena */
static enum wgf_status upload_vec(struct gr *g, struct gr_vec v, const float *data, uint32_t n, float *tmp,
                                  struct wgf_err *err)
{
    memset(tmp, 0, (size_t)v.bytes);
    if (data) memcpy(tmp, data, (size_t)n * 4);
    enum wgf_status s = wgf_buffer_write(g->ctx, g->vecs, v.off, tmp, (size_t)v.bytes);
    return s ? gr_fail(g, err, s, "vector upload") : WGF_OK;
}

enum wgf_status gr_weights_create(struct gr *g, struct wgf_err *err)
{
    const struct wgf_llm_config  *c = &g->c;
    const struct wgf_llm_weights *W = &g->m->weights;
    enum wgf_status               s;
    char                          lb[96];
    g->L = calloc((size_t)c->n_layers, sizeof *g->L);
    if (!g->L) return wgf_fail(err, WGF_ERR_NOMEM, "gpu-roles: layers");
    g->widen_left = wgf_llm_model_weight_bytes(g->m) / 32;
    if (g->widen_left < GR_WIDEN_BYTES) g->widen_left = GR_WIDEN_BYTES; /* a small model: a matrix's worth */

    /* 1. layout */
    for (int l = 0; l < c->n_layers; l++) {
        struct gr_layer *L = &g->L[l];
#define LB(what) (snprintf(lb, sizeof lb, "llm.blk%d.%s", l, what), lb)
        const struct wgf_layer_weights *M = &W->layers[l];
        struct mat_src q = {MK_QKV, NULL, M, NULL}, o = {MK_PLAIN, &M->wo, M, NULL};
        struct mat_src gu = {MK_GU, NULL, M, NULL}, d = {MK_PLAIN, &M->w_down, M, NULL};
        if ((q.label = LB("attn_qkv.weight"), s = plan_mat(g, &L->qkv, 2 * g->pairs, g->dim, true, &q, err)) ||
            (o.label = LB("attn_output.weight"), s = plan_mat(g, &L->wo, g->dim, g->q_dim, false, &o, err)) ||
            (gu.label = LB("ffn_gate_up.weight"), s = plan_mat(g, &L->gu, 2 * g->hidden, g->dim, true, &gu, err)) ||
            (d.label = LB("ffn_down.weight"), s = plan_mat(g, &L->down, g->dim, g->hidden, false, &d, err)))
            return s;
        plan_vec(g, &L->attn_norm, g->dim);
        plan_vec(g, &L->ffn_norm, g->dim);
        plan_vec(g, &L->bias, 2 * g->pairs);
    }
    struct mat_src head = {MK_PLAIN, &W->lm_head, NULL, "llm.output.weight"};
    if ((s = plan_mat(g, &g->lm_head, g->vocab, g->dim, false, &head, err))) return s;
    g->emb = &g->lm_head;
    if (!c->tie_embeddings || W->tok_embd.data != W->lm_head.data) {
        struct mat_src emb = {MK_PLAIN, &W->tok_embd, NULL, "llm.token_embd.weight"};
        if ((s = plan_mat(g, &g->emb_own, g->vocab, g->dim, false, &emb, err))) return s;
        g->emb = &g->emb_own;
    }
    plan_vec(g, &g->out_norm, g->dim);
    /* the embedding gather binds at most GR_EMB_PARTS parts of equal rows */
    if (g->emb->n_parts > GR_EMB_PARTS)
        return wgf_fail(err, WGF_ERR_LIMIT,
                        "gpu-roles: the token embedding (%u x %u) needs %u row parts at this binding limit, above %u",
                        g->vocab, g->dim, g->emb->n_parts, GR_EMB_PARTS);

    /* 2. buffers at their planned sizes */
    for (uint32_t i = 0; i < g->n_arena; i++) {
        snprintf(lb, sizeof lb, "llm.weights[%u]", i);
        if ((s = wgf_buffer_create(g->ctx, lb, g->arena_size[i], WGF_BUF_STORAGE, &g->arena[i])))
            return gr_fail(g, err, s, "load");
    }
    if ((s = wgf_buffer_create(g->ctx, "llm.vectors", g->vecs_size ? g->vecs_size : 16, WGF_BUF_STORAGE, &g->vecs)))
        return gr_fail(g, err, s, "load");
    for (int l = 0; l < c->n_layers; l++) {
        resolve_parts(g, &g->L[l].qkv), resolve_parts(g, &g->L[l].wo);
        resolve_parts(g, &g->L[l].gu), resolve_parts(g, &g->L[l].down);
    }
    resolve_parts(g, &g->lm_head);
    if (g->emb == &g->emb_own) resolve_parts(g, &g->emb_own);

    /* 3. contents */
    float *tmp = malloc((size_t)(2 * g->pairs + g->dim + 64) * 4);
    float *bias = malloc((size_t)(2 * g->pairs) * 4);
    if (!tmp || !bias) {
        free(tmp), free(bias);
        return wgf_fail(err, WGF_ERR_NOMEM, "gpu-roles: vector staging");
    }
    s = WGF_OK;
    for (int l = 0; l < c->n_layers && !s; l++) {
        const struct wgf_layer_weights *M = &W->layers[l];
        struct gr_layer                *L = &g->L[l];
        struct mat_src q = {MK_QKV, NULL, M, LB("attn_qkv.weight")};
        if ((s = upload_mat(g, &L->qkv, &q, err))) break;
        struct mat_src o = {MK_PLAIN, &M->wo, M, LB("attn_output.weight")};
        if ((s = upload_mat(g, &L->wo, &o, err))) break;
        struct mat_src gu = {MK_GU, NULL, M, LB("ffn_gate_up.weight")};
        if ((s = upload_mat(g, &L->gu, &gu, err))) break;
        struct mat_src d = {MK_PLAIN, &M->w_down, M, LB("ffn_down.weight")};
        if ((s = upload_mat(g, &L->down, &d, err))) break;
        for (uint32_t p = 0; p < 2 * g->pairs; p++) {
            uint32_t a, b;
            pair_rows(g, p / 2, &a, &b);
            int64_t                  row;
            const struct wgf_tensor *t = qkv_src(g, M, true, p % 2 ? b : a, &row);
            bias[p]                    = t->data ? ((const float *)t->data)[row] : 0.0f;
        }
        if ((s = upload_vec(g, L->attn_norm, M->attn_norm.data, g->dim, tmp, err)) ||
            (s = upload_vec(g, L->ffn_norm, M->ffn_norm.data, g->dim, tmp, err)) ||
            (s = upload_vec(g, L->bias, bias, 2 * g->pairs, tmp, err)))
            break;
#undef LB
    }
    if (!s) {
        struct mat_src h = {MK_PLAIN, &W->lm_head, NULL, "llm.output.weight"};
        s                = upload_mat(g, &g->lm_head, &h, err);
    }
    if (!s && g->emb == &g->emb_own) {
        struct mat_src e = {MK_PLAIN, &W->tok_embd, NULL, "llm.token_embd.weight"};
        s                = upload_mat(g, &g->emb_own, &e, err);
    }
    if (!s) s = upload_vec(g, g->out_norm, W->out_norm.data, g->dim, tmp, err);
    free(tmp);
    free(bias);
    return s;
}

static void mat_free(struct gr_mat *m)
{
    free(m->part);
    memset(m, 0, sizeof *m);
}

void gr_weights_free(struct gr *g)
{
    if (g->L)
        for (int l = 0; l < g->c.n_layers; l++)
            mat_free(&g->L[l].qkv), mat_free(&g->L[l].wo), mat_free(&g->L[l].gu), mat_free(&g->L[l].down);
    mat_free(&g->lm_head);
    mat_free(&g->emb_own);
    for (uint32_t i = 0; i < g->n_arena; i++) wgf_buffer_free(g->arena[i]);
    free(g->arena);
    free(g->arena_size);
    g->arena      = NULL;
    g->arena_size = NULL;
    g->n_arena = g->cap_arena = 0;
    wgf_buffer_free(g->vecs);
    g->vecs = NULL;
    /* g->L is freed with the state (it holds the KV caches too) */
}
