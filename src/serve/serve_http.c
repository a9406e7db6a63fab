/* wgfuse serve — HTTP: libmicrohttpd (Debian's libmicrohttpd-dev), a thread per connection.
 *
 * Why a thread per connection: a connection's thread may block (waiting for its generation,
 * or in the SSE content reader waiting for the next token) without holding anything else up;
 * the engine's one worker thread never touches a socket. Connections are bounded
 * (connection_limit below), so threads are too.
 *
 * Limits, all per request (docs/serve.md):
 *   - body: Content-Length above max_body -> 413 before a byte of it is read; a chunked body
 *     growing past it -> the connection is closed; neither header on a POST -> 411;
 *   - framing: two Content-Lengths or Transfer-Encodings, both, or a coding other than chunked
 *     -> 400 / 501 before the body, and the connection closed (framing_error);
 *   - headers: 64 KiB of request line + headers (libmicrohttpd answers 431 past it);
 *   - time to deliver a request: read_timeout_s from the connection's start (or the previous
 *     request's end) to the last byte of the body, enforced by a watchdog thread that shuts
 *     the socket down (a client sending a byte a second cannot hold a thread for longer);
 *   - a request's deadline (timeout_s): see serve_engine.c.
 * A client that disconnects while its request waits or generates is seen within 100 ms
 * (poll(POLLRDHUP) on its socket) or at the next write that fails (the completion callback),
 * and its generation is cancelled at the next token. */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "serve/serve_internal.h"
#include "wgfuse/llm.h"
#include "wgfuse/tokenizer.h"

#define HEADER_LIMIT   (64u * 1024u) /* request line + headers, bytes                        */
#define WAIT_SLICE_MS  100           /* how often a waiting connection checks its client      */
#define DRAIN_S        2.0           /* at stop: time for finished streams to reach clients    */

/* One TCP connection (libmicrohttpd's socket_context), for the watchdog. */
struct conn_info {
    struct conn_info *next, *prev;
    int               fd;
    double            since;   /* start of the connection, or end of its previous request   */
    bool              reading; /* waiting for a complete request                             */
    bool              killed;
    char              peer[64];
};

struct wgf_server {
    struct wgf_serve_config cfg; /* strings below are copies                               */
    char                   *host, *api_key, *model_id;
    struct serve_engine     en;
    struct serve_prompt_cfg pc;
    struct MHD_Daemon      *mhd;
    uint16_t                port;
    uint32_t                n_ctx, max_tokens;
    long                    created;
    atomic_ulong            next_id;
    atomic_bool             stopping;
    atomic_int              active; /* requests between their first call and completion    */
    bool                    stopped;
    /* the watchdog */
    pthread_mutex_t         conn_mu;
    pthread_cond_t          conn_cv;
    struct conn_info       *conns;
    pthread_t               watchdog;
    bool                    watchdog_quit, watchdog_started;
};

/* One HTTP request (libmicrohttpd's con_cls). Freed when both the connection is done with it
 * and, for a stream, the response's reader is gone (refs). */
struct req {
    struct wgf_server     *s;
    struct MHD_Connection *conn;
    struct conn_info      *ci;
    int                    refs; /* under s->en.mu                                         */
    double                 t0;
    char                   method[16], path[96];
    enum serve_kind        kind;
    bool                   routed, body_done, too_big;
    bool                   close;  /* answer with "Connection: close" (a framing error)         */
    const char            *allow;  /* a 405's Allow header: the path's methods                  */
    char                  *body;
    size_t                 len, cap;
    int                    status;
    uint32_t               n_prompt;
    struct serve_job      *job;
    /* streams */
    bool  stream, include_usage, disconnected;
    char  id[48];
    long  created;
    char *sse;
    size_t sse_len, sse_off, sse_cap;
    int   phase; /* 0: role chunk not sent; 1: content; 2: ended                            */
};

static double now_s(void) { return wgf_llm_now(); }

/* ---- small helpers ---------------------------------------------------------------------------- */

static void req_unref(struct req *q)
{
    struct serve_engine *en = &q->s->en;
    pthread_mutex_lock(&en->mu);
    bool last = --q->refs == 0;
    pthread_mutex_unlock(&en->mu);
    if (!last) return;
    serve_engine_release(en, q->job);
    free(q->body);
    free(q->sse);
    free(q);
}

static bool client_gone(struct req *q)
{
    if (q->disconnected) return true;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(q->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return false;
    struct pollfd p = {.fd = ci->connect_fd, .events = POLLRDHUP};
    if (poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) q->disconnected = true;
    return q->disconnected;
}

static void abs_time(struct timespec *ts, double in_s)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    long ns    = ts->tv_nsec + (long)(in_s * 1e9);
    ts->tv_sec += ns / 1000000000L;
    ts->tv_nsec = ns % 1000000000L;
}

static enum MHD_Result respond_text(struct req *q, int status, char *body, const char *ctype)
{
    if (!body) {
        static const char oom[] = "{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\",\"param\":null,\"code\":null}}";
        body   = strdup(oom);
        status = 500;
        if (!body) return MHD_NO;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    if (status == 401) MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (status == 405 && q->allow) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, q->allow);
    if (q->close || atomic_load(&q->s->stopping)) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    q->status            = status;
    enum MHD_Result rc   = MHD_queue_response(q->conn, (unsigned)status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result respond_json(struct req *q, int status, json_t *o)
{
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return respond_text(q, status, s, "application/json");
}

static enum MHD_Result respond_error(struct req *q, const struct serve_error *e)
{
    return respond_text(q, e->http, serve_error_json(e), "application/json");
}

static enum MHD_Result fail(struct req *q, int http, const char *param, const char *fmt, const char *arg)
{
    struct serve_error e;
    serve_error_set(&e, http, param, fmt, arg);
    return respond_error(q, &e);
}

bool wgf_serve_key_equal(const char *presented, size_t presented_len, const char *key)
{
    size_t        n    = strlen(key);
    unsigned char diff = (unsigned char)(presented_len != n);
    for (size_t i = 0; i < n; i++) {
        /* read inside the presented key when it is long enough, else a fixed byte: the
         * same work whatever was presented */
        unsigned char p = i < presented_len ? (unsigned char)presented[i] : 0;
        diff |= (unsigned char)(p ^ (unsigned char)key[i]);
    }
    return diff == 0;
}

static bool authorized(struct req *q)
{
    const char *key = q->s->api_key;
    if (!key || !*key) return true;
    const char *h = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Bearer ", 7)) return false;
    h += 7;
    while (*h == ' ') h++;
    return wgf_serve_key_equal(h, strlen(h), key);
}

/* ---- JSON responses ------------------------------------------------------------------------------ */

static json_t *model_object(const struct wgf_server *s)
{
    return json_pack("{s:s, s:s, s:I, s:s, s:I}", "id", s->model_id, "object", "model", "created", (json_int_t)s->created,
                     "owned_by", "wgfuse", "n_ctx", (json_int_t)s->n_ctx);
}

static json_t *usage_object(uint32_t p, uint32_t c)
{
    return json_pack("{s:I, s:I, s:I}", "prompt_tokens", (json_int_t)p, "completion_tokens", (json_int_t)c,
                     "total_tokens", (json_int_t)p + (json_int_t)c);
}

static enum MHD_Result handle_models(struct req *q, const char *id)
{
    if (id) {
        if (strcmp(id, q->s->model_id)) return fail(q, 404, "model", "model '%s' does not exist on this server", id);
        return respond_json(q, 200, model_object(q->s));
    }
    return respond_json(q, 200, json_pack("{s:s, s:[o]}", "object", "list", "data", model_object(q->s)));
}

static enum MHD_Result handle_health(struct req *q)
{
    char why[512];
    if (wgf_serve_healthy(q->s, why, sizeof why)) return respond_json(q, 200, json_pack("{s:s}", "status", "ok"));
    return respond_json(q, 503, json_pack("{s:s, s:s}", "status", "unhealthy", "reason", why));
}

/* A UTF-8 string as JSON, or (invalid UTF-8: a piece holding part of a character) its bytes. */
static json_t *text_or_bytes(const char *t, size_t n)
{
    json_t *s = json_stringn(t, n);
    if (s) return s;
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) json_array_append_new(a, json_integer((unsigned char)t[i]));
    return a;
}

/* Append n bytes to a growing buffer (kept NUL-terminated); false when out of memory. */
static bool buf_add(char **b, size_t *len, size_t *cap, const char *add, size_t n)
{
    size_t need;
    if (!wgf_add_size(*len, n + 1, &need)) return false;
    if (need > *cap) {
        size_t c = *cap ? *cap : 256;
        while (c < need) c *= 2;
        char *p = realloc(*b, c);
        if (!p) return false;
        *b = p, *cap = c;
    }
    memcpy(*b + *len, add, n);
    *len += n;
    (*b)[*len] = 0;
    return true;
}

/* The answer is written as text, a few bytes per token: a 4 MiB body is millions of tokens,
 * and one jansson object per token (hundreds of bytes each, more with a piece) made a single
 * request hold gigabytes. */
static enum MHD_Result handle_tokenize(struct req *q, const struct serve_request *r)
{
    const struct wgf_tokenizer *tok = q->s->cfg.tok;
    int32_t                    *ids = NULL;
    size_t                      n   = 0;
    struct wgf_err              err = {0};
    unsigned flags = (r->parse_special ? WGF_TOK_PARSE_SPECIAL : 0u) | (r->add_special ? WGF_TOK_ADD_BOS : 0u);
    if (wgf_tokenizer_encode_ex(tok, r->prompt, r->prompt_len, flags, &ids, &n, &err))
        return fail(q, 400, "content", "content: %s", err.msg);
    char  *out = NULL;
    size_t len = 0, cap = 0;
    bool   ok  = buf_add(&out, &len, &cap, "{\"tokens\":[", 11);
    for (size_t i = 0; ok && i < n; i++) {
        char head[48];
        int  k = snprintf(head, sizeof head, r->with_pieces ? "%s{\"id\":%d,\"piece\":" : "%s%d", i ? "," : "", (int)ids[i]);
        ok     = buf_add(&out, &len, &cap, head, (size_t)k);
        if (!ok || !r->with_pieces) continue;
        char  *piece = NULL;
        size_t pl    = 0;
        if (wgf_tokenizer_decode(tok, &ids[i], 1, true, &piece, &pl, &err)) {
            free(ids);
            free(out);
            return fail(q, 500, NULL, "tokenize: %s", err.msg);
        }
        json_t *pj = text_or_bytes(piece, pl);
        free(piece);
        char *ps = pj ? json_dumps(pj, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        json_decref(pj);
        ok = ps && buf_add(&out, &len, &cap, ps, strlen(ps)) && buf_add(&out, &len, &cap, "}", 1);
        free(ps);
    }
    ok = ok && buf_add(&out, &len, &cap, "]}", 2);
    free(ids);
    if (!ok) {
        free(out);
        out = NULL; /* respond_text answers 500 "out of memory" */
    }
    return respond_text(q, 200, out, "application/json");
}

static enum MHD_Result handle_detokenize(struct req *q, const struct serve_request *r)
{
    const struct wgf_tokenizer *tok = q->s->cfg.tok;
    size_t                      V   = wgf_tokenizer_vocab_size(tok);
    for (size_t i = 0; i < r->n_ids; i++)
        if ((size_t)r->ids[i] >= V) {
            char m[128];
            snprintf(m, sizeof m, "'tokens[%zu]': id %d is outside the tokenizer's vocabulary [0, %zu)", i, (int)r->ids[i], V);
            return fail(q, 400, "tokens", "%s", m);
        }
    /* the streaming detokenizer: always valid UTF-8 (a byte that forms no character is U+FFFD) */
    struct wgf_detok *dt  = NULL;
    struct wgf_err    err = {0};
    char             *out = NULL;
    size_t            len = 0, cap = 0;
    bool              ok  = wgf_detok_new(tok, WGF_DETOK_SPECIAL, &dt, &err) == WGF_OK;
    for (size_t i = 0; ok && i <= r->n_ids; i++) {
        const char *t;
        size_t      tl;
        ok = (i < r->n_ids ? wgf_detok_push(dt, r->ids[i], &t, &tl, &err) : wgf_detok_flush(dt, &t, &tl, &err)) == WGF_OK;
        ok = ok && buf_add(&out, &len, &cap, t, tl);
    }
    wgf_detok_free(dt);
    json_t *o = ok ? json_pack("{s:s%}", "content", out ? out : "", len) : NULL;
    free(out);
    if (!ok) return fail(q, 500, NULL, "detokenize: %s", err.msg);
    return respond_json(q, 200, o);
}

/* ---- generation ---------------------------------------------------------------------------------- */

static json_t *choice_object(const struct req *q, const char *text, size_t len, const char *finish)
{
    json_t *t = json_stringn(text ? text : "", text ? len : 0);
    if (q->kind == SERVE_CHAT)
        return json_pack("{s:i, s:{s:s, s:o}, s:o, s:s}", "index", 0, "message", "role", "assistant", "content", t,
                         "logprobs", json_null(), "finish_reason", finish);
    return json_pack("{s:i, s:o, s:o, s:s}", "index", 0, "text", t, "logprobs", json_null(), "finish_reason", finish);
}

static json_t *envelope(const struct req *q, bool chunk)
{
    const char *object = q->kind == SERVE_CHAT ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
    return json_pack("{s:s, s:s, s:I, s:s, s:s}", "id", q->id, "object", object, "created", (json_int_t)q->created, "model",
                     q->s->model_id, "system_fingerprint", "wgfuse");
}

/* Append "data: <json>\n\n" (consumes o). */
static bool sse_add(struct req *q, json_t *o)
{
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!s) return false;
    size_t n = strlen(s), need = q->sse_len + n + 9;
    if (need > q->sse_cap) {
        size_t cap = q->sse_cap ? q->sse_cap : 1024;
        while (cap < need) cap *= 2;
        char *p = realloc(q->sse, cap);
        if (!p) {
            free(s);
            return false;
        }
        q->sse = p, q->sse_cap = cap;
    }
    q->sse_len += (size_t)snprintf(q->sse + q->sse_len, q->sse_cap - q->sse_len, "data: %s\n\n", s);
    free(s);
    return true;
}

static json_t *chunk_object(const struct req *q, const char *text, size_t len, bool role, const char *finish)
{
    json_t *o = envelope(q, true), *choice;
    if (q->kind == SERVE_CHAT) {
        json_t *delta = json_object();
        if (role) json_object_set_new(delta, "role", json_string("assistant"));
        if (text) json_object_set_new(delta, "content", json_stringn(text, len));
        choice = json_pack("{s:i, s:o, s:o, s:o}", "index", 0, "delta", delta, "logprobs", json_null(), "finish_reason",
                           finish ? json_string(finish) : json_null());
    } else {
        choice = json_pack("{s:i, s:s%, s:o, s:o}", "index", 0, "text", text ? text : "", text ? len : 0, "logprobs",
                           json_null(), "finish_reason", finish ? json_string(finish) : json_null());
    }
    json_object_set_new(o, "choices", json_pack("[o]", choice));
    return o;
}

/* Wait (slices of WAIT_SLICE_MS) until the job is done (or, unless until_done, has text),
 * watching the client and the deadline. With en->mu held on entry and return. false: the
 * client is gone (its job is cancelled). */
static bool wait_job(struct req *q, bool until_done)
{
    struct serve_engine *en = &q->s->en;
    struct serve_job    *j  = q->job;
    while ((until_done || j->text_len == 0) && j->state != JOB_DONE) {
        struct timespec ts;
        abs_time(&ts, WAIT_SLICE_MS / 1000.0);
        pthread_cond_timedwait(&j->cv, &en->mu, &ts);
        if ((!until_done && j->text_len) || j->state == JOB_DONE) break;
        pthread_mutex_unlock(&en->mu);
        bool gone = client_gone(q);
        if (gone) serve_engine_cancel(en, j, CANCEL_DISCONNECT);
        else if (now_s() > j->deadline) {
            serve_engine_cancel(en, j, CANCEL_DEADLINE); /* queued: leaves; running: the worker stops it */
        }
        pthread_mutex_lock(&en->mu);
        if (gone) return false;
    }
    return true;
}

static void job_error(const struct serve_job *j, struct serve_error *e)
{
    if (j->http) serve_error_set(e, j->http, NULL, "%s", j->errmsg);
    else serve_error_set(e, 503, NULL, "the request's deadline passed while it waited for the engine");
}

static ssize_t sse_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct req          *q  = cls;
    struct serve_engine *en = &q->s->en;
    struct serve_job    *j  = q->job;
    if (q->phase == 0) { /* the assistant's role at once, as OpenAI does, even while queued */
        if (q->kind == SERVE_CHAT && !sse_add(q, chunk_object(q, "", 0, true, NULL))) return MHD_CONTENT_READER_END_WITH_ERROR;
        q->phase = 1;
    }
    while (q->sse_off == q->sse_len) {
        if (q->phase == 2) return MHD_CONTENT_READER_END_OF_STREAM;
        q->sse_off = q->sse_len = 0;
        pthread_mutex_lock(&en->mu);
        if (!wait_job(q, false)) {
            pthread_mutex_unlock(&en->mu);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        char  *text = NULL;
        size_t tl   = j->text_len;
        if (tl) {
            text = j->text; /* take the buffer: the worker starts a new one */
            j->text = NULL, j->text_len = j->text_cap = 0;
        }
        bool done = j->state == JOB_DONE;
        int  http = j->http;
        pthread_mutex_unlock(&en->mu);
        bool ok = true;
        if (tl) ok = sse_add(q, chunk_object(q, text, tl, false, NULL));
        free(text);
        if (ok && done) {
            if (http || !j->finish) { /* failed (fault, shutdown) or never ran (deadline in the queue) */
                struct serve_error e;
                job_error(j, &e);
                char *body = serve_error_json(&e);
                json_t *eo = body ? json_loads(body, 0, NULL) : NULL;
                free(body);
                ok     = sse_add(q, eo);
                q->status = e.http; /* for the access log: the stream carried an error */
            } else {
                ok = sse_add(q, chunk_object(q, NULL, 0, false, j->finish));
                if (ok && q->include_usage) {
                    json_t *u = envelope(q, true);
                    json_object_set_new(u, "choices", json_array());
                    json_object_set_new(u, "usage", usage_object(q->n_prompt, j->n_generated));
                    ok = sse_add(q, u);
                }
            }
            if (ok) {
                static const char fin[] = "data: [DONE]\n\n";
                if (q->sse_len + sizeof fin > q->sse_cap) {
                    char *p = realloc(q->sse, q->sse_len + sizeof fin);
                    if (!p) return MHD_CONTENT_READER_END_WITH_ERROR;
                    q->sse = p, q->sse_cap = q->sse_len + sizeof fin;
                }
                memcpy(q->sse + q->sse_len, fin, sizeof fin - 1);
                q->sse_len += sizeof fin - 1;
            }
            q->phase = 2;
        }
        if (!ok) {
            serve_engine_cancel(en, j, CANCEL_DISCONNECT);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
    }
    size_t n = q->sse_len - q->sse_off < max ? q->sse_len - q->sse_off : max;
    memcpy(buf, q->sse + q->sse_off, n);
    q->sse_off += n;
    return (ssize_t)n;
}

static void sse_free(void *cls) { req_unref(cls); }

static enum MHD_Result handle_generate(struct req *q, struct serve_request *r)
{
    struct wgf_server *s = q->s;
    struct serve_error e;
    int32_t           *ids = NULL;
    uint32_t           n   = 0;
    if (serve_prompt_ids(&s->pc, r, &ids, &n, &e)) return respond_error(q, &e);
    q->n_prompt = n;
    struct serve_job *j = serve_job_new();
    if (!j) {
        free(ids);
        return fail(q, 500, NULL, "%s", "out of memory");
    }
    q->job      = j;
    j->prompt   = ids;
    j->n_prompt = n;
    j->deadline = now_s() + (double)s->cfg.timeout_s;
    struct wgf_sampler_params sp = wgf_sampler_params_default();
    sp.temperature    = (float)r->temperature;
    sp.top_k          = (uint32_t)r->top_k;
    sp.top_p          = (float)r->top_p;
    sp.repeat_penalty = (float)r->repeat_penalty;
    /* no seed: a fresh one per request, as OpenAI's API behaves */
    sp.seed = r->has_seed ? r->seed : (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull ^ atomic_fetch_add(&s->next_id, 1);
    j->sp   = sp;
    struct wgf_gen_params gp = wgf_gen_params_default();
    gp.max_tokens            = (uint32_t)(r->max_tokens ? r->max_tokens : (int64_t)s->max_tokens);
    gp.ignore_eos            = r->ignore_eos;
    for (int i = 0; i < s->cfg.model->n_eos && i < WGF_GEN_MAX_EOS; i++) gp.eos_ids[i] = s->cfg.model->eos_ids[i];
    for (unsigned i = 0; i < WGF_SERVE_MAX_STOP && r->stop[i]; i++) {
        /* copies: the request's JSON is gone before a stream's job ends */
        if (!(j->stop_own[i] = strdup(r->stop[i]))) return fail(q, 500, NULL, "%s", "out of memory");
        gp.stop[i] = j->stop_own[i];
    }
    j->gp = gp;
    snprintf(q->id, sizeof q->id, "%s-%lx%06lx", q->kind == SERVE_CHAT ? "chatcmpl" : "cmpl", (unsigned long)s->created,
             atomic_fetch_add(&s->next_id, 1));
    q->created       = (long)time(NULL);
    q->stream        = r->stream;
    q->include_usage = r->include_usage;
    if (serve_engine_submit(&s->en, j, &e)) return respond_error(q, &e);

    if (q->stream) {
        pthread_mutex_lock(&s->en.mu);
        q->refs++; /* the response's reader */
        pthread_mutex_unlock(&s->en.mu);
        struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_reader, q, sse_free);
        if (!resp) {
            req_unref(q);
            serve_engine_cancel(&s->en, j, CANCEL_DISCONNECT);
            return MHD_NO;
        }
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
        q->status          = 200;
        enum MHD_Result rc = MHD_queue_response(q->conn, MHD_HTTP_OK, resp);
        MHD_destroy_response(resp);
        return rc;
    }
    pthread_mutex_lock(&s->en.mu);
    bool alive = wait_job(q, true);
    pthread_mutex_unlock(&s->en.mu);
    if (!alive) return MHD_NO; /* nobody to answer: close */
    if (j->http || !j->finish) {
        job_error(j, &e);
        return respond_error(q, &e);
    }
    json_t *o = envelope(q, false);
    json_object_set_new(o, "choices", json_pack("[o]", choice_object(q, j->text, j->text_len, j->finish)));
    json_object_set_new(o, "usage", usage_object(n, j->n_generated));
    return respond_json(q, 200, o);
}

/* ---- routing --------------------------------------------------------------------------------------- */

struct route {
    const char     *path;
    const char     *method;
    enum serve_kind kind;
    int             what; /* 0 generate/tokenize (POST with a body), 1 models, 2 health          */
};
static const struct route routes[] = {
    {"/v1/chat/completions", "POST", SERVE_CHAT, 0}, {"/v1/completions", "POST", SERVE_COMPLETION, 0},
    {"/tokenize", "POST", SERVE_TOKENIZE, 0},        {"/detokenize", "POST", SERVE_DETOKENIZE, 0},
    {"/v1/models", "GET", SERVE_CHAT, 1},            {"/health", "GET", SERVE_CHAT, 2},
};

/* The path for the log: printable ASCII only, shortened. */
static void clean_path(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    for (; src && *src && i + 1 < cap; src++) dst[i++] = (*src > 32 && *src < 127) ? *src : '?';
    dst[i] = 0;
}

/* The request's method is the route's, or HEAD for a GET route (RFC 9110 9.3.2: the same
 * answer; libmicrohttpd leaves the body out). */
static bool method_is(const char *method, const char *route_method)
{
    return !strcmp(method, route_method) || (!strcmp(route_method, "GET") && !strcmp(method, "HEAD"));
}

static enum MHD_Result dispatch_body(struct req *q)
{
    struct serve_request r;
    struct serve_error   e;
    if (serve_request_parse(q->kind, q->body ? q->body : "", q->len, q->s->max_tokens, &r, &e)) return respond_error(q, &e);
    enum MHD_Result rc;
    if (q->kind == SERVE_TOKENIZE) rc = handle_tokenize(q, &r);
    else if (q->kind == SERVE_DETOKENIZE) rc = handle_detokenize(q, &r);
    else rc = handle_generate(q, &r);
    serve_request_free(&r);
    return rc;
}

struct framing {
    int content_length, transfer_encoding; /* how many of each header                     */
};

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind, (void)value;
    struct framing *f = cls;
    if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) f->content_length++;
    if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) f->transfer_encoding++;
    return MHD_YES;
}

/* A request whose body cannot be delimited safely (RFC 9112 6.1, 6.3): two Content-Lengths
 * or Transfer-Encodings, both headers, or a transfer coding other than chunked. libmicrohttpd
 * takes the first Content-Length (a proxy in front may take another: request smuggling) and
 * waits for a body of an unknown coding until --read-timeout. 0, or -1 with *e set (400,
 * 501); the answer closes the connection. */
static int framing_error(struct MHD_Connection *c, struct serve_error *e)
{
    struct framing f = {0, 0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_framing, &f);
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    if (f.content_length > 1 || f.transfer_encoding > 1)
        return serve_error_set(e, 400, NULL, "%d Content-Length and %d Transfer-Encoding headers: send one",
                               f.content_length, f.transfer_encoding);
    if (f.content_length && f.transfer_encoding)
        return serve_error_set(e, 400, NULL, "%s", "both Content-Length and Transfer-Encoding: send one of them");
    if (te && strcasecmp(te, "chunked"))
        return serve_error_set(e, 501, NULL, "Transfer-Encoding '%.64s' is not supported (chunked is)", te);
    return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_size, void **con_cls)
{
    (void)version;
    struct wgf_server *s = cls;
    struct req        *q = *con_cls;
    if (!q) {
        q = calloc(1, sizeof *q);
        if (!q) return MHD_NO;
        q->s = s, q->conn = c, q->refs = 1, q->t0 = now_s(), q->status = 0;
        clean_path(q->method, sizeof q->method, method);
        clean_path(q->path, sizeof q->path, url);
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        q->ci                              = ci ? ci->socket_context : NULL;
        *con_cls                           = q;
        atomic_fetch_add(&s->active, 1);

        if (atomic_load(&s->stopping)) return fail(q, 503, NULL, "%s", "the server is shutting down");
        struct serve_error fe;
        if (framing_error(c, &fe)) {
            q->close = true;
            return respond_error(q, &fe);
        }
        const struct route *rt = NULL;
        bool                path_known = false;
        const char         *model_id   = NULL;
        for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
            if (!strcmp(url, routes[i].path)) {
                path_known = true;
                if (method_is(method, routes[i].method)) rt = &routes[i];
                q->allow = !strcmp(routes[i].method, "GET") ? "GET, HEAD" : routes[i].method;
            }
        if (!strncmp(url, "/v1/models/", 11)) {
            path_known = true;
            q->allow   = "GET, HEAD";
            if (method_is(method, "GET")) rt = &routes[4], model_id = url + 11;
        }
        if (!path_known) return fail(q, 404, NULL, "no endpoint %s (docs/serve.md lists them)", q->path);
        if (!rt) {
            struct serve_error e;
            serve_error_set(&e, 405, NULL, "%s %s: method not allowed", q->method, q->path);
            return respond_error(q, &e);
        }
        if (rt->what != 2 && !authorized(q))
            return fail(q, 401, NULL, "%s", "missing or wrong API key (send the header \"Authorization: Bearer KEY\")");
        if (rt->what == 1) return handle_models(q, model_id);
        if (rt->what == 2) return handle_health(q);
        q->kind   = rt->kind;
        q->routed = true;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
        if (!cl && !te) return fail(q, 411, NULL, "%s", "a POST needs a Content-Length (or a chunked body)");
        if (cl) {
            char              *end = NULL;
            unsigned long long v   = strtoull(cl, &end, 10);
            if (end == cl || *end || v > s->cfg.max_body) {
                struct serve_error e;
                serve_error_set(&e, 413, NULL, "the request body (Content-Length %s) is larger than this server's limit of %zu bytes",
                                cl, s->cfg.max_body);
                return respond_error(q, &e);
            }
        }
        return MHD_YES;
    }
    if (q->status) { /* answered already (an error before the body): discard what arrives */
        *upload_size = 0;
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (q->len + n > s->cfg.max_body) {
            q->status = 413; /* a chunked body past the limit: nothing is read further */
            return MHD_NO;
        }
        if (q->len + n + 1 > q->cap) {
            size_t cap = q->cap ? q->cap : 4096;
            while (cap < q->len + n + 1) cap *= 2;
            char *p = realloc(q->body, cap);
            if (!p) return MHD_NO;
            q->body = p, q->cap = cap;
        }
        memcpy(q->body + q->len, upload_data, n);
        q->len += n;
        return MHD_YES;
    }
    /* the whole request is in */
    if (q->ci) {
        pthread_mutex_lock(&s->conn_mu);
        q->ci->reading = false;
        pthread_mutex_unlock(&s->conn_mu);
    }
    if (q->len == 0) return fail(q, 400, NULL, "%s", "the request body is empty");
    return dispatch_body(q);
}

static void peer_of(struct MHD_Connection *c, char *buf, size_t cap)
{
    snprintf(buf, cap, "?");
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!ci || !ci->client_addr) return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET) inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf, (socklen_t)cap);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, buf, (socklen_t)cap);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    struct wgf_server *s = cls;
    struct req        *q = *con_cls;
    if (!q) return;
    *con_cls = NULL;
    bool ok  = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK;
    uint32_t n_gen = 0;
    bool     cancelled = false;
    if (q->job) {
        if (!ok) serve_engine_cancel(&s->en, q->job, CANCEL_DISCONNECT);
        pthread_mutex_lock(&s->en.mu);
        n_gen     = q->job->n_generated;
        cancelled = atomic_load(&q->job->cancel) != CANCEL_NONE;
        pthread_mutex_unlock(&s->en.mu);
    }
    char peer[64];
    peer_of(c, peer, sizeof peer);
    int status = q->status ? q->status : 499; /* 499: the client went away before an answer */
    serve_log(s->cfg.log, s->cfg.log_user, "serve: %s \"%s %s\" %d prompt=%u completion=%u %.0fms%s%s", peer, q->method,
              q->path, ok ? status : (q->status == 200 ? 499 : status), q->n_prompt, n_gen, (now_s() - q->t0) * 1e3,
              cancelled ? " cancelled" : "", ok ? "" : " (connection closed early)");
    pthread_mutex_lock(&s->en.mu);
    s->en.stats.requests++;
    pthread_mutex_unlock(&s->en.mu);
    if (q->ci) {
        pthread_mutex_lock(&s->conn_mu);
        q->ci->reading = true; /* the next request on this connection, if any */
        q->ci->since   = now_s();
        pthread_mutex_unlock(&s->conn_mu);
    }
    atomic_fetch_sub(&s->active, 1);
    req_unref(q);
}

/* ---- connections and the watchdog -------------------------------------------------------------- */

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context, enum MHD_ConnectionNotificationCode code)
{
    struct wgf_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        struct conn_info *ci = calloc(1, sizeof *ci);
        *socket_context      = ci;
        if (!ci) return;
        const union MHD_ConnectionInfo *fi = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        ci->fd      = fi ? fi->connect_fd : -1;
        ci->since   = now_s();
        ci->reading = true;
        peer_of(c, ci->peer, sizeof ci->peer);
        pthread_mutex_lock(&s->conn_mu);
        ci->next = s->conns;
        if (s->conns) s->conns->prev = ci;
        s->conns = ci;
        pthread_mutex_unlock(&s->conn_mu);
    } else {
        struct conn_info *ci = *socket_context;
        if (!ci) return;
        /* removed before libmicrohttpd closes the socket: the watchdog never sees a reused fd */
        pthread_mutex_lock(&s->conn_mu);
        if (ci->prev) ci->prev->next = ci->next;
        else s->conns = ci->next;
        if (ci->next) ci->next->prev = ci->prev;
        pthread_mutex_unlock(&s->conn_mu);
        free(ci);
        *socket_context = NULL;
    }
}

static void *watchdog_main(void *arg)
{
    struct wgf_server *s = arg;
    pthread_mutex_lock(&s->conn_mu);
    while (!s->watchdog_quit) {
        double t = now_s();
        for (struct conn_info *ci = s->conns; ci; ci = ci->next)
            if (ci->reading && !ci->killed && ci->fd >= 0 && t - ci->since > (double)s->cfg.read_timeout_s) {
                ci->killed = true;
                shutdown(ci->fd, SHUT_RDWR);
                serve_log(s->cfg.log, s->cfg.log_user,
                          "serve: %s: closed: no complete request within %u s (--read-timeout)", ci->peer,
                          s->cfg.read_timeout_s);
            }
        struct timespec ts;
        abs_time(&ts, 0.25);
        pthread_cond_timedwait(&s->conn_cv, &s->conn_mu, &ts);
    }
    pthread_mutex_unlock(&s->conn_mu);
    return NULL;
}

static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
    struct wgf_server *s = cls;
    char               m[512];
    vsnprintf(m, sizeof m, fmt, ap);
    size_t n = strlen(m);
    while (n && (m[n - 1] == '\n' || m[n - 1] == '\r')) m[--n] = 0;
    serve_log(s->cfg.log, s->cfg.log_user, "serve: libmicrohttpd: %s", m);
}

/* ---- the server ------------------------------------------------------------------------------------ */

static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return false;
}

enum wgf_status wgf_serve_start(const struct wgf_serve_config *cfg, struct wgf_server **out, struct wgf_err *err)
{
    *out = NULL;
    if (!cfg->backend || !cfg->tok || !cfg->model)
        return wgf_fail(err, WGF_ERR_ARG, "serve: a backend, a tokenizer and the model's config are required");
    struct wgf_server *s = calloc(1, sizeof *s);
    if (!s) return wgf_fail(err, WGF_ERR_NOMEM, "serve: server state");
    s->cfg      = *cfg;
    s->host     = strdup(cfg->host ? cfg->host : "127.0.0.1");
    s->api_key  = cfg->api_key && *cfg->api_key ? strdup(cfg->api_key) : NULL;
    s->model_id = strdup(cfg->model_id ? cfg->model_id : "wgfuse");
    s->n_ctx    = cfg->backend->n_ctx;
    s->created  = (long)time(NULL);
    if (!s->cfg.parallel) s->cfg.parallel = WGF_SERVE_DEFAULT_PARALLEL;
    if (!s->cfg.max_body) s->cfg.max_body = WGF_SERVE_DEFAULT_MAX_BODY;
    if (!s->cfg.timeout_s) s->cfg.timeout_s = WGF_SERVE_DEFAULT_TIMEOUT_S;
    if (!s->cfg.read_timeout_s) s->cfg.read_timeout_s = WGF_SERVE_DEFAULT_READ_S;
    s->max_tokens = cfg->max_tokens && cfg->max_tokens < s->n_ctx ? cfg->max_tokens : s->n_ctx;
    s->pc         = (struct serve_prompt_cfg){.tok = cfg->tok, .chat = cfg->chat,
                                              .n_vocab = cfg->backend->n_vocab,
                                              .max_prompt = cfg->max_prompt_tokens && cfg->max_prompt_tokens < s->n_ctx
                                                                ? cfg->max_prompt_tokens
                                                                : s->n_ctx};
    serve_engine_init(&s->en);
    atomic_init(&s->next_id, 1);
    atomic_init(&s->stopping, false);
    atomic_init(&s->active, 0);
    pthread_mutex_init(&s->conn_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->conn_cv, &ca);
    pthread_condattr_destroy(&ca);
    s->en.capacity = s->cfg.parallel;
    s->en.backend  = cfg->backend;
    s->en.tok      = cfg->tok;
    s->en.log      = cfg->log;
    s->en.log_user = cfg->log_user;
    s->stopped     = true; /* until everything below is up: free() then stops nothing */
    if (!s->host || !s->model_id || (cfg->api_key && *cfg->api_key && !s->api_key)) {
        wgf_serve_free(s);
        return wgf_fail(err, WGF_ERR_NOMEM, "serve: server state");
    }

    char             port[8];
    struct addrinfo  hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai    = NULL;
    snprintf(port, sizeof port, "%u", (unsigned)cfg->port);
    int gai = getaddrinfo(s->host, port, &hints, &ai);
    if (gai || !ai) {
        enum wgf_status st = wgf_fail(err, WGF_ERR_ARG, "--host %s: %s", s->host, gai ? gai_strerror(gai) : "no address");
        wgf_serve_free(s);
        return st;
    }
    bool loop = is_loopback(ai->ai_addr);
    if (serve_engine_start(&s->en, err)) {
        freeaddrinfo(ai);
        wgf_serve_free(s);
        return WGF_ERR_INTERNAL;
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    unsigned limit = 64u + 2u * s->cfg.parallel;
    s->mhd = MHD_start_daemon(flags, cfg->port, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, s,
                              MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                              MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_CONNECTION_TIMEOUT,
                              (unsigned)s->cfg.read_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HEADER_LIMIT,
                              MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                              MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!s->mhd) {
        int e = errno;
        serve_engine_stop(&s->en, 0);
        enum wgf_status st = wgf_fail(err, WGF_ERR_IO, "cannot listen on %s port %u: %s", s->host, (unsigned)cfg->port,
                                      e ? strerror(e) : "libmicrohttpd could not start");
        wgf_serve_free(s);
        return st;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    s->port                        = di ? di->port : cfg->port;
    s->stopped                     = false;
    if (pthread_create(&s->watchdog, NULL, watchdog_main, s) == 0) s->watchdog_started = true;
    if (!loop && !s->api_key)
        serve_log(cfg->log, cfg->log_user,
                  "serve: warning: listening on %s, which is not a loopback address, without --api-key: anyone who "
                  "can reach this port can use the model",
                  s->host);
    *out = s;
    return WGF_OK;
}

uint16_t wgf_serve_port(const struct wgf_server *s) { return s->port; }

bool wgf_serve_healthy(const struct wgf_server *s, char *why, size_t cap)
{
    struct serve_engine *en = (struct serve_engine *)&s->en;
    pthread_mutex_lock(&en->mu);
    bool ok = en->healthy;
    if (why && cap) snprintf(why, cap, "%s", ok ? "" : en->unhealthy);
    pthread_mutex_unlock(&en->mu);
    return ok;
}

struct wgf_serve_stats wgf_serve_stats(const struct wgf_server *s)
{
    struct serve_engine *en = (struct serve_engine *)&s->en;
    pthread_mutex_lock(&en->mu);
    struct wgf_serve_stats st = en->stats;
    pthread_mutex_unlock(&en->mu);
    return st;
}

void wgf_serve_stop(struct wgf_server *s, double grace_s)
{
    if (!s || s->stopped) return;
    s->stopped = true;
    atomic_store(&s->stopping, true);
    MHD_socket l = MHD_quiesce_daemon(s->mhd); /* no new connections */
    if (l != MHD_INVALID_SOCKET) close(l);
    serve_engine_stop(&s->en, grace_s);
    /* every job is done now: let the connections still answering finish (bounded) */
    double until = now_s() + DRAIN_S;
    while (atomic_load(&s->active) > 0 && now_s() < until) {
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    MHD_stop_daemon(s->mhd);
    s->mhd = NULL;
    if (s->watchdog_started) {
        pthread_mutex_lock(&s->conn_mu);
        s->watchdog_quit = true;
        pthread_cond_broadcast(&s->conn_cv);
        pthread_mutex_unlock(&s->conn_mu);
        pthread_join(s->watchdog, NULL);
        s->watchdog_started = false;
    }
}

void wgf_serve_free(struct wgf_server *s)
{
    if (!s) return;
    wgf_serve_stop(s, 0);
    serve_engine_free(&s->en);
    pthread_mutex_destroy(&s->conn_mu);
    pthread_cond_destroy(&s->conn_cv);
    free(s->host);
    free(s->api_key);
    free(s->model_id);
    free(s);
}
