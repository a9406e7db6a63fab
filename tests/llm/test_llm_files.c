/* LLM model files: the same random model written as safetensors (f32/f16/bf16, single and
 * sharded) and GGUF (F32/F16/BF16/Q8_0/Q4_0) loads to the same weights for llama, qwen2 and
 * phi3 (GGUF Llama q/k permutation undone); config.json parsing of both rope spellings and
 * both dtype spellings; RoPE scaling survives both formats.
 *
 * Tolerances (per element, against the f32 HF load, which must equal the generator
 * exactly): f16 |d| <= 2^-11 |x| + 2^-24; bf16 |d| <= 2^-8 |x|; Q8_0 |d| <= 0.0045 max|row|
 * (half a step of max/127 plus the f16 scale's rounding); Q4_0 |d| <= 0.13 max|row| (the
 * clamped end of the range is off by one step of max/8). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "llm/gguf.h"
#include "llm/model_files.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/llm_test_model.h"
#include "wgfuse/tokenizer.h"

static double tol_for(enum wgf_dtype src, float x, float rowmax)
{
    switch (src) {
    case WGF_DT_F32: return 0;
    case WGF_DT_F16: return fabsf(x) * (1.0 / 2048) + 6e-8;
    case WGF_DT_BF16: return fabsf(x) * (1.0 / 256);
    case WGF_DT_Q8_0: return rowmax * 0.0045;
    case WGF_DT_Q4_0: return rowmax * 0.13;
    default: break; /* other block types: tests/llm/test_quant.c */
    }
    return 0;
}

/* Compare every row of two views; returns the worst (|d| - tol), <= 0 means within. */
static bool same_tensor(struct wgf_t *t, const char *what, const struct wgf_tensor *a, const struct wgf_tensor *ref, enum wgf_dtype src)
{
    if (!a->data && !ref->data) return true;
    if (!a->data || !ref->data || a->n_dims != ref->n_dims || a->shape[0] != ref->shape[0] || a->shape[1] != ref->shape[1])
        return wgf_t_check(t, false, what, "%s: presence/shape differs", ref->name);
    int64_t rows = wgf_tensor_nrows(ref), cols = wgf_tensor_ncols(ref);
    float  *x = malloc((size_t)cols * sizeof *x), *y = malloc((size_t)cols * sizeof *y);
    double  worst = -1, worst_d = 0;
    for (int64_t r = 0; r < rows; r++) {
        wgf_tensor_row_f32(a, r, x);
        wgf_tensor_row_f32(ref, r, y);
        float rowmax = 0;
        for (int64_t c = 0; c < cols; c++) rowmax = fmaxf(rowmax, fabsf(y[c]));
        for (int64_t c = 0; c < cols; c++) {
            double d = fabs((double)x[c] - y[c]), e = d - tol_for(src, y[c], rowmax);
            if (e > worst) worst = e, worst_d = d;
        }
    }
    free(x);
    free(y);
    if (worst > 0) return wgf_t_check(t, false, what, "%s: max excess %.3g (|d| %.3g)", ref->name, worst, worst_d);
    return true;
}

static bool same_weights(struct wgf_t *t, const char *what, const struct wgf_llm_model *m, const struct wgf_llm_model *ref, enum wgf_dtype src)
{
    const struct wgf_llm_weights *a = &m->weights, *b = &ref->weights;
    /* 1-D tensors are f32 copies of f32 in GGUF; in HF they carry the file's dtype */
    enum wgf_dtype v1 = m->format == WGF_LLM_FORMAT_GGUF ? WGF_DT_F32 : src;
    bool ok = same_tensor(t, what, &a->tok_embd, &b->tok_embd, src) && same_tensor(t, what, &a->lm_head, &b->lm_head, src) &&
              same_tensor(t, what, &a->out_norm, &b->out_norm, v1);
    for (int l = 0; ok && l < ref->cfg.n_layers; l++) {
        const struct wgf_layer_weights *x = &a->layers[l], *y = &b->layers[l];
        ok = same_tensor(t, what, &x->attn_norm, &y->attn_norm, v1) && same_tensor(t, what, &x->ffn_norm, &y->ffn_norm, v1) &&
             same_tensor(t, what, &x->wq, &y->wq, src) && same_tensor(t, what, &x->wk, &y->wk, src) &&
             same_tensor(t, what, &x->wv, &y->wv, src) && same_tensor(t, what, &x->wo, &y->wo, src) &&
             same_tensor(t, what, &x->bq, &y->bq, v1) && same_tensor(t, what, &x->bk, &y->bk, v1) &&
             same_tensor(t, what, &x->bv, &y->bv, v1) && same_tensor(t, what, &x->w_gate, &y->w_gate, src) &&
             same_tensor(t, what, &x->w_up, &y->w_up, src) && same_tensor(t, what, &x->w_down, &y->w_down, src);
    }
    return ok;
}

static bool same_config(struct wgf_t *t, const char *what, const struct wgf_llm_config *a, const struct wgf_llm_config *b)
{
    bool ok = a->arch == b->arch && a->dim == b->dim && a->hidden_dim == b->hidden_dim && a->n_layers == b->n_layers &&
              a->n_heads == b->n_heads && a->n_kv_heads == b->n_kv_heads && a->head_dim == b->head_dim &&
              a->rope_dim == b->rope_dim && a->vocab_size == b->vocab_size && a->max_seq_len == b->max_seq_len &&
              fabsf(a->norm_eps - b->norm_eps) <= 1e-9f && a->rope_theta == b->rope_theta &&
              a->tie_embeddings == b->tie_embeddings && a->attn_bias == b->attn_bias && a->bos_id == b->bos_id &&
              a->n_eos == b->n_eos && (a->n_eos == 0 || a->eos_ids[0] == b->eos_ids[0]) &&
              a->rope_scaling.type == b->rope_scaling.type;
    if (!ok) return wgf_t_check(t, false, what, "config differs (dim %d/%d, tie %d/%d, bias %d/%d, rope type %d/%d)", a->dim, b->dim,
                                a->tie_embeddings, b->tie_embeddings, a->attn_bias, b->attn_bias, a->rope_scaling.type, b->rope_scaling.type);
    float fa[WGF_ROPE_MAX_HALF], fb[WGF_ROPE_MAX_HALF], sa, sb;
    int   lens[2] = {16, a->max_seq_len}; /* short and long contexts (longrope switches) */
    for (int k = 0; k < 2; k++) {
        wgf_llm_rope_inv_freq(a, lens[k], fa, &sa);
        wgf_llm_rope_inv_freq(b, lens[k], fb, &sb);
        for (int i = 0; i < a->rope_dim / 2; i++)
            if (fabsf(fa[i] - fb[i]) > 1e-6f * fabsf(fb[i]) || fabsf(sa - sb) > 1e-6f)
                return wgf_t_check(t, false, what, "rope inv_freq[%d] %.9g vs %.9g (scale %g/%g)", i, fa[i], fb[i], sa, sb);
    }
    return true;
}

static struct wgf_llm_model *write_load(struct wgf_t *t, const struct wgf_test_model_spec *s, enum wgf_test_model_format f,
                                        enum wgf_dtype dt, int shards, const char *path)
{
    struct wgf_test_model_opts o = {.format = f, .dtype = dt, .n_shards = shards};
    struct wgf_err             e = {0};
    struct wgf_llm_model      *m = NULL;
    char                       name[160];
    snprintf(name, sizeof name, "write+load %s", path);
    if (!wgf_t_check(t, wgf_test_model_write(s, &o, path, &e) == WGF_OK, name, "write: %s", e.msg)) return NULL;
    if (!wgf_t_check(t, wgf_llm_model_load(path, &m, &e) == WGF_OK, name, "load: %s", e.msg)) return NULL;
    return m;
}

/* The HF f32 load equals the generator bit for bit (and Phi-3 slices are the fused rows). */
static void check_exact(struct wgf_t *t, const struct wgf_test_model_spec *s, const struct wgf_llm_model *m)
{
    const struct wgf_tensor *w = &m->weights.layers[1].wk;
    int64_t                  n = wgf_tensor_nelems(w);
    float                   *v = malloc((size_t)n * sizeof *v);
    bool ok = wgf_test_model_values(s, "model.layers.1.self_attn.k_proj.weight", v, (uint64_t)n) &&
              memcmp(v, w->data, (size_t)n * 4) == 0;
    if (s->arch == WGF_ARCH_PHI3) { /* wk = rows [Q, Q+KV) of qkv_proj */
        int64_t hd = s->dim / s->n_heads, Q = s->n_heads * hd, KV = s->n_kv_heads * hd;
        float  *f  = malloc((size_t)((Q + 2 * KV) * s->dim) * sizeof *f);
        ok = wgf_test_model_values(s, "model.layers.1.self_attn.qkv_proj.weight", f, (uint64_t)((Q + 2 * KV) * s->dim)) &&
             memcmp(f + Q * s->dim, w->data, (size_t)n * 4) == 0;
        free(f);
    }
    free(v);
    wgf_t_check(t, ok, "hf f32 == generator", "%s: layer 1 wk differs from the generated values", wgf_arch_str(s->arch));
}

static void test_formats(struct wgf_t *t, enum wgf_arch arch, enum wgf_rope_scaling_type rope)
{
    struct wgf_test_model_spec s;
    wgf_test_model_spec_default(&s, arch);
    s.seed += (uint64_t)arch * 7 + (uint64_t)rope;
    s.rope_scaling.type = rope;
    if (rope == WGF_ROPE_SCALING_LLAMA3) {
        s.rope_scaling.factor = 8, s.rope_scaling.low_freq_factor = 1, s.rope_scaling.high_freq_factor = 4;
        s.rope_scaling.original_max_pos = 64;
    }
    if (rope == WGF_ROPE_SCALING_LONGROPE) s.rope_scaling.original_max_pos = 64;
    if (rope == WGF_ROPE_SCALING_LINEAR) s.rope_scaling.factor = 2;
    char dir[512], p[700];
    snprintf(p, sizeof p, "llm_files_%s_%d", wgf_arch_str(arch), (int)rope);
    wgf_t_tmpdir(p, dir, sizeof dir);

    snprintf(p, sizeof p, "%s/hf_f32", dir);
    struct wgf_llm_model *ref = write_load(t, &s, WGF_TEST_MODEL_HF, WGF_DT_F32, 1, p);
    if (!ref) return;
    check_exact(t, &s, ref);
    wgf_t_check(t, ref->cfg.tie_embeddings == s.tie_embeddings && ref->cfg.attn_bias == (arch == WGF_ARCH_QWEN2) &&
                       ref->cfg.bos_id == 1 && ref->cfg.n_eos == 1 && ref->cfg.eos_ids[0] == 2 && !strcmp(ref->cfg.source_dtype, "f32"),
                "hf config", "%s: tie %d bias %d bos %d eos %d dtype %s", wgf_arch_str(arch), ref->cfg.tie_embeddings,
                ref->cfg.attn_bias, ref->cfg.bos_id, ref->cfg.eos_ids[0], ref->cfg.source_dtype);
    if (rope == WGF_ROPE_SCALING_LONGROPE) {
        float f[WGF_ROPE_MAX_HALF], sc;
        wgf_llm_rope_inv_freq(&ref->cfg, 200, f, &sc);
        wgf_t_check(t, ref->cfg.rope_scaling.n_factors == 8 && sc > 1.0f, "longrope config", "n_factors %d attn scale %g",
                    ref->cfg.rope_scaling.n_factors, sc);
    }

    static const struct {
        enum wgf_test_model_format f;
        enum wgf_dtype             dt;
        int                        shards;
        const char                *name;
    } cases[] = {
        {WGF_TEST_MODEL_HF, WGF_DT_F16, 1, "hf_f16"},         {WGF_TEST_MODEL_HF, WGF_DT_BF16, 1, "hf_bf16"},
        {WGF_TEST_MODEL_HF, WGF_DT_F32, 3, "hf_f32_sharded"}, {WGF_TEST_MODEL_GGUF, WGF_DT_F32, 0, "f32.gguf"},
        {WGF_TEST_MODEL_GGUF, WGF_DT_F16, 0, "f16.gguf"},     {WGF_TEST_MODEL_GGUF, WGF_DT_BF16, 0, "bf16.gguf"},
        {WGF_TEST_MODEL_GGUF, WGF_DT_Q8_0, 0, "q8_0.gguf"},   {WGF_TEST_MODEL_GGUF, WGF_DT_Q4_0, 0, "q4_0.gguf"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, cases[i].name);
        struct wgf_llm_model *m = write_load(t, &s, cases[i].f, cases[i].dt, cases[i].shards, p);
        if (!m) continue;
        char what[160];
        snprintf(what, sizeof what, "%s rope%d %s == hf_f32", wgf_arch_str(arch), (int)rope, cases[i].name);
        bool ok = same_config(t, what, &m->cfg, &ref->cfg) && same_weights(t, what, m, ref, cases[i].dt);
        ok      = ok && !strcmp(m->cfg.source_dtype, wgf_dtype_str(cases[i].dt));
        wgf_t_check(t, ok, what, "source dtype %s", m->cfg.source_dtype);
        if (cases[i].f == WGF_TEST_MODEL_GGUF)
            wgf_t_check(t, wgf_llm_model_gguf(m) != NULL && wgf_gguf_find(wgf_llm_model_gguf(m), "tokenizer.ggml.bos_token_id") >= 0,
                        "gguf metadata handle", "%s", p);
        /* views into the mapping for unquantized matrices (no copy), owned f32 for quantized */
        if (cases[i].dt == WGF_DT_F16)
            wgf_t_check(t, m->weights.layers[0].wv.dtype == WGF_DT_F16 && m->weights.tok_embd.dtype == WGF_DT_F16, "f16 stays f16", "%s", p);
        wgf_llm_model_free(m);
    }
    /* conversion of the loaded HF model back to GGUF (llama.cpp conventions) loads equal */
    static const enum wgf_dtype conv[] = {WGF_DT_F32, WGF_DT_F16, WGF_DT_Q8_0};
    for (size_t i = 0; i < sizeof conv / sizeof conv[0]; i++) {
        snprintf(p, sizeof p, "%s/converted_%s.gguf", dir, wgf_dtype_str(conv[i]));
        struct wgf_err        e = {0};
        struct wgf_llm_model *m = NULL;
        char                  what[160];
        snprintf(what, sizeof what, "%s rope%d hf_f32 -> %s.gguf", wgf_arch_str(arch), (int)rope, wgf_dtype_str(conv[i]));
        if (!wgf_t_check(t, wgf_llm_model_save_gguf(ref, p, conv[i], &e) == WGF_OK && wgf_llm_model_load(p, &m, &e) == WGF_OK, what, "%s",
                         e.msg))
            continue;
        wgf_t_check(t, same_config(t, what, &m->cfg, &ref->cfg) && same_weights(t, what, m, ref, conv[i]), what, "weights");
        wgf_llm_model_free(m);
    }
    wgf_llm_model_free(ref);
}

/* ---- config.json spellings -------------------------------------------------------------- */

static void test_config(struct wgf_t *t)
{
    struct wgf_llm_config c;
    struct wgf_err        e = {0};
    const char           *old_style =
        "{\"model_type\":\"llama\",\"hidden_size\":128,\"intermediate_size\":256,\"num_hidden_layers\":2,"
        "\"num_attention_heads\":4,\"num_key_value_heads\":2,\"vocab_size\":1000,\"max_position_embeddings\":4096,"
        "\"rms_norm_eps\":1e-5,\"rope_theta\":500000.0,\"torch_dtype\":\"bfloat16\",\"eos_token_id\":[5,7],"
        "\"rope_scaling\":{\"type\":\"llama3\",\"factor\":8.0,\"low_freq_factor\":1.0,\"high_freq_factor\":4.0,"
        "\"original_max_position_embeddings\":512}}";
    const char *new_style =
        "{\"model_type\":\"llama\",\"hidden_size\":128,\"intermediate_size\":256,\"num_hidden_layers\":2,"
        "\"num_attention_heads\":4,\"num_key_value_heads\":2,\"vocab_size\":1000,\"max_position_embeddings\":4096,"
        "\"rms_norm_eps\":1e-5,\"dtype\":\"bfloat16\",\"eos_token_id\":[5,7],"
        "\"rope_parameters\":{\"rope_type\":\"llama3\",\"rope_theta\":500000.0,\"factor\":8.0,\"low_freq_factor\":1.0,"
        "\"high_freq_factor\":4.0,\"original_max_position_embeddings\":512}}";
    struct wgf_llm_config c2;
    bool ok1 = wgf__hf_config_parse("old.json", old_style, strlen(old_style), &c, &e) == WGF_OK;
    wgf_t_check(t, ok1, "config rope_theta/rope_scaling/torch_dtype", "%s", e.msg);
    bool ok2 = wgf__hf_config_parse("new.json", new_style, strlen(new_style), &c2, &e) == WGF_OK;
    wgf_t_check(t, ok2, "config rope_parameters/dtype", "%s", e.msg);
    if (ok1 && ok2) {
        wgf_t_check(t, c.rope_theta == 500000.0f && c2.rope_theta == 500000.0f && c.rope_scaling.type == WGF_ROPE_SCALING_LLAMA3 &&
                           c2.rope_scaling.type == WGF_ROPE_SCALING_LLAMA3 && c2.rope_scaling.factor == 8.0f &&
                           c2.rope_scaling.original_max_pos == 512 && !strcmp(c.source_dtype, "bf16") &&
                           !strcmp(c2.source_dtype, "bf16") && c.n_eos == 2 && c2.eos_ids[1] == 7 && c.head_dim == 32,
                    "config spellings agree", "theta %g/%g type %d/%d dtype %s/%s", c.rope_theta, c2.rope_theta,
                    c.rope_scaling.type, c2.rope_scaling.type, c.source_dtype, c2.source_dtype);
        /* llama3: high-frequency dims unscaled, low-frequency divided by factor */
        float f[64], f0[64], sc;
        struct wgf_llm_config plain = c;
        plain.rope_scaling.type     = WGF_ROPE_SCALING_NONE;
        wgf_llm_rope_inv_freq(&c, 100, f, &sc);
        wgf_llm_rope_inv_freq(&plain, 100, f0, &sc);
        wgf_t_check(t, f[0] == f0[0] && fabsf(f[15] - f0[15] / 8) < 1e-6f * f0[15], "llama3 inv_freq", "f[0] %g/%g f[15] %g/%g", f[0],
                    f0[0], f[15], f0[15]);
    }
    /* defaults: qwen2 gets bias, head_dim explicit, default rope type */
    const char *qwen = "{\"model_type\":\"qwen2\",\"hidden_size\":64,\"intermediate_size\":96,\"num_hidden_layers\":1,"
                       "\"num_attention_heads\":4,\"num_key_value_heads\":2,\"head_dim\":32,\"vocab_size\":100,"
                       "\"max_position_embeddings\":128,\"rope_scaling\":null,\"tie_word_embeddings\":true,"
                       "\"rope_parameters\":{\"rope_type\":\"default\",\"rope_theta\":1000000.0}}";
    bool ok3 = wgf__hf_config_parse("q.json", qwen, strlen(qwen), &c, &e) == WGF_OK;
    wgf_t_check(t, ok3 && c.attn_bias && c.head_dim == 32 && c.rope_theta == 1e6f && c.tie_embeddings && c.bos_id == -1 &&
                       c.rope_scaling.type == WGF_ROPE_SCALING_NONE,
                "qwen2 config defaults", "%s", e.msg);
    /* end-of-sequence ids: repeats fold, WGF_MAX_EOS distinct ids are kept, one more is refused
     * (a stop id dropped without a word would let generation run past it) */
    for (int extra = WGF_MAX_EOS; extra >= WGF_MAX_EOS - 1; extra--) {
        char eos[1024];
        int  n = snprintf(eos, sizeof eos, "{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":96,"
                                            "\"num_hidden_layers\":1,\"num_attention_heads\":4,\"vocab_size\":100,"
                                            "\"max_position_embeddings\":128,\"eos_token_id\":[5,5,5");
        for (int i = 0; i < extra; i++) n += snprintf(eos + n, sizeof eos - (size_t)n, ",%d,%d", 10 + i, 10 + i);
        snprintf(eos + n, sizeof eos - (size_t)n, "]}");
        enum wgf_status se = wgf__hf_config_parse("eos.json", eos, strlen(eos), &c, &e);
        if (extra == WGF_MAX_EOS)
            wgf_t_check(t, se == WGF_ERR_FORMAT && strstr(e.msg, "eos_token_id") && strstr(e.msg, "distinct"),
                        "config: too many EOS ids refused", "status %d: %s", (int)se, e.msg);
        else
            wgf_t_check(t, se == WGF_OK && c.n_eos == WGF_MAX_EOS && c.eos_ids[0] == 5 && c.eos_ids[WGF_MAX_EOS - 1] == 10 + extra - 1,
                        "config: EOS repeats fold", "status %d %s (n_eos %d)", (int)se, se ? e.msg : "", c.n_eos);
    }
    /* longrope with original_max_position_embeddings 1: log(1) = 0 under the attention factor */
    /* sliding windows, as transformers reads them: below the context only; Phi-3 in every
     * layer; Qwen2 only with use_sliding_window, from layer max_window_layers (default 28) on */
    static const struct {
        const char *arch, *extra;
        int         want, first; /* want -1: refused */
    } sw[] = {
        {"phi3", ",\"sliding_window\":47", 47, 0},           {"phi3", ",\"sliding_window\":128", 0, 0},
        {"phi3", ",\"sliding_window\":null", 0, 0},         {"qwen2", ",\"sliding_window\":32", 0, 0},
        {"qwen2", ",\"sliding_window\":32,\"use_sliding_window\":true", 0, 0}, /* layer 28 on: none of 2 */
        {"qwen2", ",\"sliding_window\":32,\"use_sliding_window\":true,\"max_window_layers\":0", 32, 0},
        {"qwen2", ",\"sliding_window\":32,\"use_sliding_window\":true,\"max_window_layers\":1", 32, 1},
        {"qwen2", ",\"sliding_window\":32,\"use_sliding_window\":true,\"max_window_layers\":2", 0, 0},
        {"qwen2", ",\"sliding_window\":32,\"use_sliding_window\":true,\"max_window_layers\":-1", -1, 0},
        {"qwen2", ",\"sliding_window\":32,\"use_sliding_window\":true,\"max_window_layers\":\"1\"", -1, 0},
        {"qwen2", ",\"sliding_window\":32,\"use_sliding_window\":true,\"layer_types\":[\"full_attention\",\"sliding_attention\"]", 32, 1},
        {"qwen2", ",\"sliding_window\":32,\"use_sliding_window\":true,\"max_window_layers\":0,\"layer_types\":[\"full_attention\",\"full_attention\"]", 0, 0},
        {"phi3", ",\"sliding_window\":47,\"layer_types\":[\"sliding_attention\",\"sliding_attention\"]", 47, 0},
        {"phi3", ",\"sliding_window\":47,\"layer_types\":[\"sliding_attention\",\"full_attention\"]", -1, 0},
        {"phi3", ",\"sliding_window\":47,\"layer_types\":[\"sliding_attention\"]", -1, 0},
        {"phi3", ",\"sliding_window\":47,\"layer_types\":[\"sliding_attention\",\"chunked\"]", -1, 0},
        {"phi3", ",\"sliding_window\":\"47\"", -1, 0},      {"phi3", ",\"sliding_window\":0", -1, 0},
        {"qwen2", ",\"sliding_window\":32,\"use_sliding_window\":1", -1, 0},
        {"llama", ",\"sliding_window\":32,\"use_sliding_window\":true", 0, 0},
    };
    for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
        char js[1024], nm[160];
        snprintf(js, sizeof js, "{\"model_type\":\"%s\",\"hidden_size\":64,\"intermediate_size\":96,\"num_hidden_layers\":2,"
                                "\"num_attention_heads\":4,\"vocab_size\":100,\"max_position_embeddings\":128%s}",
                 sw[i].arch, sw[i].extra);
        enum wgf_status ss = wgf__hf_config_parse("sw.json", js, strlen(js), &c, &e);
        snprintf(nm, sizeof nm, "config: %s%s", sw[i].arch, sw[i].extra);
        if (sw[i].want < 0)
            wgf_t_check(t, (ss == WGF_ERR_FORMAT || ss == WGF_ERR_UNSUPPORTED) && (strstr(e.msg, "_window") || strstr(e.msg, "layer_types")),
                        nm, "status %d: %s", (int)ss, e.msg);
        else
            wgf_t_check(t, ss == WGF_OK && c.sliding_window == sw[i].want && c.swa_first_layer == sw[i].first, nm,
                        "status %d %s: window %d from layer %d, want %d from %d", (int)ss, ss ? e.msg : "", c.sliding_window,
                        c.swa_first_layer, sw[i].want, sw[i].first);
    }
    for (int orig = 1; orig <= 2; orig++) {
        char lr[1024];
        snprintf(lr, sizeof lr, "{\"model_type\":\"phi3\",\"hidden_size\":64,\"intermediate_size\":96,\"num_hidden_layers\":1,"
                                "\"num_attention_heads\":4,\"vocab_size\":100,\"max_position_embeddings\":128,"
                                "\"original_max_position_embeddings\":%d,\"rope_scaling\":{\"type\":\"longrope\","
                                "\"short_factor\":[1,1,1,1,1,1,1,1],\"long_factor\":[1,1,1,1,1,1,1,1]}}",
                 orig);
        enum wgf_status sl = wgf__hf_config_parse("lr.json", lr, strlen(lr), &c, &e);
        if (orig == 1)
            wgf_t_check(t, sl == WGF_ERR_FORMAT && strstr(e.msg, "original_max_position_embeddings"), "config: longrope original 1 refused",
                        "status %d: %s", (int)sl, e.msg);
        else
            wgf_t_check(t, sl == WGF_OK && isfinite(c.rope_scaling.attn_factor) && c.rope_scaling.attn_factor > 1.0f,
                        "config: longrope original 2", "status %d %s (attn_factor %g)", (int)sl, sl ? e.msg : "", c.rope_scaling.attn_factor);
    }
}

/* ---- conversions ------------------------------------------------------------------------ */

static void test_dtype(struct wgf_t *t)
{
    bool ok = true;
    /* every finite f16 survives f16 -> f32 -> f16 */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00) continue;
        if (wgf_f32_to_f16(wgf_f16_to_f32((uint16_t)h)) != h) ok = false;
    }
    ok = ok && wgf_f32_to_f16(65520.0f) == 0x7c00 && wgf_f32_to_f16(65519.0f) == 0x7bff && wgf_f32_to_f16(1.0f) == 0x3c00 &&
         wgf_f32_to_f16(5.9604645e-8f) == 1 && wgf_f32_to_f16(2.9802322e-8f) == 0 && wgf_f32_to_bf16(1.0f) == 0x3f80 &&
         wgf_f32_to_bf16(1.00390625f) == 0x3f80 /* tie to even */ && wgf_bf16_to_f32(0x3f81) == 1.0078125f &&
         isnan(wgf_f16_to_f32(wgf_f32_to_f16(NAN))) && isnan(wgf_bf16_to_f32(wgf_f32_to_bf16(NAN)));
    wgf_t_check(t, ok, "f16/bf16 conversions", "round trip or rounding wrong");
}


/* ---- GGUF vocabulary -> tokenizer spec ---------------------------------------------------- */

/* A small SentencePiece-style vocabulary: <unk> <s> </s>, 256 byte tokens, a few pieces.
 * mode != 0 writes one defect (used by the negative cases below). */
static int g_vocab_mode;
enum { N_PIECES = 6 };
static enum wgf_status spm_hook(void *user, const char *hf_dir, struct wgf_gguf_writer *w, struct wgf_err *err)
{
    (void)user, (void)hf_dir, (void)err;
    if (!w) return WGF_OK;
    static const char *const pieces[N_PIECES] = {"\xe2\x96\x81", "a", "b", "\xe2\x96\x81" "a", "ab", "\xe2\x96\x81" "ab"};
    enum { N = 3 + 256 + N_PIECES };
    static char   bytes[256][8];
    const char   *toks[N];
    float         scores[N];
    int32_t       types[N];
    toks[0] = "<unk>", toks[1] = "<s>", toks[2] = "</s>";
    types[0] = 2, types[1] = types[2] = 3;
    for (int i = 0; i < 256; i++) {
        snprintf(bytes[i], sizeof bytes[i], "<0x%02X>", i);
        toks[3 + i] = bytes[i], types[3 + i] = 6;
    }
    for (int i = 0; i < N_PIECES; i++) toks[259 + i] = pieces[i], types[259 + i] = 1;
    for (int i = 0; i < N; i++) scores[i] = i < 259 ? 0.0f : (float)(i - 259);
    wgf_gguf_writer_add_str(w, "tokenizer.ggml.model", "llama");
    wgf_gguf_writer_add_arr_str(w, "tokenizer.ggml.tokens", toks, N);
    wgf_gguf_writer_add_arr_f32(w, "tokenizer.ggml.scores", scores, g_vocab_mode == 1 ? N - 1 : N);
    if (g_vocab_mode == 2) wgf_gguf_writer_add_arr_str(w, "tokenizer.ggml.token_type", toks, N);
    else wgf_gguf_writer_add_arr_i32(w, "tokenizer.ggml.token_type", types, N);
    wgf_gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", g_vocab_mode == 3 ? N : 1);
    wgf_gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", 2);
    wgf_gguf_writer_add_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    wgf_gguf_writer_add_bool(w, "tokenizer.ggml.add_bos_token", true);
    if (g_vocab_mode == 4) wgf_gguf_writer_add_str(w, "tokenizer.ggml.pre", "default");
    /* chat templates: a plain string (read), then wrongly typed ones (refused, naming the type) */
    static const char *const tmpl[] = {"{{ messages[0].content }}"};
    if (g_vocab_mode == 5) wgf_gguf_writer_add_str(w, "tokenizer.chat_template", tmpl[0]);
    if (g_vocab_mode == 6) wgf_gguf_writer_add_u32(w, "tokenizer.chat_template", 7);
    if (g_vocab_mode == 7) wgf_gguf_writer_add_arr_str(w, "tokenizer.chat_template", tmpl, 1);
    if (g_vocab_mode == 8) wgf_gguf_writer_add_i32(w, "tokenizer.chat_template.tool_use", -1);
    return WGF_OK;
}

static void test_gguf_vocab(struct wgf_t *t)
{
    struct wgf_test_model_spec s;
    wgf_test_model_spec_default(&s, WGF_ARCH_LLAMA);
    s.vocab_size = 3 + 256 + N_PIECES;
    char dir[512], p[700];
    wgf_t_tmpdir("llm_files_vocab", dir, sizeof dir);
    static const char *const want[] = {NULL, "tokenizer.ggml.scores has 264 entries but tokenizer.ggml.tokens has 265",
                                       "key 'tokenizer.ggml.token_type' is an array of type 8", "tokenizer.ggml.bos_token_id", NULL,
                                       NULL, NULL, NULL, NULL};
    /* the chat template keys are the tokenizer loader's (the spec has no template) */
    static const char *const want_tok[] = {[6] = "key 'tokenizer.chat_template' has type 4 (UINT32), expected STRING",
                                           [7] = "key 'tokenizer.chat_template' has type 9 (ARRAY of STRING), expected STRING",
                                           [8] = "key 'tokenizer.chat_template.tool_use' has type 5 (INT32), expected STRING"};
    for (g_vocab_mode = 0; g_vocab_mode <= 8; g_vocab_mode++) {
        snprintf(p, sizeof p, "%s/spm%d.gguf", dir, g_vocab_mode);
        struct wgf_test_model_opts o = {.format = WGF_TEST_MODEL_GGUF, .dtype = WGF_DT_F16, .tokenizer = spm_hook};
        struct wgf_err             e = {0};
        struct wgf_llm_model      *m = NULL;
        if (!wgf_t_check(t, wgf_test_model_write(&s, &o, p, &e) == WGF_OK, "vocab model write", "%s", e.msg)) continue;
        enum wgf_status ls = wgf_llm_model_load(p, &m, &e);
        if (g_vocab_mode == 3) { /* the model loader itself rejects a BOS outside the vocabulary */
            wgf_t_check(t, ls == WGF_ERR_FORMAT && strstr(e.msg, p) && strstr(e.msg, want[3]), "gguf vocab BOS >= n rejected", "%s", e.msg);
            continue;
        }
        if (!wgf_t_check(t, ls == WGF_OK, "vocab model load", "%s", e.msg)) continue;
        struct wgf_tok_spec spec;
        void               *store = NULL;
        enum wgf_status     st    = wgf_gguf_tok_spec(wgf_llm_model_gguf(m), &spec, &store, &e);
        if (want[g_vocab_mode]) {
            wgf_t_check(t, st == WGF_ERR_FORMAT && strstr(e.msg, p) && strstr(e.msg, want[g_vocab_mode]), "gguf vocab defect rejected",
                        "mode %d: %s", g_vocab_mode, e.msg);
        } else if (g_vocab_mode >= 6) { /* one line naming the key and its type, not "the model ships none" */
            struct wgf_tokenizer *tok = NULL;
            wgf_err_clear(&e);
            st = wgf_llm_tokenizer_load(m, &tok, &e);
            wgf_t_check(t, st == WGF_ERR_FORMAT && !tok && strstr(e.msg, p) && strstr(e.msg, want_tok[g_vocab_mode]) && !strchr(e.msg, '\n'),
                        "gguf: wrongly typed chat template refused at tokenizer load", "mode %d: %s: %s", g_vocab_mode,
                        wgf_status_str(st), e.msg);
            wgf_tokenizer_free(tok);
            tok = NULL;
            st  = wgf_llm_tokenizer_load_path(p, &tok, &e); /* `wgfuse tokenize -m FILE` */
            wgf_t_check(t, st == WGF_ERR_FORMAT && !tok && strstr(e.msg, want_tok[g_vocab_mode]),
                        "gguf: wrongly typed chat template refused by tokenizer_load_path", "mode %d: %s: %s", g_vocab_mode,
                        wgf_status_str(st), e.msg);
            wgf_tokenizer_free(tok);
        } else if (wgf_t_check(t, st == WGF_OK && spec.n_tokens == 265 && spec.bos_id == 1 && spec.eos_id == 2 && spec.unk_id == 0 &&
                                      spec.add_bos == 1 && spec.types[3] == 6 && spec.scores[264] == 5.0f &&
                                      !strcmp(spec.tokens[261], "b") && (g_vocab_mode != 4 || !strcmp(spec.pre, "default")),
                               "gguf vocab -> tok spec", "%s", e.msg)) {
            struct wgf_tokenizer *tok = NULL;
            if (wgf_t_check(t, wgf_tokenizer_from_spec(&spec, &tok, &e) == WGF_OK, "gguf vocab builds a tokenizer", "%s", e.msg)) {
                const char *text = "ab a\xc3\xa9"; /* 'é' only via byte fallback */
                int32_t    *ids  = NULL;
                size_t      n = 0, ol = 0;
                char       *out = NULL;
                bool        ok  = wgf_tokenizer_encode(tok, text, strlen(text), false, &ids, &n, &e) == WGF_OK &&
                          wgf_tokenizer_decode(tok, ids, n, false, &out, &ol, &e) == WGF_OK;
                wgf_t_check(t, ok && ol == strlen(text) && !memcmp(out, text, ol) && n >= 3 && ids[0] == 264,
                            "gguf vocab round trip", "%zu ids, first %d, '%s' %s", n, n ? ids[0] : -1, out ? out : "", e.msg);
                free(ids);
                free(out);
                wgf_tokenizer_free(tok);
            }
            if (g_vocab_mode == 5) {
                struct wgf_tokenizer *mt = NULL;
                st                       = wgf_llm_tokenizer_load(m, &mt, &e);
                const char *ct           = wgf_tokenizer_chat_template(mt);
                wgf_t_check(t, st == WGF_OK && ct && !strcmp(ct, "{{ messages[0].content }}"), "gguf: a string chat template is read",
                            "%s [%s]", e.msg, ct ? ct : "(none)");
                wgf_tokenizer_free(mt);
            }
        }
        free(store);
        wgf_llm_model_free(m);
    }
}

/* Rows that are not a multiple of 32 stay f16 in a Q8_0/Q4_0 GGUF (as llama.cpp does):
 * the model loads, and says "mixed". */
static void test_mixed(struct wgf_t *t)
{
    struct wgf_test_model_spec s;
    wgf_test_model_spec_default(&s, WGF_ARCH_LLAMA);
    s.hidden_dim = 48; /* ffn_down rows of 48 columns: not quantizable */
    char dir[512], p[700];
    wgf_t_tmpdir("llm_files_mixed", dir, sizeof dir);
    snprintf(p, sizeof p, "%s/hf", dir);
    struct wgf_llm_model *ref = write_load(t, &s, WGF_TEST_MODEL_HF, WGF_DT_F32, 1, p);
    snprintf(p, sizeof p, "%s/q4_0.gguf", dir);
    struct wgf_llm_model *m = write_load(t, &s, WGF_TEST_MODEL_GGUF, WGF_DT_Q4_0, 0, p);
    if (ref && m)
        wgf_t_check(t, !strcmp(m->cfg.source_dtype, "mixed") && m->weights.layers[0].w_down.dtype == WGF_DT_F16 &&
                           same_weights(t, "mixed q4_0/f16 == hf_f32", m, ref, WGF_DT_Q4_0),
                    "mixed-dtype GGUF", "source dtype %s, w_down %s", m->cfg.source_dtype, wgf_dtype_str(m->weights.layers[0].w_down.dtype));
    wgf_llm_model_free(m);
    wgf_llm_model_free(ref);
}

/* A safetensors file whose header length is odd puts every tensor at an odd address:
 * the loader copies those into aligned buffers and the weights are unchanged. */
static void test_unaligned(struct wgf_t *t)
{
    struct wgf_test_model_spec s;
    wgf_test_model_spec_default(&s, WGF_ARCH_QWEN2);
    char dir[512], a[700], b[700], f[800];
    wgf_t_tmpdir("llm_files_unaligned", dir, sizeof dir);
    snprintf(a, sizeof a, "%s/aligned", dir);
    snprintf(b, sizeof b, "%s/odd", dir);
    struct wgf_llm_model *ref = write_load(t, &s, WGF_TEST_MODEL_HF, WGF_DT_F16, 1, a);
    struct wgf_llm_model *m   = write_load(t, &s, WGF_TEST_MODEL_HF, WGF_DT_F16, 1, b);
    wgf_llm_model_free(m);
    m = NULL;
    snprintf(f, sizeof f, "%s/model.safetensors", b);
    FILE *fp = fopen(f, "rb");
    fseek(fp, 0, SEEK_END);
    size_t n = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *buf = malloc(n + 1);
    if (fread(buf, 1, n, fp) != n) n = 0;
    fclose(fp);
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--) hl = (hl << 8) | buf[i];
    memmove(buf + 8 + hl + 1, buf + 8 + hl, n - 8 - hl);
    buf[8 + hl] = ' '; /* JSON allows trailing whitespace */
    hl++;
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)(hl >> (8 * i));
    fp = fopen(f, "wb");
    fwrite(buf, 1, n + 1, fp);
    fclose(fp);
    free(buf);
    struct wgf_err e = {0};
    bool ok = ref && wgf_llm_model_load(b, &m, &e) == WGF_OK;
    if (wgf_t_check(t, ok, "odd-offset safetensors loads", "%s", e.msg))
        wgf_t_check(t, ((uintptr_t)m->weights.layers[0].wq.data & 1) == 0 && same_weights(t, "odd offsets == aligned", m, ref, WGF_DT_F32),
                    "odd-offset tensors copied aligned, same values", "wq at %p", m->weights.layers[0].wq.data);
    wgf_llm_model_free(m);
    wgf_llm_model_free(ref);
}

int main(void)
{
    struct wgf_t t = {0};
    test_dtype(&t);
    test_config(&t);
    test_gguf_vocab(&t);
    test_mixed(&t);
    test_unaligned(&t);
    test_formats(&t, WGF_ARCH_LLAMA, WGF_ROPE_SCALING_NONE);
    test_formats(&t, WGF_ARCH_QWEN2, WGF_ROPE_SCALING_NONE);
    test_formats(&t, WGF_ARCH_PHI3, WGF_ROPE_SCALING_NONE);
    test_formats(&t, WGF_ARCH_LLAMA, WGF_ROPE_SCALING_LLAMA3);
    test_formats(&t, WGF_ARCH_LLAMA, WGF_ROPE_SCALING_LINEAR);
    test_formats(&t, WGF_ARCH_PHI3, WGF_ROPE_SCALING_LONGROPE);
    return wgf_t_finish(&t);
}
