/* GGUF Q8_0 / Q4_0 decoding and encoding and the Llama q/k un-permutation against fixtures
 * that no wgfuse code wrote (before, the GGUF tests wrote files with wgfuse's own writer,
 * quantizer and wgf__llama_perm_row and read them back with the same code):
 *   - hand-computed blocks (below, with their arithmetic): decode and encode;
 *   - the generated tiny_llama ($WGF_TINY_LLAMA)/model-{f32,q8_0,q4_0}.gguf, written by make_tiny_gguf.py
 *     (standard-library Python from the documented formats: ggml's gguf.md, llama.cpp's
 *     convert_hf_to_gguf permutation and F16 fallback, ggml's reference quantizers) from
 *     the same directory's model.safetensors, with expected_gguf.txt: an 8-token prompt and,
 *     per file, the logits after it from a float64 forward on the weights that script
 *     dequantizes from its own blocks. A prompt, not BOS alone: at one position attention
 *     returns v whatever q and k are, so logits after BOS cannot see a q/k row order.
 * Checks:
 *   - F32 GGUF: every weight row bit-identical to the HF directory's (q/k un-permuted), and
 *     the cpu-ref logits after the prompt bit-identical to the HF directory's (same f32
 *     weights, same code path: exactly equal, not merely close);
 *   - Q8_0 / Q4_0 GGUF: wgf__quant_encode of every HF row gives the bytes the script wrote
 *     (both follow ggml's f32 arithmetic, so byte-equal), which also checks the un-permuted
 *     q/k rows block by block; down_proj (88 columns) is F16, as convert_hf_to_gguf falls back;
 *   - all three: cpu-ref logits after the prompt within 4e-6 of the largest float64 logit.
 *     Both sides use the same f32 weight values (dequantized the same way), so only f32
 *     accumulation over 8 positions separates them: 6.1e-7 (f32), 9.8e-7 (q8_0), 5.0e-7
 *     (q4_0) seen, 1 thread; 4e-6 is four times the largest. The mutations below move
 *     them by 0.48 or more.
 * Mutations caught (tried 2026-12-01, each reverted):
 *   - wgf__llama_perm_row (model_files.h) returning the inverse permutation, which writer
 *     and loader share, so test_llm_files_stories' round trip still passes: fails "f32
 *     gguf weights == hf", both "gguf blocks" checks and every "logits after the prompt"
 *     check (0.48 .. 0.68);
 *   - quant.c dec_q4_0 with the nibbles swapped (element j from the high nibble): fails
 *     "hand Q4_0 decode" and "q4_0 gguf logits after the prompt" (1.34);
 *   - quant.c enc_q4_0 with the nibbles swapped: fails "hand Q4_0 encode" and "q4_0 gguf
 *     blocks";
 *   - quant.c dec_q8_0 reading q as uint8: fails "hand Q8_0 decode" and "q8_0 gguf logits
 *     after the prompt" (2.76). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "llm/model_files.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_run.h"

/* ---- hand-computed blocks ------------------------------------------------------------------ */

static void check_hand_blocks(struct wgf_t *t)
{
    /* Q8_0: d = 0.5 is f16 0x3800 (bytes 00 38), q[k] = k - 16: x[k] = (k - 16) / 2 */
    uint8_t q8[34] = {0x00, 0x38};
    for (int k = 0; k < 32; k++) q8[2 + k] = (uint8_t)(int8_t)(k - 16);
    float y[32];
    int   bad = -1;
    wgf__dtype_decode(WGF_DT_Q8_0, q8, 32, y);
    for (int k = 0; k < 32 && bad < 0; k++)
        if (y[k] != (float)(k - 16) / 2) bad = k;
    wgf_t_check(t, bad < 0, "hand Q8_0 decode", "first bad element %d", bad);

    /* Q8_0 encode: x = {-127, 1 - 16, ..., 31 - 16}: max |x| = 127, d = 1 (f16 00 3C),
     * q = x exactly (x / d is an integer) */
    float x[32];
    x[0] = -127;
    for (int k = 1; k < 32; k++) x[k] = (float)(k - 16);
    uint8_t enc[34];
    wgf__dtype_encode(WGF_DT_Q8_0, x, 32, enc);
    bool ok = enc[0] == 0x00 && enc[1] == 0x3C && enc[2] == 0x81;
    for (int k = 1; k < 32; k++) ok = ok && enc[2 + k] == (uint8_t)(int8_t)(k - 16);
    wgf_t_check(t, ok, "hand Q8_0 encode", "bytes %02x %02x %02x ...", enc[0], enc[1], enc[2]);

    /* Q4_0: x[k] = (k - 16) / 16. The first largest |x| is x[0] = -1, so d = -1 / -8 =
     * 0.125 (f16 0x3000: bytes 00 30), 1/d = 8, x/d + 8.5 = k/2 + 0.5 (exact in f32), q =
     * trunc(that) = floor((k + 1) / 2), and k = 31 gives 16, clamped to 15: */
    static const uint8_t q_lo[16] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8};         /* k = 0..15 */
    static const uint8_t q_hi[16] = {8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 15}; /* k = 16..31 */
    uint8_t              q4[18]   = {0x00, 0x30};
    for (int j = 0; j < 16; j++) q4[2 + j] = (uint8_t)(q_lo[j] | q_hi[j] << 4); /* element j low, j + 16 high */
    for (int k = 0; k < 32; k++) x[k] = (float)(k - 16) / 16;
    wgf__dtype_encode(WGF_DT_Q4_0, x, 32, enc);
    bad = -1;
    for (int b = 0; b < 18 && bad < 0; b++)
        if (enc[b] != q4[b]) bad = b;
    wgf_t_check(t, bad < 0, "hand Q4_0 encode", "first bad byte %d", bad);
    /* decode: (q - 8) * 0.125 */
    wgf__dtype_decode(WGF_DT_Q4_0, q4, 32, y);
    bad = -1;
    for (int k = 0; k < 32 && bad < 0; k++)
        if (y[k] != (float)((k < 16 ? q_lo[k] : q_hi[k - 16]) - 8) * 0.125f) bad = k;
    wgf_t_check(t, bad < 0, "hand Q4_0 decode", "first bad element %d", bad);
}

/* ---- the Python-written GGUF files ---------------------------------------------------------- */

/* The `key` line of an expected file: n doubles. */
static int read_logits(const char *path, const char *key, double *out, int cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    static char line[8192];
    size_t      kl = strlen(key);
    int         n  = 0;
    while (n == 0 && fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ' ')
            for (char *p = line + kl, *end; n < cap && (out[n] = strtod(p, &end), end != p); p = end) n++;
    fclose(f);
    return n;
}

/* cpu-ref (1 thread) logits after the last of n prompt tokens (one prefill from position
 * 0); false with the reason in msg on failure (msg needs WGF_ERR_MSG_MAX + 32 bytes). */
static bool logits_after(const struct wgf_llm_model *m, const int32_t *prompt, uint32_t n, float *lg, uint32_t n_vocab, char *msg,
                         size_t cap)
{
    struct wgf_llm_backend         b;
    struct wgf_llm_backend_options bo  = {.n_ctx = 16, .n_threads = 1};
    struct wgf_err                 err = {0};
    if (wgf_llm_backend_open(&b, &wgf_llm_backend_ref, m, &bo, &err) != WGF_OK) return snprintf(msg, cap, "%s", err.msg), false;
    bool ok = b.n_vocab == n_vocab && b.forward(&b, prompt, n, 0, lg, false, &err) == WGF_OK;
    if (!ok) snprintf(msg, cap, "n_vocab %u: %s", b.n_vocab, err.msg);
    else snprintf(msg, cap, "cpu-ref prefill of %u tokens", n);
    wgf_llm_backend_close(&b);
    return ok;
}

/* max |a - b| / max |b| over n logits (NaN-safe: a NaN gives +inf) */
static double rel_diff(const float *a, const double *b, int n)
{
    double worst = 0, big = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        worst    = d > worst || d != d ? (d != d ? INFINITY : d) : worst;
        big      = fmax(big, fabs(b[i]));
    }
    return worst / big;
}

/* The tensors of a model, in one order for comparing two loads of it. */
static int tensors_of(const struct wgf_llm_model *m, const struct wgf_tensor **ts, int cap)
{
    const struct wgf_llm_weights *w = &m->weights;
    int                           n = 0;
    ts[n++]                         = &w->tok_embd;
    ts[n++]                         = &w->out_norm;
    for (int l = 0; l < m->cfg.n_layers && n + 9 <= cap; l++) {
        const struct wgf_layer_weights *L = &w->layers[l];
        const struct wgf_tensor *lt[] = {&L->attn_norm, &L->wq, &L->wk, &L->wv, &L->wo, &L->ffn_norm, &L->w_gate, &L->w_up, &L->w_down};
        for (int i = 0; i < 9; i++) ts[n++] = lt[i];
    }
    return n;
}

/* Every row of every tensor of `g` bit-identical (as f32) to `h`'s; the first mismatch in why. */
static bool same_weights(const struct wgf_llm_model *g, const struct wgf_llm_model *h, char *why, size_t cap)
{
    const struct wgf_tensor *a[64], *b[64];
    int                      n = tensors_of(g, a, 64);
    if (tensors_of(h, b, 64) != n) return snprintf(why, cap, "tensor count"), false;
    for (int i = 0; i < n; i++) {
        int64_t rows = wgf_tensor_nrows(b[i]), cols = wgf_tensor_ncols(b[i]);
        if (wgf_tensor_nrows(a[i]) != rows || wgf_tensor_ncols(a[i]) != cols) return snprintf(why, cap, "%s: shape", a[i]->name), false;
        float *ra = malloc((size_t)cols * sizeof *ra), *rb = malloc((size_t)cols * sizeof *rb);
        for (int64_t r = 0; r < rows; r++) {
            wgf_tensor_row_f32(a[i], r, ra);
            wgf_tensor_row_f32(b[i], r, rb);
            if (memcmp(ra, rb, (size_t)cols * sizeof *ra)) {
                snprintf(why, cap, "%s row %lld differs from %s", a[i]->name, (long long)r, b[i]->name);
                free(ra), free(rb);
                return false;
            }
        }
        free(ra), free(rb);
    }
    return snprintf(why, cap, "%d tensors", n), true;
}

/* Quantized load `g` of HF model `h`: each matrix is `qt` (w_down F16), and encoding each HF
 * row with wgf__quant_encode gives the row bytes g holds (the script's bytes, in HF row order
 * after the loader's q/k un-permutation). */
static bool same_blocks(const struct wgf_llm_model *g, const struct wgf_llm_model *h, enum wgf_dtype qt, char *why, size_t cap)
{
    const struct wgf_tensor *a[64], *b[64];
    int                      n = tensors_of(g, a, 64);
    tensors_of(h, b, 64);
    int matrices = 0;
    for (int i = 0; i < n; i++) {
        if (b[i]->n_dims < 2) continue; /* 1-D norms: f32 on both sides, checked by the logits */
        int64_t        rows = wgf_tensor_nrows(b[i]), cols = wgf_tensor_ncols(b[i]);
        enum wgf_dtype want = cols % 32 ? WGF_DT_F16 : qt;
        if (a[i]->dtype != want) return snprintf(why, cap, "%s is %s, want %s", a[i]->name, wgf_dtype_str(a[i]->dtype), wgf_dtype_str(want)), false;
        matrices++;
        if (want == WGF_DT_F16) continue;
        uint64_t rb  = a[i]->nbytes / (uint64_t)rows;
        float   *row = malloc((size_t)cols * sizeof *row);
        uint8_t *enc = malloc((size_t)rb);
        for (int64_t r = 0; r < rows; r++) {
            wgf_tensor_row_f32(b[i], r, row);
            wgf__dtype_encode(qt, row, (uint64_t)cols, enc);
            if (memcmp(enc, (const uint8_t *)a[i]->data + (uint64_t)r * rb, (size_t)rb)) {
                snprintf(why, cap, "%s row %lld: wgf__quant_encode bytes differ from the file's", a[i]->name, (long long)r);
                free(row), free(enc);
                return false;
            }
        }
        free(row), free(enc);
    }
    return snprintf(why, cap, "%d matrices", matrices), true;
}

int main(void)
{
    struct wgf_t t = {0};
    check_hand_blocks(&t);

    char        dir[1024], p[1200], ex[1200], nm[200], why[1200];
    snprintf(dir, sizeof dir, "%s", wgf_t_tiny_llama());
    struct wgf_llm_model *hf = NULL;
    struct wgf_err        e  = {0};
    if (!wgf_t_check(&t, wgf_llm_model_load(dir, &hf, &e) == WGF_OK, "tiny_llama hf loads", "%s", e.msg)) return wgf_t_finish(&t);
    enum { V = 64 };
    snprintf(ex, sizeof ex, "%s/expected_gguf.txt", dir);
    double  pd[16];
    int32_t prompt[16];
    int     np = read_logits(ex, "prompt", pd, 16);
    for (int i = 0; i < np; i++) prompt[i] = (int32_t)pd[i];
    if (!wgf_t_check(&t, np >= 2 && prompt[0] == 1, "expected_gguf.txt prompt", "%d tokens", np)) return wgf_t_finish(&t);
    float hl[V];
    if (!wgf_t_check(&t, logits_after(hf, prompt, (uint32_t)np, hl, V, why, sizeof why), "tiny_llama hf logits", "%s", why))
        return wgf_t_finish(&t);

    static const struct {
        const char    *name;
        enum wgf_dtype dt;
    } files[] = {{"f32", WGF_DT_F32}, {"q8_0", WGF_DT_Q8_0}, {"q4_0", WGF_DT_Q4_0}};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        struct wgf_llm_model *g = NULL;
        snprintf(p, sizeof p, "%s/model-%s.gguf", dir, files[f].name);
        snprintf(nm, sizeof nm, "%s gguf loads", files[f].name);
        if (!wgf_t_check(&t, wgf_llm_model_load(p, &g, &e) == WGF_OK, nm, "%s", e.msg)) continue;
        const struct wgf_llm_config *c = &g->cfg, *hc = &hf->cfg;
        snprintf(nm, sizeof nm, "%s gguf config == hf", files[f].name);
        wgf_t_check(&t,
                    c->arch == WGF_ARCH_LLAMA && c->dim == hc->dim && c->n_layers == hc->n_layers && c->n_heads == hc->n_heads &&
                        c->n_kv_heads == hc->n_kv_heads && c->head_dim == hc->head_dim && c->hidden_dim == hc->hidden_dim &&
                        c->vocab_size == V && c->max_seq_len == hc->max_seq_len && c->norm_eps == hc->norm_eps &&
                        c->rope_theta == hc->rope_theta && c->tie_embeddings && c->bos_id == 1 && c->n_eos == 1 && c->eos_ids[0] == 2,
                    nm, "dim %d layers %d heads %d/%d hidden %d vocab %d tie %d", c->dim, c->n_layers, c->n_heads, c->n_kv_heads,
                    c->hidden_dim, c->vocab_size, c->tie_embeddings);
        if (files[f].dt == WGF_DT_F32) {
            snprintf(nm, sizeof nm, "f32 gguf weights == hf (q/k un-permuted)");
            wgf_t_check(&t, same_weights(g, hf, why, sizeof why), nm, "%s", why);
        } else {
            snprintf(nm, sizeof nm, "%s gguf blocks == wgf__quant_encode(hf rows) (q/k rows un-permuted)", files[f].name);
            wgf_t_check(&t, same_blocks(g, hf, files[f].dt, why, sizeof why), nm, "%s", why);
        }
        float lg[V];
        snprintf(nm, sizeof nm, "%s gguf logits", files[f].name);
        if (wgf_t_check(&t, logits_after(g, prompt, (uint32_t)np, lg, V, why, sizeof why), nm, "%s", why)) {
            if (files[f].dt == WGF_DT_F32) {
                double hd[V];
                for (int i = 0; i < V; i++) hd[i] = hl[i];
                wgf_t_check(&t, !memcmp(lg, hl, sizeof lg), "f32 gguf logits after the prompt == hf's (bitwise)", "max |diff| / max |logit| %.3g",
                            rel_diff(lg, hd, V));
            }
            double want[V];
            char   key[64];
            snprintf(key, sizeof key, "logits_after_prompt_%s", files[f].name);
            int n = read_logits(ex, key, want, V);
            snprintf(nm, sizeof nm, "%s expected logits read", files[f].name);
            if (wgf_t_check(&t, n == V, nm, "%s: %d of %d values under '%s'", ex, n, V, key)) {
                double r = rel_diff(lg, want, V);
                snprintf(nm, sizeof nm, "%s gguf logits after the prompt == python float64 reference", files[f].name);
                wgf_t_check(&t, r <= 4e-6, nm, "max |diff| / max |logit| = %.3g (tolerance 4e-6)", r);
            }
        }
        wgf_llm_model_free(g);
    }
    wgf_llm_model_free(hf);
    return wgf_t_finish(&t);
}
