/* The reference forward (cpu-ref) against an independent naive f64 forward on tiny random
 * models built in memory; KV-cache consistency (prefill all at once == token by token);
 * thread-count invariance; poison past the logits; context and token-id errors.
 *
 * Tolerances: relative to the largest |logit|. f32 accumulation over K <= 896 with 8
 * partial sums stays below 2e-5 here; 1e-4 leaves room for the libm differences in
 * expf/cosf. Stored f16/bf16 weights are compared against the naive forward on the same
 * decoded values, so the dtype itself adds no error. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "test_forward_model.h"
#include "wgfuse/llm_run.h"

#define POISON 12345.678f

static float *alloc_poisoned(size_t n, size_t extra)
{
    float *p = malloc((n + extra) * sizeof *p);
    WGF_ASSERT(p);
    for (size_t i = 0; i < n + extra; i++) p[i] = POISON;
    return p;
}

static bool poison_intact(const float *p, size_t n, size_t extra)
{
    for (size_t i = n; i < n + extra; i++)
        if (p[i] != POISON) return false;
    return true;
}

static void make_tokens(int32_t *t, int n, int vocab, uint64_t seed)
{
    struct wgf_rng r;
    wgf_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) t[i] = (int32_t)wgf_rng_below(&r, (uint32_t)vocab);
}

/* cpu-ref prefill (all logits) vs naive; then token-by-token decode vs the prefill. */
static void check_model_ex(struct wgf_t *t, const char *name, const struct tm_dims *d, int n_tok, uint32_t threads,
                           bool prefill_only)
{
    char        nm[160];
    struct tm  *tm = tm_build(d, 1234);
    const int   V  = d->vocab;
    int32_t    *tok = malloc((size_t)n_tok * sizeof *tok);
    make_tokens(tok, n_tok, V, 99);

    double *ref = malloc((size_t)n_tok * V * sizeof *ref);
    nv_forward(&tm->m, tok, n_tok, ref);

    struct wgf_llm_backend         b;
    struct wgf_llm_backend_options opt = {.n_ctx = (uint32_t)n_tok + 4, .n_threads = threads};
    struct wgf_err                 err = {0};
    snprintf(nm, sizeof nm, "%s: init", name);
    if (!wgf_t_check(t, wgf_llm_backend_open(&b, &wgf_llm_backend_ref, &tm->m, &opt, &err) == WGF_OK, nm, "%s", err.msg))
        goto out;

    size_t n_all = (size_t)n_tok * V;
    float *pre   = alloc_poisoned(n_all, 64);
    enum wgf_status s = b.forward(&b, tok, (uint32_t)n_tok, 0, pre, true, &err);
    snprintf(nm, sizeof nm, "%s: prefill vs naive f64", name);
    double e = tm_rel_max(pre, ref, n_all);
    wgf_t_check(t, s == WGF_OK && e < 1e-4, nm, "rel max err %.3g over %d positions x %d %s", e, n_tok, V, s ? err.msg : "");
    snprintf(nm, sizeof nm, "%s: poison past prefill logits intact", name);
    wgf_t_check(t, poison_intact(pre, n_all, 64), nm, NULL);

    if (prefill_only) goto done; /* longrope past original_max_pos: decode switches factors */
    /* the same tokens one at a time through the cache must give the same rows, bit for bit:
     * every dot product runs in the same order in both paths */
    b.reset(&b);
    float *row = alloc_poisoned((size_t)V, 16);
    bool   same = true, ok = true;
    int    first_bad = -1;
    for (int i = 0; i < n_tok && ok; i++) {
        ok = b.forward(&b, tok + i, 1, (uint32_t)i, row, false, &err) == WGF_OK;
        if (ok && memcmp(row, pre + (size_t)i * V, (size_t)V * sizeof *row) != 0 && first_bad < 0) {
            same      = false;
            first_bad = i;
        }
    }
    snprintf(nm, sizeof nm, "%s: decode token by token == prefill (bit-exact)", name);
    wgf_t_check(t, ok && same, nm, "first differing position %d, max diff %.3g %s", first_bad,
                first_bad >= 0 ? wgf_t_max_abs_diff(row, pre + (size_t)first_bad * V, (size_t)V) : 0.0,
                ok ? "" : err.msg);
    snprintf(nm, sizeof nm, "%s: poison past decode logits intact", name);
    wgf_t_check(t, poison_intact(row, (size_t)V, 16), nm, NULL);

    /* prefill of a prefix then a chunk (not aligned to the micro-batch) == all at once */
    b.reset(&b);
    int    split = n_tok / 3;
    float *last  = alloc_poisoned((size_t)V, 16);
    ok = b.forward(&b, tok, (uint32_t)split, 0, last, false, &err) == WGF_OK &&
         b.forward(&b, tok + split, (uint32_t)(n_tok - split), (uint32_t)split, last, false, &err) == WGF_OK;
    snprintf(nm, sizeof nm, "%s: prefill in two chunks == at once (last row)", name);
    wgf_t_check(t, ok && memcmp(last, pre + (size_t)(n_tok - 1) * V, (size_t)V * sizeof *last) == 0, nm, "%s",
                ok ? "" : err.msg);
    free(last);
    free(row);
done:
    free(pre);
    wgf_llm_backend_close(&b);
out:
    free(ref);
    free(tok);
    tm_free(tm);
}

/* The window is not a no-op: rows of positions inside it equal the unwindowed model's bit for
 * bit, rows past it differ. */
static void check_window_masks(struct wgf_t *t, const struct tm_dims *d)
{
    struct tm_dims full = *d;
    full.window         = 0;
    struct tm     *a = tm_build(d, 1234), *b = tm_build(&full, 1234);
    const int      V = d->vocab, n = 3 * d->window;
    int32_t        tok[64];
    WGF_ASSERT(n <= 64);
    make_tokens(tok, n, V, 5);
    struct wgf_llm_backend         ba = {0}, bb = {0};
    struct wgf_llm_backend_options opt = {.n_ctx = (uint32_t)n, .n_threads = 1};
    struct wgf_err                 err = {0};
    float *la = malloc((size_t)n * V * sizeof *la), *lb = malloc((size_t)n * V * sizeof *lb);
    WGF_ASSERT(la && lb);
    bool ok = wgf_llm_backend_open(&ba, &wgf_llm_backend_ref, &a->m, &opt, &err) == WGF_OK &&
              wgf_llm_backend_open(&bb, &wgf_llm_backend_ref, &b->m, &opt, &err) == WGF_OK &&
              ba.forward(&ba, tok, (uint32_t)n, 0, la, true, &err) == WGF_OK &&
              bb.forward(&bb, tok, (uint32_t)n, 0, lb, true, &err) == WGF_OK;
    int first_diff = -1, past_same = 0;
    for (int i = 0; ok && i < n; i++) {
        bool same = !memcmp(la + (size_t)i * V, lb + (size_t)i * V, (size_t)V * sizeof *la);
        if (!same && first_diff < 0) first_diff = i;
        if (same && i >= d->window) past_same++;
    }
    wgf_t_check(t, ok && first_diff == d->window && past_same == 0, "sliding window: rows within it = no window, rows past it differ",
                "window %d: first differing row %d, rows past the window equal to no window's %d %s", d->window, first_diff,
                past_same, ok ? "" : err.msg);
    wgf_llm_backend_close(&ba);
    wgf_llm_backend_close(&bb);
    free(la), free(lb);
    tm_free(a), tm_free(b);
}

static void check_model(struct wgf_t *t, const char *name, const struct tm_dims *d, int n_tok, uint32_t threads)
{
    check_model_ex(t, name, d, n_tok, threads, false);
}

static void check_threads_invariant(struct wgf_t *t)
{
    struct tm_dims d  = {.arch = WGF_ARCH_QWEN2, .dim = 128, .hidden = 256, .layers = 2, .heads = 8, .kv_heads = 2,
                         .head_dim = 16, .vocab = 512, .max_seq = 128, .bias = true, .tied = true, .dtype = WGF_DT_F16};
    struct tm     *tm = tm_build(&d, 7);
    int32_t        tok[40];
    make_tokens(tok, 40, d.vocab, 5);
    float *out[2];
    bool   ok = true;
    struct wgf_err err = {0};
    uint32_t       th[2] = {1, 3};
    for (int k = 0; k < 2; k++) {
        struct wgf_llm_backend         b;
        struct wgf_llm_backend_options opt = {.n_ctx = 64, .n_threads = th[k]};
        out[k] = alloc_poisoned((size_t)40 * d.vocab, 0);
        ok     = ok && wgf_llm_backend_open(&b, &wgf_llm_backend_ref, &tm->m, &opt, &err) == WGF_OK &&
             b.forward(&b, tok, 40, 0, out[k], true, &err) == WGF_OK;
        if (ok) wgf_llm_backend_close(&b);
    }
    wgf_t_check(t, ok && memcmp(out[0], out[1], (size_t)40 * d.vocab * sizeof(float)) == 0,
                "threads 1 vs 3: logits bit-identical", "%s", ok ? "" : err.msg);
    free(out[0]);
    free(out[1]);
    tm_free(tm);
}

static void check_errors(struct wgf_t *t)
{
    struct tm_dims d  = {.arch = WGF_ARCH_LLAMA, .dim = 32, .hidden = 48, .layers = 1, .heads = 4, .kv_heads = 2,
                         .head_dim = 8, .vocab = 64, .max_seq = 16, .tied = true, .dtype = WGF_DT_F32};
    struct tm     *tm = tm_build(&d, 3);
    struct wgf_llm_backend         b;
    struct wgf_llm_backend_options opt = {.n_ctx = 8, .n_threads = 2};
    struct wgf_err                 err = {0};
    if (!wgf_t_check(t, wgf_llm_backend_open(&b, &wgf_llm_backend_ref, &tm->m, &opt, &err) == WGF_OK, "errors: init",
                     "%s", err.msg)) {
        tm_free(tm);
        return;
    }
    int32_t tok[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    float  *lg      = alloc_poisoned(64, 0);
    enum wgf_status s = b.forward(&b, tok, 9, 0, lg, false, &err);
    wgf_t_check(t, s == WGF_ERR_CONTEXT && strstr(err.msg, "9 tokens > ctx 8"), "9 tokens into ctx 8 -> context error",
                "%d '%s'", s, err.msg);
    s = b.forward(&b, tok, 1, 8, lg, false, &err);
    wgf_t_check(t, s == WGF_ERR_CONTEXT, "forward at pos == ctx -> context error", "%s", err.msg);
    s = b.forward(&b, tok, 1, 4000000000u, lg, false, &err);
    wgf_t_check(t, s == WGF_ERR_CONTEXT, "forward at pos 4e9 -> context error (no wrap)", "%s", err.msg);
    int32_t bad[2] = {3, 64};
    s = b.forward(&b, bad, 2, 0, lg, false, &err);
    wgf_t_check(t, s == WGF_ERR_ARG && strstr(err.msg, "64"), "token id == vocab -> error", "%s", err.msg);
    bad[1] = -1;
    s      = b.forward(&b, bad, 2, 0, lg, false, &err);
    wgf_t_check(t, s == WGF_ERR_ARG, "token id -1 -> error", "%s", err.msg);
    wgf_llm_backend_close(&b);
    wgf_llm_backend_close(&b); /* second close is a no-op */

    /* a weight whose shape disagrees with the config is refused at init, not read */
    tm->m.weights.layers[0].w_up.shape[0] = 47;
    s = wgf_llm_backend_open(&b, &wgf_llm_backend_ref, &tm->m, &opt, &err);
    wgf_t_check(t, s == WGF_ERR_FORMAT && strstr(err.msg, "w_up"), "w_up shape != config -> init error", "%s", err.msg);
    tm->m.weights.layers[0].w_up.shape[0] = 48;
    tm->m.weights.layers[0].w_up.nbytes -= 4;
    s = wgf_llm_backend_open(&b, &wgf_llm_backend_ref, &tm->m, &opt, &err);
    wgf_t_check(t, s == WGF_ERR_FORMAT, "w_up one element short -> init error", "%s", err.msg);
    free(lg);
    tm_free(tm);
}

/* Every f16 and bf16 bit pattern through cpu-ref's vector conversion vs the scalar
 * reference conversions of llm.h; an odd byte offset and a 65535-element run exercise the
 * unaligned loads and the scalar tail. NaN only needs to stay NaN. */
static void check_conversions(struct wgf_t *t)
{
    uint8_t *src = malloc(2 * 65536 + 1);
    float   *dst = malloc(65536 * sizeof *dst);
    const enum wgf_dtype dts[2] = {WGF_DT_F16, WGF_DT_BF16};
    for (int k = 0; k < 2; k++) {
        for (uint32_t i = 0; i < 65536; i++) src[1 + 2 * i] = (uint8_t)i, src[2 + 2 * i] = (uint8_t)(i >> 8);
        int bad = -1;
        for (int pass = 0; pass < 2; pass++) {
            uint32_t n = pass ? 65535 : 65536;
            for (uint32_t i = 0; i < n; i++) dst[i] = -7.0f;
            wgf__ref_convert_row(dts[k], src + 1, dst, n);
            for (uint32_t i = 0; i < n && bad < 0; i++) {
                float want = k ? wgf_bf16_to_f32((uint16_t)i) : wgf_f16_to_f32((uint16_t)i);
                bool  ok   = isnan(want) ? isnan(dst[i]) : memcmp(&want, &dst[i], 4) == 0;
                if (!ok) bad = (int)i;
            }
        }
        char nm[80];
        snprintf(nm, sizeof nm, "%s -> f32: all 65536 patterns, unaligned, with tail", k ? "bf16" : "f16");
        wgf_t_check(t, bad < 0, nm, "first mismatch at 0x%04x", bad < 0 ? 0 : bad);
    }
    free(src);
    free(dst);
}

/* ---- probe: roles in order, rows and widths, values tied to the outputs ------------------ */
struct probe_log {
    char   roles[64][16];
    int    layers[64];
    int    n;
    float  embed0[64];   /* embed row 0 */
    float *logits;       /* copy of the probed logits */
    size_t n_logits;
    bool   shapes_ok;
};

static void probe_cb(void *user, const char *role, int layer, uint32_t pos, const float *data, uint32_t n_rows,
                     uint32_t width)
{
    struct probe_log *p = user;
    if (p->n < 64) {
        snprintf(p->roles[p->n], sizeof p->roles[0], "%s", role);
        p->layers[p->n++] = layer;
    }
    if (!strcmp(role, "embed") && width <= 64) memcpy(p->embed0, data, width * sizeof *data);
    if (!strcmp(role, "logits")) {
        free(p->logits);
        p->n_logits = (size_t)n_rows * width;
        p->logits   = malloc(p->n_logits * sizeof *data);
        memcpy(p->logits, data, p->n_logits * sizeof *data);
    }
    if (pos != 0 || n_rows == 0) p->shapes_ok = false;
}

static void check_probe(struct wgf_t *t)
{
    struct tm_dims d  = {.arch = WGF_ARCH_QWEN2, .dim = 32, .hidden = 48, .layers = 1, .heads = 4, .kv_heads = 2,
                         .head_dim = 8, .vocab = 64, .max_seq = 16, .bias = true, .tied = true, .dtype = WGF_DT_F32};
    struct tm     *tm = tm_build(&d, 11);
    struct wgf_llm_backend         b;
    struct wgf_llm_backend_options opt = {.n_ctx = 16, .n_threads = 1};
    struct wgf_err                 err = {0};
    struct probe_log               pl  = {.shapes_ok = true};
    bool ok = wgf_llm_backend_open(&b, &wgf_llm_backend_ref, &tm->m, &opt, &err) == WGF_OK &&
              wgf_llm_ref_set_probe(&b, probe_cb, &pl, &err) == WGF_OK;
    int32_t tok[3] = {5, 6, 7};
    float   lg[3 * 64];
    ok = ok && b.forward(&b, tok, 3, 0, lg, true, &err) == WGF_OK;
    static const char *want[] = {"embed", "attn_norm", "q", "k", "v", "q_rope", "k_rope", "attention", "o_proj",
                                 "attn_residual", "ffn_norm", "gate", "up", "silu_mul", "down", "ffn_residual",
                                 "final_norm", "logits"};
    bool order = pl.n == 18;
    for (int i = 0; order && i < 18; i++) order = !strcmp(pl.roles[i], want[i]) && pl.layers[i] == ((i == 0 || i >= 16) ? -1 : 0);
    wgf_t_check(t, ok && order && pl.shapes_ok, "probe: 18 roles in forward order, layer ids, pos 0", "%s n=%d", err.msg, pl.n);
    float e0[32];
    wgf_tensor_row_f32(&tm->m.weights.tok_embd, 5, e0);
    wgf_t_check(t, ok && memcmp(pl.embed0, e0, sizeof e0) == 0, "probe: embed row == tok_embd[5]", NULL);
    wgf_t_check(t, ok && pl.n_logits == 3 * 64 && memcmp(pl.logits, lg, sizeof lg) == 0, "probe: logits == forward output",
                NULL);
    struct wgf_llm_backend fake = b;
    fake.forward                = NULL;
    wgf_t_check(t, wgf_llm_ref_set_probe(&fake, probe_cb, &pl, &err) == WGF_ERR_ARG, "probe on a non-cpu-ref backend -> error",
                "%s", err.msg);
    free(pl.logits);
    wgf_llm_backend_close(&b);
    tm_free(tm);
}

int main(void)
{
    struct wgf_t t = {0};
    check_conversions(&t);
    /* Llama-style: GQA 2:1, no bias, tied embeddings; 40 tokens cross the 32-token micro-batch */
    struct tm_dims llama = {.arch = WGF_ARCH_LLAMA, .dim = 64, .hidden = 96, .layers = 2, .heads = 4, .kv_heads = 2,
                            .head_dim = 16, .vocab = 97, .max_seq = 64, .tied = true, .dtype = WGF_DT_F32};
    check_model(&t, "llama f32", &llama, 40, 2);
    /* Qwen2-style: QKV bias, untied lm_head, theta 1e6 */
    struct tm_dims qwen = llama;
    qwen.arch = WGF_ARCH_QWEN2, qwen.bias = true, qwen.tied = false, qwen.theta = 1000000.0f;
    check_model(&t, "qwen2 f32 bias untied", &qwen, 37, 1);
    struct tm_dims q16 = qwen;
    q16.dtype = WGF_DT_F16;
    check_model(&t, "qwen2 f16 weights", &q16, 20, 2);
    struct tm_dims b16 = llama;
    b16.dtype = WGF_DT_BF16;
    check_model(&t, "llama bf16 weights", &b16, 20, 2);
    /* Llama-3.1 rope scaling, every frequency band */
    struct tm_dims l3 = llama;
    l3.scaling = WGF_ROPE_SCALING_LLAMA3, l3.theta = 500000.0f, l3.max_seq = 256;
    check_model(&t, "llama3 rope scaling", &l3, 24, 2);
    /* Phi-3 longrope: short factors below original_max_pos 16 (full checks), long factors
     * and the attention factor for a 24-token prefill (prefill vs naive only: decoding
     * token by token uses short factors for the first 16 positions, as HF does) */
    struct tm_dims lr = llama;
    lr.arch = WGF_ARCH_PHI3, lr.kv_heads = 4, lr.scaling = WGF_ROPE_SCALING_LONGROPE, lr.max_seq = 128;
    check_model(&t, "phi3 longrope short", &lr, 12, 2);
    check_model_ex(&t, "phi3 longrope long", &lr, 24, 2, true);
    /* the shipped Qwen2.5-0.5B attention shape: 14 q heads, 2 kv heads (7:1), head_dim 64 */
    struct tm_dims qs = {.arch = WGF_ARCH_QWEN2, .dim = 896, .hidden = 128, .layers = 1, .heads = 14, .kv_heads = 2,
                         .head_dim = 64, .vocab = 128, .max_seq = 64, .bias = true, .tied = true, .theta = 1000000.0f,
                         .dtype = WGF_DT_BF16};
    check_model(&t, "qwen2.5-0.5b attention shape", &qs, 9, 2);
    /* Llama-3-8B attention shape ratio: 32 q / 8 kv heads, head_dim 128 */
    struct tm_dims ls = {.arch = WGF_ARCH_LLAMA, .dim = 256, .hidden = 64, .layers = 1, .heads = 32, .kv_heads = 8,
                         .head_dim = 128, .vocab = 64, .max_seq = 64, .tied = false, .theta = 500000.0f,
                         .dtype = WGF_DT_F16};
    check_model(&t, "llama3-8b attention shape", &ls, 6, 2);
    /* sliding windows (transformers' semantics: the last W positions, the query's included):
     * Phi-3-style in every layer over 40 tokens (past the 32-token micro-batch), Qwen2-style
     * from layer 1 on (max_window_layers) */
    struct tm_dims sw = lr;
    sw.scaling = WGF_ROPE_SCALING_NONE, sw.window = 5;
    check_model(&t, "phi3 sliding window 5", &sw, 40, 2);
    struct tm_dims qw = qwen;
    qw.window = 6, qw.swa_first = 1;
    check_model(&t, "qwen2 sliding window 6 from layer 1", &qw, 37, 1);
    check_window_masks(&t, &sw);
    check_threads_invariant(&t);
    check_errors(&t);
    check_probe(&t);
    return wgf_t_finish(&t);
}
