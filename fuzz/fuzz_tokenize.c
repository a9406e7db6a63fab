/* Fuzz target tokenize: arbitrary bytes as a prompt through one pre-tokenizer per input (gpt2,
 * qwen2, llama3 byte-level BPE, or an SPM vocabulary with byte fallback), with or without
 * parse_special; then the ids through decode and the streaming detokenizer
 * (RELIABILITY.md items 24, 25, 27, 28).
 * Input layout: byte 0 selects the case (bits 0-1: tokenizer gpt2/qwen2/llama3/spm, bit 2:
 * parse_special); the remaining bytes are the prompt. One tokenizer per input keeps an
 * execution cheap (the four-tokenizer version ran ~110 inputs/s under ASan) and lets
 * libFuzzer's coverage feedback attribute each path to one pre-tokenizer.
 * Invariants checked on every input:
 *   - encode never fails and is deterministic;
 *   - byte-level BPE: decode(encode(s)) == s for any bytes when specials are not parsed;
 *   - the streaming detokenizer's output is valid UTF-8;
 *   - the prompt's first 4 bytes as an id: in range decodes, outside is WGF_ERR_ARG. */
#include "fuzz_common.h"
#include "llm/tokenizer_internal.h"
#include "wgfuse/tokenizer.h"

enum { N_TOK = 4 };
static struct wgf_tokenizer *g_tok[N_TOK];
static const char *const     g_name[N_TOK] = {"gpt2", "qwen2", "llama3", "spm"};

/* Byte-level BPE: 256 byte tokens, a few merges (words, digits, spaces), ChatML specials. */
static struct wgf_tokenizer *make_bpe(const char *pre)
{
    static const char *const extra[]  = {"Ġt", "he", "Ġthe", "in", "ing", "12", "123", "ĠĠ", "ĠĠĠĠ", "Ċ", "ĊĊ", "aa"};
    static const char *const merges[] = {"Ġ t", "h e", "Ġt he", "i n", "in g", "1 2", "12 3", "Ġ Ġ", "ĠĠ ĠĠ", "Ċ Ċ", "a a"};
    static const char *const spec_toks[] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
    enum { NE = sizeof extra / sizeof *extra, NS = 3, NV = 256 + NE + NS };
    static char  bytes[256][5];
    const char  *toks[NV];
    int32_t      types[NV];
    for (unsigned b = 0; b < 256; b++) {
        size_t k    = wgf__utf8_put(wgf__bytelevel_cp(b), bytes[b]);
        bytes[b][k] = 0;
        toks[b] = bytes[b], types[b] = WGF_TOKEN_NORMAL;
    }
    /* "Ċ" is byte 0x0A's own token already: keep the table unique */
    size_t nv = 256;
    for (size_t i = 0; i < NE; i++)
        if (strcmp(extra[i], "Ċ")) toks[nv] = extra[i], types[nv++] = WGF_TOKEN_NORMAL;
    for (size_t i = 0; i < NS; i++) toks[nv] = spec_toks[i], types[nv++] = WGF_TOKEN_CONTROL;
    struct wgf_tok_spec s;
    wgf_tok_spec_init(&s);
    s.model = WGF_TOK_MODEL_BPE, s.n_tokens = nv, s.tokens = toks, s.types = types;
    s.merges = merges, s.n_merges = sizeof merges / sizeof *merges, s.pre = pre, s.source = pre;
    s.eos_id = (int32_t)(nv - NS);
    struct wgf_tokenizer *tok = NULL;
    struct wgf_err        err = {0};
    FZ_REQUIRE(wgf_tokenizer_from_spec(&s, &tok, &err) == WGF_OK, "%s: %s", pre, err.msg);
    return tok;
}

/* SentencePiece-style: <0x00>..<0xFF>, <unk>, <s>, </s>, a few pieces with scores. */
static struct wgf_tokenizer *make_spm(void)
{
    static const char *const pieces[] = {"\xE2\x96\x81", "a", "aa", "\xE2\x96\x81t", "he", "\xE2\x96\x81the",
                                         "\xE2\x96\x81\xE2\x96\x81", "1", "12", "caf", "\xC3\xA9"};
    enum { NP = sizeof pieces / sizeof *pieces, NV = 256 + 3 + NP };
    static char bytes[256][8];
    const char *toks[NV];
    int32_t     types[NV];
    float       scores[NV];
    for (unsigned b = 0; b < 256; b++) {
        snprintf(bytes[b], sizeof bytes[b], "<0x%02X>", b);
        toks[b] = bytes[b], types[b] = WGF_TOKEN_BYTE, scores[b] = 0;
    }
    toks[256] = "<unk>", types[256] = WGF_TOKEN_UNKNOWN, scores[256] = 0;
    toks[257] = "<s>", types[257] = WGF_TOKEN_CONTROL, scores[257] = 0;
    toks[258] = "</s>", types[258] = WGF_TOKEN_CONTROL, scores[258] = 0;
    for (size_t i = 0; i < NP; i++) toks[259 + i] = pieces[i], types[259 + i] = WGF_TOKEN_NORMAL, scores[259 + i] = -(float)i;
    struct wgf_tok_spec s;
    wgf_tok_spec_init(&s);
    s.model = WGF_TOK_MODEL_SPM, s.n_tokens = NV, s.tokens = toks, s.types = types, s.scores = scores;
    s.source = "spm", s.unk_id = 256, s.bos_id = 257, s.eos_id = 258;
    struct wgf_tokenizer *tok = NULL;
    struct wgf_err        err = {0};
    FZ_REQUIRE(wgf_tokenizer_from_spec(&s, &tok, &err) == WGF_OK, "spm: %s", err.msg);
    return tok;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    g_tok[0] = make_bpe("gpt2");
    g_tok[1] = make_bpe("qwen2");
    g_tok[2] = make_bpe("llama3");
    g_tok[3] = make_spm();
    return 0;
}

static bool utf8_valid(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t   k = wgf__utf8_next((const unsigned char *)s + i, n - i, &cp);
        if (!k) return false;
        i += k;
    }
    return true;
}

static void one(int k, const char *text, size_t len, bool special)
{
    const struct wgf_tokenizer *tok = g_tok[k];
    struct wgf_err              err = {0};
    int32_t                    *ids = NULL, *ids2 = NULL;
    size_t                      n = 0, n2 = 0;
    FZ_REQUIRE(wgf_tokenizer_encode(tok, text, len, special, &ids, &n, &err) == WGF_OK, "%s encode: %s", g_name[k], err.msg);
    FZ_REQUIRE(wgf_tokenizer_encode(tok, text, len, special, &ids2, &n2, &err) == WGF_OK, "%s encode: %s", g_name[k], err.msg);
    FZ_REQUIRE(n == n2 && memcmp(ids, ids2, n * sizeof *ids) == 0, "%s: encode not deterministic", g_name[k]);
    size_t nv = wgf_tokenizer_vocab_size(tok);
    for (size_t i = 0; i < n; i++) FZ_REQUIRE(ids[i] >= 0 && (size_t)ids[i] < nv, "%s: id %d out of range", g_name[k], ids[i]);

    char  *out = NULL;
    size_t olen = 0;
    FZ_REQUIRE(wgf_tokenizer_decode(tok, ids, n, special, &out, &olen, &err) == WGF_OK, "%s decode: %s", g_name[k], err.msg);
    if (k < 3 && !special) FZ_REQUIRE(olen == len && memcmp(out, text, len) == 0, "%s: decode(encode(s)) != s", g_name[k]);
    free(out);

    struct wgf_detok *d = NULL;
    FZ_REQUIRE(wgf_detok_new(tok, special ? WGF_DETOK_SPECIAL : 0, &d, &err) == WGF_OK, "detok_new: %s", err.msg);
    for (size_t i = 0; i <= n; i++) {
        const char *t;
        size_t      tl;
        if (i < n) FZ_REQUIRE(wgf_detok_push(d, ids[i], &t, &tl, &err) == WGF_OK, "detok_push: %s", err.msg);
        else FZ_REQUIRE(wgf_detok_flush(d, &t, &tl, &err) == WGF_OK, "detok_flush: %s", err.msg);
        FZ_REQUIRE(utf8_valid(t, tl), "%s: streamed text is not valid UTF-8", g_name[k]);
    }
    wgf_detok_free(d);
    free(ids);
    free(ids2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const int   k       = data[0] & 3;
    const bool  special = (data[0] & 4) != 0;
    const char *text    = (const char *)data + 1;
    const size_t len    = size - 1;
    one(k, text, len, special);
    if (len >= 4) {
        int32_t id;
        memcpy(&id, text, 4);
        char          *out = NULL;
        size_t         olen;
        struct wgf_err err = {0};
        size_t         nv  = wgf_tokenizer_vocab_size(g_tok[k]);
        enum wgf_status st = wgf_tokenizer_decode(g_tok[k], &id, 1, special, &out, &olen, &err);
        FZ_REQUIRE((id >= 0 && (size_t)id < nv) ? st == WGF_OK : st == WGF_ERR_ARG, "%s decode id %d: %s", g_name[k], id,
                   wgf_status_str(st));
        free(out);
    }
    return 0;
}
