/* wgfuse util — IEEE binary16 and bfloat16 <-> binary32, the one copy every part uses (the
 * model loader, cpu-ref, the benchmarks' f16 kernels and their checks). Round to nearest
 * even; NaN stays NaN (quiet), overflow goes to inf, f16 subnormals are exact. */
#include <string.h>

#include "wgfuse/half.h"

static inline float as_f32(uint32_t x)
{
    float f;
    memcpy(&f, &x, 4);
    return f;
}
static inline uint32_t bits_of(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    return x;
}

float wgf_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, x;
    if (exp == 0) {
        float v = (float)mant * 5.9604644775390625e-8f; /* subnormal: mant * 2^-24 */
        return sign ? -v : v;
    }
    if (exp == 31) x = sign | 0x7f800000u | (mant << 13);
    else x = sign | ((exp + 112u) << 23) | (mant << 13); /* rebias 15 -> 127 */
    return as_f32(x);
}

uint16_t wgf_f32_to_f16(float f)
{
    uint32_t x = bits_of(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax   = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to inf */
    if (ax < 0x38800000u) {                                     /* below 2^-14: subnormal */
        if (ax < 0x33000000u) return sign;                      /* <= 2^-25 rounds to 0 */
        uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e; /* m * 2^(e-150) in units of 2^-24 */
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u))) q++;
        return (uint16_t)(sign | q);
    }
    uint32_t r = ax + 0xfffu + ((ax >> 13) & 1u); /* round to nearest even at bit 13 */
    r -= 0x38000000u;                             /* rebias 127 -> 15 */
    return (uint16_t)(sign | (r >> 13));
}

float wgf_bf16_to_f32(uint16_t h) { return as_f32((uint32_t)h << 16); }

uint16_t wgf_f32_to_bf16(float f)
{
    uint32_t x = bits_of(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
