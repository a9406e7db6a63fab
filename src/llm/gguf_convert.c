/* wgfuse — write a loaded model as a GGUF v3 file (HF directory -> GGUF, or re-quantize).
 *
 * The inverse of the GGUF path in model_load.c, with llama.cpp's conventions: tensor
 * names from convert_hf_to_gguf.py, Llama q/k rows permuted to interleaved-pair RoPE order,
 * Phi-3's q/k/v and gate/up written back fused, 1-D tensors (norms, biases, rope factors)
 * as F32, and quantized types falling back to F16 for rows that are not a whole number of
 * 32-element blocks. Tokenizer metadata is not copied (only the BOS/EOS ids): pass a GGUF
 * that needs a vocabulary through the test-model tokenizer hook instead.
 * Memory: every encoded tensor is held until the file is written (the writer collects
 * them), so converting needs about the output size in RAM. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/gguf.h"
#include "llm/model_files.h"

/* Encode the rows of `parts` (stacked in order; all with the same column count) as one
 * tensor `name` of `dtype`, optionally applying the Llama rotary row permutation. */
static enum wgf_status add_stacked(struct wgf_gguf_writer *w, const char *name, const struct wgf_tensor *const *parts, int n_parts,
                                   enum wgf_dtype dtype, int perm_head_dim, const char *path, struct wgf_err *err)
{
    int64_t rows = 0, cols = wgf_tensor_ncols(parts[0]);
    for (int i = 0; i < n_parts; i++) rows += wgf_tensor_nrows(parts[i]);
    bool one_d = parts[0]->n_dims == 1;
    if (one_d) dtype = WGF_DT_F32;
    if (wgf_dtype_block_elems(dtype) > 1 && cols % wgf_dtype_block_elems(dtype)) dtype = WGF_DT_F16;
    uint64_t ne = (uint64_t)rows * (uint64_t)cols, nb = 0;
    wgf__dtype_nbytes(dtype, ne, (uint64_t)cols, &nb);
    const uint64_t rb  = (uint64_t)cols / (uint64_t)wgf_dtype_block_elems(dtype) * (uint64_t)wgf_dtype_block_bytes(dtype);
    float         *v   = malloc((size_t)cols * sizeof *v);
    float         *back = malloc((size_t)cols * sizeof *back); /* the encoded row, decoded */
    uint8_t       *enc = malloc((size_t)(nb ? nb : 1));
    if (!v || !back || !enc) {
        free(v);
        free(back);
        free(enc);
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: tensor '%s': out of memory", path, name);
    }
    /* Row by row (a block never spans rows). A row already in `dtype` is copied as it is, as
     * llama-quantize does for a tensor whose type does not change: re-encoding a decoded block
     * need not give the same block back (the scale searches are not idempotent). Only the
     * rows re-encoded to a block type must be finite (the block searches assume it, ggml's
     * too: a NaN makes its integer conversions undefined); f16/f32 carry NaN/Inf through.
     * A finite row the type cannot hold (past f16's 65504, or a block whose f16 scale would
     * overflow) is refused too: its encoding would decode to Inf or NaN. */
    enum wgf_status st = WGF_OK;
    int64_t         r  = 0;
    for (int i = 0; i < n_parts && st == WGF_OK; i++)
        for (int64_t k = 0; k < wgf_tensor_nrows(parts[i]) && st == WGF_OK; k++, r++) {
            int64_t  dst = perm_head_dim ? wgf__llama_perm_row(r, perm_head_dim) : r;
            uint8_t *out = enc + (uint64_t)dst * rb;
            if (parts[i]->dtype == dtype) {
                memcpy(out, (const uint8_t *)parts[i]->data + (uint64_t)k * rb, (size_t)rb);
                continue;
            }
            wgf_tensor_row_f32(parts[i], k, v);
            for (int64_t j = 0; wgf_dtype_block_elems(dtype) > 1 && j < cols; j++)
                if (!isfinite(v[j])) {
                    uint64_t e = (uint64_t)dst * (uint64_t)cols + (uint64_t)j;
                    st = wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': element %llu (row %llu) is %s: cannot quantize to %s", path,
                                  name, (unsigned long long)e, (unsigned long long)dst, isnan(v[j]) ? "NaN" : "Inf", wgf_dtype_str(dtype));
                    break;
                }
            if (st) break;
            wgf__dtype_encode(dtype, v, (uint64_t)cols, out);
            if (dtype == WGF_DT_F32) continue;
            wgf__dtype_decode(dtype, out, (uint64_t)cols, back);
            for (int64_t j = 0; j < cols; j++)
                if (isfinite(v[j]) && !isfinite(back[j])) {
                    /* a block type: the block's largest value overflowed its f16 scale */
                    int64_t  be = wgf_dtype_block_elems(dtype), b = j / be * be, m = b;
                    for (int64_t q = b; q < b + be; q++)
                        if (fabsf(v[q]) > fabsf(v[m])) m = q;
                    uint64_t e = (uint64_t)dst * (uint64_t)cols + (uint64_t)m;
                    st = wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': element %llu (row %llu) = %g is out of %s's range", path,
                                  name, (unsigned long long)e, (unsigned long long)dst, (double)v[m], wgf_dtype_str(dtype));
                    break;
                }
        }
    free(back);
    if (st) {
        free(v);
        free(enc);
        return st;
    }
    int64_t shape[2] = {rows, cols};
    st               = wgf_gguf_writer_add_tensor(w, name, dtype, one_d ? 1 : 2, one_d ? &shape[1] : shape, enc, nb);
    free(v);
    free(enc);
    return st == WGF_OK ? WGF_OK : wgf_fail(err, WGF_ERR_NOMEM, "%s: tensor '%s': out of memory", path, name);
}

/* One tensor: 1-D ones as F32, matrices in the type the options pick for their role. */
static enum wgf_status add_one(struct wgf_gguf_writer *w, const char *name, const struct wgf_tensor *t, const struct wgf__save_opts *o,
                               enum wgf__role role, int layer, int perm, const char *path, struct wgf_err *err)
{
    if (!t->data) return WGF_OK;
    const struct wgf_tensor *parts[1] = {t};
    enum wgf_dtype           dt       = t->n_dims == 1 ? WGF_DT_F32 : o->pick(o->user, role, layer, wgf_tensor_ncols(t));
    return add_stacked(w, name, parts, 1, dt, perm, path, err);
}

static enum wgf_dtype pick_pure(void *user, enum wgf__role role, int layer, int64_t cols)
{
    (void)role, (void)layer, (void)cols;
    return *(const enum wgf_dtype *)user;
}

enum wgf_status wgf_llm_model_save_gguf(const struct wgf_llm_model *m, const char *path, enum wgf_dtype dtype, struct wgf_err *err)
{
    if (wgf_dtype_block_elems(dtype) > 1 && !wgf__quant_can_encode(dtype))
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: no quantizer for %s", path, wgf_dtype_str(dtype));
    struct wgf__save_opts o = {.pick = pick_pure, .user = &dtype, .file_type = UINT32_MAX};
    return wgf__llm_save_gguf(m, path, &o, err);
}

enum wgf_status wgf__llm_save_gguf(const struct wgf_llm_model *m, const char *path, const struct wgf__save_opts *o, struct wgf_err *err)
{
    const struct wgf_llm_config *c = &m->cfg;
    struct wgf_gguf_writer      *w = wgf_gguf_writer_new();
    if (!w) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", path);
    const char *a = wgf_arch_str(c->arch);
    char        k[128];
#define KEY(suffix) (snprintf(k, sizeof k, "%s." suffix, a), k)
    wgf_gguf_writer_add_str(w, "general.architecture", a);
    wgf_gguf_writer_add_str(w, "general.name", "converted by wgfuse");
    if (o->file_type != UINT32_MAX) {
        wgf_gguf_writer_add_u32(w, "general.file_type", o->file_type);
        wgf_gguf_writer_add_u32(w, "general.quantization_version", 2);
    }
    wgf_gguf_writer_add_u32(w, KEY("vocab_size"), (uint32_t)c->vocab_size);
    wgf_gguf_writer_add_u32(w, KEY("context_length"), (uint32_t)c->max_seq_len);
    wgf_gguf_writer_add_u32(w, KEY("embedding_length"), (uint32_t)c->dim);
    wgf_gguf_writer_add_u32(w, KEY("block_count"), (uint32_t)c->n_layers);
    wgf_gguf_writer_add_u32(w, KEY("feed_forward_length"), (uint32_t)c->hidden_dim);
    wgf_gguf_writer_add_u32(w, KEY("attention.head_count"), (uint32_t)c->n_heads);
    wgf_gguf_writer_add_u32(w, KEY("attention.head_count_kv"), (uint32_t)c->n_kv_heads);
    /* the window, as llama.cpp's converter writes it (its loader then leaves Phi-3's unapplied) */
    int sw = c->sliding_window ? c->sliding_window : c->sliding_window_unapplied;
    if (sw) wgf_gguf_writer_add_u32(w, KEY("attention.sliding_window"), (uint32_t)sw);
    if (c->head_dim * c->n_heads != c->dim) {
        wgf_gguf_writer_add_u32(w, KEY("attention.key_length"), (uint32_t)c->head_dim);
        wgf_gguf_writer_add_u32(w, KEY("attention.value_length"), (uint32_t)c->head_dim);
    }
    wgf_gguf_writer_add_f32(w, KEY("attention.layer_norm_rms_epsilon"), c->norm_eps);
    wgf_gguf_writer_add_f32(w, KEY("rope.freq_base"), c->rope_theta);
    wgf_gguf_writer_add_u32(w, KEY("rope.dimension_count"), (uint32_t)c->rope_dim);
    enum wgf_status st = WGF_OK;
    if (o->meta) st = o->meta(o->user, w, err); /* it owns the tokenizer keys */
    else {
        if (c->bos_id >= 0) wgf_gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)c->bos_id);
        if (c->n_eos > 0) wgf_gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)c->eos_ids[0]);
    }
    if (st) {
        wgf_gguf_writer_free(w);
        return st;
    }
    const struct wgf_rope_scaling *s    = &c->rope_scaling;
    const int                      half = c->rope_dim / 2;
    int64_t                        fshape[1] = {half};
    if (s->type == WGF_ROPE_SCALING_LINEAR) {
        wgf_gguf_writer_add_str(w, KEY("rope.scaling.type"), "linear");
        wgf_gguf_writer_add_f32(w, KEY("rope.scaling.factor"), s->factor);
    } else if (s->type == WGF_ROPE_SCALING_LLAMA3) { /* as rope_freqs.weight divisors */
        struct wgf_llm_config plain = *c;
        plain.rope_scaling.type     = WGF_ROPE_SCALING_NONE;
        float f0[WGF_ROPE_MAX_HALF], f1[WGF_ROPE_MAX_HALF], div[WGF_ROPE_MAX_HALF], sc;
        wgf_llm_rope_inv_freq(&plain, 1, f0, &sc);
        wgf_llm_rope_inv_freq(c, 1, f1, &sc);
        for (int i = 0; i < half; i++) div[i] = f0[i] / f1[i];
        wgf_gguf_writer_add_tensor(w, "rope_freqs.weight", WGF_DT_F32, 1, fshape, div, (uint64_t)half * 4);
    } else if (s->type == WGF_ROPE_SCALING_LONGROPE) {
        wgf_gguf_writer_add_u32(w, KEY("rope.scaling.original_context_length"), (uint32_t)s->original_max_pos);
        wgf_gguf_writer_add_f32(w, KEY("rope.scaling.attn_factor"), s->attn_factor);
        wgf_gguf_writer_add_tensor(w, "rope_factors_long.weight", WGF_DT_F32, 1, fshape, s->long_factor, (uint64_t)half * 4);
        wgf_gguf_writer_add_tensor(w, "rope_factors_short.weight", WGF_DT_F32, 1, fshape, s->short_factor, (uint64_t)half * 4);
    }
#undef KEY
    const struct wgf_llm_weights *W  = &m->weights;
    const int                     qk = c->arch == WGF_ARCH_LLAMA ? c->head_dim : 0; /* llama.cpp permutes Llama q/k */
    /* tied: token_embd is also the output matrix, and is picked as one (llama.cpp does) */
    if ((st = add_one(w, "token_embd.weight", &W->tok_embd, o, c->tie_embeddings ? WGF__ROLE_OUTPUT : WGF__ROLE_TOKEN_EMBD, -1, 0, path, err)) ||
        (st = add_one(w, "output_norm.weight", &W->out_norm, o, WGF__ROLE_OUTPUT, -1, 0, path, err)) ||
        (!c->tie_embeddings && (st = add_one(w, "output.weight", &W->lm_head, o, WGF__ROLE_OUTPUT, -1, 0, path, err))))
        goto out;
    for (int l = 0; l < c->n_layers; l++) {
        const struct wgf_layer_weights *L = &W->layers[l];
        char                            n[11][64];
        static const char *const        suf[11] = {"attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight",
                                                   "attn_q.bias", "attn_k.bias", "attn_v.bias", "attn_output.weight",
                                                   "ffn_norm.weight", "ffn_gate.weight", "ffn_down.weight"};
        for (int i = 0; i < 11; i++) snprintf(n[i], sizeof n[i], "blk.%d.%s", l, suf[i]);
        if ((st = add_one(w, n[0], &L->attn_norm, o, WGF__ROLE_OTHER, l, 0, path, err)) ||
            (st = add_one(w, n[7], &L->wo, o, WGF__ROLE_ATTN_OUTPUT, l, 0, path, err)) ||
            (st = add_one(w, n[8], &L->ffn_norm, o, WGF__ROLE_OTHER, l, 0, path, err)) ||
            (st = add_one(w, n[10], &L->w_down, o, WGF__ROLE_FFN_DOWN, l, 0, path, err)))
            goto out;
        char up[64];
        snprintf(up, sizeof up, "blk.%d.ffn_up.weight", l);
        if (c->arch == WGF_ARCH_PHI3) { /* fused, as in the HF checkpoint and llama.cpp */
            char qkv[64];
            snprintf(qkv, sizeof qkv, "blk.%d.attn_qkv.weight", l);
            const struct wgf_tensor *p3[3] = {&L->wq, &L->wk, &L->wv}, *p2[2] = {&L->w_gate, &L->w_up};
            int64_t cols = wgf_tensor_ncols(&L->wq);
            if ((st = add_stacked(w, qkv, p3, 3, o->pick(o->user, WGF__ROLE_ATTN_QKV, l, cols), 0, path, err)) ||
                (st = add_stacked(w, up, p2, 2, o->pick(o->user, WGF__ROLE_FFN_UP, l, cols), 0, path, err)))
                goto out;
            continue;
        }
        if ((st = add_one(w, n[1], &L->wq, o, WGF__ROLE_ATTN_Q, l, qk, path, err)) ||
            (st = add_one(w, n[2], &L->wk, o, WGF__ROLE_ATTN_K, l, qk, path, err)) ||
            (st = add_one(w, n[3], &L->wv, o, WGF__ROLE_ATTN_V, l, 0, path, err)) ||
            (st = add_one(w, n[4], &L->bq, o, WGF__ROLE_OTHER, l, 0, path, err)) ||
            (st = add_one(w, n[5], &L->bk, o, WGF__ROLE_OTHER, l, 0, path, err)) ||
            (st = add_one(w, n[6], &L->bv, o, WGF__ROLE_OTHER, l, 0, path, err)) ||
            (st = add_one(w, n[9], &L->w_gate, o, WGF__ROLE_FFN_GATE, l, 0, path, err)) ||
            (st = add_one(w, up, &L->w_up, o, WGF__ROLE_FFN_UP, l, 0, path, err)))
            goto out;
    }
    st = wgf_gguf_writer_write(w, path, err);
out:
    wgf_gguf_writer_free(w);
    return st;
}
