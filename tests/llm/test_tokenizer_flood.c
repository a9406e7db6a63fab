/* Algorithmic attacks on the tokenizer (issue 11), bounded by operation counts, not wall
 * time:
 *  - a vocabulary crafted so that every string lands in one bucket of the old unkeyed
 *    FNV-1a map (8,191 strings: 33.5M probes to build and ~4k per lookup before): with the
 *    keyed SipHash-1-3 map the probes a successful lookup of every key takes, summed, stay
 *    <= 2 per key and no lookup takes more than 64;
 *  - 200,000 added tokens and a 60,000-byte prompt of '<' runs and near-misses: the
 *    added-token automaton takes at most 5 steps per prompt byte + 16,384
 *    (tokenizer_added.c), where the old scan compared up to 200,000 tokens per '<';
 *  - the automaton against the old scan's rule on crafted cases (longest wins, lowest id
 *    on a tie, USER_DEFINED vs CONTROL inside and outside template scaffolding, a token
 *    longer than the text, tokens across a chunk boundary). fuzz/fuzz_added_tokens.c does
 *    the same comparison on arbitrary inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "llm/tokenizer_internal.h"
#include "test_tokenizer_util.h"

static struct wgf_tokenizer *build(const char *const *extra, const int32_t *types, size_t n_extra, struct wgf_err *e)
{
    return tt_spm_bytes(extra, types, NULL, n_extra, "flood", e);
}

/* ---- the old unkeyed map: FNV-1a, h ^ h >> 29, masked --------------------------------------- */

#define FNV_PRIME 0x100000001b3ull

/* Strings "cNNN" + 4 letters whose old hash lands in slot 0 of a map of `mask + 1` slots:
 * prefix states are reused, so each try costs one multiply. */
static size_t craft(char (*out)[16], size_t want, uint64_t mask)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t            got  = 0;
    for (unsigned pre = 0; got < want && pre < 4096; pre++) {
        char p[8];
        snprintf(p, sizeof p, "c%03u", pre);
        uint64_t h0 = 0xcbf29ce484222325ull;
        for (int i = 0; i < 4; i++) h0 = (h0 ^ (unsigned char)p[i]) * FNV_PRIME;
        for (int a = 0; a < 64 && got < want; a++) {
            uint64_t h1 = (h0 ^ (unsigned char)al[a]) * FNV_PRIME;
            for (int b = 0; b < 64 && got < want; b++) {
                uint64_t h2 = (h1 ^ (unsigned char)al[b]) * FNV_PRIME;
                for (int c = 0; c < 64 && got < want; c++) {
                    uint64_t h3 = (h2 ^ (unsigned char)al[c]) * FNV_PRIME;
                    for (int d = 0; d < 64 && got < want; d++) {
                        uint64_t h = (h3 ^ (unsigned char)al[d]) * FNV_PRIME;
                        if (((h ^ (h >> 29)) & mask) == 0) snprintf(out[got++], 16, "%s%c%c%c%c", p, al[a], al[b], al[c], al[d]);
                    }
                }
            }
        }
    }
    return got;
}

static void crafted_vocabulary(struct wgf_t *t)
{
    /* 8,191 strings + 257 = 8,448 entries: the old capacity 32,768 (mask 0x7fff) */
    enum { N = 8191 };
    static char  s[N][16];
    const char  *p[N];
    size_t       got = craft(s, N, 0x7fff);
    for (size_t i = 0; i < got; i++) p[i] = s[i];
    if (!wgf_t_check(t, got == N, "crafted: 8,191 strings in one bucket of the old FNV-1a map", "%zu found", got)) return;
    struct wgf_err        e  = {0};
    struct wgf_tokenizer *tk = build(p, NULL, N, &e);
    if (!wgf_t_check(t, tk != NULL, "crafted vocabulary builds", "%s", e.msg)) return;
    struct wgf__map_stats st;
    wgf__idmap_stats(&tk->by_str, tk->ents, &st);
    double old = (double)got * (double)(got + 1) / 2;
    wgf_t_check(t, st.n == N + 257 && st.probes <= 2 * st.n && st.max_probes <= 64,
                "crafted vocabulary: keyed map probes <= 2 per key, <= 64 per lookup",
                "%zu keys: %zu probes (%.2f per key), longest %zu; the old map: %.0f probes", st.n, st.probes,
                (double)st.probes / (double)st.n, st.max_probes, old);
    /* tokenizing the crafted strings themselves: every merge lookup is one of those probes */
    char *text = malloc((size_t)N * 9 + 1);
    size_t len = 0;
    for (size_t i = 0; i < N; i++) len += (size_t)snprintf(text + len, (size_t)N * 9 + 1 - len, "%.8s ", s[i]);
    int32_t *ids = NULL;
    size_t   n   = 0;
    bool     ok  = wgf_tokenizer_encode(tk, text, len, false, &ids, &n, &e) == WGF_OK && n >= N;
    wgf_t_check(t, ok, "crafted vocabulary: its own strings tokenize", "%zu ids: %s", n, e.msg);
    free(ids), free(text);
    wgf_tokenizer_free(tk);
}

/* Walk the text as the encoder does, comparing every decision; returns mismatches. */
static int compare(const struct wgf_tokenizer *t, const char *text, size_t len, bool ps, const unsigned char *ok,
                   char *why, size_t cap)
{
    struct wgf__added_scan sc;
    struct wgf_err         e = {0};
    if (wgf__added_scan_init(&sc, t, text, len, ps, ok, &e) != WGF_OK) return snprintf(why, cap, "%.100s", e.msg), 1;
    int bad = 0;
    for (size_t i = 0; i < len;) {
        int32_t a = wgf__added_at(&sc, i), b = wgf__added_rule_at(t, text, len, i, ps, ok);
        if (a != b && !bad++) snprintf(why, cap, "at byte %zu: automaton %d, rule %d", i, (int)a, (int)b);
        i += b >= 0 ? t->ents[b].str_len : 1;
        if (a != b) break;
    }
    wgf__added_scan_free(&sc);
    return bad;
}

static void rule_cases(struct wgf_t *t)
{
    static const char *const tok[] = {"<|a|>", "<|a|>x", "<|", "a|>", "<|a|>", "ab", "b", "<|a|>x"};
    static const int32_t     ty[]  = {WGF_TOKEN_CONTROL,      WGF_TOKEN_USER_DEFINED, WGF_TOKEN_USER_DEFINED,
                                      WGF_TOKEN_CONTROL,      WGF_TOKEN_USER_DEFINED, WGF_TOKEN_CONTROL,
                                      WGF_TOKEN_USER_DEFINED, WGF_TOKEN_CONTROL};
    struct wgf_err        e = {0};
    struct wgf_tokenizer *tk = build(tok, ty, 8, &e);
    if (!wgf_t_check(t, tk != NULL, "rule cases: vocabulary builds", "%s", e.msg)) return;
    static const char text[] = "<|a|>x<|a|><|a|ab<|a|>xb<|ab<|a|>";
    size_t            len    = sizeof text - 1;
    unsigned char     ok[sizeof text];
    int               bad = 0;
    char              why[160] = "";
    for (int m = 0; m < 6 && !bad; m++) {
        for (size_t i = 0; i < len; i++) ok[i] = (unsigned char)(m < 2 ? 0 : m < 4 ? (i / 3) & 1 : (i % 5) != 0);
        bad += compare(tk, text, len, m & 1, m >= 2 ? ok : NULL, why, sizeof why);
    }
    wgf_t_check(t, !bad, "rule cases: longest, lowest id, USER_DEFINED vs CONTROL, scaffolding masks", "%s", why);
    wgf_tokenizer_free(tk);

    /* tokens of 4,000 bytes across the 16,384-position chunk boundary, and one longer
     * than the text */
    static char big[3][4001];
    memset(big[0], 'q', 4000), memset(big[1], 'q', 3999), memset(big[2], 'r', 4000);
    big[1][3998] = 's';
    const char   *bt[3] = {big[0], big[1], big[2]};
    const int32_t bty[3] = {WGF_TOKEN_USER_DEFINED, WGF_TOKEN_CONTROL, WGF_TOKEN_USER_DEFINED};
    tk                   = build(bt, bty, 3, &e);
    if (!wgf_t_check(t, tk != NULL, "long tokens: vocabulary builds", "%s", e.msg)) return;
    static char long_text[40000];
    for (size_t i = 0; i < sizeof long_text; i++) long_text[i] = (i % 9001) < 8990 ? 'q' : (i % 2 ? 's' : 'r');
    bad = compare(tk, long_text, sizeof long_text, true, NULL, why, sizeof why) +
          compare(tk, long_text, sizeof long_text, false, NULL, why, sizeof why) +
          compare(tk, long_text, 3000, true, NULL, why, sizeof why);
    wgf_t_check(t, !bad, "long tokens across chunk boundaries and past the end of the text", "%s", why);
    wgf_tokenizer_free(tk);
}

static void added_flood(struct wgf_t *t)
{
    enum { N = 200000 };
    static char  s[N][12];
    const char **p  = malloc(N * sizeof *p);
    int32_t     *ty = malloc(N * sizeof *ty);
    for (size_t i = 0; i < N; i++) {
        snprintf(s[i], sizeof s[i], "<t%06zu>", i);
        p[i] = s[i], ty[i] = WGF_TOKEN_CONTROL;
    }
    struct wgf_err        e  = {0};
    struct wgf_tokenizer *tk = build(p, ty, N, &e);
    free(p), free(ty);
    if (!wgf_t_check(t, tk != NULL, "added flood: 200,000 added tokens build", "%s", e.msg)) return;
    /* 60,000 bytes: '<' runs, near misses from both ends ("<t12345", "<x123456>": the
     * automaton runs over reversed strings, so the second kind walks deep) and every 100th
     * a real token */
    enum { LEN = 60000 };
    static char text[LEN + 16];
    size_t      len = 0, real = 0;
    for (size_t k = 0; len < LEN; k++) {
        if (k % 100 == 0) len += (size_t)sprintf(text + len, "<t%06zu>", (k * 7919) % N), real++;
        else if (k % 3 == 0) len += (size_t)sprintf(text + len, "<<<<");
        else if (k % 3 == 1) len += (size_t)sprintf(text + len, "<x%06zu>", k % N);
        else len += (size_t)sprintf(text + len, "<t%05zu", k % 100000);
    }
    for (int ps = 0; ps < 2; ps++) {
        uint64_t steps = 0;
        int32_t *ids   = NULL;
        size_t   n     = 0;
        enum wgf_status st = wgf__tok_encode_counted(tk, text, len, ps ? WGF_TOK_PARSE_SPECIAL : 0, NULL, &ids, &n, &steps, &e);
        size_t found = 0;
        for (size_t i = 0; st == WGF_OK && i < n; i++) found += ids[i] >= 257;
        char name[128];
        snprintf(name, sizeof name, "added flood, %s: <= 5 automaton steps per byte + 16384",
                 ps ? "parse_special" : "specials as text");
        wgf_t_check(t, st == WGF_OK && steps <= 5 * (uint64_t)len + 16384 && found == (ps ? real : 0),
                    name, "%zu bytes: %llu steps (%.2f per byte), %zu added tokens matched; the old scan: up to %d "
                    "comparisons per '<'",
                    len, (unsigned long long)steps, (double)steps / (double)len, found, N);
        free(ids);
    }
    /* and the decisions are the old rule's, checked on a prefix (the rule costs N per byte) */
    char why[160] = "";
    wgf_t_check(t, compare(tk, text, 400, true, NULL, why, sizeof why) == 0, "added flood: automaton == the old rule on 400 bytes",
                "%s", why);
    wgf_tokenizer_free(tk);
}

int main(void)
{
    struct wgf_t t = {0};
    crafted_vocabulary(&t);
    rule_cases(&t);
    added_flood(&t);
    return wgf_t_finish(&t);
}
