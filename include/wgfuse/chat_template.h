/* wgfuse — chat templates for the supported instruct models, chosen from tokenizer
 * metadata. Fixed C renderings of the models' Jinja templates for one system + one user
 * turn with the generation prompt; no Jinja interpreter.
 *
 * The output contains special tokens as text: encode it with WGF_TOK_PARSE_SPECIAL (and
 * WGF_TOK_ADD_BOS: the templates leave BOS to the tokenizer, as llama.cpp does). */
#ifndef WGFUSE_CHAT_TEMPLATE_H
#define WGFUSE_CHAT_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wgfuse/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wgf_tokenizer;

enum wgf_chat_template {
    WGF_CHAT_NONE   = 0, /* raw prompt (--no-template, or no template known)        */
    WGF_CHAT_CHATML = 1, /* <|im_start|>role\n...<|im_end|>\n, no default system     */
    WGF_CHAT_QWEN2  = 2, /* ChatML with Qwen2.5's default system message            */
    WGF_CHAT_LLAMA3 = 3, /* <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|> */
    WGF_CHAT_PHI3   = 4, /* <|user|>\n...<|end|>\n<|assistant|>\n                    */
};

/* The template for a model: from its special tokens (<|im_start|> -> ChatML, Qwen2 flavour
 * when arch_name is "qwen2"; <|start_header_id|> -> Llama-3; <|user|> + <|end|> -> Phi-3),
 * else from arch_name ("qwen2", "phi3"), else WGF_CHAT_NONE. tok and arch_name may be NULL. */
enum wgf_chat_template wgf_chat_template_detect(const struct wgf_tokenizer *tok, const char *arch_name);

/* The built-in family a model's own Jinja chat template belongs to, from the markers it
 * writes (<|im_start|> + <|im_end|>: ChatML; <|start_header_id|> + <|eot_id|>: Llama-3;
 * <|user|> + <|assistant|> + <|end|>: Phi-3); WGF_CHAT_NONE when it is none of them. */
enum wgf_chat_template wgf_chat_template_family(const char *jinja);
/* False when tok carries its own chat template (wgf_tokenizer_chat_template) and `kind` is
 * not its family (Qwen2's counts as ChatML): formatting with `kind` would not be what the
 * model was trained on, and the caller should say so. True when tok has no template. */
bool wgf_chat_template_fits(const struct wgf_tokenizer *tok, enum wgf_chat_template kind);

/* Render system (NULL: none, or the model's default) and user text followed by the
 * assistant generation prompt. *out is malloc'd, NUL-terminated (caller frees). Text is
 * copied verbatim (may contain anything, including special-token strings: whether those
 * become special tokens is decided by how the caller encodes). WGF_CHAT_NONE returns the
 * user text unchanged. */
enum wgf_status wgf_chat_template_apply(enum wgf_chat_template kind, const char *system, const char *user, char **out,
                                        struct wgf_err *err);

/* Render and encode in one pass: template scaffolding may contain control tokens; the
 * system and user text are parsed for them only with WGF_TOK_PARSE_SPECIAL in flags
 * (so a user typing "<|im_end|>" cannot close the turn). WGF_TOK_ADD_BOS prepends BOS
 * when the tokenizer wants one. *ids is malloc'd (caller frees). */
enum wgf_status wgf_chat_template_encode(const struct wgf_tokenizer *tok, enum wgf_chat_template kind,
                                         const char *system, const char *user, unsigned flags, int32_t **ids,
                                         size_t *n, struct wgf_err *err);

/* The same with the user text's length given: every byte of user[0..user_len) is encoded,
 * NULs included (a prompt read from a file is bytes; the NUL-terminated form above stops at
 * the first NUL). */
enum wgf_status wgf_chat_template_encode_n(const struct wgf_tokenizer *tok, enum wgf_chat_template kind,
                                           const char *system, const char *user, size_t user_len, unsigned flags,
                                           int32_t **ids, size_t *n, struct wgf_err *err);

/* "none", "chatml", "qwen2", "llama3", "phi3"; and back (WGF_ERR_ARG for an unknown name). */
const char     *wgf_chat_template_name(enum wgf_chat_template kind);
enum wgf_status wgf_chat_template_from_name(const char *name, enum wgf_chat_template *kind, struct wgf_err *err);

#ifdef __cplusplus
}
#endif
#endif
