/* Byte-level BPE: the test tokenizer.json writer, loading, known-answer encodings (merge
 * rank order, pre-tokenizer pieces), round trips on the corpus for every pre-tokenizer,
 * the GGUF spec path, special tokens and invalid UTF-8. */
#include <jansson.h>

#include "test_tokenizer_util.h"

static char g_dir[4096];

static const char *tmp_path(const char *name)
{
    static char buf[8][4200];
    static int  k;
    char       *b = buf[k++ & 7];
    snprintf(b, 4200, "%s/%s", g_dir, name);
    return b;
}

/* Rewrite the test tokenizer.json with another pre_tokenizer (jansson-built JSON). */
static const char *with_pre(const char *base, const char *name, json_t *pre, bool ignore_merges)
{
    json_error_t je;
    json_t      *root = json_load_file(base, 0, &je);
    if (!root) return NULL;
    json_object_set_new(root, "pre_tokenizer", pre);
    json_object_set_new(json_object_get(root, "model"), "ignore_merges", json_boolean(ignore_merges));
    const char *out = tmp_path(name);
    int         rc  = json_dump_file(root, out, 0);
    json_decref(root);
    return rc == 0 ? out : NULL;
}

static json_t *split_then_bytelevel(const char *regex)
{
    return json_pack("{s:s, s:[{s:s, s:{s:s}, s:s, s:b}, {s:s, s:b, s:b, s:b}]}", "type", "Sequence", "pretokenizers",
                     "type", "Split", "pattern", "Regex", regex, "behavior", "Isolated", "invert", 0, "type",
                     "ByteLevel", "add_prefix_space", 0, "trim_offsets", 0, "use_regex", 0);
}

static struct wgf_tokenizer *load(struct wgf_t *t, const char *name, const char *path)
{
    struct wgf_err        err = {0};
    struct wgf_tokenizer *tok = NULL;
    enum wgf_status       st  = path ? wgf_tokenizer_load_json(path, NULL, &tok, &err) : WGF_ERR_IO;
    wgf_t_check(t, st == WGF_OK, name, "%s", st ? err.msg : "loaded");
    return st ? NULL : tok;
}

static int32_t id_of(const struct wgf_tokenizer *tok, const char *s) { return wgf_tokenizer_find(tok, s); }

static bool encode_is(const struct wgf_tokenizer *tok, const char *text, const char *const *want, size_t n_want,
                      char *why, size_t cap)
{
    struct wgf_err err = {0};
    int32_t       *ids;
    size_t         n;
    if (wgf_tokenizer_encode(tok, text, strlen(text), false, &ids, &n, &err)) {
        snprintf(why, cap, "%.200s", err.msg);
        return false;
    }
    bool ok = n == n_want;
    for (size_t i = 0; ok && i < n; i++) ok = ids[i] == id_of(tok, want[i]);
    size_t o = (size_t)snprintf(why, cap, "got %zu [", n);
    for (size_t i = 0; i < n && o < cap; i++)
        o += (size_t)snprintf(why + o, cap - o, "%s%s", i ? " " : "", wgf_tokenizer_token_str(tok, ids[i]));
    if (o < cap) snprintf(why + o, cap - o, "]");
    free(ids);
    return ok;
}

/* A minimal byte-level tokenizer.json: 256 byte tokens + extra tokens + merges in the
 * "a b" string form, GPT-2 ByteLevel pre-tokenizer. */
static const char *mini_json(const char *name, const char *const *extra, size_t n_extra, const char *const *merges,
                             size_t n_merges)
{
    json_t *vocab = json_object(), *m = json_array();
    for (unsigned b = 0; b < 256; b++) {
        char   s[5];
        size_t k = wgf__utf8_put(wgf__bytelevel_cp(b), s);
        s[k]     = '\0';
        json_object_set_new(vocab, s, json_integer(b));
    }
    for (size_t i = 0; i < n_extra; i++) json_object_set_new(vocab, extra[i], json_integer((json_int_t)(256 + i)));
    for (size_t i = 0; i < n_merges; i++) json_array_append_new(m, json_string(merges[i]));
    json_t *root = json_pack("{s:{s:s, s:b}, s:{s:s, s:o, s:o}, s:[]}", "pre_tokenizer", "type", "ByteLevel",
                             "add_prefix_space", 0, "model", "type", "BPE", "vocab", vocab, "merges", m,
                             "added_tokens");
    const char *out = tmp_path(name);
    json_dump_file(root, out, 0);
    json_decref(root);
    return out;
}

static void test_writer_and_load(struct wgf_t *t, const char *path)
{
    struct wgf_err err = {0};
    enum wgf_status st = wgf_tokenizer_write_test_json(path, &err);
    if (!wgf_t_check(t, st == WGF_OK, "write_test_json", "%s", st ? err.msg : path)) return;
    struct wgf_tokenizer *tok = load(t, "load test tokenizer.json", path);
    if (!tok) return;
    size_t nv = wgf_tokenizer_vocab_size(tok);
    wgf_t_check(t, nv == WGF_TOK_TEST_VOCAB, "test vocab size", "%zu (== %d)", nv, WGF_TOK_TEST_VOCAB);
    int32_t eot = id_of(tok, "<|endoftext|>"), ims = id_of(tok, "<|im_start|>"), ime = id_of(tok, "<|im_end|>");
    int32_t x0 = id_of(tok, "<|extra_0|>"), xl = (int32_t)nv - 1;
    wgf_t_check(t, eot > 256 && ims == eot + 1 && ime == eot + 2 && x0 == eot + 3 &&
                       wgf_tokenizer_token_type(tok, xl) == WGF_TOKEN_CONTROL,
                "test specials follow the merges, control fillers after", "%d %d %d %d of %zu", eot, ims, ime, x0, nv);
    int32_t ids[WGF_TOK_TEST_VOCAB];
    for (int32_t i = 0; i < WGF_TOK_TEST_VOCAB; i++) ids[i] = i;
    struct wgf_err derr = {0};
    char          *out  = NULL;
    size_t         olen = 0;
    wgf_t_check(t, wgf_tokenizer_decode(tok, ids, WGF_TOK_TEST_VOCAB, false, &out, &olen, &derr) == WGF_OK,
                "every id of a vocab-512 model decodes", "%zu bytes", olen);
    free(out);
    wgf_t_check(t, wgf_tokenizer_token_type(tok, ims) == WGF_TOKEN_CONTROL, "specials are control tokens", NULL);
    wgf_t_check(t, wgf_tokenizer_eos(tok) == eot && wgf_tokenizer_bos(tok) == -1 && !wgf_tokenizer_wants_bos(tok),
                "test BOS/EOS without tokenizer_config", "eos %d bos %d", wgf_tokenizer_eos(tok), wgf_tokenizer_bos(tok));
    wgf_t_check(t, wgf_tokenizer_is_eog(tok, ime) && wgf_tokenizer_is_eog(tok, eot) && !wgf_tokenizer_is_eog(tok, ims),
                "end-of-generation set", NULL);

    /* Rank order: "Ġ t" (rank 0) before "t h" (rank 3) makes " the" one token; merging
     * "t h" first would leave "Ġ" alone. */
    char why[512];
    const char *w1[] = {"Ġthe"};
    wgf_t_check(t, encode_is(tok, " the", w1, 1, why, sizeof why), "KAT ' the' -> [Ġthe]", "%s", why);
    const char *w2[] = {"Hello", ",", "Ġworld", "!"};
    wgf_t_check(t, encode_is(tok, "Hello, world!", w2, 4, why, sizeof why), "KAT 'Hello, world!'", "%s", why);
    /* Qwen2 pre-tokenizer: digits one by one, "   x" is "  " + " x", newlines grouped. */
    const char *w3[] = {"1", "2", "3", "ĠĠ", "Ġcafe", "ĊĊ", "the"};
    wgf_t_check(t, encode_is(tok, "123   cafe\n\nthe", w3, 7, why, sizeof why), "KAT qwen2 digits/spaces/newlines",
                "%s", why);
    const char *w4[] = {"ĠcafÃ©", "Ġ", "ð", "Ł", "Ļ", "Ĥ"};
    wgf_t_check(t, encode_is(tok, " café 🙂", w4, 6, why, sizeof why), "KAT multi-byte merges and bytes", "%s", why);
    wgf_tokenizer_free(tok);
}

static void test_rank_order_mini(struct wgf_t *t)
{
    const char *extra[] = {"ab", "bc"};
    const char *m1[]    = {"b c", "a b"};
    const char *m2[]    = {"a b", "b c"};
    char        why[512];
    struct wgf_tokenizer *tok = load(t, "load mini (b c first)", mini_json("mini1.json", extra, 2, m1, 2));
    if (tok) {
        const char *w[] = {"a", "bc"};
        wgf_t_check(t, encode_is(tok, "abc", w, 2, why, sizeof why), "KAT rank: 'b c' first -> a|bc", "%s", why);
        wgf_tokenizer_free(tok);
    }
    tok = load(t, "load mini (a b first)", mini_json("mini2.json", extra, 2, m2, 2));
    if (tok) {
        const char *w[] = {"ab", "c"};
        wgf_t_check(t, encode_is(tok, "abc", w, 2, why, sizeof why), "KAT rank: 'a b' first -> ab|c", "%s", why);
        wgf_tokenizer_free(tok);
    }
}

/* Pieces of the three named pre-tokenizers on one line, checked by hand. */
static void test_pretok_pieces(struct wgf_t *t)
{
    static const struct {
        enum wgf_tok_pre pre;
        const char      *name;
        const char      *want; /* pieces joined by '|' */
    } cases[] = {
        {WGF_TOK_PRE_GPT2, "gpt2", "Hi|'s| 12345|   | x|!!|\n\n| Ünï|\xE2\x80\x94"},
        {WGF_TOK_PRE_QWEN2, "qwen2", "Hi|'s| |1|2|3|4|5|   | x|!!\n\n| Ünï|\xE2\x80\x94"},
        {WGF_TOK_PRE_LLAMA3, "llama3", "Hi|'s| |123|45|   | x|!!\n\n| Ünï|\xE2\x80\x94"},
    };
    const char *text = "Hi's 12345    x!!\n\n Ünï\xE2\x80\x94";
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct wgf_tokenizer *tok;
        struct wgf_err        err = {0};
        if (wgf__tok_alloc(WGF_TOK_MODEL_BPE, 1, "t", &tok, &err)) continue;
        enum wgf_status st = wgf__pretok_add_regex(tok, wgf_tok_pre_regex(cases[c].pre), "t", &err);
        struct wgf__span *sp = NULL;
        size_t            n  = 0;
        char             *buf = NULL;
        if (!st) st = wgf__pretok_split(tok, text, strlen(text), &buf, &sp, &n, &err);
        char got[256] = "";
        size_t o      = 0;
        for (size_t i = 0; !st && i < n && o + sp[i].len + 2 < sizeof got; i++) {
            if (i) got[o++] = '|';
            memcpy(got + o, text + sp[i].off, sp[i].len);
            o += sp[i].len;
            got[o] = '\0';
        }
        char name[64];
        snprintf(name, sizeof name, "pre-tokenizer pieces %s", cases[c].name);
        wgf_t_check(t, !st && strcmp(got, cases[c].want) == 0, name, "%s", st ? err.msg : got);
        free(sp);
        free(buf);
        wgf_tokenizer_free(tok);
    }
}

/* Round trip of the corpus (whole and per line) for every pre-tokenizer; the GGUF spec
 * path with the same vocabulary must give identical ids. */
static void test_corpus_roundtrips(struct wgf_t *t, const char *base)
{
    size_t clen   = 0;
    char  *corpus = tt_corpus(&clen);
    if (!wgf_t_check(t, corpus != NULL, "read corpus", "WGF_SOURCE_DIR=%s", getenv("WGF_SOURCE_DIR"))) return;
    struct {
        const char *name, *path, *gguf_pre;
    } pres[] = {
        {"qwen2", base, "qwen2"},
        {"llama3", with_pre(base, "llama3.json", split_then_bytelevel(wgf_tok_pre_regex(WGF_TOK_PRE_LLAMA3)), true), "llama-bpe"},
        {"gpt2", with_pre(base, "gpt2.json", json_pack("{s:s, s:b, s:b}", "type", "ByteLevel", "add_prefix_space", 0, "use_regex", 1), false), "default"},
    };
    json_error_t je;
    json_t      *root   = json_load_file(base, 0, &je);
    json_t      *merges = json_object_get(json_object_get(root, "model"), "merges");
    for (size_t p = 0; p < sizeof pres / sizeof pres[0]; p++) {
        char name[128];
        snprintf(name, sizeof name, "load %s tokenizer.json", pres[p].name);
        struct wgf_tokenizer *tok = load(t, name, pres[p].path);
        if (!tok) continue;
        struct wgf_err err = {0};
        size_t         ntok;
        bool           ok = tt_roundtrip(tok, corpus, clen, &ntok, &err);
        snprintf(name, sizeof name, "round trip corpus %s", pres[p].name);
        wgf_t_check(t, ok, name, "%zu bytes -> %zu tokens %s", clen, ntok, ok ? "" : err.msg);
        size_t bad = 0, lines = 0;
        for (char *s = corpus, *e; s < corpus + clen; s = e + 1) {
            e = memchr(s, '\n', (size_t)(corpus + clen - s));
            if (!e) e = corpus + clen;
            lines++;
            if (!tt_roundtrip(tok, s, (size_t)(e - s), NULL, &err)) bad++;
        }
        snprintf(name, sizeof name, "round trip corpus lines %s", pres[p].name);
        wgf_t_check(t, bad == 0, name, "%zu of %zu lines differ", bad, lines);

        /* GGUF path: tokens/types from this tokenizer, merges as "a b" strings. */
        size_t       nv     = wgf_tokenizer_vocab_size(tok);
        const char **toks   = calloc(nv, sizeof *toks);
        int32_t     *types  = calloc(nv, sizeof *types);
        size_t       nm     = json_array_size(merges);
        char       **mstr   = calloc(nm ? nm : 1, sizeof *mstr);
        for (size_t i = 0; i < nv; i++) {
            toks[i]  = wgf_tokenizer_token_str(tok, (int32_t)i);
            types[i] = wgf_tokenizer_token_type(tok, (int32_t)i);
        }
        for (size_t i = 0; i < nm; i++) {
            json_t *m = json_array_get(merges, i);
            size_t  la = strlen(json_string_value(json_array_get(m, 0))), lb = strlen(json_string_value(json_array_get(m, 1)));
            mstr[i] = malloc(la + lb + 2);
            snprintf(mstr[i], la + lb + 2, "%s %s", json_string_value(json_array_get(m, 0)),
                     json_string_value(json_array_get(m, 1)));
        }
        struct wgf_tok_spec spec;
        wgf_tok_spec_init(&spec);
        spec.model    = WGF_TOK_MODEL_BPE;
        spec.n_tokens = nv;
        spec.tokens   = toks;
        spec.types    = types;
        spec.n_merges = nm;
        spec.merges   = (const char *const *)mstr;
        spec.pre      = pres[p].gguf_pre;
        spec.eos_id   = wgf_tokenizer_eos(tok);
        spec.source   = "spec.gguf";
        struct wgf_tokenizer *g = NULL;
        enum wgf_status       st = wgf_tokenizer_from_spec(&spec, &g, &err);
        snprintf(name, sizeof name, "from_spec %s", pres[p].gguf_pre);
        if (wgf_t_check(t, st == WGF_OK, name, "%s", st ? err.msg : "ok")) {
            int32_t *a = NULL, *b = NULL;
            size_t   na, nb;
            bool     same = !wgf_tokenizer_encode(tok, corpus, clen, true, &a, &na, &err) &&
                        !wgf_tokenizer_encode(g, corpus, clen, true, &b, &nb, &err);
            same = same && na == nb && memcmp(a, b, na * sizeof *a) == 0;
            snprintf(name, sizeof name, "spec %s == tokenizer.json ids on corpus", pres[p].gguf_pre);
            wgf_t_check(t, same, name, "%zu tokens", na);
            free(a);
            free(b);
        }
        wgf_tokenizer_free(g);
        for (size_t i = 0; i < nm; i++) free(mstr[i]);
        free(mstr);
        free(toks);
        free(types);
        wgf_tokenizer_free(tok);
    }
    json_decref(root);
    free(corpus);
}

static void test_special(struct wgf_t *t, const char *path)
{
    struct wgf_tokenizer *tok = load(t, "load for specials", path);
    if (!tok) return;
    struct wgf_err err = {0};
    const char    *s   = "<|im_start|>user\nhi<|im_end|>";
    int32_t       *ids;
    size_t         n;
    int32_t        ims = id_of(tok, "<|im_start|>"), ime = id_of(tok, "<|im_end|>");
    wgf_tokenizer_encode(tok, s, strlen(s), true, &ids, &n, &err);
    wgf_t_check(t, n >= 3 && ids[0] == ims && ids[n - 1] == ime, "parse_special: control tokens matched", "%zu ids", n);
    free(ids);
    wgf_tokenizer_encode(tok, s, strlen(s), false, &ids, &n, &err);
    bool none = true;
    for (size_t i = 0; i < n; i++) none &= ids[i] != ims && ids[i] != ime;
    wgf_t_check(t, none && n > 10, "no parse_special: control text stays text", "%zu ids", n);
    char  *out;
    size_t olen;
    wgf_tokenizer_decode(tok, ids, n, false, &out, &olen, &err);
    wgf_t_check(t, olen == strlen(s) && strcmp(out, s) == 0, "plain special text round trips", "%s", out);
    free(out);
    free(ids);
    /* decode of control tokens: hidden unless special */
    int32_t two[] = {ims, id_of(tok, "h")};
    wgf_tokenizer_decode(tok, two, 2, false, &out, &olen, &err);
    wgf_t_check(t, strcmp(out, "h") == 0, "decode hides control tokens", "'%s'", out);
    free(out);
    wgf_tokenizer_decode(tok, two, 2, true, &out, &olen, &err);
    wgf_t_check(t, strcmp(out, "<|im_start|>h") == 0, "decode(special) renders control tokens", "'%s'", out);
    free(out);
    int32_t badid = (int32_t)wgf_tokenizer_vocab_size(tok);
    wgf_t_check(t, wgf_tokenizer_decode(tok, &badid, 1, false, &out, &olen, &err) == WGF_ERR_ARG,
                "decode rejects id == vocab size", "%s", err.msg);
    /* empty input */
    wgf_t_check(t, wgf_tokenizer_encode(tok, "", 0, false, &ids, &n, &err) == WGF_OK && ids && n == 0,
                "empty text -> 0 tokens", NULL);
    free(ids);
    wgf_tokenizer_free(tok);
}

static void test_bad_utf8(struct wgf_t *t, const char *path)
{
    struct wgf_tokenizer *tok = load(t, "load for invalid UTF-8", path);
    if (!tok) return;
    size_t bad = 0;
    for (size_t i = 0; i < sizeof tt_bad_utf8 / sizeof tt_bad_utf8[0]; i++) {
        struct wgf_err err = {0};
        int32_t       *a, *b;
        size_t         na, nb;
        bool ok = !wgf_tokenizer_encode(tok, tt_bad_utf8[i].s, tt_bad_utf8[i].n, false, &a, &na, &err) &&
                  !wgf_tokenizer_encode(tok, tt_bad_utf8[i].s, tt_bad_utf8[i].n, false, &b, &nb, &err) && na == nb &&
                  memcmp(a, b, na * sizeof *a) == 0 && tt_roundtrip(tok, tt_bad_utf8[i].s, tt_bad_utf8[i].n, NULL, &err);
        if (!ok) {
            bad++;
            wgf_t_check(t, false, "invalid UTF-8", "%s: %s", tt_bad_utf8[i].name, err.msg);
        }
        if (!ok) continue;
        free(a);
        free(b);
    }
    wgf_t_check(t, bad == 0, "invalid UTF-8 -> deterministic ids, exact byte round trip", "%zu cases",
                sizeof tt_bad_utf8 / sizeof tt_bad_utf8[0]);
    wgf_tokenizer_free(tok);
}

/* NFC normalizer (Qwen2): decomposed text encodes like its composed form. */
static void test_nfc(struct wgf_t *t, const char *base)
{
    if (!wgf__nfc_available()) {
        wgf_t_skip(t, "NFC normalizer", "ICU (libicuuc) not loadable: NFC is skipped by the tokenizer");
        return;
    }
    json_error_t je;
    json_t      *root = json_load_file(base, 0, &je);
    json_object_set_new(root, "normalizer", json_pack("{s:s}", "type", "NFC"));
    const char *path = tmp_path("nfc.json");
    json_dump_file(root, path, 0);
    json_decref(root);
    struct wgf_tokenizer *tok = load(t, "load NFC tokenizer.json", path);
    if (!tok) return;
    static const struct {
        const char *a, *b;
    } eq[] = {
        {" cafe\xCC\x81", " caf\xC3\xA9"},                     /* e + U+0301 -> é       */
        {"A\xCC\x8A\xFF e\xCC\x81", "\xC3\x85\xFF \xC3\xA9"}, /* invalid byte kept     */
        {"\xE1\x84\x80\xE1\x85\xA1", "\xEA\xB0\x80"},         /* Hangul jamo -> 가     */
    };
    for (size_t i = 0; i < sizeof eq / sizeof eq[0]; i++) {
        struct wgf_err err = {0};
        int32_t       *a = NULL, *b = NULL;
        size_t         na = 0, nb = 0;
        bool ok = !wgf_tokenizer_encode(tok, eq[i].a, strlen(eq[i].a), false, &a, &na, &err) &&
                  !wgf_tokenizer_encode(tok, eq[i].b, strlen(eq[i].b), false, &b, &nb, &err) && na == nb &&
                  memcmp(a, b, na * sizeof *a) == 0;
        wgf_t_check(t, ok, "NFC: decomposed == composed ids", "case %zu: %zu vs %zu tokens", i, na, nb);
        free(a);
        free(b);
    }
    wgf_tokenizer_free(tok);
}

int main(void)
{
    struct wgf_t t = {0};
    wgf_t_tmpdir("tokenizer_bpe", g_dir, sizeof g_dir);
    const char *base = tmp_path("tokenizer.json");
    test_writer_and_load(&t, base);
    test_rank_order_mini(&t);
    test_pretok_pieces(&t);
    test_corpus_roundtrips(&t, base);
    test_special(&t, base);
    test_bad_utf8(&t, base);
    test_nfc(&t, base);
    return wgf_t_finish(&t);
}
