/* wgfuse — the "roles" GPU backend: init, forward, on-device decode, profile.
 *
 * forward() evaluates tokens the host chose: one token replays the decode schedules (embed,
 * layers, lm_head); more run the prefill schedule per chunk of GR_T_MAX tokens. The step
 * state (position, chunk size, RoPE table) is written by the host before each submit.
 *
 * decode() keeps the host out of the loop: each step's sampler picks the token on the GPU,
 * writes it into seq and its embedding into x, and advances the position, so steps are
 * recorded back to back, GR_STEPS per submit, GR_RING submits in flight; after each submit
 * the step's ids are copied into a read-back buffer and mapped asynchronously, and the host
 * hands them out (EOS, stop strings: the caller's on_id) while later steps run. What was
 * computed past a stop is discarded.
 *
 * Reliability (RELIABILITY.md 32-34): a failed init (out of GPU memory included) frees all
 * it made and leaves the context usable; a matrix above the binding limit is split into row
 * parts at init (one whose single row does not fit is refused, naming it); a lost device
 * stops the next forward or the next read-back with WGF_ERR_DEVICE_LOST, after the ids
 * already read back were delivered. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/gpu/gr.h"
#include "util/rng.h"

static void gr_free(struct wgf_llm_backend *b)
{
    struct gr *g = b->impl;
    if (!g) return;
    gr_plan_free(g);
    gr_weights_free(g);
    gr_state_free(g);
    free(g);
    b->impl = NULL;
}

static enum wgf_status lost(struct gr *g, struct wgf_err *err, const char *what)
{
    wgf_ctx_wait(g->ctx); /* puts the loss message on the context */
    return gr_fail(g, err, WGF_ERR_DEVICE_LOST, what);
}

static uint32_t pad16(uint32_t n) { return (n + 15) / 16 * 16; }

/* Decode attention's workgroup size. attn_split runs one workgroup per head (and slice), so a
 * model's heads are its grid (Phi-3-mini's 32 leave 100 of the H200's 132 units idle) and the
 * role takes as long as one workgroup's chain: per block of WG positions the scores, the
 * block's max and sum, then the values, where invocation i sums dims 4 (i % D4) .. + 4 of
 * every (WG / D4)-th position. With 256 invocations Phi-3-mini's head_dim 96 leaves 10 such
 * position groups, each summing ~29 of 289 positions in two blocks; 1,024 take them in one
 * block, ~7 each. On an H100 (bench/RESULTS.md, "Twenty-first cut") 512 or 1,024 took
 * Phi-3-mini from 278.5-279.0 to 286.2-286.9 tok/s (f16) and 402.6-402.9 to 418.0-419.8
 * (Q4_K_M); this rule (512) took Qwen2.5-1.5B f16 (head_dim 128) from 487.9 to 544.9. 1,024
 * gave Qwen2.5-0.5B (head_dim 64: 16 groups at 256) nothing (-0.5%, inside the 0.8% two runs
 * of the same kernels differed by), so it keeps 256. The rule: the smallest power of two
 * from GR_WG that gives GR_ATT_MIN_PG position groups, within the
 * device's invocation limits, lib_reduce_sg's 64 subgroup slots and its workgroup memory
 * (attn_split holds 20 bytes an invocation, the reductions up to 20 more). */
static uint32_t gr_att_wg(const struct gr *g, const struct wgf_limits *lim)
{
    uint32_t d4 = g->hd / 4 ? g->hd / 4 : 1, best = GR_WG;
    for (uint32_t w = GR_WG * 2; w <= GR_ATT_WG_MAX && best / d4 < GR_ATT_MIN_PG; w *= 2) {
        uint64_t mem = (uint64_t)w * 20 + (uint64_t)g->hd * 4 + (g->sgs ? 64u * 20 : (uint64_t)w * 20);
        if (w > lim->max_compute_invocations_per_workgroup || w > lim->max_compute_workgroup_size_x ||
            (g->sgs && w / g->sgs > 64) || mem > lim->max_compute_workgroup_storage_size)
            break;
        best = w;
    }
    return best;
}

/* Shapes the kernels need; a model outside them is refused at init, naming what. */
static enum wgf_status check_shapes(const struct gr *g, struct wgf_err *err)
{
    const struct wgf_llm_config *c = &g->c;
    if (g->hd % 4 || g->hd > 1024)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "gpu-roles: head_dim %u: the attention kernel needs a multiple of 4 up to 1024",
                        g->hd);
    if ((g->hd - g->rot) % 2)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "gpu-roles: head_dim %u with rope_dim %u leaves an odd number of unrotated dims",
                        g->hd, g->rot);
    if ((uint32_t)c->n_heads > 65535)
        return wgf_fail(err, WGF_ERR_LIMIT, "gpu-roles: %d heads > maxComputeWorkgroupsPerDimension", c->n_heads);
    if (g->q_dim > 16384)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "gpu-roles: n_heads * head_dim = %u > 16384", g->q_dim);
    return WGF_OK;
}

static enum gr_plan plan_kind(const char *plan)
{
    if (plan && !strcmp(plan, "ops")) return GR_PLAN_OPS;
    if (plan && !strcmp(plan, "fused")) return GR_PLAN_FUSED;
    if (plan && !strcmp(plan, "mega")) return GR_PLAN_MEGA;
    return GR_PLAN_ROLES;
}

static enum wgf_status gr_init(struct wgf_llm_backend *b, const struct wgf_llm_model *m,
                               const struct wgf_llm_backend_options *opt, struct wgf_err *err)
{
    b->impl = NULL;
    if (!opt || !opt->gpu)
        return wgf_fail(err, WGF_ERR_ARG, "gpu: the gpu backend needs a GPU context (wgf_llm_backend_options.gpu)");
    wgf_ctx *ctx = opt->gpu;
    if (wgf_ctx_lost(ctx)) return wgf_fail(err, WGF_ERR_DEVICE_LOST, "gpu: device lost: %s", wgf_ctx_last_error(ctx));
    enum wgf_status s = wgf__llm_check_model(m, "gpu-roles", err);
    if (s) return s;
    const struct wgf_llm_config *c     = &m->cfg;
    uint32_t                     n_ctx = opt->n_ctx ? opt->n_ctx : (uint32_t)(c->max_seq_len > 0 ? c->max_seq_len : 2048);
    if (n_ctx > (1u << 24)) return wgf_fail(err, WGF_ERR_LIMIT, "gpu-roles: context %u > %u", n_ctx, 1u << 24);

    struct gr *g = calloc(1, sizeof *g);
    if (!g) return wgf_fail(err, WGF_ERR_NOMEM, "gpu-roles: state");
    b->impl   = g;
    g->ctx    = ctx;
    g->name   = b->name;
    g->plan   = plan_kind(b->plan);
    g->m      = m;
    g->c      = *c;
    g->f16    = !opt->weights_f32;
    g->n_ctx  = n_ctx;
    g->dim    = (uint32_t)c->dim;
    g->dimp   = pad16(g->dim);
    g->hd     = (uint32_t)c->head_dim;
    g->q_dim  = (uint32_t)c->n_heads * g->hd;
    g->kv_dim = (uint32_t)c->n_kv_heads * g->hd;
    g->rot    = (uint32_t)c->rope_dim;
    g->half   = g->rot / 2;
    g->hidden = (uint32_t)c->hidden_dim;
    g->hidp   = pad16(g->hidden);
    g->vocab  = (uint32_t)c->vocab_size;
    g->vp     = pad16(g->vocab);
    g->pairs  = (g->q_dim + 2 * g->kv_dim) / 2;
    g->qkv_s  = pad16(2 * g->pairs);
    g->gu_s   = pad16(2 * g->hidden);
    g->scale  = 1.0f / sqrtf((float)g->hd);
    /* attention slices: 512 positions each (short contexts take one slice, no combine),
     * longer slices once a context would need more than GR_MAX_SPLIT of them */
    g->split = opt->attn_split ? opt->attn_split : 512;
    if ((n_ctx + g->split - 1) / g->split > GR_MAX_SPLIT) g->split = ((n_ctx + GR_MAX_SPLIT - 1) / GR_MAX_SPLIT + 255) / 256 * 256;
    g->n_split     = (n_ctx + g->split - 1) / g->split;
    bool longrope  = c->rope_scaling.type == WGF_ROPE_SCALING_LONGROPE;
    g->rope_tables = longrope ? 2 : 1;
    g->rope_orig   = longrope && c->rope_scaling.original_max_pos > 0 ? (uint32_t)c->rope_scaling.original_max_pos : 0xffffffffu;
    const struct wgf_limits *lim = wgf_ctx_limits(ctx);
    g->max_bind = g->dev_bind = lim->max_storage_buffer_binding_size;
    /* the x * g copy of the norm-prologue matvecs, beside their reduction arrays (< 4 KiB) */
    g->xw = (uint64_t)g->dimp * 4 + 4096 <= lim->max_compute_workgroup_storage_size;
    g->qx8       = opt->act_q8;
    g->qx3       = !opt->act_q8 && opt->act_i8x3;
    g->q8_min_wg = opt->q8_min_workgroups ? opt->q8_min_workgroups : GR_Q8_MIN_WG;
    g->q_min_wg  = opt->q_min_workgroups ? opt->q_min_workgroups : GR_Q_MIN_WG;
    g->cu        = opt->compute_units; /* else measured when a layout needs it (q_cfg) */
    g->cu_known  = opt->compute_units != 0;
    if (opt->max_binding_bytes && opt->max_binding_bytes < g->max_bind) g->max_bind = opt->max_binding_bytes;
    g->align     = lim->min_storage_buffer_offset_alignment > 16 ? lim->min_storage_buffer_offset_alignment : 16;
    g->arena_cap = (g->max_bind < lim->max_buffer_size ? g->max_bind : lim->max_buffer_size) / g->align * g->align;

    if (!(s = check_shapes(g, err))) {
        if (opt->no_subgroups) g->sgs = 0;
        else if ((s = wgf_ctx_subgroup_size(ctx, &g->sgs))) s = gr_fail(g, err, s, "subgroup probe");
    }
    if (!s) {
        uint32_t top = lim->max_compute_invocations_per_workgroup < GR_ATT_WG_MAX ? lim->max_compute_invocations_per_workgroup
                                                                                   : GR_ATT_WG_MAX;
        g->att_wg    = opt->attn_wg ? opt->attn_wg : gr_att_wg(g, lim);
        if (g->att_wg & (g->att_wg - 1) || g->att_wg < g->hd / 4 || g->att_wg > top)
            s = wgf_fail(err, WGF_ERR_ARG, "gpu-%s: attn_wg %u is not a power of two from head_dim / 4 (%u) to %u",
                         b->plan, g->att_wg, g->hd / 4, top);
    }
    if (!s && !(s = gr_weights_create(g, err))) {
        const struct gr_mat *h = &g->lm_head;
        /* one argmax partial per lm_head workgroup: each part's own layout (a quantized part's
         * is not the matrix's float one; gr_emit_lm_head's grid) */
        for (uint32_t i = 0; i < h->n_parts; i++) {
            const struct gr_part *pt = &h->part[i];
            g->nbest += (pt->rows + pt->cfg.gpw * pt->cfg.rpg - 1) / (pt->cfg.gpw * pt->cfg.rpg);
        }
        if (!(s = gr_state_create(g, err)) && !(s = gr_plan_build(g, err)) && (s = wgf_ctx_wait(ctx)))
            s = gr_fail(g, err, s, "weight upload");
    }
    if (s) {
        gr_free(b); /* every buffer, pipeline reference and bind group made so far */
        return s;
    }
    b->n_vocab              = g->vocab;
    b->n_ctx                = n_ctx;
    b->dispatches_per_token = wgf_schedule_dispatches(g->s[GR_S_LAYERS]) + wgf_schedule_dispatches(g->s[GR_S_HEAD]) +
                              wgf_schedule_dispatches(g->s[GR_S_GREEDY]);
    bool quant = g->lm_head.quant;
    b->weight_bytes_per_token = 0;
    for (int l = 0; l < g->c.n_layers; l++) {
        const struct gr_mat *ms[4] = {&g->L[l].qkv, &g->L[l].wo, &g->L[l].gu, &g->L[l].down};
        for (int i = 0; i < 4; i++) {
            quant = quant || ms[i]->quant;
            for (uint32_t p = 0; p < ms[i]->n_parts; p++) b->weight_bytes_per_token += ms[i]->part[p].bytes;
        }
    }
    for (uint32_t p = 0; p < g->lm_head.n_parts; p++) b->weight_bytes_per_token += g->lm_head.part[p].bytes;
    b->gpu_weight_bytes = g->vecs_size;
    for (uint32_t i = 0; i < g->n_arena; i++) b->gpu_weight_bytes += g->arena_size[i];
    b->weights = quant ? g->m->cfg.source_dtype : g->f16 ? "f16" : "f32";
    return WGF_OK;
}

/* ---- host-chosen tokens ----------------------------------------------------------------- */

/* The step state's first words: ST_POS, ST_NTOK, ST_ROPE_LONG, ST_ERR */
static void state_words(const struct gr *g, uint32_t pos, uint32_t ntok, uint32_t seq_end, uint32_t st[4])
{
    st[0] = pos, st[1] = ntok, st[2] = seq_end > g->rope_orig ? 1u : 0u, st[3] = 0u;
}

static enum wgf_status write_state(struct gr *g, uint32_t pos, uint32_t ntok, uint32_t seq_end, struct wgf_err *err)
{
    uint32_t st[4];
    state_words(g, pos, ntok, seq_end, st);
    enum wgf_status s = wgf_buffer_write(g->ctx, g->st, 0, st, sizeof st);
    return s ? gr_fail(g, err, s, "step state") : WGF_OK;
}

static const wgf_schedule *layers_for(const struct gr *g, uint32_t pos)
{
    return pos + 1 <= g->split || !g->s[GR_S_LAYERS_LONG] ? g->s[GR_S_LAYERS] : g->s[GR_S_LAYERS_LONG];
}

static enum wgf_status submit(struct gr *g, const wgf_schedule *const *list, int n, const char *what,
                              struct wgf_err *err)
{
    wgf_recorder   *r;
    enum wgf_status s = wgf_recorder_begin(g->ctx, "llm.roles", NULL, &r);
    for (int i = 0; i < n && !s; i++) s = wgf_schedule_record(list[i], r, NULL);
    if (s) {
        if (r) wgf_recorder_abandon(r);
        return gr_fail(g, err, s, what);
    }
    if ((s = wgf_recorder_submit(r))) return gr_fail(g, err, s, what);
    return WGF_OK;
}

static enum wgf_status gr_forward(struct wgf_llm_backend *b, const int32_t *tokens, uint32_t n, uint32_t pos,
                                  float *logits, bool all_logits, struct wgf_err *err)
{
    struct gr *g = b->impl;
    if (!g) return wgf_fail(err, WGF_ERR_ARG, "gpu-roles: backend not initialised");
    if (n == 0) return wgf_fail(err, WGF_ERR_ARG, "gpu-roles: forward of zero tokens");
    if (pos > g->n_ctx || n > g->n_ctx - pos)
        return wgf_fail(err, WGF_ERR_CONTEXT, "%llu tokens > ctx %u", (unsigned long long)pos + n, g->n_ctx);
    char what[64];
    snprintf(what, sizeof what, "forward at position %u", pos);
    if (wgf_ctx_lost(g->ctx)) return lost(g, err, what);
    for (uint32_t i = 0; i < n; i++)
        if (tokens[i] < 0 || (uint32_t)tokens[i] >= g->vocab)
            return wgf_fail(err, WGF_ERR_ARG, "token id %d at position %u out of range [0, %u)", (int)tokens[i], pos + i,
                            g->vocab);
    enum wgf_status s;
    if ((s = wgf_buffer_write(g->ctx, g->seq, (uint64_t)pos * 4, tokens, (size_t)n * 4))) return gr_fail(g, err, s, what);
    if (n == 1 && !all_logits) {
        if ((s = write_state(g, pos, 1, pos + 1, err))) return s;
        const wgf_schedule *list[] = {g->s[GR_S_EMBED], layers_for(g, pos), g->s[GR_S_HEAD]};
        if ((s = submit(g, list, 3, what, err))) return s;
    } else if (g->plan != GR_PLAN_ROLES) {
        /* the plans of the fusion dial prefill token by token through their own decode step
         * (one submit each; the RoPE table of the whole forward's length, as cpu-ref) */
        for (uint32_t i = 0; i < n && !s; i++) {
            bool                out    = all_logits || i + 1 == n;
            const wgf_schedule *list[] = {g->s[GR_S_EMBED], layers_for(g, pos + i), g->s[GR_S_HEAD]};
            if ((s = write_state(g, pos + i, 1, pos + n, err)) || (s = submit(g, list, out ? 3 : 2, what, err))) break;
            if (all_logits && logits &&
                (s = wgf_buffer_read(g->ctx, g->logits, 0, logits + (size_t)i * g->vocab, (size_t)g->vocab * 4)))
                s = gr_fail(g, err, s, what);
        }
        if (s) return s;
    } else {
        if (all_logits && (s = gr_plan_all_logits(g, err))) return s;
        float *rows = all_logits ? malloc((size_t)GR_T_MAX * g->vp * sizeof *rows) : NULL;
        if (all_logits && !rows) return wgf_fail(err, WGF_ERR_NOMEM, "gpu-roles: logits rows");
        for (uint32_t done = 0; done < n && !s; done += GR_T_MAX) {
            uint32_t T = n - done < GR_T_MAX ? n - done : GR_T_MAX;
            gr_grid_fill(g, T, pos + done); /* the grids this chunk's replay reads */
            if ((s = write_state(g, pos + done, T, pos + n, err))) break;
            const wgf_schedule *list[3] = {g->s[GR_S_PREFILL], NULL, NULL};
            int                 nl      = 1;
            if (done + T == n) list[nl++] = g->s[GR_S_HEAD_PRE];
            if (all_logits) list[nl++] = g->s[GR_S_ALL_LOGITS];
            if ((s = submit(g, list, nl, what, err))) break;
            if (all_logits) {
                if ((s = wgf_buffer_read(g->ctx, g->LOGITS, 0, rows, (size_t)T * g->vp * 4))) {
                    s = gr_fail(g, err, s, what);
                    break;
                }
                for (uint32_t t = 0; t < T; t++)
                    memcpy(logits + (size_t)(done + t) * g->vocab, rows + (size_t)t * g->vp, (size_t)g->vocab * 4);
            }
        }
        free(rows);
        if (s) return s;
    }
    if (logits && !all_logits) {
        if ((s = wgf_buffer_read(g->ctx, g->logits, 0, logits, (size_t)g->vocab * 4))) return gr_fail(g, err, s, what);
    } else if (!logits && (s = wgf_ctx_wait(g->ctx))) {
        return gr_fail(g, err, s, what); /* the caller keeps the logits on the device: wait anyway */
    }
    return WGF_OK;
}

/* ---- on-device decoding ----------------------------------------------------------------- */

struct inflight {
    uint32_t first, n; /* ids [first, first + n) of the request                              */
    int      rb;
};

static enum wgf_status gr_decode(struct wgf_llm_backend *b, const struct wgf_llm_decode_req *req, uint32_t *n_ids,
                                 struct wgf_err *err)
{
    struct gr *g = b->impl;
    *n_ids       = 0;
    if (!g) return wgf_fail(err, WGF_ERR_ARG, "gpu-roles: backend not initialised");
    const struct wgf_sampler_params *sp = &req->sampler->p;
    bool greedy  = sp->temperature == 0;
    bool penalty = sp->repeat_penalty != 1.0f && sp->repeat_last_n > 0;
    if (!greedy && (sp->top_k == 0 || sp->top_k > GR_KMAX))
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "gpu-roles: top-k %u: the GPU sampler handles 1..%u", sp->top_k,
                        GR_KMAX);
    if (req->pos == 0 || req->pos > g->n_ctx || req->max_ids == 0)
        return wgf_fail(err, WGF_ERR_ARG, "gpu-roles: decode at position %u of %u", req->pos, g->n_ctx);
    const uint32_t pos0  = req->pos;
    const uint32_t n_max = req->max_ids < g->n_ctx - pos0 + 1 ? req->max_ids : g->n_ctx - pos0 + 1;
    if (wgf_ctx_lost(g->ctx)) return lost(g, err, "decode");

    /* the sampler's parameters and RNG state to the device; st says the last evaluated
     * position was pos0 - 1 */
    uint32_t spw[GR_SP_LEN] = {0};
    float    temp = sp->temperature, top_p = sp->top_p, pen = sp->repeat_penalty;
    memcpy(&spw[GR_SP_TEMP], &temp, 4);
    spw[GR_SP_TOP_K] = greedy ? 1u : sp->top_k;
    memcpy(&spw[GR_SP_TOP_P], &top_p, 4);
    memcpy(&spw[GR_SP_PENALTY], &pen, 4);
    spw[GR_SP_LAST_N] = sp->repeat_last_n;
    uint32_t stw[GR_ST_LEN] = {0};
    stw[GR_ST_POS]          = pos0 - 1;
    stw[GR_ST_NTOK]         = 1;
    stw[GR_ST_ROPE_LONG]    = pos0 > g->rope_orig;
    for (int i = 0; i < 4; i++) {
        stw[GR_ST_RNG + 2 * i]     = (uint32_t)req->sampler->rng[i];
        stw[GR_ST_RNG + 2 * i + 1] = (uint32_t)(req->sampler->rng[i] >> 32);
    }
    enum wgf_status s;
    if ((s = wgf_buffer_write(g->ctx, g->sp, 0, spw, sizeof spw)) || (s = wgf_buffer_write(g->ctx, g->st, 0, stw, sizeof stw)))
        return gr_fail(g, err, s, "decode setup");
    const wgf_schedule *sample[2] = {NULL, NULL};
    int                 ns        = 0;
    if (penalty) sample[ns++] = g->s[GR_S_PENALTY];
    sample[ns++] = greedy && !penalty ? g->s[GR_S_GREEDY] : g->s[GR_S_TOPK];

    struct inflight q[GR_RING];
    int             head = 0, count = 0;
    /* steps per submit start at GR_STEPS on a GPU (a step takes ~1 ms: starting lower and
     * growing cost 3% of Qwen2.5-0.5B's decode on the H200) and at 2 on a CPU adapter (a step
     * can take seconds: tokens should stream); then they follow the measured rate */
    bool            cpu_adapter = !strcmp(wgf_ctx_adapter(g->ctx)->type, "cpu");
    uint32_t        submitted = 0, delivered = 0, steps = cpu_adapter ? 2 : GR_STEPS;
    double          t_last    = wgf_llm_now();
    bool            stop = false;
    uint32_t        ids[GR_STEPS + 1];
    while (!s && !stop && delivered < n_max) {
        /* keep GR_RING submits in flight: the first is the sample after the prompt alone,
         * so the first token comes back as soon as it exists */
        while (!s && count < GR_RING && submitted < n_max) {
            uint32_t      n  = submitted == 0 ? 1 : (n_max - submitted < steps ? n_max - submitted : steps);
            int           rb = (head + count) % GR_RING;
            wgf_recorder *r;
            double        t0 = wgf_llm_now(); /* host time: recording and submitting */
            if ((s = wgf_recorder_begin(g->ctx, "llm.decode", NULL, &r))) break;
            for (uint32_t i = submitted; i < submitted + n && !s; i++) {
                if (i > 0) { /* evaluate id i - 1 at position pos0 + i - 1 */
                    if (!(s = wgf_schedule_record(layers_for(g, pos0 + i - 1), r, NULL)))
                        s = wgf_schedule_record(g->s[GR_S_HEAD], r, NULL);
                }
                for (int k = 0; k < ns && !s; k++) s = wgf_schedule_record(sample[k], r, NULL);
            }
            if (!s) s = wgf_recorder_copy(r, g->seq, ((uint64_t)pos0 + submitted) * 4, g->rb[rb], 0, (uint64_t)n * 4);
            if (!s) s = wgf_recorder_copy(r, g->st, GR_ST_ERR * 4, g->rb[rb], GR_STEPS * 4, 4);
            if (s) {
                wgf_recorder_abandon(r);
                break;
            }
            if ((s = wgf_recorder_submit(r)) || (s = wgf_buffer_map_begin(g->ctx, g->rb[rb]))) break;
            b->decode_host_s += wgf_llm_now() - t0;
            b->decode_host_steps += submitted == 0 ? n - 1 : n; /* steps that ran the layers */
            q[rb]     = (struct inflight){submitted, n, rb};
            submitted += n;
            count++;
        }
        if (s) break;
        /* hand out the oldest submit's ids */
        struct inflight *f = &q[head];
        if ((s = wgf_buffer_map_end(g->ctx, g->rb[f->rb], ids, sizeof ids))) break;
        head = (head + 1) % GR_RING;
        count--;
        /* steps per submit from the measured rate: a submit should take about GR_SUBMIT_S, so a
         * slow device (a CPU adapter, a large model) streams tokens and never approaches the
         * context's wait timeout, and a fast one gets GR_STEPS per submit */
        double now = wgf_llm_now();
        if (f->first > 0 && now > t_last) {
            double   per = (now - t_last) / f->n;
            uint32_t want = per > 0 ? (uint32_t)(GR_SUBMIT_S / per) : GR_STEPS;
            steps         = want < 1 ? 1 : want > GR_STEPS ? GR_STEPS : want;
        }
        t_last = now;
        for (uint32_t i = 0; i < f->n && !stop; i++) {
            if (wgf_ctx_lost(g->ctx)) { /* lost while ids were handed out: none after it */
                s    = WGF_ERR_DEVICE_LOST;
                stop = true;
                break;
            }
            if (ids[i] >= g->vocab) { /* no finite logit: the CPU sampler's error */
                s = wgf_fail(err, WGF_ERR_FORMAT, "sampler: every logit is -inf or NaN (position %u)", pos0 + f->first + i);
                stop = true;
                break;
            }
            delivered++;
            if (req->on_id && req->on_id(req->user, (int32_t)ids[i])) stop = true;
        }
        if (s) break;
    }
    /* drain what is still in flight (discarded), so the read-back buffers are reusable */
    while (count > 0) {
        struct wgf_err scratch = {0};
        (void)scratch;
        wgf_buffer_map_end(g->ctx, g->rb[q[head].rb], ids, 0);
        head = (head + 1) % GR_RING;
        count--;
    }
    /* the host sampler's stream: one draw per delivered id, as wgf_sampler_sample */
    if (!greedy) {
        struct wgf_rng rng;
        memcpy(rng.s, req->sampler->rng, sizeof rng.s);
        for (uint32_t i = 0; i < delivered; i++) wgf_rng_u64(&rng);
        memcpy(req->sampler->rng, rng.s, sizeof rng.s);
    }
    *n_ids = delivered;
    if (s && s != WGF_ERR_FORMAT) {
        if (wgf_ctx_lost(g->ctx)) return lost(g, err, "decode");
        return gr_fail(g, err, s, "decode");
    }
    return s;
}

/* ---- profile ------------------------------------------------------------------------------ */

/* A greedy decode step at pos with token 0 (profile, step time): its state written, a
 * recorder begun on timer tm; the caller records the step's schedules (list) and submits. */
static enum wgf_status timed_step(struct gr *g, uint32_t pos, wgf_timer *tm, const char *label, wgf_recorder **r,
                                  const wgf_schedule *list[4], struct wgf_err *err)
{
    int32_t         tok = 0;
    enum wgf_status s;
    wgf_timer_reset(tm);
    if ((s = wgf_buffer_write(g->ctx, g->seq, (uint64_t)pos * 4, &tok, 4)) || (s = write_state(g, pos, 1, pos + 1, err)) ||
        (s = wgf_recorder_begin(g->ctx, label, tm, r)))
        return s;
    list[0] = g->s[GR_S_EMBED], list[1] = layers_for(g, pos), list[2] = g->s[GR_S_HEAD], list[3] = g->s[GR_S_GREEDY];
    return WGF_OK;
}

static enum wgf_status gr_profile(struct wgf_llm_backend *b, uint32_t pos, uint32_t n_steps, struct wgf_profile *out,
                                  struct wgf_err *err)
{
    struct gr *g = b->impl;
    if (!g) return wgf_fail(err, WGF_ERR_ARG, "gpu-roles: backend not initialised");
    wgf_timer      *tm;
    enum wgf_status s = wgf_timer_create(g->ctx, "llm.profile", 2048, &tm);
    if (s) return gr_fail(g, err, s, "profile");
    const struct wgf_step_info *slots[2048];
    double                      ns[2048];
    for (uint32_t i = 0; i < n_steps && !s && pos + i < g->n_ctx; i++) {
        struct wgf_schedule_trace tr = {slots, 2048, 0};
        wgf_recorder             *r;
        const wgf_schedule       *list[4];
        if ((s = timed_step(g, pos + i, tm, "llm.profile", &r, list, err))) break;
        for (int k = 0; k < 4 && !s; k++) s = wgf_schedule_record(list[k], r, &tr);
        if (s) {
            wgf_recorder_abandon(r);
            break;
        }
        uint32_t n;
        if ((s = wgf_recorder_submit(r)) || (s = wgf_timer_read(g->ctx, tm, ns, 2048, &n))) break;
        if ((s = wgf_profile_add(out, &tr, ns, n))) break;
    }
    wgf_timer_free(tm);
    return s ? gr_fail(g, err, s, "profile") : WGF_OK;
}

/* GPU time per kernel role of the first batched prefill chunk of an n_tok-token prompt (at most
 * GR_T_MAX tokens) at position 0 and its last row's LM head. The roles plan only: the other
 * plans prefill through their decode step. The cache's first n_tok positions are overwritten:
 * forward again before decoding. */
static enum wgf_status gr_profile_prefill(struct wgf_llm_backend *b, uint32_t n_tok, struct wgf_profile *out,
                                          struct wgf_err *err)
{
    struct gr *g = b->impl;
    if (!g) return wgf_fail(err, WGF_ERR_ARG, "gpu-roles: backend not initialised");
    if (!g->s[GR_S_PREFILL]) return wgf_fail(err, WGF_ERR_UNSUPPORTED, "gpu-%s: no batched prefill", b->plan);
    if (n_tok == 0 || n_tok > g->n_ctx)
        return wgf_fail(err, WGF_ERR_ARG, "gpu-roles: prefill profile of %u tokens (1..%u)", n_tok, g->n_ctx);
    if (n_tok > GR_T_MAX) n_tok = GR_T_MAX; /* the first chunk */
    int32_t *tok = calloc(n_tok, sizeof *tok);
    if (!tok) return wgf_fail(err, WGF_ERR_NOMEM, "gpu-roles: prefill profile tokens");
    gr_grid_fill(g, n_tok, 0);
    wgf_timer      *tm = NULL;
    wgf_recorder   *r  = NULL;
    enum wgf_status s  = wgf_buffer_write(g->ctx, g->seq, 0, tok, (size_t)n_tok * 4);
    free(tok);
    if (!s) s = write_state(g, 0, n_tok, n_tok, err);
    if (!s) s = wgf_timer_create(g->ctx, "llm.profile_prefill", 2048, &tm);
    if (!s) s = wgf_recorder_begin(g->ctx, "llm.profile_prefill", tm, &r);
    const struct wgf_step_info *slots[2048];
    double                      ns[2048];
    struct wgf_schedule_trace   tr   = {slots, 2048, 0};
    const wgf_schedule         *list[2] = {g->s[GR_S_PREFILL], g->s[GR_S_HEAD_PRE]};
    for (int k = 0; k < 2 && !s; k++) s = wgf_schedule_record(list[k], r, &tr);
    if (s && r) wgf_recorder_abandon(r);
    uint32_t n;
    if (!s && !(s = wgf_recorder_submit(r)) && !(s = wgf_timer_read(g->ctx, tm, ns, 2048, &n)))
        s = wgf_profile_add(out, &tr, ns, n);
    if (tm) wgf_timer_free(tm);
    return s ? gr_fail(g, err, s, "prefill profile") : WGF_OK;
}

/* GPU time of whole greedy decode steps, each recorded into one timed pass (no per-role pass
 * boundaries: what a token costs the GPU, gaps between dependent dispatches included). */
static enum wgf_status gr_step_time(struct wgf_llm_backend *b, uint32_t pos, uint32_t n_steps, double *ns_per_step,
                                    struct wgf_err *err)
{
    struct gr *g = b->impl;
    *ns_per_step = 0;
    if (!g) return wgf_fail(err, WGF_ERR_ARG, "gpu-roles: backend not initialised");
    wgf_timer      *tm;
    enum wgf_status s = wgf_timer_create(g->ctx, "llm.step_time", 1, &tm);
    if (s) return gr_fail(g, err, s, "step time");
    double   sum = 0;
    uint32_t i   = 0;
    for (; i < n_steps && !s && pos + i < g->n_ctx; i++) {
        double              ns = 0;
        uint32_t            n  = 0;
        wgf_recorder       *r;
        const wgf_schedule *list[4];
        if ((s = timed_step(g, pos + i, tm, "llm.step_time", &r, list, err))) break;
        for (int k = 0; k < 4 && !s; k++) s = wgf_schedule_record(list[k], r, NULL);
        if (s) {
            wgf_recorder_abandon(r);
            break;
        }
        if ((s = wgf_recorder_submit(r)) || (s = wgf_timer_read(g->ctx, tm, &ns, 1, &n))) break;
        sum += ns;
    }
    wgf_timer_free(tm);
    if (s) return gr_fail(g, err, s, "step time");
    *ns_per_step = i ? sum / i : 0;
    return WGF_OK;
}

static enum wgf_status gr_decode_steps(const struct wgf_llm_backend *b, uint32_t pos, struct wgf_step_info *out,
                                       uint32_t cap, uint32_t *n, struct wgf_err *err)
{
    const struct gr *g = b->impl;
    *n                 = 0;
    if (!g) return wgf_fail(err, WGF_ERR_ARG, "gpu-roles: backend not initialised");
    /* what gr_decode records per greedy step (the layers read the fed-back id themselves) */
    const wgf_schedule *list[3] = {layers_for(g, pos), g->s[GR_S_HEAD], g->s[GR_S_GREEDY]};
    for (int k = 0; k < 3; k++)
        for (uint32_t i = 0; i < wgf_schedule_len(list[k]); i++, ++*n)
            if (*n < cap) out[*n] = *wgf_schedule_step(list[k], i);
    return WGF_OK;
}

static enum wgf_status gr_probe(struct wgf_llm_backend *b, uint32_t pos, struct wgf_llm_probe *out, struct wgf_err *err)
{
    struct gr *g = b->impl;
    if (!g) return wgf_fail(err, WGF_ERR_ARG, "gpu-roles: backend not initialised");
    if (pos >= g->n_ctx) pos = g->n_ctx - 1;
    int32_t         tok = 0;
    uint32_t        st[4];
    state_words(g, pos, 1, pos + 1, st);
    enum wgf_status s = wgf_buffer_write(g->ctx, g->seq, (uint64_t)pos * 4, &tok, 4);
    if (s) return gr_fail(g, err, s, "probe");
    /* what gr_decode records per greedy step, as gr_decode_steps lists it */
    const wgf_schedule *list[3] = {layers_for(g, pos), g->s[GR_S_HEAD], g->s[GR_S_GREEDY]};
    return gr_probe_steps(g, list, 3, st, out, err);
}

static void gr_reset(struct wgf_llm_backend *b) { (void)b; /* positions are overwritten as they are evaluated */ }

/* The plans of the fusion dial: one backend, the decode layers chosen by `plan` at init. */
#define GR_BACKEND(backend_name, plan_name)                                                                            \
    {                                                                                                                  \
        .name = backend_name, .init = gr_init, .forward = gr_forward, .reset = gr_reset, .free = gr_free,              \
        .decode = gr_decode, .profile = gr_profile, .step_time = gr_step_time, .plan = plan_name,                      \
        .decode_steps = gr_decode_steps, .probe = gr_probe, .profile_prefill = gr_profile_prefill,                     \
    }
const struct wgf_llm_backend wgf_llm_backend_gpu_roles = GR_BACKEND("gpu-roles", "roles");
const struct wgf_llm_backend wgf_llm_backend_gpu_ops   = GR_BACKEND("gpu-ops", "ops");
const struct wgf_llm_backend wgf_llm_backend_gpu_fused = GR_BACKEND("gpu-fused", "fused");
const struct wgf_llm_backend wgf_llm_backend_gpu_mega  = GR_BACKEND("gpu-mega", "mega");
