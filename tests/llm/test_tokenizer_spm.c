/* SentencePiece-style tokenizer (GGUF "llama" vocabularies) on a small hand-built vocab:
 * score-greedy merging known answers, space prefix rules, byte fallback, <unk> fallback,
 * control tokens, corpus round trips and invalid UTF-8. */
#include "test_tokenizer_util.h"

#define MAXV 400

static const char *g_arch; /* spec.arch for the next build() */

struct vocab {
    const char *tok[MAXV];
    int32_t     type[MAXV];
    float       score[MAXV];
    char        bytes[256][8];
    size_t      n;
};

static void add(struct vocab *v, const char *s, int32_t type, float score)
{
    v->tok[v->n] = s, v->type[v->n] = type, v->score[v->n] = score, v->n++;
}

/* ids: 0 <unk>, 1 <s>, 2 </s>, 3..258 <0x00>..<0xFF> (when with_bytes), then pieces. */
static struct wgf_tokenizer *build(struct wgf_t *t, struct vocab *v, bool with_bytes, bool swap_scores,
                                   int add_space_prefix)
{
    v->n = 0;
    add(v, "<unk>", WGF_TOKEN_UNKNOWN, 0);
    add(v, "<s>", WGF_TOKEN_CONTROL, 0);
    add(v, "</s>", WGF_TOKEN_CONTROL, 0);
    if (with_bytes)
        for (unsigned b = 0; b < 256; b++) {
            snprintf(v->bytes[b], sizeof v->bytes[b], "<0x%02X>", b);
            add(v, v->bytes[b], WGF_TOKEN_BYTE, 0);
        }
    add(v, "▁", WGF_TOKEN_NORMAL, -1);
    add(v, "a", WGF_TOKEN_NORMAL, -2);
    add(v, "b", WGF_TOKEN_NORMAL, -2);
    add(v, "c", WGF_TOKEN_NORMAL, -2);
    add(v, "ab", WGF_TOKEN_NORMAL, swap_scores ? -3 : -5);
    add(v, "bc", WGF_TOKEN_NORMAL, swap_scores ? -5 : -3);
    const char *hello[] = {"▁h", "▁he", "▁hel", "▁hell", "▁hello"};
    const char *world[] = {"▁w", "▁wo", "▁wor", "▁worl", "▁world"};
    for (int i = 0; i < 5; i++) add(v, hello[i], WGF_TOKEN_NORMAL, -10.0f + (float)i);
    for (int i = 0; i < 5; i++) add(v, world[i], WGF_TOKEN_NORMAL, -10.0f + (float)i);
    add(v, "ll", WGF_TOKEN_NORMAL, -11);
    const char *chars[] = {"h", "e", "l", "o", "w", "r", "d", "\n", "▁▁", "▁▁▁▁", "的", "世界"};
    for (int i = 0; i < 12; i++) add(v, chars[i], WGF_TOKEN_NORMAL, -20.0f - (float)i);
    add(v, "<|user|>", WGF_TOKEN_USER_DEFINED, 0);
    add(v, "<|end|>", WGF_TOKEN_CONTROL, 0);
    add(v, "<|assistant|>", WGF_TOKEN_USER_DEFINED, 0);
    add(v, "<unused0>", WGF_TOKEN_UNUSED, 0);

    struct wgf_tok_spec spec;
    wgf_tok_spec_init(&spec);
    spec.model            = WGF_TOK_MODEL_SPM;
    spec.n_tokens         = v->n;
    spec.tokens           = v->tok;
    spec.types            = v->type;
    spec.scores           = v->score;
    spec.unk_id           = 0;
    spec.bos_id           = 1;
    spec.eos_id           = 2;
    spec.add_space_prefix = add_space_prefix;
    spec.source           = "spm-test.gguf";
    spec.arch             = g_arch;
    struct wgf_err        err = {0};
    struct wgf_tokenizer *tok = NULL;
    enum wgf_status       st  = wgf_tokenizer_from_spec(&spec, &tok, &err);
    wgf_t_check(t, st == WGF_OK, "build SPM vocab", "%s", st ? err.msg : "ok");
    return tok;
}

/* Encode and compare to the expected token strings. */
static void kat(struct wgf_t *t, const struct wgf_tokenizer *tok, const char *name, const char *text, size_t len,
                unsigned flags, const char *const *want, size_t n_want)
{
    struct wgf_err err = {0};
    int32_t       *ids = NULL;
    size_t         n   = 0;
    enum wgf_status st = wgf_tokenizer_encode_ex(tok, text, len, flags, &ids, &n, &err);
    bool            ok = st == WGF_OK && n == n_want;
    for (size_t i = 0; ok && i < n; i++) ok = strcmp(wgf_tokenizer_token_str(tok, ids[i]), want[i]) == 0;
    char   got[512];
    size_t o = 0;
    got[0]   = '\0';
    for (size_t i = 0; i < n && o < sizeof got - 40; i++)
        o += (size_t)snprintf(got + o, sizeof got - o, "%s%s", i ? " " : "", wgf_tokenizer_token_str(tok, ids[i]));
    wgf_t_check(t, ok, name, "%s", st ? err.msg : got);
    free(ids);
}

/* Expected token strings; a trailing NULL is ignored (lets one call serve two variants). */
#define KAT(tok, name, text, flags, ...)                                                                              \
    do {                                                                                                               \
        const char *w_[] = {__VA_ARGS__};                                                                              \
        size_t      n_   = sizeof w_ / sizeof w_[0];                                                                   \
        while (n_ && !w_[n_ - 1]) n_--;                                                                                \
        kat(t, tok, name, text, strlen(text), flags, w_, n_);                                                          \
    } while (0)

/* A Llama-2 / Phi-3 style tokenizer.json: BPE with byte_fallback over "▁"-escaped text. */
static const char *spm_json(const char *dir, const char *name, bool metaspace)
{
    static char path[4400];
    snprintf(path, sizeof path, "%.4000s/%s", dir, name);
    json_t *vocab = json_object(), *merges = json_array(), *added = json_array();
    const char *head[] = {"<unk>", "<s>", "</s>"};
    size_t      id     = 0;
    for (int i = 0; i < 3; i++) json_object_set_new(vocab, head[i], json_integer((json_int_t)id++));
    for (unsigned b = 0; b < 256; b++) {
        char s[8];
        snprintf(s, sizeof s, "<0x%02X>", b);
        json_object_set_new(vocab, s, json_integer((json_int_t)id++));
    }
    const char *pieces[] = {"▁", "a", "b", "c", "h", "i", "bc", "ab", "abc", "▁h", "▁hi", "\n", "<|user|>", "<|end|>"};
    for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++)
        json_object_set_new(vocab, pieces[i], json_integer((json_int_t)id++));
    /* "abc" is in the vocabulary but only "ab c" makes it: after "b c" wins, a|bc stays. */
    const char *m[] = {"b c", "ab c", "a b", "▁ h", "▁h i"};
    for (size_t i = 0; i < 5; i++) json_array_append_new(merges, json_string(m[i]));
    for (int i = 0; i < 3; i++)
        json_array_append_new(added, json_pack("{s:i, s:s, s:b, s:b, s:b}", "id", i, "content", head[i], "special", 1,
                                               "lstrip", 0, "rstrip", 0));
    json_array_append_new(added, json_pack("{s:i, s:s, s:b, s:b, s:b}", "id", (int)id - 2, "content", "<|user|>",
                                           "special", 1, "lstrip", 0, "rstrip", 1));
    json_array_append_new(added, json_pack("{s:i, s:s, s:b, s:b, s:b}", "id", (int)id - 1, "content", "<|end|>",
                                           "special", 1, "lstrip", 1, "rstrip", 1));
    json_t *norm = metaspace ? json_null()
                             : json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:{s:s}, s:s}]}", "type", "Sequence", "normalizers",
                                         "type", "Prepend", "prepend", "▁", "type", "Replace", "pattern", "String", " ",
                                         "content", "▁");
    json_t *pre  = metaspace ? json_pack("{s:s, s:s, s:s, s:b}", "type", "Metaspace", "replacement", "▁",
                                         "prepend_scheme", "first", "split", 0)
                             : json_null();
    json_t *root = json_pack("{s:o, s:o, s:o, s:{s:s, s:[{s:{s:s, s:i}}, {s:{s:s, s:i}}]}, s:{s:s, s:o, s:o, s:b, s:s}}",
                             "added_tokens", added, "normalizer", norm, "pre_tokenizer", pre, "post_processor",
                             "type", "TemplateProcessing", "single", "SpecialToken", "id", "<s>", "type_id", 0, "Sequence", "id", "A", "type_id", 0,
                             "model", "type", "BPE", "vocab", vocab, "merges", merges, "byte_fallback", 1, "unk_token",
                             "<unk>");
    int rc = root ? json_dump_file(root, path, 0) : -1;
    json_decref(root);
    return rc == 0 ? path : NULL;
}

static void test_spm_json(struct wgf_t *t)
{
    char dir[4096];
    wgf_t_tmpdir("tokenizer_spm", dir, sizeof dir);
    for (int meta = 0; meta < 2; meta++) {
        const char           *path = spm_json(dir, meta ? "metaspace.json" : "legacy.json", meta);
        struct wgf_err        err  = {0};
        struct wgf_tokenizer *tok  = NULL;
        enum wgf_status       st   = path ? wgf_tokenizer_load_json(path, NULL, &tok, &err) : WGF_ERR_IO;
        if (!wgf_t_check(t, st == WGF_OK, meta ? "load Metaspace tokenizer.json" : "load Llama-2 style tokenizer.json",
                         "%s", st ? err.msg : "ok"))
            continue;
        wgf_t_check(t, wgf_tokenizer_model(tok) == WGF_TOK_MODEL_SPM && wgf_tokenizer_wants_bos(tok) &&
                           wgf_tokenizer_bos(tok) == 1 && wgf_tokenizer_eos(tok) == 2,
                    "SPM-style json: model, BOS from TemplateProcessing, EOS", NULL);
        KAT(tok, "json ranks: only listed pairs merge (a|bc, not abc)", "abc", 0, "▁", "a", "bc");
        KAT(tok, "json merges and byte fallback", "hi é", 0, "▁hi", "▁", "<0xC3>", "<0xA9>");
        KAT(tok, "json rstrip/lstrip added tokens", "<|user|>\n hi  <|end|>\n", WGF_TOK_PARSE_SPECIAL, "<|user|>",
            meta ? "h" : "▁hi", meta ? "i" : "<|end|>", meta ? "<|end|>" : NULL);
        KAT(tok, "json without parse_special: specials are text", "<|end|>", 0, "▁", "<0x3C>", "<0x7C>", "<0x65>",
            "<0x6E>", "<0x64>", "<0x7C>", "<0x3E>");
        size_t clen = 0;
        char  *corpus = tt_corpus(&clen);
        size_t bad = 0, lines = 0;
        for (char *s = corpus, *e; corpus && s < corpus + clen; s = e + 1) {
            e = memchr(s, '\n', (size_t)(corpus + clen - s));
            if (!e) e = corpus + clen;
            lines++;
            if (!tt_roundtrip(tok, s, (size_t)(e - s), NULL, &err)) bad++;
        }
        wgf_t_check(t, corpus && bad == 0, "json SPM round trip corpus lines", "%zu of %zu differ", bad, lines);
        for (size_t i = 0; i < sizeof tt_bad_utf8 / sizeof tt_bad_utf8[0]; i++)
            if (!tt_roundtrip(tok, tt_bad_utf8[i].s, tt_bad_utf8[i].n, NULL, &err)) bad++;
        wgf_t_check(t, bad == 0, "json SPM invalid UTF-8 round trip", NULL);
        free(corpus);
        wgf_tokenizer_free(tok);
    }
}

int main(void)
{
    struct wgf_t  t_ = {0}, *t = &t_;
    struct vocab *v  = calloc(1, sizeof *v);
    struct wgf_tokenizer *tok = build(t, v, true, false, -1);
    if (!tok) return wgf_t_finish(t);

    KAT(tok, "score order: bc (-3) beats ab (-5)", "abc", 0, "▁", "a", "bc");
    KAT(tok, "greedy growth to whole words", "hello world", 0, "▁hello", "▁world");
    KAT(tok, "ll (-11) loses to ▁hel (-8)", "hell", 0, "▁hell");
    KAT(tok, "byte fallback for é", "hé", 0, "▁h", "<0xC3>", "<0xA9>");
    KAT(tok, "multi-char pieces (CJK)", "世界的", 0, "▁", "世界", "的");
    KAT(tok, "runs of spaces", "    a", 0, "▁▁▁▁", "▁", "a");
    KAT(tok, "invalid byte -> its byte token", "a\xFF", 0, "▁", "a", "<0xFF>");
    {
        const char *w[] = {"▁", "a", "<0x00>", "b"};
        kat(t, tok, "NUL -> <0x00>", "a\0b", 3, 0, w, 4);
    }
    KAT(tok, "control text stays text", "<s>", 0, "▁", "<0x3C>", "<0x73>", "<0x3E>");
    KAT(tok, "parse_special: <s> then prefixed text", "<s>hello", WGF_TOK_PARSE_SPECIAL, "<s>", "▁hello");
    KAT(tok, "user-defined tokens always matched", "<|user|>\nhello", 0, "<|user|>", "▁", "\n", "h", "e", "ll", "o");
    KAT(tok, "ADD_BOS", "a", WGF_TOK_ADD_BOS, "<s>", "▁", "a");
    wgf_t_check(t, wgf_tokenizer_wants_bos(tok) && wgf_tokenizer_bos(tok) == 1 && wgf_tokenizer_eos(tok) == 2,
                "SPM BOS/EOS and add_bos default", NULL);
    wgf_t_check(t, wgf_tokenizer_is_eog(tok, 2) && wgf_tokenizer_is_eog(tok, wgf_tokenizer_find(tok, "<|end|>")),
                "SPM end-of-generation: </s>, <|end|>", NULL);

    /* round trips: corpus (every line and whole), invalid UTF-8 */
    size_t clen = 0;
    char  *corpus = tt_corpus(&clen);
    struct wgf_err err = {0};
    if (corpus) {
        size_t ntok = 0;
        bool   ok   = tt_roundtrip(tok, corpus, clen, &ntok, &err);
        wgf_t_check(t, ok, "SPM round trip corpus", "%zu bytes -> %zu tokens", clen, ntok);
        size_t bad = 0, lines = 0;
        for (char *s = corpus, *e; s < corpus + clen; s = e + 1) {
            e = memchr(s, '\n', (size_t)(corpus + clen - s));
            if (!e) e = corpus + clen;
            lines++;
            if (!tt_roundtrip(tok, s, (size_t)(e - s), NULL, &err)) bad++;
        }
        wgf_t_check(t, bad == 0, "SPM round trip corpus lines", "%zu of %zu differ", bad, lines);
    }
    size_t bad = 0;
    for (size_t i = 0; i < sizeof tt_bad_utf8 / sizeof tt_bad_utf8[0]; i++)
        if (!tt_roundtrip(tok, tt_bad_utf8[i].s, tt_bad_utf8[i].n, NULL, &err)) {
            bad++;
            wgf_t_check(t, false, "SPM invalid UTF-8", "%s", tt_bad_utf8[i].name);
        }
    wgf_t_check(t, bad == 0, "SPM invalid UTF-8 -> byte tokens, exact round trip", NULL);
    KAT(tok, "leading space kept through round trip", " a", 0, "▁▁", "a");
    wgf_t_check(t, tt_roundtrip(tok, " a", 2, NULL, &err), "SPM ' a' round trip", NULL);
    wgf_tokenizer_free(tok);

    tok = build(t, v, true, true, -1);
    if (tok) KAT(tok, "score order swapped: ab (-3) beats bc (-5)", "abc", 0, "▁", "ab", "c");
    wgf_tokenizer_free(tok);

    tok = build(t, v, true, false, 0);
    if (tok) {
        KAT(tok, "add_space_prefix=0", "hello", 0, "h", "e", "ll", "o");
        wgf_t_check(t, tt_roundtrip(tok, "a b", 3, NULL, &err), "round trip without prefix", NULL);
    }
    wgf_tokenizer_free(tok);

    /* Phi-3 from GGUF: added tokens absorb the whitespace after them. */
    tok = build(t, v, true, false, -1);
    if (tok) KAT(tok, "no arch: newline after <|user|> kept", "<|user|>\nhello", 0, "<|user|>", "▁", "\n", "h", "e",
                 "ll", "o");
    wgf_tokenizer_free(tok);
    g_arch = "phi3";
    tok    = build(t, v, true, false, -1);
    g_arch = NULL;
    if (tok) KAT(tok, "arch phi3: rstrip after <|user|>", "<|user|>\nhello", 0, "<|user|>", "▁hello");
    wgf_tokenizer_free(tok);

    test_spm_json(t);

    tok = build(t, v, false, false, -1);
    if (tok) {
        KAT(tok, "no byte tokens: one <unk> per unknown character", "aé世x", 0, "▁", "a", "<unk>", "<unk>", "<unk>");
        int32_t *a = NULL, *b = NULL;
        size_t   na, nb;
        bool     same = !wgf_tokenizer_encode(tok, "\xFF\xFE", 2, false, &a, &na, &err) &&
                    !wgf_tokenizer_encode(tok, "\xFF\xFE", 2, false, &b, &nb, &err) && na == nb &&
                    memcmp(a, b, na * sizeof *a) == 0;
        wgf_t_check(t, same, "<unk> fallback deterministic on invalid bytes", "%zu tokens", na);
        free(a);
        free(b);
    }
    wgf_tokenizer_free(tok);
    free(corpus);
    free(v);
    return wgf_t_finish(t);
}
