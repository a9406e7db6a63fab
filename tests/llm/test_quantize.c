/* `wgfuse llm quantize` (issue 14): llama.cpp's mixture rules, the files it writes, and the
 * exactness promise: the quantized model and the same model with its weights replaced by
 * the dequantized values (written as F32) give the same cpu-ref logits. Tolerance 0: cpu-ref
 * decodes a quantized row into f32 and runs the same dot product over the same floats in
 * the same order as for an F32 row (tests/llm/test_quant.c checks the decoding itself).
 *
 * The rule tables below are worked out by hand from llama.cpp's llama_tensor_get_type
 * (docs/llm.md): use_more_bits(i, n) = i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "llm/gguf.h"
#include "llm/model_files.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/llm_test_model.h"

/* ---- rules ------------------------------------------------------------------------------ */

static void rules(struct wgf_t *t)
{
    /* 24 layers (Qwen2.5-0.5B): n/8 = 3, 7n/8 = 21, (i-3) % 3 == 2 at 5, 8, ..., 20 */
    static const int more24[] = {0, 1, 2, 5, 8, 11, 14, 17, 20, 21, 22, 23};
    bool             ok       = true;
    for (int l = 0; l < 24; l++) {
        bool more = false;
        for (size_t k = 0; k < sizeof more24 / sizeof more24[0]; k++) more = more || more24[k] == l;
        enum wgf_dtype want = more ? WGF_DT_Q6_K : WGF_DT_Q4_K;
        ok = ok && wgf__llm_quantize_pick("Q4_K_M", false, WGF__ROLE_FFN_DOWN, l, 24, 7, 4864) == want &&
             wgf__llm_quantize_pick("Q4_K_M", false, WGF__ROLE_ATTN_V, l, 24, 7, 1024) == want &&
             wgf__llm_quantize_pick("Q5_K_M", false, WGF__ROLE_FFN_DOWN, l, 24, 7, 4864) == (more ? WGF_DT_Q6_K : WGF_DT_Q5_K) &&
             wgf__llm_quantize_pick("Q4_K_M", false, WGF__ROLE_ATTN_Q, l, 24, 7, 1024) == WGF_DT_Q4_K &&
             wgf__llm_quantize_pick("Q4_K_M", false, WGF__ROLE_FFN_GATE, l, 24, 7, 1024) == WGF_DT_Q4_K;
    }
    wgf_t_check(t, ok, "Q4_K_M / Q5_K_M: attn_v and ffn_down in Q6_K at layers 0-2, 5, 8, ..., 20-23 of 24", "%s", ok ? "as worked out" : "a layer differs");
    /* fused attn_qkv (Phi-3) takes attn_v's rules, as llama.cpp's tensor categories give it
     * (tests/llm/test_llamacpp.py checks the types against llama.cpp itself). 8 layers: n/8 = 1,
     * 7n/8 = 7, (i-1) % 3 == 2 at 3, 6 -> more_bits at {0, 3, 6, 7} */
    ok = true;
    for (int l = 0; l < 8; l++) {
        bool more = l == 0 || l == 3 || l == 6 || l == 7;
        ok = ok && wgf__llm_quantize_pick("q4_k_m", false, WGF__ROLE_ATTN_QKV, l, 8, 1, 3072) == (more ? WGF_DT_Q6_K : WGF_DT_Q4_K) &&
             wgf__llm_quantize_pick("Q5_K_M", false, WGF__ROLE_ATTN_QKV, l, 8, 1, 3072) == (more ? WGF_DT_Q6_K : WGF_DT_Q5_K) &&
             wgf__llm_quantize_pick("Q4_K_S", false, WGF__ROLE_ATTN_QKV, l, 8, 1, 3072) == (l < 4 ? WGF_DT_Q5_K : WGF_DT_Q4_K) &&
             wgf__llm_quantize_pick("Q3_K_S", false, WGF__ROLE_ATTN_QKV, l, 8, 1, 3072) == WGF_DT_Q3_K &&
             wgf__llm_quantize_pick("Q3_K_L", false, WGF__ROLE_ATTN_QKV, l, 8, 1, 3072) == WGF_DT_Q5_K &&
             wgf__llm_quantize_pick("Q6_K", false, WGF__ROLE_ATTN_QKV, l, 8, 1, 3072) == WGF_DT_Q6_K &&
             wgf__llm_quantize_pick("Q4_K_M", true, WGF__ROLE_ATTN_QKV, l, 8, 1, 3072) == WGF_DT_Q4_K;
    }
    wgf_t_check(t, ok,
                "fused attn_qkv as attn_v: Q4_K_M / Q5_K_M Q6_K at layers 0, 3, 6, 7 of 8; Q4_K_S Q5_K in 0-3; Q3_K_L Q5_K; "
                "Q3_K_S, Q6_K, --pure the base",
                "%s", ok ? "as worked out" : "differs");
    /* Q4_K_S: attn_v Q5_K in the first 4 layers, ffn_down Q5_K in the first n/8 */
    ok = wgf__llm_quantize_pick("Q4_K_S", false, WGF__ROLE_ATTN_V, 3, 24, 7, 1024) == WGF_DT_Q5_K &&
         wgf__llm_quantize_pick("Q4_K_S", false, WGF__ROLE_ATTN_V, 4, 24, 7, 1024) == WGF_DT_Q4_K &&
         wgf__llm_quantize_pick("Q4_K_S", false, WGF__ROLE_FFN_DOWN, 2, 24, 7, 4864) == WGF_DT_Q5_K &&
         wgf__llm_quantize_pick("Q4_K_S", false, WGF__ROLE_FFN_DOWN, 3, 24, 7, 4864) == WGF_DT_Q4_K &&
         wgf__llm_quantize_pick("Q5_K_S", false, WGF__ROLE_ATTN_V, 0, 24, 7, 1024) == WGF_DT_Q5_K;
    wgf_t_check(t, ok, "Q4_K_S: attn_v layers 0-3 and ffn_down layers < n/8 in Q5_K; Q5_K_S has no bumps", "%s", ok ? "as worked out" : "differs");
    /* output (and tied token_embd): Q6_K, unless the base is Q8_0, or Q8_0 when the row is not
     * whole blocks of the base; untied token_embd stays in the base type */
    ok = wgf__llm_quantize_pick("Q4_0", false, WGF__ROLE_OUTPUT, -1, 24, 7, 1024) == WGF_DT_Q6_K &&
         wgf__llm_quantize_pick("Q8_0", false, WGF__ROLE_OUTPUT, -1, 24, 7, 1024) == WGF_DT_Q8_0 &&
         wgf__llm_quantize_pick("Q4_K_M", false, WGF__ROLE_OUTPUT, -1, 24, 7, 896) == WGF_DT_Q8_0 &&
         wgf__llm_quantize_pick("Q4_K_M", false, WGF__ROLE_TOKEN_EMBD, -1, 24, 7, 1024) == WGF_DT_Q4_K &&
         wgf__llm_quantize_pick("Q4_K_M", true, WGF__ROLE_OUTPUT, -1, 24, 7, 1024) == WGF_DT_Q4_K;
    wgf_t_check(t, ok, "output matrix: Q6_K, Q8_0 for Q8_0 or partial blocks; --pure keeps the base", "%s", ok ? "as worked out" : "differs");
    /* fallbacks for rows that are not whole super-blocks (Qwen2.5-0.5B's 896 columns):
     * Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0; 48 columns (not even 32) -> F16 */
    ok = wgf__llm_quantize_pick("Q4_K_M", false, WGF__ROLE_ATTN_Q, 0, 24, 7, 896) == WGF_DT_Q5_0 &&
         wgf__llm_quantize_pick("Q5_K_M", false, WGF__ROLE_ATTN_Q, 0, 24, 7, 896) == WGF_DT_Q5_1 &&
         wgf__llm_quantize_pick("Q4_K_M", false, WGF__ROLE_ATTN_V, 0, 24, 7, 896) == WGF_DT_Q8_0 &&
         wgf__llm_quantize_pick("Q6_K", false, WGF__ROLE_FFN_UP, 5, 24, 7, 896) == WGF_DT_Q8_0 &&
         wgf__llm_quantize_pick("Q4_K_M", false, WGF__ROLE_FFN_UP, 5, 24, 7, 48) == WGF_DT_F16 &&
         wgf__llm_quantize_pick("Q8_0", false, WGF__ROLE_FFN_UP, 5, 24, 7, 48) == WGF_DT_F16;
    wgf_t_check(t, ok, "fallbacks: Q4_K->Q5_0, Q5_K->Q5_1, Q6_K->Q8_0, F16 below 32", "%s", ok ? "as worked out" : "differs");
    ok = wgf__llm_quantize_pick("Q2_K_S", false, WGF__ROLE_ATTN_Q, 0, 24, 7, 1024) == WGF_DT_COUNT &&
         wgf__llm_quantize_pick("Q4_K", false, WGF__ROLE_FFN_DOWN, 0, 24, 7, 4864) == WGF_DT_Q6_K; /* Q4_K = Q4_K_M */
    wgf_t_check(t, ok, "recipe names: Q2_K_S (needs an imatrix) unknown here, Q4_K is llama-quantize's alias of Q4_K_M", "%s",
                ok ? "as worked out" : "differs");

    /* Q2_K: attn_v (and fused qkv) Q3_K, or Q4_K when n_gqa >= 4 (Llama-3.2-1B: 32 / 8 = 4;
     * Qwen2.5-0.5B: 14 / 2 = 7); ffn_down and attn_output Q3_K in every layer; the rest Q2_K,
     * untied token_embd included; output Q6_K */
    ok = true;
    for (int l = 0; l < 24; l++)
        ok = ok && wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_ATTN_V, l, 24, 2, 1024) == WGF_DT_Q3_K &&
             wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_ATTN_QKV, l, 24, 1, 3072) == WGF_DT_Q3_K &&
             wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_ATTN_V, l, 24, 4, 1024) == WGF_DT_Q4_K &&
             wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_ATTN_V, l, 24, 7, 1024) == WGF_DT_Q4_K &&
             wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_FFN_DOWN, l, 24, 7, 4864) == WGF_DT_Q3_K &&
             wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_ATTN_OUTPUT, l, 24, 7, 1024) == WGF_DT_Q3_K &&
             wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_ATTN_Q, l, 24, 7, 1024) == WGF_DT_Q2_K &&
             wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_ATTN_K, l, 24, 7, 1024) == WGF_DT_Q2_K &&
             wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_FFN_GATE, l, 24, 7, 1024) == WGF_DT_Q2_K &&
             wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_FFN_UP, l, 24, 7, 1024) == WGF_DT_Q2_K;
    ok = ok && wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_OUTPUT, -1, 24, 7, 1024) == WGF_DT_Q6_K &&
         wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_TOKEN_EMBD, -1, 24, 7, 1024) == WGF_DT_Q2_K &&
         wgf__llm_quantize_pick("Q2_K", true, WGF__ROLE_FFN_DOWN, 3, 24, 7, 1024) == WGF_DT_Q2_K;
    wgf_t_check(t, ok, "Q2_K: attn_v Q3_K (Q4_K at n_gqa >= 4), ffn_down and attn_output Q3_K, the rest Q2_K", "%s",
                ok ? "as worked out" : "differs");
    /* Q3_K_M (and its alias Q3_K): attn_v Q5_K in the first two layers, then Q4_K; ffn_down
     * Q5_K below n/16 (32 layers: 0, 1; 24: 0; 8: none), then Q4_K; attn_output Q4_K */
    ok = true;
    for (int l = 0; l < 32; l++)
        for (int k = 0; k < 2; k++) {
            const char *r = k ? "Q3_K" : "Q3_K_M";
            ok            = ok && wgf__llm_quantize_pick(r, false, WGF__ROLE_ATTN_V, l, 32, 4, 2048) == (l < 2 ? WGF_DT_Q5_K : WGF_DT_Q4_K) &&
                 wgf__llm_quantize_pick(r, false, WGF__ROLE_ATTN_QKV, l, 32, 1, 3072) == (l < 2 ? WGF_DT_Q5_K : WGF_DT_Q4_K) &&
                 wgf__llm_quantize_pick(r, false, WGF__ROLE_FFN_DOWN, l, 32, 4, 8192) == (l < 2 ? WGF_DT_Q5_K : WGF_DT_Q4_K) &&
                 wgf__llm_quantize_pick(r, false, WGF__ROLE_FFN_DOWN, l, 24, 7, 4864) == (l < 1 ? WGF_DT_Q5_K : WGF_DT_Q4_K) &&
                 wgf__llm_quantize_pick(r, false, WGF__ROLE_FFN_DOWN, l % 8, 8, 7, 4864) == WGF_DT_Q4_K &&
                 wgf__llm_quantize_pick(r, false, WGF__ROLE_ATTN_OUTPUT, l, 32, 4, 2048) == WGF_DT_Q4_K &&
                 wgf__llm_quantize_pick(r, false, WGF__ROLE_FFN_UP, l, 32, 4, 2048) == WGF_DT_Q3_K &&
                 wgf__llm_quantize_pick(r, false, WGF__ROLE_ATTN_Q, l, 32, 4, 2048) == WGF_DT_Q3_K;
        }
    wgf_t_check(t, ok, "Q3_K_M (= Q3_K): attn_v Q5_K in layers 0-1, ffn_down Q5_K below n/16, else Q4_K; attn_output Q4_K", "%s",
                ok ? "as worked out" : "differs");
    /* Q3_K_L: attn_v, ffn_down, attn_output Q5_K; Q3_K_S: no bumps; both Q6_K output */
    ok = wgf__llm_quantize_pick("Q3_K_L", false, WGF__ROLE_ATTN_V, 9, 24, 7, 1024) == WGF_DT_Q5_K &&
         wgf__llm_quantize_pick("Q3_K_L", false, WGF__ROLE_FFN_DOWN, 9, 24, 7, 4864) == WGF_DT_Q5_K &&
         wgf__llm_quantize_pick("Q3_K_L", false, WGF__ROLE_ATTN_OUTPUT, 9, 24, 7, 1024) == WGF_DT_Q5_K &&
         wgf__llm_quantize_pick("Q3_K_L", false, WGF__ROLE_FFN_GATE, 9, 24, 7, 1024) == WGF_DT_Q3_K &&
         wgf__llm_quantize_pick("Q3_K_L", false, WGF__ROLE_OUTPUT, -1, 24, 7, 1024) == WGF_DT_Q6_K &&
         wgf__llm_quantize_pick("Q3_K_S", false, WGF__ROLE_ATTN_V, 0, 24, 7, 1024) == WGF_DT_Q3_K &&
         wgf__llm_quantize_pick("Q3_K_S", false, WGF__ROLE_FFN_DOWN, 0, 24, 7, 4864) == WGF_DT_Q3_K &&
         wgf__llm_quantize_pick("Q3_K_S", false, WGF__ROLE_ATTN_OUTPUT, 0, 24, 7, 1024) == WGF_DT_Q3_K &&
         wgf__llm_quantize_pick("Q3_K_S", false, WGF__ROLE_OUTPUT, -1, 24, 7, 1024) == WGF_DT_Q6_K;
    wgf_t_check(t, ok, "Q3_K_L: attn_v, ffn_down, attn_output Q5_K; Q3_K_S: Q3_K throughout; output Q6_K", "%s", ok ? "as worked out" : "differs");
    /* fallbacks: Q2_K and Q3_K -> Q4_0 on 896 columns (and the bumped Q5_K -> Q5_1, Q4_K ->
     * Q5_0); the output matrix Q8_0 when its rows are not whole 256-blocks */
    ok = wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_FFN_UP, 3, 24, 7, 896) == WGF_DT_Q4_0 &&
         wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_ATTN_V, 3, 24, 7, 896) == WGF_DT_Q5_0 &&
         wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_ATTN_V, 3, 24, 2, 896) == WGF_DT_Q4_0 &&
         wgf__llm_quantize_pick("Q3_K_M", false, WGF__ROLE_FFN_UP, 3, 24, 7, 896) == WGF_DT_Q4_0 &&
         wgf__llm_quantize_pick("Q3_K_M", false, WGF__ROLE_ATTN_V, 0, 24, 7, 896) == WGF_DT_Q5_1 &&
         wgf__llm_quantize_pick("Q3_K_S", false, WGF__ROLE_OUTPUT, -1, 24, 7, 896) == WGF_DT_Q8_0 &&
         wgf__llm_quantize_pick("Q2_K", false, WGF__ROLE_FFN_UP, 3, 24, 7, 48) == WGF_DT_F16;
    wgf_t_check(t, ok, "fallbacks: Q2_K, Q3_K -> Q4_0 (llama.cpp's tensor_type_fallback), output Q8_0", "%s", ok ? "as worked out" : "differs");
}

/* ---- files -------------------------------------------------------------------------------- */

static float *logits(struct wgf_t *t, const struct wgf_llm_model *m, const int32_t *tok, int n, const char *what)
{
    struct wgf_err                 err = {0};
    struct wgf_llm_backend         b;
    struct wgf_llm_backend_options bo = {.n_ctx = 32, .n_threads = 2};
    float                         *lg = NULL;
    if (wgf_llm_backend_open(&b, &wgf_llm_backend_ref, m, &bo, &err) == WGF_OK) {
        lg = malloc((size_t)n * b.n_vocab * sizeof *lg);
        if (b.forward(&b, tok, (uint32_t)n, 0, lg, true, &err) != WGF_OK) free(lg), lg = NULL;
        wgf_llm_backend_close(&b);
    }
    if (!lg) wgf_t_check(t, false, what, "forward: %s", err.msg);
    return lg;
}

static void one(struct wgf_t *t, const char *dir, enum wgf_arch arch, const char *src, const char *type, bool pure)
{
    char out[600], f32[600], nm[200];
    snprintf(out, sizeof out, "%s/%s_%s%s.gguf", dir, wgf_arch_str(arch), type, pure ? "_pure" : "");
    snprintf(f32, sizeof f32, "%s/%s_%s%s_deq.gguf", dir, wgf_arch_str(arch), type, pure ? "_pure" : "");
    struct wgf_err                err = {0};
    struct wgf_llm_quantize_stats st;
    snprintf(nm, sizeof nm, "%s %s%s: quantize", wgf_arch_str(arch), type, pure ? " --pure" : "");
    if (!wgf_t_check(t, wgf_llm_quantize(src, out, type, pure, false, &st, &err) == WGF_OK, nm, "%s", err.msg)) return;
    struct wgf_llm_model *q = NULL, *d = NULL;
    snprintf(nm, sizeof nm, "%s %s: load the output and write it dequantized as F32", wgf_arch_str(arch), type);
    if (!wgf_t_check(t, wgf_llm_model_load(out, &q, &err) == WGF_OK && wgf_llm_model_save_gguf(q, f32, WGF_DT_F32, &err) == WGF_OK &&
                            wgf_llm_model_load(f32, &d, &err) == WGF_OK,
                     nm, "%s", err.msg)) {
        wgf_llm_model_free(q);
        return;
    }
    /* the types the rules give, tensor by tensor (2 layers: more_bits = layers 0 and 1) */
    const struct wgf_gguf *g  = wgf_llm_model_gguf(q);
    bool                   ok = true;
    int                    nq = 0;
    for (int64_t i = 0; i < wgf_gguf_n_tensors(g); i++) {
        struct wgf_gguf_tensor_info ti;
        wgf_gguf_tensor(g, i, &ti);
        char name[WGF_TENSOR_NAME_MAX];
        snprintf(name, sizeof name, "%.*s", (int)ti.name_len, ti.name);
        if (ti.n_dims == 1) {
            ok = ok && ti.dtype == WGF_DT_F32;
            continue;
        }
        enum wgf__role role = strstr(name, "token_embd") ? (q->cfg.tie_embeddings ? WGF__ROLE_OUTPUT : WGF__ROLE_TOKEN_EMBD)
                            : !strcmp(name, "output.weight") ? WGF__ROLE_OUTPUT
                            : strstr(name, "attn_qkv")        ? WGF__ROLE_ATTN_QKV
                            : strstr(name, "attn_q.")         ? WGF__ROLE_ATTN_Q
                            : strstr(name, "attn_k.")         ? WGF__ROLE_ATTN_K
                            : strstr(name, "attn_v.")         ? WGF__ROLE_ATTN_V
                            : strstr(name, "attn_output")     ? WGF__ROLE_ATTN_OUTPUT
                            : strstr(name, "ffn_gate")        ? WGF__ROLE_FFN_GATE
                            : strstr(name, "ffn_up")          ? WGF__ROLE_FFN_UP
                                                              : WGF__ROLE_FFN_DOWN;
        int            layer = strncmp(name, "blk.", 4) ? -1 : atoi(name + 4);
        enum wgf_dtype want  = wgf__llm_quantize_pick(type, pure, role, layer, q->cfg.n_layers, q->cfg.n_heads / q->cfg.n_kv_heads, ti.shape[1]);
        if (ti.dtype != want) {
            wgf_t_check(t, false, "types", "%s %s: tensor '%s' is %s, the rules say %s", wgf_arch_str(arch), type, name,
                        wgf_dtype_str(ti.dtype), wgf_dtype_str(want));
            ok = false;
        }
        nq += wgf_dtype_block_elems(ti.dtype) > 1;
    }
    snprintf(nm, sizeof nm, "%s %s: tensor types follow the rules", wgf_arch_str(arch), type);
    wgf_t_check(t, ok && nq > 0, nm, "%d quantized matrices", nq);
    /* metadata llama.cpp needs: file type, quantization version, the vocabulary */
    int64_t  fk = wgf_gguf_find(g, "general.file_type"), kv;
    uint64_t ntok = 0;
    snprintf(nm, sizeof nm, "%s %s: general.file_type and the tokenizer are written", wgf_arch_str(arch), type);
    bool meta_ok = fk >= 0 && wgf_gguf_find(g, "general.quantization_version") >= 0 &&
                   wgf_gguf_get_arr(g, "tokenizer.ggml.tokens", WGF_GGUF_STRING, &kv, &ntok, &err) == WGF_OK && ntok > 0;
    wgf_t_check(t, meta_ok, nm, "%llu tokens", (unsigned long long)ntok);
    /* exactness: quantized vs its own dequantized F32 twin */
    int32_t tok[9] = {1, 5, 9, 17, 33, 65, 2, 3, 4};
    float  *a = logits(t, q, tok, 9, nm), *b = logits(t, d, tok, 9, nm);
    if (a && b) {
        size_t n    = (size_t)9 * (size_t)q->cfg.vocab_size;
        double dmax = 0;
        for (size_t i = 0; i < n; i++) dmax = fmax(dmax, fabs((double)a[i] - b[i]));
        snprintf(nm, sizeof nm, "%s %s: cpu-ref logits == dequantized F32 model", wgf_arch_str(arch), type);
        wgf_t_check(t, memcmp(a, b, n * sizeof *a) == 0, nm, "max |diff| %.3g (tolerance 0)", dmax);
    }
    free(a);
    free(b);
    wgf_llm_model_free(q);
    wgf_llm_model_free(d);
}

/* One weight of the f32 source set to `value` (row 0 of blk.1.ffn_down), quantized to `type`:
 * refused in one line naming the tensor and `needle`. A NaN cannot be quantized; a finite
 * value past what the type holds (f16's 65504, a Q8_0 block whose f16 scale overflows) would
 * be written as Inf and is refused too. */
static void bad_weight(struct wgf_t *t, const char *dir, const char *src_gguf, float value, const char *type, const char *needle,
                       const char *name)
{
    struct wgf_gguf *g   = NULL;
    struct wgf_err   err = {0};
    FILE            *f   = fopen(src_gguf, "rb");
    size_t           n   = 0;
    uint8_t         *img = NULL;
    if (f && !fseek(f, 0, SEEK_END)) n = (size_t)ftell(f);
    if (f && n && (img = malloc(n)) && !fseek(f, 0, SEEK_SET) && fread(img, 1, n, f) == n && wgf_gguf_open_mem(img, n, "src", &g, &err) == WGF_OK) {
        int64_t                     i = wgf_gguf_find_tensor(g, "blk.1.ffn_down.weight");
        struct wgf_gguf_tensor_info ti;
        if (i >= 0) {
            wgf_gguf_tensor(g, i, &ti);
            memcpy((uint8_t *)(uintptr_t)ti.data + 4 * 70, &value, 4); /* f32 source: element 70 = row 0 */
        }
        wgf_gguf_close(g);
        char p[600], o[600];
        snprintf(p, sizeof p, "%s/bad.gguf", dir);
        snprintf(o, sizeof o, "%s/bad_q.gguf", dir);
        FILE *w = fopen(p, "wb");
        if (w) fwrite(img, 1, n, w), fclose(w);
        remove(o);
        enum wgf_status st = wgf_llm_quantize(p, o, type, true, false, NULL, &err);
        FILE           *out = fopen(o, "rb");
        wgf_t_check(t, st == WGF_ERR_FORMAT && strstr(err.msg, "blk.1.ffn_down.weight") && strstr(err.msg, needle) && strstr(err.msg, "element 70 ") &&
                           !strchr(err.msg, '\n') && !out,
                    name, "status %d, output %s: %s", (int)st, out ? "written" : "none", err.msg);
        if (out) fclose(out);
    } else wgf_t_check(t, false, name, "read the source: %s", err.msg);
    free(img);
    if (f) fclose(f);
}

static void cli(struct wgf_t *t, const char *dir, const char *src)
{
    char cmd[2000], out[4096];
    snprintf(cmd, sizeof cmd, "%s llm quantize %s %s/cli.gguf --type q4_k_m", wgf_t_cli(), src, dir);
    int rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(t, rc == 0 && strstr(out, "q6_k") && strstr(out, "q4_k"), "cli: llm quantize --type q4_k_m", "rc %d: %s", rc, out);
    /* Q3_K is llama-quantize's alias of Q3_K_M: Q5_K attn_v in layers 0-1, Q4_K ffn_down */
    snprintf(cmd, sizeof cmd, "%s llm quantize %s %s/cli3.gguf --type q3_k", wgf_t_cli(), src, dir);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(t, rc == 0 && strstr(out, "q3_k") && strstr(out, "q4_k") && strstr(out, "q5_k") && strstr(out, "q6_k"),
                "cli: llm quantize --type q3_k (Q3_K_M)", "rc %d: %s", rc, out);
    snprintf(cmd, sizeof cmd, "%s llm quantize %s %s/cli.gguf --type IQ2_XXS", wgf_t_cli(), src, dir);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(t, rc == 2 && strstr(out, "unknown type 'IQ2_XXS'"), "cli: unknown type is a usage error", "rc %d: %s", rc, out);
    snprintf(cmd, sizeof cmd, "%s llm quantize %s --type Q8_0", wgf_t_cli(), src);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(t, rc == 2 && strstr(out, "OUT is required"), "cli: missing OUT", "rc %d: %s", rc, out);
    snprintf(cmd, sizeof cmd, "%s llm quantize %s/missing %s/x.gguf --type Q8_0", wgf_t_cli(), dir, dir);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(t, rc == 1 && strstr(out, "missing"), "cli: missing input names the path, exit 1", "rc %d: %s", rc, out);
}

int main(void)
{
    struct wgf_t t = {0};
    rules(&t);
    char dir[512];
    wgf_t_tmpdir("quantize", dir, sizeof dir);
    /* rows of 256 so every k-quant applies; an f32 HF source and an f16 GGUF source */
    static const enum wgf_arch archs[] = {WGF_ARCH_QWEN2, WGF_ARCH_LLAMA, WGF_ARCH_PHI3};
    char                       nan_src[600] = "";
    for (size_t a = 0; a < sizeof archs / sizeof archs[0]; a++) {
        struct wgf_test_model_spec s;
        wgf_test_model_spec_default(&s, archs[a]);
        /* n_gqa: Qwen2 2, Llama 4 (Q2_K's attn_v bump), Phi-3 1 (fused qkv) */
        s.dim = 256, s.hidden_dim = 512, s.n_heads = 4, s.n_kv_heads = archs[a] == WGF_ARCH_PHI3 ? 4 : archs[a] == WGF_ARCH_LLAMA ? 1 : 2;
        s.vocab_size = 512;
        char hf[600], gg[600], nm[96];
        snprintf(hf, sizeof hf, "%s/%s_hf", dir, wgf_arch_str(archs[a]));
        snprintf(gg, sizeof gg, "%s/%s_f32.gguf", dir, wgf_arch_str(archs[a]));
        struct wgf_test_model_opts ho = {.format = WGF_TEST_MODEL_HF, .dtype = WGF_DT_F32, .with_test_tokenizer = true};
        struct wgf_test_model_opts go = {.format = WGF_TEST_MODEL_GGUF, .dtype = WGF_DT_F32, .with_test_tokenizer = true};
        struct wgf_err             err = {0};
        snprintf(nm, sizeof nm, "%s: write the sources", wgf_arch_str(archs[a]));
        if (!wgf_t_check(&t, wgf_test_model_write(&s, &ho, hf, &err) == WGF_OK && wgf_test_model_write(&s, &go, gg, &err) == WGF_OK, nm,
                         "%s", err.msg))
            continue;
        one(&t, dir, archs[a], hf, "Q4_K_M", false);
        one(&t, dir, archs[a], gg, "Q5_K_M", false);
        one(&t, dir, archs[a], a % 2 ? gg : hf, "Q2_K", false);
        one(&t, dir, archs[a], a % 2 ? hf : gg, "Q3_K_M", false);
        if (archs[a] == WGF_ARCH_QWEN2) {
            static const char *const more[] = {"Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K_S", "Q5_K_S", "Q6_K", "Q3_K_S", "Q3_K_L"};
            for (size_t k = 0; k < sizeof more / sizeof more[0]; k++) one(&t, dir, archs[a], k % 2 ? hf : gg, more[k], false);
            one(&t, dir, archs[a], hf, "Q4_K_M", true);
            snprintf(nan_src, sizeof nan_src, "%s", gg);
            cli(&t, dir, hf);
        }
    }
    if (nan_src[0]) {
        bad_weight(&t, dir, nan_src, NAN, "Q8_0", "NaN", "NaN weight: quantize refuses, naming the tensor");
        bad_weight(&t, dir, nan_src, 7e4f, "F16", "out of f16's range", "7e4 to F16: refused, not written as Inf");
        bad_weight(&t, dir, nan_src, -3e38f, "Q8_0", "out of q8_0's range", "-3e38 to Q8_0: refused, its scale would be Inf");
        bad_weight(&t, dir, nan_src, 3e38f, "Q4_K_M", "range", "3e38 to Q4_K_M: refused");
    }
    return wgf_t_finish(&t);
}
