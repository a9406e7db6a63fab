/* wgfuse — element types: Q8_0/Q4_0 blocks, tensor row access (scalar f16/bf16: src/util/half.c). */
#include <math.h>
#include <string.h>

#include "llm/model_files.h"

const char *wgf_dtype_str(enum wgf_dtype t)
{
    switch (t) {
    case WGF_DT_F32: return "f32";
    case WGF_DT_F16: return "f16";
    case WGF_DT_BF16: return "bf16";
    case WGF_DT_Q8_0: return "q8_0";
    case WGF_DT_Q4_0: return "q4_0";
    }
    return "?";
}

const char *wgf_arch_str(enum wgf_arch a)
{
    switch (a) {
    case WGF_ARCH_LLAMA: return "llama";
    case WGF_ARCH_QWEN2: return "qwen2";
    case WGF_ARCH_PHI3: return "phi3";
    }
    return "?";
}

int wgf_dtype_block_elems(enum wgf_dtype t) { return (t == WGF_DT_Q8_0 || t == WGF_DT_Q4_0) ? 32 : 1; }

int wgf_dtype_block_bytes(enum wgf_dtype t)
{
    switch (t) {
    case WGF_DT_F32: return 4;
    case WGF_DT_F16:
    case WGF_DT_BF16: return 2;
    case WGF_DT_Q8_0: return 34; /* f16 d + 32 x int8 */
    case WGF_DT_Q4_0: return 18; /* f16 d + 16 bytes of nibbles */
    }
    return 0;
}

bool wgf__dtype_nbytes(enum wgf_dtype t, uint64_t nelems, uint64_t ncols, uint64_t *out)
{
    uint64_t be = (uint64_t)wgf_dtype_block_elems(t);
    if (be > 1 && (ncols == 0 || ncols % be != 0)) return false;
    if (nelems % be != 0) return false;
    return wgf_mul_u64(nelems / be, (uint64_t)wgf_dtype_block_bytes(t), out);
}

static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* ---- blocks ------------------------------------------------------------------------------ */

/* Q8_0 as llama.cpp's reference quantizer defines it: d = max|x| / 127, q = round(x / d). */
static void q8_0_encode(const float *x, uint8_t *b)
{
    float amax = 0;
    for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(x[i]));
    float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
    wr16(b, wgf_f32_to_f16(d));
    for (int i = 0; i < 32; i++) b[2 + i] = (uint8_t)(int8_t)roundf(x[i] * id);
}

/* Q4_0: d = (signed value of largest magnitude) / -8, q = clamp(x/d + 8.5, 0, 15);
 * byte j holds element j in its low nibble and element j+16 in its high nibble. */
static void q4_0_encode(const float *x, uint8_t *b)
{
    float amax = 0, max = 0;
    for (int i = 0; i < 32; i++)
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            max  = x[i];
        }
    float d = max / -8.0f, id = d != 0 ? 1.0f / d : 0.0f;
    wr16(b, wgf_f32_to_f16(d));
    for (int j = 0; j < 16; j++) {
        float   a = x[j] * id + 8.5f, c = x[j + 16] * id + 8.5f;
        int     qa = (int)a, qc = (int)c;
        qa         = qa < 0 ? 0 : qa > 15 ? 15 : qa;
        qc         = qc < 0 ? 0 : qc > 15 ? 15 : qc;
        b[2 + j]   = (uint8_t)(qa | (qc << 4));
    }
}

void wgf__dtype_encode(enum wgf_dtype t, const float *src, uint64_t n, void *dst)
{
    uint8_t *o = dst;
    switch (t) {
    case WGF_DT_F32: memcpy(dst, src, n * 4); break;
    case WGF_DT_F16:
        for (uint64_t i = 0; i < n; i++) wr16(o + 2 * i, wgf_f32_to_f16(src[i]));
        break;
    case WGF_DT_BF16:
        for (uint64_t i = 0; i < n; i++) wr16(o + 2 * i, wgf_f32_to_bf16(src[i]));
        break;
    case WGF_DT_Q8_0:
        for (uint64_t i = 0; i < n / 32; i++) q8_0_encode(src + 32 * i, o + 34 * i);
        break;
    case WGF_DT_Q4_0:
        for (uint64_t i = 0; i < n / 32; i++) q4_0_encode(src + 32 * i, o + 18 * i);
        break;
    }
}

void wgf__dtype_decode(enum wgf_dtype t, const void *src, uint64_t n, float *dst)
{
    const uint8_t *p = src;
    switch (t) {
    case WGF_DT_F32: memcpy(dst, src, n * 4); break; /* memcpy: src may be unaligned */
    case WGF_DT_F16:
        for (uint64_t i = 0; i < n; i++) dst[i] = wgf_f16_to_f32(rd16(p + 2 * i));
        break;
    case WGF_DT_BF16:
        for (uint64_t i = 0; i < n; i++) dst[i] = wgf_bf16_to_f32(rd16(p + 2 * i));
        break;
    case WGF_DT_Q8_0:
        for (uint64_t b = 0; b < n / 32; b++) {
            const uint8_t *blk = p + 34 * b;
            float          d   = wgf_f16_to_f32(rd16(blk));
            for (int i = 0; i < 32; i++) dst[32 * b + (uint64_t)i] = d * (float)(int8_t)blk[2 + i];
        }
        break;
    case WGF_DT_Q4_0:
        for (uint64_t b = 0; b < n / 32; b++) {
            const uint8_t *blk = p + 18 * b;
            float          d   = wgf_f16_to_f32(rd16(blk));
            for (int j = 0; j < 16; j++) {
                dst[32 * b + (uint64_t)j]      = d * (float)((blk[2 + j] & 0x0f) - 8);
                dst[32 * b + (uint64_t)j + 16] = d * (float)((blk[2 + j] >> 4) - 8);
            }
        }
        break;
    }
}

/* ---- tensor views ------------------------------------------------------------------------ */

int64_t wgf_tensor_nelems(const struct wgf_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->n_dims; i++) n *= t->shape[i]; /* validated at load: no overflow */
    return n;
}

int64_t wgf_tensor_ncols(const struct wgf_tensor *t) { return t->n_dims > 0 ? t->shape[t->n_dims - 1] : 1; }

int64_t wgf_tensor_nrows(const struct wgf_tensor *t)
{
    int64_t c = wgf_tensor_ncols(t);
    return c > 0 ? wgf_tensor_nelems(t) / c : 0;
}

void wgf_tensor_row_f32(const struct wgf_tensor *t, int64_t row, float *out)
{
    WGF_ASSERT(t->data && row >= 0 && row < wgf_tensor_nrows(t));
    uint64_t cols = (uint64_t)wgf_tensor_ncols(t);
    uint64_t rb   = cols / (uint64_t)wgf_dtype_block_elems(t->dtype) * (uint64_t)wgf_dtype_block_bytes(t->dtype);
    wgf__dtype_decode(t->dtype, (const uint8_t *)t->data + (uint64_t)row * rb, cols, out);
}

float wgf_tensor_get_f32(const struct wgf_tensor *t, int64_t i)
{
    WGF_ASSERT(t->data && i >= 0 && i < wgf_tensor_nelems(t));
    const uint8_t *p = t->data;
    switch (t->dtype) {
    case WGF_DT_F32: {
        float f;
        memcpy(&f, p + 4 * i, 4);
        return f;
    }
    case WGF_DT_F16: return wgf_f16_to_f32(rd16(p + 2 * i));
    case WGF_DT_BF16: return wgf_bf16_to_f32(rd16(p + 2 * i));
    case WGF_DT_Q8_0:
    case WGF_DT_Q4_0: {
        float blk[32];
        int   bb = wgf_dtype_block_bytes(t->dtype);
        wgf__dtype_decode(t->dtype, p + (uint64_t)(i / 32) * (uint64_t)bb, 32, blk);
        return blk[i % 32];
    }
    }
    return 0;
}
