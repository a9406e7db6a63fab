/* Fuzz target gguf_parse: GGUF header, metadata and tensor infos (wgf_gguf_open_mem), every
 * accessor on an accepted file, then the model loader on the same bytes (hyperparameters
 * and tensor shapes vs the config: RELIABILITY.md items 1-13). A quantized tensor's first
 * block is decoded, and re-quantized when its values are finite. */
#include "fuzz_common.h"
#include "llm/gguf.h"
#include "llm/model_files.h"
#include "wgfuse/llm.h"

static volatile uint8_t g_sink;

static void walk(const struct wgf_gguf *g)
{
    int64_t nkv = wgf_gguf_n_kv(g);
    for (int64_t kv = 0; kv < nkv; kv++) {
        size_t      klen;
        const char *k = wgf_gguf_kv_key(g, kv, &klen);
        FZ_REQUIRE(klen > 0, "empty key accepted");
        g_sink ^= (uint8_t)k[klen - 1];
        if (wgf_gguf_kv_type(g, kv) != WGF_GGUF_ARRAY) continue;
        uint64_t n = wgf_gguf_arr_n(g, kv);
        if (n == 0) continue;
        enum wgf_gguf_type t = wgf_gguf_arr_type(g, kv);
        for (uint64_t i = 0; i < n; i += 1 + n / 8) { /* first, a few inside, and last */
            uint64_t j = i;
            for (int pass = 0; pass < 2; pass++, j = n - 1) {
                if (t == WGF_GGUF_STRING) {
                    const char *s;
                    size_t      len;
                    wgf_gguf_arr_str(g, kv, j, &s, &len);
                    if (len) g_sink ^= (uint8_t)s[len - 1];
                } else if (t == WGF_GGUF_FLOAT32 || t == WGF_GGUF_FLOAT64) {
                    g_sink ^= (uint8_t)(wgf_gguf_arr_float(g, kv, j) != 0);
                } else if (t != WGF_GGUF_BOOL) {
                    g_sink ^= (uint8_t)wgf_gguf_arr_int(g, kv, j);
                }
            }
        }
    }
    int64_t nt = wgf_gguf_n_tensors(g);
    for (int64_t i = 0; i < nt; i++) {
        struct wgf_gguf_tensor_info ti;
        wgf_gguf_tensor(g, i, &ti);
        FZ_REQUIRE(ti.n_dims >= 0 && ti.n_dims <= WGF_TENSOR_MAX_DIMS, "n_dims %d", ti.n_dims);
        if (ti.nbytes) g_sink ^= ((const uint8_t *)ti.data)[0] ^ ((const uint8_t *)ti.data)[ti.nbytes - 1];
        if (wgf_dtype_block_elems(ti.dtype) > 1) { /* a block of hostile bytes decodes (NaN/Inf scales included) */
            float blk[256];
            wgf__quant_decode(ti.dtype, ti.data, 1, blk);
            g_sink ^= (uint8_t)(blk[0] != blk[0]);
            /* and its values, when finite (what llm quantize accepts), go through the type's
             * quantizer: extreme magnitudes and subnormals against the searches' float->int
             * conversions (UBSan's float-cast-overflow) */
            int  ne     = wgf_dtype_block_elems(ti.dtype);
            bool finite = true;
            for (int e = 0; e < ne; e++) finite = finite && blk[e] - blk[e] == 0.0f;
            if (finite && wgf__quant_can_encode(ti.dtype)) {
                uint8_t q[256];
                wgf__quant_encode(ti.dtype, blk, 1, q);
                wgf__quant_decode(ti.dtype, q, 1, blk);
                g_sink ^= (uint8_t)(blk[ne - 1] != blk[ne - 1]);
            }
        }
        char name[WGF_TENSOR_NAME_MAX + 1];
        if (ti.name_len < sizeof name && !memchr(ti.name, 0, ti.name_len)) {
            memcpy(name, ti.name, ti.name_len);
            name[ti.name_len] = 0;
            FZ_REQUIRE(wgf_gguf_find_tensor(g, name) == i, "tensor '%s' not found by name", name);
        }
    }
    struct wgf_err e = {0};
    const char    *s;
    size_t         len;
    int64_t        v;
    float          f;
    (void)wgf_gguf_get_str(g, "general.architecture", &s, &len, &e);
    (void)wgf_gguf_get_i64(g, "tokenizer.ggml.bos_token_id", 0, INT32_MAX, &v, &e);
    (void)wgf_gguf_get_f32_opt(g, "general.alignment", &f, &e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct wgf_gguf *g   = NULL;
    struct wgf_err   err = {0};
    enum wgf_status  st  = wgf_gguf_open_mem(data, size, "fuzz.gguf", &g, &err);
    if (st != WGF_OK) {
        fz_check_refusal(st, &err);
        FZ_REQUIRE(g == NULL, "handle returned with an error");
        return 0;
    }
    walk(g);
    bool has_arch = wgf_gguf_find(g, "general.architecture") >= 0;
    wgf_gguf_close(g);
    if (!has_arch) return 0;
    /* the model loader takes a path: the same bytes through a memfd */
    struct wgf_llm_model *m = NULL;
    st = wgf_llm_model_load(fz_memfd_path(0, data, size), &m, &err);
    if (st == WGF_OK) {
        g_sink ^= (uint8_t)wgf_llm_model_touch(m);
        wgf_llm_model_free(m);
    } else {
        fz_check_refusal(st, &err);
    }
    return 0;
}
