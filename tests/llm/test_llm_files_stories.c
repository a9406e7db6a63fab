/* LLM model files on a real checkpoint layout, an HF Llama directory (f32, tied):
 *   - the generated tiny_llama ($WGF_TINY_LLAMA) (always; CI): written by tests/llm/data/make_tiny_llama.py;
 *   - ../shared/models/stories260k (Karpathy's stories260K as an HF Llama directory; see
 *     shared/models/README.md) when present, else a loud SKIP.
 * Checks the config as the generator / README states it, that f32 matrices are views into
 * the mapping (no copy; lm_head is tok_embd), the weight bytes (tiny_llama: exactly the
 * 25,248 f32 its config implies), that every weight is finite, and HF -> GGUF -> load: F32
 * bit-identical, Q8_0 within half a quantization step plus the f16 scale's rounding.
 * Mutation caught on the CI model (tried 2026-12-01): src/llm/gguf_convert.c writing Llama
 * q/k rows without llama.cpp's permutation (so the loader's un-permutation scrambles them)
 * fails "tiny_llama gguf F32 == hf" and "... Q8_0 ~= hf" (worst excess 1.97), without ../shared. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "llm/gguf.h"
#include "wgfuse/llm.h"

static bool all_finite(const struct wgf_tensor *t)
{
    if (!t->data) return true;
    int64_t rows = wgf_tensor_nrows(t), cols = wgf_tensor_ncols(t);
    float  *row  = malloc((size_t)cols * sizeof *row);
    bool    ok   = true;
    for (int64_t r = 0; r < rows && ok; r++) {
        wgf_tensor_row_f32(t, r, row);
        for (int64_t c = 0; c < cols; c++) ok = ok && isfinite(row[c]);
    }
    free(row);
    return ok;
}

/* What a model directory must load as. */
struct want {
    int      dim, n_layers, n_heads, n_kv_heads, hidden, vocab, head_dim, max_seq;
    uint64_t bytes_lo, bytes_hi; /* weight bytes, inclusive */
};

static void check_dir(struct wgf_t *t, const char *name, const char *dir, const struct want *x)
{
    char                  nm[200];
    struct wgf_llm_model *m = NULL;
    struct wgf_err        e = {0};
    snprintf(nm, sizeof nm, "%s loads", name);
    if (!wgf_t_check(t, wgf_llm_model_load(dir, &m, &e) == WGF_OK, nm, "%s", e.msg)) return;
    const struct wgf_llm_config *c = &m->cfg;
    snprintf(nm, sizeof nm, "%s config", name);
    wgf_t_check(t,
                c->arch == WGF_ARCH_LLAMA && c->dim == x->dim && c->n_layers == x->n_layers && c->n_heads == x->n_heads &&
                    c->n_kv_heads == x->n_kv_heads && c->hidden_dim == x->hidden && c->vocab_size == x->vocab &&
                    c->head_dim == x->head_dim && c->max_seq_len == x->max_seq && c->tie_embeddings && !c->attn_bias && c->bos_id == 1 &&
                    c->n_eos == 1 && c->eos_ids[0] == 2 && !strcmp(c->source_dtype, "f32") && c->rope_theta == 10000.0f &&
                    c->rope_scaling.type == WGF_ROPE_SCALING_NONE,
                nm, "arch %s dim %d layers %d heads %d/%d hidden %d vocab %d tie %d bos %d dtype %s", wgf_arch_str(c->arch), c->dim,
                c->n_layers, c->n_heads, c->n_kv_heads, c->hidden_dim, c->vocab_size, c->tie_embeddings, c->bos_id,
                c->source_dtype);
    const struct wgf_llm_weights *w    = &m->weights;
    int                           last = c->n_layers - 1;
    snprintf(nm, sizeof nm, "%s weight views", name);
    wgf_t_check(t,
                w->lm_head.data == w->tok_embd.data && w->tok_embd.dtype == WGF_DT_F32 && w->tok_embd.shape[0] == x->vocab &&
                    w->tok_embd.shape[1] == x->dim && w->layers[last].wk.shape[0] == x->n_kv_heads * x->head_dim &&
                    w->layers[last].w_down.shape[1] == x->hidden,
                nm, "tied %d dtype %s", w->lm_head.data == w->tok_embd.data, wgf_dtype_str(w->tok_embd.dtype));
    uint64_t bytes = wgf_llm_model_weight_bytes(m);
    snprintf(nm, sizeof nm, "%s weight bytes", name);
    wgf_t_check(t, bytes >= x->bytes_lo && bytes <= x->bytes_hi, nm, "%llu (want %llu .. %llu)", (unsigned long long)bytes,
                (unsigned long long)x->bytes_lo, (unsigned long long)x->bytes_hi);
    bool fin = all_finite(&w->tok_embd) && all_finite(&w->out_norm);
    for (int l = 0; l < c->n_layers; l++) {
        const struct wgf_layer_weights *L = &w->layers[l];
        fin = fin && all_finite(&L->attn_norm) && all_finite(&L->wq) && all_finite(&L->wk) && all_finite(&L->wv) &&
              all_finite(&L->wo) && all_finite(&L->ffn_norm) && all_finite(&L->w_gate) && all_finite(&L->w_up) &&
              all_finite(&L->w_down);
    }
    snprintf(nm, sizeof nm, "%s weights finite", name);
    wgf_t_check(t, fin, nm, "%s", fin ? "all finite" : "non-finite weight found");
    wgf_llm_model_touch(m);

    /* HF -> GGUF (Llama q/k permuted as llama.cpp does) -> load: F32 bit-identical, Q8_0
     * within half a quantization step plus the f16 scale's rounding (0.0045 max|row|) */
    char tmp[512], p[900];
    wgf_t_tmpdir("llm_files_stories", tmp, sizeof tmp);
    static const enum wgf_dtype dts[] = {WGF_DT_F32, WGF_DT_Q8_0};
    for (int d = 0; d < 2; d++) {
        snprintf(p, sizeof p, "%s/%s-%s.gguf", tmp, name, wgf_dtype_str(dts[d]));
        struct wgf_llm_model *g = NULL;
        snprintf(nm, sizeof nm, "%s -> gguf -> load", name);
        if (!wgf_t_check(t, wgf_llm_model_save_gguf(m, p, dts[d], &e) == WGF_OK && wgf_llm_model_load(p, &g, &e) == WGF_OK, nm, "%s",
                         e.msg))
            continue;
        double                   worst      = 0;
        int                      mid        = c->n_layers / 2;
        const struct wgf_tensor *pairs[][2] = {{&g->weights.tok_embd, &w->tok_embd},
                                               {&g->weights.layers[mid].wq, &w->layers[mid].wq},
                                               {&g->weights.layers[mid].wk, &w->layers[mid].wk},
                                               {&g->weights.layers[last].w_down, &w->layers[last].w_down}};
        for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
            int64_t rows = wgf_tensor_nrows(pairs[i][1]), cols = wgf_tensor_ncols(pairs[i][1]);
            float  *a = malloc((size_t)cols * sizeof *a), *b = malloc((size_t)cols * sizeof *b);
            for (int64_t r = 0; r < rows; r++) {
                wgf_tensor_row_f32(pairs[i][0], r, a);
                wgf_tensor_row_f32(pairs[i][1], r, b);
                float mx = 0;
                for (int64_t k = 0; k < cols; k++) mx = fmaxf(mx, fabsf(b[k]));
                for (int64_t k = 0; k < cols; k++) {
                    double ex = fabs((double)a[k] - b[k]) - (dts[d] == WGF_DT_F32 ? 0 : 0.0045 * mx);
                    if (ex > worst) worst = ex;
                }
            }
            free(a);
            free(b);
        }
        snprintf(nm, sizeof nm, dts[d] == WGF_DT_F32 ? "%s gguf F32 == hf" : "%s gguf Q8_0 ~= hf", name);
        wgf_t_check(t, worst <= 0 && g->cfg.tie_embeddings && g->cfg.n_kv_heads == x->n_kv_heads && g->cfg.bos_id == 1, nm,
                    "worst excess %.3g", worst);
        wgf_llm_model_free(g);
    }
    wgf_llm_model_free(m);
}

int main(void)
{
    struct wgf_t t   = {0};
    const char  *src = getenv("WGF_SOURCE_DIR");
    char         dir[1024];
    /* tiny_llama (make_tiny_llama.py's CFG): 64x32 embedding + final norm, then per layer two
     * norms, q/o 32x32, k/v 16x32, gate/up 88x32, down 32x88: 2,080 + 2 x 11,584 f32 */
    const struct want tiny = {32, 2, 4, 2, 88, 64, 8, 128, 4 * 25248, 4 * 25248};
    snprintf(dir, sizeof dir, "%s", wgf_t_tiny_llama());
    check_dir(&t, "tiny_llama", dir, &tiny);

    /* stories260k: about 260K parameters, f32: 1.0 MB of weights */
    const struct want stories = {64, 5, 8, 4, 172, 512, 8, 512, 900000, 1200000};
    snprintf(dir, sizeof dir, "%s/../shared/models/stories260k", src ? src : ".");
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        wgf_t_skip(&t, "stories260k", "model directory ../shared/models/stories260k not present");
        return wgf_t_finish(&t);
    }
    check_dir(&t, "stories260k", dir, &stories);
    return wgf_t_finish(&t);
}
