/* One random model per architecture written by the test-model writer in every format,
 * loaded and run through cpu-ref: the logits agree within the storage dtype's rounding.
 * Errors are max |a - b| / max |b| over all 12 x 96 logits. The runs are deterministic
 * (seeded weights and tokens, f32 on the CPU); observed on 2026-12-01, the same in three
 * runs, max over llama / qwen2 / phi3, and each tolerance ~3x that:
 *   - HF f32 vs the naive f64 forward on the loaded weights (loader + forward end to end:
 *     Phi-3's fused qkv/gate_up slices, GGUF Llama's q/k un-permutation): observed 1.64e-7
 *     (~1 f32 ulp of the largest logit), tolerance 5e-7
 *   - GGUF F32 vs HF f32: bit-identical (same f32 values, same code path)
 *   - HF f16 vs GGUF F16 (same f16 matrices; GGUF keeps the norms in f32): observed 2.9e-4,
 *     tolerance 1e-3
 *   - vs HF f32, by storage dtype (observed ~ the dtype's relative rounding step: f16 2^-11
 *     = 4.9e-4, bf16 2^-8 = 3.9e-3, Q8_0 ~1/127 of a block's max, Q4_0 ~1/8 of it):
 *       f16  observed 4.4e-4 -> 1.5e-3      bf16 observed 3.6e-3 -> 1.2e-2
 *       Q8_0 observed 7.7e-3 -> 2.5e-2      Q4_0 observed 0.125  -> 0.2
 *     Q4_0's 0.2 is only 1.6x: its rounding alone moves the logits by 0.05-0.125 (llama's
 *     draw is the worst), and 3x would be a tolerance of 0.4 that no longer tells a 4-bit
 *     model from a broken one (clearing each nibble's low bit gives 0.16 .. 0.41).
 * Mutations caught (tried 2026-12-01, in src/llm/dtype.c wgf__dtype_decode): F16 read with
 * its 3 low mantissa bits cleared (rd16(..) & 0xFFF8): 2.1e-3 .. 3.6e-3, passed the old 2e-2,
 * fails f16 here for all three archs (and hf_f16 vs gguf_f16); Q8_0 quants with their 2 low
 * bits cleared (blk[2 + i] & 0xFC): 0.030 .. 0.055, the old 5e-2 caught llama only, 2.5e-2
 * catches all three. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "test_forward_model.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/llm_test_model.h"

#define NTOK 12

static float *run_file(struct wgf_t *t, const char *path, const int32_t *tok, struct wgf_llm_model **keep)
{
    struct wgf_err        err = {0};
    struct wgf_llm_model *m   = NULL;
    char                  nm[800];
    snprintf(nm, sizeof nm, "load %s", path);
    if (!wgf_t_check(t, wgf_llm_model_load(path, &m, &err) == WGF_OK, nm, "%s", err.msg)) return NULL;
    struct wgf_llm_backend         b;
    struct wgf_llm_backend_options bo = {.n_ctx = 32, .n_threads = 2};
    float                         *lg = NULL;
    if (wgf_llm_backend_open(&b, &wgf_llm_backend_ref, m, &bo, &err) == WGF_OK) {
        lg = malloc((size_t)NTOK * b.n_vocab * sizeof *lg);
        if (b.forward(&b, tok, NTOK, 0, lg, true, &err) != WGF_OK) free(lg), lg = NULL;
        wgf_llm_backend_close(&b);
    }
    if (!lg) wgf_t_check(t, false, nm, "forward: %s", err.msg);
    if (keep) *keep = m;
    else wgf_llm_model_free(m);
    return lg;
}

static double rel_max(const float *a, const float *b, size_t n)
{
    double m = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (d != d) return INFINITY;
        if (d > m) m = d;
        if (fabs((double)b[i]) > s) s = fabs((double)b[i]);
    }
    return s > 0 ? m / s : m;
}

static void one_arch(struct wgf_t *t, enum wgf_arch arch)
{
    struct wgf_test_model_spec s;
    wgf_test_model_spec_default(&s, arch);
    s.vocab_size = 96;
    char dir[512];
    wgf_t_tmpdir("forward_files", dir, sizeof dir);
    struct {
        enum wgf_test_model_format fmt;
        enum wgf_dtype             dt;
        const char                *tag;
        double                     tol; /* vs HF f32; 0 = must be bit-identical */
    } v[] = {
        {WGF_TEST_MODEL_HF, WGF_DT_F32, "hf_f32", 0},        {WGF_TEST_MODEL_GGUF, WGF_DT_F32, "gguf_f32", 0},
        {WGF_TEST_MODEL_HF, WGF_DT_F16, "hf_f16", 1.5e-3},     {WGF_TEST_MODEL_GGUF, WGF_DT_F16, "gguf_f16", 1.5e-3},
        {WGF_TEST_MODEL_HF, WGF_DT_BF16, "hf_bf16", 1.2e-2},   {WGF_TEST_MODEL_GGUF, WGF_DT_Q8_0, "gguf_q8_0", 2.5e-2},
        {WGF_TEST_MODEL_GGUF, WGF_DT_Q4_0, "gguf_q4_0", 2e-1},
    };
    enum { NV = sizeof v / sizeof v[0] };
    float  *lg[NV] = {0};
    int32_t tok[NTOK];
    struct wgf_rng r;
    wgf_rng_seed(&r, 31);
    for (int i = 0; i < NTOK; i++) tok[i] = (int32_t)wgf_rng_below(&r, (uint32_t)s.vocab_size);
    struct wgf_llm_model *m0 = NULL;
    size_t                n  = (size_t)NTOK * s.vocab_size;
    for (int i = 0; i < NV; i++) {
        char path[700], nm[200];
        snprintf(path, sizeof path, "%s/%s_%s%s", dir, wgf_arch_str(arch), v[i].tag, v[i].fmt == WGF_TEST_MODEL_GGUF ? ".gguf" : "");
        struct wgf_test_model_opts o = {.format = v[i].fmt, .dtype = v[i].dt};
        struct wgf_err             err = {0};
        snprintf(nm, sizeof nm, "%s %s: write", wgf_arch_str(arch), v[i].tag);
        if (!wgf_t_check(t, wgf_test_model_write(&s, &o, path, &err) == WGF_OK, nm, "%s", err.msg)) continue;
        lg[i] = run_file(t, path, tok, i == 0 ? &m0 : NULL);
        if (!lg[i] || i == 0) continue;
        double e = rel_max(lg[i], lg[0], n);
        snprintf(nm, sizeof nm, "%s %s vs hf_f32", wgf_arch_str(arch), v[i].tag);
        if (v[i].tol == 0) wgf_t_check(t, memcmp(lg[i], lg[0], n * sizeof(float)) == 0, nm, "bit-identical expected, rel max %.3g", e);
        else wgf_t_check(t, e < v[i].tol, nm, "rel max err %.3g (tolerance %.2g)", e, v[i].tol);
    }
    /* same f16 matrices, but GGUF keeps norms in f32 while HF rounds them to f16 too */
    if (lg[2] && lg[3]) {
        char nm[96];
        snprintf(nm, sizeof nm, "%s hf_f16 vs gguf_f16", wgf_arch_str(arch));
        double e = rel_max(lg[2], lg[3], n);
        wgf_t_check(t, e < 1e-3, nm, "rel max err %.3g (tolerance 1e-3: only the norms' rounding differs)", e);
    }
    /* the loaded f32 model vs the naive f64 forward (which reads the loaded tensors itself) */
    if (m0 && lg[0] && m0->cfg.rope_scaling.type == WGF_ROPE_SCALING_NONE) {
        double *ref = malloc(n * sizeof *ref);
        nv_forward(m0, tok, NTOK, ref);
        char nm[96];
        snprintf(nm, sizeof nm, "%s hf_f32 loaded vs naive f64", wgf_arch_str(arch));
        double e = tm_rel_max(lg[0], ref, n);
        wgf_t_check(t, e < 5e-7, nm, "rel max err %.3g (tolerance 5e-7)", e);
        free(ref);
    }
    wgf_llm_model_free(m0);
    for (int i = 0; i < NV; i++) free(lg[i]);
}

int main(void)
{
    struct wgf_t t = {0};
    one_arch(&t, WGF_ARCH_LLAMA);
    one_arch(&t, WGF_ARCH_QWEN2);
    one_arch(&t, WGF_ARCH_PHI3);
    return wgf_t_finish(&t);
}
