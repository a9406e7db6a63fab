/* Fuzz target added_tokens: the added-token matcher (src/llm/tokenizer_added.c, an
 * Aho–Corasick automaton over reversed strings) against the rule it replaced, on arbitrary
 * token sets, texts and template-scaffolding masks (issue 11).
 * Input layout:
 *   byte 0   bit 0: parse_special; bit 1: a scaffolding mask; bits 2-4: the mask's run
 *            length - 1; bit 5: the mask starts with scaffolding
 *   then     token lines, each a type letter ('c' CONTROL, 'u' USER_DEFINED, 'k' UNKNOWN,
 *            anything else NORMAL) and the token's bytes, '\n'-terminated, up to 64 of
 *            them, ended by an empty line
 *   the rest the text
 * The vocabulary is an SPM one: <unk>, the 256 byte tokens, then the lines' tokens.
 * Invariants:
 *   - a vocabulary that does not build is refused with a one-line message;
 *   - at every position the encoder visits, the automaton's token is the old rule's (the
 *     longest usable added token starting there, lowest id among equal strings; usable:
 *     any with parse_special, else USER_DEFINED, or any lying wholly in the scaffolding);
 *   - encoding succeeds within 5 automaton steps per text byte + 16,384. */
#include <stdbool.h>

#include "fuzz_common.h"
#include "llm/tokenizer_internal.h"
#include "wgfuse/tokenizer.h"

enum { MAX_TOKENS = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const uint8_t flags = data[0];
    const bool    ps = flags & 1, masked = flags & 2, start = flags & 32;
    const size_t  period = (size_t)((flags >> 2) & 7) + 1;
    /* the vocabulary: <unk>, <0x00>..<0xFF>, the token lines */
    static char  bytes[256][8];
    static char  lines[MAX_TOKENS][4097];
    const char  *toks[1 + 256 + MAX_TOKENS];
    int32_t      types[1 + 256 + MAX_TOKENS];
    size_t       nv = 0, pos = 1;
    toks[nv] = "<unk>", types[nv++] = WGF_TOKEN_UNKNOWN;
    for (int b = 0; b < 256; b++) {
        snprintf(bytes[b], sizeof bytes[b], "<0x%02X>", b);
        toks[nv] = bytes[b], types[nv++] = WGF_TOKEN_BYTE;
    }
    for (size_t k = 0; k < MAX_TOKENS && pos < size; k++) {
        const uint8_t *nl = memchr(data + pos, '\n', size - pos);
        size_t         n  = nl ? (size_t)(nl - (data + pos)) : size - pos;
        if (n == 0) { /* the empty line ends the tokens */
            pos++;
            break;
        }
        size_t sl = n - 1 < 4096 ? n - 1 : 4096;
        memcpy(lines[k], data + pos + 1, sl);
        lines[k][sl] = 0;
        char ty      = (char)data[pos];
        types[nv]    = ty == 'c' ? WGF_TOKEN_CONTROL : ty == 'u' ? WGF_TOKEN_USER_DEFINED : ty == 'k' ? WGF_TOKEN_UNKNOWN
                                                                                           : WGF_TOKEN_NORMAL;
        toks[nv++]   = lines[k];
        pos += n + (nl != NULL);
    }
    const uint8_t *text = data + (pos < size ? pos : size);
    size_t         len  = size - (pos < size ? pos : size);

    struct wgf_tok_spec spec;
    wgf_tok_spec_init(&spec);
    spec.model = WGF_TOK_MODEL_SPM, spec.n_tokens = nv, spec.tokens = toks, spec.types = types, spec.unk_id = 0;
    spec.source = "fuzz";
    struct wgf_tokenizer *t   = NULL;
    struct wgf_err        err = {0};
    enum wgf_status       st  = wgf_tokenizer_from_spec(&spec, &t, &err);
    if (st != WGF_OK) {
        fz_check_refusal(st, &err);
        return 0;
    }
    unsigned char *ok = masked ? malloc(len ? len : 1) : NULL;
    for (size_t i = 0; ok && i < len; i++) ok[i] = (unsigned char)(((i / period) & 1) == (size_t)!start);

    struct wgf__added_scan sc;
    FZ_REQUIRE(wgf__added_scan_init(&sc, t, (const char *)text, len, ps, ok, &err) == WGF_OK, "%s", err.msg);
    for (size_t i = 0; i < len;) {
        int32_t a = wgf__added_at(&sc, i), b = wgf__added_rule_at(t, (const char *)text, len, i, ps, ok);
        FZ_REQUIRE(a == b, "byte %zu of %zu: automaton %d, rule %d (parse_special %d, mask %d)", i, len, (int)a, (int)b,
                   ps, masked);
        i += b >= 0 ? t->ents[b].str_len : 1;
    }
    wgf__added_scan_free(&sc);

    int32_t *ids   = NULL;
    size_t   n     = 0;
    uint64_t steps = 0;
    st = wgf__tok_encode_counted(t, (const char *)text, len, ps ? WGF_TOK_PARSE_SPECIAL : 0, ok, &ids, &n, &steps, &err);
    FZ_REQUIRE(st == WGF_OK, "encode: %s", err.msg);
    FZ_REQUIRE(steps <= 5 * (uint64_t)len + 16384, "%llu automaton steps for %zu bytes", (unsigned long long)steps, len);
    for (size_t i = 0; i < n; i++) FZ_REQUIRE(ids[i] >= 0 && (size_t)ids[i] < nv, "id %d", (int)ids[i]);
    free(ids);
    free(ok);
    wgf_tokenizer_free(t);
    return 0;
}
