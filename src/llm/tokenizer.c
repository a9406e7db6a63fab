/* wgfuse — tokenizer core: added-token splitting, encode/decode and the streaming
 * detokenizer. Beneath it: the vocabulary (maps, building, id lists) in tokenizer_vocab.c,
 * model-specific merging in tokenizer_bpe.c and tokenizer_spm.c, regex pre-tokenization in
 * tokenizer_pretok.c; file loading in tokenizer_json.c (HF) and tokenizer_spec.c (GGUF). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/tokenizer_internal.h"

/* ======================================================================================
 * encoding
 * ====================================================================================== */

/* The pre-tokenizer's pieces of text, each through `word` (byte-level or character BPE). */
static enum wgf_status encode_pieces(const struct wgf_tokenizer *t, const char *text, size_t len,
                                     enum wgf_status (*word)(const struct wgf_tokenizer *, const unsigned char *, size_t,
                                                             struct wgf__ids *, struct wgf_err *),
                                     struct wgf__ids *out, struct wgf_err *err)
{
    struct wgf__span *sp  = NULL;
    char             *buf = NULL;
    size_t            ns  = 0;
    enum wgf_status   st  = wgf__pretok_split(t, text, len, &buf, &sp, &ns, err);
    const char       *src = buf ? buf : text;
    for (size_t i = 0; !st && i < ns; i++) st = word(t, (const unsigned char *)src + sp[i].off, sp[i].len, out, err);
    free(sp);
    free(buf);
    return st;
}

static enum wgf_status encode_bpe_text(const struct wgf_tokenizer *t, const char *text, size_t len,
                                       struct wgf__ids *out, struct wgf_err *err)
{
    char *norm = NULL;
    if (t->nfc) {
        size_t          nlen;
        enum wgf_status st = wgf__nfc(text, len, &norm, &nlen, err);
        if (st) return st;
        if (norm) text = norm, len = nlen;
    }
    enum wgf_status st = encode_pieces(t, text, len, wgf__bpe_word, out, err);
    free(norm);
    return st;
}

/* SentencePiece sees spaces as U+2581 and, with add_space_prefix, one more in front. */
static enum wgf_status encode_spm_text(const struct wgf_tokenizer *t, const char *text, size_t len, bool prefix,
                                       struct wgf__ids *out, struct wgf_err *err)
{
    size_t cap;
    if (!wgf_mul_size(len, 3, &cap) || !wgf_add_size(cap, 4, &cap))
        return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: text of %zu bytes too large", len);
    unsigned char *buf = malloc(cap);
    if (!buf) return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for %zu bytes", cap);
    size_t o = 0;
    if (prefix) buf[o++] = 0xE2, buf[o++] = 0x96, buf[o++] = 0x81;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ')
            buf[o++] = 0xE2, buf[o++] = 0x96, buf[o++] = 0x81;
        else
            buf[o++] = (unsigned char)text[i];
    }
    /* With merges (from a tokenizer.json) ranks decide, as in HF, on each piece its Split
     * steps leave of the normalized text; GGUF gives scores. */
    enum wgf_status st = t->merges.key ? encode_pieces(t, (const char *)buf, o, wgf__bpe_chars, out, err)
                                       : wgf__spm_fragment(t, buf, o, out, err);
    free(buf);
    return st;
}

/* Whitespace an lstrip/rstrip added token absorbs (llama.cpp's set, ASCII only). */
static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

enum wgf_status wgf__tok_encode_counted(const struct wgf_tokenizer *t, const char *text, size_t len, unsigned flags,
                                        const unsigned char *special_ok, int32_t **ids, size_t *n, uint64_t *steps,
                                        struct wgf_err *err)
{
    if (!t || !ids || !n || (!text && len)) return wgf_fail(err, WGF_ERR_ARG, "tokenizer_encode: NULL argument");
    *ids = NULL;
    *n   = 0;
    struct wgf__ids        out = {0};
    struct wgf__added_scan sc;
    enum wgf_status        st = wgf__added_scan_init(&sc, t, text, len, flags & WGF_TOK_PARSE_SPECIAL, special_ok, err);
    if (!st && (flags & WGF_TOK_ADD_BOS) && t->add_bos && t->bos >= 0) st = wgf__ids_push(&out, t->bos, err);

    /* SPM: a fragment gets the space prefix when it starts the text or follows an added
     * token (llama.cpp's rule), so "<|user|>\nhi" encodes the "\nhi" as "▁\nhi". */
    bool   prev_added = true;
    size_t frag       = 0;
    for (size_t i = 0; !st && i <= len;) {
        int32_t id = wgf__added_at(&sc, i); /* the longest usable added token at i, or -1 */
        if (id < 0 && i < len) {
            i++;
            continue;
        }
        size_t end = i;
        if (id >= 0 && (t->ents[id].strip & WGF__STRIP_LEFT))
            while (end > frag && is_ws(text[end - 1])) end--;
        if (end > frag) {
            if (t->model == WGF_TOK_MODEL_BPE)
                st = encode_bpe_text(t, text + frag, end - frag, &out, err);
            else
                st = encode_spm_text(t, text + frag, end - frag,
                                     t->add_space_prefix && prev_added && (!t->prefix_first_only || frag == 0), &out,
                                     err);
            prev_added = false;
        }
        if (st || i == len) break;
        st = wgf__ids_push(&out, id, err);
        i += t->ents[id].str_len;
        if (t->ents[id].strip & WGF__STRIP_RIGHT)
            while (i < len && is_ws(text[i])) i++;
        frag       = i;
        prev_added = true;
    }
    if (steps) *steps += sc.steps;
    wgf__added_scan_free(&sc);
    if (!st && !out.v) {
        st    = wgf__ids_push(&out, 0, err); /* the result is non-NULL even when empty */
        out.n = 0;
    }
    if (st) {
        free(out.v);
        return st;
    }
    *ids = out.v;
    *n   = out.n;
    return WGF_OK;
}

enum wgf_status wgf__tok_encode_masked(const struct wgf_tokenizer *t, const char *text, size_t len, unsigned flags,
                                       const unsigned char *special_ok, int32_t **ids, size_t *n, struct wgf_err *err)
{
    return wgf__tok_encode_counted(t, text, len, flags, special_ok, ids, n, NULL, err);
}

enum wgf_status wgf_tokenizer_encode_ex(const struct wgf_tokenizer *t, const char *text, size_t len, unsigned flags,
                                        int32_t **ids, size_t *n, struct wgf_err *err)
{
    return wgf__tok_encode_masked(t, text, len, flags, NULL, ids, n, err);
}

enum wgf_status wgf_tokenizer_encode(const struct wgf_tokenizer *t, const char *text, size_t len, bool parse_special,
                                     int32_t **ids, size_t *n, struct wgf_err *err)
{
    return wgf_tokenizer_encode_ex(t, text, len, parse_special ? WGF_TOK_PARSE_SPECIAL : 0, ids, n, err);
}

/* ======================================================================================
 * decoding
 * ====================================================================================== */

static bool is_control_like(int32_t type)
{
    return type == WGF_TOKEN_CONTROL || type == WGF_TOKEN_UNKNOWN || type == WGF_TOKEN_UNUSED;
}

/* The bytes token id contributes; *strip says whether a leading space is still to drop
 * (SPM add_space_prefix) and is cleared by the first text token. */
static void token_bytes(const struct wgf_tokenizer *t, int32_t id, bool special, bool *strip, const char **p,
                        size_t *n)
{
    const struct wgf__tok_entry *e = &t->ents[id];
    if (is_control_like(e->type)) {
        *p = special ? e->str : "";
        *n = special ? e->str_len : 0;
        return;
    }
    *p = e->dec;
    *n = e->dec_len;
    if (*strip) {
        *strip = false;
        if (*n && (*p)[0] == ' ') (*p)++, (*n)--;
    }
}

enum wgf_status wgf_tokenizer_decode(const struct wgf_tokenizer *t, const int32_t *ids, size_t n, bool special,
                                     char **out, size_t *out_len, struct wgf_err *err)
{
    if (!t || !out || (!ids && n)) return wgf_fail(err, WGF_ERR_ARG, "tokenizer_decode: NULL argument");
    *out        = NULL;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || (size_t)ids[i] >= t->n_vocab)
            return wgf_fail(err, WGF_ERR_ARG, "tokenizer_decode: token %zu: id %d outside the vocabulary (size %zu)",
                            i, (int)ids[i], t->n_vocab);
        size_t l = t->ents[ids[i]].str_len > t->ents[ids[i]].dec_len ? t->ents[ids[i]].str_len : t->ents[ids[i]].dec_len;
        if (!wgf_add_size(total, l, &total)) return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer_decode: output too large");
    }
    if (!wgf_add_size(total, 1, &total)) return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer_decode: output too large");
    char *buf = malloc(total);
    if (!buf) return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer_decode: out of memory for %zu bytes", total);
    bool   strip = t->model == WGF_TOK_MODEL_SPM && t->add_space_prefix;
    size_t o     = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p;
        size_t      l;
        token_bytes(t, ids[i], special, &strip, &p, &l);
        memcpy(buf + o, p, l);
        o += l;
    }
    buf[o] = '\0';
    *out   = buf;
    if (out_len) *out_len = o;
    return WGF_OK;
}

/* ---- streaming ----------------------------------------------------------------------- */

struct wgf_detok {
    const struct wgf_tokenizer *tok;
    bool                        special;
    bool                        strip;   /* leading space still to drop */
    unsigned char               held[4]; /* bytes of an unfinished character */
    size_t                      n_held;
    char                       *buf;     /* output of the last call */
    size_t                      cap;
};

enum wgf_status wgf_detok_new(const struct wgf_tokenizer *tok, unsigned flags, struct wgf_detok **out,
                              struct wgf_err *err)
{
    if (!tok || !out) return wgf_fail(err, WGF_ERR_ARG, "detok_new: NULL argument");
    struct wgf_detok *d = calloc(1, sizeof *d);
    if (!d) return wgf_fail(err, WGF_ERR_NOMEM, "detok_new: out of memory");
    d->tok     = tok;
    d->special = flags & WGF_DETOK_SPECIAL;
    d->strip   = (flags & WGF_DETOK_STRIP_SPACE) && tok->model == WGF_TOK_MODEL_SPM && tok->add_space_prefix;
    *out       = d;
    return WGF_OK;
}

void wgf_detok_free(struct wgf_detok *d)
{
    if (!d) return;
    free(d->buf);
    free(d);
}

static enum wgf_status detok_reserve(struct wgf_detok *d, size_t n, struct wgf_err *err)
{
    if (n <= d->cap) return WGF_OK;
    char *b = realloc(d->buf, n);
    if (!b) return wgf_fail(err, WGF_ERR_NOMEM, "detok: out of memory");
    d->buf = b;
    d->cap = n;
    return WGF_OK;
}

/* Emit held + p[0..n) as valid UTF-8 into d->buf, holding a trailing unfinished
 * character unless `final`. Invalid bytes become U+FFFD, one per byte. */
static enum wgf_status detok_run(struct wgf_detok *d, const char *p, size_t n, bool final, const char **text,
                                 size_t *text_len, struct wgf_err *err)
{
    size_t total = d->n_held + n, cap; /* n ≤ WGF__TOK_MAX_LEN: no overflow */
    cap = total * 3 + 4;
    enum wgf_status st = detok_reserve(d, cap + total, err);
    if (st) return st;
    unsigned char *in = (unsigned char *)d->buf + cap; /* input staged after the output area */
    memcpy(in, d->held, d->n_held);
    memcpy(in + d->n_held, p, n);
    d->n_held = 0;
    size_t o  = 0;
    for (size_t i = 0; i < total;) {
        uint32_t cp;
        size_t   k = wgf__utf8_next(in + i, total - i, &cp);
        if (k) {
            memcpy(d->buf + o, in + i, k);
            o += k, i += k;
        } else if (!final && wgf__utf8_is_prefix(in + i, total - i)) {
            memcpy(d->held, in + i, total - i);
            d->n_held = total - i;
            break;
        } else {
            memcpy(d->buf + o, "\xEF\xBF\xBD", 3);
            o += 3, i += 1;
        }
    }
    *text     = d->buf;
    *text_len = o;
    return WGF_OK;
}

enum wgf_status wgf_detok_push(struct wgf_detok *d, int32_t id, const char **text, size_t *text_len,
                               struct wgf_err *err)
{
    if (!d || !text || !text_len) return wgf_fail(err, WGF_ERR_ARG, "detok_push: NULL argument");
    *text     = "";
    *text_len = 0;
    if (id < 0 || (size_t)id >= d->tok->n_vocab)
        return wgf_fail(err, WGF_ERR_ARG, "detok_push: id %d outside the vocabulary (size %zu)", (int)id,
                        d->tok->n_vocab);
    const char *p;
    size_t      n;
    token_bytes(d->tok, id, d->special, &d->strip, &p, &n);
    return detok_run(d, p, n, false, text, text_len, err);
}

enum wgf_status wgf_detok_flush(struct wgf_detok *d, const char **text, size_t *text_len, struct wgf_err *err)
{
    if (!d || !text || !text_len) return wgf_fail(err, WGF_ERR_ARG, "detok_flush: NULL argument");
    return detok_run(d, "", 0, true, text, text_len, err);
}

/* ======================================================================================
 * vocabulary queries
 * ====================================================================================== */

size_t             wgf_tokenizer_vocab_size(const struct wgf_tokenizer *t) { return t ? t->n_vocab : 0; }
enum wgf_tok_model wgf_tokenizer_model(const struct wgf_tokenizer *t) { return t ? t->model : (enum wgf_tok_model)0; }
int32_t            wgf_tokenizer_bos(const struct wgf_tokenizer *t) { return t ? t->bos : -1; }
int32_t            wgf_tokenizer_eos(const struct wgf_tokenizer *t) { return t ? t->eos : -1; }
bool               wgf_tokenizer_wants_bos(const struct wgf_tokenizer *t) { return t && t->add_bos && t->bos >= 0; }

bool wgf_tokenizer_is_eog(const struct wgf_tokenizer *t, int32_t id)
{
    if (!t) return false;
    for (size_t i = 0; i < t->n_eog; i++)
        if (t->eog[i] == id) return true;
    return false;
}

const char *wgf_tokenizer_token_str(const struct wgf_tokenizer *t, int32_t id)
{
    if (!t || id < 0 || (size_t)id >= t->n_vocab) return NULL;
    return t->ents[id].str;
}

enum wgf_tok_type wgf_tokenizer_token_type(const struct wgf_tokenizer *t, int32_t id)
{
    if (!t || id < 0 || (size_t)id >= t->n_vocab) return WGF_TOKEN_UNDEFINED;
    return (enum wgf_tok_type)t->ents[id].type;
}

int32_t wgf_tokenizer_find(const struct wgf_tokenizer *t, const char *str)
{
    if (!t || !str) return -1;
    return wgf__idmap_get(&t->by_str, t->ents, str, strlen(str));
}

const char *wgf_tokenizer_chat_template(const struct wgf_tokenizer *t) { return t ? t->chat_template : NULL; }

enum wgf_status wgf_tokenizer_set_chat_template(struct wgf_tokenizer *t, const char *text, size_t len,
                                                struct wgf_err *err)
{
    if (!t || (!text && len)) return wgf_fail(err, WGF_ERR_ARG, "tokenizer_set_chat_template: NULL argument");
    if (len && memchr(text, 0, len)) return wgf_fail(err, WGF_ERR_FORMAT, "chat template contains a NUL byte");
    char *c = malloc(len + 1);
    if (!c) return wgf_fail(err, WGF_ERR_NOMEM, "chat template: out of memory for %zu bytes", len);
    if (len) memcpy(c, text, len);
    c[len] = 0;
    free(t->chat_template);
    t->chat_template = c;
    return WGF_OK;
}

/* ---- the chat template's other inputs ------------------------------------------------------ */
static const char *meta_get(const struct wgf_tokenizer *t, const char *prefix, const char *name)
{
    size_t pl = strlen(prefix);
    for (size_t i = 0; t && name && i < t->n_chat_meta; i++)
        if (!strncmp(t->chat_meta[i].key, prefix, pl) && !strcmp(t->chat_meta[i].key + pl, name)) return t->chat_meta[i].val;
    return NULL;
}

static enum wgf_status meta_set(struct wgf_tokenizer *t, const char *prefix, const char *name, const char *val, size_t len,
                                struct wgf_err *err)
{
    if (!t || !name || (!val && len)) return wgf_fail(err, WGF_ERR_ARG, "tokenizer: NULL chat metadata");
    if (len && memchr(val, 0, len)) return wgf_fail(err, WGF_ERR_FORMAT, "%s%s contains a NUL byte", prefix, name);
    size_t kl = strlen(prefix) + strlen(name) + 1;
    char  *k = malloc(kl), *v = malloc(len + 1);
    struct wgf__tok_meta *m = realloc(t->chat_meta, (t->n_chat_meta + 1) * sizeof *m);
    if (m) t->chat_meta = m;
    if (!k || !v || !m) {
        free(k), free(v);
        return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for chat metadata");
    }
    snprintf(k, kl, "%s%s", prefix, name);
    if (len) memcpy(v, val, len);
    v[len] = '\0';
    for (size_t i = 0; i < t->n_chat_meta; i++)
        if (!strcmp(t->chat_meta[i].key, k)) { /* replaced */
            free(t->chat_meta[i].val), free(k);
            t->chat_meta[i].val = v;
            return WGF_OK;
        }
    t->chat_meta[t->n_chat_meta].key = k, t->chat_meta[t->n_chat_meta].val = v, t->n_chat_meta++;
    return WGF_OK;
}

const char *wgf_tokenizer_chat_template_named(const struct wgf_tokenizer *t, const char *name)
{
    if (name && !strcmp(name, "default") && t && t->chat_template && t->chat_template[0]) return t->chat_template;
    return meta_get(t, "template:", name);
}

size_t wgf_tokenizer_chat_template_count(const struct wgf_tokenizer *t)
{
    size_t n = 0;
    for (size_t i = 0; t && i < t->n_chat_meta; i++) n += !strncmp(t->chat_meta[i].key, "template:", 9);
    return n;
}

const char *wgf_tokenizer_chat_template_name(const struct wgf_tokenizer *t, size_t i)
{
    for (size_t k = 0; t && k < t->n_chat_meta; k++)
        if (!strncmp(t->chat_meta[k].key, "template:", 9)) {
            if (i == 0) return t->chat_meta[k].key + 9;
            i--;
        }
    return NULL;
}

enum wgf_status wgf_tokenizer_add_chat_template(struct wgf_tokenizer *t, const char *name, const char *text, size_t len,
                                                struct wgf_err *err)
{
    return meta_set(t, "template:", name, text, len, err);
}

const char *wgf_tokenizer_special_text(const struct wgf_tokenizer *t, const char *key)
{
    if (!t || !key) return NULL;
    const char *v = meta_get(t, "token:", key);
    if (v || t->special_from_config) return v;
    /* no tokenizer_config.json (a GGUF file, a bare tokenizer.json): the token's own text */
    int32_t id = !strcmp(key, "bos_token") ? t->bos : !strcmp(key, "eos_token") ? t->eos
               : !strcmp(key, "unk_token") ? t->unk : !strcmp(key, "pad_token") ? t->pad : -1;
    if (id < 0 || (size_t)id >= t->n_vocab || strlen(t->ents[id].dec) != t->ents[id].dec_len) return NULL;
    return t->ents[id].dec;
}

enum wgf_status wgf_tokenizer_set_special_text(struct wgf_tokenizer *t, const char *key, const char *text,
                                               struct wgf_err *err)
{
    if (t) t->special_from_config = true;
    return text ? meta_set(t, "token:", key, text, strlen(text), err) : WGF_OK;
}
