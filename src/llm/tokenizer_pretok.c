/* wgfuse — regex pre-tokenization with PCRE2.
 *
 * Patterns are compiled with UTF + UCP (so \s, \p{L}, \p{N} follow Unicode, as in HF
 * tokenizers / tiktoken) and MATCH_INVALID_UTF: invalid bytes in a prompt never match and
 * end up in the gap pieces between matches, so any byte string splits deterministically.
 *
 * Hostile regexes from a tokenizer.json are bounded three ways: a match limit per call,
 * a heap limit (interpreter) / bounded JIT stack, and a deadline over the whole split
 * (0.5 s + 1 s per MiB of the thread's CPU time). The shipped patterns need far less: measured on 1 MiB of 'a',
 * '^', '\n' or ' ' they take milliseconds with JIT. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/tokenizer_internal.h"

/* The three named pre-tokenizers, exactly as their tokenizer.json files give them. */
static const char re_gpt2[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
static const char re_qwen2[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
    "\\s+(?!\\S)|\\s+";
static const char re_llama3[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
    "\\s+(?!\\S)|\\s+";

const char *wgf_tok_pre_regex(enum wgf_tok_pre pre)
{
    switch (pre) {
    case WGF_TOK_PRE_GPT2: return re_gpt2;
    case WGF_TOK_PRE_QWEN2: return re_qwen2;
    case WGF_TOK_PRE_LLAMA3: return re_llama3;
    }
    return re_gpt2;
}

/* Per pcre2_match call: enough for the shipped patterns on any input (the greedy
 * whitespace alternatives backtrack once per byte of a run), small enough that a
 * catastrophic pattern fails within tens of milliseconds. */
#define MATCH_LIMIT_BASE   10000000u
#define MATCH_LIMIT_MAX    200000000u
#define HEAP_LIMIT_KIB     (64u * 1024u)
#define JIT_STACK_MAX      (8u * 1024u * 1024u)

/* A literal Split string as a regex: ASCII letters and digits and non-ASCII bytes as they
 * are, other ASCII bytes as \x{..} (never special, whatever the byte). */
static char *escape_literal(const char *s, size_t n)
{
    size_t cap;
    if (!wgf_mul_size(n, 6, &cap) || !wgf_add_size(cap, 1, &cap)) return NULL;
    char *o = malloc(cap);
    if (!o) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80 && !((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
            k += (size_t)snprintf(o + k, cap - k, "\\x{%x}", c);
        else
            o[k++] = (char)c;
    }
    o[k] = '\0';
    return o;
}

enum wgf_status wgf__pretok_add_split(struct wgf_tokenizer *t, const char *pattern, size_t pattern_len, bool literal,
                                      enum wgf__split_behavior behavior, bool invert, const char *src,
                                      const char *where, struct wgf_err *err)
{
    if (t->n_pre >= WGF__TOK_MAX_PRE)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: %s: more than %d pre-tokenizer steps", src, where, WGF__TOK_MAX_PRE);
    if (behavior > WGF__SPLIT_CONTIGUOUS) return wgf_fail(err, WGF_ERR_ARG, "%s: %s: bad Split behavior", src, where);
    char *esc = NULL;
    if (literal) {
        /* HF escapes the string into a regex: "" becomes the empty regex, matching
         * between every two characters */
        if (!(esc = escape_literal(pattern, pattern_len)))
            return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", src);
        pattern     = esc;
        pattern_len = strlen(esc);
    }
    int         ec;
    PCRE2_SIZE  eo;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, pattern_len, PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF,
                                   &ec, &eo, NULL);
    free(esc);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s: pre-tokenizer regex: %s at offset %zu", src, where,
                        (const char *)msg, (size_t)eo);
    }
    /* JIT is an optimization: when unavailable (or it fails) the interpreter runs. */
    bool jit           = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE) == 0;
    t->pre[t->n_pre++] = (struct wgf__pretok_step){re, (uint8_t)behavior, invert, jit};
    return WGF_OK;
}

enum wgf_status wgf__pretok_add_regex(struct wgf_tokenizer *t, const char *pattern, const char *src,
                                      struct wgf_err *err)
{
    return wgf__pretok_add_split(t, pattern, strlen(pattern), false, WGF__SPLIT_ISOLATED, false, src, "pre_tokenizer",
                                 err);
}

enum wgf_status wgf__pretok_add_prefix_space(struct wgf_tokenizer *t, const char *src, struct wgf_err *err)
{
    if (t->n_pre >= WGF__TOK_MAX_PRE)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: more than %d pre-tokenizer steps", src, WGF__TOK_MAX_PRE);
    t->pre[t->n_pre++] = (struct wgf__pretok_step){NULL, WGF__SPLIT_ISOLATED, false, false};
    return WGF_OK;
}

void wgf__pretok_free(struct wgf_tokenizer *t)
{
    for (size_t i = 0; i < t->n_pre; i++) pcre2_code_free(t->pre[i].re);
    t->n_pre = 0;
}

struct spans {
    struct wgf__span *v;
    size_t            n, cap;
};

/* Room for one more element in a growing array *v of *cap elements holding n. */
static bool room_for_one(void **v, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return true;
    size_t nc = *cap ? *cap : 64, bytes;
    if (*cap && !wgf_mul_size(nc, 2, &nc)) return false;
    if (!wgf_mul_size(nc, elem, &bytes)) return false;
    void *nv = realloc(*v, bytes);
    if (!nv) return false;
    *v   = nv;
    *cap = nc;
    return true;
}

static bool spans_push(struct spans *s, size_t off, size_t len)
{
    if (len == 0) return true;
    void *v = s->v;
    if (!room_for_one(&v, &s->cap, s->n, sizeof *s->v)) return false;
    s->v         = v;
    s->v[s->n++] = (struct wgf__span){off, len};
    return true;
}

/* CPU time of this thread: the deadline bounds our own work, so a busy machine (other
 * processes) does not turn a legitimate long prompt into an error. */
static double now_s(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The budget on both clocks. The thread-CPU clock is a real syscall (no vDSO): read after
 * every match it was ~30k syscalls for a 4 KB prompt. A thread's CPU time never runs ahead
 * of wall time, so it is read only once the cheap monotonic clock has passed its deadline. */
struct deadline {
    double cpu, wall;
};
static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static bool deadline_passed(const struct deadline *d) { return wall_s() > d->wall && now_s() > d->cpu; }

/* One pattern hit list entry: [off, off+len) of the piece, and whether the pattern matched
 * it (HF's find_matches: matches and the gaps between them cover the piece in order). */
struct seg {
    size_t off, len;
    bool   match;
};
struct segs {
    struct seg *v;
    size_t      n, cap;
};

static bool segs_push(struct segs *s, size_t off, size_t len, bool match)
{
    void *v = s->v;
    if (!room_for_one(&v, &s->cap, s->n, sizeof *s->v)) return false;
    s->v         = v;
    s->v[s->n++] = (struct seg){off, len, match};
    return true;
}

/* The matches of re in subj[0, len), as Oniguruma's find_iter (which HF tokenizers uses)
 * yields them: leftmost-first from the end of the previous match; an empty match is
 * reported, except one right where the previous match ended, which moves the search one
 * character on. Gaps between matches are entries too (match false). */
static enum wgf_status find_matches(const pcre2_code *re, const unsigned char *subj, size_t len, pcre2_match_data *md,
                                    pcre2_match_context *mc, const struct deadline *deadline, struct segs *out,
                                    struct wgf_err *err)
{
    size_t prev = 0, from = 0, last_end = SIZE_MAX;
    while (from <= len) {
        int rc = pcre2_match(re, subj, len, from, 0, md, mc);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT ||
                rc == PCRE2_ERROR_DEPTHLIMIT)
                return wgf_fail(err, WGF_ERR_LIMIT,
                                "tokenizer: pre-tokenizer regex exceeded its match limit (catastrophic backtracking?)");
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof msg);
            return wgf_fail(err, WGF_ERR_INTERNAL, "tokenizer: pre-tokenizer regex: %s", (const char *)msg);
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t      ms = ov[0], me = ov[1];
        if (me < ms || me > len) return wgf_fail(err, WGF_ERR_INTERNAL, "tokenizer: pre-tokenizer regex: bad match");
        if (ms == me && me == last_end) {
            uint32_t cp;
            size_t   k = from < len ? wgf__utf8_next(subj + from, len - from, &cp) : 1;
            from += k ? k : 1;
            continue;
        }
        if ((ms > prev && !segs_push(out, prev, ms - prev, false)) || !segs_push(out, ms, me - ms, true))
            return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory splitting %zu bytes", len);
        prev = from = last_end = me;
        if (deadline_passed(deadline))
            return wgf_fail(err, WGF_ERR_LIMIT, "tokenizer: pre-tokenizer regex too slow (deadline passed after %zu of %zu bytes)",
                            from, len);
    }
    if (prev < len && !segs_push(out, prev, len - prev, false))
        return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory splitting %zu bytes", len);
    return WGF_OK;
}

/* Split text[off, off+len) with one Split step, appending its pieces to *out: the hit list
 * folded by the step's behavior exactly as HF's NormalizedString::split does (the fold
 * sees empty matches too; empty pieces are dropped afterwards). */
static enum wgf_status split_one(const struct wgf__pretok_step *step, const char *text, size_t off, size_t len,
                                 pcre2_match_data *md, pcre2_match_context *mc, const struct deadline *deadline,
                                 struct segs *segs, struct spans *out, struct wgf_err *err)
{
    segs->n            = 0;
    enum wgf_status st = find_matches(step->re, (const unsigned char *)text + off, len, md, mc, deadline, segs, err);
    if (st) return st;
    struct seg *v = segs->v;
    size_t      n = segs->n, k = 0; /* v[0, k) is the folded list: (off, len, removed) */
    for (size_t i = 0; i < n; i++) v[i].match ^= step->invert;
    bool prev_match = false;
    switch (step->behavior) {
    case WGF__SPLIT_ISOLATED:
        for (size_t i = 0; i < n; i++) v[i].match = false;
        k = n;
        break;
    case WGF__SPLIT_REMOVED: k = n; break;
    case WGF__SPLIT_CONTIGUOUS:
    case WGF__SPLIT_MERGED_PREV:
        for (size_t i = 0; i < n; i++) {
            struct seg e     = v[i];
            bool       merge = step->behavior == WGF__SPLIT_CONTIGUOUS ? e.match == prev_match : e.match && !prev_match;
            if (merge && k > 0)
                v[k - 1].len = e.off + e.len - v[k - 1].off;
            else
                v[k++] = (struct seg){e.off, e.len, false};
            prev_match = e.match;
        }
        break;
    case WGF__SPLIT_MERGED_NEXT: /* the same fold from the end, then back in order */
        for (size_t i = n; i > 0; i--) { /* i > 0 first: no wrap past zero (-fsanitize=integer) */
            struct seg e = v[i - 1];
            size_t     w = n - 1 - k; /* from the top down: k <= n - i here, so w >= i - 1, never below the unread v[i - 1] */
            if (e.match && !prev_match && k > 0) {
                v[w + 1].len += v[w + 1].off - e.off;
                v[w + 1].off = e.off;
            } else {
                v[w] = (struct seg){e.off, e.len, false};
                k++;
            }
            prev_match = e.match;
        }
        if (k) memmove(v, v + (n - k), k * sizeof *v);
        break;
    }
    for (size_t i = 0; i < k; i++)
        if (!v[i].match && !spans_push(out, off + v[i].off, v[i].len))
            return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory splitting %zu bytes", len);
    return WGF_OK;
}

/* ByteLevel's add_prefix_space: a space in front of every piece not starting with one. The
 * pieces move to a new buffer (*buf replaced). */
static enum wgf_status prefix_space(const char **text, char **buf, struct spans *cur, struct wgf_err *err)
{
    size_t total = 0;
    for (size_t i = 0; i < cur->n; i++)
        if (!wgf_add_size(total, cur->v[i].len + 1, &total))
            return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: text too large");
    char *nb = malloc(total ? total : 1);
    if (!nb) return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for %zu bytes", total);
    size_t o = 0;
    for (size_t i = 0; i < cur->n; i++) {
        struct wgf__span *sp    = &cur->v[i];
        size_t            start = o;
        if ((*text)[sp->off] != ' ') nb[o++] = ' ';
        memcpy(nb + o, *text + sp->off, sp->len);
        o += sp->len;
        *sp = (struct wgf__span){start, o - start};
    }
    free(*buf);
    *buf  = nb;
    *text = nb;
    return WGF_OK;
}

enum wgf_status wgf__pretok_split(const struct wgf_tokenizer *t, const char *text, size_t len, char **buf,
                                  struct wgf__span **spans, size_t *n_spans, struct wgf_err *err)
{
    *spans   = NULL;
    *n_spans = 0;
    *buf     = NULL;
    struct spans cur = {0};
    if (!spans_push(&cur, 0, len) || (len == 0 && !(cur.v = malloc(sizeof *cur.v))))
        return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory");
    if (t->n_pre == 0) {
        *spans   = cur.v;
        *n_spans = cur.n;
        return WGF_OK;
    }

    double          budget   = 0.5 + (double)len / (1024.0 * 1024.0);
    struct deadline deadline = {now_s() + budget, wall_s() + budget};
    size_t limit    = MATCH_LIMIT_BASE + (len > MATCH_LIMIT_MAX / 16 ? MATCH_LIMIT_MAX : 16 * len);
    if (limit > MATCH_LIMIT_MAX) limit = MATCH_LIMIT_MAX;

    enum wgf_status      st   = WGF_OK;
    struct segs          segs = {0};
    pcre2_match_context *mc   = pcre2_match_context_create(NULL);
    /* a JIT stack only for JIT-compiled patterns (a PCRE2 without JIT, as in the wasm build,
     * has none to give: the interpreter needs none) */
    bool any_jit = false;
    for (size_t r = 0; r < t->n_pre; r++) any_jit = any_jit || (t->pre[r].re && t->pre[r].jit);
    pcre2_jit_stack *js = any_jit ? pcre2_jit_stack_create(32 * 1024, JIT_STACK_MAX, NULL) : NULL;
    if (!mc || (any_jit && !js)) st = wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for the regex context");
    if (!st) {
        pcre2_set_match_limit(mc, (uint32_t)limit);
        pcre2_set_heap_limit(mc, HEAP_LIMIT_KIB);
        if (js) pcre2_jit_stack_assign(mc, NULL, js);
    }
    for (size_t r = 0; !st && r < t->n_pre; r++) {
        const struct wgf__pretok_step *step = &t->pre[r];
        if (!step->re) {
            st = prefix_space(&text, buf, &cur, err);
            continue;
        }
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(step->re, NULL);
        if (!md) {
            st = wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for regex match data");
            break;
        }
        struct spans next = {0};
        for (size_t i = 0; !st && i < cur.n; i++)
            st = split_one(step, text, cur.v[i].off, cur.v[i].len, md, mc, &deadline, &segs, &next, err);
        pcre2_match_data_free(md);
        free(cur.v);
        cur = next;
        if (!st && !cur.v && !(cur.v = malloc(sizeof *cur.v))) st = wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory");
    }
    free(segs.v);
    pcre2_jit_stack_free(js);
    pcre2_match_context_free(mc);
    if (st) {
        free(cur.v);
        free(*buf);
        *buf = NULL;
        return st;
    }
    *spans   = cur.v;
    *n_spans = cur.n;
    return WGF_OK;
}
