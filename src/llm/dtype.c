/* wgfuse — element types: the dtype table, encode/decode dispatch, tensor row access
 * (scalar f16/bf16: src/util/half.c; quantized blocks: quant.c). */
#include <math.h>
#include <string.h>

#include "llm/model_files.h"

/* name, elements per block, bytes per block (ggml-common.h's block structs) */
static const struct {
    const char *name;
    int         elems, bytes;
} dt_info[WGF_DT_COUNT] = {
    [WGF_DT_F32] = {"f32", 1, 4},     [WGF_DT_F16] = {"f16", 1, 2},     [WGF_DT_BF16] = {"bf16", 1, 2},
    [WGF_DT_Q8_0] = {"q8_0", 32, 34}, [WGF_DT_Q4_0] = {"q4_0", 32, 18}, [WGF_DT_Q4_1] = {"q4_1", 32, 20},
    [WGF_DT_Q5_0] = {"q5_0", 32, 22}, [WGF_DT_Q5_1] = {"q5_1", 32, 24}, [WGF_DT_Q2_K] = {"q2_k", 256, 84},
    [WGF_DT_Q3_K] = {"q3_k", 256, 110}, [WGF_DT_Q4_K] = {"q4_k", 256, 144}, [WGF_DT_Q5_K] = {"q5_k", 256, 176},
    [WGF_DT_Q6_K] = {"q6_k", 256, 210},
};

static bool dt_valid(enum wgf_dtype t) { return (unsigned)t < (unsigned)WGF_DT_COUNT; }

const char *wgf_dtype_str(enum wgf_dtype t) { return dt_valid(t) ? dt_info[t].name : "?"; }

bool wgf_dtype_parse(const char *s, enum wgf_dtype *out)
{
    for (int t = 0; t < WGF_DT_COUNT; t++) {
        const char *n = dt_info[t].name;
        size_t      i = 0;
        while (n[i] && s[i] && (s[i] == n[i] || (s[i] >= 'A' && s[i] <= 'Z' && s[i] + 32 == n[i]))) i++;
        if (!n[i] && !s[i]) {
            *out = (enum wgf_dtype)t;
            return true;
        }
    }
    return false;
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

int wgf_dtype_block_elems(enum wgf_dtype t) { return dt_valid(t) ? dt_info[t].elems : 0; }
int wgf_dtype_block_bytes(enum wgf_dtype t) { return dt_valid(t) ? dt_info[t].bytes : 0; }

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
    default: wgf__quant_encode(t, src, n / (uint64_t)wgf_dtype_block_elems(t), dst); break;
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
    default: wgf__quant_decode(t, src, n / (uint64_t)wgf_dtype_block_elems(t), dst); break;
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
    default: {
        float    blk[256]; /* the largest block */
        uint64_t be = (uint64_t)wgf_dtype_block_elems(t->dtype), bb = (uint64_t)wgf_dtype_block_bytes(t->dtype);
        wgf__quant_decode(t->dtype, p + (uint64_t)i / be * bb, 1, blk);
        return blk[(uint64_t)i % be];
    }
    }
    return 0;
}
