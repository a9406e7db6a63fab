/* Reliability: 1 MiB runs of 'a', '^', '\n' and ' ' for every pre-tokenizer (≤ 2 s, no
 * stack overflow, exact round trip), catastrophic regexes in tokenizer.json (error or
 * ≤ 1 s on 10 KB), and malformed tokenizer.json / tokenizer_config.json / GGUF specs
 * (one-line error naming the file). Timing limits are the RELIABILITY.md limits, loose
 * on purpose: measured times are printed in the details. */
#include <math.h>

#include "test_tokenizer_util.h"

static char g_dir[4096];

static const char *tmp_path(const char *name)
{
    static char buf[8][4200];
    static int  k;
    char       *b = buf[k++ & 7];
    snprintf(b, 4200, "%.3900s/%.200s", g_dir, name);
    return b;
}

/* Merges that collapse long runs, so merging itself is exercised at 1 MiB. */
static const char *const run_extra[]  = {"aa", "aaaa", "aaaaaaaa", "^^", "^^^^", "ĠĠ", "ĠĠĠĠ", "ĊĊ", "ĊĊĊĊ"};
static const char *const run_merges[] = {"a a",  "aa aa", "aaaa aaaa", "^ ^",    "^^ ^^",
                                         "Ġ Ġ", "ĠĠ ĠĠ", "Ċ Ċ",      "ĊĊ ĊĊ"};

static void test_long_runs_bpe(struct wgf_t *t)
{
    const char *pres[] = {"gpt2", "qwen2", "llama3"};
    const char  fill[] = {'a', '^', '\n', ' '};
    size_t      n      = 1u << 20;
    char       *buf    = malloc(n);
    for (size_t p = 0; p < 3; p++) {
        char name[160];
        snprintf(name, sizeof name, "runs_%s.json", pres[p]);
        const char           *path = tmp_path(name);
        struct wgf_err        err  = {0};
        struct wgf_tokenizer *tok  = NULL;
        if (!tt_mini_json(path, pres[p], run_extra, 9, run_merges, 9) || wgf_tokenizer_load_json(path, NULL, &tok, &err)) {
            wgf_t_check(t, false, "load run tokenizer", "%s %s", pres[p], err.msg);
            continue;
        }
        for (size_t f = 0; f < 4; f++) {
            memset(buf, fill[f], n);
            double t0 = tt_now();
            size_t ntok = 0;
            bool   ok   = tt_roundtrip(tok, buf, n, &ntok, &err);
            double dt   = tt_now() - t0;
            snprintf(name, sizeof name, "1 MiB of 0x%02X, %s pre-tokenizer", fill[f], pres[p]);
            wgf_t_check(t, ok && dt <= 2.0 * tt_time_scale(), name, "%.3f s CPU (encode+decode), %zu tokens %s", dt, ntok, ok ? "" : err.msg);
        }
        /* mixed hostile content: alternating classes and invalid bytes */
        for (size_t i = 0; i < n; i++) buf[i] = "a ^\n\xFF\xE2\x80 1\t"[i % 10];
        double t0 = tt_now();
        size_t ntok = 0;
        bool   ok   = tt_roundtrip(tok, buf, n, &ntok, &err);
        double dt = tt_now() - t0;
        snprintf(name, sizeof name, "1 MiB mixed/invalid, %s pre-tokenizer", pres[p]);
        wgf_t_check(t, ok && dt <= 2.0 * tt_time_scale(), name, "%.3f s CPU, %zu tokens %s", dt, ntok, ok ? "" : err.msg);
        wgf_tokenizer_free(tok);
    }
    free(buf);
}

/* SentencePiece: the same runs on a small hand-built vocabulary. */
static void test_long_runs_spm(struct wgf_t *t)
{
    const char *pieces[] = {"▁", "a", "aa", "aaaa", "▁▁", "▁▁▁▁", "^", "^^", "\n"};
    float       scores[9];
    for (size_t i = 0; i < 9; i++) scores[i] = -(float)i;
    struct wgf_err        err = {0};
    struct wgf_tokenizer *tok = tt_spm_bytes(pieces, NULL, scores, 9, "runs-spm.gguf", &err);
    if (!wgf_t_check(t, tok != NULL, "SPM run vocab", "%s", err.msg)) return;
    size_t n   = 1u << 20;
    char  *buf = malloc(n);
    const char fill[] = {'a', '^', '\n', ' '};
    for (size_t f = 0; f < 4; f++) {
        memset(buf, fill[f], n);
        double t0 = tt_now();
        size_t ntok = 0;
        bool   ok   = tt_roundtrip(tok, buf, n, &ntok, &err);
        double dt = tt_now() - t0;
        char   name[96];
        snprintf(name, sizeof name, "1 MiB of 0x%02X, SPM", fill[f]);
        wgf_t_check(t, ok && dt <= 2.0 * tt_time_scale(), name, "%.3f s CPU, %zu tokens %s", dt, ntok, ok ? "" : err.msg);
    }
    free(buf);
    wgf_tokenizer_free(tok);
}


static void test_hostile_regex(struct wgf_t *t)
{
    /* the last two backtrack a bounded amount per position, then match one byte: only
     * the deadline (not the per-call match limit) stops them */
    const char *res[] = {"(a+)+b",   "(a|aa)+c", "(x+x+)+y|a", "(\\w+\\s?)+$", "(?:a*)*", "(a*)*b|.", "()",
                         "(?:a|aa){1,24}x|a", "(?:a|a){1,18}x|."};
    size_t      n     = 10 * 1024;
    char       *buf   = malloc(n);
    memset(buf, 'a', n);
    for (size_t r = 0; r < sizeof res / sizeof res[0]; r++) {
        const char *path = tmp_path("hostile.json");
        json_t *vocab = json_object();
        for (unsigned b = 0; b < 256; b++) {
            char   s[5];
            size_t k = wgf__utf8_put(wgf__bytelevel_cp(b), s);
            s[k]     = '\0';
            json_object_set_new(vocab, s, json_integer(b));
        }
        json_t *root = json_pack(
            "{s:{s:s, s:[{s:s, s:{s:s}, s:s, s:b}, {s:s, s:b}]}, s:{s:s, s:o, s:[]}}", "pre_tokenizer", "type",
            "Sequence", "pretokenizers", "type", "Split", "pattern", "Regex", res[r], "behavior", "Isolated", "invert",
            0, "type", "ByteLevel", "use_regex", 0, "model", "type", "BPE", "vocab", vocab, "merges");
        json_dump_file(root, path, 0);
        json_decref(root);
        struct wgf_err        err = {0};
        struct wgf_tokenizer *tok = NULL;
        enum wgf_status       st  = wgf_tokenizer_load_json(path, NULL, &tok, &err);
        char                  name[128];
        snprintf(name, sizeof name, "hostile regex %s on 10 KB", res[r]);
        if (st) {
            wgf_t_check(t, strstr(err.msg, path) != NULL, name, "refused at load: %s", err.msg);
            continue;
        }
        int32_t *ids = NULL;
        size_t   nid = 0;
        double   t0  = tt_now();
        st           = wgf_tokenizer_encode(tok, buf, n, false, &ids, &nid, &err);
        double dt    = tt_now() - t0;
        bool   ok    = dt <= 1.0 * tt_time_scale() && (st == WGF_OK || st == WGF_ERR_LIMIT);
        if (st == WGF_OK) ok = ok && tt_roundtrip(tok, buf, n, NULL, &err);
        wgf_t_check(t, ok, name, "%.3f s CPU, %s", dt, st ? err.msg : "finished");
        free(ids);
        wgf_tokenizer_free(tok);
    }
    /* a pattern PCRE2 cannot compile */
    const char *path = tmp_path("badregex.json");
    const char *txt  = "{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":"
                       "{\"Regex\":\"(\"},\"behavior\":\"Isolated\",\"invert\":false},{\"type\":\"ByteLevel\"}]},"
                       "\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[]}}";
    tt_write(path, txt, strlen(txt));
    struct wgf_err        err = {0};
    struct wgf_tokenizer *tok = NULL;
    enum wgf_status       st  = wgf_tokenizer_load_json(path, NULL, &tok, &err);
    wgf_t_check(t, st != WGF_OK && !tok, "regex that does not compile -> error", "%s", err.msg);
    free(buf);
}

/* Each malformed file: status != OK, one-line message naming the file. */
static void expect_json_error(struct wgf_t *t, const char *name, const char *json, size_t len, const char *cfg_json,
                              const char *must_contain)
{
    const char *path = tmp_path("bad_tokenizer.json");
    const char *cfg  = cfg_json ? tmp_path("bad_tokenizer_config.json") : NULL;
    tt_write(path, json, len);
    if (cfg) tt_write(cfg, cfg_json, strlen(cfg_json));
    struct wgf_err        err = {0};
    struct wgf_tokenizer *tok = NULL;
    enum wgf_status       st  = wgf_tokenizer_load_json(path, cfg, &tok, &err);
    bool ok = st != WGF_OK && tok == NULL && strstr(err.msg, cfg ? cfg : path) && !strchr(err.msg, '\n') &&
              (!must_contain || strstr(err.msg, must_contain));
    wgf_t_check(t, ok, name, "[%s] %s", wgf_status_str(st), err.msg);
    wgf_tokenizer_free(tok);
}

static void test_malformed_json(struct wgf_t *t)
{
    struct wgf_err err  = {0};
    char           good[4200];
    snprintf(good, sizeof good, "%s", tmp_path("good.json"));
    if (wgf_tokenizer_write_test_json(good, &err)) return;
    size_t len;
    char  *txt = tt_read(good, &len);
    expect_json_error(t, "truncated tokenizer.json", txt, len / 2, NULL, NULL);
    expect_json_error(t, "tokenizer.json cut after 1 byte", txt, 1, NULL, NULL);
    expect_json_error(t, "empty tokenizer.json", "", 0, NULL, NULL);
    free(txt);
    const char *v256 = "\"vocab\":{\"a\":0,\"b\":1}";
    char        buf[4096];
#define BAD(name, fmt, ...)                                                                                             \
    do {                                                                                                               \
        snprintf(buf, sizeof buf, fmt, __VA_ARGS__);                                                                   \
        expect_json_error(t, name, buf, strlen(buf), NULL, NULL);                                                      \
    } while (0)
    BAD("not JSON", "%s", "hello");
    BAD("top level array", "%s", "[1,2,3]");
    BAD("without a model", "%s", "{\"added_tokens\":[],\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}");
    BAD("model not an object", "%s", "{\"model\":\"BPE\"}");
    BAD("unknown model WordPiece", "{\"model\":{\"type\":\"WordPiece\",%s},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}", v256);
    BAD("unknown model Unigram", "{\"model\":{\"type\":\"Unigram\",\"vocab\":[]},\"pre_tokenizer\":null}%s", "");
    BAD("duplicate vocab key", "%s",
        "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"a\":1},\"merges\":[]},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}");
    BAD("duplicate top-level key", "%s", "{\"model\":{},\"model\":{}}");
    BAD("merge of unknown tokens", "{\"model\":{\"type\":\"BPE\",%s,\"merges\":[\"x y\"]},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}", v256);
    BAD("merge not a pair", "{\"model\":{\"type\":\"BPE\",%s,\"merges\":[[1,2]]},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}", v256);
    BAD("merge without space", "{\"model\":{\"type\":\"BPE\",%s,\"merges\":[\"ab\"]},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}", v256);
    BAD("vocab id 4e9", "%s", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":4000000000},\"merges\":[]},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}");
    BAD("vocab id negative", "%s", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":-1},\"merges\":[]},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}");
    BAD("vocab id a string", "%s", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":\"0\"},\"merges\":[]},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}");
    BAD("vocab id 1e309", "%s", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":1e309},\"merges\":[]},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}");
    BAD("byte-level vocab lacking bytes", "{\"model\":{\"type\":\"BPE\",%s,\"merges\":[]},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}", v256);
    BAD("no pre_tokenizer", "{\"model\":{\"type\":\"BPE\",%s,\"merges\":[]}}", v256);
    BAD("Metaspace pre_tokenizer", "{\"model\":{\"type\":\"BPE\",%s,\"merges\":[]},\"pre_tokenizer\":{\"type\":\"Metaspace\"}}", v256);
    BAD("byte_fallback BPE", "{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,%s,\"merges\":[]},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}", v256);
    BAD("Lowercase normalizer", "{\"normalizer\":{\"type\":\"Lowercase\"},\"model\":{\"type\":\"BPE\",%s,\"merges\":[]},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}", v256);
    BAD("added token without id", "{\"added_tokens\":[{\"content\":\"x\"}],\"model\":{\"type\":\"BPE\",%s,\"merges\":[]},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}", v256);
#undef BAD
    /* nested 10^6 deep: jansson stops at its depth limit, no recursion overflow */
    size_t deep = 1000000;
    char  *d    = malloc(2 * deep + 16);
    memset(d, '[', deep);
    memset(d + deep, ']', deep);
    expect_json_error(t, "nested 10^6 deep", d, 2 * deep, NULL, NULL);
    free(d);

    /* missing file */
    struct wgf_tokenizer *tok = NULL;
    const char           *missing = tmp_path("does_not_exist.json");
    enum wgf_status       st      = wgf_tokenizer_load_json(missing, NULL, &tok, &err);
    wgf_t_check(t, st == WGF_ERR_IO && strstr(err.msg, missing), "missing tokenizer.json -> IO error naming it", "%s",
                err.msg);

    /* tokenizer_config.json problems, with a valid tokenizer.json */
    txt = tt_read(good, &len);
    expect_json_error(t, "config eos_token not in vocab", txt, len, "{\"eos_token\":\"<nope>\"}", "eos_token");
    expect_json_error(t, "config add_bos_token not a bool", txt, len, "{\"add_bos_token\":\"yes\"}", "add_bos_token");
    expect_json_error(t, "config not JSON", txt, len, "{", NULL);
    /* and a good config: {content:...} objects, add_bos_token */
    const char *cfg = tmp_path("cfg.json");
    const char *cj  = "{\"bos_token\":{\"content\":\"<|im_start|>\"},\"eos_token\":\"<|im_end|>\",\"add_bos_token\":true}";
    tt_write(cfg, cj, strlen(cj));
    st = wgf_tokenizer_load_json(good, cfg, &tok, &err);
    wgf_t_check(t, st == WGF_OK && wgf_tokenizer_bos(tok) == wgf_tokenizer_find(tok, "<|im_start|>") &&
                       wgf_tokenizer_eos(tok) == wgf_tokenizer_find(tok, "<|im_end|>") && wgf_tokenizer_wants_bos(tok),
                "tokenizer_config bos/eos/add_bos", "%s", st ? err.msg : "ok");
    if (!st) {
        int32_t *ids;
        size_t   n;
        wgf_tokenizer_encode_ex(tok, "hi", 2, WGF_TOK_ADD_BOS, &ids, &n, &err);
        wgf_t_check(t, n >= 2 && ids[0] == wgf_tokenizer_bos(tok), "WGF_TOK_ADD_BOS prepends BOS", "%zu ids", n);
        free(ids);
    }
    wgf_tokenizer_free(tok);
    free(txt);
}

static void expect_spec_error(struct wgf_t *t, const char *name, const struct wgf_tok_spec *spec, const char *must)
{
    struct wgf_err        err = {0};
    struct wgf_tokenizer *tok = NULL;
    enum wgf_status       st  = wgf_tokenizer_from_spec(spec, &tok, &err);
    wgf_t_check(t, st != WGF_OK && !tok && strstr(err.msg, "m.gguf") && (!must || strstr(err.msg, must)), name,
                "[%s] %s", wgf_status_str(st), err.msg);
    wgf_tokenizer_free(tok);
}

static void test_bad_specs(struct wgf_t *t)
{
    const char *toks[260];
    char        bytes[256][8];
    int32_t     types[260];
    float       scores[260] = {0};
    for (unsigned b = 0; b < 256; b++) {
        snprintf(bytes[b], sizeof bytes[b], "<0x%02X>", b);
        toks[b] = bytes[b], types[b] = WGF_TOKEN_BYTE;
    }
    toks[256] = "<unk>", types[256] = WGF_TOKEN_UNKNOWN;
    toks[257] = "<s>", types[257] = WGF_TOKEN_CONTROL;
    toks[258] = "▁a", types[258] = WGF_TOKEN_NORMAL;
    toks[259] = "a", types[259] = WGF_TOKEN_NORMAL;
    struct wgf_tok_spec s;
    wgf_tok_spec_init(&s);
    s.model = WGF_TOK_MODEL_SPM, s.n_tokens = 260, s.tokens = toks, s.types = types, s.scores = scores;
    s.source = "m.gguf", s.unk_id = 256, s.bos_id = 257;
    struct wgf_err        err = {0};
    struct wgf_tokenizer *tok = NULL;
    wgf_t_check(t, wgf_tokenizer_from_spec(&s, &tok, &err) == WGF_OK, "valid SPM spec", "%s", err.msg);
    wgf_tokenizer_free(tok);

    struct wgf_tok_spec b = s;
    toks[5] = "<0x-1>";
    expect_spec_error(t, "byte token <0x-1>", &b, "BYTE");
    toks[5] = bytes[5];
    toks[259] = "a\xFF";
    expect_spec_error(t, "invalid UTF-8 in a token", &b, "UTF-8");
    toks[259] = "a";
    b.bos_id = 260;
    expect_spec_error(t, "BOS id == vocab size", &b, "bos");
    b = s, b.eos_id = -5;
    expect_spec_error(t, "EOS id negative", &b, "eos");
    b = s, types[3] = 9;
    expect_spec_error(t, "token type 9", &b, "type");
    types[3] = WGF_TOKEN_BYTE;
    b = s, scores[258] = NAN;
    expect_spec_error(t, "NaN score", &b, "NaN");
    scores[258] = 0;
    b = s, b.model = 7;
    expect_spec_error(t, "unknown model", &b, NULL);
    b = s, b.n_tokens = 0;
    expect_spec_error(t, "empty vocabulary", &b, NULL);
    b = s, b.tokens = NULL;
    expect_spec_error(t, "no tokens", &b, NULL);
    b = s, b.unk_id = -1, toks[7] = "x", types[7] = WGF_TOKEN_NORMAL;
    expect_spec_error(t, "SPM without byte token or unk", &b, "<0x07>");
    toks[7] = bytes[7], types[7] = WGF_TOKEN_BYTE;

    /* BPE: unknown merge, unknown pre, malformed merge */
    const char *bt[258];
    char        bl[256][5];
    for (unsigned k = 0; k < 256; k++) {
        size_t m = wgf__utf8_put(wgf__bytelevel_cp(k), bl[k]);
        bl[k][m] = '\0';
        bt[k]    = bl[k];
    }
    bt[256] = "ab";
    bt[257] = "<|endoftext|>";
    int32_t bty[258];
    for (int k = 0; k < 258; k++) bty[k] = k == 257 ? WGF_TOKEN_CONTROL : WGF_TOKEN_NORMAL;
    const char         *good_m[] = {"a b"}, *bad_m[] = {"a c"}, *shape_m[] = {"ab"}, *lone[] = {"a "};
    struct wgf_tok_spec p;
    wgf_tok_spec_init(&p);
    p.model = WGF_TOK_MODEL_BPE, p.n_tokens = 258, p.tokens = bt, p.types = bty, p.n_merges = 1, p.merges = good_m;
    p.source = "m.gguf", p.pre = "qwen2", p.eos_id = 257;
    wgf_t_check(t, wgf_tokenizer_from_spec(&p, &tok, &err) == WGF_OK, "valid BPE spec", "%s", err.msg);
    wgf_tokenizer_free(tok);
    struct wgf_tok_spec q = p;
    q.merges = bad_m;
    expect_spec_error(t, "merge to an unknown token", &q, "merges[0]");
    q.merges = shape_m;
    expect_spec_error(t, "merge without a space", &q, "merges[0]");
    q.merges = lone;
    expect_spec_error(t, "merge with an empty right side", &q, "merges[0]");
    q = p, q.pre = "smaug-bpe";
    expect_spec_error(t, "unknown tokenizer.ggml.pre", &q, "smaug-bpe");
    q = p, q.n_tokens = 200;
    expect_spec_error(t, "BPE vocab lacking byte tokens", &q, NULL);
}

int main(void)
{
    struct wgf_t t = {0};
    wgf_t_tmpdir("tokenizer_hostile", g_dir, sizeof g_dir);
    printf("time limits scaled x%.0f for this build (sanitizers / -O0)\n", tt_time_scale());
    test_long_runs_bpe(&t);
    test_long_runs_spm(&t);
    test_hostile_regex(&t);
    test_malformed_json(&t);
    test_bad_specs(&t);
    return wgf_t_finish(&t);
}
