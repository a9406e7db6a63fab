/* wgfuse — matching added tokens (CONTROL, USER_DEFINED, UNKNOWN) in the text with an
 * Aho–Corasick automaton, at a cost per prompt byte that does not depend on how many added
 * tokens there are.
 *
 * What is matched (unchanged from the linear scan it replaces): scanning left to right, at
 * each position the longest added token that starts there and is usable; when there is
 * one it is taken and scanning resumes after it. Usable: every added token with
 * WGF_TOK_PARSE_SPECIAL; else a USER_DEFINED token anywhere, and (chat templates) any
 * token lying entirely in template scaffolding (special_ok). Among equal strings the
 * lowest id wins. The old scan compared every token sharing the position's first byte:
 * 200k added tokens tried at every '<' made a 60k-character prompt take 43 s.
 *
 * How: the automaton is built over the *reversed* token strings and run right to left, so
 * the state at position p is the longest suffix of some reversed token that the text read
 * so far ends with, i.e. the longest prefix of text[p..] that is the tail of a token; the
 * tokens that start at p are the terminal nodes on its failure chain, and the deepest of
 * them (precomputed per node: out_all, and out_ud for USER_DEFINED tokens) is the longest
 * token starting at p. A second state, reset to the root at every byte outside the
 * scaffolding, gives the longest token that lies inside it. The text is processed in
 * chunks of WGF__ADDED_CHUNK positions, each scanned from max_len bytes past its end (a
 * state only depends on the next max_len bytes), so memory stays at one chunk.
 *
 * Cost (docs/reliability.md): per state, each byte scanned takes one child lookup plus the
 * failure links taken, and failure links taken never exceed the bytes scanned (each lowers
 * the depth, each byte raises it by at most one): at most 2 lookups per byte per state.
 * Bytes scanned are at most len (1 + max_len / CHUNK) + max_len. With two states and
 * max_len <= WGF__TOK_MAX_LEN = 4096, CHUNK = 16384: at most 5 len + 16384 lookups for a
 * prompt of len bytes, each a table read at the root or a binary search over at most 256
 * children (8 comparisons) elsewhere. Building costs O(S log 256) for S bytes of added
 * tokens, plus sorting them. No recursion. */
#include <stdlib.h>
#include <string.h>

#include "llm/tokenizer_internal.h"

/* ---- building ------------------------------------------------------------------------------ */

static bool is_added_type(int32_t ty)
{
    return ty == WGF_TOKEN_CONTROL || ty == WGF_TOKEN_USER_DEFINED || ty == WGF_TOKEN_UNKNOWN;
}

struct added_key {
    const char *s;
    uint32_t    len;
    int32_t     id;
};

/* Reversed strings in lexicographic order (a proper prefix first), then by id. */
static int rev_cmp(const void *pa, const void *pb)
{
    const struct added_key *a = pa, *b = pb;
    uint32_t                n = a->len < b->len ? a->len : b->len;
    for (uint32_t k = 1; k <= n; k++) {
        unsigned char ca = (unsigned char)a->s[a->len - k], cb = (unsigned char)b->s[b->len - k];
        if (ca != cb) return ca < cb ? -1 : 1;
    }
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* The child of v by byte c, or 0 (the root is nobody's child). */
static uint32_t child(const struct wgf__added_ac *ac, uint32_t v, unsigned char c)
{
    if (v == 0) return ac->root_next[c];
    uint32_t lo = ac->first[v], hi = ac->first[v + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ac->ebyte[mid] == c) return ac->eto[mid];
        if (ac->ebyte[mid] < c) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

void wgf__added_free(struct wgf__added_ac *ac)
{
    free(ac->first);
    free(ac->ebyte);
    free(ac->eto);
    free(ac->fail);
    free(ac->out_all);
    free(ac->out_ud);
    memset(ac, 0, sizeof *ac);
}

static void *alloc_n(size_t n, size_t size)
{
    return calloc(n ? n : 1, size); /* calloc checks n * size */
}

enum wgf_status wgf__added_build(struct wgf_tokenizer *t, const char *src, struct wgf_err *err)
{
    struct wgf__added_ac *ac = &t->added;
    memset(ac, 0, sizeof *ac);
    size_t n = 0, total = 0;
    for (size_t i = 0; i < t->n_vocab; i++)
        if (is_added_type(t->ents[i].type) && t->ents[i].str_len) {
            n++;
            if (!wgf_add_size(total, t->ents[i].str_len, &total)) return wgf_fail(err, WGF_ERR_NOMEM, "%s: added tokens too large", src);
        }
    t->n_added = n;
    if (n == 0) return WGF_OK;
    if (total >= UINT32_MAX) return wgf_fail(err, WGF_ERR_LIMIT, "%s: %zu bytes of added tokens", src, total);
    size_t   nodes_cap = total + 1;
    struct added_key *keys = alloc_n(n, sizeof *keys);
    uint32_t *par = alloc_n(nodes_cap, sizeof *par), *path = alloc_n(WGF__TOK_MAX_LEN + 1, sizeof *path);
    uint8_t  *byt      = alloc_n(nodes_cap, sizeof *byt);
    int32_t  *term_all = alloc_n(nodes_cap, sizeof *term_all), *term_ud = alloc_n(nodes_cap, sizeof *term_ud);
    uint32_t *queue    = alloc_n(nodes_cap, sizeof *queue);
    enum wgf_status st = WGF_OK;
    if (!keys || !par || !path || !byt || !term_all || !term_ud || !queue) {
        st = wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory for %zu added tokens", src, n);
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < t->n_vocab; i++)
        if (is_added_type(t->ents[i].type) && t->ents[i].str_len)
            keys[k++] = (struct added_key){t->ents[i].str, t->ents[i].str_len, (int32_t)i};
    qsort(keys, n, sizeof *keys, rev_cmp);

    /* the trie of reversed strings, nodes in depth-first order: a string shares the path of
     * the previous one up to their common (reversed) prefix */
    uint32_t nn = 1;
    memset(term_all, 0xFF, nodes_cap * sizeof *term_all);
    memset(term_ud, 0xFF, nodes_cap * sizeof *term_ud);
    path[0]              = 0;
    const struct added_key *prev = NULL;
    for (size_t j = 0; j < n; j++) {
        const struct added_key *e = &keys[j];
        uint32_t                L = e->len, lcp = 0;
        if (L > ac->max_len) ac->max_len = L;
        while (prev && lcp < L && lcp < prev->len && e->s[L - 1 - lcp] == prev->s[prev->len - 1 - lcp]) lcp++;
        for (uint32_t d = lcp + 1; d <= L; d++) {
            par[nn]  = path[d - 1];
            byt[nn]  = (uint8_t)e->s[L - d];
            path[d]  = nn++;
        }
        uint32_t v = path[L];
        if (term_all[v] < 0) term_all[v] = e->id; /* sorted by id within a string */
        if (term_ud[v] < 0 && t->ents[e->id].type == WGF_TOKEN_USER_DEFINED) term_ud[v] = e->id;
        prev = e;
    }
    ac->n_nodes = nn;

    /* children of each node contiguous, by byte (creation order is by byte: strings sorted) */
    ac->first   = alloc_n((size_t)nn + 1, sizeof *ac->first);
    ac->ebyte   = alloc_n(nn, sizeof *ac->ebyte);
    ac->eto     = alloc_n(nn, sizeof *ac->eto);
    ac->fail    = alloc_n(nn, sizeof *ac->fail);
    ac->out_all = alloc_n(nn, sizeof *ac->out_all);
    ac->out_ud  = alloc_n(nn, sizeof *ac->out_ud);
    if (!ac->first || !ac->ebyte || !ac->eto || !ac->fail || !ac->out_all || !ac->out_ud) {
        st = wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory for the added-token automaton (%u nodes)", src, nn);
        goto out;
    }
    for (uint32_t v = 1; v < nn; v++) ac->first[par[v] + 1]++;
    for (uint32_t v = 0; v < nn; v++) ac->first[v + 1] += ac->first[v];
    uint32_t *fill = queue; /* borrowed as the per-parent write cursor */
    for (uint32_t v = 0; v < nn; v++) fill[v] = ac->first[v];
    for (uint32_t v = 1; v < nn; v++) {
        uint32_t at   = fill[par[v]]++;
        ac->ebyte[at] = byt[v];
        ac->eto[at]   = v;
    }
    for (uint32_t e = ac->first[0]; e < ac->first[1]; e++) ac->root_next[ac->ebyte[e]] = ac->eto[e];

    /* failure links and outputs, breadth first (a failure link is shallower than its node) */
    uint32_t qh = 0, qt = 0;
    queue[qt++]     = 0;
    ac->fail[0]     = 0;
    ac->out_all[0]  = -1;
    ac->out_ud[0]   = -1;
    while (qh < qt) {
        uint32_t v = queue[qh++];
        for (uint32_t e = ac->first[v]; e < ac->first[v + 1]; e++) {
            uint32_t u = ac->eto[e], f = 0;
            if (v != 0) {
                f = ac->fail[v];
                uint32_t g;
                while ((g = child(ac, f, ac->ebyte[e])) == 0 && f != 0) f = ac->fail[f];
                f = g;
            }
            ac->fail[u]    = f;
            ac->out_all[u] = term_all[u] >= 0 ? term_all[u] : ac->out_all[f];
            ac->out_ud[u]  = term_ud[u] >= 0 ? term_ud[u] : ac->out_ud[f];
            queue[qt++]    = u;
        }
    }
out:
    free(keys);
    free(par);
    free(path);
    free(byt);
    free(term_all);
    free(term_ud);
    free(queue);
    return st;
}

/* ---- matching ------------------------------------------------------------------------------ */

static uint32_t step(const struct wgf__added_ac *ac, uint32_t s, unsigned char c, uint64_t *steps)
{
    for (;;) {
        (*steps)++;
        uint32_t g = child(ac, s, c);
        if (g || s == 0) return g;
        s = ac->fail[s];
    }
}

static uint32_t id_len(const struct wgf_tokenizer *t, int32_t id) { return id < 0 ? 0 : t->ents[id].str_len; }

/* best[] for the chunk starting at position lo. */
static void scan_chunk(struct wgf__added_scan *sc, size_t lo)
{
    const struct wgf_tokenizer *t  = sc->t;
    const struct wgf__added_ac *ac = &t->added;
    size_t hi   = sc->len - lo < WGF__ADDED_CHUNK ? sc->len : lo + WGF__ADDED_CHUNK;
    size_t from = sc->len - hi < ac->max_len ? sc->len : hi + ac->max_len;
    bool   run  = sc->special_ok && !sc->parse_special;
    uint32_t s_full = 0, s_run = 0;
    for (size_t p = from; p > lo;) {
        p--;
        unsigned char c = sc->text[p];
        s_full          = step(ac, s_full, c, &sc->steps);
        if (run) s_run = sc->special_ok[p] ? step(ac, s_run, c, &sc->steps) : 0;
        if (p >= hi) continue;
        int32_t best;
        if (sc->parse_special) {
            best = ac->out_all[s_full];
        } else {
            best      = ac->out_ud[s_full];
            int32_t b = run ? ac->out_all[s_run] : -1;
            if (id_len(t, b) >= id_len(t, best) && b >= 0) best = b; /* equal length: the same string, lowest id */
        }
        sc->best[p - lo] = best;
    }
    sc->lo = lo;
    sc->hi = hi;
}

enum wgf_status wgf__added_scan_init(struct wgf__added_scan *sc, const struct wgf_tokenizer *t, const char *text,
                                     size_t len, bool parse_special, const unsigned char *special_ok,
                                     struct wgf_err *err)
{
    memset(sc, 0, sizeof *sc);
    sc->t             = t;
    sc->text          = (const unsigned char *)text;
    sc->len           = len;
    sc->parse_special = parse_special;
    sc->special_ok    = special_ok;
    if (!t->n_added || !len) return WGF_OK;
    sc->best = malloc((len < WGF__ADDED_CHUNK ? len : WGF__ADDED_CHUNK) * sizeof *sc->best);
    if (!sc->best) return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for the added-token scan");
    return WGF_OK;
}

int32_t wgf__added_at(struct wgf__added_scan *sc, size_t i)
{
    if (!sc->best || i >= sc->len) return -1;
    if (i < sc->lo || i >= sc->hi) scan_chunk(sc, i);
    return sc->best[i - sc->lo];
}

void wgf__added_scan_free(struct wgf__added_scan *sc)
{
    free(sc->best);
    sc->best = NULL;
}

/* ---- the reference rule ---------------------------------------------------------------------
 * The scan the automaton replaced, O(added tokens) per position: the longest usable added
 * token at text[i..], lowest id among equal strings. Kept as the automaton's plain-C
 * reference (tests/llm/test_tokenizer_flood.c, fuzz/fuzz_added_tokens.c compare the two). */
int32_t wgf__added_rule_at(const struct wgf_tokenizer *t, const char *text, size_t len, size_t i, bool parse_special,
                           const unsigned char *special_ok)
{
    int32_t best = -1;
    for (size_t id = 0; i < len && id < t->n_vocab; id++) {
        const struct wgf__tok_entry *e = &t->ents[id];
        if (!is_added_type(e->type) || !e->str_len || e->str_len > len - i || memcmp(text + i, e->str, e->str_len)) continue;
        bool usable = parse_special || e->type == WGF_TOKEN_USER_DEFINED;
        for (size_t j = 0; !usable && special_ok && j < e->str_len && special_ok[i + j]; j++) usable = j + 1 == e->str_len;
        if (usable && (best < 0 || e->str_len > t->ents[best].str_len)) best = (int32_t)id;
    }
    return best;
}
