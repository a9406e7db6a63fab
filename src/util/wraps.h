/* wgfuse — arithmetic that wraps on purpose.
 *
 * Hashes and random-number generators rely on unsigned arithmetic modulo 2^64. The
 * integer-sanitizer build (make test-tsan compiles the parsers and tokenizer with
 * -fsanitize=integer, RELIABILITY.md b) reports every unsigned wrap; functions marked
 * WGF_WRAPS are the ones where wrapping is the intent, so any other report is a finding. */
#ifndef WGF_UTIL_WRAPS_H
#define WGF_UTIL_WRAPS_H
#include <stddef.h>
#include <stdint.h>

#if defined(__clang__)
#define WGF_WRAPS __attribute__((no_sanitize("unsigned-integer-overflow", "unsigned-shift-base")))
#else
#define WGF_WRAPS
#endif

/* 64-bit finalizer (MurmurHash3's fmix64): a well-mixed hash of one key. */
WGF_WRAPS static inline uint64_t wgf__mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* FNV-1a over n bytes. */
WGF_WRAPS static inline uint64_t wgf__fnv1a(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t             h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull;
    return h;
}
#endif
