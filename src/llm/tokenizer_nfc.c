/* wgfuse — Unicode NFC for tokenizer.json's {"type": "NFC"} normalizer (Qwen2), through ICU
 * (Debian's libicu-dev, a build dependency installed by scripts/setup.sh).
 * Checked against transformers.js on Qwen3's tokenizer.json: with NFC the ids of
 * decomposed text ("e" + U+0301) match; without it they differ exactly there. */
#include <stdlib.h>
#include <string.h>
#include <unicode/unorm2.h>

#include "llm/tokenizer_internal.h"

/* ICU's NFC singleton (owned by ICU, valid for the process), or NULL if ICU's data is
 * unusable. */
static const UNormalizer2 *nfc_instance(void)
{
    UErrorCode e = U_ZERO_ERROR;
    const UNormalizer2 *n = unorm2_getNFCInstance(&e);
    return U_SUCCESS(e) ? n : NULL;
}

bool wgf__nfc_available(void) { return nfc_instance() != NULL; }

/* UTF-8 (valid) -> UTF-16; returns units written (cap ≥ 2 * n suffices). */
static size_t to_utf16(const unsigned char *s, size_t n, UChar *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t   k = wgf__utf8_next(s + i, n - i, &cp);
        i += k;
        if (cp >= 0x10000) {
            cp -= 0x10000;
            out[o++] = (UChar)(0xD800 | (cp >> 10));
            out[o++] = (UChar)(0xDC00 | (cp & 0x3FF));
        } else {
            out[o++] = (UChar)cp;
        }
    }
    return o;
}

static size_t from_utf16(const UChar *u, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t cp = u[i];
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < n && u[i + 1] >= 0xDC00 && u[i + 1] <= 0xDFFF)
            cp = 0x10000 + ((cp - 0xD800) << 10) + (u[++i] - 0xDC00u);
        o += wgf__utf8_put(cp, out + o);
    }
    return o;
}

/* NFC of one run of valid UTF-8, appended at out + *o (capacity checked by the caller:
 * NFC at most triples the UTF-16 length, each unit at most 3 bytes of UTF-8). */
static enum wgf_status nfc_run(const unsigned char *s, size_t n, char *out, size_t *o, struct wgf_err *err)
{
    size_t u16b;
    if (n > INT32_MAX / 8 || !wgf_mul_size(n, 8 * sizeof(UChar), &u16b))
        return wgf_fail(err, WGF_ERR_LIMIT, "tokenizer: text of %zu bytes too long for NFC", n);
    UChar *src = malloc(u16b);
    if (!src) return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for NFC");
    const UNormalizer2 *nfc = nfc_instance();
    UChar     *dst = src + 2 * n;
    size_t     ns  = to_utf16(s, n, src);
    UErrorCode e   = U_ZERO_ERROR;
    if (unorm2_isNormalized(nfc, src, (int32_t)ns, &e) && U_SUCCESS(e)) {
        memcpy(out + *o, s, n);
        *o += n;
        free(src);
        return WGF_OK;
    }
    e          = U_ZERO_ERROR;
    int32_t nd = unorm2_normalize(nfc, src, (int32_t)ns, dst, (int32_t)(6 * n), &e);
    if (U_FAILURE(e) || nd < 0) {
        free(src);
        return wgf_fail(err, WGF_ERR_INTERNAL, "tokenizer: ICU NFC failed (%d)", (int)e);
    }
    *o += from_utf16(dst, (size_t)nd, out + *o);
    free(src);
    return WGF_OK;
}

enum wgf_status wgf__nfc(const char *text, size_t len, char **out, size_t *out_len, struct wgf_err *err)
{
    *out = NULL;
    const unsigned char *s = (const unsigned char *)text;
    size_t               i = 0;
    while (i < len && s[i] < 0x80) i++;
    if (i == len) return WGF_OK; /* ASCII is NFC: nothing to do */
    if (!wgf__nfc_available())
        return wgf_fail(err, WGF_ERR_INTERNAL, "tokenizer: ICU's NFC normalizer is unavailable (ICU data missing?)");
    size_t cap;
    if (!wgf_mul_size(len, 9, &cap) || !wgf_add_size(cap, 1, &cap))
        return wgf_fail(err, WGF_ERR_LIMIT, "tokenizer: text of %zu bytes too long for NFC", len);
    char *buf = malloc(cap);
    if (!buf) return wgf_fail(err, WGF_ERR_NOMEM, "tokenizer: out of memory for NFC");
    size_t o = 0;
    /* Runs of valid UTF-8 are normalized; invalid bytes pass through where they stand. */
    for (size_t p = 0; p < len;) {
        size_t   q = p;
        uint32_t cp;
        size_t   k;
        while (q < len && (k = wgf__utf8_next(s + q, len - q, &cp)) > 0) q += k;
        if (q > p) {
            enum wgf_status st = nfc_run(s + p, q - p, buf, &o, err);
            if (st) {
                free(buf);
                return st;
            }
        }
        if (q < len) buf[o++] = (char)s[q++];
        p = q;
    }
    buf[o]   = '\0';
    *out     = buf;
    *out_len = o;
    return WGF_OK;
}
