/* wgfuse — internals shared by the model-file readers (safetensors.c, gguf.c, hf_config.c,
 * model_load.c, test_model.c). Not part of the public API. */
#ifndef WGF_LLM_MODEL_FILES_H
#define WGF_LLM_MODEL_FILES_H
#include <stdbool.h>
#include <stdint.h>

#include "util/mapfile.h"
#include "wgfuse/llm.h"

/* ---- model_load.c ------------------------------------------------------------------------ */
/* An empty model (free with wgf_llm_model_free) and a buffer it owns (freed with it). */
struct wgf_llm_model *wgf__llm_model_new(void);
void                 *wgf__llm_model_own(struct wgf_llm_model *m, size_t n);
/* Rows [r0, r0 + n) of a 2-D tensor as a view (rows are contiguous: no copy), named
 * "name[tag]": how a fused tensor (Phi-3's qkv and gate_up) becomes the model's matrices. */
struct wgf_tensor     wgf__tensor_slice_rows(const struct wgf_tensor *t, int64_t r0, int64_t n, const char *tag);

/* ---- dtype.c ---------------------------------------------------------------------------- */
/* Bytes of `nelems` elements laid out as rows of `ncols` (ncols must be a multiple of the
 * block size for quantized types). False on overflow or a partial block. */
bool wgf__dtype_nbytes(enum wgf_dtype t, uint64_t nelems, uint64_t ncols, uint64_t *out);
/* Encode n floats (a multiple of the block size) into dst. Quantized types need
 * wgf__quant_can_encode(t) (checked with WGF_ASSERT). */
void wgf__dtype_encode(enum wgf_dtype t, const float *src, uint64_t n, void *dst);
/* Decode n elements (a multiple of the block size) from src to f32. */
void wgf__dtype_decode(enum wgf_dtype t, const void *src, uint64_t n, float *dst);

/* ---- quant.c: ggml's block formats (layouts in the file header) --------------------------- */
/* Decode `nblocks` blocks of quantized type t (32 or 256 floats each) from src (any
 * alignment) to dst, exactly as ggml's dequantize_row_* computes them. */
void wgf__quant_decode(enum wgf_dtype t, const void *src, uint64_t nblocks, float *dst);
/* Types with a reference quantizer here (ggml's quantize_row_*_ref, same bytes). */
bool wgf__quant_can_encode(enum wgf_dtype t);
/* Quantize nblocks blocks (32 or 256 finite floats each); t must satisfy
 * wgf__quant_can_encode. Bytes as ggml's quantize_row_*_ref writes them. */
void wgf__quant_encode(enum wgf_dtype t, const float *src, uint64_t nblocks, void *dst);
/* Activations rounded to int8 per 32-element block (--activations q8; n a multiple of 32):
 * d = max|x| / 127, y = d round(x / d) (half to even, as WGSL's round), 0 where d is 0; a
 * block holding a NaN or an infinity becomes all NaN. The GPU plans round the same way
 * (lib_rows_q's qx_round, qround_rows): |x| is maximised as its bits, so both sides take the
 * same d. y may be x. */
void wgf__quant_round_q8(const float *x, float *y, uint64_t n);

/* ---- gguf_convert.c ---------------------------------------------------------------------- */
/* What a matrix is, for picking its type (llama.cpp's categories). */
enum wgf__role {
    WGF__ROLE_TOKEN_EMBD, WGF__ROLE_OUTPUT, WGF__ROLE_ATTN_Q, WGF__ROLE_ATTN_K, WGF__ROLE_ATTN_V,
    WGF__ROLE_ATTN_QKV, WGF__ROLE_ATTN_OUTPUT, WGF__ROLE_FFN_GATE, WGF__ROLE_FFN_UP, WGF__ROLE_FFN_DOWN,
    WGF__ROLE_OTHER, /* 1-D: always F32 */
};
struct wgf_gguf_writer;
struct wgf__save_opts {
    /* the type of a matrix of `role` in `layer` (-1 outside the layers) with `cols` columns
     * (a type whose block does not divide cols falls back to F16 in the writer) */
    enum wgf_dtype (*pick)(void *user, enum wgf__role role, int layer, int64_t cols);
    void    *user;
    uint32_t file_type; /* general.file_type (llama_ftype); UINT32_MAX: not written        */
    /* metadata after the architecture keys (tokenizer, copied keys); when set, it writes
     * the BOS/EOS ids too */
    enum wgf_status (*meta)(void *user, struct wgf_gguf_writer *w, struct wgf_err *err);
};
/* wgf_llm_model_save_gguf with a per-matrix type choice (quantize.c). */
enum wgf_status wgf__llm_save_gguf(const struct wgf_llm_model *m, const char *path, const struct wgf__save_opts *o,
                                   struct wgf_err *err);

/* ---- quantize.c ---------------------------------------------------------------------------- */
/* The type recipe `type` gives a matrix of `role` in `layer` of `n_layers` with `cols`
 * columns, in a model with n_gqa = n_head / n_kv_head (WGF_DT_COUNT for an unknown recipe). */
enum wgf_dtype wgf__llm_quantize_pick(const char *type, bool pure, enum wgf__role role, int layer, int n_layers, int n_gqa,
                                      int64_t cols);

/* ---- safetensors.c ---------------------------------------------------------------------- */
/* One tensor of a parsed safetensors file. Only dtypes we can load are kept as views;
 * other known dtypes are validated (offsets) and remembered as unsupported. */
struct wgf__st_tensor {
    char          *name;      /* NUL-terminated, owned by the file's name pool            */
    bool           supported; /* dtype is F32/F16/BF16                                    */
    char           dtype_str[12];
    enum wgf_dtype dtype;
    int            n_dims;
    int64_t        shape[WGF_TENSOR_MAX_DIMS];
    uint64_t       begin, end; /* byte range in the data section                           */
    const void    *data;
};

struct wgf__st_file {
    char                  *path;
    struct wgf_mapfile     map;
    uint64_t               data_off;  /* 8 + header length                               */
    int64_t                n_tensors;
    struct wgf__st_tensor *tensors;   /* sorted by name (for lookup)                      */
    char                  *name_pool;
    bool                   borrowed;  /* map.data belongs to the caller (open_mem)         */
};

enum wgf_status wgf__st_open(const char *path, struct wgf__st_file *f, struct wgf_err *err);
void            wgf__st_close(struct wgf__st_file *f);
/* The same checks on an in-memory image (fuzzing, tests); data is borrowed. */
enum wgf_status wgf__st_open_mem(const void *data, size_t size, const char *name, struct wgf__st_file *f,
                                 struct wgf_err *err);
/* Tensor by name (binary search), or NULL. */
const struct wgf__st_tensor *wgf__st_find(const struct wgf__st_file *f, const char *name);

/* ---- gguf.c ----------------------------------------------------------------------------- */
struct wgf_gguf;
/* The mapping behind an open GGUF (for releasing pages that were copied out). */
const struct wgf_mapfile *wgf__gguf_mapfile(const struct wgf_gguf *g);

/* ---- hf_config.c ------------------------------------------------------------------------ */
/* Parse config.json text (len bytes) into *cfg. `path` is used in messages. */
enum wgf_status wgf__hf_config_parse(const char *path, const char *text, size_t len,
                                     struct wgf_llm_config *cfg, struct wgf_err *err);
/* False (and the offending byte in *bad_at) when one JSON container has more members than
 * max(64, len/16): bounds jansson's largest allocation by the input size. */
bool wgf__json_bounded(const char *text, size_t len, size_t *bad_at);
/* Check the derived invariants (positive dims, head divisibility, limits). */
enum wgf_status wgf__llm_config_check(const char *path, const struct wgf_llm_config *cfg,
                                      struct wgf_err *err);

/* ---- model_load.c ----------------------------------------------------------------------- */
/* wgf_llm_model_load for a GGUF image in memory (fuzzing): `data` is borrowed and must
 * outlive the model. */
enum wgf_status wgf__llm_model_load_gguf_mem(const void *data, size_t size, const char *name,
                                             struct wgf_llm_model **out, struct wgf_err *err);

/* ---- names ------------------------------------------------------------------------------ */
/* llama.cpp's q/k row permutation for Llama (GGUF order <-> HF rotate-half order).
 * Row r of a (n_head * head_dim, cols) matrix: hf_row -> gguf_row. */
static inline int64_t wgf__llama_perm_row(int64_t hf_row, int head_dim)
{
    int64_t h = hf_row / head_dim, r = hf_row % head_dim, half = head_dim / 2;
    int64_t i = r / half, j = r % half; /* HF: (h, i, j); GGUF: (h, j, i) */
    return h * head_dim + j * 2 + i;
}

#endif
