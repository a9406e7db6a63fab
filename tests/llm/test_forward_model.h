/* Test helpers for the reference forward: a tiny random model built in memory (no files)
 * and an independent naive f64 forward that recomputes every position from scratch
 * (no KV cache, no threads, no micro-batches, its own RoPE frequencies).
 * Header-only (static functions) so each test binary stays one .c file. */
#ifndef WGF_TEST_FORWARD_MODEL_H
#define WGF_TEST_FORWARD_MODEL_H
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/llm.h"

struct tm_dims {
    enum wgf_arch arch;
    int           dim, hidden, layers, heads, kv_heads, head_dim, vocab, max_seq;
    bool          bias, tied;
    enum wgf_dtype dtype; /* matrices: f32, f16 or bf16 */
    enum wgf_rope_scaling_type scaling;
    float         theta;
    int           window, swa_first; /* sliding window (0: none) from layer swa_first on */
};

/* The model plus every buffer it points at (freed by tm_free). Weights are kept decoded
 * (f64-exact copies of the stored values) for the naive reference. */
struct tm {
    struct wgf_llm_model m;
    int                  n_bufs;
    void                *bufs[256];
    float               *dec[256]; /* decoded matrix values, parallel to the tensors below */
};

static void *tm_alloc(struct tm *t, size_t n)
{
    void *p = calloc(1, n ? n : 1);
    WGF_ASSERT(p && t->n_bufs < 256);
    t->bufs[t->n_bufs++] = p;
    return p;
}

/* A random matrix stored as `dt`; values ~ U(-a, a). */
static void tm_mat(struct tm *t, struct wgf_rng *r, struct wgf_tensor *w, const char *name, int rows, int cols,
                   enum wgf_dtype dt, float a)
{
    size_t n  = (size_t)rows * cols;
    float *f  = malloc(n * sizeof *f);
    WGF_ASSERT(f);
    for (size_t i = 0; i < n; i++) f[i] = wgf_rng_uniform(r, -a, a);
    memset(w, 0, sizeof *w);
    w->dtype    = dt;
    w->n_dims   = 2;
    w->shape[0] = rows;
    w->shape[1] = cols;
    snprintf(w->name, sizeof w->name, "%s", name);
    if (dt == WGF_DT_F32) {
        float *d = tm_alloc(t, n * 4);
        memcpy(d, f, n * 4);
        w->data   = d;
        w->nbytes = n * 4;
    } else {
        uint16_t *d = tm_alloc(t, n * 2);
        for (size_t i = 0; i < n; i++) d[i] = dt == WGF_DT_F16 ? wgf_f32_to_f16(f[i]) : wgf_f32_to_bf16(f[i]);
        w->data   = d;
        w->nbytes = n * 2;
    }
    free(f);
}

static void tm_vec(struct tm *t, struct wgf_rng *r, struct wgf_tensor *w, const char *name, int n, float lo, float hi)
{
    float *d = tm_alloc(t, (size_t)n * 4);
    for (int i = 0; i < n; i++) d[i] = wgf_rng_uniform(r, lo, hi);
    memset(w, 0, sizeof *w);
    w->dtype    = WGF_DT_F32;
    w->n_dims   = 1;
    w->shape[0] = n;
    w->data     = d;
    w->nbytes   = (uint64_t)n * 4;
    snprintf(w->name, sizeof w->name, "%s", name);
}

static inline struct tm *tm_build(const struct tm_dims *d, uint64_t seed)
{
    struct tm *t = calloc(1, sizeof *t);
    WGF_ASSERT(t);
    struct wgf_rng r;
    wgf_rng_seed(&r, seed);
    struct wgf_llm_config *c = &t->m.cfg;
    c->arch                  = d->arch;
    c->dim                   = d->dim;
    c->hidden_dim            = d->hidden;
    c->n_layers              = d->layers;
    c->n_heads               = d->heads;
    c->n_kv_heads            = d->kv_heads;
    c->head_dim              = d->head_dim;
    c->rope_dim              = d->head_dim;
    c->vocab_size            = d->vocab;
    c->max_seq_len           = d->max_seq;
    c->sliding_window        = d->window;
    c->swa_first_layer       = d->swa_first;
    c->norm_eps              = 1e-5f;
    c->rope_theta            = d->theta > 0 ? d->theta : 10000.0f;
    c->tie_embeddings        = d->tied;
    c->attn_bias             = d->bias;
    c->bos_id                = 1;
    c->n_eos                 = 1;
    c->eos_ids[0]            = 2;
    c->rope_scaling.type     = d->scaling;
    if (d->scaling == WGF_ROPE_SCALING_LONGROPE) {
        /* Phi-3 style: per-frequency short/long divisors, long ones once the sequence is
         * longer than original_max_pos; cos/sin scaled by HF's attention factor */
        struct wgf_rope_scaling *rs = &c->rope_scaling;
        rs->original_max_pos        = 16;
        rs->factor                  = (float)d->max_seq / 16.0f;
        rs->attn_factor             = (float)sqrt(1.0 + log((double)rs->factor) / log(16.0));
        rs->n_factors               = d->head_dim / 2;
        for (int i = 0; i < rs->n_factors; i++) {
            rs->short_factor[i] = wgf_rng_uniform(&r, 1.0f, 1.5f);
            rs->long_factor[i]  = wgf_rng_uniform(&r, 1.0f, 8.0f);
        }
    }
    if (d->scaling == WGF_ROPE_SCALING_LLAMA3) {
        /* small original context so all three frequency bands (kept, smoothed, divided)
         * occur at head_dim 16 */
        c->rope_scaling.factor           = 8.0f;
        c->rope_scaling.low_freq_factor  = 1.0f;
        c->rope_scaling.high_freq_factor = 4.0f;
        c->rope_scaling.original_max_pos = 64;
    }
    snprintf(c->source_dtype, sizeof c->source_dtype, "%s", wgf_dtype_str(d->dtype));
    int qd = d->heads * d->head_dim, kvd = d->kv_heads * d->head_dim;
    /* scales keep activations O(1) through a few layers so differences stay meaningful */
    float sd = 1.0f / sqrtf((float)d->dim), sh = 1.0f / sqrtf((float)d->hidden), sq = 1.0f / sqrtf((float)qd);
    struct wgf_llm_weights *W = &t->m.weights;
    tm_mat(t, &r, &W->tok_embd, "tok_embd", d->vocab, d->dim, d->dtype, 1.0f);
    tm_vec(t, &r, &W->out_norm, "out_norm", d->dim, 0.5f, 1.5f);
    if (d->tied) W->lm_head = W->tok_embd;
    else tm_mat(t, &r, &W->lm_head, "lm_head", d->vocab, d->dim, d->dtype, sd);
    W->layers = tm_alloc(t, (size_t)d->layers * sizeof *W->layers);
    for (int l = 0; l < d->layers; l++) {
        struct wgf_layer_weights *L = &W->layers[l];
        tm_vec(t, &r, &L->attn_norm, "attn_norm", d->dim, 0.5f, 1.5f);
        tm_mat(t, &r, &L->wq, "wq", qd, d->dim, d->dtype, 2 * sd);
        tm_mat(t, &r, &L->wk, "wk", kvd, d->dim, d->dtype, 2 * sd);
        tm_mat(t, &r, &L->wv, "wv", kvd, d->dim, d->dtype, sd);
        if (d->bias) {
            tm_vec(t, &r, &L->bq, "bq", qd, -0.5f, 0.5f);
            tm_vec(t, &r, &L->bk, "bk", kvd, -0.5f, 0.5f);
            tm_vec(t, &r, &L->bv, "bv", kvd, -0.5f, 0.5f);
        }
        tm_mat(t, &r, &L->wo, "wo", d->dim, qd, d->dtype, sq);
        tm_vec(t, &r, &L->ffn_norm, "ffn_norm", d->dim, 0.5f, 1.5f);
        tm_mat(t, &r, &L->w_gate, "w_gate", d->hidden, d->dim, d->dtype, 2 * sd);
        tm_mat(t, &r, &L->w_up, "w_up", d->hidden, d->dim, d->dtype, 2 * sd);
        tm_mat(t, &r, &L->w_down, "w_down", d->dim, d->hidden, d->dtype, sh);
    }
    return t;
}

static inline void tm_free(struct tm *t)
{
    if (!t) return;
    for (int i = 0; i < t->n_bufs; i++) free(t->bufs[i]);
    free(t);
}

/* ---- naive f64 reference ------------------------------------------------------------- */

static double tm_w(const struct wgf_tensor *w, int64_t i) { return (double)wgf_tensor_get_f32(w, i); }

/* y (rows) = W (rows, cols) . x (cols) [+ b] */
static void nv_matvec(double *y, const struct wgf_tensor *w, const double *x, const struct wgf_tensor *b)
{
    int64_t rows = w->shape[0], cols = w->shape[1];
    for (int64_t i = 0; i < rows; i++) {
        double s = b && b->data ? tm_w(b, i) : 0;
        for (int64_t j = 0; j < cols; j++) s += tm_w(w, i * cols + j) * x[j];
        y[i] = s;
    }
}

static void nv_rmsnorm(double *o, const double *x, const struct wgf_tensor *w, int n, double eps)
{
    double ss = 0;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    double inv = 1.0 / sqrt(ss / n + eps);
    for (int i = 0; i < n; i++) o[i] = x[i] * inv * tm_w(w, i);
}

/* HF's default, Llama-3.1 and Phi-3 longrope inverse frequencies, written from the HF
 * formulas; *scale is longrope's cos/sin factor (1 otherwise). seq_len picks longrope's
 * short or long factors, as HF does per forward call. */
static void nv_inv_freq(const struct wgf_llm_config *c, int seq_len, double *f, double *scale)
{
    int half = c->rope_dim / 2;
    *scale   = 1;
    for (int i = 0; i < half; i++) f[i] = 1.0 / pow((double)c->rope_theta, (2.0 * i) / c->rope_dim);
    if (c->rope_scaling.type == WGF_ROPE_SCALING_LONGROPE) {
        const struct wgf_rope_scaling *s = &c->rope_scaling;
        for (int i = 0; i < half; i++) f[i] /= seq_len > s->original_max_pos ? s->long_factor[i] : s->short_factor[i];
        *scale = s->factor > 1 ? sqrt(1 + log(s->factor) / log((double)s->original_max_pos)) : 1;
    }
    if (c->rope_scaling.type == WGF_ROPE_SCALING_LLAMA3) {
        const struct wgf_rope_scaling *s = &c->rope_scaling;
        double lo_wl = s->original_max_pos / s->low_freq_factor, hi_wl = s->original_max_pos / s->high_freq_factor;
        for (int i = 0; i < half; i++) {
            double wl = 2 * M_PI / f[i];
            if (wl < hi_wl) continue;
            if (wl > lo_wl) {
                f[i] /= s->factor;
                continue;
            }
            double sm = (s->original_max_pos / wl - s->low_freq_factor) / (s->high_freq_factor - s->low_freq_factor);
            f[i]      = (1 - sm) * f[i] / s->factor + sm * f[i];
        }
    }
}

static void nv_rope(double *v, int heads, int hd, const double *f, double scale, int pos)
{
    int half = hd / 2;
    for (int h = 0; h < heads; h++)
        for (int i = 0; i < half; i++) {
            double a = pos * f[i], c = cos(a) * scale, s = sin(a) * scale;
            double x0 = v[h * hd + i], x1 = v[h * hd + i + half];
            v[h * hd + i]        = x0 * c - x1 * s;
            v[h * hd + i + half] = x0 * s + x1 * c;
        }
}

/* logits (n, vocab) for tokens[0..n) at positions 0..n-1, each position recomputed from
 * scratch: K/V of all earlier positions are rebuilt per query position. O(n^2) on purpose. */
static inline void nv_forward(const struct wgf_llm_model *m, const int32_t *tokens, int n, double *logits)
{
    const struct wgf_llm_config  *c = &m->cfg;
    const struct wgf_llm_weights *W = &m->weights;
    int D = c->dim, H = c->hidden_dim, hd = c->head_dim, qd = c->n_heads * hd, kvd = c->n_kv_heads * hd;
    double *x  = calloc((size_t)n * D, sizeof *x); /* hidden state of every position */
    double *xb = calloc(D, sizeof *xb), *q = calloc(qd, sizeof *q), *att = calloc(qd, sizeof *att);
    double *K = calloc((size_t)n * kvd, sizeof *K), *Vv = calloc((size_t)n * kvd, sizeof *Vv);
    double *g = calloc(H, sizeof *g), *u = calloc(H, sizeof *u), *o = calloc(D, sizeof *o);
    double *sc = calloc(n, sizeof *sc), f[WGF_ROPE_MAX_HALF], rs;
    WGF_ASSERT(x && xb && q && att && K && Vv && g && u && o && sc);
    nv_inv_freq(c, n, f, &rs);
    for (int t = 0; t < n; t++)
        for (int i = 0; i < D; i++) x[(size_t)t * D + i] = tm_w(&W->tok_embd, (int64_t)tokens[t] * D + i);
    for (int l = 0; l < c->n_layers; l++) {
        const struct wgf_layer_weights *L = &W->layers[l];
        /* K, V of every position from the layer input */
        for (int t = 0; t < n; t++) {
            nv_rmsnorm(xb, x + (size_t)t * D, &L->attn_norm, D, c->norm_eps);
            nv_matvec(K + (size_t)t * kvd, &L->wk, xb, &L->bk);
            nv_matvec(Vv + (size_t)t * kvd, &L->wv, xb, &L->bv);
            nv_rope(K + (size_t)t * kvd, c->n_kv_heads, hd, f, rs, t);
        }
        double *xn = calloc((size_t)n * D, sizeof *xn);
        WGF_ASSERT(xn);
        for (int t = 0; t < n; t++) {
            double *xt = x + (size_t)t * D;
            nv_rmsnorm(xb, xt, &L->attn_norm, D, c->norm_eps);
            nv_matvec(q, &L->wq, xb, &L->bq);
            nv_rope(q, c->n_heads, hd, f, rs, t);
            /* a sliding window keeps the last `win` positions, t included (transformers:
             * key p is masked when t - p >= sliding_window) */
            int win = c->sliding_window > 0 && l >= c->swa_first_layer ? c->sliding_window : 0;
            int p0  = win && t - win + 1 > 0 ? t - win + 1 : 0;
            for (int h = 0; h < c->n_heads; h++) {
                int    kh = h / (c->n_heads / c->n_kv_heads);
                double mx = -INFINITY, sum = 0;
                for (int p = p0; p <= t; p++) {
                    double s = 0;
                    for (int i = 0; i < hd; i++) s += q[h * hd + i] * K[(size_t)p * kvd + kh * hd + i];
                    sc[p] = s / sqrt((double)hd);
                    if (sc[p] > mx) mx = sc[p];
                }
                for (int p = p0; p <= t; p++) sum += sc[p] = exp(sc[p] - mx);
                for (int i = 0; i < hd; i++) {
                    double a = 0;
                    for (int p = p0; p <= t; p++) a += sc[p] / sum * Vv[(size_t)p * kvd + kh * hd + i];
                    att[h * hd + i] = a;
                }
            }
            nv_matvec(o, &L->wo, att, NULL);
            double *xo = xn + (size_t)t * D;
            for (int i = 0; i < D; i++) xo[i] = xt[i] + o[i];
            nv_rmsnorm(xb, xo, &L->ffn_norm, D, c->norm_eps);
            nv_matvec(g, &L->w_gate, xb, NULL);
            nv_matvec(u, &L->w_up, xb, NULL);
            for (int i = 0; i < H; i++) g[i] = g[i] / (1 + exp(-g[i])) * u[i];
            nv_matvec(o, &L->w_down, g, NULL);
            for (int i = 0; i < D; i++) xo[i] += o[i];
        }
        memcpy(x, xn, (size_t)n * D * sizeof *x);
        free(xn);
    }
    for (int t = 0; t < n; t++) {
        nv_rmsnorm(xb, x + (size_t)t * D, &W->out_norm, D, c->norm_eps);
        nv_matvec(logits + (size_t)t * c->vocab_size, &W->lm_head, xb, NULL);
    }
    free(x), free(xb), free(q), free(att), free(K), free(Vv), free(g), free(u), free(o), free(sc);
}

/* max |a-b| / max|b| over n: one scale for the whole logits matrix */
static inline double tm_rel_max(const float *a, const double *b, size_t n)
{
    double m = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (d != d) return INFINITY;
        if (d > m) m = d;
        if (fabs(b[i]) > s) s = fabs(b[i]);
    }
    return s > 0 ? m / s : m;
}

/* n token ids drawn from [0, vocab) with a seed */
static inline void tm_tokens(int32_t *t, int n, int vocab, uint64_t seed)
{
    struct wgf_rng r;
    wgf_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) t[i] = (int32_t)wgf_rng_below(&r, (uint32_t)vocab);
}

/* max |a - b| / max |b| over n floats (a NaN difference: infinity) */
static inline double tm_rel_max_f(const float *a, const float *b, size_t n)
{
    double scale = 0;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs((double)b[i]));
    double d = wgf_t_max_abs_diff(a, b, n);
    return scale > 0 ? d / scale : d;
}

#endif
