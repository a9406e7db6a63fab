/* wgfuse serve — request bodies: JSON -> struct serve_request, and OpenAI's error objects.
 *
 * The rule for fields (docs/serve.md): a field the server implements is checked for its
 * type and range (400 naming it); a field of OpenAI's API that changes the output in a way
 * the server does not implement (n > 1, logprobs, tools, logit_bias, a non-zero presence or
 * frequency penalty, echo, suffix, best_of > 1, response_format other than text) is refused
 * with 400 naming it, never silently ignored; any other field (user, metadata, store,
 * parallel_tool_calls, ...) is ignored, as llama.cpp's server does. The JSON itself goes
 * through jansson: invalid UTF-8, lone surrogates, duplicate keys, nesting deeper than
 * jansson's 2048 levels and trailing garbage are malformed (400). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_internal.h"

/* Messages quote user input (a path, jansson's "near '...'"), which may not be UTF-8: each
 * byte that forms no character becomes '?', so the rest of the message survives (cutting at
 * the first bad byte left "model '" of "model '\xff' does not exist on this server"). */
static void utf8_scrub(char *s)
{
    for (size_t i = 0; s[i];) {
        unsigned char c = (unsigned char)s[i];
        size_t        k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        size_t        j = 1;
        while (k && j < k && ((unsigned char)s[i + j] & 0xC0) == 0x80) j++; /* stops at the NUL */
        if (!k || j < k) s[i++] = '?';
        else i += k;
    }
}

int serve_error_set(struct serve_error *e, int http, const char *param, const char *fmt, ...)
{
    e->http = http;
    e->code = NULL;
    switch (http) {
    case 401: e->type = "authentication_error"; e->code = "invalid_api_key"; break;
    case 404: e->type = "not_found_error"; break;
    case 413: e->type = "invalid_request_error"; e->code = "request_too_large"; break;
    case 422: e->type = "invalid_request_error"; e->code = "context_length_exceeded"; break;
    case 500: e->type = "server_error"; break;
    case 503: e->type = "server_error"; e->code = "unavailable"; break;
    default: e->type = "invalid_request_error"; break;
    }
    snprintf(e->param, sizeof e->param, "%s", param ? param : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    wgf_one_line(e->msg); /* a quoted snippet of the body (jansson's "near '...'") may hold one */
    utf8_scrub(e->msg);
    return -1;
}

char *serve_error_json(const struct serve_error *e)
{
    json_t *err = json_object();
    if (!err) return NULL;
    json_t *m = json_string(e->msg);
    if (!m) { /* still refused by jansson (an overlong form, a surrogate): ASCII only */
        char   a[sizeof e->msg];
        size_t n = strnlen(e->msg, sizeof a - 1);
        for (size_t i = 0; i < n; i++) a[i] = (unsigned char)e->msg[i] < 0x80 ? e->msg[i] : '?';
        a[n] = 0;
        m = json_string(a);
    }
    json_object_set_new(err, "message", m);
    json_object_set_new(err, "type", json_string(e->type ? e->type : "invalid_request_error"));
    json_object_set_new(err, "param", e->param[0] ? json_string(e->param) : json_null());
    json_object_set_new(err, "code", e->code ? json_string(e->code) : json_null());
    json_t *root = json_object();
    if (!root) {
        json_decref(err);
        return NULL;
    }
    json_object_set_new(root, "error", err);
    char *s = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    return s;
}

void serve_request_free(struct serve_request *r)
{
    if (!r) return;
    json_decref((json_t *)r->root);
    free(r->msgs);
    for (size_t i = 0; i < r->n_owned; i++) free(r->owned[i]);
    free(r->owned);
    free(r->ids);
    memset(r, 0, sizeof *r);
}

/* ---- field readers: each returns 0, or -1 with *e naming the field ------------------------------ */

static int get_bool(json_t *o, const char *k, bool *out, struct serve_error *e)
{
    json_t *v = json_object_get(o, k);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_boolean(v)) return serve_error_set(e, 400, k, "'%s' must be a boolean", k);
    *out = json_is_true(v);
    return 0;
}

static int get_number(json_t *o, const char *k, double lo, double hi, double *out, struct serve_error *e)
{
    json_t *v = json_object_get(o, k);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_number(v)) return serve_error_set(e, 400, k, "'%s' must be a number", k);
    double x = json_number_value(v);
    if (!isfinite(x) || x < lo || x > hi) return serve_error_set(e, 400, k, "'%s' must be in [%g, %g]", k, lo, hi);
    *out = x;
    return 0;
}

static int get_int(json_t *o, const char *k, int64_t lo, int64_t hi, bool *present, int64_t *out, struct serve_error *e)
{
    json_t *v = json_object_get(o, k);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_integer(v))
        return serve_error_set(e, 400, k, "'%s' must be an integer%s", k, json_is_real(v) ? " (not a fraction or exponent)" : "");
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return serve_error_set(e, 400, k, "'%s' must be an integer in [%lld, %lld] (got %lld)", k, (long long)lo,
                               (long long)hi, (long long)x);
    *out = (int64_t)x;
    if (present) *present = true;
    return 0;
}

/* A field of OpenAI's API that is not implemented: absent, null, or the value that changes
 * nothing is fine; anything else is refused by name. */
static int refuse_unless_default(json_t *o, const char *k, struct serve_error *e)
{
    json_t *v = json_object_get(o, k);
    if (!v || json_is_null(v) || json_is_false(v)) return 0;
    if ((json_is_number(v) && json_number_value(v) == 0) || (json_is_object(v) && json_object_size(v) == 0) ||
        (json_is_array(v) && json_array_size(v) == 0))
        return 0;
    return serve_error_set(e, 400, k, "'%s' is not supported by this server (docs/serve.md lists the fields)", k);
}

static int get_stop(json_t *o, struct serve_request *r, struct serve_error *e)
{
    json_t *v = json_object_get(o, "stop");
    if (!v || json_is_null(v)) return 0;
    json_t *one[1] = {v};
    size_t  n      = 1;
    if (json_is_array(v)) n = json_array_size(v);
    else if (!json_is_string(v)) return serve_error_set(e, 400, "stop", "'stop' must be a string or an array of strings");
    if (n > WGF_SERVE_MAX_STOP)
        return serve_error_set(e, 400, "stop", "'stop' has %zu strings (at most %u)", n, WGF_SERVE_MAX_STOP);
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_is_array(v) ? json_array_get(v, i) : one[0];
        if (!json_is_string(s)) return serve_error_set(e, 400, "stop", "'stop' must be a string or an array of strings");
        size_t len = json_string_length(s);
        if (len == 0 || strlen(json_string_value(s)) != len)
            return serve_error_set(e, 400, "stop", "'stop' strings must be non-empty and hold no NUL");
        if (len > WGF_SERVE_MAX_STOP_BYTES)
            return serve_error_set(e, 400, "stop", "'stop' string %zu is %zu bytes (at most %u)", i, len, WGF_SERVE_MAX_STOP_BYTES);
        r->stop[i] = json_string_value(s);
    }
    r->stop[n] = NULL;
    return 0;
}

/* The sampling and length fields chat and completions share. */
static int get_sampling(json_t *o, uint32_t cap, struct serve_request *r, struct serve_error *e)
{
    r->temperature = 1.0, r->top_p = 1.0, r->repeat_penalty = 1.0;
    bool had = false;
    if (get_bool(o, "stream", &r->stream, e) || get_number(o, "temperature", 0, 2, &r->temperature, e) ||
        get_number(o, "top_p", 0, 1, &r->top_p, e) || get_int(o, "top_k", 0, INT32_MAX, NULL, &r->top_k, e) ||
        get_number(o, "repeat_penalty", 0, 100, &r->repeat_penalty, e) || get_bool(o, "ignore_eos", &r->ignore_eos, e) ||
        get_stop(o, r, e))
        return -1;
    json_t *n = json_object_get(o, "n");
    if (n && !json_is_null(n) && !(json_is_integer(n) && json_integer_value(n) == 1))
        return serve_error_set(e, 400, "n", "'n' must be 1: one choice per request (send several requests instead)");
    if (r->top_p <= 0) return serve_error_set(e, 400, "top_p", "'top_p' must be in (0, 1]");
    if (r->repeat_penalty <= 0) return serve_error_set(e, 400, "repeat_penalty", "'repeat_penalty' must be > 0");
    int64_t seed = 0;
    if (get_int(o, "seed", INT64_MIN, INT64_MAX, &r->has_seed, &seed, e)) return -1;
    r->seed = (uint64_t)seed;
    /* max_completion_tokens is the chat API's newer name for max_tokens */
    const char *mt = json_object_get(o, "max_completion_tokens") && !json_is_null(json_object_get(o, "max_completion_tokens"))
                         ? "max_completion_tokens"
                         : "max_tokens";
    if (get_int(o, mt, 1, cap, &had, &r->max_tokens, e)) return -1;
    json_t *so = json_object_get(o, "stream_options");
    if (so && !json_is_null(so)) {
        if (!json_is_object(so)) return serve_error_set(e, 400, "stream_options", "'stream_options' must be an object");
        if (get_bool(so, "include_usage", &r->include_usage, e)) return -1;
    }
    static const char *const refused[] = {"presence_penalty", "frequency_penalty", "logit_bias", "logprobs",
                                          "top_logprobs", "tools", "functions", "tool_choice", "function_call"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (refuse_unless_default(o, refused[i], e)) return -1;
    json_t *rf = json_object_get(o, "response_format");
    if (rf && !json_is_null(rf)) {
        json_t *t = json_is_object(rf) ? json_object_get(rf, "type") : NULL;
        if (!json_is_string(t) || strcmp(json_string_value(t), "text"))
            return serve_error_set(e, 400, "response_format", "'response_format' other than {\"type\": \"text\"} is not supported");
    }
    json_t *model = json_object_get(o, "model");
    if (model && !json_is_null(model) && !json_is_string(model))
        return serve_error_set(e, 400, "model", "'model' must be a string");
    return 0;
}

/* Content: a string, or an array of {"type": "text", "text": ...} parts (joined by "\n"). */
static int get_content(struct serve_request *r, json_t *c, size_t i, struct serve_msg *m, struct serve_error *e)
{
    char param[64];
    snprintf(param, sizeof param, "messages[%zu].content", i);
    if (!c || json_is_null(c)) {
        m->content = "", m->len = 0;
        return 0;
    }
    if (json_is_string(c)) {
        m->content = json_string_value(c), m->len = json_string_length(c);
        return 0;
    }
    if (!json_is_array(c)) return serve_error_set(e, 400, param, "'%s' must be a string or an array of text parts", param);
    size_t total = 0, n = json_array_size(c);
    for (size_t k = 0; k < n; k++) {
        json_t *p = json_array_get(c, k), *t = json_object_get(p, "type"), *x = json_object_get(p, "text");
        if (!json_is_object(p) || !json_is_string(t) || strcmp(json_string_value(t), "text") || !json_is_string(x))
            return serve_error_set(e, 400, param, "'%s': only parts {\"type\": \"text\", \"text\": \"...\"} are supported", param);
        if (!wgf_add_size(total, json_string_length(x) + 1, &total))
            return serve_error_set(e, 400, param, "'%s' is too long", param);
    }
    char **owned = realloc(r->owned, (r->n_owned + 1) * sizeof *owned);
    if (!owned) return serve_error_set(e, 500, NULL, "out of memory");
    r->owned = owned;
    char *buf = malloc(total + 1);
    if (!buf) return serve_error_set(e, 500, NULL, "out of memory");
    r->owned[r->n_owned++] = buf;
    size_t len = 0;
    for (size_t k = 0; k < n; k++) {
        json_t *x = json_object_get(json_array_get(c, k), "text");
        if (k) buf[len++] = '\n';
        memcpy(buf + len, json_string_value(x), json_string_length(x));
        len += json_string_length(x);
    }
    buf[len]   = 0;
    m->content = buf, m->len = len;
    return 0;
}

static int parse_chat(json_t *o, struct serve_request *r, struct serve_error *e)
{
    json_t *ms = json_object_get(o, "messages");
    if (!ms) return serve_error_set(e, 400, "messages", "'messages' is required");
    if (!json_is_array(ms)) return serve_error_set(e, 400, "messages", "'messages' must be an array");
    size_t n = json_array_size(ms);
    if (n == 0) return serve_error_set(e, 400, "messages", "'messages' is empty");
    if (n > WGF_SERVE_MAX_MESSAGES)
        return serve_error_set(e, 400, "messages", "'messages' has %zu entries (at most %u)", n, WGF_SERVE_MAX_MESSAGES);
    r->msgs = calloc(n, sizeof *r->msgs);
    if (!r->msgs) return serve_error_set(e, 500, NULL, "out of memory");
    r->n_msgs = n;
    static const char *const roles[] = {"system", "user", "assistant", "developer", "tool"};
    for (size_t i = 0; i < n; i++) {
        json_t *m = json_array_get(ms, i), *role = json_object_get(m, "role");
        char    param[64];
        snprintf(param, sizeof param, "messages[%zu].role", i);
        if (!json_is_object(m)) return serve_error_set(e, 400, "messages", "'messages[%zu]' must be an object", i);
        if (!json_is_string(role)) return serve_error_set(e, 400, param, "'%s' must be a string", param);
        const char *rv = json_string_value(role);
        size_t      k  = 0;
        while (k < sizeof roles / sizeof roles[0] && strcmp(rv, roles[k])) k++;
        if (k == sizeof roles / sizeof roles[0])
            return serve_error_set(e, 400, param, "'%s': unknown role (system, user, assistant, developer or tool)", param);
        r->msgs[i].role = roles[k];
        if (get_content(r, json_object_get(m, "content"), i, &r->msgs[i], e)) return -1;
    }
    return 0;
}

static int get_ids(json_t *a, const char *param, struct serve_request *r, struct serve_error *e)
{
    size_t n = json_array_size(a);
    r->ids   = malloc((n ? n : 1) * sizeof *r->ids);
    if (!r->ids) return serve_error_set(e, 500, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX)
            return serve_error_set(e, 400, param, "'%s[%zu]' must be a token id (an integer >= 0)", param, i);
        r->ids[i] = (int32_t)json_integer_value(v);
    }
    r->n_ids = n;
    return 0;
}

static int parse_completion(json_t *o, struct serve_request *r, struct serve_error *e)
{
    json_t *p = json_object_get(o, "prompt");
    if (!p) return serve_error_set(e, 400, "prompt", "'prompt' is required");
    /* one prompt: "text", ["text"], [ids] or [[ids]] (a batch of several is n > 1) */
    if (json_is_array(p) && json_array_size(p) == 1 && (json_is_string(json_array_get(p, 0)) || json_is_array(json_array_get(p, 0))))
        p = json_array_get(p, 0);
    if (json_is_string(p)) {
        r->prompt = json_string_value(p), r->prompt_len = json_string_length(p);
    } else if (json_is_array(p) && json_array_size(p) > 0 && json_is_integer(json_array_get(p, 0))) {
        if (get_ids(p, "prompt", r, e)) return -1;
    } else {
        return serve_error_set(e, 400, "prompt", "'prompt' must be a string or an array of token ids (one prompt)");
    }
    static const char *const refused[] = {"echo", "suffix"};
    for (size_t i = 0; i < 2; i++)
        if (refuse_unless_default(o, refused[i], e)) return -1;
    json_t *b = json_object_get(o, "best_of");
    if (b && !json_is_null(b) && !(json_is_integer(b) && json_integer_value(b) == 1))
        return serve_error_set(e, 400, "best_of", "'best_of' must be 1 (one completion per request)");
    return 0;
}

int serve_request_parse(enum serve_kind kind, const char *body, size_t n, uint32_t max_tokens_cap,
                        struct serve_request *r, struct serve_error *e)
{
    memset(r, 0, sizeof *r);
    r->kind = kind;
    json_error_t je;
    json_t      *o = json_loadb(body, n, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (!o) return serve_error_set(e, 400, NULL, "malformed JSON at line %d, column %d: %s", je.line, je.column, je.text);
    r->root = o;
    int rc  = 0;
    if (!json_is_object(o)) rc = serve_error_set(e, 400, NULL, "the request body must be a JSON object");
    else if (kind == SERVE_CHAT) rc = get_sampling(o, max_tokens_cap, r, e) || parse_chat(o, r, e) ? -1 : 0;
    else if (kind == SERVE_COMPLETION) rc = get_sampling(o, max_tokens_cap, r, e) || parse_completion(o, r, e) ? -1 : 0;
    else if (kind == SERVE_TOKENIZE) {
        r->parse_special = true; /* llama.cpp's default */
        json_t *c        = json_object_get(o, "content");
        if (!json_is_string(c)) rc = serve_error_set(e, 400, "content", "'content' must be a string");
        else {
            r->prompt = json_string_value(c), r->prompt_len = json_string_length(c);
            rc = get_bool(o, "add_special", &r->add_special, e) || get_bool(o, "parse_special", &r->parse_special, e) ||
                         get_bool(o, "with_pieces", &r->with_pieces, e)
                     ? -1
                     : 0;
        }
    } else {
        json_t *t = json_object_get(o, "tokens");
        if (!json_is_array(t)) rc = serve_error_set(e, 400, "tokens", "'tokens' must be an array of token ids");
        else rc = get_ids(t, "tokens", r, e);
    }
    if (rc) serve_request_free(r);
    return rc;
}
