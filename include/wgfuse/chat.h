/* wgfuse — chat formatting with the model's own Jinja chat template.
 *
 * A wgf_chat is a chat template parsed once and bound to a tokenizer: the model's own
 * (tokenizer_config.json's chat_template, a string or a list of named templates; a model
 * directory's chat_template.jinja; GGUF tokenizer.chat_template[.<name>]), one the caller
 * gives (--chat-template FILE), or, when the model ships none, a built-in template chosen
 * from its special tokens (ChatML / Qwen2, Llama-3, Phi-3; wgf_chat_source says so).
 *
 * Rendering is what transformers' apply_chat_template does: Jinja2 with trim_blocks and
 * lstrip_blocks, variables messages, add_generation_prompt, tools (None), documents (None)
 * and the config's special-token strings (bos_token, eos_token, ...). Encoding tokenizes the
 * template's own text with special tokens recognized and the message text as plain text
 * (a user typing "<|im_start|>" does not open a turn) unless parse_special; no BOS is added
 * beyond what the template writes (built-in templates: BOS when the tokenizer wants one).
 * docs/chat_templates.md lists the Jinja supported and the limits. */
#ifndef WGFUSE_CHAT_H
#define WGFUSE_CHAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wgfuse/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wgf_tokenizer;

/* One message. role and content are borrowed for the call; content holds content_len bytes
 * and may contain NULs. */
struct wgf_chat_msg {
    const char *role;
    const char *content;
    size_t      content_len;
};

struct wgf_chat_opts {
    const char *template_text; /* a template's source (--chat-template FILE); NULL = the model's own */
    const char *template_name; /* which of the model's named templates; NULL = "default"           */
    bool        parse_special; /* message text may contain control tokens (--parse-special)       */
};

/* A parsed template bound to one tokenizer: immutable after open, so render and encode may
 * run concurrently on one wgf_chat from several threads. */
struct wgf_chat;

/* Open the chat formatter for tok (borrowed: it must outlive *out). arch_name (may be
 * NULL) helps choose a built-in template. opts may be NULL (all defaults). Errors:
 * WGF_ERR_FORMAT for a template that does not parse ("<source>: line L, column C: ..."),
 * WGF_ERR_ARG for an unknown template_name, WGF_ERR_UNSUPPORTED when the model ships no
 * template and no built-in fits (its special tokens are none of the known families). */
enum wgf_status wgf_chat_open(const struct wgf_tokenizer *tok, const char *arch_name, const struct wgf_chat_opts *opts,
                              struct wgf_chat **out, struct wgf_err *err);
/* One line: which template is used and where it came from ("the model's chat template",
 * "built-in 'chatml' template: the model ships none"...). Borrowed from c. */
const char *wgf_chat_source(const struct wgf_chat *c);
/* True when the template is a built-in one (the model ships none). */
bool wgf_chat_is_builtin(const struct wgf_chat *c);

/* Render n messages (add_generation_prompt: end with the assistant's turn opening).
 * *text is malloc'd and NUL-terminated, *len bytes (caller frees). Errors the caller's
 * messages cause — the template's raise_exception (non-alternating roles...), an unknown
 * role, an undefined value, a limit reached — are WGF_ERR_ARG with the template's message
 * ("line L, column C: template error: ..."); WGF_ERR_NOMEM. */
enum wgf_status wgf_chat_render(const struct wgf_chat *c, const struct wgf_chat_msg *msgs, size_t n,
                                bool add_generation_prompt, char **text, size_t *len, struct wgf_err *err);
/* Render and tokenize in one pass (see the header comment). *ids is malloc'd (caller frees). */
enum wgf_status wgf_chat_encode(const struct wgf_chat *c, const struct wgf_chat_msg *msgs, size_t n,
                                bool add_generation_prompt, int32_t **ids, size_t *n_ids, struct wgf_err *err);
/* NULL is a no-op. */
void wgf_chat_close(struct wgf_chat *c);

/* Read an OpenAI-style messages file: a JSON array of {"role": "...", "content": "..."}
 * (content a string; "content": null is ""; other fields are ignored). *msgs (and the
 * strings they point to) live in *storage: free both with wgf_chat_msgs_free. Errors name
 * the file and the element ("m.json: [2].role: not a string"). */
enum wgf_status wgf_chat_msgs_load(const char *path, struct wgf_chat_msg **msgs, size_t *n, void **storage,
                                   struct wgf_err *err);
void            wgf_chat_msgs_free(struct wgf_chat_msg *msgs, void *storage);

#ifdef __cplusplus
}
#endif
#endif
