/* Helpers shared by tests/llm/test_tokenizer*.c (header-only: each test is one binary). */
#ifndef WGF_TEST_TOKENIZER_UTIL_H
#define WGF_TEST_TOKENIZER_UTIL_H
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "llm/tokenizer_internal.h"
#include "wgfuse/tokenizer.h"

/* Limits are checked on this thread's CPU time: on an idle machine it equals wall time,
 * and other processes (parallel builds, ctest -j) cannot make the check flaky. */
static inline double tt_now(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Time limits (RELIABILITY.md) hold for optimized builds; sanitizer and -O0 builds run
 * several times slower, so their limits are scaled instead of the checks skipped. */
static inline double tt_time_scale(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return 10.0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
    return 10.0;
#endif
#endif
#ifndef __OPTIMIZE__
    return 4.0;
#else
    return 1.0;
#endif
}

/* Whole file, NUL-terminated; NULL on failure. */
static inline char *tt_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) {
        b[n] = '\0';
        if (len) *len = (size_t)n;
    }
    return b;
}

static inline bool tt_write(const char *path, const char *s, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(s, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* The multilingual corpus in tests/llm/data (located through WGF_SOURCE_DIR). */
static inline char *tt_corpus(size_t *len)
{
    const char *src = getenv("WGF_SOURCE_DIR");
    char        path[4096];
    snprintf(path, sizeof path, "%s/tests/llm/data/tokenizer_corpus.txt", src ? src : ".");
    return tt_read(path, len);
}

static inline bool tt_utf8_valid(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t   k = wgf__utf8_next((const unsigned char *)s + i, n - i, &cp);
        if (!k) return false;
        i += k;
    }
    return true;
}

/* encode then decode; true if the bytes come back exactly. *n_out gets the token count. */
static inline bool tt_roundtrip(const struct wgf_tokenizer *tok, const char *s, size_t n, size_t *n_out,
                                struct wgf_err *err)
{
    int32_t *ids;
    size_t   nid;
    if (wgf_tokenizer_encode(tok, s, n, false, &ids, &nid, err)) return false;
    char  *out  = NULL;
    size_t olen = 0;
    bool   ok   = wgf_tokenizer_decode(tok, ids, nid, false, &out, &olen, err) == WGF_OK;
    ok        = ok && olen == n && memcmp(out, s, n) == 0;
    if (n_out) *n_out = nid;
    free(ids);
    free(out);
    return ok;
}

/* Hostile or malformed prompts every tokenizer must survive deterministically. */
static const struct {
    const char *name;
    const char *s;
    size_t      n;
} tt_bad_utf8[] = {
    {"lone continuation 0x80", "a\x80z", 3},
    {"truncated E2 80", "x\xE2\x80", 3},
    {"truncated E2 80 mid", "\xE2\x80 y", 4},
    {"overlong slash C0 AF", "\xC0\xAF", 2},
    {"overlong E0 80 AF", "\xE0\x80\xAF", 3},
    {"overlong F0 80 80 AF", "\xF0\x80\x80\xAF", 4},
    {"surrogate ED A0 80", "\xED\xA0\x80", 3},
    {"surrogate pair CESU", "\xED\xA0\xBD\xED\xB8\x80", 6},
    {"0xFF", "\xFF", 1},
    {"0xFE 0xFF run", "\xFE\xFF\xFE\xFF", 4},
    {"NUL", "a\0b", 3},
    {"only NUL", "\0", 1},
    {"above U+10FFFF", "\xF4\x90\x80\x80", 4},
    {"F5 lead", "\xF5\x80\x80\x80", 4},
    {"invalid inside word", "caf\xC3 z\xA9", 6},
    {"space then invalid", " \xC3", 2},
};

/* A byte-level tokenizer.json at dir/name: 256 byte tokens + extra tokens (ids 256..) +
 * merges ("a b" strings), with the pre-tokenizer `pre` ("gpt2", "qwen2", "llama3"). */
static inline bool tt_mini_json(const char *path, const char *pre, const char *const *extra, size_t n_extra,
                                const char *const *merges, size_t n_merges)
{
    json_t *vocab = json_object(), *m = json_array(), *p;
    for (unsigned b = 0; b < 256; b++) {
        char   s[5];
        size_t k = wgf__utf8_put(wgf__bytelevel_cp(b), s);
        s[k]     = '\0';
        json_object_set_new(vocab, s, json_integer(b));
    }
    for (size_t i = 0; i < n_extra; i++) json_object_set_new(vocab, extra[i], json_integer((json_int_t)(256 + i)));
    for (size_t i = 0; i < n_merges; i++) json_array_append_new(m, json_string(merges[i]));
    if (strcmp(pre, "gpt2") == 0)
        p = json_pack("{s:s, s:b}", "type", "ByteLevel", "add_prefix_space", 0);
    else
        p = json_pack("{s:s, s:[{s:s, s:{s:s}, s:s, s:b}, {s:s, s:b, s:b, s:b}]}", "type", "Sequence",
                      "pretokenizers", "type", "Split", "pattern", "Regex",
                      wgf_tok_pre_regex(strcmp(pre, "qwen2") == 0 ? WGF_TOK_PRE_QWEN2 : WGF_TOK_PRE_LLAMA3),
                      "behavior", "Isolated", "invert", 0, "type", "ByteLevel", "add_prefix_space", 0,
                      "trim_offsets", 0, "use_regex", 0);
    json_t *root = json_pack("{s:o, s:{s:s, s:o, s:o, s:b}, s:[]}", "pre_tokenizer", p, "model", "type", "BPE",
                             "vocab", vocab, "merges", m, "ignore_merges", strcmp(pre, "llama3") == 0,
                             "added_tokens");
    int rc = root ? json_dump_file(root, path, 0) : -1;
    json_decref(root);
    return rc == 0;
}

/* An SPM tokenizer from a spec: <unk> (id 0), the byte tokens <0x00>..<0xFF> (ids 1..256),
 * then `extra` (types and scores may be NULL: NORMAL, 0). NULL on failure (err set). */
static inline struct wgf_tokenizer *tt_spm_bytes(const char *const *extra, const int32_t *types, const float *scores,
                                                 size_t n_extra, const char *source, struct wgf_err *err)
{
    size_t       n   = 257 + n_extra;
    const char **tok = malloc(n * sizeof *tok);
    int32_t     *ty  = malloc(n * sizeof *ty);
    float       *sc  = calloc(n, sizeof *sc);
    char (*bytes)[8] = malloc(256 * sizeof *bytes);
    struct wgf_tokenizer *t = NULL;
    if (tok && ty && sc && bytes) {
        tok[0] = "<unk>", ty[0] = WGF_TOKEN_UNKNOWN;
        for (int b = 0; b < 256; b++) {
            snprintf(bytes[b], sizeof bytes[b], "<0x%02X>", b);
            tok[1 + b] = bytes[b], ty[1 + b] = WGF_TOKEN_BYTE;
        }
        for (size_t i = 0; i < n_extra; i++) {
            tok[257 + i] = extra[i], ty[257 + i] = types ? types[i] : WGF_TOKEN_NORMAL;
            if (scores) sc[257 + i] = scores[i];
        }
        struct wgf_tok_spec spec;
        wgf_tok_spec_init(&spec);
        spec.model = WGF_TOK_MODEL_SPM, spec.n_tokens = n, spec.tokens = tok, spec.types = ty, spec.scores = sc;
        spec.unk_id = 0, spec.source = source;
        if (wgf_tokenizer_from_spec(&spec, &t, err) != WGF_OK) t = NULL;
    }
    free(tok), free(ty), free(sc), free(bytes);
    return t;
}

#endif
