/* wgfuse — ggml's quantized block formats: decoding for every type the loader keeps as
 * blocks, and ggml's reference quantizers for each of them (wgfuse llm quantize).
 *
 * The layouts below were read from ggml-org/ggml (ggml-common.h: the block structs;
 * ggml-quants.c: dequantize_row_* and quantize_row_*_ref) and re-derived per element;
 * this is our own code. All multi-byte fields are little-endian; "f16" is an IEEE half
 * converted exactly (wgfuse/half.h); offsets are bytes from the start of the block.
 *
 *   type  elems bytes  fields (offset: field)                         element e -> value
 *   Q4_0   32    18    0: d f16, 2: qs[16]                            q = nibble(e) in 0..15;  x = (q - 8) * d
 *   Q4_1   32    20    0: d f16, 2: m f16, 4: qs[16]                  x = q * d + m
 *   Q5_0   32    22    0: d f16, 2: qh u32, 6: qs[16]                 q = nibble(e) | bit e of qh << 4; x = (q - 16) * d
 *   Q5_1   32    24    0: d, 2: m, 4: qh u32, 8: qs[16]               x = q * d + m
 *   Q8_0   32    34    0: d f16, 2: qs int8[32]                       x = qs[e] * d
 *     nibble(e): low nibble of qs[e] for e < 16, high nibble of qs[e - 16] for e >= 16.
 *
 *   Super-blocks of 256 ("K-quants"):
 *   Q2_K  256    84    0: scales[16], 16: qs[64], 80: d f16, 82: dmin f16
 *         sub-block s = e/16 (16 of 16): sc = scales[s] & 15, mn = scales[s] >> 4;
 *         q = (qs[32*(e/128) + e%32] >> 2*((e%128)/32)) & 3;  x = (d*sc) * q - dmin*mn
 *   Q3_K  256   110    0: hmask[32], 32: qs[64], 96: scales[12] (16 x 6 bits), 108: d f16
 *         s = e/16: sc = (scales[s%8] >> 4*(s/8) & 15) | (scales[8 + s%4] >> 2*(s/4) & 3) << 4;
 *         lo = (qs[32*(e/128) + e%32] >> 2*((e%128)/32)) & 3;  hi = hmask[e%32] bit (e/32);
 *         x = (d * (sc - 32)) * (lo - (hi ? 0 : 4))
 *   Q4_K  256   144    0: d f16, 2: dmin f16, 4: scales[12] (8 x 6-bit scale + 6-bit min), 16: qs[128]
 *         s = e/32 (8 of 32): (sc, mn) = scale_min_k4(s) (below);
 *         q = qs[32*(s/2) + e%32] >> 4*(s%2) & 15;  x = (d*sc) * q - dmin*mn
 *   Q5_K  256   176    0: d, 2: dmin, 4: scales[12], 16: qh[32], 48: qs[128]
 *         as Q4_K, q += 16 when qh[e%32] has bit s set
 *   Q6_K  256   210    0: ql[128], 128: qh[64], 192: scales int8[16], 208: d f16
 *         h = e/128, k = (e%128)/32, l = e%32:
 *         q = (ql[64h + 32*(k%2) + l] >> 4*(k/2) & 15) | (qh[32h + l] >> 2k & 3) << 4;
 *         x = (d * scales[e/16]) * (q - 32)
 *   scale_min_k4(s), 12 bytes b: s < 4: sc = b[s] & 63, mn = b[s+4] & 63;
 *         s >= 4: sc = (b[s+4] & 15) | (b[s-4] >> 6) << 4, mn = (b[s+4] >> 4) | (b[s] >> 6) << 4.
 *
 * Rounding: every product and sum is one f32 operation in the order ggml's generic C code
 * writes it (parenthesised above), with no FMA contraction (ISO C mode): the values are
 * those of ggml's dequantize_row_* built without -ffp-contract=fast. A ggml build that
 * contracts `d1 * q - m1` into an fma (Q4_1, Q5_1, Q2_K, Q4_K, Q5_K) can differ in the last
 * bit of those terms. A NaN or Inf scale gives NaN/Inf weights, as in ggml. */
#include <math.h>
#include <string.h>

#include "llm/model_files.h"

/* The decoders are element-wise (one or two f32 operations per element, nothing
 * reassociated), so vectorising them cannot change a bit. GCC's -O2 does not vectorise
 * these loops; -O3 does (measured on the 2-vCPU dev VM: Q8_0 0.6 -> 2.8, Q4_0 0.9 -> 3.8,
 * Q4_K 1.1 -> 3.0 G elements/s; cpu-ref decode of a Q8_0 model 3x faster). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

static inline float h2f(const uint8_t *p) { return wgf_f16_to_f32((uint16_t)(p[0] | p[1] << 8)); }
static inline void  f2h(uint8_t *p, float f)
{
    uint16_t h = wgf_f32_to_f16(f);
    p[0]       = (uint8_t)h;
    p[1]       = (uint8_t)(h >> 8);
}
static inline uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* ---- decoders: one block -> its 32 or 256 floats ------------------------------------------ */

static void dec_q4_0(const uint8_t *b, float *y)
{
    float d = h2f(b);
    for (int j = 0; j < 16; j++) {
        y[j]      = (float)((b[2 + j] & 15) - 8) * d;
        y[j + 16] = (float)((b[2 + j] >> 4) - 8) * d;
    }
}

static void dec_q4_1(const uint8_t *b, float *y)
{
    float d = h2f(b), m = h2f(b + 2);
    for (int j = 0; j < 16; j++) {
        y[j]      = (float)(b[4 + j] & 15) * d + m;
        y[j + 16] = (float)(b[4 + j] >> 4) * d + m;
    }
}

/* the 5-bit values: element j (< 16) is the low nibble of qs[j], element j + 16 the high
 * one; bit e of qh is bit 4 of element e */
static void q5_values(const uint8_t *qs, uint32_t qh, int *q)
{
    for (int j = 0; j < 16; j++) {
        q[j]      = (qs[j] & 15) | (int)((qh >> j) & 1u) << 4;
        q[j + 16] = (qs[j] >> 4) | (int)((qh >> (j + 16)) & 1u) << 4;
    }
}

static void dec_q5_0(const uint8_t *b, float *y)
{
    float d = h2f(b);
    int   q[32];
    q5_values(b + 6, rd32(b + 2), q);
    for (int e = 0; e < 32; e++) y[e] = (float)(q[e] - 16) * d;
}

static void dec_q5_1(const uint8_t *b, float *y)
{
    float d = h2f(b), m = h2f(b + 2);
    int   q[32];
    q5_values(b + 8, rd32(b + 4), q);
    for (int e = 0; e < 32; e++) y[e] = (float)q[e] * d + m;
}

static void dec_q8_0(const uint8_t *b, float *y)
{
    float d = h2f(b);
    for (int e = 0; e < 32; e++) y[e] = (float)(int8_t)b[2 + e] * d;
}

static void dec_q2_k(const uint8_t *b, float *y)
{
    const uint8_t *sc = b, *qs = b + 16;
    float          d = h2f(b + 80), dmin = h2f(b + 82);
    for (int s = 0; s < 16; s++) { /* sub-block of 16: e = 16 s + i */
        float dl = d * (float)(sc[s] & 15), ml = dmin * (float)(sc[s] >> 4);
        int   h = s / 8, shift = 2 * ((s % 8) / 2), l0 = 16 * (s % 2);
        for (int i = 0; i < 16; i++) y[16 * s + i] = dl * (float)((qs[32 * h + l0 + i] >> shift) & 3) - ml;
    }
}

static int q3_scale(const uint8_t *sc12, int s)
{
    int lo = (sc12[s % 8] >> (4 * (s / 8))) & 15, hi = (sc12[8 + s % 4] >> (2 * (s / 4))) & 3;
    return (lo | hi << 4) - 32;
}

static void dec_q3_k(const uint8_t *b, float *y)
{
    const uint8_t *hm = b, *qs = b + 32, *sc = b + 96;
    float          d = h2f(b + 108);
    for (int s = 0; s < 16; s++) {
        float dl = d * (float)q3_scale(sc, s);
        int   h = s / 8, j = (s % 8) / 2, l0 = 16 * (s % 2); /* j: 2-bit plane within the half */
        for (int i = 0; i < 16; i++) {
            int l = l0 + i, lo = (qs[32 * h + l] >> (2 * j)) & 3, hi = (hm[l] >> (4 * h + j)) & 1;
            y[16 * s + i] = dl * (float)(lo - (hi ? 0 : 4));
        }
    }
}

static void scale_min_k4(const uint8_t *q, int s, int *sc, int *mn)
{
    if (s < 4) {
        *sc = q[s] & 63;
        *mn = q[s + 4] & 63;
    } else {
        *sc = (q[s + 4] & 15) | (q[s - 4] >> 6) << 4;
        *mn = (q[s + 4] >> 4) | (q[s] >> 6) << 4;
    }
}

/* Q4_K (qh == NULL) and Q5_K */
static void dec_q45_k(const uint8_t *b, const uint8_t *qh, const uint8_t *qs, float *y)
{
    float d = h2f(b), dmin = h2f(b + 2);
    for (int s = 0; s < 8; s++) {
        int sc, mn;
        scale_min_k4(b + 4, s, &sc, &mn);
        float          d1 = d * (float)sc, m1 = dmin * (float)mn;
        const uint8_t *q  = qs + 32 * (s / 2);
        int            sh = 4 * (s % 2);
        for (int l = 0; l < 32; l++) {
            int v = (q[l] >> sh) & 15;
            if (qh && (qh[l] >> s & 1)) v += 16;
            y[32 * s + l] = d1 * (float)v - m1;
        }
    }
}

static void dec_q4_k(const uint8_t *b, float *y) { dec_q45_k(b, NULL, b + 16, y); }
static void dec_q5_k(const uint8_t *b, float *y) { dec_q45_k(b, b + 16, b + 48, y); }

static void dec_q6_k(const uint8_t *b, float *y)
{
    const int8_t *sc = (const int8_t *)(b + 192);
    float         d  = h2f(b + 208);
    /* element e = 128 h + 32 k + l: low nibble from ql[64 h + 32 (k % 2) + l] (high half of
     * the byte when k >= 2), top two bits from bit pair k of qh[32 h + l] */
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < 4; k++) {
            const uint8_t *ql = b + 64 * h + 32 * (k % 2), *qh = b + 128 + 32 * h;
            float         *o  = y + 128 * h + 32 * k;
            float          d0 = d * (float)sc[8 * h + 2 * k], d1 = d * (float)sc[8 * h + 2 * k + 1]; /* l < 16, l >= 16 */
            for (int l = 0; l < 32; l++) {
                int q = ((ql[l] >> (4 * (k / 2))) & 15) | ((qh[l] >> (2 * k)) & 3) << 4;
                o[l]  = (l < 16 ? d0 : d1) * (float)(q - 32);
            }
        }
}

typedef void (*dec_fn)(const uint8_t *b, float *y);

/* the decoder and block size of t (kept here rather than asking dtype.c: no file cycle) */
static dec_fn decoder(enum wgf_dtype t, uint64_t *elems, uint64_t *bytes)
{
    struct d {
        dec_fn   f;
        uint64_t e, b;
    };
    struct d r = {NULL, 0, 0};
    switch (t) {
    case WGF_DT_Q4_0: r = (struct d){dec_q4_0, 32, 18}; break;
    case WGF_DT_Q4_1: r = (struct d){dec_q4_1, 32, 20}; break;
    case WGF_DT_Q5_0: r = (struct d){dec_q5_0, 32, 22}; break;
    case WGF_DT_Q5_1: r = (struct d){dec_q5_1, 32, 24}; break;
    case WGF_DT_Q8_0: r = (struct d){dec_q8_0, 32, 34}; break;
    case WGF_DT_Q2_K: r = (struct d){dec_q2_k, 256, 84}; break;
    case WGF_DT_Q3_K: r = (struct d){dec_q3_k, 256, 110}; break;
    case WGF_DT_Q4_K: r = (struct d){dec_q4_k, 256, 144}; break;
    case WGF_DT_Q5_K: r = (struct d){dec_q5_k, 256, 176}; break;
    case WGF_DT_Q6_K: r = (struct d){dec_q6_k, 256, 210}; break;
    default: break;
    }
    *elems = r.e;
    *bytes = r.b;
    return r.f;
}

void wgf__quant_decode(enum wgf_dtype t, const void *src, uint64_t nblocks, float *dst)
{
    uint64_t       be, bb;
    dec_fn         f = decoder(t, &be, &bb);
    const uint8_t *p = src;
    WGF_ASSERT(f != NULL);
    for (uint64_t i = 0; i < nblocks; i++) f(p + i * bb, dst + i * be);
}

/* ---- ggml's reference quantizers (quantize_row_*_ref), re-derived ---------------------------
 * Each writes the bytes ggml's reference writes for the same floats (f16 scales rounded to
 * nearest even, float -> int conversions truncating as C does; outside int's range, what
 * ggml's casts do on x86-64). */

/* float -> int as ggml's casts compile on x86-64 (cvttss2si: truncation toward zero, and
 * INT32_MIN for NaN or out of range; the callers then keep the low byte). Only a block of
 * values near FLT_MAX or below ~1e-38 leaves the range (1/d overflows, or x - min does);
 * there a plain C cast would be undefined. */
/* ---- int8 activations (--activations q8) ------------------------------------------------- */

void wgf__quant_round_q8(const float *x, float *y, uint64_t n)
{
    for (uint64_t b = 0; b + 32 <= n; b += 32) {
        uint32_t m = 0;
        for (uint64_t i = 0; i < 32; i++) {
            uint32_t v;
            memcpy(&v, &x[b + i], 4);
            v &= 0x7FFFFFFFu;
            if (v > m) m = v;
        }
        float d;
        memcpy(&d, &m, 4);
        d /= 127.0f; /* NaN or infinity stay so */
        float id = d > 0 ? 1.0f / d : 0.0f;
        for (uint64_t i = 0; i < 32; i++) {
            float q = nearbyintf(x[b + i] * id); /* NaN only when d is: then y is NaN anyway */
            q       = q > 127.0f ? 127.0f : q < -127.0f ? -127.0f : q;
            y[b + i] = d * (q == q ? q : 0.0f);
        }
    }
}

static inline int32_t trunc_x86(float v) { return v > -2147483648.0f && v < 2147483648.0f ? (int32_t)v : INT32_MIN; }

/* Q8_0: d = max|x| / 127, q = round(x / d) (half away from zero). */
static void enc_q8_0(const float *x, uint8_t *b)
{
    float amax = 0;
    for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(x[i]));
    float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
    f2h(b, d);
    for (int i = 0; i < 32; i++) b[2 + i] = (uint8_t)trunc_x86(roundf(x[i] * id));
}

/* The signed value of largest magnitude of x[0..n) (the first one on ties), as ggml picks it. */
static float signed_absmax(const float *x, int n)
{
    float amax = 0, max = 0;
    for (int i = 0; i < n; i++)
        if (amax < fabsf(x[i])) {
            amax = fabsf(x[i]);
            max  = x[i];
        }
    return max;
}

static inline int clamp_hi(int v, int hi) { return v > hi ? hi : v; }

/* Q4_0: d = max / -8 (so the extreme maps to q = 0), q = min(15, trunc(x/d + 8.5)). */
static void enc_q4_0(const float *x, uint8_t *b)
{
    float d = signed_absmax(x, 32) / -8.0f, id = d != 0 ? 1.0f / d : 0.0f;
    f2h(b, d);
    for (int j = 0; j < 16; j++) {
        int a = clamp_hi((int8_t)trunc_x86(x[j] * id + 8.5f), 15), c = clamp_hi((int8_t)trunc_x86(x[j + 16] * id + 8.5f), 15);
        b[2 + j] = (uint8_t)(a | c << 4);
    }
}

static void minmax(const float *x, float *mn, float *mx)
{
    *mn = 3.402823466e38f;
    *mx = -3.402823466e38f;
    for (int i = 0; i < 32; i++) {
        if (x[i] < *mn) *mn = x[i];
        if (x[i] > *mx) *mx = x[i];
    }
}

/* Q4_1: d = (max - min) / 15, m = min, q = min(15, trunc((x - min)/d + 0.5)). */
static void enc_q4_1(const float *x, uint8_t *b)
{
    float mn, mx;
    minmax(x, &mn, &mx);
    float d = (mx - mn) / 15.0f, id = d != 0 ? 1.0f / d : 0.0f;
    f2h(b, d);
    f2h(b + 2, mn);
    for (int j = 0; j < 16; j++) {
        int a = clamp_hi((int8_t)trunc_x86((x[j] - mn) * id + 0.5f), 15), c = clamp_hi((int8_t)trunc_x86((x[j + 16] - mn) * id + 0.5f), 15);
        b[4 + j] = (uint8_t)(a | c << 4);
    }
}

static void put_q5(uint8_t *qs, uint8_t *qh4, const int *q)
{
    uint32_t qh = 0;
    for (int j = 0; j < 16; j++) {
        qs[j] = (uint8_t)((q[j] & 15) | (q[j + 16] & 15) << 4);
        qh |= (uint32_t)(q[j] >> 4 & 1) << j | (uint32_t)(q[j + 16] >> 4 & 1) << (j + 16);
    }
    for (int i = 0; i < 4; i++) qh4[i] = (uint8_t)(qh >> (8 * i));
}

/* Q5_0: d = max / -16, q = min(31, trunc(x/d + 16.5)). */
static void enc_q5_0(const float *x, uint8_t *b)
{
    float d = signed_absmax(x, 32) / -16.0f, id = d != 0 ? 1.0f / d : 0.0f;
    int   q[32];
    f2h(b, d);
    for (int e = 0; e < 32; e++) q[e] = clamp_hi((int8_t)trunc_x86(x[e] * id + 16.5f), 31);
    put_q5(b + 6, b + 2, q);
}

/* Q5_1: d = (max - min) / 31, m = min, q = trunc((x - min)/d + 0.5) (<= 31 by construction). */
static void enc_q5_1(const float *x, uint8_t *b)
{
    float mn, mx;
    minmax(x, &mn, &mx);
    float d = (mx - mn) / 31.0f, id = d != 0 ? 1.0f / d : 0.0f;
    int   q[32];
    f2h(b, d);
    f2h(b + 2, mn);
    for (int e = 0; e < 32; e++) q[e] = (uint8_t)trunc_x86((x[e] - mn) * id + 0.5f);
    put_q5(b + 8, b + 4, q);
}

/* ---- k-quants: ggml's reference search (quantize_row_q{2,3,4,5,6}_K_ref, no importance matrix,
 * which is what llama-quantize runs without --imatrix) ------------------------------------ */

/* round to nearest, ties to even (ggml adds 1.5 * 2^23 and reads the mantissa: the same
 * for |v| < 2^22). Every caller clamps the result to a few bits; beyond 2^22 (a tiny f16
 * scale against a large weight, or Q3_K's iterative search dividing by a small positive
 * sum) ggml's trick returns garbage, here the value saturates (and NaN goes low), so the
 * conversion to int is always defined. */
static inline int round_ne(float v)
{
    if (!(v > -4194303.0f)) return -4194303;
    return v < 4194303.0f ? (int)rintf(v) : 4194303;
}

/* Affine fit of n values to q in [0, nmax] with x ~ scale * q - mn (mn >= 0 returned in
 * *mn): start from the min/max grid, then try nstep+1 stretched grids (nmax + rmin +
 * rdelta * k) and keep the (scale, min) of the best one by weighted squared error, or by
 * weighted absolute error when `mad` (Q2_K). Each grid's (scale, min) is its weighted
 * least-squares fit in both cases. q in L (n <= 32). */
static float fit_affine(int n, int nmax, const float *x, const float *w, uint8_t *L, float *mn, float rmin, float rdelta, int nstep,
                        bool mad)
{
    float lo = x[0], hi = x[0], sw = w[0], sx = sw * x[0];
    for (int i = 1; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
        sw += w[i];
        sx += w[i] * x[i];
    }
    if (lo > 0) lo = 0;
    if (hi == lo) {
        memset(L, 0, (size_t)n);
        *mn = -lo;
        return 0;
    }
    float inv = (float)nmax / (hi - lo), scale = 1 / inv, best = 0;
    for (int i = 0; i < n; i++) {
        int q = round_ne(inv * (x[i] - lo));
        L[i]  = (uint8_t)(q < 0 ? 0 : q > nmax ? nmax : q);
        float e = scale * (float)L[i] + lo - x[i];
        best += w[i] * (mad ? fabsf(e) : e * e);
    }
    uint8_t trial[32];
    for (int k = 0; k <= nstep; k++) {
        inv        = (rmin + rdelta * (float)k + (float)nmax) / (hi - lo);
        float sl = 0, sl2 = 0, sxl = 0;
        for (int i = 0; i < n; i++) {
            int q    = round_ne(inv * (x[i] - lo));
            q        = q < 0 ? 0 : q > nmax ? nmax : q;
            trial[i] = (uint8_t)q;
            sl += w[i] * (float)q;
            sl2 += w[i] * (float)q * (float)q;
            sxl += w[i] * (float)q * x[i];
        }
        float det = sw * sl2 - sl * sl;
        if (!(det > 0)) continue;
        float ts = (sw * sxl - sx * sl) / det, tm = (sl2 * sx - sl * sxl) / det;
        if (tm > 0) {
            tm = 0;
            ts = sxl / sl2;
        }
        float err = 0;
        for (int i = 0; i < n; i++) {
            float e = ts * (float)trial[i] + tm - x[i];
            err += w[i] * (mad ? fabsf(e) : e * e);
        }
        if (err < best) {
            memcpy(L, trial, (size_t)n);
            best  = err;
            scale = ts;
            lo    = tm;
        }
    }
    *mn = -lo;
    return scale;
}

/* Q4_K (nmax 15) / Q5_K (nmax 31): each 32-value sub-block gets an affine fit weighted by
 * rms + |x|; the 8 scales and 8 mins are quantized to 6 bits against the block's largest
 * (d = max scale / 63, dmin = max min / 63) and q is recomputed against the stored scales. */
static void enc_q45_k(const float *x, uint8_t *b, int nmax)
{
    uint8_t L[256];
    float   sc[8], mn[8], w[32], max_sc = 0, max_mn = 0;
    for (int s = 0; s < 8; s++) {
        const float *xs = x + 32 * s;
        float        s2 = 0;
        for (int l = 0; l < 32; l++) s2 += xs[l] * xs[l];
        float rms = sqrtf(s2 / 32);
        for (int l = 0; l < 32; l++) w[l] = rms + fabsf(xs[l]);
        sc[s] = nmax == 15 ? fit_affine(32, 15, xs, w, L + 32 * s, &mn[s], -1.0f, 0.1f, 20, false)
                           : fit_affine(32, 31, xs, w, L + 32 * s, &mn[s], -0.5f, 0.1f, 15, false);
        if (sc[s] > max_sc) max_sc = sc[s];
        if (mn[s] > max_mn) max_mn = mn[s];
    }
    float    isc = max_sc > 0 ? 63.0f / max_sc : 0.0f, imn = max_mn > 0 ? 63.0f / max_mn : 0.0f;
    uint8_t *k   = b + 4;
    memset(k, 0, 12);
    for (int s = 0; s < 8; s++) {
        /* ggml stores nearest_int() in a uint8_t, then caps at 63: negative values wrap first */
        uint8_t ls = (uint8_t)round_ne(isc * sc[s]), lm = (uint8_t)round_ne(imn * mn[s]);
        ls         = ls > 63 ? 63 : ls;
        lm         = lm > 63 ? 63 : lm;
        if (s < 4) {
            k[s]     = ls;
            k[s + 4] = lm;
        } else {
            k[s + 4] = (uint8_t)((ls & 15) | (lm & 15) << 4);
            k[s - 4] |= (uint8_t)((ls >> 4) << 6);
            k[s] |= (uint8_t)((lm >> 4) << 6);
        }
    }
    f2h(b, max_sc / 63.0f);
    f2h(b + 2, max_mn / 63.0f);
    float d = h2f(b), dmin = h2f(b + 2);
    for (int s = 0; s < 8; s++) {
        int qs, qm;
        scale_min_k4(k, s, &qs, &qm);
        float ds = d * (float)qs;
        if (ds == 0) continue; /* keeps the fit's q, as ggml does */
        float dm = dmin * (float)qm;
        for (int l = 0; l < 32; l++) {
            int q         = round_ne((x[32 * s + l] + dm) / ds);
            L[32 * s + l] = (uint8_t)(q < 0 ? 0 : q > nmax ? nmax : q);
        }
    }
    uint8_t *qh = nmax == 31 ? b + 16 : NULL, *qs = b + (nmax == 31 ? 48 : 16);
    if (qh) memset(qh, 0, 32);
    for (int s = 0; s < 8; s += 2)
        for (int l = 0; l < 32; l++) {
            int a = L[32 * s + l], c = L[32 * (s + 1) + l];
            if (qh) qh[l] |= (uint8_t)((a >> 4) << s | (c >> 4) << (s + 1));
            qs[16 * s + l] = (uint8_t)((a & 15) | (c & 15) << 4);
        }
}

static void enc_q4_k(const float *x, uint8_t *b) { enc_q45_k(x, b, 15); }
static void enc_q5_k(const float *x, uint8_t *b) { enc_q45_k(x, b, 31); }

#define SMALLEST_MAX 1e-15f /* ggml's GROUP_MAX_EPS: below it a group counts as all zero */

/* 16 values on the symmetric grid q = round(inv * x) clamped to [lo, hi]; the x^2-weighted
 * sums sum(w x q) and sum(w q^2) of the least-squares scale slx / sl2. */
static void sym_grid(const float *x, float inv, int lo, int hi, int *q, float *slx, float *sl2)
{
    float a = 0, b = 0;
    for (int i = 0; i < 16; i++) {
        int v = round_ne(inv * x[i]);
        q[i]  = v < lo ? lo : v > hi ? hi : v;
        float w = x[i] * x[i];
        a += w * x[i] * (float)q[i];
        b += w * (float)q[i] * (float)q[i];
    }
    *slx = a, *sl2 = b;
}

/* Symmetric fit of 16 values to q in [-32, 31], weighted by x^2: the grid through the
 * value of largest magnitude, then 18 nearby grids (-(32 + 0.1 k) / max, k = +-1..9),
 * keeping the best least-squares scale. q + 32 in L. */
static float fit_symmetric(const float *x, uint8_t *L)
{
    float max = signed_absmax(x, 16);
    if (fabsf(max) < SMALLEST_MAX) {
        memset(L, 0, 16);
        return 0;
    }
    int   q[16], best_q[16];
    float slx, sl2;
    sym_grid(x, -32.0f / max, -32, 31, best_q, &slx, &sl2);
    float scale = sl2 != 0 ? slx / sl2 : 0.0f, best = scale * slx;
    for (int k = -9; k <= 9; k++) {
        if (k == 0) continue;
        sym_grid(x, -(32.0f + 0.1f * (float)k) / max, -32, 31, q, &slx, &sl2);
        if (sl2 > 0 && slx * slx > best * sl2) {
            memcpy(best_q, q, sizeof q);
            scale = slx / sl2;
            best  = scale * slx;
        }
    }
    for (int i = 0; i < 16; i++) L[i] = (uint8_t)(best_q[i] + 32);
    return scale;
}

/* Q6_K: 16 sub-blocks of 16 with a symmetric fit each; the int8 sub-scales are the fits
 * quantized against the one of largest magnitude (d = that / -128), then q is recomputed
 * against the stored scales. */
static void enc_q6_k(const float *x, uint8_t *b)
{
    uint8_t L[256];
    float   sc[16];
    for (int s = 0; s < 16; s++) sc[s] = fit_symmetric(x + 16 * s, L + 16 * s);
    float max_sc = signed_absmax(sc, 16);
    memset(b, 0, 210);
    if (fabsf(max_sc) < SMALLEST_MAX) return; /* all zero, d = +0 */
    float inv = -128.0f / max_sc;
    f2h(b + 208, 1 / inv);
    float d = h2f(b + 208);
    for (int s = 0; s < 16; s++) {
        int v      = round_ne(inv * sc[s]);
        b[192 + s] = (uint8_t)(int8_t)(v > 127 ? 127 : v);
        float ds   = d * (float)(int8_t)b[192 + s];
        if (ds == 0) continue;
        for (int i = 0; i < 16; i++) {
            int q           = round_ne(x[16 * s + i] / ds);
            L[16 * s + i] = (uint8_t)((q < -32 ? -32 : q > 31 ? 31 : q) + 32);
        }
    }
    for (int h = 0; h < 2; h++)
        for (int l = 0; l < 32; l++) {
            const uint8_t *q = L + 128 * h + l; /* elements l, l+32, l+64, l+96 of this half */
            b[64 * h + l]      = (uint8_t)((q[0] & 15) | (q[64] & 15) << 4);
            b[64 * h + 32 + l] = (uint8_t)((q[32] & 15) | (q[96] & 15) << 4);
            b[128 + 32 * h + l] = (uint8_t)(q[0] >> 4 | (q[32] >> 4) << 2 | (q[64] >> 4) << 4 | (q[96] >> 4) << 6);
        }
}

/* ---- Q2_K and Q3_K (quantize_row_q2_K_ref, quantize_row_q3_K_ref) ------------------------- */

/* 2-bit values of one 256-block into qs[64]: byte 32 h + l holds elements 128 h + l + 32 k
 * in bits 2k, 2k+1 (k = 0..3), as the decoders read them. */
static void put_2bit(const uint8_t *L, uint8_t *qs)
{
    for (int h = 0; h < 2; h++)
        for (int l = 0; l < 32; l++) {
            const uint8_t *q = L + 128 * h + l;
            qs[32 * h + l]   = (uint8_t)(q[0] | q[32] << 2 | q[64] << 4 | q[96] << 6);
        }
}

/* Q2_K: each 16-value sub-block gets the affine fit of Q4_K's (q in 0..3, weights |x|,
 * grids nmax - 0.5 + 0.1 k for k = 0..15, chosen by weighted absolute error); the 16 scales
 * and 16 mins are quantized to 4 bits against the block's largest (d = max scale / 15,
 * dmin = max min / 15), and q is recomputed against the stored scales. */
static void enc_q2_k(const float *x, uint8_t *b)
{
    uint8_t L[256];
    float   sc[16], mn[16], w[16], max_sc = 0, max_mn = 0;
    for (int s = 0; s < 16; s++) {
        const float *xs = x + 16 * s;
        for (int l = 0; l < 16; l++) w[l] = fabsf(xs[l]);
        sc[s] = fit_affine(16, 3, xs, w, L + 16 * s, &mn[s], -0.5f, 0.1f, 15, true);
        if (sc[s] > max_sc) max_sc = sc[s];
        if (mn[s] > max_mn) max_mn = mn[s];
    }
    memset(b, 0, 84);
    if (max_sc > 0) {
        float inv = 15.0f / max_sc;
        /* stored through a uint8_t as ggml does (a negative fit scale would wrap) */
        for (int s = 0; s < 16; s++) b[s] = (uint8_t)round_ne(inv * sc[s]);
        f2h(b + 80, max_sc / 15.0f);
    }
    if (max_mn > 0) {
        float inv = 15.0f / max_mn;
        for (int s = 0; s < 16; s++) b[s] |= (uint8_t)((unsigned)round_ne(inv * mn[s]) << 4);
        f2h(b + 82, max_mn / 15.0f);
    }
    float d = h2f(b + 80), dmin = h2f(b + 82);
    for (int s = 0; s < 16; s++) {
        float ds = d * (float)(b[s] & 15);
        if (ds == 0) continue; /* keeps the fit's q, as ggml does */
        float dm = dmin * (float)(b[s] >> 4);
        for (int i = 0; i < 16; i++) {
            int q         = round_ne((x[16 * s + i] + dm) / ds);
            L[16 * s + i] = (uint8_t)(q < 0 ? 0 : q > 3 ? 3 : q);
        }
    }
    put_2bit(L, b + 16);
}

/* Symmetric fit of 16 values to q in [-4, 3], weighted by x^2: the grid through the value
 * of largest magnitude (-4 / max), then up to 5 passes that move single q to the value
 * the current least-squares scale prefers, keeping a move when it lowers the weighted
 * error (raises sum(w x q)^2 / sum(w q^2)). q + 4 in L; an all-zero group gets L = 0. */
static float fit_q3(const float *x, uint8_t *L)
{
    float max = signed_absmax(x, 16);
    if (fabsf(max) < SMALLEST_MAX) {
        memset(L, 0, 16);
        return 0;
    }
    int   q[16];
    float slx, sl2;
    sym_grid(x, -4.0f / max, -4, 3, q, &slx, &sl2);
    for (int pass = 0; pass < 5; pass++) {
        int moved = 0;
        for (int i = 0; i < 16; i++) {
            float w = x[i] * x[i], s1 = slx - w * x[i] * (float)q[i];
            if (!(s1 > 0)) continue;
            float s2 = sl2 - w * (float)q[i] * (float)q[i];
            int   v  = round_ne(x[i] * s2 / s1);
            v        = v < -4 ? -4 : v > 3 ? 3 : v;
            if (v == q[i]) continue;
            s1 += w * x[i] * (float)v;
            s2 += w * (float)v * (float)v;
            if (s2 > 0 && s1 * s1 * sl2 > slx * slx * s2) {
                q[i] = v, slx = s1, sl2 = s2;
                moved++;
            }
        }
        if (!moved) break;
    }
    for (int i = 0; i < 16; i++) L[i] = (uint8_t)(q[i] + 4);
    return slx / sl2;
}

/* Q3_K: 16 sub-blocks of 16 with fit_q3 each; the 6-bit sub-scales (stored + 32) are the
 * fits quantized against the one of largest magnitude (d = that / -32), then q is
 * recomputed against the stored scales; bit 2 of q + 4 goes to hmask. */
static void enc_q3_k(const float *x, uint8_t *b)
{
    uint8_t L[256];
    float   sc[16];
    for (int s = 0; s < 16; s++) sc[s] = fit_q3(x + 16 * s, L + 16 * s);
    float max_sc = signed_absmax(sc, 16);
    memset(b, 0, 110);
    uint8_t *hm = b, *k = b + 96;
    if (max_sc != 0) {
        float inv = -32.0f / max_sc;
        for (int s = 0; s < 16; s++) {
            int v = round_ne(inv * sc[s]); /* |v| <= 32: |sc| <= |max_sc| */
            v     = (v < -32 ? -32 : v > 31 ? 31 : v) + 32;
            k[s % 8] |= (uint8_t)((v & 15) << 4 * (s / 8));
            k[8 + s % 4] |= (uint8_t)((v >> 4) << 2 * (s / 4));
        }
        f2h(b + 108, 1 / inv);
    }
    float d = h2f(b + 108);
    for (int s = 0; s < 16; s++) {
        float ds = d * (float)q3_scale(k, s);
        if (ds == 0) continue; /* keeps the fit's q, as ggml does */
        for (int i = 0; i < 16; i++) {
            int q         = round_ne(x[16 * s + i] / ds);
            L[16 * s + i] = (uint8_t)((q < -4 ? -4 : q > 3 ? 3 : q) + 4);
        }
    }
    for (int e = 0; e < 256; e++)
        if (L[e] > 3) {
            hm[e % 32] |= (uint8_t)(1u << (e / 32));
            L[e] -= 4;
        }
    put_2bit(L, b + 32);
}

bool wgf__quant_can_encode(enum wgf_dtype t)
{
    return t == WGF_DT_Q8_0 || t == WGF_DT_Q4_0 || t == WGF_DT_Q4_1 || t == WGF_DT_Q5_0 || t == WGF_DT_Q5_1 ||
           t == WGF_DT_Q2_K || t == WGF_DT_Q3_K || t == WGF_DT_Q4_K || t == WGF_DT_Q5_K || t == WGF_DT_Q6_K;
}

void wgf__quant_encode(enum wgf_dtype t, const float *src, uint64_t nblocks, void *dst)
{
    void (*f)(const float *, uint8_t *) = t == WGF_DT_Q8_0   ? enc_q8_0
                                          : t == WGF_DT_Q4_0 ? enc_q4_0
                                          : t == WGF_DT_Q4_1 ? enc_q4_1
                                          : t == WGF_DT_Q5_0 ? enc_q5_0
                                          : t == WGF_DT_Q5_1 ? enc_q5_1
                                          : t == WGF_DT_Q2_K ? enc_q2_k
                                          : t == WGF_DT_Q3_K ? enc_q3_k
                                          : t == WGF_DT_Q4_K ? enc_q4_k
                                          : t == WGF_DT_Q5_K ? enc_q5_k
                                          : t == WGF_DT_Q6_K ? enc_q6_k
                                                             : NULL;
    uint64_t be, bb;
    WGF_ASSERT(f != NULL && decoder(t, &be, &bb) != NULL);
    uint8_t *o = dst;
    for (uint64_t i = 0; i < nblocks; i++) f(src + be * i, o + i * bb);
}
