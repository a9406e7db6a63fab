/* wgfuse — GGUF v3 reader (and a small writer for test models).
 *
 * The reader maps the file read-only and validates the whole header before returning:
 * magic/version, every key and string length against the bytes left, array counts,
 * value types, duplicate keys / tensor names, alignment, n_dims <= 4, positive dims with
 * non-overflowing products, tensor types, and tensor data ranges (aligned, inside the
 * file, non-overlapping, no holes). After wgf_gguf_open succeeds every accessor below is
 * bounds-safe. Strings are NOT NUL-terminated: they are (pointer, length) into the map.
 *
 * Metadata accessors for the tokenizer (tokenizer.ggml.*) and the model loader:
 *     int64_t kv = wgf_gguf_find(g, "tokenizer.ggml.tokens");        // -1 when absent
 *     wgf_gguf_get_arr(g, "tokenizer.ggml.tokens", WGF_GGUF_STRING, &n, err);
 *     wgf_gguf_arr_str(g, kv, i, &s, &len);
 */
#ifndef WGF_LLM_GGUF_H
#define WGF_LLM_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wgfuse/llm.h"
#include "wgfuse/status.h"

/* Metadata value types, numbered as in the GGUF spec. */
enum wgf_gguf_type {
    WGF_GGUF_UINT8   = 0,
    WGF_GGUF_INT8    = 1,
    WGF_GGUF_UINT16  = 2,
    WGF_GGUF_INT16   = 3,
    WGF_GGUF_UINT32  = 4,
    WGF_GGUF_INT32   = 5,
    WGF_GGUF_FLOAT32 = 6,
    WGF_GGUF_BOOL    = 7,
    WGF_GGUF_STRING  = 8,
    WGF_GGUF_ARRAY   = 9,
    WGF_GGUF_UINT64  = 10,
    WGF_GGUF_INT64   = 11,
    WGF_GGUF_FLOAT64 = 12,
};

/* ggml tensor type ids used by the files we read/write (ggml.h numbering). */
enum wgf_ggml_type {
    WGF_GGML_F32  = 0,
    WGF_GGML_F16  = 1,
    WGF_GGML_Q4_0 = 2,
    WGF_GGML_Q4_1 = 3,
    WGF_GGML_Q5_0 = 6,
    WGF_GGML_Q5_1 = 7,
    WGF_GGML_Q8_0 = 8,
    WGF_GGML_Q2_K = 10,
    WGF_GGML_Q3_K = 11,
    WGF_GGML_Q4_K = 12,
    WGF_GGML_Q5_K = 13,
    WGF_GGML_Q6_K = 14,
    WGF_GGML_BF16 = 30,
};

struct wgf_gguf; /* opaque */

/* One tensor as described in the header. `data` points into the map (aligned to the
 * file's alignment); shape is converted to row-major (shape[0] = rows, PyTorch order),
 * i.e. the reverse of GGUF's ne[] order. */
struct wgf_gguf_tensor_info {
    const char    *name;     /* NOT NUL-terminated                                        */
    size_t         name_len;
    enum wgf_dtype dtype;
    int            n_dims;
    int64_t        shape[WGF_TENSOR_MAX_DIMS]; /* row-major                              */
    uint64_t       offset;   /* from the start of the data section                       */
    uint64_t       nbytes;
    const void    *data;
};

/* Open and validate `path`. *out is owned by the caller (wgf_gguf_close). */
enum wgf_status wgf_gguf_open(const char *path, struct wgf_gguf **out, struct wgf_err *err);
void            wgf_gguf_close(struct wgf_gguf *g); /* NULL is a no-op */
/* The same checks on an in-memory image (fuzzing, tests). `data` is borrowed and must
 * outlive *out; `name` is used in messages. */
enum wgf_status wgf_gguf_open_mem(const void *data, size_t size, const char *name, struct wgf_gguf **out,
                                  struct wgf_err *err);
const char     *wgf_gguf_path(const struct wgf_gguf *g);
uint32_t        wgf_gguf_version(const struct wgf_gguf *g);
uint32_t        wgf_gguf_alignment(const struct wgf_gguf *g);

/* ---- metadata -------------------------------------------------------------------------- */
int64_t wgf_gguf_n_kv(const struct wgf_gguf *g);
int64_t wgf_gguf_find(const struct wgf_gguf *g, const char *key); /* -1 when absent     */
const char        *wgf_gguf_kv_key(const struct wgf_gguf *g, int64_t kv, size_t *len);
enum wgf_gguf_type wgf_gguf_kv_type(const struct wgf_gguf *g, int64_t kv);
/* For arrays: element type and count (count 0 and type ARRAY-less for scalars). */
enum wgf_gguf_type wgf_gguf_arr_type(const struct wgf_gguf *g, int64_t kv);
uint64_t           wgf_gguf_arr_n(const struct wgf_gguf *g, int64_t kv);

/* Typed getters by key. Integers accept any integer GGUF type whose value fits; floats
 * accept FLOAT32/FLOAT64. Missing key -> WGF_ERR_FORMAT "...: missing key 'k'"; wrong type
 * or out of range -> WGF_ERR_FORMAT naming the key. The *_opt variants return WGF_OK and
 * leave *out unchanged when the key is absent. */
enum wgf_status wgf_gguf_get_i64(const struct wgf_gguf *g, const char *key, int64_t lo, int64_t hi,
                                 int64_t *out, struct wgf_err *err);
enum wgf_status wgf_gguf_get_i64_opt(const struct wgf_gguf *g, const char *key, int64_t lo,
                                     int64_t hi, int64_t *out, struct wgf_err *err);
enum wgf_status wgf_gguf_get_f32(const struct wgf_gguf *g, const char *key, float *out,
                                 struct wgf_err *err);
enum wgf_status wgf_gguf_get_f32_opt(const struct wgf_gguf *g, const char *key, float *out,
                                     struct wgf_err *err);
enum wgf_status wgf_gguf_get_bool_opt(const struct wgf_gguf *g, const char *key, bool *out,
                                      struct wgf_err *err);
/* String value (not NUL-terminated). */
enum wgf_status wgf_gguf_get_str(const struct wgf_gguf *g, const char *key, const char **s,
                                 size_t *len, struct wgf_err *err);
/* Array of `elem` type: returns the kv index in *kv and the count in *n. */
enum wgf_status wgf_gguf_get_arr(const struct wgf_gguf *g, const char *key, enum wgf_gguf_type elem,
                                 int64_t *kv, uint64_t *n, struct wgf_err *err);

/* Array elements (kv from wgf_gguf_get_arr, i < n; checked with WGF_ASSERT). */
void    wgf_gguf_arr_str(const struct wgf_gguf *g, int64_t kv, uint64_t i, const char **s, size_t *len);
int64_t wgf_gguf_arr_int(const struct wgf_gguf *g, int64_t kv, uint64_t i); /* any int type; a UINT64 past INT64_MAX reads as INT64_MAX */
double  wgf_gguf_arr_float(const struct wgf_gguf *g, int64_t kv, uint64_t i); /* f32/f64 */

/* ---- tensors --------------------------------------------------------------------------- */
int64_t wgf_gguf_n_tensors(const struct wgf_gguf *g);
void    wgf_gguf_tensor(const struct wgf_gguf *g, int64_t i, struct wgf_gguf_tensor_info *out);
int64_t wgf_gguf_find_tensor(const struct wgf_gguf *g, const char *name); /* -1 absent */

/* The GGUF behind a loaded model (for the tokenizer: tokenizer.ggml.*), or NULL for a
 * Hugging Face directory. Borrowed: lives as long as the model. */
const struct wgf_gguf *wgf_llm_model_gguf(const struct wgf_llm_model *m);

/* ---- tokenizer ------------------------------------------------------------------------ */
struct wgf_tok_spec;
/* Fill *spec (include "wgfuse/tokenizer.h") from tokenizer.ggml.*: model, tokens, scores,
 * token_type, merges, pre, bos/eos/unk/padding/eot ids, add_bos_token, add_space_prefix.
 * Strings are copied NUL-terminated into *storage (free() it after
 * wgf_tokenizer_from_spec); spec->source = the file's path. Errors name the file and key:
 * wrong element types, scores/token_type lengths != tokens, ids outside the vocabulary,
 * NUL bytes in a string, unsupported tokenizer.ggml.model. */
enum wgf_status wgf_gguf_tok_spec(const struct wgf_gguf *g, struct wgf_tok_spec *spec, void **storage, struct wgf_err *err);

/* ---- conversion ----------------------------------------------------------------------- */
/* Write a loaded model (any format) as GGUF v3 with llama.cpp's names and conventions;
 * matrices in `dtype` (quantized types fall back to f16 for rows not a multiple of the
 * block; a quantized dtype needs a quantizer: wgf__quant_can_encode), 1-D tensors f32. Tokenizer metadata other than BOS/EOS ids is not copied. Needs about the
 * output size in RAM. */
enum wgf_status wgf_llm_model_save_gguf(const struct wgf_llm_model *m, const char *path, enum wgf_dtype dtype,
                                        struct wgf_err *err);

/* ---- writer (test models) --------------------------------------------------------------
 * Collects metadata and tensors in memory, then writes a GGUF v3 file. Tensor data is
 * copied in already encoded (see wgf_dtype_encode in dtype.c). */
struct wgf_gguf_writer;
struct wgf_gguf_writer *wgf_gguf_writer_new(void); /* NULL on OOM */
void wgf_gguf_writer_free(struct wgf_gguf_writer *w);
/* Each add returns WGF_OK or WGF_ERR_NOMEM (sticky: checked again by write). */
enum wgf_status wgf_gguf_writer_add_u32(struct wgf_gguf_writer *w, const char *key, uint32_t v);
enum wgf_status wgf_gguf_writer_add_i32(struct wgf_gguf_writer *w, const char *key, int32_t v);
enum wgf_status wgf_gguf_writer_add_f32(struct wgf_gguf_writer *w, const char *key, float v);
enum wgf_status wgf_gguf_writer_add_bool(struct wgf_gguf_writer *w, const char *key, bool v);
enum wgf_status wgf_gguf_writer_add_str(struct wgf_gguf_writer *w, const char *key, const char *v);
enum wgf_status wgf_gguf_writer_add_arr_str(struct wgf_gguf_writer *w, const char *key,
                                            const char *const *v, size_t n);
enum wgf_status wgf_gguf_writer_add_arr_i32(struct wgf_gguf_writer *w, const char *key,
                                            const int32_t *v, size_t n);
enum wgf_status wgf_gguf_writer_add_arr_f32(struct wgf_gguf_writer *w, const char *key,
                                            const float *v, size_t n);
/* Copy metadata entry `kv` of an open GGUF (key, type and value bytes as stored). */
enum wgf_status wgf_gguf_writer_copy_kv(struct wgf_gguf_writer *w, const struct wgf_gguf *g, int64_t kv);
/* shape is row-major (PyTorch order); data holds nbytes of `dtype`-encoded elements. */
enum wgf_status wgf_gguf_writer_add_tensor(struct wgf_gguf_writer *w, const char *name,
                                           enum wgf_dtype dtype, int n_dims, const int64_t *shape,
                                           const void *data, uint64_t nbytes);
enum wgf_status wgf_gguf_writer_write(struct wgf_gguf_writer *w, const char *path, struct wgf_err *err);

#endif
