/* wgfuse serve — what the server's files share (private to src/serve/).
 *
 *   serve_request.c  request JSON -> struct serve_request (no tokenizer, no model: fuzzed
 *                    alone, fuzz/fuzz_serve_request.c), and OpenAI's error objects
 *   serve_engine.c   the job queue and the worker thread that owns the backend
 *   serve_http.c     libmicrohttpd: routing, limits, auth, responses, SSE, the watchdog
 *   serve_prompt.c   request -> prompt token ids (chat template, completions, limits) */
#ifndef WGF_SERVE_INTERNAL_H
#define WGF_SERVE_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wgfuse/llm_run.h"
#include "wgfuse/serve.h"

/* ---- requests (serve_request.c) ------------------------------------------------------------ */

enum serve_kind { SERVE_CHAT, SERVE_COMPLETION, SERVE_TOKENIZE, SERVE_DETOKENIZE };

/* An OpenAI error object: {"error": {"message", "type", "param", "code"}} with its status. */
struct serve_error {
    int         http;      /* 400, 401, 404, 405, 411, 413, 422, 500, 501, 503            */
    const char *type;      /* "invalid_request_error", "authentication_error", ...        */
    const char *code;      /* NULL or "context_length_exceeded", "invalid_api_key", ...   */
    char        param[64]; /* the field at fault, "" when none                            */
    char        msg[512];
};
/* Fill *e; returns -1 (the parse functions' failure value). */
int serve_error_set(struct serve_error *e, int http, const char *param, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The error as a JSON body (malloc'd; NULL when out of memory). */
char *serve_error_json(const struct serve_error *e);

struct serve_msg {
    const char *role;    /* "system", "user", "assistant", "developer" or "tool"        */
    const char *content; /* borrowed from the request's JSON or its `owned` list          */
    size_t      len;     /* bytes (content may hold NULs)                                 */
};

struct serve_request {
    enum serve_kind   kind;
    void             *root;   /* the parsed JSON (json_t *): owns the strings below       */
    struct serve_msg *msgs;   /* chat: n_msgs messages                                     */
    size_t            n_msgs;
    char            **owned;  /* texts joined from content parts                          */
    size_t            n_owned;
    /* completions: the prompt as text, or as token ids */
    const char *prompt;
    size_t      prompt_len;
    int32_t    *ids;          /* completions' token-id prompt; detokenize's tokens        */
    size_t      n_ids;
    bool        stream, include_usage;
    int64_t     max_tokens;   /* 0: not given (the server's default)                       */
    double      temperature;  /* OpenAI defaults: 1, 1                                     */
    double      top_p;
    int64_t     top_k;        /* extension (llama.cpp): 0 = off                           */
    double      repeat_penalty; /* extension (llama.cpp): 1 = off                          */
    bool        has_seed;
    uint64_t    seed;
    const char *stop[WGF_SERVE_MAX_STOP + 1]; /* NULL-terminated                          */
    bool        ignore_eos;   /* extension (llama.cpp)                                     */
    /* tokenize */
    bool add_special, parse_special, with_pieces;
};

/* Parse a request body of `kind`. max_tokens_cap bounds max_tokens (400 above it). On
 * failure *e holds the OpenAI error (400 for malformed JSON, wrong types and unsupported
 * values, naming the field) and -1 is returned; r is then already freed. */
int  serve_request_parse(enum serve_kind kind, const char *body, size_t n, uint32_t max_tokens_cap,
                         struct serve_request *r, struct serve_error *e);
void serve_request_free(struct serve_request *r);

/* ---- the engine (serve_engine.c) ------------------------------------------------------------ */

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE };
enum job_cancel { CANCEL_NONE, CANCEL_DISCONNECT, CANCEL_DEADLINE, CANCEL_SHUTDOWN };

/* One generation. Shared by the connection thread that made it and the worker (refcount under
 * the engine's mutex); every field below `mutable` is guarded by that mutex. */
struct serve_job {
    /* set before submit, read-only after */
    int32_t                  *prompt; /* owned                                            */
    uint32_t                  n_prompt;
    struct wgf_sampler_params sp;
    struct wgf_gen_params     gp;       /* gp.stop points at stop_own                       */
    char                     *stop_own[WGF_SERVE_MAX_STOP];
    double                    deadline; /* wgf_llm_now() seconds                           */
    /* mutable */
    int            refs;
    enum job_state state;
    atomic_int     cancel; /* enum job_cancel; also read by the worker without the lock  */
    char          *text;   /* generated text not yet taken by the connection              */
    size_t         text_len, text_cap;
    bool           text_oom;
    uint32_t       n_generated;
    const char    *finish;  /* "stop" or "length" once done                               */
    int            http;    /* 0 ok; else the error status (500 fault, 503 shutdown/busy)  */
    char           errmsg[512];
    pthread_cond_t cv;      /* signalled on new text and on done                           */
    struct serve_job *next; /* queue link                                                  */
};

struct serve_engine {
    pthread_mutex_t         mu;
    pthread_cond_t          work_cv; /* the worker waits for jobs here                      */
    pthread_cond_t          idle_cv; /* stop() waits for the queue to drain                 */
    pthread_t               thread;
    bool                    started;
    bool                    stopping;  /* no new jobs                                      */
    bool                    quit;      /* the worker exits once idle                       */
    struct serve_job       *head, *tail;
    struct serve_job       *running;   /* the job on the worker, NULL when idle            */
    uint32_t                n_held;    /* queued + running                                 */
    uint32_t                capacity;  /* `parallel`                                      */
    struct wgf_llm_backend *backend;
    const struct wgf_tokenizer *tok;
    bool                    healthy;
    char                    unhealthy[512];
    struct wgf_serve_stats  stats;
    void (*log)(void *user, const char *line);
    void *log_user;
};

/* init: the mutex and conditions (before anything can fail); start: the worker thread. */
void serve_engine_init(struct serve_engine *en);
int  serve_engine_start(struct serve_engine *en, struct wgf_err *err);
/* Submit a job (the engine takes one reference). -1 with *e set when full (503), stopping
 * (503) or unhealthy (503 with the reason). */
int  serve_engine_submit(struct serve_engine *en, struct serve_job *job, struct serve_error *e);
/* Ask a job to stop: a queued job leaves the queue (done, http 0, nothing generated); a
 * running one stops at its next token. */
void serve_engine_cancel(struct serve_engine *en, struct serve_job *job, enum job_cancel why);
/* Drop one reference (frees at zero). */
void serve_engine_release(struct serve_engine *en, struct serve_job *job);
struct serve_job *serve_job_new(void);
/* Wait up to grace_s for the held jobs to finish, then cancel the rest and join the worker. */
void serve_engine_stop(struct serve_engine *en, double grace_s);
void serve_engine_free(struct serve_engine *en);
void serve_log(void (*log)(void *, const char *), void *user, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- prompts (serve_prompt.c) --------------------------------------------------------------- */

struct serve_prompt_cfg {
    const struct wgf_tokenizer *tok;
    const struct wgf_chat      *chat;         /* NULL: no template                        */
    uint32_t                    n_vocab;      /* the model's                              */
    uint32_t                    max_prompt;   /* longer -> 422                            */
};
/* The prompt ids of a chat or completion request (malloc'd into *ids). -1 with *e set:
 * 400 for a request that cannot be rendered, 422 when longer than max_prompt. */
int serve_prompt_ids(const struct serve_prompt_cfg *c, const struct serve_request *r, int32_t **ids, uint32_t *n,
                     struct serve_error *e);

#endif
