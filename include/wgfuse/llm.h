/* wgfuse — LLM model files: config, weights, loading.
 *
 * One loader for two on-disk forms of the same model:
 *   - a Hugging Face directory: config.json + model.safetensors, or
 *     model.safetensors.index.json + shards (f32 / f16 / bf16);
 *   - a GGUF v3 file (llama.cpp): F32 / F16 / BF16 / Q4_0 / Q4_1 / Q5_0 / Q5_1 / Q8_0 /
 *     Q2_K / Q3_K / Q4_K / Q5_K / Q6_K tensors, any mixture (Q4_K_M files mix types).
 * Both fill the same struct wgf_llm_config and struct wgf_llm_weights, with the HF
 * meaning of every tensor (GGUF's Llama q/k row permutation is undone on load).
 *
 * Memory: f32/f16/bf16 matrices point straight into the read-only file mapping (no copy,
 * peak RSS stays near the file size). Copies are made only where needed and are small or
 * unavoidable: 1-D tensors (norm weights, biases, rope factors) are always converted to f32;
 * quantized matrices stay blocks in the mapping (cpu-ref decodes one row at a time);
 * GGUF Llama q/k matrices are un-permuted into an owned buffer (same dtype, whole blocks);
 * a tensor at an address not aligned to its element size (odd safetensors header) is
 * copied aligned. The mapped pages a copy was
 * made from are released again (measured: 1.003x peak RSS for 1 GB f16, bench/RESULTS.md).
 * Every f32/f16/bf16 data pointer is therefore aligned to its element size (blocks are
 * read bytewise).
 *
 * Every failure returns a status and one line in struct wgf_err naming the file and the
 * field or tensor involved. */
#ifndef WGFUSE_LLM_H
#define WGFUSE_LLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wgfuse/half.h"
#include "wgfuse/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum wgf_arch {
    WGF_ARCH_LLAMA, /* Llama-2/3: separate q/k/v, no bias                          */
    WGF_ARCH_QWEN2, /* Qwen2/2.5: q/k/v bias, GQA, usually tied embeddings          */
    WGF_ARCH_PHI3,  /* Phi-3: fused qkv_proj and gate_up_proj                       */
};
const char *wgf_arch_str(enum wgf_arch a); /* "llama", "qwen2", "phi3" */

enum wgf_dtype {
    WGF_DT_F32,  /* 4 bytes / element                                               */
    WGF_DT_F16,  /* 2 bytes / element, IEEE half                                    */
    WGF_DT_BF16, /* 2 bytes / element, upper half of an f32                         */
    WGF_DT_Q8_0, /* blocks of 32: f16 scale d + 32 x int8 q; x = d*q (34 bytes)      */
    WGF_DT_Q4_0, /* blocks of 32: f16 scale d + 16 bytes of nibbles; x = d*(q-8)
                    (18 bytes); byte j holds element j (low nibble) and j+16 (high) */
    /* ggml's other block types, kept as stored; layouts and formulas: src/llm/quant.c */
    WGF_DT_Q4_1, /* 32 per 20-byte block: x = d*q + m, q 4 bits                       */
    WGF_DT_Q5_0, /* 32 per 22-byte block: x = d*(q-16), q 5 bits                       */
    WGF_DT_Q5_1, /* 32 per 24-byte block: x = d*q + m, q 5 bits                        */
    WGF_DT_Q2_K, /* 256 per 84 bytes: 16 sub-blocks, 4-bit scale/min, q 2 bits         */
    WGF_DT_Q3_K, /* 256 per 110 bytes: 16 sub-blocks, 6-bit signed scale, q 3 bits     */
    WGF_DT_Q4_K, /* 256 per 144 bytes: 8 sub-blocks, 6-bit scale/min, q 4 bits         */
    WGF_DT_Q5_K, /* 256 per 176 bytes: 8 sub-blocks, 6-bit scale/min, q 5 bits         */
    WGF_DT_Q6_K, /* 256 per 210 bytes: 16 sub-blocks, int8 scale, q 6 bits             */
};
#define WGF_DT_COUNT (WGF_DT_Q6_K + 1)
/* "f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k" ... "q6_k" */
const char *wgf_dtype_str(enum wgf_dtype t);
/* Elements per block (1 for f32/f16/bf16, 32 for q*_0/q*_1, 256 for q*_k) and bytes per
 * block; 0 for a value outside the enum. */
int wgf_dtype_block_elems(enum wgf_dtype t);
int wgf_dtype_block_bytes(enum wgf_dtype t);
/* The dtype named `s` (wgf_dtype_str's names, case-insensitive, so "Q4_K" too); false when
 * unknown. */
bool wgf_dtype_parse(const char *s, enum wgf_dtype *out);

#define WGF_TENSOR_NAME_MAX 96
#define WGF_TENSOR_MAX_DIMS 4

/* A tensor view. Shapes are row-major as in PyTorch: shape[0] = rows (output features of
 * a linear layer), shape[n_dims-1] = cols (input features, contiguous in memory). A
 * matrix row r starts at byte r * nbytes / shape[0]. `data` is borrowed from the model
 * (file mapping or a model-owned buffer); data == NULL means "absent" (e.g. no bias). */
struct wgf_tensor {
    enum wgf_dtype dtype;                        /* element type of `data`                */
    int            n_dims;                       /* 0..4 (0 = scalar, 1 element)         */
    int64_t        shape[WGF_TENSOR_MAX_DIMS];   /* row-major; unused dims are 1         */
    const void    *data;                         /* borrowed; NULL = absent              */
    uint64_t       nbytes;                       /* bytes at `data`                      */
    char           name[WGF_TENSOR_NAME_MAX];    /* name in the file it came from        */
};

/* Number of elements (product of shape[0..n_dims)), and elements per row (last dim). */
int64_t wgf_tensor_nelems(const struct wgf_tensor *t);
int64_t wgf_tensor_nrows(const struct wgf_tensor *t); /* nelems / cols (1 for 1-D)   */
int64_t wgf_tensor_ncols(const struct wgf_tensor *t); /* shape[n_dims-1] (1 for 0-D)  */
/* Dequantize/convert row `row` (0 <= row < nrows) to f32: out has ncols floats. */
void wgf_tensor_row_f32(const struct wgf_tensor *t, int64_t row, float *out);
/* Element i (flat index) as f32. Slow (one element); for tests and tiny tensors. */
float wgf_tensor_get_f32(const struct wgf_tensor *t, int64_t i);

/* Scalar f16/bf16 conversions: wgfuse/half.h (included above). */

/* ---- config ---------------------------------------------------------------------------- */

enum wgf_rope_scaling_type {
    WGF_ROPE_SCALING_NONE,
    WGF_ROPE_SCALING_LINEAR,   /* positions / factor                                     */
    WGF_ROPE_SCALING_LLAMA3,   /* Llama-3.1 smooth low/high frequency scaling             */
    WGF_ROPE_SCALING_LONGROPE, /* Phi-3 "longrope"/"su": per-frequency short/long factors */
};

#define WGF_ROPE_MAX_HALF 256 /* head_dim / 2 up to 256 (head_dim 512)               */
#define WGF_MAX_EOS 16 /* distinct end-of-sequence ids a config may list (more: refused) */

struct wgf_rope_scaling {
    enum wgf_rope_scaling_type type;
    float factor;                 /* linear / llama3 factor; longrope: max_pos/orig     */
    float low_freq_factor;        /* llama3                                             */
    float high_freq_factor;       /* llama3                                             */
    int   original_max_pos;       /* llama3 / longrope: original context length          */
    float attn_factor;            /* longrope: cos/sin scale (computed when absent)      */
    int   n_factors;              /* entries used below (rope_dim / 2), 0 = none         */
    float short_factor[WGF_ROPE_MAX_HALF]; /* longrope: divisors when seq_len <= original;
                                              llama3 from GGUF: rope_freqs.weight divisors */
    float long_factor[WGF_ROPE_MAX_HALF];  /* longrope: divisors when seq_len > original   */
};

struct wgf_llm_config {
    enum wgf_arch arch;
    int   dim;           /* hidden size (d_model)                                        */
    int   hidden_dim;    /* FFN intermediate size                                        */
    int   n_layers;
    int   n_heads;       /* query heads                                                  */
    int   n_kv_heads;    /* key/value heads (GQA); n_heads % n_kv_heads == 0             */
    int   head_dim;      /* usually dim / n_heads                                        */
    int   rope_dim;      /* rotated dims per head (== head_dim for these archs)          */
    int   vocab_size;    /* rows of tok_embd                                             */
    int   max_seq_len;   /* max_position_embeddings / context_length                     */
    float norm_eps;      /* RMSNorm epsilon                                              */
    float rope_theta;    /* RoPE base                                                    */
    struct wgf_rope_scaling rope_scaling;
    bool  tie_embeddings; /* lm_head shares tok_embd                                     */
    bool  attn_bias;      /* q/k/v projections have a bias (Qwen2)                       */
    int   bos_id;         /* -1 when unknown                                             */
    int   n_eos;          /* entries used in eos_ids                                     */
    int   eos_ids[WGF_MAX_EOS];
    char  source_dtype[16]; /* matrices as stored: a wgf_dtype_str name, or "mixed"       */
    int   sliding_window;  /* applied attention window, below max_seq_len (0: none): in layers
                              >= swa_first_layer, position q attends to positions
                              max(0, q - sliding_window + 1) .. q, as transformers masks
                              (docs/llm.md, "Attention span")                               */
    int   swa_first_layer; /* first layer with the window (Qwen2: max_window_layers; else 0) */
    int   sliding_window_unapplied; /* a GGUF's attention.sliding_window that llama.cpp does not
                                       apply (Phi-3) and so neither do we; kept for a note and
                                       for llm quantize (0: none)                           */
};

/* The attention window of one layer: 0 when the layer attends to every earlier position. */
static inline int wgf_llm_layer_window(const struct wgf_llm_config *c, int layer)
{
    return c->sliding_window > 0 && layer >= c->swa_first_layer ? c->sliding_window : 0;
}

/* RoPE inverse frequencies for a sequence of (up to) seq_len positions: inv_freq has
 * rope_dim/2 floats; angle(pos, i) = pos * inv_freq[i]; cos/sin are multiplied by
 * *attn_scale (1 except longrope). Applies linear/llama3/longrope scaling. */
void wgf_llm_rope_inv_freq(const struct wgf_llm_config *cfg, int seq_len, float *inv_freq,
                           float *attn_scale);

/* ---- weights --------------------------------------------------------------------------- */

/* Per layer. Matrices are (out, in). Norms and biases are always f32 (converted on load).
 * Phi-3's fused qkv_proj / gate_up_proj appear as row-slices of the fused tensor (rows are
 * contiguous, so no copy): wq = rows [0, q), wk = [q, q+kv), wv = [q+kv, q+2kv);
 * w_gate = rows [0, hidden), w_up = [hidden, 2*hidden). */
struct wgf_layer_weights {
    struct wgf_tensor attn_norm; /* (dim) f32                                             */
    struct wgf_tensor wq;        /* (n_heads * head_dim, dim)                             */
    struct wgf_tensor wk;        /* (n_kv_heads * head_dim, dim)                          */
    struct wgf_tensor wv;        /* (n_kv_heads * head_dim, dim)                          */
    struct wgf_tensor bq;        /* (n_heads * head_dim) f32, data NULL when absent       */
    struct wgf_tensor bk;        /* (n_kv_heads * head_dim) f32, data NULL when absent    */
    struct wgf_tensor bv;        /* (n_kv_heads * head_dim) f32, data NULL when absent    */
    struct wgf_tensor wo;        /* (dim, n_heads * head_dim)                             */
    struct wgf_tensor ffn_norm;  /* (dim) f32                                             */
    struct wgf_tensor w_gate;    /* (hidden_dim, dim)                                     */
    struct wgf_tensor w_up;      /* (hidden_dim, dim)                                     */
    struct wgf_tensor w_down;    /* (dim, hidden_dim)                                     */
};

struct wgf_llm_weights {
    struct wgf_tensor         tok_embd; /* (vocab_size, dim)                              */
    struct wgf_tensor         out_norm; /* (dim) f32                                      */
    struct wgf_tensor         lm_head;  /* (vocab_size, dim); == tok_embd when tied       */
    struct wgf_layer_weights *layers;   /* n_layers entries, owned by the model           */
};

enum wgf_llm_format {
    WGF_LLM_FORMAT_HF,   /* Hugging Face directory (config.json + safetensors)          */
    WGF_LLM_FORMAT_GGUF, /* single GGUF file                                            */
};

struct wgf__llm_model_priv;

struct wgf_llm_model {
    struct wgf_llm_config       cfg;
    struct wgf_llm_weights      weights;
    enum wgf_llm_format         format;
    char                        path[4096]; /* as given: the HF directory or .gguf file */
    struct wgf__llm_model_priv *priv;       /* mappings and owned buffers               */
};

/* Load a model from `path`: a directory (HF) or a file (GGUF, recognised by its magic).
 * On success *out is a new model owned by the caller (free with wgf_llm_model_free); on
 * failure *out is NULL and err holds one line naming the file and what is wrong. */
enum wgf_status wgf_llm_model_load(const char *path, struct wgf_llm_model **out,
                                   struct wgf_err *err);
/* A model with the shapes of a real one ("qwen2.5-0.5b", "qwen2.5-1.5b", "phi-3-mini",
 * "llama-3.2-1b": their published configs) and random, never zero, f16 or bf16 weights, built
 * in memory: for benchmarks where no weights can be downloaded. Free with wgf_llm_model_free. */
enum wgf_status wgf_llm_model_synth(const char *shape, enum wgf_dtype dtype, uint64_t seed,
                                    struct wgf_llm_model **out, struct wgf_err *err);
const char     *wgf_llm_synth_shapes(void); /* the names above, for messages */
/* The same with weights "f16", "bf16" or a quantization recipe of wgf_llm_quantize ("Q8_0",
 * "Q4_K_M", ...): each matrix in the type the recipe's mixture rules give it, random blocks. */
enum wgf_status wgf_llm_model_synth_weights(const char *shape, const char *weights, uint64_t seed,
                                            struct wgf_llm_model **out, struct wgf_err *err);

/* ---- quantize (llama.cpp's mixtures; rules in docs/llm.md) ----------------------------- */
struct wgf_llm_quantize_stats {
    uint64_t in_weight_bytes;          /* weight bytes of the loaded input             */
    uint64_t out_file_bytes;           /* size of the GGUF written                     */
    int      n_tensors[WGF_DT_COUNT];  /* matrices written per type                    */
};
/* The recipe names `type` accepts, for messages. */
const char *wgf_llm_quantize_types(void);
/* True when `type` is one of them (case-insensitive). */
bool        wgf_llm_quantize_known(const char *type);
/* Load `in` (HF directory or GGUF), write `out` as a GGUF of recipe `type` ("Q4_K_M",
 * "Q8_0", ...; case-insensitive); `pure`: every matrix in the base type (fallbacks still
 * apply). Metadata: a GGUF input's keys are copied (tokenizer, chat template); an HF
 * input's tokenizer.json is converted (an error when absent unless no_tokenizer). The
 * output is written to a temporary file and renamed; needs about its size in RAM.
 * stats may be NULL. */
enum wgf_status wgf_llm_quantize(const char *in, const char *out, const char *type, bool pure, bool no_tokenizer,
                                 struct wgf_llm_quantize_stats *stats, struct wgf_err *err);

/* Free a model and unmap its files. NULL is a no-op. Tensor views die with the model. */
void wgf_llm_model_free(struct wgf_llm_model *m);

/* Read every byte of every weight once (sums pages in): makes the mapping resident, so a
 * load-memory benchmark measures the true peak. Returns a checksum so it is not elided. */
uint64_t wgf_llm_model_touch(const struct wgf_llm_model *m);

/* Total bytes of weight data the model references (mapped + owned). */
uint64_t wgf_llm_model_weight_bytes(const struct wgf_llm_model *m);

#ifdef __cplusplus
}
#endif
#endif
