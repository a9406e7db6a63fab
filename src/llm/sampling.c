/* wgfuse — sampling: logits -> one token id.
 *
 * Order (llama.cpp's default chain, minus the filters we do not offer):
 *   repetition penalty -> (temperature 0: argmax) -> top-k -> temperature -> softmax
 *   -> top-p -> one uniform draw from the seeded stream.
 * Determinism: candidates are ordered by (logit desc, id asc), so ties never depend on the
 * sort implementation; the softmax and the cumulative sums run in double in that fixed
 * order; one RNG draw per sampled token. The same seed and logits give the same token on
 * every run (across hosts only libm's exp could move a last bit). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"
#include "wgfuse/llm_run.h"

struct cand {
    float    l;
    uint32_t id;
};

struct wgf_sampler_params wgf_sampler_params_default(void)
{
    struct wgf_sampler_params p = {
        .temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .repeat_penalty = 1.0f,
        .repeat_last_n = 64, .seed = 0,
    };
    return p;
}

enum wgf_status wgf_sampler_init(struct wgf_sampler *s, const struct wgf_sampler_params *p,
                                 uint32_t n_vocab, struct wgf_err *err)
{
    memset(s, 0, sizeof *s);
    if (!p || n_vocab == 0) return wgf_fail(err, WGF_ERR_ARG, "sampler: no parameters or empty vocabulary");
    if (!isfinite(p->temperature) || p->temperature < 0)
        return wgf_fail(err, WGF_ERR_ARG, "sampler: temperature %g must be a finite number >= 0", (double)p->temperature);
    if (!isfinite(p->top_p) || p->top_p <= 0 || p->top_p > 1)
        return wgf_fail(err, WGF_ERR_ARG, "sampler: top_p %g must be in (0, 1]", (double)p->top_p);
    if (!isfinite(p->repeat_penalty) || p->repeat_penalty <= 0)
        return wgf_fail(err, WGF_ERR_ARG, "sampler: repeat_penalty %g must be a finite number > 0",
                        (double)p->repeat_penalty);
    s->p       = *p;
    s->n_vocab = n_vocab;
    s->seen    = malloc((size_t)n_vocab);
    s->cand    = malloc((size_t)n_vocab * sizeof(struct cand));
    s->pr      = malloc((size_t)n_vocab * sizeof *s->pr);
    if (!s->seen || !s->cand || !s->pr) {
        wgf_sampler_free(s);
        return wgf_fail(err, WGF_ERR_NOMEM, "sampler: %u-entry candidate arrays", n_vocab);
    }
    struct wgf_rng r;
    wgf_rng_seed(&r, p->seed);
    memcpy(s->rng, r.s, sizeof s->rng);
    return WGF_OK;
}

void wgf_sampler_free(struct wgf_sampler *s)
{
    if (!s) return;
    free(s->seen);
    free(s->cand);
    free(s->pr);
    s->seen = NULL;
    s->cand = NULL;
    s->pr   = NULL;
}

/* -inf for NaN/inf: a broken row must not win argmax or poison the softmax. */
static float clean(float x) { return isfinite(x) ? x : -INFINITY; }

/* (logit desc, id asc): a total order, so qsort's instability cannot show. */
static int cand_cmp(float la, uint32_t ia, float lb, uint32_t ib)
{
    if (la > lb) return -1;
    if (la < lb) return 1;
    return ia < ib ? -1 : ia > ib;
}

static int cand_qsort(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    return cand_cmp(x->l, x->id, y->l, y->id);
}

/* Keep the k best of c[0..n) in c[0..k), sorted. A bounded min-heap keeps this O(n log k):
 * top-k 40 over a 152k vocabulary is the common case. */
static void select_top(struct cand *c, uint32_t n, uint32_t k)
{
    if (k >= n) {
        qsort(c, n, sizeof *c, cand_qsort);
        return;
    }
    /* heap of the k best so far, worst at the root (heap order = reversed cand order) */
    for (uint32_t i = 0; i < n; i++) {
        struct cand x = c[i];
        uint32_t    size = i < k ? i : k;
        if (i >= k) {
            if (cand_cmp(x.l, x.id, c[0].l, c[0].id) >= 0) continue; /* not better than worst */
            /* replace root, sift down */
            uint32_t j = 0;
            for (;;) {
                uint32_t a = 2 * j + 1, b = a + 1, w = j;
                struct cand wv = x;
                if (a < k && cand_cmp(c[a].l, c[a].id, wv.l, wv.id) > 0) w = a, wv = c[a];
                if (b < k && cand_cmp(c[b].l, c[b].id, wv.l, wv.id) > 0) w = b, wv = c[b];
                if (w == j) break;
                c[j] = c[w];
                j    = w;
            }
            c[j] = x;
        } else {
            /* insert at `size`, sift up */
            uint32_t j = size;
            while (j > 0) {
                uint32_t par = (j - 1) / 2;
                if (cand_cmp(c[par].l, c[par].id, x.l, x.id) >= 0) break; /* parent worse: ok */
                c[j] = c[par];
                j    = par;
            }
            c[j] = x;
        }
    }
    qsort(c, k, sizeof *c, cand_qsort);
}

enum wgf_status wgf_sampler_sample(struct wgf_sampler *s, float *logits, const int32_t *history,
                                   size_t n_history, int32_t *out, struct wgf_err *err)
{
    const uint32_t V = s->n_vocab;
    *out             = -1;

    /* repetition penalty over the last repeat_last_n distinct tokens: each token once,
     * however often it occurs (llama.cpp's rule). s->prob marks visited ids. */
    if (s->p.repeat_penalty != 1.0f && s->p.repeat_last_n > 0 && history && n_history > 0) {
        size_t from = n_history > s->p.repeat_last_n ? n_history - s->p.repeat_last_n : 0;
        memset(s->seen, 0, V);
        for (size_t i = from; i < n_history; i++) {
            int32_t t = history[i];
            if (t < 0 || (uint32_t)t >= V || s->seen[t]) continue;
            s->seen[t] = 1;
            float l    = logits[t];
            logits[t]  = l > 0 ? l / s->p.repeat_penalty : l * s->p.repeat_penalty;
        }
    }

    /* greedy */
    if (s->p.temperature == 0) {
        int32_t best = -1;
        float   bl   = -INFINITY;
        for (uint32_t i = 0; i < V; i++) {
            float l = clean(logits[i]);
            if (l > bl) bl = l, best = (int32_t)i;
        }
        if (best < 0) return wgf_fail(err, WGF_ERR_FORMAT, "sampler: every logit is -inf or NaN");
        *out = best;
        return WGF_OK;
    }

    struct cand *c = s->cand;
    uint32_t     n = 0;
    for (uint32_t i = 0; i < V; i++) {
        float l = clean(logits[i]);
        if (l == -INFINITY) continue;
        c[n].l    = l;
        c[n++].id = i;
    }
    if (n == 0) return wgf_fail(err, WGF_ERR_FORMAT, "sampler: every logit is -inf or NaN");
    uint32_t k = s->p.top_k && s->p.top_k < n ? s->p.top_k : n;
    select_top(c, n, k);
    n = k;

    /* softmax at temperature T, in double, from the max (c[0]) down */
    double inv_t = 1.0 / (double)s->p.temperature, sum = 0;
    double *pr   = s->pr;
    for (uint32_t i = 0; i < n; i++) sum += pr[i] = exp(((double)c[i].l - (double)c[0].l) * inv_t);

    /* top-p: the shortest prefix whose mass reaches top_p (at least one token); if
     * rounding leaves the total just short of the target, everything stays */
    if (s->p.top_p < 1.0f) {
        double target = (double)s->p.top_p * sum, acc = 0;
        for (uint32_t i = 0; i < n; i++) {
            acc += pr[i];
            if (acc >= target) {
                n   = i + 1;
                sum = acc;
                break;
            }
        }
    }

    /* one draw */
    struct wgf_rng r;
    memcpy(r.s, s->rng, sizeof r.s);
    double u = wgf_rng_f64(&r) * sum, acc = 0;
    memcpy(s->rng, r.s, sizeof r.s);
    int32_t pick = (int32_t)c[n - 1].id; /* if rounding leaves u past the end */
    for (uint32_t i = 0; i < n; i++) {
        acc += pr[i];
        if (u < acc) {
            pick = (int32_t)c[i].id;
            break;
        }
    }
    *out = pick;
    return WGF_OK;
}
