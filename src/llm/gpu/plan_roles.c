/* wgfuse — the "roles" plan: about five hand-written kernel roles per layer; and
 * gr_plan_build, the schedules every plan shares (embedding, LM head, samplers), with the
 * decode layers of the plan the backend was opened with (plan_ops.c, plan_mega.c).
 *
 * Read it as the GPU twin of cpu-ref's forward (src/llm/forward_ref.c): each schedule below
 * is the ordered list of the role dispatches of one step, built once at init (pipelines,
 * bind groups, grids, labels) and replayed as often as needed (backend_roles.c).
 *
 * Decode (one token at st.pos, x = its embedding):            dispatches per layer
 *   attn_qkv      rmsnorm + q/k/v + bias + RoPE + KV-cache store          1 (per row part)
 *   attn_split    attention over positions 0..pos (one slice per head,    1
 *                 or slices + attn_combine once pos passes the slice)    (+1)
 *   gemv o_proj   x += Wo att                                             1
 *   ffn_gate_up   rmsnorm + gate + up + silu * up                         1
 *   gemv down     x += Wdown h                                            1
 * then lm_head (final norm + logits + argmax partials) and a sampler that picks the token on
 * the GPU, writes it into seq and its embedding into x for the next step (sample_argmax, or
 * sample_penalty / sample_topk / sample_pick for seeded sampling).
 *
 * Prefill (a chunk of up to GR_T_MAX tokens at st.pos; grids set on the host per chunk, g->grid):
 *   embed rows; per layer: rmsnorm, QKV matmul (+ bias), RoPE + cache store, split
 *   attention over the cache (causal), combine, o_proj matmul (+ residual), rmsnorm,
 *   gate/up matmul, silu * up, down matmul (+ residual); then lm_head on the last row. */
#include <stdio.h>
#include <stdlib.h>

#include "llm/gpu/gr.h"

/* Every layer of one decode token. long_ctx: the attention is split over the sequence. */
static enum wgf_status plan_decode_layers(struct gr *g, wgf_schedule *s, bool long_ctx, struct wgf_err *err)
{
    enum wgf_status r;
    for (int l = 0; l < g->c.n_layers; l++) {
        const struct gr_layer *L = &g->L[l];
        /* attention input: q, and k/v into the cache at st.pos */
        if ((r = gr_emit_attn_qkv(g, s, l, err))) return r;
        /* attention over positions 0..pos: att */
        if ((r = gr_emit_attn_split(g, s, l, false, !long_ctx, err))) return r;
        if (long_ctx && (r = gr_emit_attn_combine(g, s, false, err))) return r;
        /* o_proj + residual: x += Wo att */
        if ((r = gr_emit_gemv(g, s, "attn_output", &L->wo, g->att, g->x, true, err))) return r;
        /* FFN input: h = silu(x Wgate) * (x Wup), x normed */
        if ((r = gr_emit_ffn_gate_up(g, s, l, err))) return r;
        /* down + residual: x += Wdown h */
        if ((r = gr_emit_gemv(g, s, "ffn_down", &L->down, g->h, g->x, true, err))) return r;
    }
    return WGF_OK;
}

/* One prefill chunk: st.pos = first position, st.ntok = T rows. */
static enum wgf_status plan_prefill(struct gr *g, wgf_schedule *s, struct wgf_err *err)
{
    enum wgf_status r;
    const uint32_t  d4 = g->dimp / 4;
    /* embed: X[t] = tok_embd[seq[pos + t]] */
    if ((r = gr_emit_embed(g, s, g->X, true, err))) return r;
    for (int l = 0; l < g->c.n_layers; l++) {
        struct gr_layer *L = &g->L[l];
        /* attn_norm: XB = rmsnorm(X) * g */
        if ((r = gr_emit_rmsnorm_rows(g, s, g->XB, g->X, L->attn_norm, err))) return r;
        /* qkv (+bias), in pair order */
        if ((r = gr_emit_matmul(g, s, "attn_qkv", &L->qkv, g->XB, d4, g->QKV, g->qkv_s, false, &L->bias, err)))
            return r;
        /* rope q -> Q, rope k -> cache, v -> cache */
        if ((r = gr_emit_rope_rows(g, s, l, err))) return r;
        /* causal attention of every row over the cache: ATT */
        if ((r = gr_emit_attn_split(g, s, l, true, false, err)) || (r = gr_emit_attn_combine(g, s, true, err)))
            return r;
        /* o_proj + residual: X += ATT Wo^T */
        if ((r = gr_emit_matmul(g, s, "attn_output", &L->wo, g->ATT, g->q_dim / 4, g->X, g->dimp, true, NULL, err)))
            return r;
        /* ffn_norm, gate/up (interleaved), silu * up */
        if ((r = gr_emit_rmsnorm_rows(g, s, g->XB, g->X, L->ffn_norm, err)) ||
            (r = gr_emit_matmul(g, s, "ffn_gate_up", &L->gu, g->XB, d4, g->GU, g->gu_s, false, NULL, err)) ||
            (r = gr_emit_silu_mul_rows(g, s, err)))
            return r;
        /* down + residual: X += H Wdown^T */
        if ((r = gr_emit_matmul(g, s, "ffn_down", &L->down, g->H, g->hidp / 4, g->X, g->dimp, true, NULL, err)))
            return r;
    }
    return WGF_OK;
}

static enum wgf_status sched(struct gr *g, enum gr_sched k, const char *label, struct wgf_err *err)
{
    enum wgf_status r = wgf_schedule_create(g->ctx, label, &g->s[k]);
    return r ? gr_fail(g, err, r, label) : WGF_OK;
}

enum wgf_status gr_plan_build(struct gr *g, struct wgf_err *err)
{
    enum wgf_status r;
    g->n_mm = 0;
    if ((r = sched(g, GR_S_EMBED, "llm.embed", err)) || (r = gr_emit_embed(g, g->s[GR_S_EMBED], g->x, false, err)))
        return r;
    /* the decode layers: the one thing the plans of the fusion dial do differently */
    if ((r = sched(g, GR_S_LAYERS, "llm.layers", err))) return r;
    switch (g->plan) {
    case GR_PLAN_ROLES:
        if ((r = plan_decode_layers(g, g->s[GR_S_LAYERS], false, err))) return r;
        if (g->n_split > 1 && ((r = sched(g, GR_S_LAYERS_LONG, "llm.layers_long", err)) ||
                               (r = plan_decode_layers(g, g->s[GR_S_LAYERS_LONG], true, err))))
            return r;
        break;
    case GR_PLAN_OPS:
    case GR_PLAN_FUSED:
        if ((r = gr_ops_state(g, err)) ||
            (r = gr_plan_ops_layers(g, g->s[GR_S_LAYERS], g->plan == GR_PLAN_FUSED, err)))
            return r;
        break;
    case GR_PLAN_MEGA:
        if ((r = gr_mega_state(g, err)) || (r = gr_plan_mega_layers(g, g->s[GR_S_LAYERS], err))) return r;
        break;
    }
    if ((r = sched(g, GR_S_HEAD, "llm.head", err)) || (r = gr_emit_lm_head(g, g->s[GR_S_HEAD], GR_X_DECODE, err)))
        return r;
    if ((r = sched(g, GR_S_GREEDY, "llm.sample_greedy", err)) ||
        (r = gr_emit_sample_argmax(g, g->s[GR_S_GREEDY], err)))
        return r;
    if ((r = sched(g, GR_S_PENALTY, "llm.sample_penalty", err)) ||
        (r = gr_emit_sample_penalty(g, g->s[GR_S_PENALTY], err)))
        return r;
    if ((r = sched(g, GR_S_TOPK, "llm.sample_topk", err)) || (r = gr_emit_sample_topk(g, g->s[GR_S_TOPK], err)))
        return r;
    /* prefill: the roles plan batches the prompt; the other plans run it token by token through
     * their own decode layers (backend_roles.c), so every number they report is their own */
    if (g->plan != GR_PLAN_ROLES) return WGF_OK;
    if ((r = sched(g, GR_S_PREFILL, "llm.prefill", err)) || (r = plan_prefill(g, g->s[GR_S_PREFILL], err))) return r;
    if ((r = sched(g, GR_S_HEAD_PRE, "llm.head_prefill", err)) ||
        (r = gr_emit_lm_head(g, g->s[GR_S_HEAD_PRE], GR_X_PREFILL_LAST, err)))
        return r;
    return WGF_OK;
}

/* Logits of every row of a prefill chunk (for --logits-out): made on first use. */
enum wgf_status gr_plan_all_logits(struct gr *g, struct wgf_err *err)
{
    if (g->s[GR_S_ALL_LOGITS]) return WGF_OK;
    enum wgf_status r = gr_state_all_logits(g, err);
    if (r) return r;
    if ((r = sched(g, GR_S_ALL_LOGITS, "llm.all_logits", err))) return r;
    /* final norm: XB = rmsnorm(X) * output_norm; logits: LOGITS = XB lm_head^T */
    if ((r = gr_emit_rmsnorm_rows(g, g->s[GR_S_ALL_LOGITS], g->XB, g->X, g->out_norm, err)) ||
        (r = gr_emit_matmul(g, g->s[GR_S_ALL_LOGITS], "lm_head", &g->lm_head, g->XB, g->dimp / 4, g->LOGITS, g->vp,
                            false, NULL, err)))
        return r;
    return WGF_OK;
}

void gr_plan_free(struct gr *g)
{
    for (int i = 0; i < GR_S_COUNT; i++) {
        wgf_schedule_free(g->s[i]);
        g->s[i] = NULL;
    }
}
