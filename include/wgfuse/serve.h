/* wgfuse — `wgfuse serve`: an OpenAI-compatible HTTP server over one loaded model.
 *
 * Endpoints (docs/serve.md): POST /v1/chat/completions, POST /v1/completions (both with
 * `stream`: server-sent events ending in `data: [DONE]`), GET /v1/models, GET /health,
 * POST /tokenize, POST /detokenize (llama.cpp's).
 *
 * One model, many clients. The engine is batch-1: one worker thread owns the backend and runs
 * one request at a time, in arrival order (FIFO). `parallel` is how many requests the server
 * holds at once (the one generating plus parallel-1 waiting); one more gets 503 at once.
 * HTTP is libmicrohttpd, a thread per connection: parsing, tokenizing and writing happen on
 * the connection's thread, never on the engine's. A client that disconnects (or whose
 * request passes its deadline) cancels its generation at the next token, or leaves the queue.
 *
 * Threads: the server borrows the backend (used by its worker thread only, from start until
 * stop returns), the tokenizer and the chat template (shared read-only by every connection
 * thread: wgf_chat_encode is safe concurrently) and the config.
 * The log callback is called from many threads, one whole line at a time. */
#ifndef WGFUSE_SERVE_H
#define WGFUSE_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wgfuse/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wgf_chat;
struct wgf_llm_backend;
struct wgf_llm_config;
struct wgf_tokenizer;

/* Defaults of the limits (0 in the config picks them). */
#define WGF_SERVE_DEFAULT_PARALLEL     8u
#define WGF_SERVE_DEFAULT_MAX_BODY     (4u << 20) /* request bodies, bytes                   */
#define WGF_SERVE_DEFAULT_TIMEOUT_S    600u       /* a request: queue + generation           */
#define WGF_SERVE_DEFAULT_READ_S       15u        /* a request's headers + body arriving     */
#define WGF_SERVE_MAX_MESSAGES         4096u      /* messages in one chat request            */
#define WGF_SERVE_MAX_STOP             4u         /* stop strings (OpenAI's limit)            */
#define WGF_SERVE_MAX_STOP_BYTES       1024u      /* bytes of one stop string: every token's
                                                     text is matched against each (bounded
                                                     work a token, not a request's size)     */

struct wgf_serve_config {
    const char *host;       /* address to bind; NULL: "127.0.0.1"                         */
    uint16_t    port;       /* 0: the OS picks one (wgf_serve_port says which)             */
    const char *api_key;    /* NULL or "": none; else "Authorization: Bearer KEY" required
                               on every endpoint but /health (compared in constant time)   */
    const char *model_id;   /* the name /v1/models and every response give the model       */
    struct wgf_llm_backend       *backend;  /* borrowed; the worker thread's alone           */
    const struct wgf_tokenizer   *tok;      /* borrowed; required                            */
    const struct wgf_llm_config  *model;    /* borrowed: EOS ids                             */
    const struct wgf_chat        *chat;     /* borrowed: the chat template (wgfuse/chat.h) every
                                               chat request's messages go through; NULL: none
                                               (a chat request must then be one user message,
                                               encoded as it is, as `wgfuse run --no-template`) */
    uint32_t parallel;          /* requests held at once (1 running + parallel-1 queued)    */
    uint32_t max_prompt_tokens; /* a longer prompt is 422; 0: the backend's n_ctx            */
    uint32_t max_tokens;        /* largest max_tokens accepted (and the default); 0: n_ctx   */
    size_t   max_body;          /* larger bodies are 413                                     */
    uint32_t timeout_s;         /* request deadline: queued past it -> 503, generating past it
                                   -> stops with finish_reason "length"                     */
    uint32_t read_timeout_s;    /* a request's headers + body must arrive within it (counted
                                   from the connection's start or its previous request's
                                   end), else the connection is closed: a slow client cannot
                                   hold a thread for long, and an idle keep-alive connection
                                   is closed after it too                                  */
    /* one access-log or event line (no newline); may be NULL */
    void (*log)(void *user, const char *line);
    void *log_user;
};

struct wgf_server;

/* Counters since start (for tests and /health). */
struct wgf_serve_stats {
    uint64_t requests;          /* HTTP requests answered (any status)                      */
    uint64_t generations;       /* generations started on the engine                         */
    uint64_t tokens_generated;  /* tokens sampled over all generations                       */
    uint64_t cancelled;         /* generations stopped early by a disconnect or deadline    */
    uint64_t rejected_busy;     /* 503: queue full                                           */
};

/* Bind and start serving (the listening socket is open when this returns). *out is the
 * caller's (wgf_serve_stop, then wgf_serve_free). Fails with WGF_ERR_ARG for a bad config
 * (host that does not resolve), WGF_ERR_IO when the address cannot be bound. */
enum wgf_status wgf_serve_start(const struct wgf_serve_config *cfg, struct wgf_server **out, struct wgf_err *err);
/* The port bound (the one the OS picked when the config said 0). */
uint16_t wgf_serve_port(const struct wgf_server *s);
/* False after a fault the engine cannot recover from (device lost, ...); *why (may be NULL)
 * then holds the reason. */
bool wgf_serve_healthy(const struct wgf_server *s, char *why, size_t cap);
struct wgf_serve_stats wgf_serve_stats(const struct wgf_server *s);
/* Stop: close the listening socket, let the requests held finish for up to grace_s seconds,
 * then cancel what is left (generations stop at their next token, waiting requests get 503),
 * close every connection and join every thread. Idempotent. */
void wgf_serve_stop(struct wgf_server *s, double grace_s);
/* Stops (grace 0) if still running, then frees. NULL is a no-op. */
void wgf_serve_free(struct wgf_server *s);

/* Constant-time comparison of a presented key with the configured one: the time depends on
 * the configured key's length only. Exported for tests. */
bool wgf_serve_key_equal(const char *presented, size_t presented_len, const char *key);

#ifdef __cplusplus
}
#endif
#endif
