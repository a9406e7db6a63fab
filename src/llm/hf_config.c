/* wgfuse — Hugging Face config.json -> struct wgf_llm_config, and the config invariants
 * shared with the GGUF path.
 *
 * Accepts both spellings seen in the wild: "rope_theta" + "rope_scaling" (transformers
 * <= 4.x) and "rope_parameters" (transformers 5), "torch_dtype" and "dtype". Types are
 * strict: an integer field holding 3.5, "3", 1e309 or a negative count is an error naming
 * the field. Duplicate keys are rejected (JSON_REJECT_DUPLICATES); jansson bounds nesting
 * depth itself and does not recurse without limit. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llm/model_files.h"

#define MAX_DIM     (1 << 20)
#define MAX_LAYERS  4096
#define MAX_HEADS   4096
#define MAX_VOCAB   (1 << 24)
#define MAX_CONTEXT (1 << 24)

struct jctx {
    const char     *path;
    struct wgf_err *err;
};

/* Integer field `name` in [lo, hi]; absent (or null when allow_null) leaves *out as is. */
static enum wgf_status j_int(struct jctx *c, const json_t *o, const char *name, bool required, json_int_t lo,
                             json_int_t hi, int *out)
{
    const json_t *v = json_object_get(o, name);
    if (!v || json_is_null(v)) {
        if (required) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: missing field '%s'", c->path, name);
        return WGF_OK;
    }
    if (!json_is_integer(v)) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: field '%s' is not an integer", c->path, name);
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: field '%s' = %lld out of range [%lld, %lld]", c->path, name, (long long)x, (long long)lo, (long long)hi);
    *out = (int)x;
    return WGF_OK;
}

static enum wgf_status j_num(struct jctx *c, const json_t *o, const char *name, double lo, double hi, float *out)
{
    const json_t *v = json_object_get(o, name);
    if (!v || json_is_null(v)) return WGF_OK;
    if (!json_is_number(v)) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: field '%s' is not a number", c->path, name);
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi)) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: field '%s' = %g out of range [%g, %g]", c->path, name, x, lo, hi);
    *out = (float)x;
    return WGF_OK;
}

static enum wgf_status j_bool(struct jctx *c, const json_t *o, const char *name, bool *out)
{
    const json_t *v = json_object_get(o, name);
    if (!v || json_is_null(v)) return WGF_OK;
    if (!json_is_boolean(v)) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: field '%s' is not a boolean", c->path, name);
    *out = json_is_true(v);
    return WGF_OK;
}

static enum wgf_status j_factors(struct jctx *c, const json_t *o, const char *name, float *out, int *n)
{
    const json_t *v = json_object_get(o, name);
    if (!json_is_array(v)) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: longrope field '%s' is missing or not an array", c->path, name);
    size_t len = json_array_size(v);
    if (len == 0 || len > WGF_ROPE_MAX_HALF) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: longrope field '%s' has %zu entries (1..%d allowed)", c->path, name, len, WGF_ROPE_MAX_HALF);
    if (*n && (size_t)*n != len) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: longrope '%s' has %zu entries, the other factor list %d", c->path, name, len, *n);
    for (size_t i = 0; i < len; i++) {
        const json_t *e = json_array_get(v, i);
        double        x = json_is_number(e) ? json_number_value(e) : -1;
        if (!(x > 0 && x < 1e6)) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: longrope '%s'[%zu] is not a positive number", c->path, name, i);
        out[i] = (float)x;
    }
    *n = (int)len;
    return WGF_OK;
}

/* A rope_scaling / rope_parameters object. */
static enum wgf_status parse_rope(struct jctx *c, const json_t *r, const char *field, struct wgf_llm_config *cfg)
{
    if (!json_is_object(r)) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: field '%s' is not an object", c->path, field);
    enum wgf_status st;
    if ((st = j_num(c, r, "rope_theta", 1e-3, 1e12, &cfg->rope_theta))) return st;
    const json_t *t = json_object_get(r, "rope_type");
    if (!t) t = json_object_get(r, "type");
    if (t && !json_is_string(t)) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: '%s.rope_type' is not a string", c->path, field);
    const char *ty = t ? json_string_value(t) : "default";
    struct wgf_rope_scaling *s = &cfg->rope_scaling;
    if (strcmp(ty, "default") == 0) {
        s->type = WGF_ROPE_SCALING_NONE;
        return WGF_OK;
    }
    if ((st = j_int(c, r, "original_max_position_embeddings", false, 1, MAX_CONTEXT, &s->original_max_pos))) return st;
    if (strcmp(ty, "linear") == 0) {
        s->type = WGF_ROPE_SCALING_LINEAR;
        s->factor = 0;
        if ((st = j_num(c, r, "factor", 1e-3, 1e6, &s->factor))) return st;
        if (s->factor == 0) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: '%s' linear scaling without 'factor'", c->path, field);
        return WGF_OK;
    }
    if (strcmp(ty, "llama3") == 0) {
        s->type = WGF_ROPE_SCALING_LLAMA3;
        s->factor = 0, s->low_freq_factor = 1, s->high_freq_factor = 4;
        if ((st = j_num(c, r, "factor", 1e-3, 1e6, &s->factor)) || (st = j_num(c, r, "low_freq_factor", 1e-6, 1e6, &s->low_freq_factor)) ||
            (st = j_num(c, r, "high_freq_factor", 1e-6, 1e6, &s->high_freq_factor)))
            return st;
        if (s->factor == 0 || s->original_max_pos == 0)
            return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: '%s' llama3 scaling needs 'factor' and 'original_max_position_embeddings'", c->path, field);
        if (!(s->high_freq_factor > s->low_freq_factor))
            return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: '%s' llama3 high_freq_factor must exceed low_freq_factor", c->path, field);
        return WGF_OK;
    }
    if (strcmp(ty, "longrope") == 0 || strcmp(ty, "su") == 0) {
        s->type = WGF_ROPE_SCALING_LONGROPE;
        s->n_factors = 0;
        if ((st = j_factors(c, r, "short_factor", s->short_factor, &s->n_factors)) ||
            (st = j_factors(c, r, "long_factor", s->long_factor, &s->n_factors)))
            return st;
        s->attn_factor = 0;
        if ((st = j_num(c, r, "attention_factor", 1e-6, 1e6, &s->attn_factor))) return st;
        return WGF_OK;
    }
    return wgf_fail(c->err, WGF_ERR_UNSUPPORTED, "%s: rope scaling type '%.32s' in '%s' not supported (linear, llama3, longrope are)", c->path, ty, field);
}

static const char *canon_dtype(const char *s)
{
    if (!strcmp(s, "float32")) return "f32";
    if (!strcmp(s, "float16")) return "f16";
    if (!strcmp(s, "bfloat16")) return "bf16";
    return NULL;
}

static enum wgf_status parse_root(struct jctx *c, const json_t *root, struct wgf_llm_config *cfg)
{
    enum wgf_status st;
    if (!json_is_object(root)) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: not a JSON object", c->path);
    const json_t *mt = json_object_get(root, "model_type");
    if (!json_is_string(mt)) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: missing or non-string field 'model_type'", c->path);
    const char *m = json_string_value(mt);
    if (!strcmp(m, "llama")) cfg->arch = WGF_ARCH_LLAMA;
    else if (!strcmp(m, "qwen2")) cfg->arch = WGF_ARCH_QWEN2;
    else if (!strcmp(m, "phi3")) cfg->arch = WGF_ARCH_PHI3;
    else return wgf_fail(c->err, WGF_ERR_UNSUPPORTED, "%s: model_type '%.40s' not supported (llama, qwen2, phi3 are)", c->path, m);

    cfg->n_kv_heads = 0;
    cfg->head_dim   = 0;
    cfg->rope_theta = 10000.0f;
    cfg->norm_eps   = 1e-6f;
    cfg->bos_id     = -1;
    if ((st = j_int(c, root, "hidden_size", true, 1, MAX_DIM, &cfg->dim)) ||
        (st = j_int(c, root, "intermediate_size", true, 1, MAX_DIM, &cfg->hidden_dim)) ||
        (st = j_int(c, root, "num_hidden_layers", true, 1, MAX_LAYERS, &cfg->n_layers)) ||
        (st = j_int(c, root, "num_attention_heads", true, 1, MAX_HEADS, &cfg->n_heads)) ||
        (st = j_int(c, root, "num_key_value_heads", false, 1, MAX_HEADS, &cfg->n_kv_heads)) ||
        (st = j_int(c, root, "head_dim", false, 1, MAX_DIM, &cfg->head_dim)) ||
        (st = j_int(c, root, "vocab_size", true, 1, MAX_VOCAB, &cfg->vocab_size)) ||
        (st = j_int(c, root, "max_position_embeddings", true, 1, MAX_CONTEXT, &cfg->max_seq_len)) ||
        (st = j_num(c, root, "rms_norm_eps", 1e-12, 1.0, &cfg->norm_eps)) ||
        (st = j_num(c, root, "rope_theta", 1e-3, 1e12, &cfg->rope_theta)) ||
        (st = j_bool(c, root, "tie_word_embeddings", &cfg->tie_embeddings)) ||
        (st = j_int(c, root, "bos_token_id", false, 0, MAX_VOCAB, &cfg->bos_id)))
        return st;
    if (!cfg->n_kv_heads) cfg->n_kv_heads = cfg->n_heads;
    if (!cfg->head_dim) {
        if (cfg->dim % cfg->n_heads) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: hidden_size %d not divisible by num_attention_heads %d", c->path, cfg->dim, cfg->n_heads);
        cfg->head_dim = cfg->dim / cfg->n_heads;
    }
    cfg->rope_dim = cfg->head_dim;
    float prf     = 1.0f;
    if ((st = j_num(c, root, "partial_rotary_factor", 1e-3, 1.0, &prf))) return st;
    if (prf != 1.0f) {
        cfg->rope_dim = (int)((float)cfg->head_dim * prf);
        if (cfg->rope_dim < 2 || cfg->rope_dim % 2) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: partial_rotary_factor %g gives an odd rotary dim", c->path, prf);
    }
    const json_t *act = json_object_get(root, "hidden_act");
    if (act && (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
        return wgf_fail(c->err, WGF_ERR_UNSUPPORTED, "%s: hidden_act must be \"silu\"", c->path);
    cfg->attn_bias = cfg->arch == WGF_ARCH_QWEN2;
    bool ab        = false;
    if ((st = j_bool(c, root, "attention_bias", &ab))) return st;
    if (ab && cfg->arch != WGF_ARCH_QWEN2) return wgf_fail(c->err, WGF_ERR_UNSUPPORTED, "%s: attention_bias=true not supported for %s", c->path, m);
    /* a sliding attention window, as transformers reads it: Phi-3 sliding_window in every
     * layer (2047 in Phi-3-mini-4k); Qwen2 only with use_sliding_window, in the layers from
     * max_window_layers on (default 28); Llama none. A window at or past the context masks
     * nothing. */
    bool use_sw = cfg->arch == WGF_ARCH_PHI3;
    if (cfg->arch == WGF_ARCH_QWEN2 && (st = j_bool(c, root, "use_sliding_window", &use_sw))) return st;
    const json_t *sw = json_object_get(root, "sliding_window");
    cfg->sliding_window = cfg->swa_first_layer = cfg->sliding_window_unapplied = 0;
    if (use_sw && sw && !json_is_null(sw) && !json_is_integer(sw))
        return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: field 'sliding_window' is not an integer", c->path);
    if (use_sw && json_is_integer(sw) && json_integer_value(sw) < cfg->max_seq_len) {
        if (json_integer_value(sw) < 1)
            return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: field 'sliding_window' = %lld is not a window", c->path, (long long)json_integer_value(sw));
        cfg->sliding_window = (int)json_integer_value(sw);
        if (cfg->arch == WGF_ARCH_QWEN2) {
            const json_t *mw = json_object_get(root, "max_window_layers");
            if (mw && !json_is_null(mw) && (!json_is_integer(mw) || json_integer_value(mw) < 0))
                return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: field 'max_window_layers' is not a layer count", c->path);
            json_int_t mwl = json_is_integer(mw) ? json_integer_value(mw) : 28;
            cfg->swa_first_layer = mwl < cfg->n_layers ? (int)mwl : cfg->n_layers;
        }
        /* transformers >= 4.53 writes the layers' kinds out ("layer_types"), which then win
         * over max_window_layers: the sliding ones must be a suffix here */
        const json_t *lt = json_object_get(root, "layer_types");
        if (lt && !json_is_null(lt)) {
            if (!json_is_array(lt) || json_array_size(lt) != (size_t)cfg->n_layers)
                return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: field 'layer_types' is not a list of num_hidden_layers (%d) entries", c->path, cfg->n_layers);
            int first = -1;
            for (int i = 0; i < cfg->n_layers; i++) {
                const char *k = json_string_value(json_array_get(lt, (size_t)i));
                if (!k || (strcmp(k, "full_attention") && strcmp(k, "sliding_attention")))
                    return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: field 'layer_types'[%d] is not \"full_attention\" or \"sliding_attention\"", c->path, i);
                bool sl = !strcmp(k, "sliding_attention");
                if (sl && first < 0) first = i;
                if (!sl && first >= 0)
                    return wgf_fail(c->err, WGF_ERR_UNSUPPORTED, "%s: field 'layer_types': layer %d has full attention after sliding layer %d (only the last layers may slide)", c->path, i, first);
            }
            cfg->swa_first_layer = first < 0 ? cfg->n_layers : first;
        }
        if (cfg->swa_first_layer >= cfg->n_layers) cfg->sliding_window = cfg->swa_first_layer = 0; /* no layer slides */
    }
    bool mb = false;
    if ((st = j_bool(c, root, "mlp_bias", &mb))) return st;
    if (mb) return wgf_fail(c->err, WGF_ERR_UNSUPPORTED, "%s: mlp_bias=true not supported", c->path);

    /* EOS: an integer or a list of integers */
    const json_t *eos = json_object_get(root, "eos_token_id");
    cfg->n_eos        = 0;
    if (json_is_integer(eos)) {
        json_int_t x = json_integer_value(eos);
        if (x < 0 || x >= cfg->vocab_size) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: eos_token_id %lld outside the vocabulary (%d)", c->path, (long long)x, cfg->vocab_size);
        cfg->eos_ids[cfg->n_eos++] = (int)x;
    } else if (json_is_array(eos)) {
        size_t n = json_array_size(eos);
        for (size_t i = 0; i < n; i++) {
            const json_t *e = json_array_get(eos, i);
            json_int_t    x = json_is_integer(e) ? json_integer_value(e) : -1;
            if (x < 0 || x >= cfg->vocab_size) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: eos_token_id[%zu] is not a token id below %d", c->path, i, cfg->vocab_size);
            bool seen = false;
            for (int k = 0; k < cfg->n_eos; k++) seen = seen || cfg->eos_ids[k] == (int)x;
            if (seen) continue;
            if (cfg->n_eos == WGF_MAX_EOS) /* never drop a stop id silently */
                return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: eos_token_id lists more than %d distinct ids", c->path, WGF_MAX_EOS);
            cfg->eos_ids[cfg->n_eos++] = (int)x;
        }
    } else if (eos && !json_is_null(eos)) {
        return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: eos_token_id is neither an integer nor a list", c->path);
    }
    if (cfg->bos_id >= cfg->vocab_size) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: bos_token_id %d outside the vocabulary (%d)", c->path, cfg->bos_id, cfg->vocab_size);

    /* dtype: "dtype" (transformers 5) or "torch_dtype" */
    const json_t *dt = json_object_get(root, "dtype");
    if (!dt || json_is_null(dt)) dt = json_object_get(root, "torch_dtype");
    snprintf(cfg->source_dtype, sizeof cfg->source_dtype, "%s", "");
    if (dt && !json_is_null(dt)) {
        const char *cd = json_is_string(dt) ? canon_dtype(json_string_value(dt)) : NULL;
        if (!cd) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: dtype is not one of \"float32\", \"float16\", \"bfloat16\"", c->path);
        snprintf(cfg->source_dtype, sizeof cfg->source_dtype, "%s", cd);
    }

    /* RoPE: "rope_parameters" (new) wins over "rope_scaling" (old); both may carry theta. */
    memset(&cfg->rope_scaling, 0, sizeof cfg->rope_scaling);
    const json_t *rp = json_object_get(root, "rope_parameters");
    const json_t *rs = json_object_get(root, "rope_scaling");
    if (rp && !json_is_null(rp)) {
        if ((st = parse_rope(c, rp, "rope_parameters", cfg))) return st;
    } else if (rs && !json_is_null(rs)) {
        if ((st = parse_rope(c, rs, "rope_scaling", cfg))) return st;
    }
    struct wgf_rope_scaling *s = &cfg->rope_scaling;
    if (s->type == WGF_ROPE_SCALING_LONGROPE) {
        /* Phi-3 keeps original_max_position_embeddings at the top level */
        if ((st = j_int(c, root, "original_max_position_embeddings", false, 1, MAX_CONTEXT, &s->original_max_pos))) return st;
        if (!s->original_max_pos) return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: longrope needs original_max_position_embeddings", c->path);
        if (s->n_factors * 2 != cfg->rope_dim)
            return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: longrope factor lists have %d entries, expected rotary dim / 2 = %d", c->path, s->n_factors, cfg->rope_dim / 2);
        s->factor = (float)cfg->max_seq_len / (float)s->original_max_pos;
        /* the attention factor divides by log(original): 1 would make every logit NaN */
        if (s->factor > 1.0f && s->original_max_pos < 2)
            return wgf_fail(c->err, WGF_ERR_FORMAT, "%s: original_max_position_embeddings = %d: longrope needs at least 2", c->path, s->original_max_pos);
        if (s->attn_factor == 0)
            s->attn_factor = s->factor <= 1.0f ? 1.0f : sqrtf(1.0f + logf(s->factor) / logf((float)s->original_max_pos));
    }
    return WGF_OK;
}

/* jansson stores an array's or object's members in one table that grows by doubling (8
 * bytes per array slot, 16 per hash bucket), so "[0,0,0,...]" or {"a":0,"b":0,...} makes
 * a single allocation of several times the input. Count members per container with a
 * flat lexical scan (explicit depth, no recursion) and refuse more than max(64, len/16)
 * members in any one: every real config/header stays far below (safetensors entries are
 * >= 49 bytes each), and jansson's largest table then stays under 2x the input. */
bool wgf__json_bounded(const char *text, size_t len, size_t *bad_at)
{
    enum { MAX_DEPTH = 2048 }; /* jansson's own parse depth limit */
    static _Thread_local uint64_t commas[MAX_DEPTH + 1];
    uint64_t                      limit = len / 16 > 64 ? len / 16 : 64;
    int                           depth = 0;
    bool                          in_str = false;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (in_str) {
            if (ch == '\\') i++;
            else if (ch == '"') in_str = false;
            continue;
        }
        switch (ch) {
        case '"': in_str = true; break;
        case '{':
        case '[':
            if (depth == MAX_DEPTH) return true; /* jansson rejects it by depth itself */
            commas[++depth] = 0;
            break;
        case '}':
        case ']':
            if (depth > 0) depth--;
            break;
        case ',':
            if (depth > 0 && ++commas[depth] > limit) {
                *bad_at = i;
                return false;
            }
            break;
        default: break;
        }
    }
    return true;
}

enum wgf_status wgf__hf_config_parse(const char *path, const char *text, size_t len, struct wgf_llm_config *cfg, struct wgf_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    size_t bad;
    if (!wgf__json_bounded(text, len, &bad))
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: a JSON array/object near byte %zu has more members than the file size allows", path, bad);
    json_error_t je;
    json_t      *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) return wgf_fail(err, WGF_ERR_FORMAT, "%s: not valid JSON: %s (line %d col %d)", path, je.text, je.line, je.column);
    struct jctx     c  = {path, err};
    enum wgf_status st = parse_root(&c, root, cfg);
    json_decref(root);
    if (st == WGF_OK) st = wgf__llm_config_check(path, cfg, err);
    return st;
}

enum wgf_status wgf__llm_config_check(const char *path, const struct wgf_llm_config *c, struct wgf_err *err)
{
    if (c->dim < 1 || c->dim > MAX_DIM) return wgf_fail(err, WGF_ERR_FORMAT, "%s: hidden size %d out of range", path, c->dim);
    if (c->hidden_dim < 1 || c->hidden_dim > MAX_DIM) return wgf_fail(err, WGF_ERR_FORMAT, "%s: FFN size %d out of range", path, c->hidden_dim);
    if (c->n_layers < 1 || c->n_layers > MAX_LAYERS) return wgf_fail(err, WGF_ERR_FORMAT, "%s: layer count %d out of range", path, c->n_layers);
    if (c->n_heads < 1 || c->n_heads > MAX_HEADS) return wgf_fail(err, WGF_ERR_FORMAT, "%s: head count %d out of range", path, c->n_heads);
    if (c->n_kv_heads < 1 || c->n_kv_heads > c->n_heads || c->n_heads % c->n_kv_heads)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: kv head count %d does not divide head count %d", path, c->n_kv_heads, c->n_heads);
    if (c->head_dim < 2 || c->head_dim % 2 || c->head_dim > 2 * WGF_ROPE_MAX_HALF)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: head dim %d must be even and in [2, %d]", path, c->head_dim, 2 * WGF_ROPE_MAX_HALF);
    if ((int64_t)c->n_heads * c->head_dim > MAX_DIM) return wgf_fail(err, WGF_ERR_FORMAT, "%s: heads x head dim too large", path);
    if (c->rope_dim < 2 || c->rope_dim > c->head_dim || c->rope_dim % 2) return wgf_fail(err, WGF_ERR_FORMAT, "%s: rotary dim %d invalid", path, c->rope_dim);
    if (c->vocab_size < 1 || c->vocab_size > MAX_VOCAB) return wgf_fail(err, WGF_ERR_FORMAT, "%s: vocab size %d out of range", path, c->vocab_size);
    if (c->max_seq_len < 1 || c->max_seq_len > MAX_CONTEXT) return wgf_fail(err, WGF_ERR_FORMAT, "%s: context length %d out of range", path, c->max_seq_len);
    if (!(c->norm_eps > 0 && c->norm_eps < 1)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: norm epsilon %g out of range", path, (double)c->norm_eps);
    if (!(c->rope_theta > 0 && isfinite(c->rope_theta))) return wgf_fail(err, WGF_ERR_FORMAT, "%s: rope theta %g invalid", path, (double)c->rope_theta);
    if (c->bos_id < -1 || c->bos_id >= c->vocab_size) return wgf_fail(err, WGF_ERR_FORMAT, "%s: BOS id %d outside the vocabulary (%d)", path, c->bos_id, c->vocab_size);
    for (int i = 0; i < c->n_eos; i++)
        if (c->eos_ids[i] < 0 || c->eos_ids[i] >= c->vocab_size) return wgf_fail(err, WGF_ERR_FORMAT, "%s: EOS id %d outside the vocabulary (%d)", path, c->eos_ids[i], c->vocab_size);
    return WGF_OK;
}

void wgf_llm_rope_inv_freq(const struct wgf_llm_config *cfg, int seq_len, float *inv_freq, float *attn_scale)
{
    const struct wgf_rope_scaling *s    = &cfg->rope_scaling;
    int                            half = cfg->rope_dim / 2;
    *attn_scale                         = 1.0f;
    for (int i = 0; i < half; i++) {
        double f = pow((double)cfg->rope_theta, -2.0 * i / cfg->rope_dim);
        switch (s->type) {
        case WGF_ROPE_SCALING_NONE: break;
        case WGF_ROPE_SCALING_LINEAR: f /= s->factor; break;
        case WGF_ROPE_SCALING_LLAMA3: {
            if (s->n_factors == half) { /* GGUF rope_freqs: precomputed divisors */
                f /= s->short_factor[i];
                break;
            }
            /* transformers' _compute_llama3_parameters: wavelengths longer than
             * orig/low are divided by factor, shorter than orig/high kept, smooth between */
            double wavelen = 2.0 * M_PI / f, orig = s->original_max_pos;
            double lo_wl = orig / s->low_freq_factor, hi_wl = orig / s->high_freq_factor;
            if (wavelen > lo_wl) f /= s->factor;
            else if (wavelen >= hi_wl) {
                double sm = (orig / wavelen - s->low_freq_factor) / (s->high_freq_factor - s->low_freq_factor);
                f         = (1 - sm) * f / s->factor + sm * f;
            }
            break;
        }
        case WGF_ROPE_SCALING_LONGROPE:
            f /= (seq_len > s->original_max_pos ? s->long_factor : s->short_factor)[i];
            *attn_scale = s->attn_factor;
            break;
        }
        inv_freq[i] = (float)f;
    }
}
