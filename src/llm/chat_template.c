/* wgfuse — chat templates (see include/wgfuse/chat_template.h).
 *
 * Each template is a list of pieces: scaffolding (role headers, turn ends, which may hold
 * control tokens) and message text. Rendering records which bytes are scaffolding so
 * encoding can recognize control tokens there and nowhere else. Sources: the
 * chat_template strings of Qwen2.5-*-Instruct, Meta-Llama-3-*-Instruct and
 * Phi-3-mini-*-instruct tokenizer_config.json, for one optional system turn, one user
 * turn and add_generation_prompt=true. */
#include "wgfuse/chat_template.h"

#include <stdlib.h>
#include <string.h>

#include "llm/tokenizer_internal.h"
#include "wgfuse/tokenizer.h"

static const char qwen2_default_system[] = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";

struct render {
    char          *text;
    unsigned char *scaffold; /* [len] 1 where the byte belongs to the template itself */
    size_t         len, cap;
    bool           oom;
};

static void put(struct render *r, const char *s, size_t n, bool scaffold)
{
    if (r->oom) return;
    size_t need;
    if (!wgf_add_size(r->len, n, &need) || !wgf_add_size(need, 1, &need)) {
        r->oom = true;
        return;
    }
    if (need > r->cap) {
        size_t cap = r->cap ? r->cap : 256;
        while (cap < need)
            if (!wgf_mul_size(cap, 2, &cap)) {
                r->oom = true;
                return;
            }
        char          *t = realloc(r->text, cap);
        if (t) r->text = t;
        unsigned char *m = t ? realloc(r->scaffold, cap) : NULL;
        if (m) r->scaffold = m;
        if (!t || !m) {
            r->oom = true;
            return;
        }
        r->cap = cap;
    }
    memcpy(r->text + r->len, s, n);
    memset(r->scaffold + r->len, scaffold, n);
    r->len += n;
    r->text[r->len] = '\0';
}

static void tmpl(struct render *r, const char *s) { put(r, s, strlen(s), true); }

/* Message text of n bytes (NULs included: a prompt file is bytes, and cutting it at the
 * first NUL once dropped 2,325 of 2,402 tokens without a word); Llama-3's template trims
 * it (`message['content'] | trim`). */
static void msg_n(struct render *r, const char *s, size_t n, bool trim)
{
    if (trim) {
        while (n && strchr(" \t\n\r\f\v", s[0])) s++, n--;
        while (n && strchr(" \t\n\r\f\v", s[n - 1])) n--;
    }
    put(r, s, n, false);
}

static void msg(struct render *r, const char *s, bool trim) { msg_n(r, s, strlen(s), trim); }

static enum wgf_status render(enum wgf_chat_template kind, const char *system, const char *user, size_t user_len,
                              struct render *r, struct wgf_err *err)
{
    memset(r, 0, sizeof *r);
    if (!user) return wgf_fail(err, WGF_ERR_ARG, "chat template: NULL user text");
    switch (kind) {
    case WGF_CHAT_NONE: msg_n(r, user, user_len, false); break;
    case WGF_CHAT_QWEN2:
        if (!system) system = qwen2_default_system;
        /* fall through */
    case WGF_CHAT_CHATML:
        if (system) tmpl(r, "<|im_start|>system\n"), msg(r, system, false), tmpl(r, "<|im_end|>\n");
        tmpl(r, "<|im_start|>user\n");
        msg_n(r, user, user_len, false);
        tmpl(r, "<|im_end|>\n<|im_start|>assistant\n");
        break;
    case WGF_CHAT_LLAMA3:
        if (system)
            tmpl(r, "<|start_header_id|>system<|end_header_id|>\n\n"), msg(r, system, true), tmpl(r, "<|eot_id|>");
        tmpl(r, "<|start_header_id|>user<|end_header_id|>\n\n");
        msg_n(r, user, user_len, true);
        tmpl(r, "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
        break;
    case WGF_CHAT_PHI3:
        if (system) tmpl(r, "<|system|>\n"), msg(r, system, false), tmpl(r, "<|end|>\n");
        tmpl(r, "<|user|>\n");
        msg_n(r, user, user_len, false);
        tmpl(r, "<|end|>\n<|assistant|>\n");
        break;
    default: return wgf_fail(err, WGF_ERR_ARG, "chat template: unknown kind %d", (int)kind);
    }
    if (!r->oom && !r->text) put(r, "", 0, false);
    if (r->oom) {
        free(r->text);
        free(r->scaffold);
        memset(r, 0, sizeof *r);
        return wgf_fail(err, WGF_ERR_NOMEM, "chat template: out of memory");
    }
    return WGF_OK;
}

enum wgf_status wgf_chat_template_apply(enum wgf_chat_template kind, const char *system, const char *user, char **out,
                                        struct wgf_err *err)
{
    if (!out) return wgf_fail(err, WGF_ERR_ARG, "chat template: NULL output");
    *out = NULL;
    struct render   r;
    enum wgf_status st = render(kind, system, user, user ? strlen(user) : 0, &r, err);
    if (st) return st;
    free(r.scaffold);
    *out = r.text;
    return WGF_OK;
}

enum wgf_status wgf_chat_template_encode(const struct wgf_tokenizer *tok, enum wgf_chat_template kind,
                                         const char *system, const char *user, unsigned flags, int32_t **ids,
                                         size_t *n, struct wgf_err *err)
{
    return wgf_chat_template_encode_n(tok, kind, system, user, user ? strlen(user) : 0, flags, ids, n, err);
}

enum wgf_status wgf_chat_template_encode_n(const struct wgf_tokenizer *tok, enum wgf_chat_template kind,
                                           const char *system, const char *user, size_t user_len, unsigned flags,
                                           int32_t **ids, size_t *n, struct wgf_err *err)
{
    if (!tok || !ids || !n) return wgf_fail(err, WGF_ERR_ARG, "chat template: NULL argument");
    struct render   r;
    enum wgf_status st = render(kind, system, user, user_len, &r, err);
    if (st) return st;
    st = wgf__tok_encode_masked(tok, r.text, r.len, flags, r.scaffold, ids, n, err);
    free(r.text);
    free(r.scaffold);
    return st;
}

enum wgf_chat_template wgf_chat_template_detect(const struct wgf_tokenizer *tok, const char *arch)
{
    bool qwen = arch && strcmp(arch, "qwen2") == 0;
    if (tok) {
        if (wgf_tokenizer_find(tok, "<|im_start|>") >= 0 && wgf_tokenizer_find(tok, "<|im_end|>") >= 0)
            return qwen ? WGF_CHAT_QWEN2 : WGF_CHAT_CHATML;
        if (wgf_tokenizer_find(tok, "<|start_header_id|>") >= 0 && wgf_tokenizer_find(tok, "<|eot_id|>") >= 0)
            return WGF_CHAT_LLAMA3;
        if (wgf_tokenizer_find(tok, "<|user|>") >= 0 && wgf_tokenizer_find(tok, "<|end|>") >= 0 &&
            wgf_tokenizer_find(tok, "<|assistant|>") >= 0)
            return WGF_CHAT_PHI3;
    }
    /* Without the tokens, rendering a template would only produce plain text that looks
     * like markup: that is still what these models expect, so follow the architecture. */
    if (qwen) return WGF_CHAT_QWEN2;
    if (arch && strcmp(arch, "phi3") == 0) return WGF_CHAT_PHI3;
    return WGF_CHAT_NONE;
}

enum wgf_chat_template wgf_chat_template_family(const char *jinja)
{
    if (!jinja) return WGF_CHAT_NONE;
    if (strstr(jinja, "<|im_start|>") && strstr(jinja, "<|im_end|>")) return WGF_CHAT_CHATML;
    if (strstr(jinja, "<|start_header_id|>") && strstr(jinja, "<|eot_id|>")) return WGF_CHAT_LLAMA3;
    if (strstr(jinja, "<|user|>") && strstr(jinja, "<|assistant|>") && strstr(jinja, "<|end|>")) return WGF_CHAT_PHI3;
    return WGF_CHAT_NONE;
}

bool wgf_chat_template_fits(const struct wgf_tokenizer *tok, enum wgf_chat_template kind)
{
    const char *own = wgf_tokenizer_chat_template(tok);
    if (!own) return true; /* nothing to contradict */
    enum wgf_chat_template fam = wgf_chat_template_family(own);
    if (fam == WGF_CHAT_CHATML && kind == WGF_CHAT_QWEN2) return true; /* Qwen2's is ChatML */
    return fam != WGF_CHAT_NONE && fam == kind;
}

static const char *const names[] = {"none", "chatml", "qwen2", "llama3", "phi3"};

const char *wgf_chat_template_name(enum wgf_chat_template kind)
{
    if ((unsigned)kind < sizeof names / sizeof names[0]) return names[kind];
    return "unknown";
}

enum wgf_status wgf_chat_template_from_name(const char *name, enum wgf_chat_template *kind, struct wgf_err *err)
{
    for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0) {
            *kind = (enum wgf_chat_template)i;
            return WGF_OK;
        }
    return wgf_fail(err, WGF_ERR_ARG, "unknown chat template '%s' (none, chatml, qwen2, llama3, phi3)",
                    name ? name : "(null)");
}
