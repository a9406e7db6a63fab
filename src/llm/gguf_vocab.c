/* wgfuse — GGUF tokenizer.ggml.* -> struct wgf_tok_spec (the tokenizer part's input).
 *
 * GGUF strings are length-prefixed and not NUL-terminated; the tokenizer wants C strings,
 * so they are copied into one owned block. Checked here (RELIABILITY.md 14-15): arrays of
 * the wrong element type, scores / token_type lengths different from tokens, NUL bytes
 * inside a token or merge, special-token ids negative or outside the vocabulary. The
 * block is bounded by the file: each string costs >= 8 bytes in the file and at most
 * len + 1 + 8 bytes here, scores and types 4 bytes each on both sides. */
#include <stdlib.h>
#include <string.h>

#include "llm/gguf.h"
#include "wgfuse/tokenizer.h"

#define MAX_TOKENS (1u << 24)

struct strs {
    int64_t     kv;
    uint64_t    n;
    const char *key;
};

/* Sum of string lengths + NULs of an array, rejecting NUL bytes inside. */
static enum wgf_status str_bytes(const struct wgf_gguf *g, const struct strs *a, uint64_t *total, struct wgf_err *err)
{
    for (uint64_t i = 0; i < a->n; i++) {
        const char *s;
        size_t      len;
        wgf_gguf_arr_str(g, a->kv, i, &s, &len);
        if (memchr(s, 0, len))
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s[%llu] contains a NUL byte", wgf_gguf_path(g), a->key, (unsigned long long)i);
        *total += len + 1; /* len <= file size: no overflow */
    }
    return WGF_OK;
}

static char *copy_strs(const struct wgf_gguf *g, const struct strs *a, const char **ptrs, char *dst)
{
    for (uint64_t i = 0; i < a->n; i++) {
        const char *s;
        size_t      len;
        wgf_gguf_arr_str(g, a->kv, i, &s, &len);
        memcpy(dst, s, len);
        dst[len] = 0;
        ptrs[i]  = dst;
        dst += len + 1;
    }
    return dst;
}

static enum wgf_status opt_arr(const struct wgf_gguf *g, const char *key, enum wgf_gguf_type t, uint64_t want, int64_t *kv,
                               struct wgf_err *err)
{
    *kv = -1;
    if (wgf_gguf_find(g, key) < 0) return WGF_OK;
    uint64_t        n;
    enum wgf_status st = wgf_gguf_get_arr(g, key, t, kv, &n, err);
    if (st) return st;
    if (want != UINT64_MAX && n != want)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s has %llu entries but tokenizer.ggml.tokens has %llu", wgf_gguf_path(g), key,
                        (unsigned long long)n, (unsigned long long)want);
    return WGF_OK;
}

enum wgf_status wgf_gguf_tok_spec(const struct wgf_gguf *g, struct wgf_tok_spec *spec, void **storage, struct wgf_err *err)
{
    *storage         = NULL;
    const char *path = wgf_gguf_path(g);
    wgf_tok_spec_init(spec);
    spec->source = path;
    const char     *ms;
    size_t          ml;
    enum wgf_status st;
    if ((st = wgf_gguf_get_str(g, "tokenizer.ggml.model", &ms, &ml, err))) return st;
    char model[32];
    if (ml >= sizeof model || memchr(ms, 0, ml))
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: tokenizer.ggml.model '%.*s' not supported", path, (int)(ml > 31 ? 31 : ml), ms);
    memcpy(model, ms, ml);
    model[ml]   = 0;
    spec->model = wgf_tok_model_from_gguf(model);
    if (!spec->model) return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: tokenizer.ggml.model '%s' not supported (gpt2, llama are)", path, model);

    struct strs tok = {.key = "tokenizer.ggml.tokens"}, mer = {.key = "tokenizer.ggml.merges", .kv = -1};
    if ((st = wgf_gguf_get_arr(g, tok.key, WGF_GGUF_STRING, &tok.kv, &tok.n, err))) return st;
    if (tok.n == 0 || tok.n > MAX_TOKENS)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: tokenizer.ggml.tokens has %llu entries (1..%u allowed)", path, (unsigned long long)tok.n, MAX_TOKENS);
    int64_t sc_kv, ty_kv;
    if ((st = opt_arr(g, "tokenizer.ggml.scores", WGF_GGUF_FLOAT32, tok.n, &sc_kv, err)) ||
        (st = opt_arr(g, "tokenizer.ggml.token_type", WGF_GGUF_INT32, tok.n, &ty_kv, err)) ||
        (st = opt_arr(g, mer.key, WGF_GGUF_STRING, UINT64_MAX, &mer.kv, err)))
        return st;
    if (mer.kv >= 0) mer.n = wgf_gguf_arr_n(g, mer.kv);

    /* special ids and flags */
    static const char *const id_keys[] = {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.unknown_token_id",
                                          "tokenizer.ggml.padding_token_id", "tokenizer.ggml.eot_token_id"};
    int32_t *ids[] = {&spec->bos_id, &spec->eos_id, &spec->unk_id, &spec->pad_id, &spec->eot_id};
    for (int i = 0; i < 5; i++) {
        int64_t v = -1;
        if ((st = wgf_gguf_get_i64_opt(g, id_keys[i], 0, (int64_t)tok.n - 1, &v, err))) return st;
        *ids[i] = (int32_t)v;
    }
    bool b;
    if (wgf_gguf_find(g, "tokenizer.ggml.add_bos_token") >= 0) {
        if ((st = wgf_gguf_get_bool_opt(g, "tokenizer.ggml.add_bos_token", &b, err))) return st;
        spec->add_bos = b;
    }
    if (wgf_gguf_find(g, "tokenizer.ggml.add_space_prefix") >= 0) {
        if ((st = wgf_gguf_get_bool_opt(g, "tokenizer.ggml.add_space_prefix", &b, err))) return st;
        spec->add_space_prefix = b;
    }
    const char *pre = NULL;
    size_t      pl  = 0;
    if (wgf_gguf_find(g, "tokenizer.ggml.pre") >= 0) {
        if ((st = wgf_gguf_get_str(g, "tokenizer.ggml.pre", &pre, &pl, err))) return st;
        if (memchr(pre, 0, pl)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: tokenizer.ggml.pre contains a NUL byte", path);
    }

    /* one block: token ptrs | merge ptrs | scores | types | chars */
    uint64_t chars = pl + 1;
    if ((st = str_bytes(g, &tok, &chars, err)) || (st = str_bytes(g, &mer, &chars, err))) return st;
    uint64_t n_ptr = tok.n + mer.n, bytes, b1, b2; /* all counts are bounded by the file size */
    if (!wgf_mul_u64(n_ptr, sizeof(char *), &b1) || !wgf_mul_u64(tok.n, 8, &b2) || !wgf_add_u64(b1, b2, &bytes) ||
        !wgf_add_u64(bytes, chars, &bytes) || bytes > SIZE_MAX)
        return wgf_fail(err, WGF_ERR_LIMIT, "%s: vocabulary too large", path);
    uint8_t *blk = malloc((size_t)bytes);
    if (!blk) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory for the vocabulary (%llu bytes)", path, (unsigned long long)bytes);
    const char **tp = (const char **)(void *)blk, **mp = tp + tok.n;
    float       *scores = (float *)(void *)(mp + mer.n);
    int32_t     *types  = (int32_t *)(scores + tok.n);
    char        *dst    = (char *)(types + tok.n);
    dst                 = copy_strs(g, &tok, tp, dst);
    dst                 = copy_strs(g, &mer, mp, dst);
    if (pre) {
        memcpy(dst, pre, pl);
        dst[pl]   = 0;
        spec->pre = dst;
    }
    for (uint64_t i = 0; sc_kv >= 0 && i < tok.n; i++) scores[i] = (float)wgf_gguf_arr_float(g, sc_kv, i);
    for (uint64_t i = 0; ty_kv >= 0 && i < tok.n; i++) {
        int64_t v = wgf_gguf_arr_int(g, ty_kv, i);
        if (v < INT32_MIN || v > INT32_MAX) {
            free(blk);
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: tokenizer.ggml.token_type[%llu] = %lld out of range", path, (unsigned long long)i, (long long)v);
        }
        types[i] = (int32_t)v;
    }
    spec->n_tokens = (size_t)tok.n;
    spec->tokens   = tp;
    spec->scores   = sc_kv >= 0 ? scores : NULL;
    spec->types    = ty_kv >= 0 ? types : NULL;
    spec->n_merges = (size_t)mer.n;
    spec->merges   = mer.n ? mp : NULL;
    *storage       = blk;
    return WGF_OK;
}
