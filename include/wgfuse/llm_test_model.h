/* wgfuse — small random-weight models for tests (`wgfuse llm make-test-model`), written as a
 * Hugging Face directory
 * (config.json + safetensors, optionally sharded) or as a GGUF v3 file, with the tensor
 * names and metadata keys transformers and llama.cpp use. The same spec + seed gives the
 * same f32 weights in every format (each tensor draws from its own stream seeded by
 * seed and its HF name), so formats can be compared tensor by tensor.
 *
 * Tokenizers: with_test_tokenizer writes wgfuse's own small test tokenizer
 * (wgf_tokenizer_write_test_json) in the format's form; otherwise a hook may write one
 * (tokenizer.json into the HF directory, or tokenizer.ggml.* keys into the GGUF writer of
 * src/llm/gguf.h). Without either, the GGUF gets only tokenizer.ggml.bos_token_id /
 * eos_token_id (so a hook owns every tokenizer.ggml.* key when given). */
#ifndef WGFUSE_LLM_TEST_MODEL_H
#define WGFUSE_LLM_TEST_MODEL_H
#include <stdbool.h>
#include <stdint.h>

#include "wgfuse/llm.h"
#include "wgfuse/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wgf_gguf_writer; /* src/llm/gguf.h: only a hook sees one */

struct wgf_test_model_spec {
    enum wgf_arch arch;
    int      dim, hidden_dim, n_layers, n_heads, n_kv_heads; /* head_dim = dim / n_heads */
    int      vocab_size, max_seq_len;
    float    norm_eps, rope_theta;
    bool     tie_embeddings;
    int      bos_id, eos_id;
    uint64_t seed;
    /* RoPE scaling written into the files: NONE, LINEAR (factor), LLAMA3 (factor, low/high
     * freq factors, original_max_pos) or LONGROPE (original_max_pos; short/long factors
     * are drawn from the seed when n_factors == 0). */
    struct wgf_rope_scaling rope_scaling;
};

/* Small defaults for `arch`: dim 64, 2 layers, 4 heads / 2 kv heads, hidden 96 (phi3:
 * 4 kv heads = MHA as Phi-3-mini), vocab 128, ctx 256, Qwen2 tied, seed 1234. */
void wgf_test_model_spec_default(struct wgf_test_model_spec *s, enum wgf_arch arch);

enum wgf_test_model_format {
    WGF_TEST_MODEL_HF,   /* path = directory (created)                                 */
    WGF_TEST_MODEL_GGUF, /* path = file                                               */
};

/* Tokenizer hook: exactly one of hf_dir / gguf is non-NULL. */
typedef enum wgf_status (*wgf_test_tokenizer_hook)(void *user, const char *hf_dir, struct wgf_gguf_writer *gguf,
                                                  struct wgf_err *err);

struct wgf_test_model_opts {
    enum wgf_test_model_format format;
    enum wgf_dtype             dtype;    /* HF: f32/f16/bf16. GGUF: any with a quantizer;
                                            matrices whose rows are not a multiple of the
                                            block fall back to f16 (as llama.cpp does);
                                            norms/biases f32                              */
    int                        n_shards; /* HF: <= 1 one model.safetensors; N: index + N shards */
    wgf_test_tokenizer_hook    tokenizer;
    void                      *tokenizer_user;
    bool                       with_test_tokenizer; /* write the test tokenizer (ids 0..255
                                            bytes, ChatML specials; WGF_TOK_TEST_VOCAB ids,
                                            so vocab_size must be at least that) and make
                                            BOS <|endoftext|> and EOS <|im_end|> as Qwen2.5
                                            does; the hook is then not used             */
};

enum wgf_status wgf_test_model_write(const struct wgf_test_model_spec *s, const struct wgf_test_model_opts *o,
                                     const char *path, struct wgf_err *err);

/* The canonical f32 values of tensor `hf_name` (an HF name of this spec's model) into out
 * (nelems floats). Returns false if the name is not part of the model. */
bool wgf_test_model_values(const struct wgf_test_model_spec *s, const char *hf_name, float *out, uint64_t nelems);

#ifdef __cplusplus
}
#endif
#endif
