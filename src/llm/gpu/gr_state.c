/* wgfuse — the roles plan's state on the GPU: activations, KV cache, step state, RoPE table.
 *
 * Shapes (f32 unless said): decode x (dimp), q and att (q_dim), h (hidp), logits (vp); the KV
 * cache kv_cache_k/v[l] (n_ctx, kv_dim); prefill X, XB (T_MAX, dimp), QKV (T_MAX, qkv_s), Q
 * and ATT (T_MAX, q_dim), GU (T_MAX, gu_s), H (T_MAX, hidp), XQ (--activations q8: T_MAX
 * rows of the widest); attention partials for T_MAX rows. Every activation is zero at
 * creation and kernels write only the unpadded part, so the padding stays zero (the kernels
 * sum whole 16-element chunks).
 *
 * The RoPE table holds cos/sin of every position for each frequency table, computed on the
 * host exactly as cpu-ref does (angle = (float)pos * inv_freq[i] in f32, then cosf / sinf,
 * times the longrope attention factor): the GPU rotates with the same numbers, with no
 * transcendental of a large angle on the device. longrope has two tables (short and long
 * factors); the step state says which applies. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/gpu/gr.h"

enum wgf_status gr_buf(struct gr *g, const char *label, uint64_t bytes, unsigned usage, wgf_buffer **out,
                       struct wgf_err *err)
{
    *out = NULL;
    if (g->n_owned == g->cap_owned) {
        uint32_t     cap = g->cap_owned ? 2 * g->cap_owned : 64;
        wgf_buffer **p   = realloc(g->owned, cap * sizeof *p);
        if (!p) return wgf_fail(err, WGF_ERR_NOMEM, "gpu-roles: buffer list for '%s'", label);
        g->owned     = p;
        g->cap_owned = cap;
    }
    if (bytes > g->dev_bind && usage != WGF_BUF_READBACK)
        return wgf_fail(err, WGF_ERR_LIMIT,
                        "gpu-roles: buffer '%s' needs %llu bytes in one binding, above the storage binding limit of %llu "
                        "bytes (ctx %u; a smaller --ctx shrinks the KV cache and the RoPE table)",
                        label, (unsigned long long)bytes, (unsigned long long)g->dev_bind, g->n_ctx);
    enum wgf_status s = wgf_buffer_create(g->ctx, label, bytes < 16 ? 16 : (bytes + 15) / 16 * 16, usage, out);
    if (s) return gr_fail(g, err, s, "load");
    g->owned[g->n_owned++] = *out;
    return WGF_OK;
}

static enum wgf_status rope_table(struct gr *g, struct wgf_err *err)
{
    const uint32_t half = g->half, n = g->n_ctx;
    float         *tab  = malloc((size_t)n * half * 2 * sizeof *tab);
    float         *inv  = malloc((size_t)half * sizeof *inv);
    if (!tab || !inv) {
        free(tab), free(inv);
        return wgf_fail(err, WGF_ERR_NOMEM, "gpu-roles: RoPE table (%u positions)", n);
    }
    enum wgf_status s = WGF_OK;
    for (uint32_t t = 0; t < g->rope_tables && !s; t++) {
        /* cpu-ref's inv_freq for a sequence of seq_len positions: longrope switches from the
         * short to the long factors past original_max_pos */
        float scale;
        int   seq = t == 0 ? 1 : g->c.rope_scaling.original_max_pos + 1;
        wgf_llm_rope_inv_freq(&g->c, seq, inv, &scale);
        for (uint32_t p = 0; p < n; p++)
            for (uint32_t i = 0; i < half; i++) {
                float a                              = (float)p * inv[i];
                tab[((size_t)p * half + i) * 2]     = cosf(a) * scale;
                tab[((size_t)p * half + i) * 2 + 1] = sinf(a) * scale;
            }
        if ((s = wgf_buffer_write(g->ctx, g->rope, (uint64_t)t * n * half * 8, tab, (size_t)n * half * 8)))
            s = gr_fail(g, err, s, "RoPE table upload");
    }
    free(tab);
    free(inv);
    return s;
}

/* max(have, the bytes of m's largest split-K partials: splits x GR_T_MAX x a part's rows f32) */
static uint64_t splitk_bytes(const struct gr_mat *m, uint64_t have)
{
    for (uint32_t i = 0; i < m->n_parts; i++) {
        uint64_t ks = gr_mm_shape(m->part[i].rows, m->cols).ks, b = ks * GR_T_MAX * m->part[i].rows * 4;
        if (ks > 1 && b > have) have = b;
    }
    return have;
}

enum wgf_status gr_state_create(struct gr *g, struct wgf_err *err)
{
    const uint64_t  T = GR_T_MAX, d4 = g->hd / 4;
    char            lb[64];
    enum wgf_status s;
    for (int l = 0; l < g->c.n_layers && g->plan != GR_PLAN_MEGA; l++) { /* mega: one cache (plan_mega.c) */
        uint64_t kv = (uint64_t)g->n_ctx * g->kv_dim * 4;
        snprintf(lb, sizeof lb, "llm.blk%d.kv_cache_k", l);
        if ((s = gr_buf(g, lb, kv, WGF_BUF_STORAGE, &g->L[l].kc, err))) return s;
        snprintf(lb, sizeof lb, "llm.blk%d.kv_cache_v", l);
        if ((s = gr_buf(g, lb, kv, WGF_BUF_STORAGE, &g->L[l].vc, err))) return s;
    }
    uint64_t part_rows = T > 1 ? T : 1;
    /* the largest split-K partials of any prefill matmul part (the all-logits lm_head too) */
    uint64_t mmp = 16;
    for (int l = 0; l < g->c.n_layers && g->plan == GR_PLAN_ROLES; l++) {
        const struct gr_mat *ms[] = {&g->L[l].qkv, &g->L[l].wo, &g->L[l].gu, &g->L[l].down};
        for (int k = 0; k < 4; k++) mmp = splitk_bytes(ms[k], mmp);
    }
    if (g->plan == GR_PLAN_ROLES) mmp = splitk_bytes(&g->lm_head, mmp);
    const struct {
        wgf_buffer **b;
        const char  *label;
        uint64_t     bytes;
        unsigned     usage;
    } list[] = {
        {&g->x, "llm.x", (uint64_t)g->dimp * 4, WGF_BUF_STORAGE},
        {&g->q, "llm.q", (uint64_t)g->q_dim * 4, WGF_BUF_STORAGE},
        {&g->att, "llm.att", (uint64_t)g->q_dim * 4, WGF_BUF_STORAGE},
        {&g->h, "llm.h", (uint64_t)g->hidp * 4, WGF_BUF_STORAGE},
        {&g->logits, "llm.logits", (uint64_t)g->vp * 4, WGF_BUF_STORAGE},
        {&g->best, "llm.best", (uint64_t)g->nbest * 8, WGF_BUF_STORAGE},
        {&g->part, "llm.att_partials", part_rows * (uint64_t)g->c.n_heads * g->n_split * (1 + d4) * 16, WGF_BUF_STORAGE},
        {&g->cand, "llm.candidates", (uint64_t)GR_NCAND * GR_KMAX * 8, WGF_BUF_STORAGE},
        {&g->st, "llm.step", GR_ST_LEN * 4, WGF_BUF_STORAGE},
        {&g->seq, "llm.seq", ((uint64_t)g->n_ctx + 1) * 4, WGF_BUF_STORAGE},
        {&g->sp, "llm.sampler", GR_SP_LEN * 4, WGF_BUF_STORAGE},
        {&g->rope, "llm.rope", (uint64_t)g->rope_tables * g->n_ctx * g->half * 8, WGF_BUF_STORAGE},
        {&g->zero, "llm.zero", 256, WGF_BUF_STORAGE},
        {&g->X, "llm.prefill.x", T * g->dimp * 4, WGF_BUF_STORAGE},
        {&g->XB, "llm.prefill.xb", T * g->dimp * 4, WGF_BUF_STORAGE},
        {&g->QKV, "llm.prefill.qkv", T * g->qkv_s * 4, WGF_BUF_STORAGE},
        {&g->Q, "llm.prefill.q", T * g->q_dim * 4, WGF_BUF_STORAGE},
        {&g->ATT, "llm.prefill.att", T * g->q_dim * 4, WGF_BUF_STORAGE},
        {&g->GU, "llm.prefill.gate_up", T * g->gu_s * 4, WGF_BUF_STORAGE},
        {&g->H, "llm.prefill.h", T * g->hidp * 4, WGF_BUF_STORAGE},
        {&g->MMP, "llm.prefill.splitk", mmp, WGF_BUF_STORAGE},
    };
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        if ((s = gr_buf(g, list[i].label, list[i].bytes, list[i].usage, list[i].b, err))) return s;
    if (g->qx8) { /* the rounded copy of a prefill matmul's input: as wide as the widest */
        uint64_t w = g->dimp > g->q_dim ? g->dimp : g->q_dim;
        if (g->hidp > w) w = g->hidp;
        if ((s = gr_buf(g, "llm.prefill.xq", T * w * 4, WGF_BUF_STORAGE, &g->XQ, err))) return s;
    }
    for (int i = 0; i < GR_RING; i++) {
        snprintf(lb, sizeof lb, "llm.readback[%d]", i);
        if ((s = gr_buf(g, lb, (GR_STEPS + 1) * 4, WGF_BUF_READBACK, &g->rb[i], err))) return s;
    }
    return rope_table(g, err);
}

enum wgf_status gr_state_all_logits(struct gr *g, struct wgf_err *err)
{
    if (g->LOGITS) return WGF_OK;
    return gr_buf(g, "llm.prefill.logits", (uint64_t)GR_T_MAX * g->vp * 4, WGF_BUF_STORAGE, &g->LOGITS, err);
}

void gr_state_free(struct gr *g)
{
    for (uint32_t i = 0; i < g->n_owned; i++) wgf_buffer_free(g->owned[i]);
    free(g->owned);
    g->owned   = NULL;
    g->n_owned = g->cap_owned = 0;
    free(g->L);
    g->L = NULL;
}
