/* wgfuse — `wgfuse llm quantize`: a model (HF directory or GGUF) to a quantized GGUF with
 * llama.cpp's tensor names, metadata and mixture rules.
 *
 * The mixtures are llama.cpp's (src/llama-quant.cpp, llama_tensor_get_type and
 * tensor_type_fallback, read 2026-12) for the recipes below, restricted to what our
 * architectures have (no experts, no Falcon; the 70B attn_v bump is not applied); the rules
 * are written out in docs/llm.md. Per matrix:
 *   1. the recipe's base type;
 *   2. unless --pure, the recipe's rule for the matrix's role, layer and GQA ratio
 *      (enum rule); the output matrix (and token_embd when tied) becomes Q6_K unless the
 *      base is Q8_0, or Q8_0 when its rows are not whole blocks of the base type;
 *   3. a type whose block does not divide the row falls back: Q2_K, Q3_K -> Q4_0,
 *      Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, then F16 when even 32 does not divide it.
 * 1-D tensors (norms, biases, rope factors) stay F32. No importance matrix. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "llm/gguf.h"
#include "llm/model_files.h"
#include "util/file.h"
#include "wgfuse/llm_run.h"

/* the recipe's rules beyond the base type and the output matrix (llama_tensor_get_type) */
enum rule {
    R_NONE,   /* Q3_K_S, Q5_K_S, Q6_K and the 32-blocks                                 */
    R_Q2_K,   /* attn_v Q3_K (Q4_K when n_head >= 4 n_kv_head), ffn_down, attn_output Q3_K */
    R_Q3_K_M, /* attn_v Q5_K in layers 0-1 else Q4_K; ffn_down Q5_K below n/16 else Q4_K;
                 attn_output Q4_K                                                        */
    R_Q3_K_L, /* attn_v, ffn_down, attn_output Q5_K                                      */
    R_Q4_K_S, /* attn_v Q5_K in layers 0-3, ffn_down Q5_K below n/8                      */
    R_K_M,    /* Q4_K_M, Q5_K_M: attn_v and ffn_down Q6_K where more_bits                */
};

struct recipe {
    const char    *name;
    enum wgf_dtype base;
    uint32_t       ftype; /* llama_ftype: general.file_type */
    enum rule      rule;
};

static const struct recipe recipes[] = {
    {"Q4_0", WGF_DT_Q4_0, 2, R_NONE},       {"Q4_1", WGF_DT_Q4_1, 3, R_NONE},     {"Q8_0", WGF_DT_Q8_0, 7, R_NONE},
    {"Q5_0", WGF_DT_Q5_0, 8, R_NONE},       {"Q5_1", WGF_DT_Q5_1, 9, R_NONE},     {"Q2_K", WGF_DT_Q2_K, 10, R_Q2_K},
    {"Q3_K_S", WGF_DT_Q3_K, 11, R_NONE},    {"Q3_K_M", WGF_DT_Q3_K, 12, R_Q3_K_M}, {"Q3_K_L", WGF_DT_Q3_K, 13, R_Q3_K_L},
    {"Q4_K_S", WGF_DT_Q4_K, 14, R_Q4_K_S},  {"Q4_K_M", WGF_DT_Q4_K, 15, R_K_M},   {"Q5_K_S", WGF_DT_Q5_K, 16, R_NONE},
    {"Q5_K_M", WGF_DT_Q5_K, 17, R_K_M},     {"Q6_K", WGF_DT_Q6_K, 18, R_NONE},
    /* no quantization: every matrix in the float type, as llama-quantize and convert_hf_to_gguf write */
    {"F32", WGF_DT_F32, 0, R_NONE},         {"F16", WGF_DT_F16, 1, R_NONE},       {"BF16", WGF_DT_BF16, 32, R_NONE},
    /* llama-quantize's aliases */
    {"Q3_K", WGF_DT_Q3_K, 12, R_Q3_K_M},    {"Q4_K", WGF_DT_Q4_K, 15, R_K_M},     {"Q5_K", WGF_DT_Q5_K, 17, R_K_M},
};

const char *wgf_llm_quantize_types(void)
{
    return "Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K_S, Q3_K_M (Q3_K), Q3_K_L, Q4_K_S, Q4_K_M (Q4_K), Q5_K_S, Q5_K_M (Q5_K), Q6_K, "
           "F16, BF16, F32";
}

static const struct recipe *find_recipe(const char *s)
{
    for (size_t i = 0; i < sizeof recipes / sizeof recipes[0]; i++) {
        const char *n = recipes[i].name;
        size_t      j = 0;
        while (n[j] && s[j] && (s[j] == n[j] || (s[j] >= 'a' && s[j] <= 'z' && s[j] - 32 == n[j]))) j++;
        if (!n[j] && !s[j]) return &recipes[i];
    }
    return NULL;
}

bool wgf_llm_quantize_known(const char *type) { return type && find_recipe(type) != NULL; }

/* llama.cpp's "more bits" layers: the first and last eighth, and every third between */
static bool more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

struct pick_ctx {
    const struct recipe        *r;
    bool                        pure;
    int                         n_layers;
    int                         n_gqa; /* n_head / n_kv_head (llama.cpp's n_gqa())     */
    const struct wgf_llm_model *m;
    const struct wgf_gguf      *src; /* GGUF input: its metadata is copied            */
    const char                 *tok_json; /* HF input: its tokenizer.json, or NULL    */
    struct wgf_llm_quantize_stats *stats;
};

static enum wgf_dtype fallback(enum wgf_dtype t, int64_t cols)
{
    if (cols % wgf_dtype_block_elems(t) == 0) return t;
    t = t == WGF_DT_Q2_K || t == WGF_DT_Q3_K ? WGF_DT_Q4_0
      : t == WGF_DT_Q4_K                     ? WGF_DT_Q5_0
      : t == WGF_DT_Q5_K                     ? WGF_DT_Q5_1
      : t == WGF_DT_Q6_K                     ? WGF_DT_Q8_0
                                             : t;
    return cols % wgf_dtype_block_elems(t) == 0 ? t : WGF_DT_F16;
}

static enum wgf_dtype recipe_pick(const struct recipe *r, bool pure, enum wgf__role role, int layer, int n_layers, int n_gqa,
                                  int64_t cols)
{
    enum wgf_dtype t = r->base;
    if (wgf_dtype_block_elems(t) == 1) return t; /* a float type: no mixture (llama.cpp's too) */
    if (!pure) {
        if (role == WGF__ROLE_OUTPUT) {
            if (cols % wgf_dtype_block_elems(t) != 0) t = WGF_DT_Q8_0;
            else if (t != WGF_DT_Q8_0) t = WGF_DT_Q6_K;
        } else if (role == WGF__ROLE_ATTN_V || role == WGF__ROLE_ATTN_QKV) {
            /* llama.cpp's tensor categories put fused qkv with attn_v (category_is_attn_v); the
             * older name-matching code gave it a rule of its own (docs/llm.md) */
            switch (r->rule) {
            case R_Q2_K: t = n_gqa >= 4 ? WGF_DT_Q4_K : WGF_DT_Q3_K; break;
            case R_Q3_K_M: t = layer < 2 ? WGF_DT_Q5_K : WGF_DT_Q4_K; break;
            case R_Q3_K_L: t = WGF_DT_Q5_K; break;
            case R_Q4_K_S: t = layer < 4 ? WGF_DT_Q5_K : t; break;
            case R_K_M: t = more_bits(layer, n_layers) ? WGF_DT_Q6_K : t; break;
            case R_NONE: break;
            }
        } else if (role == WGF__ROLE_FFN_DOWN) {
            switch (r->rule) {
            case R_Q2_K: t = WGF_DT_Q3_K; break;
            case R_Q3_K_M: t = layer < n_layers / 16 ? WGF_DT_Q5_K : WGF_DT_Q4_K; break;
            case R_Q3_K_L: t = WGF_DT_Q5_K; break;
            case R_Q4_K_S: t = layer < n_layers / 8 ? WGF_DT_Q5_K : t; break;
            case R_K_M: t = more_bits(layer, n_layers) ? WGF_DT_Q6_K : t; break;
            case R_NONE: break;
            }
        } else if (role == WGF__ROLE_ATTN_OUTPUT) {
            t = r->rule == R_Q2_K ? WGF_DT_Q3_K : r->rule == R_Q3_K_M ? WGF_DT_Q4_K : r->rule == R_Q3_K_L ? WGF_DT_Q5_K : t;
        }
    }
    return fallback(t, cols);
}

enum wgf_dtype wgf__llm_quantize_pick(const char *type, bool pure, enum wgf__role role, int layer, int n_layers, int n_gqa,
                                      int64_t cols)
{
    const struct recipe *r = find_recipe(type);
    return r ? recipe_pick(r, pure, role, layer, n_layers, n_gqa, cols) : WGF_DT_COUNT;
}

static enum wgf_dtype pick(void *user, enum wgf__role role, int layer, int64_t cols)
{
    struct pick_ctx *p = user;
    enum wgf_dtype   t = recipe_pick(p->r, p->pure, role, layer, p->n_layers, p->n_gqa, cols);
    if (p->stats && (unsigned)t < WGF_DT_COUNT) p->stats->n_tensors[t]++;
    return t;
}

/* Metadata: a GGUF source's keys are copied, except what the writer derives from the
 * config (general.*, the architecture's keys) and the alignment; an HF source gets its
 * tokenizer.json in GGUF form. */
static enum wgf_status meta(void *user, struct wgf_gguf_writer *w, struct wgf_err *err)
{
    struct pick_ctx             *p = user;
    const struct wgf_llm_config *c = &p->m->cfg;
    if (p->src) {
        const char *a  = wgf_arch_str(c->arch);
        size_t      al = strlen(a);
        for (int64_t i = 0; i < wgf_gguf_n_kv(p->src); i++) {
            size_t      kl;
            const char *k = wgf_gguf_kv_key(p->src, i, &kl);
            if ((kl > 8 && !memcmp(k, "general.", 8)) || (kl > al && !memcmp(k, a, al) && k[al] == '.')) continue;
            if (wgf_gguf_writer_copy_kv(w, p->src, i)) return wgf_fail(err, WGF_ERR_NOMEM, "out of memory for metadata");
        }
        return WGF_OK;
    }
    if (p->tok_json) return wgf_llm_gguf_add_tokenizer_json(w, p->tok_json, c->vocab_size, c->bos_id, c->n_eos ? c->eos_ids[0] : -1, err);
    if (c->bos_id >= 0) wgf_gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)c->bos_id);
    if (c->n_eos > 0) wgf_gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)c->eos_ids[0]);
    return WGF_OK;
}

enum wgf_status wgf_llm_quantize(const char *in, const char *out, const char *type, bool pure, bool no_tokenizer,
                                 struct wgf_llm_quantize_stats *stats, struct wgf_err *err)
{
    const struct recipe *r = find_recipe(type);
    if (!r) return wgf_fail(err, WGF_ERR_ARG, "quantize: unknown type '%s' (%s)", type, wgf_llm_quantize_types());
    if (stats) memset(stats, 0, sizeof *stats);
    struct wgf_llm_model *m;
    enum wgf_status       st = wgf_llm_model_load(in, &m, err);
    if (st) return st;
    struct pick_ctx p = {.r = r, .pure = pure, .n_layers = m->cfg.n_layers,
                       .n_gqa = m->cfg.n_kv_heads > 0 ? m->cfg.n_heads / m->cfg.n_kv_heads : 1, .m = m, .src = wgf_llm_model_gguf(m), .stats = stats};
    char            tj[4096 + 32];
    if (m->format == WGF_LLM_FORMAT_HF && !no_tokenizer) {
        snprintf(tj, sizeof tj, "%s/tokenizer.json", m->path);
        if (!wgf_file_present(tj)) {
            wgf_llm_model_free(m);
            return wgf_fail(err, WGF_ERR_IO, "%s: no tokenizer.json (llama.cpp needs the vocabulary in the GGUF; --no-tokenizer writes the weights alone)", in);
        }
        p.tok_json = tj;
    }
    if (stats) stats->in_weight_bytes = wgf_llm_model_weight_bytes(m);
    struct wgf__save_opts o = {.pick = pick, .user = &p, .file_type = r->ftype, .meta = meta};
    st                      = wgf__llm_save_gguf(m, out, &o, err);
    wgf_llm_model_free(m);
    struct stat sb;
    if (st == WGF_OK && stats && stat(out, &sb) == 0) stats->out_file_bytes = (uint64_t)sb.st_size;
    return st;
}
