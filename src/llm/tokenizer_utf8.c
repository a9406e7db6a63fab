/* wgfuse — UTF-8 helpers for the tokenizer: strict decoding (prompts may be any bytes)
 * and GPT-2's byte-level alphabet. Unicode classes themselves come from PCRE2. */
#include "llm/tokenizer_internal.h"

size_t wgf__utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (n == 0) return 0;
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t   need;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2, v = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3, v = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0; /* continuation byte, C0/C1 (always overlong), F5..FF */
    }
    if (n < need) return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return need;
}

size_t wgf__utf8_put(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

bool wgf__utf8_is_prefix(const unsigned char *s, size_t n)
{
    if (n == 0) return true;
    unsigned c = s[0];
    size_t   need;
    if (c >= 0xC2 && c <= 0xDF)
        need = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        need = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        need = 4;
    else
        return false;
    if (n >= need) return false;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return false;
    /* The second byte is further restricted for E0 (no overlong), ED (no surrogates),
     * F0 (no overlong) and F4 (≤ U+10FFFF). */
    if (n >= 2) {
        unsigned d = s[1];
        if (c == 0xE0 && d < 0xA0) return false;
        if (c == 0xED && d > 0x9F) return false;
        if (c == 0xF0 && d < 0x90) return false;
        if (c == 0xF4 && d > 0x8F) return false;
    }
    return true;
}

/* GPT-2's bytes_to_unicode: printable Latin-1 bytes (!..~, ¡..¬, ®..ÿ) stand for
 * themselves; the other 68 bytes, in increasing order, take U+0100, U+0101, ... so every
 * byte is a visible character (space is U+0120 'Ġ', newline U+010A 'Ċ'). */
static bool bytelevel_printable(unsigned b)
{
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

uint32_t wgf__bytelevel_cp(unsigned b)
{
    if (bytelevel_printable(b)) return b;
    uint32_t n = 0;
    for (unsigned i = 0; i < b; i++)
        if (!bytelevel_printable(i)) n++;
    return 0x100 + n;
}

int wgf__bytelevel_byte(uint32_t cp)
{
    if (cp < 0x100) return bytelevel_printable(cp) ? (int)cp : -1;
    if (cp >= 0x100 + 68) return -1;
    uint32_t n = cp - 0x100;
    for (unsigned b = 0; b < 256; b++) {
        if (bytelevel_printable(b)) continue;
        if (n == 0) return (int)b;
        n--;
    }
    return -1;
}
