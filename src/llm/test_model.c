/* wgfuse — random-weight test models as HF directories and GGUF files (wgfuse/llm_test_model.h).
 *
 * Names follow transformers (model.layers.N.self_attn.q_proj.weight, ...) and llama.cpp's
 * convert_hf_to_gguf.py (blk.N.attn_q.weight, ...). For Llama, llama.cpp permutes q/k rows
 * from HF's rotate-half order to interleaved pairs; the GGUF written here does the same so
 * the loader's un-permute is exercised exactly as with real converted files. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/wraps.h"

#include "llm/model_files.h"
#include "util/file.h"
#include "llm/gguf.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/llm_test_model.h"
#include "wgfuse/tokenizer.h"
#include "util/rng.h"

void wgf_test_model_spec_default(struct wgf_test_model_spec *s, enum wgf_arch arch)
{
    memset(s, 0, sizeof *s);
    s->arch           = arch;
    s->dim            = 64;
    s->hidden_dim     = 96;
    s->n_layers       = 2;
    s->n_heads        = 4;
    s->n_kv_heads     = arch == WGF_ARCH_PHI3 ? 4 : 2;
    s->vocab_size     = 128;
    s->max_seq_len    = 256;
    s->norm_eps       = 1e-5f;
    s->rope_theta     = arch == WGF_ARCH_QWEN2 ? 1000000.0f : 10000.0f;
    s->tie_embeddings = arch == WGF_ARCH_QWEN2;
    s->bos_id         = 1;
    s->eos_id         = 2;
    s->seed           = 1234;
}

enum kind { K_MAT, K_EMBD, K_NORM, K_BIAS };

struct tm_tensor {
    char      hf[96], gg[96];
    int64_t   rows, cols; /* cols == 0: 1-D of rows                                     */
    enum kind kind;
    bool      permute;    /* Llama q/k in GGUF                                          */
};

/* The model's tensors in HF order. Returns the count; `out` may be NULL to count. */
static int tm_list(const struct wgf_test_model_spec *s, struct tm_tensor *out)
{
    int           n = 0;
    const int64_t D = s->dim, H = s->hidden_dim, V = s->vocab_size, hd = s->dim / s->n_heads;
    const int64_t Q = s->n_heads * hd, KV = s->n_kv_heads * hd;
#define ADD(hfn, ggn, r, c, k, p)                                                                              \
    do {                                                                                                       \
        if (out) {                                                                                             \
            snprintf(out[n].hf, sizeof out[n].hf, "%s", hfn);                                                  \
            snprintf(out[n].gg, sizeof out[n].gg, "%s", ggn);                                                  \
            out[n].rows = r, out[n].cols = c, out[n].kind = k, out[n].permute = p;                             \
        }                                                                                                      \
        n++;                                                                                                   \
    } while (0)
    ADD("model.embed_tokens.weight", "token_embd.weight", V, D, K_EMBD, false);
    char a[96], b[96];
    const bool llama = s->arch == WGF_ARCH_LLAMA;
    for (int l = 0; l < s->n_layers; l++) {
#define L(hfs, ggs, r, c, k, p)                                                                                \
    do {                                                                                                       \
        snprintf(a, sizeof a, "model.layers.%d.%s", l, hfs);                                                   \
        snprintf(b, sizeof b, "blk.%d.%s", l, ggs);                                                            \
        ADD(a, b, r, c, k, p);                                                                                 \
    } while (0)
        L("input_layernorm.weight", "attn_norm.weight", D, 0, K_NORM, false);
        if (s->arch == WGF_ARCH_PHI3) {
            L("self_attn.qkv_proj.weight", "attn_qkv.weight", Q + 2 * KV, D, K_MAT, false);
        } else {
            L("self_attn.q_proj.weight", "attn_q.weight", Q, D, K_MAT, llama);
            L("self_attn.k_proj.weight", "attn_k.weight", KV, D, K_MAT, llama);
            L("self_attn.v_proj.weight", "attn_v.weight", KV, D, K_MAT, false);
            if (s->arch == WGF_ARCH_QWEN2) {
                L("self_attn.q_proj.bias", "attn_q.bias", Q, 0, K_BIAS, false);
                L("self_attn.k_proj.bias", "attn_k.bias", KV, 0, K_BIAS, false);
                L("self_attn.v_proj.bias", "attn_v.bias", KV, 0, K_BIAS, false);
            }
        }
        L("self_attn.o_proj.weight", "attn_output.weight", D, Q, K_MAT, false);
        L("post_attention_layernorm.weight", "ffn_norm.weight", D, 0, K_NORM, false);
        if (s->arch == WGF_ARCH_PHI3) {
            L("mlp.gate_up_proj.weight", "ffn_up.weight", 2 * H, D, K_MAT, false);
        } else {
            L("mlp.gate_proj.weight", "ffn_gate.weight", H, D, K_MAT, false);
            L("mlp.up_proj.weight", "ffn_up.weight", H, D, K_MAT, false);
        }
        L("mlp.down_proj.weight", "ffn_down.weight", D, H, K_MAT, false);
#undef L
    }
    ADD("model.norm.weight", "output_norm.weight", D, 0, K_NORM, false);
    if (!s->tie_embeddings) ADD("lm_head.weight", "output.weight", V, D, K_MAT, false);
#undef ADD
    return n;
}

static uint64_t fnv1a(const char *s) { return wgf__fnv1a(s, strlen(s)); }

static void tm_fill(const struct wgf_test_model_spec *s, const struct tm_tensor *t, float *out)
{
    struct wgf_rng r;
    wgf_rng_seed(&r, s->seed ^ fnv1a(t->hf));
    uint64_t n = (uint64_t)t->rows * (uint64_t)(t->cols ? t->cols : 1);
    float    scale = t->kind == K_MAT ? 1.0f / sqrtf((float)t->cols) : t->kind == K_EMBD ? 1.0f : 0.1f;
    float    base  = t->kind == K_NORM ? 1.0f : 0.0f;
    for (uint64_t i = 0; i < n; i++) out[i] = base + scale * wgf_rng_uniform(&r, -1.0f, 1.0f);
}

bool wgf_test_model_values(const struct wgf_test_model_spec *s, const char *hf_name, float *out, uint64_t nelems)
{
    int               n = tm_list(s, NULL);
    struct tm_tensor *ts = malloc((size_t)n * sizeof *ts);
    if (!ts) return false;
    tm_list(s, ts);
    bool ok = false;
    for (int i = 0; i < n && !ok; i++)
        if (!strcmp(ts[i].hf, hf_name) && (uint64_t)ts[i].rows * (uint64_t)(ts[i].cols ? ts[i].cols : 1) == nelems) {
            tm_fill(s, &ts[i], out);
            ok = true;
        }
    free(ts);
    return ok;
}

/* Longrope factors: the spec's own, or drawn from the seed. */
static void longrope_factors(const struct wgf_test_model_spec *s, float *sf, float *lf, int half)
{
    if (s->rope_scaling.n_factors == half) {
        memcpy(sf, s->rope_scaling.short_factor, (size_t)half * sizeof *sf);
        memcpy(lf, s->rope_scaling.long_factor, (size_t)half * sizeof *lf);
        return;
    }
    struct wgf_rng r;
    wgf_rng_seed(&r, s->seed ^ 0x10f6);
    for (int i = 0; i < half; i++) sf[i] = wgf_rng_uniform(&r, 1.0f, 1.2f);
    for (int i = 0; i < half; i++) lf[i] = wgf_rng_uniform(&r, 1.0f, 4.0f);
}

static enum wgf_status check_spec(const struct wgf_test_model_spec *s, const char *path, struct wgf_err *err)
{
    if (s->dim < 2 || s->n_heads < 1 || s->dim % s->n_heads || (s->dim / s->n_heads) % 2 || s->n_kv_heads < 1 ||
        s->n_heads % s->n_kv_heads || s->hidden_dim < 1 || s->n_layers < 1 || s->vocab_size < 3 || s->max_seq_len < 1 ||
        s->bos_id < 0 || s->bos_id >= s->vocab_size || s->eos_id < 0 || s->eos_id >= s->vocab_size ||
        s->dim / s->n_heads > 2 * WGF_ROPE_MAX_HALF || s->dim > (1 << 20) || s->hidden_dim > (1 << 20) ||
        s->vocab_size > (1 << 24) || s->n_layers > 4096 || s->max_seq_len > (1 << 24) ||
        (uint64_t)s->vocab_size * (uint64_t)s->dim > (1ull << 34) || (uint64_t)s->hidden_dim * (uint64_t)s->dim > (1ull << 34))
        return wgf_fail(err, WGF_ERR_ARG, "%s: invalid test model dims (dim %d, heads %d/%d, hidden %d, layers %d, vocab %d)", path,
                        s->dim, s->n_heads, s->n_kv_heads, s->hidden_dim, s->n_layers, s->vocab_size);
    return WGF_OK;
}

/* ---- HF ----------------------------------------------------------------------------------- */

static const char *st_dtype(enum wgf_dtype t) { return t == WGF_DT_F32 ? "F32" : t == WGF_DT_F16 ? "F16" : "BF16"; }

static json_t *f32_array(const float *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, json_real(v[i]));
    return a;
}

static enum wgf_status write_text(const char *path, const char *text, struct wgf_err *err)
{
    return wgf_file_write_atomic(path, text, strlen(text), err);
}

static enum wgf_status write_config(const struct wgf_test_model_spec *s, enum wgf_dtype dt, const char *path, struct wgf_err *err)
{
    static const char *const arch_cls[] = {"LlamaForCausalLM", "Qwen2ForCausalLM", "Phi3ForCausalLM"};
    json_t *c = json_object(), *archs = json_array();
    json_array_append_new(archs, json_string(arch_cls[s->arch]));
    json_object_set_new(c, "architectures", archs);
    json_object_set_new(c, "model_type", json_string(wgf_arch_str(s->arch)));
    json_object_set_new(c, "hidden_size", json_integer(s->dim));
    json_object_set_new(c, "intermediate_size", json_integer(s->hidden_dim));
    json_object_set_new(c, "num_hidden_layers", json_integer(s->n_layers));
    json_object_set_new(c, "num_attention_heads", json_integer(s->n_heads));
    json_object_set_new(c, "num_key_value_heads", json_integer(s->n_kv_heads));
    json_object_set_new(c, "vocab_size", json_integer(s->vocab_size));
    json_object_set_new(c, "max_position_embeddings", json_integer(s->max_seq_len));
    json_object_set_new(c, "rms_norm_eps", json_real(s->norm_eps));
    json_object_set_new(c, "rope_theta", json_real(s->rope_theta));
    json_object_set_new(c, "tie_word_embeddings", json_boolean(s->tie_embeddings));
    json_object_set_new(c, "bos_token_id", json_integer(s->bos_id));
    json_object_set_new(c, "eos_token_id", json_integer(s->eos_id));
    json_object_set_new(c, "hidden_act", json_string("silu"));
    json_object_set_new(c, "torch_dtype", json_string(dt == WGF_DT_F32 ? "float32" : dt == WGF_DT_F16 ? "float16" : "bfloat16"));
    const struct wgf_rope_scaling *r = &s->rope_scaling;
    if (r->type != WGF_ROPE_SCALING_NONE) {
        json_t *rs = json_object();
        if (r->type == WGF_ROPE_SCALING_LINEAR) {
            json_object_set_new(rs, "rope_type", json_string("linear"));
            json_object_set_new(rs, "factor", json_real(r->factor));
        } else if (r->type == WGF_ROPE_SCALING_LLAMA3) {
            json_object_set_new(rs, "rope_type", json_string("llama3"));
            json_object_set_new(rs, "factor", json_real(r->factor));
            json_object_set_new(rs, "low_freq_factor", json_real(r->low_freq_factor));
            json_object_set_new(rs, "high_freq_factor", json_real(r->high_freq_factor));
            json_object_set_new(rs, "original_max_position_embeddings", json_integer(r->original_max_pos));
        } else {
            int   half = s->dim / s->n_heads / 2;
            float sf[WGF_ROPE_MAX_HALF], lf[WGF_ROPE_MAX_HALF];
            longrope_factors(s, sf, lf, half);
            json_object_set_new(rs, "type", json_string("longrope"));
            json_object_set_new(rs, "short_factor", f32_array(sf, half));
            json_object_set_new(rs, "long_factor", f32_array(lf, half));
            json_object_set_new(c, "original_max_position_embeddings", json_integer(r->original_max_pos));
        }
        json_object_set_new(c, "rope_scaling", rs);
    }
    char *text = json_dumps(c, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    json_decref(c);
    if (!text) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", path);
    enum wgf_status st = write_text(path, text, err);
    free(text);
    return st;
}

/* One safetensors file holding ts[0..n): header, then each tensor generated and encoded
 * in turn (one tensor in memory at a time, so a 1 GB model needs ~1 tensor of RAM). */
static enum wgf_status write_st(const struct wgf_test_model_spec *s, const struct tm_tensor *ts, int n, enum wgf_dtype dt,
                                const char *path, uint64_t *total, struct wgf_err *err)
{
    json_t  *h   = json_object();
    uint64_t off = 0;
    int      esz = wgf_dtype_block_bytes(dt);
    for (int i = 0; i < n; i++) {
        json_t  *o = json_object(), *shape = json_array(), *offs = json_array();
        uint64_t nb = (uint64_t)ts[i].rows * (uint64_t)(ts[i].cols ? ts[i].cols : 1) * (uint64_t)esz;
        json_array_append_new(shape, json_integer(ts[i].rows));
        if (ts[i].cols) json_array_append_new(shape, json_integer(ts[i].cols));
        json_array_append_new(offs, json_integer((json_int_t)off));
        json_array_append_new(offs, json_integer((json_int_t)(off + nb)));
        json_object_set_new(o, "dtype", json_string(st_dtype(dt)));
        json_object_set_new(o, "shape", shape);
        json_object_set_new(o, "data_offsets", offs);
        json_object_set_new(h, ts[i].hf, o);
        off += nb;
    }
    json_t *meta = json_object();
    json_object_set_new(meta, "format", json_string("pt"));
    json_object_set_new(h, "__metadata__", meta);
    char *hdr = json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(h);
    if (!hdr) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", path);
    size_t hl = strlen(hdr), pad = (8 - hl % 8) % 8; /* data starts 8-aligned, like the Rust writer */
    struct wgf_out  o;
    enum wgf_status st = wgf_out_open(&o, path, 0, err);
    if (st) {
        free(hdr);
        return st;
    }
    FILE   *f = o.f;
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)((uint64_t)(hl + pad) >> (8 * i));
    bool ok = fwrite(len, 1, 8, f) == 8 && fwrite(hdr, 1, hl, f) == hl && fwrite("        ", 1, pad, f) == pad;
    free(hdr);
    for (int i = 0; ok && i < n; i++) {
        uint64_t ne  = (uint64_t)ts[i].rows * (uint64_t)(ts[i].cols ? ts[i].cols : 1);
        float   *v   = malloc((size_t)ne * sizeof *v);
        void    *enc = malloc((size_t)(ne * (uint64_t)esz));
        if (!v || !enc) {
            free(v);
            free(enc);
            wgf_out_abort(&o);
            return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory for tensor '%s'", path, ts[i].hf);
        }
        tm_fill(s, &ts[i], v);
        wgf__dtype_encode(dt, v, ne, enc);
        ok = fwrite(enc, 1, (size_t)(ne * (uint64_t)esz), f) == (size_t)(ne * (uint64_t)esz);
        free(v);
        free(enc);
    }
    if (!ok) {
        wgf_out_abort(&o);
        return wgf_fail(err, WGF_ERR_IO, "%s: write failed", path);
    }
    if ((st = wgf_out_commit(&o, err))) return st;
    *total += off;
    return WGF_OK;
}

static enum wgf_status write_hf(const struct wgf_test_model_spec *s, const struct wgf_test_model_opts *o, const char *dir,
                                const struct tm_tensor *ts, int n, struct wgf_err *err)
{
    if (o->dtype != WGF_DT_F32 && o->dtype != WGF_DT_F16 && o->dtype != WGF_DT_BF16)
        return wgf_fail(err, WGF_ERR_ARG, "%s: HF test models are f32, f16 or bf16, not %s", dir, wgf_dtype_str(o->dtype));
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return wgf_fail(err, WGF_ERR_IO, "%s: cannot create directory: %s", dir, strerror(errno));
    char            p[4096];
    enum wgf_status st;
    snprintf(p, sizeof p, "%s/config.json", dir);
    if ((st = write_config(s, o->dtype, p, err))) return st;
    int      shards = o->n_shards > 1 ? (o->n_shards > n ? n : o->n_shards) : 1;
    uint64_t total  = 0;
    if (shards == 1) {
        snprintf(p, sizeof p, "%s/model.safetensors", dir);
        if ((st = write_st(s, ts, n, o->dtype, p, &total, err))) return st;
    } else {
        json_t *wm = json_object();
        for (int k = 0; k < shards; k++) {
            int  a = k * n / shards, b = (k + 1) * n / shards;
            char fn[64];
            snprintf(fn, sizeof fn, "model-%05d-of-%05d.safetensors", k + 1, shards);
            snprintf(p, sizeof p, "%s/%s", dir, fn);
            if ((st = write_st(s, ts + a, b - a, o->dtype, p, &total, err))) {
                json_decref(wm);
                return st;
            }
            for (int i = a; i < b; i++) json_object_set_new(wm, ts[i].hf, json_string(fn));
        }
        json_t *idx = json_object(), *meta = json_object();
        json_object_set_new(meta, "total_size", json_integer((json_int_t)total));
        json_object_set_new(idx, "metadata", meta);
        json_object_set_new(idx, "weight_map", wm);
        char *text = json_dumps(idx, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(idx);
        if (!text) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", dir);
        snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
        st = write_text(p, text, err);
        free(text);
        if (st) return st;
    }
    if (o->tokenizer) return o->tokenizer(o->tokenizer_user, dir, NULL, err);
    return WGF_OK;
}

/* ---- GGUF --------------------------------------------------------------------------------- */

static uint32_t file_type(enum wgf_dtype t)
{
    switch (t) { /* llama_ftype numbering */
    case WGF_DT_F32: return 0;
    case WGF_DT_F16: return 1;
    case WGF_DT_Q4_0: return 2;
    case WGF_DT_Q4_1: return 3;
    case WGF_DT_Q8_0: return 7;
    case WGF_DT_Q5_0: return 8;
    case WGF_DT_Q5_1: return 9;
    case WGF_DT_Q2_K: return 10;
    case WGF_DT_Q3_K: return 11; /* the _S recipes: one type throughout */
    case WGF_DT_Q4_K: return 14;
    case WGF_DT_Q5_K: return 16;
    case WGF_DT_Q6_K: return 18;
    case WGF_DT_BF16: return 32;
    }
    return 0;
}

static enum wgf_status write_gguf(const struct wgf_test_model_spec *s, const struct wgf_test_model_opts *o, const char *path,
                                  const struct tm_tensor *ts, int n, struct wgf_err *err)
{
    struct wgf_gguf_writer *w = wgf_gguf_writer_new();
    if (!w) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", path);
    const char *a  = wgf_arch_str(s->arch);
    const int   hd = s->dim / s->n_heads, half = hd / 2;
    char        k[128];
    enum wgf_status st = WGF_OK;
#define KEY(suffix) (snprintf(k, sizeof k, "%s." suffix, a), k)
    wgf_gguf_writer_add_str(w, "general.architecture", a);
    wgf_gguf_writer_add_str(w, "general.name", "wgfuse test model");
    wgf_gguf_writer_add_u32(w, "general.file_type", file_type(o->dtype));
    wgf_gguf_writer_add_u32(w, "general.quantization_version", 2);
    wgf_gguf_writer_add_u32(w, KEY("vocab_size"), (uint32_t)s->vocab_size);
    wgf_gguf_writer_add_u32(w, KEY("context_length"), (uint32_t)s->max_seq_len);
    wgf_gguf_writer_add_u32(w, KEY("embedding_length"), (uint32_t)s->dim);
    wgf_gguf_writer_add_u32(w, KEY("block_count"), (uint32_t)s->n_layers);
    wgf_gguf_writer_add_u32(w, KEY("feed_forward_length"), (uint32_t)s->hidden_dim);
    wgf_gguf_writer_add_u32(w, KEY("attention.head_count"), (uint32_t)s->n_heads);
    wgf_gguf_writer_add_u32(w, KEY("attention.head_count_kv"), (uint32_t)s->n_kv_heads);
    wgf_gguf_writer_add_f32(w, KEY("attention.layer_norm_rms_epsilon"), s->norm_eps);
    wgf_gguf_writer_add_f32(w, KEY("rope.freq_base"), s->rope_theta);
    wgf_gguf_writer_add_u32(w, KEY("rope.dimension_count"), (uint32_t)hd);
    const struct wgf_rope_scaling *r = &s->rope_scaling;
    if (r->type == WGF_ROPE_SCALING_LINEAR) {
        wgf_gguf_writer_add_str(w, KEY("rope.scaling.type"), "linear");
        wgf_gguf_writer_add_f32(w, KEY("rope.scaling.factor"), r->factor);
    }
    if (r->type == WGF_ROPE_SCALING_LLAMA3) {
        /* llama.cpp stores Llama-3 scaling as per-frequency divisors in rope_freqs.weight */
        struct wgf_llm_config c0 = {.rope_dim = hd, .rope_theta = s->rope_theta}, c1 = c0;
        c1.rope_scaling = *r;
        c1.rope_scaling.n_factors = 0;
        float f0[WGF_ROPE_MAX_HALF], f1[WGF_ROPE_MAX_HALF], div[WGF_ROPE_MAX_HALF], sc;
        wgf_llm_rope_inv_freq(&c0, 1, f0, &sc);
        wgf_llm_rope_inv_freq(&c1, 1, f1, &sc);
        for (int i = 0; i < half; i++) div[i] = f0[i] / f1[i];
        int64_t shp[1] = {half};
        wgf_gguf_writer_add_tensor(w, "rope_freqs.weight", WGF_DT_F32, 1, shp, div, (uint64_t)half * 4);
    }
    if (r->type == WGF_ROPE_SCALING_LONGROPE) {
        float sf[WGF_ROPE_MAX_HALF], lf[WGF_ROPE_MAX_HALF];
        longrope_factors(s, sf, lf, half);
        wgf_gguf_writer_add_u32(w, KEY("rope.scaling.original_context_length"), (uint32_t)r->original_max_pos);
        int64_t shp[1] = {half};
        wgf_gguf_writer_add_tensor(w, "rope_factors_long.weight", WGF_DT_F32, 1, shp, lf, (uint64_t)half * 4);
        wgf_gguf_writer_add_tensor(w, "rope_factors_short.weight", WGF_DT_F32, 1, shp, sf, (uint64_t)half * 4);
    }
#undef KEY
    if (o->tokenizer) st = o->tokenizer(o->tokenizer_user, NULL, w, err);
    else {
        wgf_gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)s->bos_id);
        wgf_gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)s->eos_id);
    }
    for (int i = 0; st == WGF_OK && i < n; i++) {
        const struct tm_tensor *t  = &ts[i];
        uint64_t                ne = (uint64_t)t->rows * (uint64_t)(t->cols ? t->cols : 1);
        enum wgf_dtype          dt = t->cols ? o->dtype : WGF_DT_F32; /* 1-D stays f32, as llama.cpp */
        if (wgf_dtype_block_elems(dt) > 1 && t->cols % wgf_dtype_block_elems(dt)) dt = WGF_DT_F16;
        uint64_t nb = 0;
        wgf__dtype_nbytes(dt, ne, (uint64_t)(t->cols ? t->cols : t->rows), &nb);
        float *v = malloc((size_t)ne * sizeof *v), *pv = malloc((size_t)ne * sizeof *pv);
        void  *enc = malloc((size_t)nb);
        if (!v || !pv || !enc) st = wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory for tensor '%s'", path, t->gg);
        if (st == WGF_OK) {
            tm_fill(s, t, v);
            if (t->permute)
                for (int64_t row = 0; row < t->rows; row++)
                    memcpy(pv + (uint64_t)wgf__llama_perm_row(row, hd) * (uint64_t)t->cols, v + (uint64_t)row * (uint64_t)t->cols,
                           (size_t)t->cols * sizeof *v);
            wgf__dtype_encode(dt, t->permute ? pv : v, ne, enc);
            int64_t shp[2] = {t->rows, t->cols};
            if (wgf_gguf_writer_add_tensor(w, t->gg, dt, t->cols ? 2 : 1, shp, enc, nb) != WGF_OK)
                st = wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", path);
        }
        free(v);
        free(pv);
        free(enc);
    }
    if (st == WGF_OK) st = wgf_gguf_writer_write(w, path, err);
    wgf_gguf_writer_free(w);
    return st;
}

/* ---- the test tokenizer (opts.with_test_tokenizer) --------------------------------------- */

struct test_tok {
    char    json[4200]; /* the test tokenizer.json, written once next to the output          */
    int32_t eos;
    int64_t n_vocab; /* the model's embedding rows: the GGUF token list is padded to them */
};

static enum wgf_status test_tok_hook(void *user, const char *hf_dir, struct wgf_gguf_writer *gguf, struct wgf_err *err)
{
    struct test_tok *h = user;
    if (hf_dir) {
        char p[4200];
        snprintf(p, sizeof p, "%s/tokenizer.json", hf_dir);
        return wgf_tokenizer_write_test_json(p, err);
    }
    return wgf_llm_gguf_add_tokenizer_json(gguf, h->json, h->n_vocab, -1, h->eos, err);
}

/* Write the tokenizer once to learn its ids (EOS = <|im_end|>, BOS = <|endoftext|>) and
 * size, then the model with a hook that writes it in the format's form. */
static enum wgf_status write_with_test_tokenizer(const struct wgf_test_model_spec *s,
                                                 const struct wgf_test_model_opts *o, const char *path,
                                                 struct wgf_err *err)
{
    struct test_tok       h   = {.eos = -1};
    struct wgf_tokenizer *tok = NULL;
    snprintf(h.json, sizeof h.json, "%s.tokenizer.tmp.%d.json", path, (int)getpid());
    enum wgf_status st = wgf_tokenizer_write_test_json(h.json, err);
    if (st == WGF_OK) st = wgf_tokenizer_load_json(h.json, NULL, &tok, err);
    if (st != WGF_OK) {
        unlink(h.json);
        return st;
    }
    size_t  tv     = wgf_tokenizer_vocab_size(tok);
    int32_t eot    = wgf_tokenizer_find(tok, "<|endoftext|>");
    int32_t im_end = wgf_tokenizer_find(tok, "<|im_end|>");
    wgf_tokenizer_free(tok);
    struct wgf_test_model_spec sp = *s;
    struct wgf_test_model_opts op = *o;
    if ((size_t)sp.vocab_size < tv) {
        unlink(h.json);
        return wgf_fail(err, WGF_ERR_ARG, "vocab %d < the test tokenizer's %zu tokens", sp.vocab_size, tv);
    }
    /* the chat template ends the assistant turn with <|im_end|>: generation stops there */
    if (eot >= 0) sp.bos_id = eot; /* as Qwen2.5's config: bos_token_id = <|endoftext|> */
    sp.eos_id              = im_end >= 0 ? im_end : eot;
    h.eos                  = sp.eos_id;
    h.n_vocab              = sp.vocab_size;
    op.with_test_tokenizer = false;
    op.tokenizer           = test_tok_hook;
    op.tokenizer_user      = &h;
    st                     = wgf_test_model_write(&sp, &op, path, err);
    unlink(h.json);
    return st;
}

enum wgf_status wgf_test_model_write(const struct wgf_test_model_spec *s, const struct wgf_test_model_opts *o, const char *path,
                                     struct wgf_err *err)
{
    if (o->with_test_tokenizer) return write_with_test_tokenizer(s, o, path, err);
    enum wgf_status st = check_spec(s, path, err);
    if (st) return st;
    if (wgf_dtype_block_elems(o->dtype) > 1 && !wgf__quant_can_encode(o->dtype))
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: no quantizer for %s", path, wgf_dtype_str(o->dtype));
    int               n  = tm_list(s, NULL);
    struct tm_tensor *ts = malloc((size_t)n * sizeof *ts);
    if (!ts) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", path);
    tm_list(s, ts);
    st = o->format == WGF_TEST_MODEL_HF ? write_hf(s, o, path, ts, n, err) : write_gguf(s, o, path, ts, n, err);
    free(ts);
    return st;
}
