/* wgfuse — byte-level BPE merging of one pre-tokenized piece.
 *
 * The piece starts as one symbol per byte (the byte's token). Repeatedly the adjacent
 * pair with the lowest merge rank (leftmost on ties, as HF tokenizers does) is replaced
 * by its merged token. Symbols form a linked list and candidate pairs sit in a binary
 * min-heap keyed (rank << 32 | left index), so a piece of n bytes costs O(n log n):
 * a 1 MiB run of one letter (one piece for every pre-tokenizer) stays well under 2 s.
 *
 * Stale heap entries are not removed; on pop, an entry is valid iff the pair now at its
 * position has the same rank (a rank names exactly one pair, and merging only ever
 * lengthens the left symbol, so the pair at a position never returns to an old value). */
#include <stdlib.h>
#include <string.h>

#include "llm/tokenizer_internal.h"
#include "util/wraps.h"

struct bpe_sym {
    int32_t id;
    int32_t prev, next; /* indices, -1 at the ends */
};

static int32_t pair_rank(const struct wgf__pairmap *m, int32_t a, int32_t b, int32_t *merged)
{
    if (!m->key) return -1;
    uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
    for (size_t i = wgf__pair_home(m, key);; i = (i + 1) & m->mask) {
        if (m->key[i] == key) {
            *merged = m->id[i];
            return m->rank[i];
        }
        if (m->key[i] == UINT64_MAX) return -1;
    }
}

static void heap_push(uint64_t *h, size_t *n, uint64_t v)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p] <= v) break;
        h[i] = h[p];
        i    = p;
    }
    h[i] = v;
}

static uint64_t heap_pop(uint64_t *h, size_t *n)
{
    uint64_t top  = h[0];
    uint64_t last = h[--(*n)];
    size_t   i = 0, m = *n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m) break;
        if (c + 1 < m && h[c + 1] < h[c]) c++;
        if (last <= h[c]) break;
        h[i] = h[c];
        i    = c;
    }
    if (m) h[i] = last;
    return top;
}

static void try_pair(const struct wgf_tokenizer *t, const struct bpe_sym *s, int32_t left, uint64_t *heap,
                     size_t *nh)
{
    if (left < 0 || s[left].next < 0) return;
    int32_t merged;
    int32_t r = pair_rank(&t->merges, s[left].id, s[s[left].next].id, &merged);
    if (r >= 0) heap_push(heap, nh, ((uint64_t)(uint32_t)r << 32) | (uint32_t)left);
}

enum wgf_status wgf__bpe_word(const struct wgf_tokenizer *t, const unsigned char *w, size_t len,
                              struct wgf__ids *out, struct wgf_err *err)
{
    if (len == 0) return WGF_OK;
    if (t->ignore_merges) {
        /* Llama-3: a piece that is itself a token is emitted whole. */
        int32_t id = wgf__idmap_get(&t->by_text, t->ents, (const char *)w, len);
        if (id >= 0) return wgf__ids_push(out, id, err);
    }
    if (len == 1) return wgf__ids_push(out, t->byte_id[w[0]], err);
    if (len > INT32_MAX) return wgf_fail(err, WGF_ERR_LIMIT, "tokenizer: piece of %zu bytes too long", len);

    size_t sb, hb, hcap;
    if (!wgf_mul_size(len, sizeof(struct bpe_sym), &sb) || !wgf_mul_size(len, 3, &hcap) ||
        !wgf_mul_size(hcap, sizeof(uint64_t), &hb))
        return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: piece of %zu bytes too long", len);
    struct bpe_sym *s    = malloc(sb);
    uint64_t       *heap = malloc(hb);
    if (!s || !heap) {
        free(s);
        free(heap);
        return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for a piece of %zu bytes", len);
    }
    for (size_t i = 0; i < len; i++) {
        s[i].id   = t->byte_id[w[i]];
        s[i].prev = (int32_t)i - 1;
        s[i].next = i + 1 < len ? (int32_t)i + 1 : -1;
    }
    /* Heap bound: n-1 initial pairs, then at most 2 per merge and ≤ n-1 merges. */
    size_t nh = 0;
    for (size_t i = 0; i + 1 < len; i++) try_pair(t, s, (int32_t)i, heap, &nh);

    while (nh) {
        uint64_t top  = heap_pop(heap, &nh);
        int32_t  rank = (int32_t)(top >> 32);
        int32_t  left = (int32_t)(uint32_t)top;
        int32_t  right = s[left].next;
        if (s[left].id < 0 || right < 0) continue;
        int32_t merged = -1;
        if (pair_rank(&t->merges, s[left].id, s[right].id, &merged) != rank) continue;
        s[left].id  = merged;
        s[left].next = s[right].next;
        if (s[right].next >= 0) s[s[right].next].prev = left;
        s[right].id = -1; /* dead */
        try_pair(t, s, s[left].prev, heap, &nh);
        try_pair(t, s, left, heap, &nh);
    }

    enum wgf_status st = WGF_OK;
    for (int32_t i = 0; i >= 0 && !st; i = s[i].next) st = wgf__ids_push(out, s[i].id, err);
    free(s);
    free(heap);
    return st;
}

/* ---- character-level BPE with byte fallback ------------------------------------------
 * HF's BPE model with byte_fallback (Llama-2 / Phi-3 tokenizer.json): the fragment starts
 * as one symbol per UTF-8 character (its token, or none when the character is not in the
 * vocabulary), merges go by rank exactly as above, and a symbol left without a token
 * becomes its <0xXX> byte tokens (or <unk>). A character with no token never merges. */

struct char_sym {
    int32_t  id;        /* -1: no token (byte fallback) */
    int32_t  prev, next;
    uint32_t off, len;  /* bytes of the fragment; len 0 = merged away */
};

static void try_char_pair(const struct wgf_tokenizer *t, const struct char_sym *s, int32_t left, uint64_t *heap,
                          size_t *nh)
{
    if (left < 0 || s[left].next < 0 || s[left].id < 0 || s[s[left].next].id < 0) return;
    int32_t merged;
    int32_t r = pair_rank(&t->merges, s[left].id, s[s[left].next].id, &merged);
    if (r >= 0) heap_push(heap, nh, ((uint64_t)(uint32_t)r << 32) | (uint32_t)left);
}

enum wgf_status wgf__bpe_chars(const struct wgf_tokenizer *t, const unsigned char *w, size_t len,
                               struct wgf__ids *out, struct wgf_err *err)
{
    if (len == 0) return WGF_OK;
    if (len > INT32_MAX) return wgf_fail(err, WGF_ERR_LIMIT, "tokenizer: text of %zu bytes too long", len);
    size_t sb, hb, hcap;
    if (!wgf_mul_size(len, sizeof(struct char_sym), &sb) || !wgf_mul_size(len, 3, &hcap) ||
        !wgf_mul_size(hcap, sizeof(uint64_t), &hb))
        return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: text of %zu bytes too long", len);
    struct char_sym *s    = malloc(sb);
    uint64_t        *heap = malloc(hb);
    if (!s || !heap) {
        free(s);
        free(heap);
        return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for %zu bytes of text", len);
    }
    int32_t n = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t   k = wgf__utf8_next(w + i, len - i, &cp);
        if (k == 0) k = 1;
        int32_t id = k == 1 && w[i] >= 0x80 ? -1 : wgf__idmap_get(&t->by_text, t->ents, (const char *)w + i, k);
        s[n]       = (struct char_sym){id, n - 1, -1, (uint32_t)i, (uint32_t)k};
        if (n > 0) s[n - 1].next = n;
        n++;
        i += k;
    }
    size_t nh = 0;
    for (int32_t i = 0; i + 1 < n; i++) try_char_pair(t, s, i, heap, &nh);
    while (nh) {
        uint64_t top   = heap_pop(heap, &nh);
        int32_t  rank  = (int32_t)(top >> 32);
        int32_t  left  = (int32_t)(uint32_t)top;
        int32_t  right = s[left].next;
        if (s[left].len == 0 || s[left].id < 0 || right < 0 || s[right].id < 0) continue;
        int32_t merged = -1;
        if (pair_rank(&t->merges, s[left].id, s[right].id, &merged) != rank) continue;
        s[left].id = merged;
        s[left].len += s[right].len;
        s[right].len = 0;
        s[left].next = s[right].next;
        if (s[right].next >= 0) s[s[right].next].prev = left;
        try_char_pair(t, s, s[left].prev, heap, &nh);
        try_char_pair(t, s, left, heap, &nh);
    }
    enum wgf_status st = WGF_OK;
    for (int32_t i = 0; i >= 0 && !st; i = s[i].next) {
        if (s[i].id >= 0) {
            st = wgf__ids_push(out, s[i].id, err);
            continue;
        }
        for (uint32_t k = 0; k < s[i].len && !st; k++) {
            int32_t b = t->byte_id[w[s[i].off + k]];
            if (b < 0 && t->unk < 0) {
                st = wgf_fail(err, WGF_ERR_INTERNAL, "tokenizer: no byte token and no <unk>");
                break;
            }
            st = wgf__ids_push(out, b >= 0 ? b : t->unk, err);
            if (b < 0) break; /* one <unk> for the whole character */
        }
    }
    free(s);
    free(heap);
    return st;
}
