/* wgfuse — tokenizer: byte-level BPE (GPT-2 / Qwen2 / Llama-3) and SentencePiece-style
 * score-merged vocabularies (Llama-2 / Phi-3), loaded from a Hugging Face tokenizer.json
 * or fed from a GGUF file's tokenizer.ggml.* arrays. A SentencePiece-style tokenizer.json
 * (Llama-2 / Phi-3: BPE with byte_fallback over U+2581-escaped text) loads as an SPM
 * tokenizer that merges by the file's ranks.
 *
 * Contracts (all functions):
 *  - Text is bytes. Encoding never fails on content: invalid UTF-8, NUL, overlong forms and
 *    surrogates give deterministic ids (byte-level BPE covers every byte; SPM falls back
 *    to <0xXX> byte tokens, else <unk>). decode(encode(s)) == s for valid UTF-8 s (SPM:
 *    except a literal U+2581, which SentencePiece itself maps to a space).
 *  - Special (control) tokens written in the text are plain text unless parse_special;
 *    non-special added ("user-defined") tokens are always matched, as llama.cpp and HF do.
 *  - encode never adds BOS/EOS; use wgf_tokenizer_encode_ex(WGF_TOK_ADD_BOS) or read
 *    wgf_tokenizer_wants_bos().
 *  - A tokenizer is immutable after creation; concurrent encode/decode calls on one object
 *    are safe (each call owns its scratch). A wgf_detok is single-owner.
 *  - Time: encode is O(n log n) in the text length for every supported pre-tokenizer, no
 *    recursion on input. A tokenizer.json regex that backtracks catastrophically ends in
 *    WGF_ERR_LIMIT (match limit, or a deadline of ~0.5 s + 1 s per MiB of text). */
#ifndef WGFUSE_TOKENIZER_H
#define WGFUSE_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wgfuse/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wgf_tokenizer;

enum wgf_tok_model {
    WGF_TOK_MODEL_BPE = 1, /* byte-level BPE, merges by rank (GGUF "gpt2")          */
    WGF_TOK_MODEL_SPM = 2, /* SentencePiece pieces merged by score (GGUF "llama")   */
};

/* Token types, numerically equal to GGUF's tokenizer.ggml.token_type values. */
enum wgf_tok_type {
    WGF_TOKEN_UNDEFINED    = 0, /* treated as NORMAL                                   */
    WGF_TOKEN_NORMAL       = 1,
    WGF_TOKEN_UNKNOWN      = 2, /* <unk>                                               */
    WGF_TOKEN_CONTROL      = 3, /* <s>, <|im_start|>: matched only with parse_special   */
    WGF_TOKEN_USER_DEFINED = 4, /* added tokens: always matched as a whole              */
    WGF_TOKEN_UNUSED       = 5,
    WGF_TOKEN_BYTE         = 6, /* SPM byte fallback <0x00>..<0xFF>                     */
};

/* Pre-tokenizers known by name (GGUF tokenizer.ggml.pre). tokenizer.json carries its own
 * regexes instead, which may be any of these or others. */
enum wgf_tok_pre {
    WGF_TOK_PRE_GPT2   = 0, /* "default", "gpt2": GPT-2's ByteLevel regex              */
    WGF_TOK_PRE_QWEN2  = 1, /* "qwen2": single digits, letters with one leading mark  */
    WGF_TOK_PRE_LLAMA3 = 2, /* "llama-bpe", "llama3": digits in groups of up to three */
};

/* The exact pre-tokenizer regex (PCRE2 syntax, used with UTF + UCP) for a named kind. */
const char *wgf_tok_pre_regex(enum wgf_tok_pre pre);

/* Everything needed to build a tokenizer from a GGUF file. All pointers are borrowed for
 * the duration of wgf_tokenizer_from_spec only; strings are NUL-terminated UTF-8 exactly
 * as stored in GGUF (BPE tokens and merges in the GPT-2 byte-to-unicode alphabet; SPM
 * pieces with U+2581 for spaces). Start from wgf_tok_spec_init() so new fields default. */
struct wgf_tok_spec {
    enum wgf_tok_model model;   /* from tokenizer.ggml.model: wgf_tok_model_from_gguf() */
    size_t             n_tokens; /* tokenizer.ggml.tokens length (= vocab size)          */
    const char *const *tokens;   /* [n_tokens]                                           */
    const float       *scores;   /* [n_tokens] tokenizer.ggml.scores, or NULL (SPM: all 0) */
    const int32_t     *types;    /* [n_tokens] tokenizer.ggml.token_type, or NULL (NORMAL) */
    size_t             n_merges; /* tokenizer.ggml.merges length (BPE only)               */
    const char *const *merges;   /* [n_merges] "left right"                               */
    const char        *pre;      /* tokenizer.ggml.pre, or NULL = "default"               */
    int32_t bos_id, eos_id, unk_id, pad_id, eot_id; /* -1 when absent                     */
    int add_bos;          /* tokenizer.ggml.add_bos_token: 1, 0, or -1 = model default (SPM 1, BPE 0) */
    int add_space_prefix; /* tokenizer.ggml.add_space_prefix (SPM): 1, 0, or -1 = default 1 */
    const char *source;   /* file name used in error messages, or NULL                 */
    const char *arch;     /* general.architecture, or NULL: "phi3" makes its special
                             tokens absorb the whitespace after them (rstrip), as the HF
                             tokenizer.json does and llama.cpp reproduces */
};

void wgf_tok_spec_init(struct wgf_tok_spec *spec);

/* Map GGUF tokenizer.ggml.model ("gpt2", "llama") to a model kind; 0 if not supported. */
enum wgf_tok_model wgf_tok_model_from_gguf(const char *name);

/* Build from a spec. On success *out owns everything (the spec may be freed). Errors
 * (WGF_ERR_FORMAT / WGF_ERR_UNSUPPORTED / WGF_ERR_NOMEM) name spec->source and the field:
 * "m.gguf: tokenizer.ggml.merges[7]: 'a b' merges to a token not in the vocabulary". */
enum wgf_status wgf_tokenizer_from_spec(const struct wgf_tok_spec *spec, struct wgf_tokenizer **out,
                                        struct wgf_err *err);

/* Load a Hugging Face tokenizer.json (model.type "BPE" with a ByteLevel pre-tokenizer,
 * optionally after Split regexes, or SentencePiece-style; merges as "a b" or ["a","b"];
 * NFC normalizer applied through ICU when it can be loaded). tokenizer_config_path
 * (may be NULL) supplies bos_token / eos_token / add_bos_token. Errors name the file. */
enum wgf_status wgf_tokenizer_load_json(const char *tokenizer_json_path, const char *tokenizer_config_path,
                                        struct wgf_tokenizer **out, struct wgf_err *err);

/* Free a tokenizer; NULL is a no-op. */
void wgf_tokenizer_free(struct wgf_tokenizer *tok);

/* Write a small valid byte-level BPE tokenizer.json for tests: ids 0..255 the byte
 * tokens (id = byte value), then the tokens of a fixed list of hand-picked English merges,
 * then the ChatML specials <|endoftext|> (EOS), <|im_start|>, <|im_end|>, then control
 * tokens <|extra_N|> up to exactly WGF_TOK_TEST_VOCAB ids, so every id of a random
 * vocab-512 model decodes. Qwen2 pre-tokenizer. Look specials up with
 * wgf_tokenizer_find(). The file is written to a temporary name and renamed. */
#define WGF_TOK_TEST_VOCAB     512
#define WGF_TOK_TEST_VOCAB_MAX WGF_TOK_TEST_VOCAB
enum wgf_status wgf_tokenizer_write_test_json(const char *path, struct wgf_err *err);

/* ---- encoding ------------------------------------------------------------------------ */
enum wgf_tok_encode_flags {
    WGF_TOK_PARSE_SPECIAL = 1u << 0, /* match control tokens written in the text        */
    WGF_TOK_ADD_BOS       = 1u << 1, /* prepend BOS if the tokenizer wants one          */
};

/* Encode len bytes of text (NUL bytes are text). On success *ids is malloc'd (caller
 * frees; non-NULL even when *n == 0). No BOS is added. */
enum wgf_status wgf_tokenizer_encode(const struct wgf_tokenizer *tok, const char *text, size_t len,
                                     bool parse_special, int32_t **ids, size_t *n, struct wgf_err *err);
/* As above with WGF_TOK_* flags. */
enum wgf_status wgf_tokenizer_encode_ex(const struct wgf_tokenizer *tok, const char *text, size_t len,
                                        unsigned flags, int32_t **ids, size_t *n, struct wgf_err *err);

/* ---- decoding ------------------------------------------------------------------------ */
/* Decode ids to the exact bytes they stand for (not sanitized: may be invalid UTF-8 if
 * the ids are). Control tokens are rendered as their text only if `special`. An SPM
 * tokenizer with add_space_prefix drops the one space it added before the first text.
 * *out is malloc'd and NUL-terminated (caller frees); *out_len excludes the NUL. An id
 * outside [0, vocab) is WGF_ERR_ARG. */
enum wgf_status wgf_tokenizer_decode(const struct wgf_tokenizer *tok, const int32_t *ids, size_t n, bool special,
                                     char **out, size_t *out_len, struct wgf_err *err);

/* Streaming detokenizer for generation: output is always valid UTF-8. Bytes of a split
 * character are held until the character completes; bytes that can never form a valid
 * character become U+FFFD (one per byte). The tokenizer is borrowed and must outlive d. */
struct wgf_detok;
enum wgf_detok_flags {
    WGF_DETOK_SPECIAL     = 1u << 0, /* render control tokens (<|im_end|>) as text       */
    WGF_DETOK_STRIP_SPACE = 1u << 1, /* SPM: drop the leading space of the first text    */
};
enum wgf_status wgf_detok_new(const struct wgf_tokenizer *tok, unsigned flags, struct wgf_detok **out,
                              struct wgf_err *err);
/* Feed one id. *text points into d's buffer (valid until the next call on d), *text_len
 * bytes of complete UTF-8, possibly 0. */
enum wgf_status wgf_detok_push(struct wgf_detok *d, int32_t id, const char **text, size_t *text_len,
                               struct wgf_err *err);
/* End of stream: held bytes of an unfinished character come out as U+FFFD. */
enum wgf_status wgf_detok_flush(struct wgf_detok *d, const char **text, size_t *text_len, struct wgf_err *err);
void wgf_detok_free(struct wgf_detok *d);

/* ---- vocabulary ---------------------------------------------------------------------- */
size_t             wgf_tokenizer_vocab_size(const struct wgf_tokenizer *tok);
enum wgf_tok_model wgf_tokenizer_model(const struct wgf_tokenizer *tok);
int32_t            wgf_tokenizer_bos(const struct wgf_tokenizer *tok); /* -1 if none */
int32_t            wgf_tokenizer_eos(const struct wgf_tokenizer *tok); /* -1 if none */
bool               wgf_tokenizer_wants_bos(const struct wgf_tokenizer *tok);
/* True for EOS and the end-of-turn tokens generation should stop on (<|im_end|>,
 * <|eot_id|>, <|end|>, <|endoftext|>, <|end_of_text|>, </s>). */
bool wgf_tokenizer_is_eog(const struct wgf_tokenizer *tok, int32_t id);
/* The token's string as stored in the vocabulary (byte-level alphabet / U+2581 form),
 * NUL-terminated; NULL for an id out of range. Borrowed from tok. */
const char *wgf_tokenizer_token_str(const struct wgf_tokenizer *tok, int32_t id);
enum wgf_tok_type wgf_tokenizer_token_type(const struct wgf_tokenizer *tok, int32_t id);
/* Id of a token given its vocabulary string (any type), or -1. */
int32_t wgf_tokenizer_find(const struct wgf_tokenizer *tok, const char *str);
/* The model's own chat template (Jinja text) as its files give it: tokenizer_config.json's
 * "chat_template" (a string, or the "default" entry of a list), a model directory's
 * chat_template.jinja, or GGUF's tokenizer.chat_template. "" when the file has one in a form
 * that is not read; NULL when there is none. Borrowed from tok. */
const char *wgf_tokenizer_chat_template(const struct wgf_tokenizer *tok);
/* Give tok a chat template (copied; len bytes, no NUL inside). */
enum wgf_status wgf_tokenizer_set_chat_template(struct wgf_tokenizer *tok, const char *text, size_t len,
                                                struct wgf_err *err);
/* Named chat templates: tokenizer_config.json's list form [{"name", "template"}] (every entry,
 * "default" included) or GGUF's tokenizer.chat_template.<name>. The template called `name`,
 * NULL when absent ("default" is wgf_tokenizer_chat_template when that is set); the count
 * and the i-th name in file order. Borrowed from tok. */
const char *wgf_tokenizer_chat_template_named(const struct wgf_tokenizer *tok, const char *name);
size_t      wgf_tokenizer_chat_template_count(const struct wgf_tokenizer *tok);
const char *wgf_tokenizer_chat_template_name(const struct wgf_tokenizer *tok, size_t i);
enum wgf_status wgf_tokenizer_add_chat_template(struct wgf_tokenizer *tok, const char *name, const char *text,
                                                size_t len, struct wgf_err *err);
/* The special-token strings a chat template receives, as transformers passes them:
 * tokenizer_config.json's bos_token, eos_token, unk_token, sep_token, pad_token, cls_token,
 * mask_token (a string or {"content"}); NULL when the config leaves one unset. Without a
 * config (GGUF, a bare tokenizer.json): the text of the BOS / EOS / UNK / PAD token.
 * set_special_text records a config's value (text NULL: the config has the key unset). */
const char     *wgf_tokenizer_special_text(const struct wgf_tokenizer *tok, const char *key);
enum wgf_status wgf_tokenizer_set_special_text(struct wgf_tokenizer *tok, const char *key, const char *text,
                                               struct wgf_err *err);

#ifdef __cplusplus
}
#endif
#endif
