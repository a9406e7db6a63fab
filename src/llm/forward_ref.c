/* wgfuse — the plain-C reference forward (backend "cpu-ref").
 *
 * The oracle for every GPU plan and the CPU fallback when no adapter exists. Decoder-only
 * Llama / Qwen2 / Phi-3 at batch 1, prefill and decode, KV cache in f32.
 *
 * Numerics (what a GPU plan is compared against):
 *   - weights are read in their stored dtype (f32 / f16 / bf16 straight from the file
 *     mapping; anything else through wgf_tensor_row_f32) and converted one row at a time;
 *     no second copy of the model is ever made;
 *   - every dot product accumulates in f32 in 16 lanes (summed in a fixed tree at the
 *     end), RMSNorm and softmax in f32, like HF's f32 path; no FMA contraction in our
 *     code, so only libm's expf/cosf/sinf (which glibc picks per CPU) can move a last bit
 *     between hosts;
 *   - RoPE is rotate-half (HF / NEOX): pair (i, i + rope_dim/2), angle = (float)pos *
 *     inv_freq[i] in f32 then cosf/sinf, as HF computes it in f32.
 *
 * Threading: a small pthread pool splits each matmul over output rows and attention over
 * (token, head). Partitions are static and every output element is computed by exactly
 * one thread in a fixed order, so the logits are bit-identical for any --threads.
 *
 * Prefill runs in micro-batches of REF_UBATCH tokens: each weight row is converted once
 * and applied to every token of the micro-batch. Prefill and token-by-token decode give
 * the same bits (tests/llm/test_forward.c).
 *
 * A probe (wgf_llm_ref_set_probe) sees every role's output, for kernel-by-kernel checks. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "wgfuse/llm.h"
#include "wgfuse/llm_run.h"
#include "llm/model_files.h"

#define REF_UBATCH 32u /* tokens per prefill micro-batch (buffers are sized for this) */
#define REF_MAX_THREADS 256u
/* Below this many multiply-adds a pool wake-up (~10-20 us) costs more than it saves. */
#define REF_PARALLEL_MIN_WORK 65536u

/* ======================================================================================
 * Thread pool: the caller is thread 0; workers 1..n-1 wait for a generation bump.
 * ====================================================================================== */

typedef void (*pool_fn)(void *ctx, uint32_t begin, uint32_t end, uint32_t thread);

struct pool {
    uint32_t        n; /* threads including the caller */
    pthread_t      *th;
    pthread_mutex_t mu;
    pthread_cond_t  go, done;
    uint64_t        gen;
    uint32_t        busy;
    bool            quit;
    pool_fn         fn;
    void           *ctx;
    uint32_t        items;
};

struct pool_worker_arg {
    struct pool *p;
    uint32_t     index;
};

static void pool_range(uint32_t items, uint32_t n, uint32_t i, uint32_t *b, uint32_t *e)
{
    *b = (uint32_t)((uint64_t)items * i / n);
    *e = (uint32_t)((uint64_t)items * (i + 1) / n);
}

static void *pool_worker(void *arg)
{
    struct pool_worker_arg *a = arg;
    struct pool            *p = a->p;
    uint32_t                me = a->index;
    free(a);
    /* generation 0 is "no work yet": every worker is created before the first pool_run, so
     * reading p->gen here instead could miss a run posted before this thread got the lock */
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->quit) pthread_cond_wait(&p->go, &p->mu);
        if (p->quit) break;
        seen         = p->gen;
        pool_fn  fn  = p->fn;
        void    *ctx = p->ctx;
        uint32_t b, e;
        pool_range(p->items, p->n, me, &b, &e);
        pthread_mutex_unlock(&p->mu);
        if (b < e) fn(ctx, b, e, me);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void pool_free(struct pool *p)
{
    if (!p->th) return;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (uint32_t i = 1; i < p->n; i++) pthread_join(p->th[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    free(p->th);
    p->th = NULL;
}

static enum wgf_status pool_init(struct pool *p, uint32_t n, struct wgf_err *err)
{
    memset(p, 0, sizeof *p);
    p->n = n ? n : 1;
    if (p->n == 1) return WGF_OK;
    p->th = calloc(p->n, sizeof *p->th);
    if (!p->th) return wgf_fail(err, WGF_ERR_NOMEM, "cpu-ref: %u thread handles", p->n);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    for (uint32_t i = 1; i < p->n; i++) {
        struct pool_worker_arg *a = malloc(sizeof *a);
        if (a) *a = (struct pool_worker_arg){p, i};
        if (!a || pthread_create(&p->th[i], NULL, pool_worker, a) != 0) {
            free(a);
            p->n = i; /* join only the ones started */
            pool_free(p);
            return wgf_fail(err, WGF_ERR_NOMEM, "cpu-ref: cannot start worker thread %u", i);
        }
    }
    return WGF_OK;
}

/* Run fn over [0, items) split statically over the pool; `work` (multiply-adds) decides
 * whether waking the workers is worth it. Returns when every range is done. */
static void pool_run(struct pool *p, pool_fn fn, void *ctx, uint32_t items, uint64_t work)
{
    if (items == 0) return;
    if (p->n == 1 || items == 1 || work < REF_PARALLEL_MIN_WORK) {
        fn(ctx, 0, items, 0);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn    = fn;
    p->ctx   = ctx;
    p->items = items;
    p->busy  = p->n - 1;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    uint32_t b, e;
    pool_range(items, p->n, 0, &b, &e);
    if (b < e) fn(ctx, b, e, 0);
    pthread_mutex_lock(&p->mu);
    while (p->busy) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

/* ======================================================================================
 * Row access and dot products
 * ====================================================================================== */

/* Rows are converted and dotted 8 lanes at a time with GCC/Clang vector extensions
 * (SSE2 pairs on the x86-64 baseline, one AVX register where the compiler may use it).
 * Lane-wise IEEE ops give the same bits on every ISA; no FMA contraction happens in ISO C
 * mode (-std=c11 implies -ffp-contract=off), so the matmuls do not depend on the host CPU. Measured on the 2-vCPU EPYC dev VM, Qwen2.5-0.5B shapes in bf16: the scalar
 * convert-then-dot loop ran at 0.8 tok/s; this version is in docs/llm.md. */
typedef float    v8f __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));
typedef uint16_t v8h __attribute__((vector_size(16)));

/* unaligned load (a macro: returning a 32-byte vector by value changes the ABI without AVX) */
#define V8F_LOAD(dst, p) memcpy(&(dst), (p), sizeof(v8f))

/* bf16 -> f32 is the upper half of the bits: exact */
static void cvt_bf16(const uint8_t *p, float *out, uint32_t n)
{
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        v8h h;
        memcpy(&h, p + 2 * (size_t)i, sizeof h);
        v8u u = __builtin_convertvector(h, v8u) << 16;
        memcpy(out + i, &u, sizeof u);
    }
    for (; i < n; i++) {
        uint32_t u = (uint32_t)(p[2 * i] | p[2 * i + 1] << 8) << 16;
        memcpy(out + i, &u, 4);
    }
}

/* IEEE half -> f32, exact for every input: the exponent+mantissa bits moved into f32
 * position read as a float 2^112 too small (normals) or as an f32 denormal m * 2^-136
 * (half subnormals), so one multiply by 2^112 fixes both; inf/NaN (exponent 31) get the
 * f32 all-ones exponent instead. Needs denormals enabled (the default; no FTZ/DAZ). */
static void cvt_f16(const uint8_t *p, float *out, uint32_t n)
{
    const v8u ex_mask = {0x7c00, 0x7c00, 0x7c00, 0x7c00, 0x7c00, 0x7c00, 0x7c00, 0x7c00};
    const v8f magic   = {0x1p112f, 0x1p112f, 0x1p112f, 0x1p112f, 0x1p112f, 0x1p112f, 0x1p112f, 0x1p112f};
    uint32_t  i       = 0;
    for (; i + 8 <= n; i += 8) {
        v8h h16;
        memcpy(&h16, p + 2 * (size_t)i, sizeof h16);
        v8u h    = __builtin_convertvector(h16, v8u);
        v8u em   = (h & 0x7fff) << 13;
        v8f f    = (v8f)em * magic;
        v8u bits = (v8u)f;
        v8u inf  = (v8u)((h & ex_mask) == ex_mask); /* all ones where exponent == 31 */
        bits     = (bits & ~inf) | ((em | 0x7f800000u) & inf);
        bits |= (h & 0x8000) << 16;
        memcpy(out + i, &bits, sizeof bits);
    }
    for (; i < n; i++) {
        uint32_t h = (uint32_t)(p[2 * i] | p[2 * i + 1] << 8), em = (h & 0x7fff) << 13, bits;
        float    f;
        memcpy(&f, &em, 4);
        f *= 0x1p112f;
        memcpy(&bits, &f, 4);
        if ((h & 0x7c00) == 0x7c00) bits = em | 0x7f800000u;
        bits |= (h & 0x8000) << 16;
        memcpy(out + i, &bits, 4);
    }
}

/* For tests: the conversion the forward uses, for f16/bf16 (n elements from src, any
 * alignment). Other dtypes are not handled here. */
void wgf__ref_convert_row(enum wgf_dtype dt, const void *src, float *dst, uint32_t n)
{
    if (dt == WGF_DT_F16) cvt_f16(src, dst, n);
    else if (dt == WGF_DT_BF16) cvt_bf16(src, dst, n);
}

/* Row `r` of matrix `w` as f32: a pointer into the mapping when it is f32 and 4-byte
 * aligned (safetensors allows any offset), else converted into `scratch` (cols floats). */
static const float *row_f32(const struct wgf_tensor *w, int64_t r, int64_t cols, float *scratch)
{
    const uint8_t *base = w->data;
    switch (w->dtype) {
    case WGF_DT_F32: {
        const uint8_t *p = base + (size_t)r * (size_t)cols * 4;
        if (((uintptr_t)p & 3u) == 0) return (const float *)(const void *)p;
        memcpy(scratch, p, (size_t)cols * 4);
        return scratch;
    }
    case WGF_DT_F16: cvt_f16(base + (size_t)r * (size_t)cols * 2, scratch, (uint32_t)cols); return scratch;
    case WGF_DT_BF16: cvt_bf16(base + (size_t)r * (size_t)cols * 2, scratch, (uint32_t)cols); return scratch;
    default: /* quantized blocks: the model's own decoder */
        wgf_tensor_row_f32(w, r, scratch);
        return scratch;
    }
}

/* f32 dot in 16 lanes (two 8-lane accumulators), summed in a fixed tree at the end: gives
 * the CPU independent chains and grows rounding error ~16x slower than one running sum
 * over K = 4864. */
static inline float dot(const float *restrict a, const float *restrict b, uint32_t n)
{
    v8f      s0 = {0}, s1 = {0};
    uint32_t i  = 0;
    v8f      a0, a1, b0, b1;
    for (; i + 16 <= n; i += 16) {
        V8F_LOAD(a0, a + i), V8F_LOAD(b0, b + i), V8F_LOAD(a1, a + i + 8), V8F_LOAD(b1, b + i + 8);
        s0 += a0 * b0;
        s1 += a1 * b1;
    }
    for (; i + 8 <= n; i += 8) {
        V8F_LOAD(a0, a + i), V8F_LOAD(b0, b + i);
        s0 += a0 * b0;
    }
    v8f   s = s0 + s1;
    float r = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; i < n; i++) r += a[i] * b[i];
    return r;
}

/* ======================================================================================
 * State
 * ====================================================================================== */

struct ref {
    const struct wgf_llm_model  *m;
    struct wgf_llm_config        c;      /* copy of m->cfg                                 */
    struct pool                  pool;
    uint32_t                     n_ctx;  /* positions in the cache                         */
    uint32_t                     q_dim;  /* n_heads * head_dim                             */
    uint32_t                     kv_dim; /* n_kv_heads * head_dim                          */
    uint32_t                     max_cols; /* widest matrix row (scratch size)             */
    float                       *key_cache;   /* (n_layers, n_ctx, kv_dim)                 */
    float                       *value_cache; /* (n_layers, n_ctx, kv_dim)                 */
    float                       *x;      /* (UBATCH, dim) residual stream                  */
    float                       *xb;     /* (UBATCH, dim) normed input / attention out-proj*/
    float                       *q;      /* (UBATCH, q_dim)                                */
    float                       *k;      /* (UBATCH, kv_dim)                               */
    float                       *v;      /* (UBATCH, kv_dim)                               */
    float                       *att_out;/* (UBATCH, q_dim) attention output (pre o_proj)  */
    float                       *hb;     /* (UBATCH, hidden) gate, then silu(gate)*up      */
    float                       *hb2;    /* (UBATCH, hidden) up                            */
    float                       *scratch;/* (threads, max_cols) per-thread row conversion  */
    float                       *xq;     /* (UBATCH, max_cols) act_q8: a matmul's input rounded */
    bool                         act_q8; /* quantized matrices take int8-rounded inputs     */
    float                       *att;    /* (threads, n_ctx) per-thread attention scores   */
    float                       *inv_freq; /* (rope_dim/2) RoPE inverse frequencies        */
    float                        rope_scale; /* cos/sin multiplier (longrope), else 1      */
    int                          rope_seq;   /* seq_len inv_freq was computed for (-1 none)*/
    wgf_llm_probe_fn             probe;      /* per-role callback (tests, GPU plan checks) */
    void                        *probe_user;
};

/* ---- matmul: y (n, rows) = x (n, cols) . W^T (+ bias) ----------------------------------- */
struct mm_job {
    struct ref              *r;
    float                   *y;
    const float             *x;
    const struct wgf_tensor *w;
    const float             *bias;
    uint32_t                 n, rows, cols;
};

/* The hot loops get an AVX2 clone picked at load time (ifunc); the lane-wise math is the
 * same, so both clones give identical bits (checked by test_forward on AVX2 hosts against
 * the naive reference, and by CPU-independent expectations in test_forward_stories). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WGF_NO_IFUNC 1 /* ifunc resolvers run before TSan's runtime is up: no clones */
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define WGF_NO_IFUNC 1
#endif
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) && !defined(WGF_NO_IFUNC)
#define WGF_HOT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define WGF_HOT_CLONES
#endif

WGF_HOT_CLONES static void mm_part(void *ctx, uint32_t b, uint32_t e, uint32_t t)
{
    struct mm_job *j       = ctx;
    float         *scratch = j->r->scratch + (size_t)t * j->r->max_cols;
    for (uint32_t row = b; row < e; row++) {
        const float *w    = row_f32(j->w, row, j->cols, scratch);
        float        bias = j->bias ? j->bias[row] : 0.0f;
        for (uint32_t i = 0; i < j->n; i++)
            j->y[(size_t)i * j->rows + row] = dot(w, j->x + (size_t)i * j->cols, j->cols) + bias;
    }
}

static void matmul(struct ref *r, float *y, const float *x, const struct wgf_tensor *w,
                   const struct wgf_tensor *bias, uint32_t n)
{
    struct mm_job j = {
        .r = r, .y = y, .x = x, .w = w, .bias = bias && bias->data ? bias->data : NULL, .n = n,
        .rows = (uint32_t)wgf_tensor_nrows(w), .cols = (uint32_t)wgf_tensor_ncols(w),
    };
    /* --activations q8: a quantized matrix multiplies x rounded to int8 per 32 (its columns are
     * a multiple of its block, 32 or 256) */
    if (r->act_q8 && wgf_dtype_block_elems(w->dtype) >= 32) {
        wgf__quant_round_q8(x, r->xq, (uint64_t)n * j.cols);
        j.x = r->xq;
    }
    pool_run(&r->pool, mm_part, &j, j.rows, (uint64_t)j.rows * j.cols * n);
}

/* ---- RMSNorm: out = x / sqrt(mean(x^2) + eps) * w ---------------------------------------- */
static void rmsnorm(float *out, const float *x, const struct wgf_tensor *w, uint32_t dim, float eps)
{
    const float *wf = w->data; /* norms are f32, owned by the model (aligned) */
    float        ss = 0;
    for (uint32_t i = 0; i < dim; i++) ss += x[i] * x[i];
    float inv = 1.0f / sqrtf(ss / (float)dim + eps);
    for (uint32_t i = 0; i < dim; i++) out[i] = wf[i] * (x[i] * inv);
}

/* ---- RoPE, rotate-half over the first rope_dim dims of each head ------------------------- */
static void rope(const struct ref *r, float *v, uint32_t n_heads, uint32_t pos)
{
    uint32_t hd = (uint32_t)r->c.head_dim, half = (uint32_t)r->c.rope_dim / 2;
    for (uint32_t i = 0; i < half; i++) {
        float a = (float)pos * r->inv_freq[i];
        float c = cosf(a) * r->rope_scale, s = sinf(a) * r->rope_scale;
        for (uint32_t h = 0; h < n_heads; h++) {
            float *p = v + (size_t)h * hd;
            float  x0 = p[i], x1 = p[i + half];
            p[i]        = x0 * c - x1 * s;
            p[i + half] = x0 * s + x1 * c;
        }
    }
}

/* ---- causal attention over the cache, one (token, head) per item ------------------------- */
struct att_job {
    struct ref *r;
    uint32_t    layer, pos0, n_heads;
    uint32_t    window; /* the layer's sliding window; 0: every earlier position */
};

WGF_HOT_CLONES static void att_part(void *ctx, uint32_t b, uint32_t e, uint32_t t)
{
    struct att_job *j   = ctx;
    struct ref     *r   = j->r;
    uint32_t        hd  = (uint32_t)r->c.head_dim;
    uint32_t        grp = (uint32_t)(r->c.n_heads / r->c.n_kv_heads); /* q heads per kv head */
    float           scale = 1.0f / sqrtf((float)hd);
    float          *att   = r->att + (size_t)t * r->n_ctx;
    const float    *kc    = r->key_cache + (size_t)j->layer * r->n_ctx * r->kv_dim;
    const float    *vc    = r->value_cache + (size_t)j->layer * r->n_ctx * r->kv_dim;
    for (uint32_t item = b; item < e; item++) {
        uint32_t     tok = item / j->n_heads, h = item % j->n_heads, kvh = h / grp;
        uint32_t     n_pos = j->pos0 + tok + 1; /* causal: positions 0..pos */
        uint32_t     p0    = j->window && n_pos > j->window ? n_pos - j->window : 0; /* sliding window */
        const float *q     = r->q + (size_t)tok * r->q_dim + (size_t)h * hd;
        float        mx    = -INFINITY;
        for (uint32_t p = p0; p < n_pos; p++) {
            att[p] = dot(q, kc + (size_t)p * r->kv_dim + (size_t)kvh * hd, hd) * scale;
            if (att[p] > mx) mx = att[p];
        }
        float sum = 0;
        for (uint32_t p = p0; p < n_pos; p++) sum += att[p] = expf(att[p] - mx);
        float  inv = 1.0f / sum;
        float *out = r->att_out + (size_t)tok * r->q_dim + (size_t)h * hd;
        memset(out, 0, hd * sizeof *out);
        for (uint32_t p = p0; p < n_pos; p++) {
            const float *vv = vc + (size_t)p * r->kv_dim + (size_t)kvh * hd;
            float        a  = att[p] * inv;
            for (uint32_t i = 0; i < hd; i++) out[i] += a * vv[i];
        }
    }
}

/* ======================================================================================
 * The forward: one micro-batch of n <= REF_UBATCH tokens at positions pos..pos+n-1.
 * Writes logits for every row (all_logits) or the last row; none when logits is NULL.
 * ====================================================================================== */

/* after each role: hand its output rows to the probe, if one is installed */
#define PROBE(role, layer, buf, width)                                                                  \
    do {                                                                                            \
        if (r->probe) r->probe(r->probe_user, role, layer, pos, buf, n, width);                     \
    } while (0)

static enum wgf_status wgf__ref_forward(struct ref *r, const int32_t *tokens, uint32_t n, uint32_t pos,
                                        float *logits, bool all_logits, struct wgf_err *err)
{
    const struct wgf_llm_weights *W   = &r->m->weights;
    const uint32_t                dim = (uint32_t)r->c.dim, hid = (uint32_t)r->c.hidden_dim;
    const uint32_t                V   = (uint32_t)r->c.vocab_size;
    const float                   eps = r->c.norm_eps;

    /* embed: x[i] = tok_embd[token i] */
    for (uint32_t i = 0; i < n; i++) {
        if (tokens[i] < 0 || (uint32_t)tokens[i] >= V)
            return wgf_fail(err, WGF_ERR_ARG, "token id %d at position %u out of range [0, %u)", (int)tokens[i],
                            pos + i, V);
        wgf_tensor_row_f32(&W->tok_embd, tokens[i], r->x + (size_t)i * dim);
    }
    PROBE("embed", -1, r->x, dim);

    for (uint32_t l = 0; l < (uint32_t)r->c.n_layers; l++) {
        const struct wgf_layer_weights *L  = &W->layers[l];
        float *kc = r->key_cache + ((size_t)l * r->n_ctx + pos) * r->kv_dim;
        float *vc = r->value_cache + ((size_t)l * r->n_ctx + pos) * r->kv_dim;

        /* attn_norm: xb = rmsnorm(x) * attn_norm */
        for (uint32_t i = 0; i < n; i++) rmsnorm(r->xb + (size_t)i * dim, r->x + (size_t)i * dim, &L->attn_norm, dim, eps);
        PROBE("attn_norm", (int)l, r->xb, dim);
        /* qkv (+bias, Qwen2): q = xb.Wq^T + bq, k = xb.Wk^T + bk, v = xb.Wv^T + bv */
        matmul(r, r->q, r->xb, &L->wq, &L->bq, n);
        matmul(r, r->k, r->xb, &L->wk, &L->bk, n);
        matmul(r, r->v, r->xb, &L->wv, &L->bv, n);
        PROBE("q", (int)l, r->q, r->q_dim);
        PROBE("k", (int)l, r->k, r->kv_dim);
        PROBE("v", (int)l, r->v, r->kv_dim);
        /* rope: rotate q and k heads by their position */
        for (uint32_t i = 0; i < n; i++) {
            rope(r, r->q + (size_t)i * r->q_dim, (uint32_t)r->c.n_heads, pos + i);
            rope(r, r->k + (size_t)i * r->kv_dim, (uint32_t)r->c.n_kv_heads, pos + i);
        }
        PROBE("q_rope", (int)l, r->q, r->q_dim);
        PROBE("k_rope", (int)l, r->k, r->kv_dim);
        /* kv append: cache[l][pos+i] = k[i], v[i] */
        memcpy(kc, r->k, (size_t)n * r->kv_dim * sizeof *kc);
        memcpy(vc, r->v, (size_t)n * r->kv_dim * sizeof *vc);
        /* attention: att_out = softmax(q.K^T / sqrt(hd), causal, within the layer's sliding
         * window) . V, GQA head sharing */
        struct att_job aj = {r, l, pos, (uint32_t)r->c.n_heads, (uint32_t)wgf_llm_layer_window(&r->c, (int)l)};
        pool_run(&r->pool, att_part, &aj, n * aj.n_heads, (uint64_t)n * r->q_dim * (pos + n) * 2);
        PROBE("attention", (int)l, r->att_out, r->q_dim);
        /* o_proj: xb = att_out.Wo^T */
        matmul(r, r->xb, r->att_out, &L->wo, NULL, n);
        PROBE("o_proj", (int)l, r->xb, dim);
        /* residual: x += xb */
        for (size_t i = 0; i < (size_t)n * dim; i++) r->x[i] += r->xb[i];
        /* ffn_norm: xb = rmsnorm(x) * ffn_norm */
        PROBE("attn_residual", (int)l, r->x, dim);
        for (uint32_t i = 0; i < n; i++) rmsnorm(r->xb + (size_t)i * dim, r->x + (size_t)i * dim, &L->ffn_norm, dim, eps);
        PROBE("ffn_norm", (int)l, r->xb, dim);
        /* gate/up: hb = xb.Wgate^T, hb2 = xb.Wup^T */
        matmul(r, r->hb, r->xb, &L->w_gate, NULL, n);
        matmul(r, r->hb2, r->xb, &L->w_up, NULL, n);
        PROBE("gate", (int)l, r->hb, hid);
        PROBE("up", (int)l, r->hb2, hid);
        /* silu*mul: hb = silu(hb) * hb2 */
        for (size_t i = 0; i < (size_t)n * hid; i++) {
            float g = r->hb[i];
            r->hb[i] = g / (1.0f + expf(-g)) * r->hb2[i];
        }
        PROBE("silu_mul", (int)l, r->hb, hid);
        /* down: xb = hb.Wdown^T */
        matmul(r, r->xb, r->hb, &L->w_down, NULL, n);
        PROBE("down", (int)l, r->xb, dim);
        /* residual: x += xb */
        for (size_t i = 0; i < (size_t)n * dim; i++) r->x[i] += r->xb[i];
        PROBE("ffn_residual", (int)l, r->x, dim);
    }

    if (!logits) return WGF_OK; /* a prefill micro-batch before the last */
    /* final norm + lm_head: logits = rmsnorm(x) . lm_head^T (every row, or the last) */
    uint32_t first = all_logits ? 0 : n - 1, rows = n - first;
    for (uint32_t i = first; i < n; i++) rmsnorm(r->xb + (size_t)(i - first) * dim, r->x + (size_t)i * dim, &W->out_norm, dim, eps);
    if (r->probe) r->probe(r->probe_user, "final_norm", -1, pos + first, r->xb, rows, dim);
    matmul(r, logits, r->xb, &W->lm_head, NULL, rows);
    if (r->probe) r->probe(r->probe_user, "logits", -1, pos + first, logits, rows, V);
    return WGF_OK;
}

#undef PROBE

/* ======================================================================================
 * Backend glue
 * ====================================================================================== */

static void ref_free(struct wgf_llm_backend *b)
{
    struct ref *r = b->impl;
    if (!r) return;
    pool_free(&r->pool);
    free(r->key_cache);
    free(r->value_cache);
    free(r->x);
    free(r->xb);
    free(r->q);
    free(r->k);
    free(r->v);
    free(r->att_out);
    free(r->hb);
    free(r->hb2);
    free(r->scratch);
    free(r->xq);
    free(r->att);
    free(r->inv_freq);
    free(r);
    b->impl = NULL;
}

/* A matrix the forward will index: present, (rows, cols) as the config says, a dtype we
 * can read, and as many bytes as that takes. The loader checks this too; the backend
 * re-checks because it is the one that would read out of bounds. */
static enum wgf_status check_mat(const char *who, const struct wgf_tensor *t, const char *what, int l, int64_t rows,
                                 int64_t cols, struct wgf_err *err)
{
    if (!t->data) return wgf_fail(err, WGF_ERR_FORMAT, "%s: layer %d: %s missing", who, l, what);
    if (t->n_dims != 2 || t->shape[0] != rows || t->shape[1] != cols)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: layer %d: %s '%s' shape (%lld, %lld), config says (%lld, %lld)", who, l,
                        what, t->name, (long long)t->shape[0], (long long)(t->n_dims > 1 ? t->shape[1] : 1),
                        (long long)rows, (long long)cols);
    int be = wgf_dtype_block_elems(t->dtype), bb = wgf_dtype_block_bytes(t->dtype);
    if (be <= 0 || bb <= 0 || cols % be)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: %s '%s': dtype %s unusable with %lld columns", who, what, t->name,
                        wgf_dtype_str(t->dtype), (long long)cols);
    uint64_t need;
    if (!wgf_mul_u64((uint64_t)rows, (uint64_t)(cols / be) * (uint64_t)bb, &need) || need > t->nbytes)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s '%s': %llu bytes, shape needs more", who, what, t->name,
                        (unsigned long long)t->nbytes);
    return WGF_OK;
}

static enum wgf_status check_vec(const char *who, const struct wgf_tensor *t, const char *what, int l, int64_t n,
                                 bool optional, struct wgf_err *err)
{
    if (!t->data) {
        if (optional) return WGF_OK;
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: layer %d: %s missing", who, l, what);
    }
    if (t->dtype != WGF_DT_F32 || wgf_tensor_nelems(t) != n || t->nbytes < (uint64_t)n * 4 || ((uintptr_t)t->data & 3u))
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: layer %d: %s '%s' must be %lld aligned f32 values", who, l, what,
                        t->name, (long long)n);
    return WGF_OK;
}

enum wgf_status wgf__llm_check_model(const struct wgf_llm_model *m, const char *who, struct wgf_err *err)
{
    const struct wgf_llm_config *c = &m->cfg;
    if (c->dim <= 0 || c->hidden_dim <= 0 || c->n_layers <= 0 || c->n_heads <= 0 || c->n_kv_heads <= 0 ||
        c->head_dim <= 0 || c->vocab_size <= 0 || c->n_heads % c->n_kv_heads || c->rope_dim <= 0 ||
        c->rope_dim > c->head_dim || c->rope_dim % 2 || c->rope_dim / 2 > WGF_ROPE_MAX_HALF || !(c->norm_eps >= 0))
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: inconsistent config (dim %d, heads %d/%d, head_dim %d, rope_dim %d)",
                        who, c->dim, c->n_heads, c->n_kv_heads, c->head_dim, c->rope_dim);
    if ((int64_t)c->n_heads * c->head_dim > (1 << 20) || c->dim > (1 << 20) || c->hidden_dim > (1 << 22))
        return wgf_fail(err, WGF_ERR_LIMIT, "%s: dimensions too large", who);
    int64_t qd = (int64_t)c->n_heads * c->head_dim, kvd = (int64_t)c->n_kv_heads * c->head_dim;
    const struct wgf_llm_weights *W = &m->weights;
    enum wgf_status               s;
    if ((s = check_mat(who, &W->tok_embd, "tok_embd", -1, c->vocab_size, c->dim, err)) ||
        (s = check_mat(who, &W->lm_head, "lm_head", -1, c->vocab_size, c->dim, err)) ||
        (s = check_vec(who, &W->out_norm, "out_norm", -1, c->dim, false, err)))
        return s;
    if (!W->layers) return wgf_fail(err, WGF_ERR_FORMAT, "%s: no layers", who);
    for (int l = 0; l < c->n_layers; l++) {
        const struct wgf_layer_weights *L = &W->layers[l];
        if ((s = check_vec(who, &L->attn_norm, "attn_norm", l, c->dim, false, err)) ||
            (s = check_mat(who, &L->wq, "wq", l, qd, c->dim, err)) || (s = check_mat(who, &L->wk, "wk", l, kvd, c->dim, err)) ||
            (s = check_mat(who, &L->wv, "wv", l, kvd, c->dim, err)) || (s = check_vec(who, &L->bq, "bq", l, qd, true, err)) ||
            (s = check_vec(who, &L->bk, "bk", l, kvd, true, err)) || (s = check_vec(who, &L->bv, "bv", l, kvd, true, err)) ||
            (s = check_mat(who, &L->wo, "wo", l, c->dim, qd, err)) ||
            (s = check_vec(who, &L->ffn_norm, "ffn_norm", l, c->dim, false, err)) ||
            (s = check_mat(who, &L->w_gate, "w_gate", l, c->hidden_dim, c->dim, err)) ||
            (s = check_mat(who, &L->w_up, "w_up", l, c->hidden_dim, c->dim, err)) ||
            (s = check_mat(who, &L->w_down, "w_down", l, c->dim, c->hidden_dim, err)))
            return s;
    }
    return WGF_OK;
}

static float *alloc_f32(size_t a, size_t b, size_t c, bool *ok)
{
    size_t n;
    if (!wgf_mul_size(a, b, &n) || !wgf_mul_size(n, c, &n) || n > SIZE_MAX / sizeof(float) || n == 0) {
        *ok = false;
        return NULL;
    }
    float *p = calloc(n, sizeof(float));
    if (!p) *ok = false;
    return p;
}

static enum wgf_status ref_init(struct wgf_llm_backend *b, const struct wgf_llm_model *m,
                                const struct wgf_llm_backend_options *opt, struct wgf_err *err)
{
    b->impl = NULL;
    enum wgf_status s = wgf__llm_check_model(m, "cpu-ref", err);
    if (s) return s;
    const struct wgf_llm_config *c = &m->cfg;
    uint32_t n_ctx = opt && opt->n_ctx ? opt->n_ctx : (uint32_t)(c->max_seq_len > 0 ? c->max_seq_len : 2048);
    uint32_t n_th  = opt && opt->n_threads ? opt->n_threads : 1;
    if (n_th > REF_MAX_THREADS) return wgf_fail(err, WGF_ERR_ARG, "cpu-ref: %u threads > %u", n_th, REF_MAX_THREADS);
    if (n_ctx > (1u << 24)) return wgf_fail(err, WGF_ERR_LIMIT, "cpu-ref: context %u > %u", n_ctx, 1u << 24);

    struct ref *r = calloc(1, sizeof *r);
    if (!r) return wgf_fail(err, WGF_ERR_NOMEM, "cpu-ref: state");
    b->impl     = r;
    r->m        = m;
    r->c        = *c;
    r->n_ctx    = n_ctx;
    r->q_dim    = (uint32_t)(c->n_heads * c->head_dim);
    r->kv_dim   = (uint32_t)(c->n_kv_heads * c->head_dim);
    r->max_cols = (uint32_t)c->dim;
    if ((uint32_t)c->hidden_dim > r->max_cols) r->max_cols = (uint32_t)c->hidden_dim;
    if (r->q_dim > r->max_cols) r->max_cols = r->q_dim;
    r->rope_seq = -1;

    bool   ok = true;
    size_t U = REF_UBATCH, L = (size_t)c->n_layers;
    r->key_cache   = alloc_f32(L, n_ctx, r->kv_dim, &ok);
    r->value_cache = alloc_f32(L, n_ctx, r->kv_dim, &ok);
    r->x           = alloc_f32(U, (size_t)c->dim, 1, &ok);
    r->xb          = alloc_f32(U, (size_t)c->dim, 1, &ok);
    r->q           = alloc_f32(U, r->q_dim, 1, &ok);
    r->k           = alloc_f32(U, r->kv_dim, 1, &ok);
    r->v           = alloc_f32(U, r->kv_dim, 1, &ok);
    r->att_out     = alloc_f32(U, r->q_dim, 1, &ok);
    r->hb          = alloc_f32(U, (size_t)c->hidden_dim, 1, &ok);
    r->hb2         = alloc_f32(U, (size_t)c->hidden_dim, 1, &ok);
    r->scratch     = alloc_f32(n_th, r->max_cols, 1, &ok);
    r->act_q8      = opt && opt->act_q8;
    if (r->act_q8) r->xq = alloc_f32(U, r->max_cols, 1, &ok);
    r->att         = alloc_f32(n_th, n_ctx, 1, &ok);
    r->inv_freq    = alloc_f32((size_t)c->rope_dim / 2, 1, 1, &ok);
    if (!ok) {
        ref_free(b);
        return wgf_fail(err, WGF_ERR_NOMEM, "cpu-ref: out of memory for the KV cache / activations of a context of %u positions "
                        "(%zu layers x %u floats a position; a smaller --ctx needs less)",
                        n_ctx, L, 2 * r->kv_dim);
    }
    if ((s = pool_init(&r->pool, n_th, err))) {
        ref_free(b);
        return s;
    }
    b->n_vocab = (uint32_t)c->vocab_size;
    b->n_ctx   = n_ctx;
    return WGF_OK;
}

static enum wgf_status ref_forward(struct wgf_llm_backend *b, const int32_t *tokens, uint32_t n, uint32_t pos,
                                   float *logits, bool all_logits, struct wgf_err *err)
{
    struct ref *r = b->impl;
    if (!r) return wgf_fail(err, WGF_ERR_ARG, "cpu-ref: backend not initialised");
    if (n == 0) return wgf_fail(err, WGF_ERR_ARG, "cpu-ref: forward of zero tokens");
    if (pos > r->n_ctx || n > r->n_ctx - pos)
        return wgf_fail(err, WGF_ERR_CONTEXT, "%llu tokens > ctx %u", (unsigned long long)pos + n, r->n_ctx);
    /* RoPE frequencies depend on the sequence length only for longrope; recompute when the
     * length this forward reaches changes which factors apply (cheap: rope_dim/2 values). */
    int seq = (int)(pos + n);
    if (r->rope_seq < 0 || (r->c.rope_scaling.type == WGF_ROPE_SCALING_LONGROPE && seq != r->rope_seq)) {
        wgf_llm_rope_inv_freq(&r->c, seq, r->inv_freq, &r->rope_scale);
        r->rope_seq = seq;
    }
    const size_t V = (size_t)r->c.vocab_size;
    for (uint32_t done = 0; done < n;) {
        uint32_t chunk = n - done < REF_UBATCH ? n - done : REF_UBATCH;
        bool     last  = done + chunk == n;
        /* logits rows: every row when all_logits; otherwise only the very last token */
        float *out = all_logits ? logits + (size_t)done * V : (last ? logits : NULL);
        enum wgf_status s = wgf__ref_forward(r, tokens + done, chunk, pos + done, out, all_logits, err);
        if (s) return s;
        done += chunk;
    }
    return WGF_OK;
}

static void ref_reset(struct wgf_llm_backend *b)
{
    struct ref *r = b->impl;
    if (r) r->rope_seq = -1; /* the cache is overwritten position by position */
}

enum wgf_status wgf_llm_ref_set_probe(struct wgf_llm_backend *b, wgf_llm_probe_fn fn, void *user, struct wgf_err *err)
{
    if (!b || b->forward != ref_forward || !b->impl)
        return wgf_fail(err, WGF_ERR_ARG, "probe: backend '%s' is not an initialised cpu-ref", b && b->name ? b->name : "?");
    struct ref *r  = b->impl;
    r->probe       = fn;
    r->probe_user  = user;
    return WGF_OK;
}

const struct wgf_llm_backend wgf_llm_backend_ref = {
    .name = "cpu-ref", .init = ref_init, .forward = ref_forward, .reset = ref_reset, .free = ref_free,
};

enum wgf_status wgf_llm_backend_open(struct wgf_llm_backend *b, const struct wgf_llm_backend *proto,
                                     const struct wgf_llm_model *m, const struct wgf_llm_backend_options *opt,
                                     struct wgf_err *err)
{
    *b              = *proto;
    b->impl         = NULL;
    enum wgf_status s = b->init(b, m, opt, err);
    if (s) wgf_llm_backend_close(b);
    return s;
}

void wgf_llm_backend_close(struct wgf_llm_backend *b)
{
    if (b && b->free) b->free(b);
}
