/* wgfuse — quantized weight rows for the GPU: ggml's blocks repacked so that every field is u32
 * aligned (a 34-byte Q8_0 or 210-byte Q6_K block is not), without changing a bit of them. The
 * layout of each type is lib_qblock.wgsl's table: the fields a block stores in an unaligned
 * place (f16 scales after a 2-byte-aligned payload, a u32 qh at offset 2) move to a region of
 * the row after the blocks, packed densely, so a row holds exactly the file's bytes plus the
 * padding to a 16-byte chunk. Q5_K's 32 bytes of fifth bits are regrouped in place, per
 * 64-element item (q5k_fifth_bits), so one lane's item needs one chunk of them, not two. The
 * shader decodes them (lib_qblock) as cpu-ref does (src/llm/quant.c). */
#include <string.h>

#include "llm/gpu/gr.h"

bool gr_qlayout(enum wgf_dtype t, uint32_t cols, struct gr_qlayout *L)
{
    int qk = wgf_dtype_block_elems(t);
    memset(L, 0, sizeof *L);
    if (t == WGF_DT_F32 || t == WGF_DT_F16 || t == WGF_DT_BF16 || qk <= 0 || cols % (uint32_t)qk) return false;
    uint32_t nb = cols / (uint32_t)qk, half = (nb + 1) / 2;
    L->nu       = cols / 32;
    L->ni       = t == WGF_DT_Q4_K || t == WGF_DT_Q5_K || t == WGF_DT_Q6_K ? cols / 64 : L->nu;
    switch (t) {
    case WGF_DT_Q4_0: L->qa = 4 * nb, L->words = L->qa + half; break;
    case WGF_DT_Q4_1: L->qa = 4 * nb, L->words = 5 * nb; break;
    case WGF_DT_Q5_0: L->qa = 4 * nb, L->qb = 5 * nb, L->words = L->qb + half; break;
    case WGF_DT_Q5_1: L->qa = 4 * nb, L->qb = 5 * nb, L->words = 6 * nb; break;
    case WGF_DT_Q8_0: L->qa = 8 * nb, L->words = L->qa + half; break;
    case WGF_DT_Q2_K: L->words = 21 * nb; break;
    case WGF_DT_Q3_K: L->qa = 27 * nb, L->words = L->qa + half; break;
    case WGF_DT_Q4_K: L->words = 36 * nb; break;
    case WGF_DT_Q5_K: L->words = 44 * nb; break;
    case WGF_DT_Q6_K: L->qa = 52 * nb, L->words = L->qa + half; break;
    default: return false;
    }
    return true;
}

/* Q5_K's qh[32] (bit 2 j of byte l: the fifth bit of element l of sub-block 2 j, bit 2 j + 1:
 * of sub-block 2 j + 1) as two u32 per item j (the 64 elements of sub-blocks 2 j, 2 j + 1),
 * little-endian at o + 8 j: lo and hi, bit k + 8 b the fifth bit of element 4 k + b of the
 * low / high sub-block. A shader dotting qs word k (elements 4 k .. 4 k + 4) finds its four
 * bits at bit 0 of each byte of (lo >> k): one shift and a mask. */
static void q5k_fifth_bits(const uint8_t qh[32], uint8_t o[32])
{
    for (uint32_t j = 0; j < 4; j++) {
        uint32_t lo = 0, hi = 0;
        for (uint32_t l = 0; l < 32; l++) {
            uint32_t bit = (l % 4) * 8 + l / 4; /* element l = 4 k + b: bit k + 8 b */
            lo |= (uint32_t)(qh[l] >> (2 * j) & 1u) << bit;
            hi |= (uint32_t)(qh[l] >> (2 * j + 1) & 1u) << bit;
        }
        for (uint32_t i = 0; i < 4; i++) {
            o[8 * j + i]     = (uint8_t)(lo >> (8 * i));
            o[8 * j + 4 + i] = (uint8_t)(hi >> (8 * i));
        }
    }
}

void gr_qrepack_row(enum wgf_dtype t, const uint8_t *src, uint32_t cols, uint8_t *dst)
{
    struct gr_qlayout L;
    WGF_ASSERT(gr_qlayout(t, cols, &L));
    uint32_t       nb = cols / (uint32_t)wgf_dtype_block_elems(t), bb = (uint32_t)wgf_dtype_block_bytes(t);
    uint8_t       *A = dst + 4 * (size_t)L.qa, *Bq = dst + 4 * (size_t)L.qb;
    for (uint32_t i = 0; i < nb; i++) {
        const uint8_t *b = src + (size_t)i * bb;
        switch (t) {
        case WGF_DT_Q4_0: /* d | qs[16] */
            memcpy(dst + 16 * i, b + 2, 16), memcpy(A + 2 * i, b, 2);
            break;
        case WGF_DT_Q4_1: /* d m | qs[16] */
            memcpy(dst + 16 * i, b + 4, 16), memcpy(A + 4 * i, b, 4);
            break;
        case WGF_DT_Q5_0: /* d | qh | qs[16] */
            memcpy(dst + 16 * i, b + 6, 16), memcpy(A + 4 * i, b + 2, 4), memcpy(Bq + 2 * i, b, 2);
            break;
        case WGF_DT_Q5_1: /* d m | qh | qs[16] */
            memcpy(dst + 16 * i, b + 8, 16), memcpy(A + 4 * i, b + 4, 4), memcpy(Bq + 4 * i, b, 4);
            break;
        case WGF_DT_Q8_0: /* d | qs[32] */
            memcpy(dst + 32 * i, b + 2, 32), memcpy(A + 2 * i, b, 2);
            break;
        case WGF_DT_Q3_K: /* hmask qs scales | d */
            memcpy(dst + 108 * i, b, 108), memcpy(A + 2 * i, b + 108, 2);
            break;
        case WGF_DT_Q6_K: /* ql qh scales | d */
            memcpy(dst + 208 * i, b, 208), memcpy(A + 2 * i, b + 208, 2);
            break;
        case WGF_DT_Q5_K: /* d dmin scales[12] | qh[32] regrouped | qs[128] */
            memcpy(dst + 176 * (size_t)i, b, 176), q5k_fifth_bits(b + 16, dst + 176 * (size_t)i + 16);
            break;
        default: /* Q2_K, Q4_K: u32 multiples already */
            memcpy(dst + (size_t)bb * i, b, bb);
            break;
        }
    }
}

bool gr_qwidens(enum wgf_dtype from, enum wgf_dtype to)
{
    return (to == WGF_DT_Q8_0 && (from == WGF_DT_Q4_0 || from == WGF_DT_Q5_0)) ||
           (to == WGF_DT_Q5_K && from == WGF_DT_Q4_K);
}

void gr_qwiden_row(enum wgf_dtype from, enum wgf_dtype to, const uint8_t *src, uint32_t cols, uint8_t *dst)
{
    WGF_ASSERT(gr_qwidens(from, to));
    uint32_t nb = cols / (uint32_t)wgf_dtype_block_elems(from), bf = (uint32_t)wgf_dtype_block_bytes(from),
             bt = (uint32_t)wgf_dtype_block_bytes(to);
    for (uint32_t i = 0; i < nb; i++) {
        const uint8_t *b = src + (size_t)i * bf;
        uint8_t       *o = dst + (size_t)i * bt;
        if (to == WGF_DT_Q5_K) { /* d dmin scales[12] | qh[32] = 0 | qs[128] */
            memcpy(o, b, 16), memset(o + 16, 0, 32), memcpy(o + 48, b + 16, 128);
            continue;
        }
        /* Q8_0: d | qs[32] int8. Q4_0: d | qs[16] (element j low nibble, j + 16 high) minus 8;
         * Q5_0: d | qh (u32 LE, bit j: element j's fifth bit) | qs[16], minus 16 */
        bool     q5 = from == WGF_DT_Q5_0;
        uint32_t qh = q5 ? (uint32_t)b[2] | (uint32_t)b[3] << 8 | (uint32_t)b[4] << 16 | (uint32_t)b[5] << 24 : 0;
        const uint8_t *qs = b + (q5 ? 6 : 2);
        memcpy(o, b, 2);
        for (uint32_t j = 0; j < 16; j++) {
            int lo = (qs[j] & 15) | (int)((qh >> j) & 1u) << 4, hi = (qs[j] >> 4) | (int)((qh >> (j + 16)) & 1u) << 4;
            o[2 + j]  = (uint8_t)(int8_t)(lo - (q5 ? 16 : 8));
            o[18 + j] = (uint8_t)(int8_t)(hi - (q5 ? 16 : 8));
        }
    }
}
