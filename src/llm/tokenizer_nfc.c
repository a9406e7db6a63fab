/* wgfuse — Unicode NFC for tokenizer.json's {"type": "NFC"} normalizer (Qwen2), through ICU.
 *
 * ICU is loaded with dlopen rather than linked: the build does not require it, and
 * without it (headers absent at build time, or libicuuc missing at run time) NFC is
 * skipped, which changes ids only for text that is not already NFC (decomposed accents
 * such as "e" + U+0301). wgf__nfc_available() says which case holds.
 * Checked against transformers.js on Qwen3's tokenizer.json: with NFC the ids of
 * decomposed text match; without it they differ exactly there. */
#include <stdlib.h>
#include <string.h>

#include "llm/tokenizer_internal.h"

#if defined(__has_include)
#if __has_include(<unicode/unorm2.h>) && __has_include(<dlfcn.h>) && __has_include(<pthread.h>)
#define WGF__HAVE_ICU_HEADERS 1
#endif
#endif

#ifdef WGF__HAVE_ICU_HEADERS
#include <dlfcn.h>
#include <pthread.h>
#include <unicode/unorm2.h>
#include <unicode/uvernum.h>

/* ICU renames every C symbol with its major version (unorm2_normalize_72); the macros of
 * its headers give the exact names for the version built against. */
#define WGF__STR_(x) #x
#define WGF__STR(x)  WGF__STR_(x)
#define WGF__ICU_SONAME "libicuuc.so." WGF__STR(U_ICU_VERSION_MAJOR_NUM)

static struct {
    const UNormalizer2 *nfc;
    UBool (*is_normalized)(const UNormalizer2 *, const UChar *, int32_t, UErrorCode *);
    int32_t (*normalize)(const UNormalizer2 *, const UChar *, int32_t, UChar *, int32_t, UErrorCode *);
} icu;
static pthread_once_t icu_once = PTHREAD_ONCE_INIT;

static void icu_load(void)
{
    void *h = dlopen(WGF__ICU_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    const UNormalizer2 *(*get)(UErrorCode *);
    *(void **)&get                = dlsym(h, WGF__STR(unorm2_getNFCInstance));
    *(void **)&icu.is_normalized  = dlsym(h, WGF__STR(unorm2_isNormalized));
    *(void **)&icu.normalize      = dlsym(h, WGF__STR(unorm2_normalize));
    UErrorCode e                  = U_ZERO_ERROR;
    const UNormalizer2 *n         = get && icu.is_normalized && icu.normalize ? get(&e) : NULL;
    if (n && U_SUCCESS(e)) icu.nfc = n; /* the library stays loaded for the process */
}

bool wgf__nfc_available(void)
{
    pthread_once(&icu_once, icu_load);
    return icu.nfc != NULL;
}

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
    UChar     *dst = src + 2 * n;
    size_t     ns  = to_utf16(s, n, src);
    UErrorCode e   = U_ZERO_ERROR;
    if (icu.is_normalized(icu.nfc, src, (int32_t)ns, &e) && U_SUCCESS(e)) {
        memcpy(out + *o, s, n);
        *o += n;
        free(src);
        return WGF_OK;
    }
    e          = U_ZERO_ERROR;
    int32_t nd = icu.normalize(icu.nfc, src, (int32_t)ns, dst, (int32_t)(6 * n), &e);
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
    if (i == len || !wgf__nfc_available()) return WGF_OK; /* ASCII is NFC: nothing to do */
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

#else /* no ICU headers at build time */

bool wgf__nfc_available(void) { return false; }

enum wgf_status wgf__nfc(const char *text, size_t len, char **out, size_t *out_len, struct wgf_err *err)
{
    (void)text, (void)len, (void)out_len, (void)err;
    *out = NULL;
    return WGF_OK;
}

#endif
