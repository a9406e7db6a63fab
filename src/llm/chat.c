/* wgfuse — chat formatting with the model's own Jinja chat template (include/wgfuse/chat.h).
 *
 * The template is parsed once at open (src/llm/jinja/); each render builds the variables
 * transformers passes (messages, add_generation_prompt, tools=None, documents=None and the
 * config's special-token strings) and runs it under limits sized from the messages.
 * Message strings are marked as content, so encoding (wgf__tok_encode_masked) recognizes
 * control tokens only in the template's own bytes.
 *
 * The built-in templates (a model without one) are Jinja too, rendering exactly what
 * chat_template.c's fixed renderings give for one system + one user turn, and any number
 * of turns beyond that. */
#include "wgfuse/chat.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/jinja/jinja.h"
#include "llm/tokenizer_internal.h"
#include "util/file.h"
#include "wgfuse/chat_template.h"
#include "wgfuse/tokenizer.h"

#define CHAT_N_SPECIAL 7
static const char *const special_keys[CHAT_N_SPECIAL] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                                         "pad_token", "cls_token", "mask_token"};

struct wgf_chat {
    const struct wgf_tokenizer *tok;
    struct wgf__jinja          *tmpl;
    bool                        builtin;       /* a built-in template: BOS as the tokenizer wants */
    bool                        parse_special; /* message text may hold control tokens          */
    char                       *special[CHAT_N_SPECIAL];
    char                        source[256];
};

/* ---- built-in templates (the model ships none) --------------------------------------------- */
static const char chatml_jinja[] =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
static const char qwen2_jinja[] =
    "{% if messages[0].role != 'system' %}<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a "
    "helpful assistant.<|im_end|>\n{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
static const char llama3_jinja[] =
    "{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n{{ m.content | trim }}<|eot_id|>"
    "{% endfor %}{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}";
static const char phi3_jinja[] =
    "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}";

static const char *builtin_jinja(enum wgf_chat_template k)
{
    switch (k) {
    case WGF_CHAT_CHATML: return chatml_jinja;
    case WGF_CHAT_QWEN2: return qwen2_jinja;
    case WGF_CHAT_LLAMA3: return llama3_jinja;
    case WGF_CHAT_PHI3: return phi3_jinja;
    default: return NULL;
    }
}

/* ---- open / close ------------------------------------------------------------------------ */
static void list_names(const struct wgf_tokenizer *tok, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0]   = '\0';
    for (size_t i = 0; i < wgf_tokenizer_chat_template_count(tok) && o + 1 < cap; i++) {
        int w = snprintf(buf + o, cap - o, "%s'%s'", i ? ", " : "", wgf_tokenizer_chat_template_name(tok, i));
        if (w < 0) break;
        o += (size_t)w;
    }
    if (!buf[0]) snprintf(buf, cap, "none");
}

enum wgf_status wgf_chat_open(const struct wgf_tokenizer *tok, const char *arch_name, const struct wgf_chat_opts *opts,
                              struct wgf_chat **out, struct wgf_err *err)
{
    if (!tok || !out) return wgf_fail(err, WGF_ERR_ARG, "chat: NULL argument");
    *out = NULL;
    struct wgf_chat_opts o = opts ? *opts : (struct wgf_chat_opts){0};
    struct wgf_chat     *c = calloc(1, sizeof *c);
    if (!c) return wgf_fail(err, WGF_ERR_NOMEM, "chat: out of memory");
    c->tok = tok, c->parse_special = o.parse_special;
    const char *text = NULL;
    char        names[200];
    if (o.template_text) {
        text = o.template_text;
        snprintf(c->source, sizeof c->source, "the given chat template");
    } else if (o.template_name && strcmp(o.template_name, "default") != 0) {
        text = wgf_tokenizer_chat_template_named(tok, o.template_name);
        if (!text) {
            list_names(tok, names, sizeof names);
            free(c);
            return wgf_fail(err, WGF_ERR_ARG, "--chat-template-name: the model has no chat template named '%.60s' (it has: %s)",
                            o.template_name, names);
        }
        snprintf(c->source, sizeof c->source, "the model's chat template '%.60s'", o.template_name);
    } else {
        text = wgf_tokenizer_chat_template(tok);
        if (text && !text[0] && wgf_tokenizer_chat_template_count(tok) > 0) {
            list_names(tok, names, sizeof names);
            free(c);
            return wgf_fail(err, WGF_ERR_ARG,
                            "the model has several chat templates and none named 'default': pick one with "
                            "--chat-template-name (%s)", names);
        }
        if (text && !text[0]) text = NULL; /* declared in a form that is not read: built-in below */
        snprintf(c->source, sizeof c->source, "the model's chat template");
    }
    if (!text) {
        enum wgf_chat_template k = wgf_chat_template_detect(tok, arch_name);
        text                     = builtin_jinja(k);
        if (!text) {
            free(c);
            return wgf_fail(err, WGF_ERR_UNSUPPORTED,
                            "the model ships no chat template and its special tokens fit no built-in one (chatml, "
                            "llama3, phi3): give one with --chat-template FILE");
        }
        c->builtin = true;
        snprintf(c->source, sizeof c->source, "the built-in '%s' chat template (the model ships none)",
                 wgf_chat_template_name(k));
    }
    enum wgf_status st = wgf__jinja_parse(text, strlen(text), &c->tmpl, err);
    for (size_t i = 0; !st && i < CHAT_N_SPECIAL; i++) {
        const char *s = wgf_tokenizer_special_text(tok, special_keys[i]);
        if (s && !(c->special[i] = strdup(s))) st = wgf_fail(err, WGF_ERR_NOMEM, "chat: out of memory");
    }
    if (st) {
        if (st == WGF_ERR_FORMAT) wgf_err_prefix(err, "%s", c->source);
        wgf_chat_close(c);
        return st;
    }
    *out = c;
    return WGF_OK;
}

const char *wgf_chat_source(const struct wgf_chat *c) { return c ? c->source : "(none)"; }
bool        wgf_chat_is_builtin(const struct wgf_chat *c) { return c && c->builtin; }

void wgf_chat_close(struct wgf_chat *c)
{
    if (!c) return;
    wgf__jinja_free(c->tmpl);
    for (size_t i = 0; i < CHAT_N_SPECIAL; i++) free(c->special[i]);
    free(c);
}

/* ---- render / encode --------------------------------------------------------------------- */
static enum wgf_status render(const struct wgf_chat *c, const struct wgf_chat_msg *msgs, size_t n, bool gen,
                              struct wgf__jinja_out *out, struct wgf_err *err)
{
    if (!c || !out || (!msgs && n)) return wgf_fail(err, WGF_ERR_ARG, "chat: NULL argument");
    json_t         *list  = json_array();
    enum wgf_status st    = list ? WGF_OK : wgf_fail(err, WGF_ERR_NOMEM, "chat: out of memory");
    size_t          bytes = 0;
    for (size_t i = 0; !st && i < n; i++) {
        if (!msgs[i].role || (!msgs[i].content && msgs[i].content_len)) {
            st = wgf_fail(err, WGF_ERR_ARG, "chat: message %zu has no role or a NULL content", i);
            break;
        }
        /* text is bytes (a prompt file may hold invalid UTF-8): stored unchecked */
        json_t *m = json_object();
        if (!m || json_array_append_new(list, m) ||
            json_object_set_new(m, "role", json_stringn_nocheck(msgs[i].role, strlen(msgs[i].role))) ||
            json_object_set_new(m, "content", json_stringn_nocheck(msgs[i].content ? msgs[i].content : "", msgs[i].content_len)))
            st = wgf_fail(err, WGF_ERR_NOMEM, "chat: out of memory");
        bytes += msgs[i].content_len + strlen(msgs[i].role);
    }
    struct wgf__jinja_var vars[5 + CHAT_N_SPECIAL];
    size_t                nv = 0;
    json_t               *agp = json_boolean(gen), *none = json_null();
    vars[nv++] = (struct wgf__jinja_var){"messages", list, true};
    vars[nv++] = (struct wgf__jinja_var){"add_generation_prompt", agp, false};
    vars[nv++] = (struct wgf__jinja_var){"tools", none, false};
    vars[nv++] = (struct wgf__jinja_var){"documents", none, false};
    json_t *spec[CHAT_N_SPECIAL] = {0};
    for (size_t i = 0; !st && i < CHAT_N_SPECIAL; i++)
        if (c->special[i]) {
            spec[i] = json_string(c->special[i]);
            if (spec[i]) vars[nv++] = (struct wgf__jinja_var){special_keys[i], spec[i], false};
        }
    if (!st) {
        struct wgf__jinja_limits lim;
        wgf__jinja_limits_default(&lim, bytes);
        st = wgf__jinja_render(c->tmpl, vars, nv, &lim, -1, out, err);
        if (st == WGF_ERR_ARG || st == WGF_ERR_NOMEM) wgf_err_prefix(err, "%s", c->source);
    }
    for (size_t i = 0; i < CHAT_N_SPECIAL; i++) json_decref(spec[i]);
    json_decref(list);
    json_decref(agp);
    json_decref(none);
    return st;
}

enum wgf_status wgf_chat_render(const struct wgf_chat *c, const struct wgf_chat_msg *msgs, size_t n,
                                bool add_generation_prompt, char **text, size_t *len, struct wgf_err *err)
{
    if (!text || !len) return wgf_fail(err, WGF_ERR_ARG, "chat: NULL output");
    *text = NULL, *len = 0;
    struct wgf__jinja_out o;
    enum wgf_status       st = render(c, msgs, n, add_generation_prompt, &o, err);
    if (st) return st;
    free(o.mask);
    *text = o.text, *len = o.len;
    return WGF_OK;
}

enum wgf_status wgf_chat_encode(const struct wgf_chat *c, const struct wgf_chat_msg *msgs, size_t n,
                                bool add_generation_prompt, int32_t **ids, size_t *n_ids, struct wgf_err *err)
{
    if (!ids || !n_ids) return wgf_fail(err, WGF_ERR_ARG, "chat: NULL output");
    *ids = NULL, *n_ids = 0;
    struct wgf__jinja_out o;
    enum wgf_status       st = render(c, msgs, n, add_generation_prompt, &o, err);
    if (st) return st;
    /* the mask marks message bytes; the tokenizer wants the bytes where specials may start */
    for (size_t i = 0; i < o.len; i++) o.mask[i] = !o.mask[i];
    unsigned flags = (c->parse_special ? WGF_TOK_PARSE_SPECIAL : 0) | (c->builtin ? WGF_TOK_ADD_BOS : 0);
    st             = wgf__tok_encode_masked(c->tok, o.text, o.len, flags, o.mask, ids, n_ids, err);
    free(o.text);
    free(o.mask);
    return st;
}

/* ---- messages files ------------------------------------------------------------------------ */
void wgf_chat_msgs_free(struct wgf_chat_msg *msgs, void *storage)
{
    free(msgs);
    json_decref((json_t *)storage);
}

enum wgf_status wgf_chat_msgs_load(const char *path, struct wgf_chat_msg **msgs, size_t *n, void **storage,
                                   struct wgf_err *err)
{
    if (!path || !msgs || !n || !storage) return wgf_fail(err, WGF_ERR_ARG, "chat: NULL argument");
    *msgs = NULL, *n = 0, *storage = NULL;
    char           *data = NULL;
    size_t          len  = 0;
    enum wgf_status st   = wgf_file_read(path, 64ull << 20, "a messages file", &data, &len, err);
    if (st) return st;
    json_error_t je;
    json_t      *root = json_loadb(data, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    free(data);
    if (!root) return wgf_fail(err, WGF_ERR_FORMAT, "%s: line %d: %s", path, je.line, je.text);
    if (!json_is_array(root)) {
        json_decref(root);
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: not a JSON array of messages", path);
    }
    size_t               cnt = json_array_size(root);
    struct wgf_chat_msg *m   = calloc(cnt ? cnt : 1, sizeof *m);
    if (!m) {
        json_decref(root);
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", path);
    }
    for (size_t i = 0; i < cnt; i++) {
        json_t *e = json_array_get(root, i), *r = json_object_get(e, "role"), *ct = json_object_get(e, "content");
        if (!json_is_object(e)) st = wgf_fail(err, WGF_ERR_FORMAT, "%s: [%zu]: not an object", path, i);
        else if (!json_is_string(r)) st = wgf_fail(err, WGF_ERR_FORMAT, "%s: [%zu].role: missing or not a string", path, i);
        else if (memchr(json_string_value(r), 0, json_string_length(r)))
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: [%zu].role: contains a NUL", path, i);
        else if (ct && !json_is_string(ct) && !json_is_null(ct))
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: [%zu].content: not a string (lists of parts are not supported)", path, i);
        if (st) break;
        m[i].role        = json_string_value(r);
        m[i].content     = json_is_string(ct) ? json_string_value(ct) : "";
        m[i].content_len = json_is_string(ct) ? json_string_length(ct) : 0;
    }
    if (st) {
        free(m);
        json_decref(root);
        return st;
    }
    *msgs = m, *n = cnt, *storage = root;
    return WGF_OK;
}
