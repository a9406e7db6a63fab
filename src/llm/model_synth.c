/* wgfuse — models with the shapes of real ones and random weights, built in memory, for
 * benchmarks on machines where no weights can be downloaded (`wgfuse llm bench --shape`).
 *
 * The configs are the published ones (config.json of each repository on Hugging Face).
 * Matrices are f16 or bf16 with random signs, exponents and mantissas: |w| in [1/64, 1/16)
 * (never zero: zeros can make a kernel look faster than real data would, METHOD.md), norms
 * 1 + small noise, biases small. The numbers produced are meaningless; the bytes moved and
 * the work done per token are those of the real model. Filling is a hash per 4 weights (no
 * float conversion), so a 3.8B-parameter model takes a few seconds. With a quantization
 * recipe (wgf_llm_model_synth_weights: "Q4_K_M", ...) each matrix gets the type llama.cpp's
 * mixture rules give it (quantize.c) and random blocks of that type: the bytes per token
 * and the decoding work of a real file of that recipe, without quantizing anything. Tensors
 * a real file fuses (Phi-3's attn_qkv and gate/up) are fused here too: one type each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/model_files.h"
#include "util/rng.h"

struct synth_shape {
    const char   *name;
    enum wgf_arch arch;
    int           dim, hidden, layers, heads, kv_heads, vocab, ctx;
    float         theta, eps;
    bool          tied, bias;
};

static const struct synth_shape SHAPES[] = {
    {"qwen2.5-0.5b", WGF_ARCH_QWEN2, 896, 4864, 24, 14, 2, 151936, 32768, 1000000.0f, 1e-6f, true, true},
    {"qwen2.5-1.5b", WGF_ARCH_QWEN2, 1536, 8960, 28, 12, 2, 151936, 32768, 1000000.0f, 1e-6f, true, true},
    {"phi-3-mini", WGF_ARCH_PHI3, 3072, 8192, 32, 32, 32, 32064, 4096, 10000.0f, 1e-5f, false, false},
    {"llama-3.2-1b", WGF_ARCH_LLAMA, 2048, 8192, 16, 32, 8, 128256, 131072, 500000.0f, 1e-5f, true, false},
    /* not a published model: Qwen2's structure (GQA, q/k/v bias, tied head) small enough for a
     * CPU adapter in seconds (`wgfuse report`'s fusion dial) */
    {"tiny", WGF_ARCH_QWEN2, 256, 768, 4, 8, 2, 4096, 2048, 1000000.0f, 1e-6f, true, true},
};

const char *wgf_llm_synth_shapes(void) { return "qwen2.5-0.5b, qwen2.5-1.5b, phi-3-mini, llama-3.2-1b, tiny"; }

static void fill16(uint16_t *d, size_t n, bool bf16, uint64_t *state)
{
    for (size_t i = 0; i < n; i += 4) {
        uint64_t r = wgf__splitmix64(state);
        for (size_t j = 0; j < 4 && i + j < n; j++) {
            uint32_t b = (uint32_t)(r >> (16 * j)) & 0xffffu;
            /* sign, exponent 2^-6 or 2^-5, mantissa: |w| in [1/64, 1/16) */
            if (bf16) d[i + j] = (uint16_t)((b & 0x807fu) | ((121u + ((b >> 7) & 1u)) << 7));
            else d[i + j] = (uint16_t)((b & 0x83ffu) | ((9u + ((b >> 10) & 1u)) << 10));
        }
    }
}

/* Random blocks of a quantized type: random bytes (quants, sub-block scales and mins, high
 * bits over their whole ranges), then each block's f16 scale fields set to a random-sign scale
 * that keeps |w| below ~0.06 (the largest |q * sub-scale| of the type), so activations stay
 * finite whatever the bytes. */
static void fill_blocks(uint8_t *b, uint64_t nblk, enum wgf_dtype dt, uint64_t *state)
{
    int      bb  = wgf_dtype_block_bytes(dt);
    uint64_t all = nblk * (uint64_t)bb;
    for (uint64_t i = 0; i < all; i += 8) {
        uint64_t r = wgf__splitmix64(state);
        for (uint64_t j = 0; j < 8 && i + j < all; j++) b[i + j] = (uint8_t)(r >> (8 * j));
    }
    /* (offset of d, offset of m / dmin or -1, largest |q * sub-scale|) */
    int   od = 0, om = -1;
    float big = 1;
    switch (dt) {
    case WGF_DT_Q4_0: big = 8; break;
    case WGF_DT_Q4_1: om = 2, big = 15; break;
    case WGF_DT_Q5_0: big = 16; break;
    case WGF_DT_Q5_1: om = 2, big = 31; break;
    case WGF_DT_Q8_0: big = 128; break;
    case WGF_DT_Q2_K: od = 80, om = 82, big = 45; break;
    case WGF_DT_Q3_K: od = 108, big = 128; break;
    case WGF_DT_Q4_K: om = 2, big = 945; break;
    case WGF_DT_Q5_K: om = 2, big = 1953; break;
    case WGF_DT_Q6_K: od = 208, big = 4096; break;
    default: break;
    }
    for (uint64_t k = 0; k < nblk; k++) {
        uint8_t *p = b + k * (uint64_t)bb;
        uint64_t r = wgf__splitmix64(state);
        float    d = (0.03f + 0.03f * (float)(r & 1023) / 1024.0f) / big;
        uint16_t h = wgf_f32_to_f16((r >> 10) & 1 ? -d : d);
        p[od] = (uint8_t)h, p[od + 1] = (uint8_t)(h >> 8);
        if (om >= 0) { /* a min / dmin of a fraction of the range: the affine types stay centred */
            uint16_t hm = wgf_f32_to_f16(dt == WGF_DT_Q4_1 || dt == WGF_DT_Q5_1 ? -0.5f * d * big : 0.5f * d);
            p[om] = (uint8_t)hm, p[om + 1] = (uint8_t)(hm >> 8);
        }
    }
}

/* The matrix type: `dt`, or with a recipe (wgfuse llm quantize's names) llama.cpp's mixture
 * rule for the matrix's role and layer. */
struct synth_types {
    const char    *recipe; /* NULL: every matrix in dt                                       */
    enum wgf_dtype dt;
    int            n_layers;
    int            n_gqa; /* n_heads / n_kv_heads */
};

static enum wgf_status mat(struct wgf_llm_model *m, struct wgf_tensor *t, const char *name, int64_t rows, int64_t cols,
                           const struct synth_types *ty, enum wgf__role role, int layer, uint64_t *state,
                           struct wgf_err *err)
{
    enum wgf_dtype dt = ty->recipe ? wgf__llm_quantize_pick(ty->recipe, false, role, layer, ty->n_layers, ty->n_gqa, cols) : ty->dt;
    size_t         n  = (size_t)rows * (size_t)cols;
    uint64_t       nbytes;
    if (!wgf__dtype_nbytes(dt, n, (uint64_t)cols, &nbytes))
        return wgf_fail(err, WGF_ERR_INTERNAL, "synthetic model: %s: %s rows of %lld", name, wgf_dtype_str(dt),
                        (long long)cols);
    void *d = wgf__llm_model_own(m, (size_t)nbytes);
    if (!d) return wgf_fail(err, WGF_ERR_NOMEM, "synthetic model: %s (%lld x %lld)", name, (long long)rows, (long long)cols);
    if (dt == WGF_DT_F16 || dt == WGF_DT_BF16) fill16(d, n, dt == WGF_DT_BF16, state);
    else fill_blocks(d, n / (size_t)wgf_dtype_block_elems(dt), dt, state);
    memset(t, 0, sizeof *t);
    t->dtype    = dt;
    t->n_dims   = 2;
    t->shape[0] = rows;
    t->shape[1] = cols;
    t->data     = d;
    t->nbytes   = nbytes;
    snprintf(t->name, sizeof t->name, "%s", name);
    return WGF_OK;
}

/* Phi-3's files (HF and llama.cpp's GGUF) store q/k/v and gate/up fused, one type per tensor in
 * a recipe (attn_v's rules cover attn_qkv, quantize.c): `fused` makes them so, the matrices views of it
 * as model_load.c makes them; else one tensor each. */
static enum wgf_status qkv_mats(struct wgf_llm_model *m, struct wgf_layer_weights *L, int l, int64_t Q, int64_t KV,
                                int64_t D, bool fused, const struct synth_types *ty, uint64_t *state,
                                struct wgf_err *err)
{
    char              nm[64];
    struct wgf_tensor qkv;
    enum wgf_status   s;
#define NM(what) (snprintf(nm, sizeof nm, "blk.%d.%s", l, what), nm)
    if (!fused)
        return (s = mat(m, &L->wq, NM("attn_q.weight"), Q, D, ty, WGF__ROLE_ATTN_Q, l, state, err)) ||
                       (s = mat(m, &L->wk, NM("attn_k.weight"), KV, D, ty, WGF__ROLE_ATTN_K, l, state, err))
                   ? s
                   : mat(m, &L->wv, NM("attn_v.weight"), KV, D, ty, WGF__ROLE_ATTN_V, l, state, err);
    if ((s = mat(m, &qkv, NM("attn_qkv.weight"), Q + 2 * KV, D, ty, WGF__ROLE_ATTN_QKV, l, state, err))) return s;
#undef NM
    L->wq = wgf__tensor_slice_rows(&qkv, 0, Q, "q");
    L->wk = wgf__tensor_slice_rows(&qkv, Q, KV, "k");
    L->wv = wgf__tensor_slice_rows(&qkv, Q + KV, KV, "v");
    return WGF_OK;
}

static enum wgf_status gate_up_mats(struct wgf_llm_model *m, struct wgf_layer_weights *L, int l, int64_t H, int64_t D,
                                    bool fused, const struct synth_types *ty, uint64_t *state, struct wgf_err *err)
{
    char              nm[64];
    struct wgf_tensor gu;
    enum wgf_status   s;
#define NM(what) (snprintf(nm, sizeof nm, "blk.%d.%s", l, what), nm)
    if (!fused)
        return (s = mat(m, &L->w_gate, NM("ffn_gate.weight"), H, D, ty, WGF__ROLE_FFN_GATE, l, state, err))
                   ? s
                   : mat(m, &L->w_up, NM("ffn_up.weight"), H, D, ty, WGF__ROLE_FFN_UP, l, state, err);
    if ((s = mat(m, &gu, NM("ffn_up.weight"), 2 * H, D, ty, WGF__ROLE_FFN_UP, l, state, err))) return s;
#undef NM
    L->w_gate = wgf__tensor_slice_rows(&gu, 0, H, "gate"); /* Phi3MLP: gate is the first half */
    L->w_up   = wgf__tensor_slice_rows(&gu, H, H, "up");
    return WGF_OK;
}

static enum wgf_status vec(struct wgf_llm_model *m, struct wgf_tensor *t, const char *name, int64_t n, float base,
                           float noise, struct wgf_rng *r, struct wgf_err *err)
{
    float *d = wgf__llm_model_own(m, (size_t)n * 4);
    if (!d) return wgf_fail(err, WGF_ERR_NOMEM, "synthetic model: %s", name);
    for (int64_t i = 0; i < n; i++) d[i] = base + wgf_rng_uniform(r, -noise, noise);
    memset(t, 0, sizeof *t);
    t->dtype    = WGF_DT_F32;
    t->n_dims   = 1;
    t->shape[0] = n;
    t->data     = d;
    t->nbytes   = (uint64_t)n * 4;
    snprintf(t->name, sizeof t->name, "%s", name);
    return WGF_OK;
}

static enum wgf_status synth(const char *shape, enum wgf_dtype dtype, const char *recipe, uint64_t seed,
                             struct wgf_llm_model **out, struct wgf_err *err);

enum wgf_status wgf_llm_model_synth(const char *shape, enum wgf_dtype dtype, uint64_t seed, struct wgf_llm_model **out,
                                    struct wgf_err *err)
{
    return synth(shape, dtype, NULL, seed, out, err);
}

enum wgf_status wgf_llm_model_synth_weights(const char *shape, const char *weights, uint64_t seed,
                                            struct wgf_llm_model **out, struct wgf_err *err)
{
    if (!strcmp(weights, "f16") || !strcmp(weights, "bf16"))
        return synth(shape, !strcmp(weights, "f16") ? WGF_DT_F16 : WGF_DT_BF16, NULL, seed, out, err);
    enum wgf_dtype pick = wgf__llm_quantize_pick(weights, false, WGF__ROLE_FFN_UP, 0, 1, 1, 256);
    if (pick == WGF_DT_COUNT || pick == WGF_DT_F32) /* f32: not a synthetic model's (random bits need not be finite) */
        return wgf_fail(err, WGF_ERR_ARG, "synthetic model: weights '%s' are not f16, bf16 or a quantization type (%s)",
                        weights, wgf_llm_quantize_types());
    return synth(shape, WGF_DT_F16, weights, seed, out, err);
}

static enum wgf_status synth(const char *shape, enum wgf_dtype dtype, const char *recipe, uint64_t seed,
                             struct wgf_llm_model **out, struct wgf_err *err)
{
    *out                        = NULL;
    const struct synth_shape *sh = NULL;
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++)
        if (shape && !strcmp(SHAPES[i].name, shape)) sh = &SHAPES[i];
    if (!sh) return wgf_fail(err, WGF_ERR_ARG, "--shape: '%s' is not one of %s", shape ? shape : "", wgf_llm_synth_shapes());
    if (dtype != WGF_DT_F16 && dtype != WGF_DT_BF16)
        return wgf_fail(err, WGF_ERR_ARG, "synthetic model: dtype %s (f16 or bf16)", wgf_dtype_str(dtype));
    struct wgf_llm_model *m = wgf__llm_model_new();
    if (!m) return wgf_fail(err, WGF_ERR_NOMEM, "synthetic model");
    struct wgf_llm_config *c = &m->cfg;
    c->arch           = sh->arch;
    c->dim            = sh->dim;
    c->hidden_dim     = sh->hidden;
    c->n_layers       = sh->layers;
    c->n_heads        = sh->heads;
    c->n_kv_heads     = sh->kv_heads;
    c->head_dim       = sh->dim / sh->heads;
    c->rope_dim       = c->head_dim;
    c->vocab_size     = sh->vocab;
    c->max_seq_len    = sh->ctx;
    c->norm_eps       = sh->eps;
    c->rope_theta     = sh->theta;
    c->tie_embeddings = sh->tied;
    c->attn_bias      = sh->bias;
    c->bos_id         = -1;
    if (sh->arch == WGF_ARCH_PHI3) c->sliding_window = 2047; /* Phi-3-mini-4k's config.json */
    if (sh->arch == WGF_ARCH_LLAMA) { /* Llama 3.2's rope_scaling */
        c->rope_scaling.type             = WGF_ROPE_SCALING_LLAMA3;
        c->rope_scaling.factor           = 32.0f;
        c->rope_scaling.low_freq_factor  = 1.0f;
        c->rope_scaling.high_freq_factor = 4.0f;
        c->rope_scaling.original_max_pos = 8192;
    }
    snprintf(c->source_dtype, sizeof c->source_dtype, "%s", recipe ? "mixed" : wgf_dtype_str(dtype));
    snprintf(m->path, sizeof m->path, "synthetic:%s", sh->name);
    m->format = WGF_LLM_FORMAT_HF;

    struct wgf_llm_weights *W = &m->weights;
    W->layers                 = calloc((size_t)c->n_layers, sizeof *W->layers);
    uint64_t                state = seed ^ 0x5ee0ull;
    struct wgf_rng          r;
    wgf_rng_seed(&r, seed);
    const int64_t   D = c->dim, H = c->hidden_dim, V = c->vocab_size, Q = (int64_t)c->n_heads * c->head_dim,
                  KV = (int64_t)c->n_kv_heads * c->head_dim;
    const struct synth_types ty = {recipe, dtype, c->n_layers, c->n_heads / c->n_kv_heads};
    enum wgf_status s = W->layers ? WGF_OK : wgf_fail(err, WGF_ERR_NOMEM, "synthetic model: layers");
    char            nm[64];
    if (!s)
        s = mat(m, &W->tok_embd, "token_embd.weight", V, D, &ty, sh->tied ? WGF__ROLE_OUTPUT : WGF__ROLE_TOKEN_EMBD, -1,
                &state, err);
    if (!s) s = vec(m, &W->out_norm, "output_norm.weight", D, 1.0f, 0.1f, &r, err);
    if (!s) {
        if (sh->tied) W->lm_head = W->tok_embd;
        else s = mat(m, &W->lm_head, "output.weight", V, D, &ty, WGF__ROLE_OUTPUT, -1, &state, err);
    }
    for (int l = 0; l < c->n_layers && !s; l++) {
        struct wgf_layer_weights *L = &W->layers[l];
#define NM(what) (snprintf(nm, sizeof nm, "blk.%d.%s", l, what), nm)
        if ((s = vec(m, &L->attn_norm, NM("attn_norm.weight"), D, 1.0f, 0.1f, &r, err)) ||
            (s = qkv_mats(m, L, l, Q, KV, D, sh->arch == WGF_ARCH_PHI3, &ty, &state, err)) ||
            (s = mat(m, &L->wo, NM("attn_output.weight"), D, Q, &ty, WGF__ROLE_ATTN_OUTPUT, l, &state, err)) ||
            (s = vec(m, &L->ffn_norm, NM("ffn_norm.weight"), D, 1.0f, 0.1f, &r, err)) ||
            (s = gate_up_mats(m, L, l, H, D, sh->arch == WGF_ARCH_PHI3, &ty, &state, err)) ||
            (s = mat(m, &L->w_down, NM("ffn_down.weight"), D, H, &ty, WGF__ROLE_FFN_DOWN, l, &state, err)))
            break;
        if (sh->bias && ((s = vec(m, &L->bq, NM("attn_q.bias"), Q, 0.0f, 0.05f, &r, err)) ||
                         (s = vec(m, &L->bk, NM("attn_k.bias"), KV, 0.0f, 0.05f, &r, err)) ||
                         (s = vec(m, &L->bv, NM("attn_v.bias"), KV, 0.0f, 0.05f, &r, err))))
            break;
#undef NM
    }
    if (s) {
        wgf_llm_model_free(m);
        return s;
    }
    *out = m;
    return WGF_OK;
}
