/* wgfuse serve — the engine: a FIFO of generation jobs and the one worker thread that owns
 * the backend (batch-1: one generation at a time, in arrival order).
 *
 * A job is shared by the connection thread that submitted it and the worker; both hold a
 * reference, and the last release frees it. The worker streams text into the job under the
 * engine's mutex and signals the job's condition; the connection thread takes it from there.
 * Cancelling (disconnect, deadline, shutdown) sets job->cancel: a queued job leaves the queue
 * at once, a running one stops when its next token arrives (wgf_generate's on_token). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/serve_internal.h"
#include "wgfuse/tokenizer.h"

void serve_log(void (*log)(void *, const char *), void *user, const char *fmt, ...)
{
    if (!log) return;
    char    line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    log(user, line);
}

struct serve_job *serve_job_new(void)
{
    struct serve_job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&j->cv, &ca);
    pthread_condattr_destroy(&ca);
    j->refs = 1;
    atomic_init(&j->cancel, CANCEL_NONE);
    return j;
}

static void job_free(struct serve_job *j)
{
    pthread_cond_destroy(&j->cv);
    free(j->prompt);
    free(j->text);
    for (unsigned i = 0; i < WGF_SERVE_MAX_STOP; i++) free(j->stop_own[i]);
    free(j);
}

void serve_engine_release(struct serve_engine *en, struct serve_job *job)
{
    if (!job) return;
    pthread_mutex_lock(&en->mu);
    bool last = --job->refs == 0;
    pthread_mutex_unlock(&en->mu);
    if (last) job_free(job);
}

/* With en->mu held: the job is finished (queued or running before). */
static void job_done_locked(struct serve_engine *en, struct serve_job *j)
{
    j->state = JOB_DONE;
    en->n_held--;
    pthread_cond_broadcast(&j->cv);
    pthread_cond_broadcast(&en->idle_cv);
}

/* With en->mu held: take j out of the queue (it must be queued). */
static void unqueue_locked(struct serve_engine *en, struct serve_job *j)
{
    struct serve_job **p = &en->head, *prev = NULL;
    while (*p && *p != j) prev = *p, p = &(*p)->next;
    if (!*p) return;
    *p = j->next;
    if (en->tail == j) en->tail = prev;
    j->next = NULL;
}

int serve_engine_submit(struct serve_engine *en, struct serve_job *job, struct serve_error *e)
{
    pthread_mutex_lock(&en->mu);
    int rc = 0;
    if (!en->healthy) rc = serve_error_set(e, 503, NULL, "the server is unhealthy: %s", en->unhealthy);
    else if (en->stopping) rc = serve_error_set(e, 503, NULL, "the server is shutting down");
    else if (en->n_held >= en->capacity) {
        en->stats.rejected_busy++;
        rc = serve_error_set(e, 503, NULL, "the server is busy: %u requests are already held (--parallel %u); retry later",
                             en->n_held, en->capacity);
    } else {
        job->refs++;
        job->state = JOB_QUEUED;
        job->next  = NULL;
        if (en->tail) en->tail->next = job;
        else en->head = job;
        en->tail = job;
        en->n_held++;
        pthread_cond_signal(&en->work_cv);
    }
    pthread_mutex_unlock(&en->mu);
    return rc;
}

void serve_engine_cancel(struct serve_engine *en, struct serve_job *job, enum job_cancel why)
{
    pthread_mutex_lock(&en->mu);
    int none = CANCEL_NONE;
    atomic_compare_exchange_strong(&job->cancel, &none, (int)why);
    if (job->state == JOB_QUEUED) {
        unqueue_locked(en, job);
        job_done_locked(en, job);
        job->refs--; /* the queue's reference; the caller still holds its own */
    }
    pthread_mutex_unlock(&en->mu);
}

/* ---- one generation on the worker -------------------------------------------------------------- */

struct run {
    struct serve_engine *en;
    struct serve_job    *job;
};

static int on_token(void *user, int32_t id)
{
    (void)id;
    struct run *r = user;
    if (atomic_load(&r->job->cancel) != CANCEL_NONE) return 1;
    if (wgf_llm_now() > r->job->deadline) {
        int none = CANCEL_NONE;
        atomic_compare_exchange_strong(&r->job->cancel, &none, CANCEL_DEADLINE);
        return 1;
    }
    return 0;
}

static int on_text(void *user, const char *text, size_t len)
{
    struct run       *r = user;
    struct serve_job *j = r->job;
    pthread_mutex_lock(&r->en->mu);
    size_t need;
    if (!wgf_add_size(j->text_len, len + 1, &need)) j->text_oom = true;
    else if (need > j->text_cap) {
        size_t cap = j->text_cap ? j->text_cap : 256;
        while (cap < need) cap *= 2;
        char *p = realloc(j->text, cap);
        if (!p) j->text_oom = true;
        else j->text = p, j->text_cap = cap;
    }
    if (!j->text_oom) {
        memcpy(j->text + j->text_len, text, len);
        j->text_len += len;
        j->text[j->text_len] = 0;
    }
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&r->en->mu);
    return j->text_oom;
}

static void run_job(struct serve_engine *en, struct serve_job *j)
{
    struct wgf_err       err = {0};
    struct wgf_sampler   smp = {0};
    struct wgf_gen_stats stats;
    memset(&stats, 0, sizeof stats);
    struct run               r  = {en, j};
    struct wgf_gen_callbacks cb = {.user = &r, .on_token = on_token, .on_text = on_text};
    enum wgf_status          st = wgf_sampler_init(&smp, &j->sp, en->backend->n_vocab, &err);
    if (!st) st = wgf_generate(en->backend, en->tok, &smp, &j->gp, j->prompt, j->n_prompt, &cb, &stats, &err);
    wgf_sampler_free(&smp);

    pthread_mutex_lock(&en->mu);
    j->n_generated = stats.n_generated;
    int cancel     = atomic_load(&j->cancel);
    const char *why = stats.stop_reason ? stats.stop_reason : "";
    j->finish       = !strcmp(why, "eos") || !strcmp(why, "stop string") ? "stop" : "length";
    if (j->text_oom) {
        j->http = 500;
        snprintf(j->errmsg, sizeof j->errmsg, "out of memory for the generated text");
    } else if (st == WGF_ERR_ARG || st == WGF_ERR_CONTEXT) { /* the request's fault (checked before; kept honest) */
        j->http = st == WGF_ERR_CONTEXT ? 422 : 400;
        snprintf(j->errmsg, sizeof j->errmsg, "%.480s", err.msg);
    } else if (st) {
        /* a fault of the engine (device lost, non-finite logits, ...): nothing after it can
         * be trusted, so the server says it is unhealthy and refuses new work */
        j->http = 500;
        snprintf(j->errmsg, sizeof j->errmsg, "%.30s: %.470s", wgf_status_str(st), err.msg);
        if (en->healthy) {
            en->healthy = false;
            snprintf(en->unhealthy, sizeof en->unhealthy, "%s", j->errmsg);
        }
    }
    en->stats.generations++;
    en->stats.tokens_generated += stats.n_generated;
    if (cancel != CANCEL_NONE) en->stats.cancelled++;
    job_done_locked(en, j);
    pthread_mutex_unlock(&en->mu);
    static const char *const why_cancel[] = {"", ", cancelled: client gone", ", cancelled: deadline", ", cancelled: shutdown"};
    serve_log(en->log, en->log_user, "serve: generation: prompt %u tokens, generated %u, stop: %s%s", j->n_prompt,
              stats.n_generated, st ? "error" : why, cancel > 0 && cancel < 4 ? why_cancel[cancel] : "");
    if (st && j->http == 500)
        serve_log(en->log, en->log_user, "serve: engine fault, the server is now unhealthy: %s", j->errmsg);
}

static void *worker_main(void *arg)
{
    struct serve_engine *en = arg;
    pthread_mutex_lock(&en->mu);
    for (;;) {
        while (!en->head && !en->quit) pthread_cond_wait(&en->work_cv, &en->mu);
        if (!en->head) break; /* quit and nothing left */
        struct serve_job *j = en->head;
        unqueue_locked(en, j);
        if (!en->healthy) { /* queued before the fault */
            j->http = 503;
            snprintf(j->errmsg, sizeof j->errmsg, "the server is unhealthy: %.470s", en->unhealthy);
            job_done_locked(en, j);
        } else {
            j->state    = JOB_RUNNING;
            en->running = j;
            pthread_mutex_unlock(&en->mu);
            run_job(en, j);
            pthread_mutex_lock(&en->mu);
            en->running = NULL;
        }
        if (--j->refs == 0) {
            pthread_mutex_unlock(&en->mu);
            job_free(j);
            pthread_mutex_lock(&en->mu);
        }
    }
    pthread_mutex_unlock(&en->mu);
    return NULL;
}

void serve_engine_init(struct serve_engine *en)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&en->mu, NULL);
    pthread_cond_init(&en->work_cv, NULL);
    pthread_cond_init(&en->idle_cv, &ca);
    pthread_condattr_destroy(&ca);
    en->healthy = true;
}

int serve_engine_start(struct serve_engine *en, struct wgf_err *err)
{
    int rc = pthread_create(&en->thread, NULL, worker_main, en);
    if (rc) return wgf_fail(err, WGF_ERR_INTERNAL, "serve: cannot start the engine thread: %s", strerror(rc));
    en->started = true;
    return 0;
}

void serve_engine_stop(struct serve_engine *en, double grace_s)
{
    if (!en->started) return;
    pthread_mutex_lock(&en->mu);
    en->stopping = true;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    double t = (double)until.tv_sec + (double)until.tv_nsec * 1e-9 + (grace_s > 0 ? grace_s : 0);
    until.tv_sec  = (time_t)t;
    until.tv_nsec = (long)((t - (double)until.tv_sec) * 1e9);
    while (en->n_held > 0 && pthread_cond_timedwait(&en->idle_cv, &en->mu, &until) != ETIMEDOUT) {}
    /* past the grace: waiting requests get 503, the running one stops at its next token */
    while (en->head) {
        struct serve_job *j = en->head;
        unqueue_locked(en, j);
        atomic_store(&j->cancel, CANCEL_SHUTDOWN);
        j->http = 503;
        snprintf(j->errmsg, sizeof j->errmsg, "the server is shutting down");
        job_done_locked(en, j);
        if (--j->refs == 0) job_free(j);
    }
    if (en->running) atomic_store(&en->running->cancel, CANCEL_SHUTDOWN);
    en->quit = true;
    pthread_cond_broadcast(&en->work_cv);
    pthread_mutex_unlock(&en->mu);
    pthread_join(en->thread, NULL);
    en->started = false;
}

void serve_engine_free(struct serve_engine *en)
{
    pthread_cond_destroy(&en->work_cv);
    pthread_cond_destroy(&en->idle_cv);
    pthread_mutex_destroy(&en->mu);
}
