/* wgfuse — tokenizer vocabulary: the hash maps from strings and id pairs to ids, building a
 * tokenizer's tables (entries, decoded bytes, merges, added tokens, end-of-generation set),
 * freeing it, and the growable id list the encoders append to. Beneath tokenizer.c and the
 * model encoders (tokenizer_bpe.c, tokenizer_spm.c), which all look tokens up here. */
#include <stdlib.h>
#include <string.h>

#include "llm/tokenizer_internal.h"
#include "util/wraps.h"

/* ======================================================================================
 * hash maps
 * ====================================================================================== */

static size_t home_slot(const struct wgf__idmap *m, const char *s, size_t n)
{
    return (size_t)wgf_hash_bytes(&m->hk, s, n) & m->mask;
}

/* Capacity: a power of two ≥ 2n, so probes stay short. */
static bool map_capacity(size_t n, size_t *cap)
{
    size_t c = 16;
    while (c < n || c - n < n) {
        if (!wgf_mul_size(c, 2, &c)) return false;
    }
    *cap = c;
    return true;
}

static void entry_key(const struct wgf__tok_entry *e, bool by_dec, const char **k, size_t *n)
{
    *k = by_dec ? e->dec : e->str;
    *n = by_dec ? e->dec_len : e->str_len;
}

static enum wgf_status idmap_init(struct wgf__idmap *m, size_t n, bool by_dec, struct wgf_err *err)
{
    size_t cap, bytes;
    if (!map_capacity(n, &cap) || !wgf_mul_size(cap, sizeof(int32_t), &bytes))
        return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: map of %zu entries too large", n);
    m->slot = malloc(bytes);
    if (!m->slot) return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for a map of %zu entries", n);
    memset(m->slot, 0xFF, bytes); /* all -1 */
    m->mask   = cap - 1;
    m->by_dec = by_dec;
    m->hk     = wgf_hash_process_key();
    return WGF_OK;
}

/* Insert id; if an equal key is present the earlier (lower) id stays. */
static void idmap_put(struct wgf__idmap *m, const struct wgf__tok_entry *ents, int32_t id)
{
    const char *k;
    size_t      n;
    entry_key(&ents[id], m->by_dec, &k, &n);
    size_t i = home_slot(m, k, n);
    for (;; i = (i + 1) & m->mask) {
        int32_t s = m->slot[i];
        if (s < 0) {
            m->slot[i] = id;
            return;
        }
        const char *sk;
        size_t      sn;
        entry_key(&ents[s], m->by_dec, &sk, &sn);
        if (sn == n && memcmp(sk, k, n) == 0) return;
    }
}

int32_t wgf__idmap_get(const struct wgf__idmap *m, const struct wgf__tok_entry *ents, const char *key, size_t len)
{
    if (!m->slot) return -1;
    size_t i = home_slot(m, key, len);
    for (;; i = (i + 1) & m->mask) {
        int32_t s = m->slot[i];
        if (s < 0) return -1;
        const char *sk;
        size_t      sn;
        entry_key(&ents[s], m->by_dec, &sk, &sn);
        if (sn == len && memcmp(sk, key, len) == 0) return s;
    }
}

/* Displacement of the key in slot i from its home slot, plus one: the slots a lookup visits. */
WGF_WRAPS static size_t probes_at(size_t i, size_t home, size_t mask) { return ((i - home) & mask) + 1; }

void wgf__idmap_stats(const struct wgf__idmap *m, const struct wgf__tok_entry *ents, struct wgf__map_stats *st)
{
    memset(st, 0, sizeof *st);
    for (size_t i = 0; m->slot && i <= m->mask; i++) {
        if (m->slot[i] < 0) continue;
        const char *k;
        size_t      n;
        entry_key(&ents[m->slot[i]], m->by_dec, &k, &n);
        size_t p = probes_at(i, home_slot(m, k, n), m->mask);
        st->n++;
        st->probes += p;
        if (p > st->max_probes) st->max_probes = p;
    }
}

void wgf__pairmap_stats(const struct wgf__pairmap *m, struct wgf__map_stats *st)
{
    memset(st, 0, sizeof *st);
    for (size_t i = 0; m->key && i <= m->mask; i++) {
        if (m->key[i] == UINT64_MAX) continue;
        size_t p = probes_at(i, wgf__pair_home(m, m->key[i]), m->mask);
        st->n++;
        st->probes += p;
        if (p > st->max_probes) st->max_probes = p;
    }
}

enum wgf_status wgf__tok_reserve_merges(struct wgf_tokenizer *t, size_t n, const char *src, struct wgf_err *err)
{
    struct wgf__pairmap *m = &t->merges;
    size_t               cap, kb, ib;
    if (!map_capacity(n, &cap) || !wgf_mul_size(cap, sizeof(uint64_t), &kb) ||
        !wgf_mul_size(cap, sizeof(int32_t), &ib))
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: %zu merges: too many", src, n);
    m->key  = malloc(kb);
    m->rank = malloc(ib);
    m->id   = malloc(ib);
    if (!m->key || !m->rank || !m->id) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory for %zu merges", src, n);
    memset(m->key, 0xFF, kb);
    m->mask  = cap - 1;
    m->count = 0;
    m->hk    = wgf_hash_process_key();
    return WGF_OK;
}

enum wgf_status wgf__tok_add_merge(struct wgf_tokenizer *t, const char *a, size_t alen, const char *b, size_t blen,
                                   size_t rank, const char *src, const char *what, struct wgf_err *err)
{
    int32_t ia = wgf__idmap_get(&t->by_str, t->ents, a, alen);
    int32_t ib = wgf__idmap_get(&t->by_str, t->ents, b, blen);
    if (ia < 0 || ib < 0)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s[%zu]: '%.*s' is not in the vocabulary", src, what, rank,
                        (int)(ia < 0 ? (alen > 64 ? 64 : alen) : (blen > 64 ? 64 : blen)), ia < 0 ? a : b);
    char   buf[2 * WGF__TOK_MAX_LEN];
    if (alen + blen > sizeof buf) /* both ≤ WGF__TOK_MAX_LEN: they are vocabulary strings */
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s[%zu]: merge too long", src, what, rank);
    memcpy(buf, a, alen);
    memcpy(buf + alen, b, blen);
    int32_t im = wgf__idmap_get(&t->by_str, t->ents, buf, alen + blen);
    if (im < 0)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s[%zu]: '%.*s %.*s' merges to a token not in the vocabulary", src,
                        what, rank, (int)(alen > 64 ? 64 : alen), a, (int)(blen > 64 ? 64 : blen), b);
    if (rank > INT32_MAX) return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s: too many merges", src, what);

    struct wgf__pairmap *m = &t->merges;
    if (!m->key || m->count >= (m->mask + 1) / 2)
        return wgf_fail(err, WGF_ERR_INTERNAL, "%s: merge map not reserved", src);
    uint64_t key = ((uint64_t)(uint32_t)ia << 32) | (uint32_t)ib;
    size_t   i   = wgf__pair_home(m, key);
    for (;; i = (i + 1) & m->mask) {
        if (m->key[i] == key) return WGF_OK; /* a repeated pair keeps its first (best) rank */
        if (m->key[i] == UINT64_MAX) break;
    }
    m->key[i]  = key;
    m->rank[i] = (int32_t)rank;
    m->id[i]   = im;
    m->count++;
    return WGF_OK;
}

/* ======================================================================================
 * building
 * ====================================================================================== */

enum wgf_status wgf__tok_alloc(enum wgf_tok_model model, size_t n_vocab, const char *src, struct wgf_tokenizer **out,
                               struct wgf_err *err)
{
    *out = NULL;
    if (n_vocab == 0) return wgf_fail(err, WGF_ERR_FORMAT, "%s: empty vocabulary", src);
    if (n_vocab > WGF__TOK_MAX_VOCAB)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: vocabulary of %zu tokens exceeds the limit %u", src, n_vocab,
                        WGF__TOK_MAX_VOCAB);
    struct wgf_tokenizer *t = calloc(1, sizeof *t);
    if (!t) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", src);
    t->ents = calloc(n_vocab, sizeof *t->ents);
    if (!t->ents) {
        free(t);
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory for %zu tokens", src, n_vocab);
    }
    t->model   = model;
    t->n_vocab = n_vocab;
    t->bos = t->eos = t->unk = t->pad = t->eot = -1;
    for (int b = 0; b < 256; b++) t->byte_id[b] = -1;
    t->add_space_prefix = model == WGF_TOK_MODEL_SPM;
    *out                = t;
    return WGF_OK;
}

static char *dup_bytes(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

enum wgf_status wgf__tok_set(struct wgf_tokenizer *t, size_t id, const char *s, size_t len, const char *src,
                             struct wgf_err *err)
{
    if (id >= t->n_vocab) return wgf_fail(err, WGF_ERR_FORMAT, "%s: token id %zu out of range", src, id);
    if (len > WGF__TOK_MAX_LEN)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: token %zu is %zu bytes long (limit %u)", src, id, len,
                        WGF__TOK_MAX_LEN);
    struct wgf__tok_entry *e = &t->ents[id];
    free(e->str);
    e->str = dup_bytes(s, len);
    if (!e->str) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", src);
    e->str_len = (uint32_t)len;
    return WGF_OK;
}

static bool is_text_type(int32_t type)
{
    return type == WGF_TOKEN_NORMAL || type == WGF_TOKEN_UNDEFINED;
}

/* "<0xAB>" -> 0xAB, else -1. */
static int parse_byte_token(const char *s, size_t n)
{
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return -1;
    int v = 0;
    for (int i = 3; i < 5; i++) {
        char c = s[i];
        int  d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Bytes a token stands for. BPE text tokens: undo the byte-level alphabet (a token with a
 * character outside it is kept as written). SPM text tokens: U+2581 is a space. */
static enum wgf_status compute_dec(struct wgf_tokenizer *t, size_t id, const int16_t *bl_inv, const char *src,
                                   struct wgf_err *err)
{
    struct wgf__tok_entry *e = &t->ents[id];
    const unsigned char   *s = (const unsigned char *)e->str;
    size_t                 n = e->str_len;
    char                  *d = malloc(n + 1);
    if (!d) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", src);
    size_t o = 0;
    if (t->model == WGF_TOK_MODEL_BPE && is_text_type(e->type)) {
        bool ok = true;
        for (size_t i = 0; i < n && ok;) {
            uint32_t cp;
            size_t   k = wgf__utf8_next(s + i, n - i, &cp);
            if (k == 0 || cp >= 0x200 || bl_inv[cp] < 0) {
                ok = false;
                break;
            }
            d[o++] = (char)bl_inv[cp];
            i += k;
        }
        if (!ok) {
            memcpy(d, s, n);
            o = n;
        }
    } else if (t->model == WGF_TOK_MODEL_SPM && e->type == WGF_TOKEN_BYTE) {
        int b = parse_byte_token(e->str, n);
        if (b < 0)
            return free(d),
                   wgf_fail(err, WGF_ERR_FORMAT, "%s: token %zu '%.*s' has type BYTE but is not <0xHH>", src, id,
                            (int)(n > 32 ? 32 : n), e->str);
        d[o++] = (char)b;
    } else if (t->model == WGF_TOK_MODEL_SPM && (is_text_type(e->type) || e->type == WGF_TOKEN_USER_DEFINED)) {
        for (size_t i = 0; i < n;) {
            if (i + 3 <= n && s[i] == 0xE2 && s[i + 1] == 0x96 && s[i + 2] == 0x81) {
                d[o++] = ' ';
                i += 3;
            } else {
                d[o++] = (char)s[i++];
            }
        }
    } else {
        memcpy(d, s, n);
        o = n;
    }
    d[o]       = '\0';
    e->dec     = d;
    e->dec_len = (uint32_t)o;
    return WGF_OK;
}

enum wgf_status wgf__tok_index(struct wgf_tokenizer *t, const char *src, struct wgf_err *err)
{
    int16_t bl_inv[0x200];
    for (int i = 0; i < 0x200; i++) bl_inv[i] = -1;
    for (unsigned b = 0; b < 256; b++) bl_inv[wgf__bytelevel_cp(b)] = (int16_t)b;

    for (size_t i = 0; i < t->n_vocab; i++) {
        struct wgf__tok_entry *e = &t->ents[i];
        if (!e->str) {
            /* A hole in the id space (tokenizer.json may skip ids): an unused empty token. */
            e->str = dup_bytes("", 0);
            if (!e->str) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", src);
            e->type = WGF_TOKEN_UNUSED;
        }
        if (e->type < 0 || e->type > WGF_TOKEN_BYTE)
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: token %zu: type %d is not 0..6", src, i, (int)e->type);
        for (size_t k = 0; k < e->str_len;) {
            uint32_t cp;
            size_t   m = wgf__utf8_next((const unsigned char *)e->str + k, e->str_len - k, &cp);
            if (m == 0)
                return wgf_fail(err, WGF_ERR_FORMAT, "%s: token %zu: invalid UTF-8 at byte %zu", src, i, k);
            k += m;
        }
        enum wgf_status st = compute_dec(t, i, bl_inv, src, err);
        if (st) return st;
    }

    enum wgf_status st = idmap_init(&t->by_str, t->n_vocab, false, err);
    if (!st) st = idmap_init(&t->by_text, t->n_vocab, t->model == WGF_TOK_MODEL_BPE, err);
    if (st) return st;
    for (size_t i = 0; i < t->n_vocab; i++) {
        const struct wgf__tok_entry *e = &t->ents[i];
        if (e->type == WGF_TOKEN_UNUSED && e->str_len == 0) continue;
        idmap_put(&t->by_str, t->ents, (int32_t)i);
        bool mergeable = is_text_type(e->type) || (t->model == WGF_TOK_MODEL_SPM && e->type == WGF_TOKEN_USER_DEFINED);
        if (mergeable && e->str_len > 0) {
            idmap_put(&t->by_text, t->ents, (int32_t)i);
            if (e->str_len > t->max_text_len) t->max_text_len = e->str_len;
        }
    }

    for (unsigned b = 0; b < 256; b++) {
        char   s[8];
        size_t n;
        if (t->model == WGF_TOK_MODEL_BPE) {
            n = wgf__utf8_put(wgf__bytelevel_cp(b), s);
        } else {
            static const char hex[] = "0123456789ABCDEF";
            memcpy(s, "<0x", 3);
            s[3] = hex[b >> 4], s[4] = hex[b & 15], s[5] = '>';
            n    = 6;
        }
        t->byte_id[b] = wgf__idmap_get(&t->by_str, t->ents, s, n);
    }
    return WGF_OK;
}

static const char *const eog_names[] = {"<|im_end|>", "<|eot_id|>", "<|end|>", "<|endoftext|>", "<|end_of_text|>",
                                        "<|eom_id|>", "</s>"};

enum wgf_status wgf__tok_finish(struct wgf_tokenizer *t, const char *src, struct wgf_err *err)
{
    const char *names[] = {"bos", "eos", "unk", "pad", "eot"};
    int32_t    *ids[]   = {&t->bos, &t->eos, &t->unk, &t->pad, &t->eot};
    for (int i = 0; i < 5; i++)
        if (*ids[i] < -1 || (*ids[i] >= 0 && (size_t)*ids[i] >= t->n_vocab))
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s token id %d outside the vocabulary (size %zu)", src,
                            names[i], (int)*ids[i], t->n_vocab);

    if (t->model == WGF_TOK_MODEL_BPE) {
        for (unsigned b = 0; b < 256; b++)
            if (t->byte_id[b] < 0) {
                char   s[5];
                size_t n = wgf__utf8_put(wgf__bytelevel_cp(b), s);
                return wgf_fail(err, WGF_ERR_FORMAT,
                                "%s: byte-level BPE vocabulary lacks the token '%.*s' for byte 0x%02X", src, (int)n,
                                s, b);
            }
    }
    if (t->model == WGF_TOK_MODEL_SPM && t->unk < 0) {
        for (unsigned b = 0; b < 256; b++)
            if (t->byte_id[b] < 0)
                return wgf_fail(err, WGF_ERR_FORMAT,
                                "%s: SentencePiece vocabulary has neither <unk> nor the byte token <0x%02X>", src, b);
    }

    /* Added tokens: matched in the text before the model sees it. */
    enum wgf_status st = wgf__added_build(t, src, err);
    if (st) return st;

    /* End-of-generation set: EOS, EOT and the conventional end-of-turn tokens. */
    t->n_eog = 0;
    if (t->eos >= 0) t->eog[t->n_eog++] = t->eos;
    if (t->eot >= 0 && t->eot != t->eos) t->eog[t->n_eog++] = t->eot;
    for (size_t i = 0; i < sizeof eog_names / sizeof eog_names[0]; i++) {
        int32_t id = wgf__idmap_get(&t->by_str, t->ents, eog_names[i], strlen(eog_names[i]));
        if (id < 0 || t->ents[id].type == WGF_TOKEN_NORMAL) continue;
        bool dup = false;
        for (size_t j = 0; j < t->n_eog; j++) dup |= t->eog[j] == id;
        if (!dup && t->n_eog < sizeof t->eog / sizeof t->eog[0]) t->eog[t->n_eog++] = id;
    }
    return WGF_OK;
}

void wgf_tokenizer_free(struct wgf_tokenizer *t)
{
    if (!t) return;
    if (t->ents)
        for (size_t i = 0; i < t->n_vocab; i++) {
            free(t->ents[i].str);
            free(t->ents[i].dec);
        }
    free(t->ents);
    free(t->by_str.slot);
    free(t->by_text.slot);
    free(t->merges.key);
    free(t->merges.rank);
    free(t->merges.id);
    wgf__added_free(&t->added);
    wgf__pretok_free(t);
    free(t->chat_template);
    for (size_t i = 0; i < t->n_chat_meta; i++) free(t->chat_meta[i].key), free(t->chat_meta[i].val);
    free(t->chat_meta);
    free(t);
}

/* ======================================================================================
 * id lists
 * ====================================================================================== */

enum wgf_status wgf__ids_push(struct wgf__ids *o, int32_t id, struct wgf_err *err)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap : 64, bytes;
        if (o->cap && !wgf_mul_size(cap, 2, &cap)) return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: too many tokens");
        if (!wgf_mul_size(cap, sizeof(int32_t), &bytes))
            return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: too many tokens");
        int32_t *v = realloc(o->v, bytes);
        if (!v) return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for %zu tokens", cap);
        o->v   = v;
        o->cap = cap;
    }
    o->v[o->n++] = id;
    return WGF_OK;
}
