/* The quantized block types as the quantization tests know them (test_quant.c,
 * test_quant_gpu.c), independent of src/llm/quant.c: a packer that writes ggml's block
 * layouts from chosen values and scales, the expected float of each element with ggml's f32
 * operations in ggml's order, random blocks, and a small Llama written twice — matrices as
 * blocks and as F32 holding the expected floats. Header-only (static functions). */
#ifndef WGF_TEST_QUANT_BLOCKS_H
#define WGF_TEST_QUANT_BLOCKS_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "llm/gguf.h"
#include "llm/model_files.h"
#include "util/rng.h"
#include "wgfuse/llm.h"

static void wr16(uint8_t *p, uint32_t h)
{
    p[0] = (uint8_t)h;
    p[1] = (uint8_t)(h >> 8);
}
static float hf(uint32_t h) { return wgf_f16_to_f32((uint16_t)h); }

/* ---- the block types as the test knows them ------------------------------------------- */

struct qtype {
    enum wgf_dtype dt;
    uint32_t       ggml;
    int            elems, bytes;
};
static const struct qtype QT[] = {
    {WGF_DT_Q4_0, WGF_GGML_Q4_0, 32, 18},   {WGF_DT_Q4_1, WGF_GGML_Q4_1, 32, 20},   {WGF_DT_Q5_0, WGF_GGML_Q5_0, 32, 22},
    {WGF_DT_Q5_1, WGF_GGML_Q5_1, 32, 24},   {WGF_DT_Q8_0, WGF_GGML_Q8_0, 32, 34},   {WGF_DT_Q2_K, WGF_GGML_Q2_K, 256, 84},
    {WGF_DT_Q3_K, WGF_GGML_Q3_K, 256, 110}, {WGF_DT_Q4_K, WGF_GGML_Q4_K, 256, 144}, {WGF_DT_Q5_K, WGF_GGML_Q5_K, 256, 176},
    {WGF_DT_Q6_K, WGF_GGML_Q6_K, 256, 210},
};
#define NQT ((int)(sizeof QT / sizeof QT[0]))

/* Chosen contents of one block: scales as f16 bits, sub-block scales/mins, quantized values. */
struct qblock {
    uint32_t d, m;      /* f16 bits: d (all types), m / dmin (Q4_1, Q5_1, Q2_K, Q4_K, Q5_K) */
    int      sc[16];    /* sub-block scales: Q2_K 0..15, Q3_K -32..31, Q4/5_K 0..63, Q6_K -128..127 */
    int      mn[16];    /* sub-block mins: Q2_K 0..15, Q4/5_K 0..63                        */
    int      q[256];    /* Q4_0/Q4_1 0..15, Q5_0/Q5_1 0..31, Q8_0 -128..127, Q2_K 0..3,
                           Q3_K -4..3, Q4_K 0..15, Q5_K 0..31, Q6_K -32..31               */
};

/* Pack `b` into the bytes of type t (layouts: ggml-common.h's structs, the element order of
 * ggml-quants.c's dequantize_row_*), written from the struct side. */
static void pack(enum wgf_dtype t, const struct qblock *b, uint8_t *o)
{
    switch (t) {
    case WGF_DT_Q4_0: /* { d; qs[16] }: qs[j] = elem j | elem j+16 << 4 */
    case WGF_DT_Q4_1: /* { d; m; qs[16] } */
    {
        int off = t == WGF_DT_Q4_0 ? 2 : 4;
        memset(o, 0, (size_t)off + 16);
        wr16(o, b->d);
        if (t == WGF_DT_Q4_1) wr16(o + 2, b->m);
        for (int j = 0; j < 16; j++) o[off + j] = (uint8_t)(b->q[j] | b->q[j + 16] << 4);
        break;
    }
    case WGF_DT_Q5_0: /* { d; qh[4]; qs[16] }: bit e of the u32 qh = bit 4 of elem e */
    case WGF_DT_Q5_1: /* { d; m; qh[4]; qs[16] } */
    {
        int      hoff = t == WGF_DT_Q5_0 ? 2 : 4;
        uint32_t qh   = 0;
        wr16(o, b->d);
        if (t == WGF_DT_Q5_1) wr16(o + 2, b->m);
        for (int e = 0; e < 32; e++) qh |= (uint32_t)(b->q[e] >> 4) << e;
        for (int i = 0; i < 4; i++) o[hoff + i] = (uint8_t)(qh >> (8 * i));
        for (int j = 0; j < 16; j++) o[hoff + 4 + j] = (uint8_t)((b->q[j] & 15) | (b->q[j + 16] & 15) << 4);
        break;
    }
    case WGF_DT_Q8_0: /* { d; int8 qs[32] } */
        wr16(o, b->d);
        for (int e = 0; e < 32; e++) o[2 + e] = (uint8_t)(int8_t)b->q[e];
        break;
    case WGF_DT_Q2_K: { /* { scales[16]; qs[64]; d; dmin } */
        memset(o, 0, 84);
        for (int s = 0; s < 16; s++) o[s] = (uint8_t)(b->sc[s] | b->mn[s] << 4);
        /* dequantize_row_q2_K: for each 128-half n, shift 0,2,4,6: 16 elems from q[l], 16 from q[l+16] */
        int e = 0;
        for (int n = 0; n < 2; n++)
            for (int shift = 0; shift < 8; shift += 2)
                for (int l = 0; l < 32; l++, e++) o[16 + 32 * n + l] |= (uint8_t)(b->q[e] << shift);
        wr16(o + 80, b->d);
        wr16(o + 82, b->m);
        break;
    }
    case WGF_DT_Q3_K: { /* { hmask[32]; qs[64]; scales[12]; d } */
        memset(o, 0, 110);
        int e = 0, bit = 0;
        for (int n = 0; n < 2; n++)
            for (int shift = 0; shift < 8; shift += 2, bit++)
                for (int l = 0; l < 32; l++, e++) {
                    int v = b->q[e], hi = v >= 0, lo = hi ? v : v + 4; /* v = lo - (hi ? 0 : 4) */
                    o[32 + 32 * n + l] |= (uint8_t)(lo << shift);
                    o[l] |= (uint8_t)(hi << bit);
                }
        /* 16 six-bit scales (s + 32): low nibbles in bytes 0..7 (s < 8 low half, s >= 8 high
         * half of byte s%8), top two bits in bytes 8..11 (byte 8 + s%4, bit pair s/4) */
        for (int s = 0; s < 16; s++) {
            int u = b->sc[s] + 32;
            o[96 + s % 8] |= (uint8_t)((u & 15) << (4 * (s / 8)));
            o[96 + 8 + s % 4] |= (uint8_t)((u >> 4) << (2 * (s / 4)));
        }
        wr16(o + 108, b->d);
        break;
    }
    case WGF_DT_Q4_K:   /* { d; dmin; scales[12]; qs[128] } */
    case WGF_DT_Q5_K: { /* { d; dmin; scales[12]; qh[32]; qs[128] } */
        int qoff = t == WGF_DT_Q4_K ? 16 : 48;
        memset(o, 0, t == WGF_DT_Q4_K ? 144 : 176);
        wr16(o, b->d);
        wr16(o + 2, b->m);
        uint8_t *k = o + 4; /* 8 six-bit (scale, min): j<4 in bytes j / j+4 (low 6 bits);
                                j>=4: low nibbles in byte j+4, top 2 bits in bits 6-7 of j-4 / j */
        for (int j = 0; j < 8; j++) {
            if (j < 4) {
                k[j] |= (uint8_t)b->sc[j];
                k[j + 4] |= (uint8_t)b->mn[j];
            } else {
                k[j + 4] |= (uint8_t)((b->sc[j] & 15) | (b->mn[j] & 15) << 4);
                k[j - 4] |= (uint8_t)((b->sc[j] >> 4) << 6);
                k[j] |= (uint8_t)((b->mn[j] >> 4) << 6);
            }
        }
        /* 64 elements per 32 bytes: low nibbles first (sub-block 2g), then high (2g+1) */
        for (int e = 0; e < 256; e++) {
            int s = e / 32, l = e % 32;
            o[qoff + 32 * (s / 2) + l] |= (uint8_t)((b->q[e] & 15) << (4 * (s % 2)));
            if (t == WGF_DT_Q5_K) o[16 + l] |= (uint8_t)((b->q[e] >> 4) << s);
        }
        break;
    }
    case WGF_DT_Q6_K: { /* { ql[128]; qh[64]; int8 scales[16]; d } */
        memset(o, 0, 210);
        /* per 128-half: l in 0..31 gives elements l, l+32, l+64, l+96 from
         * ql[l] lo, ql[l+32] lo, ql[l] hi, ql[l+32] hi and qh[l] bit pairs 0,1,2,3 */
        for (int n = 0; n < 2; n++)
            for (int l = 0; l < 32; l++)
                for (int k4 = 0; k4 < 4; k4++) {
                    int u = b->q[128 * n + 32 * k4 + l] + 32;
                    o[64 * n + l + 32 * (k4 % 2)] |= (uint8_t)((u & 15) << (4 * (k4 / 2)));
                    o[128 + 32 * n + l] |= (uint8_t)((u >> 4) << (2 * k4));
                }
        for (int s = 0; s < 16; s++) o[192 + s] = (uint8_t)(int8_t)b->sc[s];
        wr16(o + 208, b->d);
        break;
    }
    default: break;
    }
}

/* The value of element e, with ggml's f32 operations in ggml's order. */
static float expect_elem(enum wgf_dtype t, const struct qblock *b, int e)
{
    float d = hf(b->d), m = hf(b->m);
    int   q = b->q[e];
    switch (t) {
    case WGF_DT_Q4_0: return (float)(q - 8) * d;
    case WGF_DT_Q5_0: return (float)(q - 16) * d;
    case WGF_DT_Q4_1:
    case WGF_DT_Q5_1: return (float)q * d + m;
    case WGF_DT_Q8_0: return (float)q * d;
    case WGF_DT_Q2_K: return d * (float)b->sc[e / 16] * (float)q - m * (float)b->mn[e / 16];
    case WGF_DT_Q3_K: return d * (float)b->sc[e / 16] * (float)q;
    case WGF_DT_Q4_K:
    case WGF_DT_Q5_K: return d * (float)b->sc[e / 32] * (float)q - m * (float)b->mn[e / 32];
    case WGF_DT_Q6_K: return d * (float)b->sc[e / 16] * (float)q;
    default: return NAN;
    }
}

static int rnd(struct wgf_rng *r, int lo, int hi) { return lo + (int)wgf_rng_below(r, (uint32_t)(hi - lo + 1)); }

/* Random contents: q and sub-scales over their whole ranges, d and m f16 near `mag`
 * (random sign), so the decoded weights are about mag * (largest q * sub-scale). */
static void random_block(struct wgf_rng *r, enum wgf_dtype t, float mag, struct qblock *b)
{
    memset(b, 0, sizeof *b);
    float dv = mag * (0.5f + (float)wgf_rng_below(r, 1000) / 2000.0f), mv = mag * (float)rnd(r, -1000, 1000) / 1000.0f;
    b->d     = wgf_f32_to_f16(wgf_rng_below(r, 2) ? dv : -dv);
    b->m     = wgf_f32_to_f16(mv);
    int qlo = 0, qhi = 0, slo = 0, shi = 0, mhi = 0;
    switch (t) {
    case WGF_DT_Q4_0:
    case WGF_DT_Q4_1:
    case WGF_DT_Q4_K: qhi = 15; break;
    case WGF_DT_Q5_0:
    case WGF_DT_Q5_1:
    case WGF_DT_Q5_K: qhi = 31; break;
    case WGF_DT_Q8_0: qlo = -128, qhi = 127; break;
    case WGF_DT_Q2_K: qhi = 3; break;
    case WGF_DT_Q3_K: qlo = -4, qhi = 3; break;
    case WGF_DT_Q6_K: qlo = -32, qhi = 31; break;
    default: break;
    }
    if (t == WGF_DT_Q2_K) shi = 15, mhi = 15;
    if (t == WGF_DT_Q3_K) slo = -32, shi = 31;
    if (t == WGF_DT_Q4_K || t == WGF_DT_Q5_K) shi = 63, mhi = 63;
    if (t == WGF_DT_Q6_K) slo = -128, shi = 127;
    for (int e = 0; e < 256; e++) b->q[e] = rnd(r, qlo, qhi);
    for (int s = 0; s < 16; s++) b->sc[s] = rnd(r, slo, shi), b->mn[s] = rnd(r, 0, mhi);
}

static const struct qtype *qtype_of(enum wgf_dtype dt)
{
    for (int i = 0; i < NQT; i++)
        if (QT[i].dt == dt) return &QT[i];
    return NULL;
}

#define M_DIM    256
#define M_HID    1024
#define M_HEADS  4
#define M_KV     2
#define M_LAYERS 2
#define M_VOCAB  48
#define M_NTOK   10

/* Every weight of b made the sign `sign` (Q8_0 and Q6_K: signed codes, no minimum; d > 0, the
 * codes' magnitudes kept nonzero), or 0 (sign 2: an all-zero block, zero in every type). */
static void force_sign(enum wgf_dtype dt, int sign, struct qblock *b)
{
    if (sign == 2) {
        memset(b, 0, sizeof *b);
        return;
    }
    WGF_ASSERT(dt == WGF_DT_Q8_0 || dt == WGF_DT_Q6_K);
    b->d = wgf_f32_to_f16(fabsf(wgf_f16_to_f32((uint16_t)b->d)));
    for (int s = 0; s < 16; s++) b->sc[s] = 1 + abs(b->sc[s]) % 127;
    for (int e = 0; e < 256; e++) {
        int a = abs(b->q[e]);
        b->q[e] = dt == WGF_DT_Q8_0 ? sign * (1 + a % 127) : sign > 0 ? 1 + a % 31 : -(1 + a % 32);
    }
}

/* A matrix of random blocks of type dt (rows x cols): bytes in *blk, expected floats in *val;
 * sign 0: random signs, else every block through force_sign. */
static void random_matrix_signed(struct wgf_rng *r, enum wgf_dtype dt, int sign, int64_t rows, int64_t cols, uint8_t **blk,
                                 float **val, uint64_t *nb)
{
    const struct qtype *qt = qtype_of(dt);
    int64_t             n  = rows * cols, nblk = n / qt->elems;
    *nb                    = (uint64_t)nblk * (uint64_t)qt->bytes;
    *blk                   = malloc(*nb);
    *val                   = malloc((size_t)n * sizeof **val);
    /* scale so weights are ~0.05: the largest |q * sub-scale| per type */
    float big = dt == WGF_DT_Q8_0 ? 128 : dt == WGF_DT_Q4_0 || dt == WGF_DT_Q4_1 ? 15 : dt == WGF_DT_Q5_0 || dt == WGF_DT_Q5_1 ? 31
              : dt == WGF_DT_Q2_K ? 45 : dt == WGF_DT_Q3_K ? 128 : dt == WGF_DT_Q4_K ? 945 : dt == WGF_DT_Q5_K ? 1953 : 4096;
    for (int64_t i = 0; i < nblk; i++) {
        struct qblock b;
        random_block(r, dt, 0.05f / big, &b);
        /* Q4_1 / Q5_1: the minimum centres the block (d q + m = d (q - big / 2)), so the codes'
         * term is what the logits are made of: with a fixed m = -0.025 every weight had the
         * same sign, m sum x swamped d sum q x and a kernel that halved the codes' term passed */
        if (dt == WGF_DT_Q4_1 || dt == WGF_DT_Q5_1) b.m = wgf_f32_to_f16(-0.5f * big * wgf_f16_to_f32((uint16_t)b.d));
        if (sign) force_sign(dt, sign, &b);
        pack(dt, &b, *blk + i * qt->bytes);
        for (int e = 0; e < qt->elems; e++) (*val)[i * qt->elems + e] = expect_elem(dt, &b, e);
    }
}

static inline void random_matrix(struct wgf_rng *r, enum wgf_dtype dt, int64_t rows, int64_t cols, uint8_t **blk, float **val, uint64_t *nb)
{
    random_matrix_signed(r, dt, 0, rows, cols, blk, val, nb);
}

/* Write the test Llama twice: matrices as blocks of the types in `types` (cycled), and
 * as F32 holding the expected floats. Norms are f32 ones-ish in both.
 * neg: every logit below zero, whatever the tokens: attn_output and ffn_down all zero (the
 * final hidden state is the token's embedding), token_embd Q8_0 with every weight > 0 and
 * output (untied) Q6_K with every weight < 0 (the norms' weights are > 0). */
static enum wgf_status write_pair_signed(const char *qpath, const char *fpath, const enum wgf_dtype *types, int ntypes,
                                         bool tied, bool neg, struct wgf_err *err)
{
    struct wgf_gguf_writer *w[2] = {wgf_gguf_writer_new(), wgf_gguf_writer_new()};
    struct wgf_rng          r;
    wgf_rng_seed(&r, 1414);
    for (int k = 0; k < 2; k++) {
        wgf_gguf_writer_add_str(w[k], "general.architecture", "llama");
        wgf_gguf_writer_add_u32(w[k], "llama.context_length", 64);
        wgf_gguf_writer_add_u32(w[k], "llama.embedding_length", M_DIM);
        wgf_gguf_writer_add_u32(w[k], "llama.block_count", M_LAYERS);
        wgf_gguf_writer_add_u32(w[k], "llama.feed_forward_length", M_HID);
        wgf_gguf_writer_add_u32(w[k], "llama.attention.head_count", M_HEADS);
        wgf_gguf_writer_add_u32(w[k], "llama.attention.head_count_kv", M_KV);
        wgf_gguf_writer_add_u32(w[k], "llama.vocab_size", M_VOCAB);
        wgf_gguf_writer_add_f32(w[k], "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    }
    int  ti = 0;
    char nm[64];
    /* one matrix into both files */
#define MATS(name, rows, cols, type, sign)                                                                     \
    do {                                                                                                       \
        enum wgf_dtype dt = (type);                                                                            \
        uint8_t       *blk;                                                                                    \
        float         *val;                                                                                    \
        uint64_t       nb;                                                                                     \
        int64_t        shp[2] = {rows, cols};                                                                  \
        random_matrix_signed(&r, dt, (sign), rows, cols, &blk, &val, &nb);                                     \
        wgf_gguf_writer_add_tensor(w[0], name, dt, 2, shp, blk, nb);                                           \
        wgf_gguf_writer_add_tensor(w[1], name, WGF_DT_F32, 2, shp, val, (uint64_t)(rows) * (uint64_t)(cols)*4); \
        free(blk);                                                                                             \
        free(val);                                                                                             \
    } while (0)
#define MAT(name, rows, cols) MATS(name, rows, cols, types[ti++ % ntypes], 0)
#define VEC(name, n)                                                                                           \
    do {                                                                                                       \
        float   v[M_HID];                                                                                      \
        int64_t shp[1] = {n};                                                                                  \
        for (int i = 0; i < (n); i++) v[i] = 0.8f + (float)wgf_rng_below(&r, 400) / 1000.0f;                   \
        for (int k = 0; k < 2; k++) wgf_gguf_writer_add_tensor(w[k], name, WGF_DT_F32, 1, shp, v, (uint64_t)(n)*4); \
    } while (0)
    WGF_ASSERT(!(neg && tied));
    if (neg) MATS("token_embd.weight", M_VOCAB, M_DIM, WGF_DT_Q8_0, 1);
    else MAT("token_embd.weight", M_VOCAB, M_DIM);
    VEC("output_norm.weight", M_DIM);
    if (neg) MATS("output.weight", M_VOCAB, M_DIM, WGF_DT_Q6_K, -1);
    else if (!tied) MAT("output.weight", M_VOCAB, M_DIM);
    const int hd = M_DIM / M_HEADS;
    for (int l = 0; l < M_LAYERS; l++) {
#define NM(s) (snprintf(nm, sizeof nm, "blk.%d." s, l), nm)
        VEC(NM("attn_norm.weight"), M_DIM);
        VEC(NM("ffn_norm.weight"), M_DIM);
        MAT(NM("attn_q.weight"), M_DIM, M_DIM);
        MAT(NM("attn_k.weight"), M_KV * hd, M_DIM);
        MAT(NM("attn_v.weight"), M_KV * hd, M_DIM);
        MATS(NM("attn_output.weight"), M_DIM, M_DIM, types[ti++ % ntypes], neg ? 2 : 0);
        MAT(NM("ffn_gate.weight"), M_HID, M_DIM);
        MAT(NM("ffn_up.weight"), M_HID, M_DIM);
        MATS(NM("ffn_down.weight"), M_DIM, M_HID, types[ti++ % ntypes], neg ? 2 : 0);
#undef NM
    }
#undef MAT
#undef MATS
#undef VEC
    enum wgf_status st = wgf_gguf_writer_write(w[0], qpath, err);
    if (st == WGF_OK) st = wgf_gguf_writer_write(w[1], fpath, err);
    wgf_gguf_writer_free(w[0]);
    wgf_gguf_writer_free(w[1]);
    return st;
}

static enum wgf_status write_pair(const char *qpath, const char *fpath, const enum wgf_dtype *types, int ntypes, bool tied,
                                  struct wgf_err *err)
{
    return write_pair_signed(qpath, fpath, types, ntypes, tied, false, err);
}

#endif
