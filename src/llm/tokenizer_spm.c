/* wgfuse — SentencePiece-style tokenization (Llama-2, Phi-3 vocabularies from GGUF).
 *
 * The fragment (spaces already U+2581) starts as one symbol per UTF-8 character (an
 * invalid byte is a symbol of its own). Repeatedly the adjacent pair whose concatenation
 * is a vocabulary piece with the highest score is merged (leftmost on ties), the
 * greedy procedure llama.cpp and sentencepiece's BPE mode use. Left over symbols that
 * are not pieces fall back to <0xXX> byte tokens, or <unk> without them.
 *
 * Candidates sit in a binary max-heap; a candidate is stale when its two symbols no
 * longer span exactly `size` bytes (symbols only grow, so equal span = same text).
 * O(n log n) for n characters; no recursion. */
#include <stdlib.h>
#include <string.h>

#include "llm/tokenizer_internal.h"

struct spm_sym {
    uint32_t off, len;  /* bytes of the fragment; len 0 = merged away */
    int32_t  prev, next;
};

struct spm_cand {
    float    score;
    int32_t  left;
    uint32_t size;
};

/* a before b in the heap: higher score, then leftmost */
static bool cand_before(const struct spm_cand *a, const struct spm_cand *b)
{
    if (a->score != b->score) return a->score > b->score;
    return a->left < b->left;
}

static void cand_push(struct spm_cand *h, size_t *n, struct spm_cand v)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!cand_before(&v, &h[p])) break;
        h[i] = h[p];
        i    = p;
    }
    h[i] = v;
}

static struct spm_cand cand_pop(struct spm_cand *h, size_t *n)
{
    struct spm_cand top = h[0], last = h[--(*n)];
    size_t          i = 0, m = *n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m) break;
        if (c + 1 < m && cand_before(&h[c + 1], &h[c])) c++;
        if (!cand_before(&h[c], &last)) break;
        h[i] = h[c];
        i    = c;
    }
    if (m) h[i] = last;
    return top;
}

static void try_bigram(const struct wgf_tokenizer *t, const unsigned char *text, const struct spm_sym *s,
                       int32_t left, struct spm_cand *h, size_t *nh)
{
    if (left < 0 || s[left].next < 0) return;
    uint32_t size = s[left].len + s[s[left].next].len;
    if (size > t->max_text_len) return;
    int32_t id = wgf__idmap_get(&t->by_text, t->ents, (const char *)text + s[left].off, size);
    if (id < 0) return;
    cand_push(h, nh, (struct spm_cand){t->ents[id].score, left, size});
}

static enum wgf_status emit_symbol(const struct wgf_tokenizer *t, const unsigned char *p, size_t n,
                                   struct wgf__ids *out, struct wgf_err *err)
{
    int32_t id = wgf__idmap_get(&t->by_text, t->ents, (const char *)p, n);
    if (id >= 0) return wgf__ids_push(out, id, err);
    for (size_t i = 0; i < n; i++) {
        int32_t b = t->byte_id[p[i]] >= 0 ? t->byte_id[p[i]] : t->unk;
        if (b < 0) return wgf_fail(err, WGF_ERR_INTERNAL, "tokenizer: no byte token and no <unk>");
        enum wgf_status st = wgf__ids_push(out, b, err);
        if (st) return st;
        if (t->byte_id[p[i]] < 0) break; /* one <unk> per character, as sentencepiece */
    }
    return WGF_OK;
}

enum wgf_status wgf__spm_fragment(const struct wgf_tokenizer *t, const unsigned char *text, size_t len,
                                  struct wgf__ids *out, struct wgf_err *err)
{
    if (len == 0) return WGF_OK;
    if (len > INT32_MAX) return wgf_fail(err, WGF_ERR_LIMIT, "tokenizer: text of %zu bytes too long", len);
    size_t sb, hb, hcap;
    if (!wgf_mul_size(len, sizeof(struct spm_sym), &sb) || !wgf_mul_size(len, 3, &hcap) ||
        !wgf_mul_size(hcap, sizeof(struct spm_cand), &hb))
        return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: text of %zu bytes too long", len);
    struct spm_sym  *s = malloc(sb);
    struct spm_cand *h = malloc(hb);
    if (!s || !h) {
        free(s);
        free(h);
        return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for %zu bytes of text", len);
    }
    int32_t n = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t   k = wgf__utf8_next(text + i, len - i, &cp);
        if (k == 0) k = 1;
        s[n] = (struct spm_sym){(uint32_t)i, (uint32_t)k, n - 1, -1};
        if (n > 0) s[n - 1].next = n;
        n++;
        i += k;
    }
    size_t nh = 0;
    for (int32_t i = 0; i + 1 < n; i++) try_bigram(t, text, s, i, h, &nh);
    while (nh) {
        struct spm_cand c = cand_pop(h, &nh);
        int32_t         r = s[c.left].next;
        if (s[c.left].len == 0 || r < 0 || s[c.left].len + s[r].len != c.size) continue;
        s[c.left].len += s[r].len;
        s[r].len       = 0;
        s[c.left].next = s[r].next;
        if (s[r].next >= 0) s[s[r].next].prev = c.left;
        try_bigram(t, text, s, s[c.left].prev, h, &nh);
        try_bigram(t, text, s, c.left, h, &nh);
    }
    enum wgf_status st = WGF_OK;
    for (int32_t i = 0; i >= 0 && !st; i = s[i].next) st = emit_symbol(t, text + s[i].off, s[i].len, out, err);
    free(s);
    free(h);
    return st;
}
