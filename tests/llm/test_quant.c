/* Quantized blocks (issue 14): ggml's block types decode exactly, in files and in cpu-ref.
 *
 * Independent of src/llm/quant.c: every block here is packed by this file from chosen
 * quantized values and scales, following the layouts of ggml-common.h as documented in
 * quant.c's header (the packers write bytes; the decoder under test reads them), and the
 * expected floats come from the per-type formula applied to those chosen values, with the
 * f32 operations in ggml's order. Checks, per type (Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K..Q6_K):
 *   - hand-worked literal blocks (values worked out by hand in the comments);
 *   - the extremes: all-zero block (and its sign: (0-8)*0 is -0.0 in Q4_0), negative-zero,
 *     largest (65504) and subnormal (2^-24) f16 scales, NaN and Inf scales;
 *   - 300 random blocks per type, bit-exact;
 *   - a GGUF round trip (writer -> reader: type id, shape, byte size and bytes);
 *   - the simple types' quantizers: on values exactly representable in a block they
 *     round-trip exactly, and |x - dequant(quant(x))| stays within half a step; every
 *     quantizer's RMS error on Gaussian rows against the D/sqrt(12) of its grid, and the
 *     2-4 bit ones against the best global quantizer of a Gaussian (Max 1960);
 *   - Q2_K and Q3_K's quantizers: grid values round-trip exactly, all-zero sub-blocks stay
 *     zero, and 64 shaped blocks encode to ggml's bytes (a hash of its reference output);
 *   - cpu-ref logits of a small Llama whose matrices use every type (a mixed file, as
 *     Q4_K_M is) against the same model with each matrix written as F32 from the
 *     expected floats: tolerance 0, because cpu-ref decodes one row into f32 and runs the
 *     same dot product over the same floats in the same order as for an F32 row, so any
 *     difference is a decoding error (and the GGUF Llama q/k permutation moves whole
 *     quantized rows, which this model exercises). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "llm/gguf.h"
#include "llm/model_files.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_run.h"
#include "test_quant_blocks.h"

/* f16 bit patterns, by hand */
#define H_ONE    0x3c00u /* 1.0    */
#define H_HALF   0x3800u /* 0.5    */
#define H_QUART  0x3400u /* 0.25   */
#define H_EIGHTH 0x3000u /* 0.125  */
#define H_TWO    0x4000u /* 2.0    */
#define H_MONE   0xbc00u /* -1.0   */
#define H_MAX    0x7bffu /* 65504  */
#define H_SUB    0x0001u /* 2^-24  */
#define H_NZERO  0x8000u /* -0.0   */
#define H_NAN    0x7e00u
#define H_INF    0x7c00u


static bool same_bits(float a, float b) { return memcmp(&a, &b, 4) == 0 || (isnan(a) && isnan(b)); }

/* decode one block with the code under test and compare every element with expect_elem */
static bool check_block(struct wgf_t *t, const struct qtype *qt, const struct qblock *b, const char *what, bool report_pass)
{
    uint8_t blk[256];
    float   got[256];
    pack(qt->dt, b, blk);
    wgf__quant_decode(qt->dt, blk, 1, got);
    for (int e = 0; e < qt->elems; e++) {
        float want = expect_elem(qt->dt, b, e);
        if (!same_bits(got[e], want))
            return wgf_t_check(t, false, what, "%s element %d: got %.9g, expected %.9g", wgf_dtype_str(qt->dt), e, got[e], want);
    }
    if (report_pass) wgf_t_check(t, true, what, "%s: %d elements bit-exact", wgf_dtype_str(qt->dt), qt->elems);
    return true;
}


/* ---- hand-worked literal blocks ------------------------------------------------------- */

struct lit {
    int   e;
    float x;
};

static void literal(struct wgf_t *t, enum wgf_dtype dt, const uint8_t *blk, const struct lit *l, int n)
{
    float got[256];
    wgf__quant_decode(dt, blk, 1, got);
    char nm[64];
    snprintf(nm, sizeof nm, "literal %s", wgf_dtype_str(dt));
    for (int i = 0; i < n; i++)
        if (!same_bits(got[l[i].e], l[i].x)) {
            wgf_t_check(t, false, nm, "element %d: got %.9g, worked out by hand %.9g", l[i].e, got[l[i].e], l[i].x);
            return;
        }
    wgf_t_check(t, true, nm, "%d hand-worked elements", n);
}

static void literals(struct wgf_t *t)
{
    uint8_t b[256];
    /* Q4_0, d = 0.5: qs[0] = 0x1F: e0 = (15-8)*0.5 = 3.5, e16 = (1-8)*0.5 = -3.5 */
    memset(b, 0, sizeof b), wr16(b, H_HALF), b[2] = 0x1F;
    literal(t, WGF_DT_Q4_0, b, (struct lit[]){{0, 3.5f}, {16, -3.5f}, {1, -4.0f}}, 3);
    /* Q4_1, d = 0.25, m = -1: qs[3] = 0xA2: e3 = 2*0.25-1 = -0.5, e19 = 10*0.25-1 = 1.5, e0 = -1 */
    memset(b, 0, sizeof b), wr16(b, H_QUART), wr16(b + 2, H_MONE), b[4 + 3] = 0xA2;
    literal(t, WGF_DT_Q4_1, b, (struct lit[]){{3, -0.5f}, {19, 1.5f}, {0, -1.0f}}, 3);
    /* Q5_0, d = 1, qh = 0x80000001, qs[15] = 0xF0: e0 = (0|16)-16 = 0, e16 = -16,
     * e15 = 0-16 = -16, e31 = (15|16)-16 = 15 */
    memset(b, 0, sizeof b), wr16(b, H_ONE), b[2] = 0x01, b[5] = 0x80, b[6 + 15] = 0xF0;
    literal(t, WGF_DT_Q5_0, b, (struct lit[]){{0, 0.0f}, {16, -16.0f}, {15, -16.0f}, {31, 15.0f}}, 4);
    /* Q5_1, d = 0.5, m = 2, qh bit 16 set, qs[0] = 0x03: e0 = 3*0.5+2 = 3.5, e16 = 16*0.5+2 = 10 */
    memset(b, 0, sizeof b), wr16(b, H_HALF), wr16(b + 2, H_TWO), b[4 + 2] = 0x01, b[8] = 0x03;
    literal(t, WGF_DT_Q5_1, b, (struct lit[]){{0, 3.5f}, {16, 10.0f}, {1, 2.0f}}, 3);
    /* Q8_0, d = 0.125: qs[5] = -128 -> -16, qs[6] = 127 -> 15.875 */
    memset(b, 0, sizeof b), wr16(b, H_EIGHTH), b[2 + 5] = 0x80, b[2 + 6] = 0x7F;
    literal(t, WGF_DT_Q8_0, b, (struct lit[]){{5, -16.0f}, {6, 15.875f}}, 2);
    /* Q2_K, d = 1, dmin = 0.5; qs[0] = 0xE4 holds q 0,1,2,3 of e0, e32, e64, e96 (shifts 0,2,4,6);
     * scales[0] = 0x21 (sc 1, mn 2): e0 = 1*0 - 0.5*2 = -1; scales[2] = 0x15 (sc 5, mn 1):
     * e32 = 5*1 - 0.5 = 4.5; scales[4] = 0: e64 = 0; scales[6] = 0x02: e96 = 2*3 = 6;
     * qs[48] = 0x03 is e144 (second half, l = 16, sub-block 9), scales[9] = 0xF3 (sc 3, mn 15):
     * 3*3 - 0.5*15 = 1.5 */
    memset(b, 0, sizeof b), b[0] = 0x21, b[2] = 0x15, b[6] = 0x02, b[9] = 0xF3, b[16] = 0xE4, b[16 + 48] = 0x03;
    wr16(b + 80, H_ONE), wr16(b + 82, H_HALF);
    literal(t, WGF_DT_Q2_K, b, (struct lit[]){{0, -1.0f}, {32, 4.5f}, {64, 0.0f}, {96, 6.0f}, {144, 1.5f}}, 5);
    /* Q3_K, d = 2: scale 0 = (scales[0] & 15 | (scales[8] & 3) << 4) - 32 = 1 - 32 = -31;
     * e0: qs 0, hmask bit clear -> q = -4: (2*-31)*-4 = 248; e1: qs[1] = 3, hmask[1] bit 0
     * set -> q = 3: -186; scale 15 = (scales[7] >> 4 | (scales[11] >> 6) << 4) - 32 = 63-32 = 31;
     * e255 (half 1, plane 3, l 31): qs[32+31] >> 6 = 2, hmask[31] bit 7 set -> q = 2: 124 */
    memset(b, 0, sizeof b), b[0] = 0xFF, b[1] = 0x01, b[31] = 0x80, b[32 + 1] = 0x03, b[32 + 63] = 0x80;
    b[96 + 0] = 0x01, b[96 + 7] = 0xF0, b[96 + 11] = 0xC0, wr16(b + 108, H_TWO);
    /* hmask[0] = 0xFF: e0 gets hi = 1 -> q = 0 instead: (2*-31)*0 = -0.0; e32 (plane 1, hi set,
     * lo 0, scale 2 = 0 - 32) is (2*-32)*0 = -0.0 */
    literal(t, WGF_DT_Q3_K, b, (struct lit[]){{0, -0.0f}, {1, -186.0f}, {255, 124.0f}, {32, -0.0f}}, 4);
    b[0] = 0x00; /* now e0 has hi clear: q = -4 -> 248 */
    literal(t, WGF_DT_Q3_K, b, (struct lit[]){{0, 248.0f}}, 1);
    /* Q4_K, d = 1, dmin = 1: scales b[4..15]: k[0] = 0x45 (sc0 5, top bits 1 for sc4),
     * k[4] = 0x82 (mn0 2, top bits 2 for mn4), k[1] = 0x01 (sc1 1), k[8] = 0x37:
     * sc4 = 7 | 1<<4 = 23, mn4 = 3 | 2<<4 = 35. qs[0] = 0x9C: e0 = 5*12 - 2 = 58,
     * e32 = 1*9 - 0 = 9; qs[64] = 0x0A: e128 (sub-block 4) = 23*10 - 35 = 195 */
    memset(b, 0, sizeof b), wr16(b, H_ONE), wr16(b + 2, H_ONE);
    b[4 + 0] = 0x45, b[4 + 4] = 0x82, b[4 + 1] = 0x01, b[4 + 8] = 0x37, b[16] = 0x9C, b[16 + 64] = 0x0A;
    literal(t, WGF_DT_Q4_K, b, (struct lit[]){{0, 58.0f}, {32, 9.0f}, {128, 195.0f}}, 3);
    /* Q5_K: the same scales; qh[0] = 0x01 adds 16 to e0 only: 5*28 - 2 = 138, e32 stays 9 */
    memset(b, 0, sizeof b), wr16(b, H_ONE), wr16(b + 2, H_ONE);
    b[4 + 0] = 0x45, b[4 + 4] = 0x82, b[4 + 1] = 0x01, b[4 + 8] = 0x37, b[16] = 0x01, b[48] = 0x9C, b[48 + 64] = 0x0A;
    literal(t, WGF_DT_Q5_K, b, (struct lit[]){{0, 138.0f}, {32, 9.0f}, {128, 195.0f}}, 3);
    /* Q6_K, d = 0.5: scales[0] = -3, scales[15] = 127; ql[0] = 0x0F, qh[0] = 0x02:
     * e0 = (15 | 2<<4) - 32 = 15 -> (0.5*-3)*15 = -22.5; e255 (ql[127] >> 4 = 0, qh[63] >> 6 = 0)
     * -> q = -32: (0.5*127)*-32 = -2032 */
    memset(b, 0, sizeof b), b[0] = 0x0F, b[128] = 0x02, b[192] = 0xFD, b[192 + 15] = 0x7F, wr16(b + 208, H_HALF);
    literal(t, WGF_DT_Q6_K, b, (struct lit[]){{0, -22.5f}, {255, -2032.0f}}, 2);
}

/* ---- extremes ------------------------------------------------------------------------- */

static void extremes(struct wgf_t *t)
{
    /* all-zero bytes: the sign of zero follows the formula: Q4_0 (0-8)*0, Q5_0 (0-16)*0 and
     * Q6_K (0*0)*(0-32) give -0.0; Q3_K (0*-32)*(0-4) = (-0)*(-4) = +0; the rest +0 */
    for (int i = 0; i < NQT; i++) {
        uint8_t zero[256] = {0};
        float   got[256];
        wgf__quant_decode(QT[i].dt, zero, 1, got);
        bool neg = QT[i].dt == WGF_DT_Q4_0 || QT[i].dt == WGF_DT_Q5_0 || QT[i].dt == WGF_DT_Q6_K, ok = true;
        for (int e = 0; e < QT[i].elems; e++) ok = ok && got[e] == 0.0f && (signbit(got[e]) != 0) == neg;
        char nm[64];
        snprintf(nm, sizeof nm, "all-zero block %s", wgf_dtype_str(QT[i].dt));
        wgf_t_check(t, ok, nm, "every element %s0.0", neg ? "-" : "+");
    }
    /* scales at the edges, through the formula check with random q */
    static const uint32_t ds[] = {H_MAX, H_SUB, H_NZERO, H_NAN, H_INF, 0x8001u /* -2^-24 */, 0x03ffu /* largest subnormal */};
    static const char *const dn[] = {"max 65504", "subnormal 2^-24", "-0.0", "NaN", "Inf", "-2^-24", "subnormal 0x03ff"};
    struct wgf_rng r;
    wgf_rng_seed(&r, 7);
    for (int i = 0; i < NQT; i++)
        for (size_t k = 0; k < sizeof ds / sizeof ds[0]; k++) {
            struct qblock b;
            random_block(&r, QT[i].dt, 1.0f, &b);
            b.d = ds[k];
            b.m = ds[(k + 1) % (sizeof ds / sizeof ds[0])];
            char nm[96];
            snprintf(nm, sizeof nm, "scale %s %s", dn[k], wgf_dtype_str(QT[i].dt));
            check_block(t, &QT[i], &b, nm, true);
        }
    /* the largest magnitudes each type can produce, by hand: Q8_0 -128 * 65504 = -8384512;
     * Q4_0 (0-8) * 65504 = -524032; Q6_K (65504 * -128) * -32 = 268304384 */
    uint8_t b[256] = {0};
    float   got[256];
    wr16(b, H_MAX), b[2] = 0x80;
    wgf__quant_decode(WGF_DT_Q8_0, b, 1, got);
    wgf_t_check(t, got[0] == -8384512.0f, "extreme q8_0", "got %.9g", got[0]);
    memset(b, 0, sizeof b), wr16(b, H_MAX);
    wgf__quant_decode(WGF_DT_Q4_0, b, 1, got);
    wgf_t_check(t, got[31] == -524032.0f, "extreme q4_0", "got %.9g", got[31]);
    memset(b, 0, sizeof b), b[192 + 3] = 0x80, wr16(b + 208, H_MAX);
    wgf__quant_decode(WGF_DT_Q6_K, b, 1, got);
    wgf_t_check(t, got[48] == 268304384.0f, "extreme q6_k", "got %.9g", got[48]);
}

/* ---- random blocks, bit-exact --------------------------------------------------------- */

static void random_blocks(struct wgf_t *t)
{
    struct wgf_rng r;
    wgf_rng_seed(&r, 14);
    for (int i = 0; i < NQT; i++) {
        bool ok = true;
        char nm[64];
        snprintf(nm, sizeof nm, "300 random blocks %s", wgf_dtype_str(QT[i].dt));
        for (int k = 0; k < 300 && ok; k++) {
            struct qblock b;
            random_block(&r, QT[i].dt, ldexpf(1.0f, rnd(&r, -20, 4)), &b);
            ok = check_block(t, &QT[i], &b, nm, false);
        }
        if (ok) wgf_t_check(t, true, nm, "bit-exact");
        /* the table the loader uses agrees with this file's block sizes */
        snprintf(nm, sizeof nm, "block size %s", wgf_dtype_str(QT[i].dt));
        wgf_t_check(t, wgf_dtype_block_elems(QT[i].dt) == QT[i].elems && wgf_dtype_block_bytes(QT[i].dt) == QT[i].bytes, nm,
                    "%d elements in %d bytes", wgf_dtype_block_elems(QT[i].dt), wgf_dtype_block_bytes(QT[i].dt));
        /* row access and single elements go through the same decoder */
        struct qblock b;
        random_block(&r, QT[i].dt, 0.01f, &b);
        uint8_t           two[512];
        struct wgf_tensor tv = {.dtype = QT[i].dt, .n_dims = 2, .shape = {2, QT[i].elems, 1, 1}, .data = two, .nbytes = 2u * (unsigned)QT[i].bytes};
        pack(QT[i].dt, &b, two);
        pack(QT[i].dt, &b, two + QT[i].bytes);
        float row[256];
        wgf_tensor_row_f32(&tv, 1, row);
        int e = rnd(&r, 0, QT[i].elems - 1);
        snprintf(nm, sizeof nm, "row and element access %s", wgf_dtype_str(QT[i].dt));
        wgf_t_check(t, same_bits(row[e], expect_elem(QT[i].dt, &b, e)) && same_bits(wgf_tensor_get_f32(&tv, QT[i].elems + e), row[e]),
                    nm, "element %d", e);
    }
}

/* ---- quantizers (the simple types) ---------------------------------------------------- */

static void quantizers(struct wgf_t *t)
{
    static const enum wgf_dtype qd[] = {WGF_DT_Q8_0, WGF_DT_Q4_0, WGF_DT_Q4_1, WGF_DT_Q5_0, WGF_DT_Q5_1};
    struct wgf_rng              r;
    wgf_rng_seed(&r, 3);
    for (size_t i = 0; i < sizeof qd / sizeof qd[0]; i++) {
        char nm[96];
        snprintf(nm, sizeof nm, "quantizer %s exists", wgf_dtype_str(qd[i]));
        if (!wgf_t_check(t, wgf__quant_can_encode(qd[i]), nm, "wgf__quant_can_encode")) continue;
        /* values on the grid of a power-of-two step (every f16 product exact) come back exactly
         * when the block holds the extremes that make the quantizer choose that step:
         * Q8_0 step = max/127 -> x = q * 2^-4 with max 127 * 2^-4; Q4_0 d = max/-8 with max = -8 * 2^-3
         * (x = (q-8) * 2^-3 for q in 0..15); Q5_0 likewise with -16; Q4_1 d = (max-min)/15 with min 0,
         * max 15 * 2^-2; Q5_1 with 31 */
        double worst = 0;
        bool   exact = true;
        for (int k = 0; k < 200; k++) {
            float x[32], y[32];
            int   lo = 0, hi = 0, off = 0;
            float step = 0;
            switch (qd[i]) {
            case WGF_DT_Q8_0: lo = -127, hi = 127, step = 0x1p-4f; break;
            case WGF_DT_Q4_0: lo = 0, hi = 15, off = 8, step = 0x1p-3f; break;
            case WGF_DT_Q5_0: lo = 0, hi = 31, off = 16, step = 0x1p-3f; break;
            case WGF_DT_Q4_1: lo = 0, hi = 15, step = 0x1p-2f; break;
            default: lo = 0, hi = 31, step = 0x1p-2f; break;
            }
            for (int e = 0; e < 32; e++) x[e] = (float)(rnd(&r, lo, hi) - off) * step;
            /* pin the values that define the step: Q8_0 max|x| = 127 step; Q4_0/Q5_0 the most
             * negative value -8 / -16 step (larger in magnitude than any positive one: 7 / 15
             * step); Q4_1/Q5_1 min 0 and max 15 / 31 step */
            x[3] = (float)(qd[i] == WGF_DT_Q8_0 ? hi : lo - off) * step;
            if (qd[i] == WGF_DT_Q4_1 || qd[i] == WGF_DT_Q5_1) x[20] = (float)hi * step;
            uint8_t blk[64];
            wgf__quant_encode(qd[i], x, 1, blk);
            wgf__quant_decode(qd[i], blk, 1, y);
            for (int e = 0; e < 32; e++) exact = exact && x[e] == y[e];
            /* uniform values: error within half a step plus the f16 rounding of d (2^-11
             * relative, times the largest q) and of m; Q4_0/Q5_0 clamp q at 15 / 31, so the
             * value opposite the block's extreme can be off by a whole step (as in ggml) */
            float amax = 0, mn = INFINITY, mx = -INFINITY;
            for (int e = 0; e < 32; e++) {
                x[e] = (float)rnd(&r, -100000, 100000) * 1e-5f;
                amax = fmaxf(amax, fabsf(x[e])), mn = fminf(mn, x[e]), mx = fmaxf(mx, x[e]);
            }
            wgf__quant_encode(qd[i], x, 1, blk);
            wgf__quant_decode(qd[i], blk, 1, y);
            float full = qd[i] == WGF_DT_Q8_0 ? amax / 127 : qd[i] == WGF_DT_Q4_0 ? amax / 8 : qd[i] == WGF_DT_Q5_0 ? amax / 16
                       : qd[i] == WGF_DT_Q4_1 ? (mx - mn) / 15 : (mx - mn) / 31;
            for (int e = 0; e < 32; e++) {
                double half  = qd[i] == WGF_DT_Q4_0 || qd[i] == WGF_DT_Q5_0 ? 1.0 : 0.5;
                double bound = half * full + full * 32 * 0x1p-11 + (fabsf(mn) + amax) * 0x1p-11;
                double ex    = fabs((double)x[e] - y[e]) - bound;
                if (ex > worst) worst = ex;
            }
        }
        snprintf(nm, sizeof nm, "quantizer %s: grid values exact", wgf_dtype_str(qd[i]));
        wgf_t_check(t, exact, nm, "dequant(quant(x)) == x");
        snprintf(nm, sizeof nm, "quantizer %s: error within half a step", wgf_dtype_str(qd[i]));
        wgf_t_check(t, worst <= 0, nm, "worst excess %.3g", worst);
    }
    wgf_t_check(t, !wgf__quant_can_encode(WGF_DT_F32), "quantizer: none for f32", "f32 is not a block type");
}

/* ---- quantizers (Q2_K, Q3_K) ---------------------------------------------------------------- */

/* Inputs for the ggml comparison: exact floats (integers times powers of two, no libm), 64
 * blocks cycling through shapes that reach every branch of the searches: sums of four
 * uniforms (near-Gaussian), one-signed rows (Q2_K's min 0, Q3_K's positive max), sparse rows
 * with all-zero sub-blocks, an outlier, values near 2^-30 and 2^10, and a constant row. */
static void golden_input(float *x, int nblocks)
{
    struct wgf_rng r;
    wgf_rng_seed(&r, 0x23);
    for (int b = 0; b < nblocks; b++)
        for (int i = 0; i < 256; i++) {
            int32_t g = 0;
            for (int k = 0; k < 4; k++) g += (int32_t)wgf_rng_below(&r, 1u << 16);
            float v = ldexpf((float)(g - (1 << 17)), -16); /* (-2, 2), bell-shaped */
            switch (b % 8) {
            case 1: v = fabsf(v); break;
            case 2: v = -fabsf(v) * 3; break;
            case 3: v = (i / 16) % 3 == 0 ? 0.0f : wgf_rng_below(&r, 10) ? 0.0f : v; break;
            case 4: v = i == 77 ? 40.0f : v * 0.01f; break;
            case 5: v = ldexpf(v, -30); break;
            case 6: v = ldexpf(v, 10); break;
            case 7: v = (i / 16) % 4 == 1 ? 0.75f : v; break;
            default: break;
            }
            x[b * 256 + i] = v;
        }
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void kquantizers(struct wgf_t *t)
{
    /* FNV-1a of the bytes ggml-org/ggml d99724f's quantize_row_q2_K_ref / _q3_K_ref write for
     * golden_input's 64 blocks (its code built with gcc -O2 -ffp-contract=off, 2026-12-02) */
    static const struct {
        enum wgf_dtype dt;
        uint64_t       ggml;
    } gold[] = {{WGF_DT_Q2_K, 0x5abc7fc2b6f2af0dull}, {WGF_DT_Q3_K, 0x0799bbd8c495743bull}};
    static float   x[64 * 256], y[64 * 256];
    static uint8_t blk[64 * 110];
    golden_input(x, 64);
    for (size_t k = 0; k < sizeof gold / sizeof gold[0]; k++) {
        enum wgf_dtype dt = gold[k].dt;
        char           nm[96];
        snprintf(nm, sizeof nm, "quantizer %s exists", wgf_dtype_str(dt));
        if (!wgf_t_check(t, wgf__quant_can_encode(dt), nm, "wgf__quant_can_encode")) continue;
        wgf__quant_encode(dt, x, 64, blk);
        uint64_t h = fnv1a(blk, 64 * (size_t)wgf_dtype_block_bytes(dt));
        snprintf(nm, sizeof nm, "quantizer %s: ggml's bytes on 64 shaped blocks", wgf_dtype_str(dt));
        wgf_t_check(t, h == gold[k].ggml, nm, "FNV-1a %016llx, ggml's %016llx", (unsigned long long)h, (unsigned long long)gold[k].ggml);
        /* the all-zero sub-blocks of the sparse rows (block 3: sub-blocks 0, 3, 6, ...) come back zero */
        wgf__quant_decode(dt, blk, 64, y);
        bool zero = true;
        for (int i = 0; i < 256; i++)
            if ((i / 16) % 3 == 0) zero = zero && y[3 * 256 + i] == 0.0f;
        snprintf(nm, sizeof nm, "quantizer %s: all-zero sub-blocks stay zero", wgf_dtype_str(dt));
        wgf_t_check(t, zero, nm, "block 3");
    }

    /* Hand-worked blocks: sub-block 0 holds values on the block's grid, the other 15 are zero.
     * Q3_K: x_e = (e % 8 - 4) / 4 for e < 16. Sub-block 0's fit is 1/4 (the grid through
     * -4 * 1/4), the others 0; d = f16(-(1/4) / 32) = -2^-7 = 0xA000, and the stored 6-bit
     * scales (value + 32) are 0 for sub-block 0 and 32 (binary 10 0000) for the rest:
     * scales[0..7] = 0 (low nibbles), scales[8 + j] holds bits 2 of sub-blocks j, j+4, j+8,
     * j+12 at bit pairs 0, 2, 4, 6: 0xA8 for j = 0 (sub-block 0 contributes 00), else 0xAA.
     * q + 4 = e % 8: hmask[e] bit 0 set for e % 8 >= 4, qs[e] = e % 4. */
    {
        uint8_t want[110] = {0}, got[110];
        for (int e = 0; e < 16; e++) {
            x[e]     = (float)(e % 8 - 4) / 4.0f;
            want[e]  = (uint8_t)(e % 8 >= 4);
            want[32 + e] = (uint8_t)(e % 4);
        }
        for (int e = 16; e < 256; e++) x[e] = 0.0f;
        want[96 + 8] = 0xA8, want[96 + 9] = want[96 + 10] = want[96 + 11] = 0xAA, want[108] = 0x00, want[109] = 0xA0;
        wgf__quant_encode(WGF_DT_Q3_K, x, 1, got);
        int bad = -1;
        for (int i = 0; i < 110 && bad < 0; i++) bad = got[i] != want[i] ? i : -1;
        wgf_t_check(t, bad < 0, "quantizer q3_k: hand-worked block", bad < 0 ? "110 bytes as worked out" : "byte %d: 0x%02x, worked out 0x%02x",
                    bad, bad < 0 ? 0 : got[bad], bad < 0 ? 0 : want[bad]);
    }
    /* Q2_K: x_e = (e % 4 - 1) * 15/16 for e < 16 (q = e % 4, scale 15/16, min 15/16). The fit
     * is that scale and min; both are the block's largest, so their 4-bit codes are 15
     * (scales[0] = 0xFF), d = dmin = f16((15/16) / 15) = 2^-4 = 0x2C00; the zero sub-blocks
     * code 0. qs[e] = e % 4 (bits 0-1: elements 0..31 of the first half). */
    {
        uint8_t want[84] = {0}, got[84];
        for (int e = 0; e < 16; e++) x[e] = (float)(e % 4 - 1) * 0.9375f, want[16 + e] = (uint8_t)(e % 4);
        for (int e = 16; e < 256; e++) x[e] = 0.0f;
        want[0] = 0xFF, want[81] = 0x2C, want[83] = 0x2C;
        wgf__quant_encode(WGF_DT_Q2_K, x, 1, got);
        int bad = -1;
        for (int i = 0; i < 84 && bad < 0; i++) bad = got[i] != want[i] ? i : -1;
        wgf_t_check(t, bad < 0, "quantizer q2_k: hand-worked block", bad < 0 ? "84 bytes as worked out" : "byte %d: 0x%02x, worked out 0x%02x",
                    bad, bad < 0 ? 0 : got[bad], bad < 0 ? 0 : want[bad]);
    }

    /* Values on a grid the block can hold come back exactly.
     * Q3_K: x = q * 2^e, q in -4..3 with a -4 in every sub-block: every sub-block's fit is
     * exactly 2^e (the grid through -4 * 2^e, no move helps), the stored sub-scales are all
     * -32 and d = -2^e / 32 (exact in f16 for e >= -19).
     * Q2_K: x = q * k_s 2^e - j_s 2^f, q in 0..3 with a 0 and a 3 in every sub-block, k_s in
     * 1..15 and j_s in 0..15 with a 15 of each in the block: the fits are k_s 2^e and
     * j_s 2^f to within rounding, so d = 2^e, dmin = 2^f and the 4-bit codes are k_s and j_s. */
    struct wgf_rng r;
    wgf_rng_seed(&r, 32);
    for (int k = 0; k < 2; k++) {
        enum wgf_dtype dt    = k ? WGF_DT_Q3_K : WGF_DT_Q2_K;
        bool           exact = true;
        int            where = -1;
        for (int n = 0; n < 100 && exact; n++) {
            int e = rnd(&r, -12, 4), f = rnd(&r, -12, 4), ks = rnd(&r, 0, 15), js = rnd(&r, 0, 15);
            for (int s = 0; s < 16; s++) {
                int sc = s == ks ? 15 : rnd(&r, 1, 15), mn = s == js ? 15 : rnd(&r, 0, 15), lo = rnd(&r, 0, 15), hi = (lo + rnd(&r, 1, 15)) % 16;
                for (int i = 0; i < 16; i++) {
                    int q = dt == WGF_DT_Q3_K ? (i == lo ? -4 : rnd(&r, -4, 3)) : i == lo ? 0 : i == hi ? 3 : rnd(&r, 0, 3);
                    x[16 * s + i] = dt == WGF_DT_Q3_K ? ldexpf((float)q, e) : ldexpf((float)(q * sc), e) - ldexpf((float)mn, f);
                }
            }
            wgf__quant_encode(dt, x, 1, blk);
            wgf__quant_decode(dt, blk, 1, y);
            for (int i = 0; i < 256 && exact; i++)
                if (x[i] != y[i]) exact = false, where = n;
        }
        char nm[96];
        snprintf(nm, sizeof nm, "quantizer %s: grid values exact", wgf_dtype_str(dt));
        wgf_t_check(t, exact, nm, exact ? "100 blocks, dequant(quant(x)) == x" : "block %d differs", where);
    }
}

/* Quality on Gaussian rows: a uniform quantizer with step D has RMS error D / sqrt(12).
 * Summing D^2 / 12 over the groups (D from each group's own range: Q8_0 max|x|/127,
 * Q4_0 /8, Q5_0 /16, Q4_1 and Q4_K (max-min)/15, Q5_1 and Q5_K /31, Q6_K max|x|/32,
 * Q2_K (max-min)/3 and Q3_K max|x|/4 per 16) predicts the error; the simple types round to
 * that grid (ratio ~1: clamping and the f16 scale move it by a few %), the k-quants search
 * for a better fit (below 1). Accepted: measured / predicted in [0.8, 1.1] (measured
 * 0.85 .. 0.995, docs/llm.md). */
static void quality(struct wgf_t *t)
{
    static const enum wgf_dtype qd[] = {WGF_DT_Q8_0, WGF_DT_Q4_0, WGF_DT_Q4_1, WGF_DT_Q5_0, WGF_DT_Q5_1,
                                        WGF_DT_Q2_K, WGF_DT_Q3_K, WGF_DT_Q4_K, WGF_DT_Q5_K, WGF_DT_Q6_K};
    enum { N = 64 * 256 };
    static float   x[N], y[N];
    static uint8_t blk[N * 2]; /* up to 8.5 bits per value */
    struct wgf_rng r;
    wgf_rng_seed(&r, 2024);
    for (int i = 0; i < N; i++) { /* Box-Muller */
        double u = ((double)wgf_rng_below(&r, 1u << 30) + 1) / (1u << 30), v = (double)wgf_rng_below(&r, 1u << 30) / (1u << 30);
        x[i]     = (float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
    }
    for (size_t k = 0; k < sizeof qd / sizeof qd[0]; k++) {
        enum wgf_dtype dt = qd[k];
        char           nm[96];
        snprintf(nm, sizeof nm, "quality %s on Gaussian rows", wgf_dtype_str(dt));
        if (!wgf__quant_can_encode(dt)) {
            wgf_t_check(t, false, nm, "no quantizer");
            continue;
        }
        wgf__dtype_encode(dt, x, N, blk);
        wgf__dtype_decode(dt, blk, N, y);
        double err = 0, ref = 0, pred = 0;
        bool   kq  = dt == WGF_DT_Q2_K || dt == WGF_DT_Q4_K || dt == WGF_DT_Q5_K; /* affine k-quants keep min <= 0 */
        int    g   = dt == WGF_DT_Q6_K || dt == WGF_DT_Q2_K || dt == WGF_DT_Q3_K ? 16 : 32;
        for (int i = 0; i < N; i++) err += ((double)x[i] - y[i]) * ((double)x[i] - y[i]), ref += (double)x[i] * x[i];
        for (int i = 0; i < N; i += g) {
            double lo = kq ? 0 : x[i], hi = lo, am = 0;
            for (int j = 0; j < g; j++) lo = fmin(lo, x[i + j]), hi = fmax(hi, x[i + j]), am = fmax(am, fabs(x[i + j]));
            double d = dt == WGF_DT_Q8_0 ? am / 127 : dt == WGF_DT_Q4_0 ? am / 8 : dt == WGF_DT_Q5_0 ? am / 16 : dt == WGF_DT_Q6_K ? am / 32
                     : dt == WGF_DT_Q3_K ? am / 4 : dt == WGF_DT_Q2_K ? (hi - lo) / 3
                     : dt == WGF_DT_Q4_1 || dt == WGF_DT_Q4_K ? (hi - lo) / 15 : (hi - lo) / 31;
            pred += g * d * d / 12;
        }
        double ratio = sqrt(err / pred);
        wgf_t_check(t, ratio >= 0.8 && ratio <= 1.1, nm, "RMS relative error %.4f, D/sqrt(12) predicts %.4f (ratio %.3f)", sqrt(err / ref),
                    sqrt(pred / ref), ratio);
        /* The published anchor for the low-bit types: the best fixed quantizer of N(0, 1)
         * with 2^b levels (Max 1960, "Quantizing for minimum distortion": MSE 0.1175, 0.03454
         * and 0.009497 for 4, 8 and 16 levels) has RMS error 0.3428, 0.1859, 0.0975. A block
         * type with per-group scales must do better than the best global one. */
        int    lv    = dt == WGF_DT_Q2_K ? 4 : dt == WGF_DT_Q3_K ? 8 : dt == WGF_DT_Q4_0 || dt == WGF_DT_Q4_1 || dt == WGF_DT_Q4_K ? 16 : 0;
        double lmax  = lv == 4 ? 0.1175 : lv == 8 ? 0.03454 : 0.009497;
        if (lv) {
            snprintf(nm, sizeof nm, "quality %s below the best global %d-level quantizer", wgf_dtype_str(dt), lv);
            wgf_t_check(t, err / ref < lmax, nm, "RMS relative error %.4f < Max's %.4f", sqrt(err / ref), sqrt(lmax));
        }
    }
}

/* ---- GGUF round trip and cpu-ref on a model of every type ------------------------------- */


static void gguf_round_trip(struct wgf_t *t, const char *dir)
{
    struct wgf_rng r;
    wgf_rng_seed(&r, 5);
    struct wgf_gguf_writer *w = wgf_gguf_writer_new();
    uint8_t                *blk[NQT];
    uint64_t                nb[NQT];
    wgf_gguf_writer_add_str(w, "general.architecture", "llama");
    for (int i = 0; i < NQT; i++) {
        float  *val;
        char    nm[32];
        int64_t shape[2] = {3, 2 * QT[i].elems};
        random_matrix(&r, QT[i].dt, shape[0], shape[1], &blk[i], &val, &nb[i]);
        free(val);
        snprintf(nm, sizeof nm, "t.%s", wgf_dtype_str(QT[i].dt));
        wgf_gguf_writer_add_tensor(w, nm, QT[i].dt, 2, shape, blk[i], nb[i]);
    }
    char path[600];
    snprintf(path, sizeof path, "%s/every_type.gguf", dir);
    struct wgf_err err = {0};
    enum wgf_status st = wgf_gguf_writer_write(w, path, &err);
    wgf_gguf_writer_free(w);
    struct wgf_gguf *g = NULL;
    if (st == WGF_OK) st = wgf_gguf_open(path, &g, &err);
    if (wgf_t_check(t, st == WGF_OK, "gguf round trip: write and open", "%s", err.msg)) {
        for (int i = 0; i < NQT; i++) {
            char nm[64];
            snprintf(nm, sizeof nm, "t.%s", wgf_dtype_str(QT[i].dt));
            int64_t                     k = wgf_gguf_find_tensor(g, nm);
            struct wgf_gguf_tensor_info ti;
            bool                        ok = k >= 0;
            if (ok) wgf_gguf_tensor(g, k, &ti);
            ok = ok && ti.dtype == QT[i].dt && ti.n_dims == 2 && ti.shape[0] == 3 && ti.shape[1] == 2 * QT[i].elems &&
                 ti.nbytes == nb[i] && memcmp(ti.data, blk[i], nb[i]) == 0;
            snprintf(nm, sizeof nm, "gguf round trip %s", wgf_dtype_str(QT[i].dt));
            wgf_t_check(t, ok, nm, "type, shape (3, %d), %llu bytes identical", 2 * QT[i].elems, (unsigned long long)nb[i]);
        }
        /* the type id on disk is ggml's: read it back from the tensor-info record */
        size_t   fsz = 0;
        FILE    *f   = fopen(path, "rb");
        uint8_t *all = NULL;
        if (f && !fseek(f, 0, SEEK_END)) fsz = (size_t)ftell(f);
        if (f && fsz && (all = malloc(fsz)) && !fseek(f, 0, SEEK_SET) && fread(all, 1, fsz, f) == fsz) {
            int found = 0;
            for (int i = 0; i < NQT; i++) {
                char nm[32];
                snprintf(nm, sizeof nm, "t.%s", wgf_dtype_str(QT[i].dt));
                size_t nl = strlen(nm);
                for (size_t o = 0; o + nl + 4 + 16 + 4 <= fsz; o++)
                    if (!memcmp(all + o, nm, nl) && all[o + nl] == 2) { /* name, u32 n_dims 2, 2 x u64 ne, u32 type */
                        const uint8_t *p = all + o + nl + 4 + 16;
                        found += (uint32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24) == QT[i].ggml;
                        break;
                    }
            }
            wgf_t_check(t, found == NQT, "gguf round trip: ggml type ids", "%d of %d", found, NQT);
        } else wgf_t_check(t, false, "gguf round trip: ggml type ids", "cannot read %s", path);
        free(all);
        if (f) fclose(f);
    }
    wgf_gguf_close(g);
    for (int i = 0; i < NQT; i++) free(blk[i]);
}


static float *logits_of(struct wgf_t *t, const char *path, const int32_t *tok, char *src_dtype, size_t cap)
{
    struct wgf_err        err = {0};
    struct wgf_llm_model *m   = NULL;
    char                  nm[700];
    snprintf(nm, sizeof nm, "load %s", path);
    if (!wgf_t_check(t, wgf_llm_model_load(path, &m, &err) == WGF_OK, nm, "%s", err.msg)) return NULL;
    if (src_dtype) snprintf(src_dtype, cap, "%s", m->cfg.source_dtype);
    struct wgf_llm_backend         b;
    struct wgf_llm_backend_options bo = {.n_ctx = 32, .n_threads = 2};
    float                         *lg = NULL;
    if (wgf_llm_backend_open(&b, &wgf_llm_backend_ref, m, &bo, &err) == WGF_OK) {
        lg = malloc((size_t)M_NTOK * b.n_vocab * sizeof *lg);
        if (b.forward(&b, tok, M_NTOK, 0, lg, true, &err) != WGF_OK) free(lg), lg = NULL;
        wgf_llm_backend_close(&b);
    }
    if (!lg) wgf_t_check(t, false, nm, "forward: %s", err.msg);
    wgf_llm_model_free(m);
    return lg;
}

static void model_logits(struct wgf_t *t, const char *dir, const char *tag, const enum wgf_dtype *types, int ntypes, bool tied)
{
    char qp[600], fp[600], nm[160], sd[16] = "";
    snprintf(qp, sizeof qp, "%s/%s_q.gguf", dir, tag);
    snprintf(fp, sizeof fp, "%s/%s_f32.gguf", dir, tag);
    struct wgf_err err = {0};
    snprintf(nm, sizeof nm, "%s: write quantized and f32 twins", tag);
    if (!wgf_t_check(t, write_pair(qp, fp, types, ntypes, tied, &err) == WGF_OK, nm, "%s", err.msg)) return;
    int32_t        tok[M_NTOK];
    struct wgf_rng r;
    wgf_rng_seed(&r, 99);
    for (int i = 0; i < M_NTOK; i++) tok[i] = (int32_t)wgf_rng_below(&r, M_VOCAB);
    float *a = logits_of(t, qp, tok, sd, sizeof sd), *b = logits_of(t, fp, tok, NULL, 0);
    if (a && b) {
        size_t n    = (size_t)M_NTOK * M_VOCAB;
        double dmax = 0, smax = 0;
        bool   finite = true;
        for (size_t i = 0; i < n; i++) {
            dmax   = fmax(dmax, fabs((double)a[i] - b[i]));
            smax   = fmax(smax, fabs((double)b[i]));
            finite = finite && isfinite(a[i]);
        }
        snprintf(nm, sizeof nm, "%s: cpu-ref logits quantized == dequantized f32", tag);
        wgf_t_check(t, finite && smax > 0 && memcmp(a, b, n * sizeof *a) == 0, nm, "source dtype %s, max |diff| %.3g of %.3g (tolerance 0)", sd,
                    dmax, smax);
    }
    free(a);
    free(b);
}

int main(void)
{
    struct wgf_t t = {0};
    literals(&t);
    extremes(&t);
    random_blocks(&t);
    quantizers(&t);
    kquantizers(&t);
    quality(&t);
    char dir[512];
    wgf_t_tmpdir("quant", dir, sizeof dir);
    gguf_round_trip(&t, dir);
    /* every type in one file (cycled over the matrices: a mixed file), tied embeddings
     * (the embedding rows and lm_head decode from the same blocks) */
    enum wgf_dtype all[NQT];
    for (int i = 0; i < NQT; i++) all[i] = QT[i].dt;
    model_logits(&t, dir, "mixed", all, NQT, true);
    /* one type throughout, untied, for each type */
    for (int i = 0; i < NQT; i++) model_logits(&t, dir, wgf_dtype_str(QT[i].dt), &QT[i].dt, 1, false);
    return wgf_t_finish(&t);
}
