/* LLM model files on a real checkpoint: ../shared/models/stories260k (Karpathy's
 * stories260K as an HF Llama directory, f32, tied; see shared/models/README.md). Skips
 * loudly when the directory is absent. Checks the config as the README states it, that
 * f32 matrices are views into the mapping (no copy), and that every weight is finite. */
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

int main(void)
{
    struct wgf_t t   = {0};
    const char  *src = getenv("WGF_SOURCE_DIR");
    char         dir[1024];
    snprintf(dir, sizeof dir, "%s/../shared/models/stories260k", src ? src : ".");
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        wgf_t_skip(&t, "stories260k", "model directory ../shared/models/stories260k not present");
        return wgf_t_finish(&t);
    }
    struct wgf_llm_model *m = NULL;
    struct wgf_err        e = {0};
    if (!wgf_t_check(&t, wgf_llm_model_load(dir, &m, &e) == WGF_OK, "stories260k loads", "%s", e.msg)) return wgf_t_finish(&t);
    const struct wgf_llm_config *c = &m->cfg;
    wgf_t_check(&t,
                c->arch == WGF_ARCH_LLAMA && c->dim == 64 && c->n_layers == 5 && c->n_heads == 8 && c->n_kv_heads == 4 &&
                    c->hidden_dim == 172 && c->vocab_size == 512 && c->head_dim == 8 && c->max_seq_len == 512 && c->tie_embeddings &&
                    !c->attn_bias && c->bos_id == 1 && c->n_eos == 1 && c->eos_ids[0] == 2 && !strcmp(c->source_dtype, "f32") &&
                    c->rope_theta == 10000.0f && c->rope_scaling.type == WGF_ROPE_SCALING_NONE,
                "stories260k config", "arch %s dim %d layers %d heads %d/%d hidden %d vocab %d tie %d bos %d dtype %s",
                wgf_arch_str(c->arch), c->dim, c->n_layers, c->n_heads, c->n_kv_heads, c->hidden_dim, c->vocab_size,
                c->tie_embeddings, c->bos_id, c->source_dtype);
    const struct wgf_llm_weights *w = &m->weights;
    wgf_t_check(&t, w->lm_head.data == w->tok_embd.data && w->tok_embd.dtype == WGF_DT_F32 && w->tok_embd.shape[0] == 512 &&
                        w->tok_embd.shape[1] == 64 && w->layers[4].wk.shape[0] == 32 && w->layers[4].w_down.shape[1] == 172,
                "stories260k weight views", "tied %d dtype %s", w->lm_head.data == w->tok_embd.data, wgf_dtype_str(w->tok_embd.dtype));
    /* about 260K parameters, f32: 1.0 MB of weights */
    uint64_t bytes = wgf_llm_model_weight_bytes(m);
    wgf_t_check(&t, bytes > 900000 && bytes < 1200000, "stories260k weight bytes", "%llu", (unsigned long long)bytes);
    bool fin = all_finite(&w->tok_embd) && all_finite(&w->out_norm);
    for (int l = 0; l < c->n_layers; l++) {
        const struct wgf_layer_weights *L = &w->layers[l];
        fin = fin && all_finite(&L->attn_norm) && all_finite(&L->wq) && all_finite(&L->wk) && all_finite(&L->wv) &&
              all_finite(&L->wo) && all_finite(&L->ffn_norm) && all_finite(&L->w_gate) && all_finite(&L->w_up) &&
              all_finite(&L->w_down);
    }
    wgf_t_check(&t, fin, "stories260k weights finite", "non-finite weight found");
    wgf_llm_model_touch(m);

    /* HF -> GGUF (Llama q/k permuted as llama.cpp does) -> load: F32 bit-identical, Q8_0
     * within half a quantization step plus the f16 scale's rounding (0.0045 max|row|) */
    char tmp[512], p[700];
    wgf_t_tmpdir("llm_files_stories", tmp, sizeof tmp);
    static const enum wgf_dtype dts[] = {WGF_DT_F32, WGF_DT_Q8_0};
    for (int d = 0; d < 2; d++) {
        snprintf(p, sizeof p, "%s/stories260k-%s.gguf", tmp, wgf_dtype_str(dts[d]));
        struct wgf_llm_model *g = NULL;
        if (!wgf_t_check(&t, wgf_llm_model_save_gguf(m, p, dts[d], &e) == WGF_OK && wgf_llm_model_load(p, &g, &e) == WGF_OK,
                         "stories260k -> gguf -> load", "%s", e.msg))
            continue;
        double worst = 0;
        const struct wgf_tensor *pairs[][2] = {{&g->weights.tok_embd, &w->tok_embd}, {&g->weights.layers[2].wq, &w->layers[2].wq},
                                               {&g->weights.layers[2].wk, &w->layers[2].wk}, {&g->weights.layers[4].w_down, &w->layers[4].w_down}};
        for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
            int64_t rows = wgf_tensor_nrows(pairs[i][1]), cols = wgf_tensor_ncols(pairs[i][1]);
            float  *x = malloc((size_t)cols * sizeof *x), *y = malloc((size_t)cols * sizeof *y);
            for (int64_t r = 0; r < rows; r++) {
                wgf_tensor_row_f32(pairs[i][0], r, x);
                wgf_tensor_row_f32(pairs[i][1], r, y);
                float mx = 0;
                for (int64_t k = 0; k < cols; k++) mx = fmaxf(mx, fabsf(y[k]));
                for (int64_t k = 0; k < cols; k++) {
                    double ex = fabs((double)x[k] - y[k]) - (dts[d] == WGF_DT_F32 ? 0 : 0.0045 * mx);
                    if (ex > worst) worst = ex;
                }
            }
            free(x);
            free(y);
        }
        wgf_t_check(&t, worst <= 0 && g->cfg.tie_embeddings && g->cfg.n_kv_heads == 4 && g->cfg.bos_id == 1,
                    dts[d] == WGF_DT_F32 ? "stories260k gguf F32 == hf" : "stories260k gguf Q8_0 ~= hf", "worst excess %.3g", worst);
        wgf_llm_model_free(g);
    }
    wgf_llm_model_free(m);
    return wgf_t_finish(&t);
}
