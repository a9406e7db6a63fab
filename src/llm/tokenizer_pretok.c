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

enum wgf_status wgf__pretok_add_regex(struct wgf_tokenizer *t, const char *pattern, const char *src,
                                      struct wgf_err *err)
{
    if (t->n_regex >= WGF__TOK_MAX_REGEX)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: more than %d Split pre-tokenizers", src, WGF__TOK_MAX_REGEX);
    int        ec;
    PCRE2_SIZE eo;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &ec, &eo, NULL);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: pre-tokenizer regex: %s at offset %zu", src, (const char *)msg,
                        (size_t)eo);
    }
    /* JIT is an optimization: when unavailable (or it fails) the interpreter runs. */
    bool jit                  = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE) == 0;
    t->regex[t->n_regex]      = re;
    t->regex_jit[t->n_regex]  = jit;
    t->n_regex++;
    return WGF_OK;
}

void wgf__pretok_free(struct wgf_tokenizer *t)
{
    for (size_t i = 0; i < t->n_regex; i++) pcre2_code_free(t->regex[i]);
    t->n_regex = 0;
}

struct spans {
    struct wgf__span *v;
    size_t            n, cap;
};

static bool spans_push(struct spans *s, size_t off, size_t len)
{
    if (len == 0) return true;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap : 64, bytes;
        if (s->cap && !wgf_mul_size(cap, 2, &cap)) return false;
        if (!wgf_mul_size(cap, sizeof *s->v, &bytes)) return false;
        struct wgf__span *v = realloc(s->v, bytes);
        if (!v) return false;
        s->v   = v;
        s->cap = cap;
    }
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

/* Split text[off, off+len) with one regex, appending pieces to *out. */
static enum wgf_status split_one(const pcre2_code *re, const char *text, size_t off, size_t len, pcre2_match_data *md,
                                 pcre2_match_context *mc, const struct deadline *deadline, struct spans *out, struct wgf_err *err)
{
    PCRE2_SPTR subj  = (PCRE2_SPTR)(text + off);
    size_t     gap   = 0; /* start of the text not yet covered by a piece */
    size_t     start = 0;
    while (start < len) {
        int rc = pcre2_match(re, subj, len, start, 0, md, mc);
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
        if (me <= ms) {
            /* Empty match: not a piece; resume one character later (the gap absorbs it). */
            uint32_t cp;
            size_t   k = wgf__utf8_next((const unsigned char *)subj + ms, len - ms, &cp);
            start      = ms + (k ? k : 1);
        } else {
            if (!spans_push(out, off + gap, ms - gap) || !spans_push(out, off + ms, me - ms))
                return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory splitting %zu bytes", len);
            gap = start = me;
        }
        if (deadline_passed(deadline))
            return wgf_fail(err, WGF_ERR_LIMIT, "tokenizer: pre-tokenizer regex too slow (deadline passed after %zu of %zu bytes)",
                            start, len);
    }
    if (!spans_push(out, off + gap, len - gap))
        return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory splitting %zu bytes", len);
    return WGF_OK;
}

enum wgf_status wgf__pretok_split(const struct wgf_tokenizer *t, const char *text, size_t len,
                                  struct wgf__span **spans, size_t *n_spans, struct wgf_err *err)
{
    *spans   = NULL;
    *n_spans = 0;
    struct spans cur = {0};
    if (!spans_push(&cur, 0, len)) return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory");
    if (t->n_regex == 0) {
        *spans   = cur.v;
        *n_spans = cur.n;
        return WGF_OK;
    }

    double          budget   = 0.5 + (double)len / (1024.0 * 1024.0);
    struct deadline deadline = {now_s() + budget, wall_s() + budget};
    size_t limit    = MATCH_LIMIT_BASE + (len > MATCH_LIMIT_MAX / 16 ? MATCH_LIMIT_MAX : 16 * len);
    if (limit > MATCH_LIMIT_MAX) limit = MATCH_LIMIT_MAX;

    enum wgf_status      st = WGF_OK;
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    /* a JIT stack only for JIT-compiled patterns (a PCRE2 without JIT, as in the wasm build,
     * has none to give: the interpreter needs none) */
    bool any_jit = false;
    for (size_t r = 0; r < t->n_regex; r++) any_jit = any_jit || t->regex_jit[r];
    pcre2_jit_stack *js = any_jit ? pcre2_jit_stack_create(32 * 1024, JIT_STACK_MAX, NULL) : NULL;
    if (!mc || (any_jit && !js)) st = wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for the regex context");
    if (!st) {
        pcre2_set_match_limit(mc, (uint32_t)limit);
        pcre2_set_heap_limit(mc, HEAP_LIMIT_KIB);
        if (js) pcre2_jit_stack_assign(mc, NULL, js);
    }
    for (size_t r = 0; !st && r < t->n_regex; r++) {
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(t->regex[r], NULL);
        if (!md) {
            st = wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for regex match data");
            break;
        }
        struct spans next = {0};
        for (size_t i = 0; !st && i < cur.n; i++)
            st = split_one(t->regex[r], text, cur.v[i].off, cur.v[i].len, md, mc, &deadline, &next, err);
        pcre2_match_data_free(md);
        free(cur.v);
        cur = next;
    }
    pcre2_jit_stack_free(js);
    pcre2_match_context_free(mc);
    if (st) {
        free(cur.v);
        return st;
    }
    *spans   = cur.v;
    *n_spans = cur.n;
    return WGF_OK;
}
