/* wgfuse — the generation loop: prompt -> prefill -> sample/decode until a stop.
 *
 * Text path: each sampled id goes through the tokenizer's streaming detokenizer (complete
 * UTF-8 only), then into `pending`, the text not yet handed to on_text. A stop string is
 * searched in `pending`; the longest tail of `pending` that could still grow into a stop
 * string is held back, everything before it is emitted. So a stop string never reaches
 * the caller, and text before it always does.
 *
 * Timing (wgf_gen_stats): prefill = the prompt forward(s); time to first token = start
 * to the first sampled id (prefill + one sampling); decode = first sampled id to the last
 * sampled id, i.e. n_generated-1 steps of (forward + sample). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wgfuse/llm_run.h"
#include "wgfuse/tokenizer.h"

#define GEN_LOGITS_CHUNK 64u /* prompt rows per forward when every row's logits are kept */

double wgf_llm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct wgf_gen_params wgf_gen_params_default(void)
{
    struct wgf_gen_params p;
    memset(&p, 0, sizeof p);
    p.max_tokens = 128;
    for (int i = 0; i < WGF_GEN_MAX_EOS; i++) p.eos_ids[i] = -1;
    return p;
}

/* ---- pending text and stop strings ------------------------------------------------------ */

struct textbuf {
    char  *s;
    size_t len, cap;
};

static bool textbuf_add(struct textbuf *t, const char *s, size_t n)
{
    if (n == 0) return true;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1) cap *= 2;
        char *p = realloc(t->s, cap);
        if (!p) return false;
        t->s   = p;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = 0;
    return true;
}

static const char *find_bytes(const char *hay, size_t hn, const char *needle, size_t nn)
{
    if (nn == 0 || nn > hn) return NULL;
    for (size_t i = 0; i + nn <= hn; i++)
        if (hay[i] == needle[0] && memcmp(hay + i, needle, nn) == 0) return hay + i;
    return NULL;
}

/* Bytes at the end of s[0..n) that are a proper prefix of some stop string. */
static size_t stop_holdback(const char *s, size_t n, const char *const *stop)
{
    size_t hold = 0;
    for (int k = 0; k < WGF_GEN_MAX_STOP && stop[k]; k++) {
        size_t sl = strlen(stop[k]);
        for (size_t m = sl > 1 ? sl - 1 : 0; m > hold; m--)
            if (m <= n && memcmp(s + n - m, stop[k], m) == 0) {
                hold = m;
                break;
            }
    }
    /* never split a UTF-8 character: move the cut back to a lead byte */
    while (hold < n && ((unsigned char)s[n - hold] & 0xC0) == 0x80) hold++;
    return hold;
}

struct gen {
    const struct wgf_gen_params    *p;
    const struct wgf_gen_callbacks *cb;
    struct textbuf                  pending;
    bool                            stopped_by_string;
    bool                            stopped_by_callback;
};

/* Emit what can be emitted from `pending`; `final` flushes the held tail too. */
static void emit_text(struct gen *g, bool final)
{
    struct textbuf *t   = &g->pending;
    size_t          cut = t->len, keep_from = t->len;
    for (int k = 0; k < WGF_GEN_MAX_STOP && g->p->stop[k]; k++) {
        const char *hit = find_bytes(t->s, t->len, g->p->stop[k], strlen(g->p->stop[k]));
        if (hit && (size_t)(hit - t->s) < cut) {
            cut                  = (size_t)(hit - t->s);
            g->stopped_by_string = true;
        }
    }
    if (!g->stopped_by_string && !final) cut = keep_from = t->len - stop_holdback(t->s, t->len, g->p->stop);
    if (g->stopped_by_string) keep_from = t->len; /* the match and anything after it are dropped */
    if (cut > 0 && g->cb && g->cb->on_text && g->cb->on_text(g->cb->user, t->s, cut)) g->stopped_by_callback = true;
    if (!t->s) return; /* nothing was ever added */
    memmove(t->s, t->s + keep_from, t->len - keep_from);
    t->len -= keep_from;
    t->s[t->len] = 0;
}

/* The tail: bytes of an unfinished character and text held for a possible stop string. */
static enum wgf_status flush_tail(struct gen *g, struct wgf_detok *dt, struct wgf_err *err)
{
    if (!dt || g->stopped_by_string || g->stopped_by_callback) return WGF_OK;
    const char     *txt;
    size_t          tl;
    enum wgf_status st = wgf_detok_flush(dt, &txt, &tl, err);
    if (st) return st;
    if (!textbuf_add(&g->pending, txt, tl)) return wgf_fail(err, WGF_ERR_NOMEM, "generated text buffer");
    emit_text(g, true);
    return WGF_OK;
}

static bool is_eos(const struct wgf_gen_params *p, const struct wgf_tokenizer *tok, int32_t id)
{
    for (int i = 0; i < WGF_GEN_MAX_EOS; i++)
        if (p->eos_ids[i] >= 0 && p->eos_ids[i] == id) return true;
    return tok && wgf_tokenizer_is_eog(tok, id);
}

/* ---- non-finite logits ------------------------------------------------------------------- */

/* A forward that produced NaN or an infinity (NaN/Inf weights, an overflow) gives nothing a
 * sampler or a .npy reader can use: NaN/Inf weights once wrote an all-NaN --logits-out and
 * exited 0. Checked on every row the host sees, before any callback gets it. */
static enum wgf_status check_logits(const float *l, uint32_t n_rows, uint32_t V, uint32_t pos0, struct wgf_err *err)
{
    for (uint32_t r = 0; r < n_rows; r++) {
        const float *row = l + (size_t)r * V;
        uint32_t     bad = 0, nan = 0;
        for (uint32_t i = 0; i < V; i++) {
            bad += isfinite(row[i]) ? 0u : 1u;
            nan += isnan(row[i]) ? 1u : 0u;
        }
        if (bad)
            return wgf_fail(err, WGF_ERR_FORMAT,
                            "logits at position %u: %u of %u are not finite (%u NaN, %u infinite): the weights hold "
                            "NaN/Inf or the forward overflowed; no token or logits are produced from them",
                            pos0 + r, bad, V, nan, bad - nan);
    }
    return WGF_OK;
}

/* ---- the loop ---------------------------------------------------------------------------- */

/* What happens to every sampled id, whichever side sampled it. */
struct deliver {
    struct gen                     *g;
    const struct wgf_gen_params    *p;
    const struct wgf_gen_callbacks *cb;
    const struct wgf_tokenizer     *tok;
    struct wgf_detok               *dt;
    struct wgf_gen_stats           *stats;
    int32_t                        *hist;
    uint32_t                        pos;     /* position of the next id               */
    double                          t0, t_first, t_last;
    enum wgf_status                 st;
    struct wgf_err                 *err;
};

/* 0: continue; 1: stop (stats->stop_reason set, or st set on failure) */
static int deliver_id(void *user, int32_t id)
{
    struct deliver *d = user;
    d->t_last         = wgf_llm_now();
    if (d->stats->n_generated == 0) {
        d->t_first       = d->t_last;
        d->stats->ttft_s = d->t_last - d->t0;
    }
    d->stats->n_generated++;
    d->hist[d->pos++] = id; /* pos <= n_ctx: the callers never go past it */
    /* on_token asking to stop means "stop after this token": the id is counted, so its text
     * still goes out below (a Ctrl-C used to drop the last counted token's text) */
    bool stop_after = d->cb && d->cb->on_token && d->cb->on_token(d->cb->user, id);
    if (!d->p->ignore_eos && is_eos(d->p, d->tok, id)) {
        d->stats->stop_reason = stop_after ? "callback" : "eos";
        return 1;
    }
    /* ids past the tokenizer's vocabulary (padding rows, as in Qwen2.5's 151936 vs
     * 151665) have no text */
    if (d->dt && (size_t)id < wgf_tokenizer_vocab_size(d->tok)) {
        const char *txt;
        size_t      tl;
        if ((d->st = wgf_detok_push(d->dt, id, &txt, &tl, d->err))) return 1;
        if (!textbuf_add(&d->g->pending, txt, tl)) {
            d->st = wgf_fail(d->err, WGF_ERR_NOMEM, "generated text buffer");
            return 1;
        }
        emit_text(d->g, false);
        if (d->g->stopped_by_string) {
            d->stats->stop_reason = "stop string";
            return 1;
        }
        if (d->g->stopped_by_callback) {
            d->stats->stop_reason = "callback";
            return 1;
        }
    }
    if (stop_after) {
        d->stats->stop_reason = "callback";
        return 1;
    }
    return 0;
}

enum wgf_status wgf_generate(struct wgf_llm_backend *b, const struct wgf_tokenizer *tok, struct wgf_sampler *s,
                             const struct wgf_gen_params *p, const int32_t *prompt, uint32_t n_prompt,
                             const struct wgf_gen_callbacks *cb, struct wgf_gen_stats *stats, struct wgf_err *err)
{
    memset(stats, 0, sizeof *stats);
    const uint32_t V = b->n_vocab, n_ctx = b->n_ctx;
    if (n_prompt == 0) return wgf_fail(err, WGF_ERR_ARG, "empty prompt (no tokens to evaluate)");
    if (n_prompt > n_ctx) return wgf_fail(err, WGF_ERR_CONTEXT, "%u tokens > ctx %u", n_prompt, n_ctx);
    if (s->n_vocab != V)
        return wgf_fail(err, WGF_ERR_ARG, "sampler vocabulary %u != model vocabulary %u", s->n_vocab, V);
    for (uint32_t i = 0; i < n_prompt; i++)
        if (prompt[i] < 0 || (uint32_t)prompt[i] >= V)
            return wgf_fail(err, WGF_ERR_ARG, "prompt token %u: id %d out of range [0, %u)", i, (int)prompt[i], V);

    enum wgf_status   st   = WGF_OK;
    struct gen        g    = {.p = p, .cb = cb};
    struct wgf_detok *dt   = NULL;
    uint32_t          rows = p->all_logits ? (n_prompt < GEN_LOGITS_CHUNK ? n_prompt : GEN_LOGITS_CHUNK) : 1;
    float            *logits = malloc((size_t)rows * V * sizeof *logits);
    int32_t          *hist   = malloc(((size_t)n_ctx + 1) * sizeof *hist); /* prompt + generated */
    /* sampling on the device when the backend offers it and nobody needs the logits here */
    bool on_device = b->decode && !(cb && cb->on_logits) && p->max_tokens > 0;
    if (!logits || !hist) {
        st = wgf_fail(err, WGF_ERR_NOMEM, "generation buffers (%u x %u logits)", rows, V);
        goto done;
    }
    if (tok && (st = wgf_detok_new(tok, 0, &dt, err))) goto done;
    memcpy(hist, prompt, (size_t)n_prompt * sizeof *hist);
    if (b->reset) b->reset(b);

    /* prefill */
    double t0 = wgf_llm_now();
    if (p->all_logits) {
        for (uint32_t done = 0; done < n_prompt; done += rows) {
            uint32_t n = n_prompt - done < rows ? n_prompt - done : rows;
            if ((st = b->forward(b, prompt + done, n, done, logits, true, err))) goto done;
            if ((st = check_logits(logits, n, V, done, err))) goto done;
            if (cb && cb->on_logits && cb->on_logits(cb->user, logits, n, V)) {
                stats->stop_reason = "callback";
                goto done;
            }
            if (done + n == n_prompt && n > 1) memmove(logits, logits + (size_t)(n - 1) * V, (size_t)V * sizeof *logits);
        }
    } else if ((st = b->forward(b, prompt, n_prompt, 0, on_device ? NULL : logits, false, err)) ||
               (!on_device && (st = check_logits(logits, 1, V, n_prompt - 1, err)))) {
        goto done;
    }
    double t1         = wgf_llm_now();
    stats->n_prompt   = n_prompt;
    stats->prefill_s  = t1 - t0;
    stats->stop_reason = "max tokens";

    struct deliver d = {.g = &g, .p = p, .cb = cb, .tok = tok, .dt = dt, .stats = stats, .hist = hist,
                        .pos = n_prompt, .t0 = t0, .t_first = t1, .t_last = t1, .err = err};
    if (on_device) {
        /* ids up to max_tokens; each but the last is evaluated at a position < n_ctx */
        struct wgf_llm_decode_req req = {.sampler = s, .pos = n_prompt, .max_ids = p->max_tokens,
                                         .on_id = deliver_id, .user = &d};
        uint32_t                  n_ids = 0;
        st = b->decode(b, &req, &n_ids, err);
        if (st == WGF_ERR_UNSUPPORTED && n_ids == 0) {
            /* settings the device sampler does not run: the host samples, from the logits */
            st = b->forward(b, prompt + n_prompt - 1, 1, n_prompt - 1, logits, false, err);
            on_device = false;
            if (!st) st = check_logits(logits, 1, V, n_prompt - 1, err);
            if (st) goto done;
        } else {
            if (!st) st = d.st;
            if (st) {
                struct wgf_err scratch = {0};
                flush_tail(&g, dt, &scratch); /* the ids delivered are the output */
                goto done;
            }
            if (!strcmp(stats->stop_reason, "max tokens") && n_ids < p->max_tokens) stats->stop_reason = "context";
        }
    }
    for (uint32_t gen = 0; !on_device && gen < p->max_tokens; gen++) {
        int32_t id;
        if ((st = wgf_sampler_sample(s, logits, hist, d.pos, &id, err))) goto done;
        uint32_t at = d.pos;
        if (deliver_id(&d, id)) {
            if ((st = d.st)) goto done;
            break;
        }
        if (gen + 1 == p->max_tokens) break;
        if (at >= n_ctx) { /* no room in the cache to evaluate this token */
            stats->stop_reason = "context";
            break;
        }
        /* decode: evaluate the sampled token at position `at` */
        if ((st = b->forward(b, &id, 1, at, logits, false, err)) || (st = check_logits(logits, 1, V, at, err))) {
            /* e.g. device lost: the tokens so far are the output, so the text held back
             * for them still goes out; the forward's error is what the caller gets */
            struct wgf_err scratch = {0};
            flush_tail(&g, dt, &scratch);
            goto done;
        }
        if (cb && cb->on_logits && cb->on_logits(cb->user, logits, 1, V)) {
            stats->stop_reason = "callback";
            break;
        }
    }
    /* decoding on the device keeps several submits in flight, so by the first id later steps
     * were recorded and may have run: a window from the first id misses part of their time (on
     * the H200 a 64-token decode read 25% faster than a 512-token one). There the window starts
     * at the end of the prefill, the first id's own sample and read-back included. */
    stats->decode_s = d.t_last - (on_device ? t1 : d.t_first);
    if (stats->n_generated > 1 && stats->decode_s > 0)
        stats->decode_tok_s = (double)(stats->n_generated - 1) / stats->decode_s;
    if (stats->prefill_s > 0) stats->prefill_tok_s = (double)n_prompt / stats->prefill_s;

    if ((st = flush_tail(&g, dt, err))) goto done;
    if (g.stopped_by_string) stats->stop_reason = "stop string";

done:
    wgf_detok_free(dt);
    free(g.pending.s);
    free(logits);
    free(hist);
    return st;
}
