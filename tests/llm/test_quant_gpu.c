/* Quantized weights on the GPU (issue 14): the shader decodes ggml's blocks exactly.
 *
 * For every block type, and for a mixed file (types cycled over the matrices, tied
 * embedding, as a Q4_K_M file mixes them): the small Llama of test_quant_blocks.h written
 * as blocks and as F32 holding the expected floats. Each GPU plan that decodes blocks
 * (roles, fused, ops) runs the quantized file and must give cpu-ref's logits of the F32 twin
 * (every row of a 10-token prefill, and three one-token forwards from an empty cache through
 * the decode kernels: decode_err) within 1e-4 of the largest, and the same greedy ids over 8
 * decode steps (the on-device sampler
 * embeds each id from the quantized table: lib_embed's decoder). The roles plan runs every
 * type; fused and ops run the mixed file and Q4_K. The mixed file's W_qkv gets one part per
 * type and its interleaved gate/up rows (two types) the float fallback; a smaller binding
 * limit splits the larger matrices into row parts (mixed, Q6_K). The mega plan refuses
 * quantized rows with a message (WGF_ERR_UNSUPPORTED), which the dial turns into a skip.
 * Then the same check on files `wgfuse llm quantize` writes (what the quantizers produce,
 * in a recipe's mixture) against their dequantized F32 twins: Q2_K through every plan.
 *
 * Files whose matrices mix types one wider type holds exactly (widen_q8_0: Q4_0, Q5_0, Q8_0;
 * widen_q5_k: Q4_K, Q5_K) run as that type, one part per matrix; a W_qkv of types that do not
 * widen (split_qkv, mixed) runs its parts in one dispatch (check_widened).
 *
 * Mutations this catches (tried): Q4_K's scale/min swapped in qscale_min_k4; Q6_K's high
 * bits shifted by k instead of 2k; Q5_0's qh bit of the high half off by 16; the Q8_0 d
 * region one word early in gr_quant.c; lib_rows_q ignoring WOFF (the ops plans' k rows);
 * gr_qwiden_row taking 15 off Q5_0's high half; Q4_1 / Q5_1's codes' term scaled by 0.999 in
 * lib_rows_q's decode dot (only decode_err sees it: prefill runs the matmul kernels, and the
 * ids did not flip; a 0.99 scale passed every check before the Q4_1 / Q5_1 test blocks were
 * centred, test_quant_blocks.h); the greedy argmax's partials counted from lm_head's float
 * layout instead of its quantized parts' (check_negative: ids all 0 when every logit is below
 * zero). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "harness.h"
#include "test_quant_blocks.h"
#include "wgfuse/gpu.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/llm_test_model.h"

#define N_GEN 8

struct ids {
    int32_t id[N_GEN + 4];
    int     n;
};
static int on_id(void *u, int32_t id)
{
    struct ids *x = u;
    if (x->n < N_GEN + 4) x->id[x->n] = id;
    x->n++;
    return 0;
}

/* logits of every row of tok, and N_GEN greedy ids after it (decode when the backend has it) */
static enum wgf_status run(const struct wgf_llm_backend *proto, struct wgf_llm_model *m,
                           const struct wgf_llm_backend_options *o, const int32_t *tok, float *lg, struct ids *ids,
                           struct wgf_err *err)
{
    struct wgf_llm_backend b;
    enum wgf_status        s = wgf_llm_backend_open(&b, proto, m, o, err);
    if (s) return s;
    s = b.forward(&b, tok, M_NTOK, 0, lg, true, err);
    ids->n = 0;
    if (!s && b.decode) {
        struct wgf_sampler        sm = {0};
        struct wgf_sampler_params sp = wgf_sampler_params_default();
        sp.temperature               = 0;
        s                            = wgf_sampler_init(&sm, &sp, b.n_vocab, err);
        uint32_t                  n  = 0;
        struct wgf_llm_decode_req rq = {.sampler = &sm, .pos = M_NTOK, .max_ids = N_GEN, .on_id = on_id, .user = ids};
        if (!s) s = b.decode(&b, &rq, &n, err);
        wgf_sampler_free(&sm);
    } else if (!s) { /* host greedy over forward: the reference's ids */
        float   *row = malloc((size_t)b.n_vocab * sizeof *row);
        int32_t  cur = 0;
        for (uint32_t j = 0; j < b.n_vocab; j++)
            if (lg[(size_t)(M_NTOK - 1) * b.n_vocab + j] > lg[(size_t)(M_NTOK - 1) * b.n_vocab + (uint32_t)cur]) cur = (int32_t)j;
        for (int g = 0; g < N_GEN && !s && row; g++) {
            on_id(ids, cur);
            if ((s = b.forward(&b, &cur, 1, (uint32_t)(M_NTOK + g), row, false, err))) break;
            int32_t best = 0;
            for (uint32_t j = 1; j < b.n_vocab; j++)
                if (row[j] > row[best]) best = (int32_t)j;
            cur = best;
        }
        if (!row) s = wgf_fail(err, WGF_ERR_NOMEM, "row");
        free(row);
    }
    wgf_llm_backend_close(&b);
    return s;
}

/* largest |a - b| of row r over that row's largest |b| */
static double row_err(const float *a, const float *b, uint32_t r)
{
    double d = 0, m = 0;
    for (uint32_t j = 0; j < M_VOCAB; j++) {
        double e = fabs((double)a[(size_t)r * M_VOCAB + j] - b[(size_t)r * M_VOCAB + j]);
        d        = isnan(e) ? INFINITY : fmax(d, e);
        m        = fmax(m, fabs((double)b[(size_t)r * M_VOCAB + j]));
    }
    return m > 0 ? d / m : INFINITY;
}

/* --activations q8 on the quantized model: cpu-ref rounds every quantized matrix's input to
 * int8 per 32 (wgf__quant_round_q8), the GPU plans round in their kernels (lib_rows_q in
 * decode, qround_rows before the prefill matmuls) and take integer dot products. Rounding is
 * discontinuous: where the two sides' inputs differ in the last bit (a norm's inverseSqrt
 * against 1 / sqrtf, another summation order) a value at a half step rounds apart, and the
 * logits then differ by about one step (~1e-2 on this model; this model's activations sit on
 * grids, quantized embeddings and norm weights in steps of 1e-3, so half steps are common).
 * So each of Q8_TOKENS one-token forwards from an empty cache is a trial, through the decode
 * kernels (one token, last logits) and through prefill (all logits): a trial equal to
 * cpu-ref's within 1e-4 had every rounding and every dot equal, which a kernel rounding by
 * another rule, not rounding, or decoding a block wrong never is; at least 2 of Q8_TOKENS
 * per path must be, and none beyond 5e-2. And q8 is not the exact result. */
#define Q8_TOKENS 6
static void check_q8(struct wgf_t *t, wgf_ctx *ctx, const char *tag, struct wgf_llm_model *mq, const float *exact,
                     bool every_plan)
{
    char                           nm[200];
    struct wgf_err                 err = {0};
    float                          ref[Q8_TOKENS][M_VOCAB], got[M_VOCAB];
    struct wgf_llm_backend         cb;
    struct wgf_llm_backend_options co = {.n_ctx = 8, .n_threads = 2, .act_q8 = true};
    bool                           ok = wgf_llm_backend_open(&cb, &wgf_llm_backend_ref, mq, &co, &err) == WGF_OK;
    for (int k = 0; k < Q8_TOKENS && ok; k++) {
        int32_t tok = (int32_t)(7 * k + 3) % M_VOCAB;
        cb.reset(&cb);
        ok = cb.forward(&cb, &tok, 1, 0, ref[k], false, &err) == WGF_OK;
    }
    if (ok) wgf_llm_backend_close(&cb);
    snprintf(nm, sizeof nm, "%s: cpu-ref --activations q8", tag);
    if (!wgf_t_check(t, ok, nm, "%s", ok ? "ok" : err.msg)) return;
    /* the exact logits' row 0 is the first test token's from an empty cache as well */
    float row0[M_VOCAB];
    cb = (struct wgf_llm_backend){0};
    co.act_q8 = false;
    int32_t tok0 = 3;
    ok = wgf_llm_backend_open(&cb, &wgf_llm_backend_ref, mq, &co, &err) == WGF_OK &&
         cb.forward(&cb, &tok0, 1, 0, row0, false, &err) == WGF_OK;
    if (ok) wgf_llm_backend_close(&cb);
    (void)exact;
    double e0 = ok ? row_err(ref[0], row0, 0) : INFINITY;
    snprintf(nm, sizeof nm, "%s: cpu-ref q8 differs from exact, within 5e-2", tag);
    wgf_t_check(t, ok && e0 > 1e-6 && e0 <= 5e-2, nm, "token 3 from an empty cache: %.3g", e0);
    const struct wgf_llm_backend *plans[] = {&wgf_llm_backend_gpu_roles, &wgf_llm_backend_gpu_ops};
    for (size_t p = 0; p < (every_plan ? 2u : 1u); p++) {
        /* a workgroup floor of 1: the most rows per workgroup, so ffn_down (1024 columns) takes
         * several items per invocation, the layout the H200 runs its large matrices in */
        struct wgf_llm_backend_options go = {
            .n_ctx = 8, .gpu = ctx, .weights_f32 = true, .act_q8 = true, .q8_min_workgroups = 1};
        struct wgf_llm_backend         gb;
        snprintf(nm, sizeof nm, "%s: %s --activations q8 == cpu-ref q8", tag, plans[p]->plan);
        enum wgf_status s = wgf_llm_backend_open(&gb, plans[p], mq, &go, &err);
        if (s == WGF_ERR_UNSUPPORTED && strstr(err.msg, "interleaves rows of different types")) {
            /* the mixed file's gate/up pairs (two types alternating): refused, not rounded apart */
            snprintf(nm, sizeof nm, "%s: %s --activations q8 refuses interleaved row types", tag, plans[p]->plan);
            wgf_t_check(t, true, nm, "%s", err.msg);
            continue;
        }
        if (s != WGF_OK) {
            wgf_t_check(t, false, nm, "%s", err.msg);
            continue;
        }
        uint32_t close[2] = {0, 0};
        double   worst    = 0;
        for (int path = 0; path < 2 && ok; path++)
            for (int k = 0; k < Q8_TOKENS && ok; k++) {
                int32_t tok = (int32_t)(7 * k + 3) % M_VOCAB;
                gb.reset(&gb);
                ok = gb.forward(&gb, &tok, 1, 0, got, path == 1, &err) == WGF_OK;
                double e = ok ? row_err(got, ref[k], 0) : INFINITY;
                close[path] += e <= 1e-4;
                worst = fmax(worst, e);
            }
        wgf_llm_backend_close(&gb);
        wgf_t_check(t, ok && close[0] >= 2 && close[1] >= 2 && worst <= 5e-2, nm,
                    "%s; one-token forwards within 1e-4 of cpu-ref q8: decode kernels %u of %d, prefill %u of %d "
                    "(2 needed each); largest %.3g (<= 5e-2)",
                    ok ? "ok" : err.msg, close[0], Q8_TOKENS, close[1], Q8_TOKENS, worst);
        ok = true;
    }
}

/* Exact activations through the decode kernels: ONE_TOKENS one-token forwards from an empty
 * cache (one row, the decode kernels' path) on the quantized model mq against cpu-ref on its
 * F32 twin mf; the largest row error, INFINITY when a forward fails. The prompt's logits
 * (check_files) go through prefill's matmul, and greedy ids only see a decode error that flips
 * an argmax: a decode kernel that scaled Q5_1's codes by 0.99 passed those. */
#define ONE_TOKENS 3
static double decode_err(const struct wgf_llm_backend *plan, struct wgf_llm_model *mq, struct wgf_llm_model *mf,
                         const struct wgf_llm_backend_options *go, struct wgf_err *err)
{
    struct wgf_llm_backend         gb, cb;
    struct wgf_llm_backend_options co = {.n_ctx = 8, .n_threads = 2};
    float                          got[M_VOCAB], ref[M_VOCAB];
    if (wgf_llm_backend_open(&gb, plan, mq, go, err) != WGF_OK) return INFINITY;
    if (wgf_llm_backend_open(&cb, &wgf_llm_backend_ref, mf, &co, err) != WGF_OK) {
        wgf_llm_backend_close(&gb);
        return INFINITY;
    }
    double worst = 0;
    for (int k = 0; k < ONE_TOKENS && worst < INFINITY; k++) {
        int32_t tok = (int32_t)(7 * k + 3) % M_VOCAB;
        gb.reset(&gb);
        cb.reset(&cb);
        bool ok = gb.forward(&gb, &tok, 1, 0, got, false, err) == WGF_OK &&
                  cb.forward(&cb, &tok, 1, 0, ref, false, err) == WGF_OK;
        worst   = ok ? fmax(worst, row_err(got, ref, 0)) : INFINITY;
    }
    wgf_llm_backend_close(&gb);
    wgf_llm_backend_close(&cb);
    return worst;
}

/* The quantized file qp on the GPU plans against cpu-ref on its f32 twin fp.
 * every_plan: fused and ops too (else roles alone: each type's decoder in every role);
 * parts: roles again with 64 KiB bindings (row parts); and roles with a workgroup floor of 1,
 * so the gemv parts take their type's most rows per group (q_cfg: up to 4); and roles with
 * --activations i8x3 (act_i8x3: the decode rows take the activations as three int8 digits,
 * ACT_X3), plain (every plan) and at that floor. */
static void check_files(struct wgf_t *t, wgf_ctx *ctx, const char *tag, const char *qp, const char *fp, bool every_plan,
                        bool parts)
{
    char           nm[200];
    struct wgf_err err = {0};
    struct wgf_llm_model *mq = NULL, *mf = NULL;
    snprintf(nm, sizeof nm, "%s: load", tag);
    if (!wgf_t_check(t, wgf_llm_model_load(qp, &mq, &err) == WGF_OK && wgf_llm_model_load(fp, &mf, &err) == WGF_OK, nm,
                     "%s", err.msg)) {
        wgf_llm_model_free(mq);
        return;
    }
    int32_t        tok[M_NTOK];
    struct wgf_rng r;
    wgf_rng_seed(&r, 99);
    for (int i = 0; i < M_NTOK; i++) tok[i] = (int32_t)wgf_rng_below(&r, M_VOCAB);
    size_t     n    = (size_t)M_NTOK * M_VOCAB;
    float     *ref  = malloc(n * sizeof *ref), *got = malloc(n * sizeof *got);
    struct ids rids = {0};
    struct wgf_llm_backend_options co = {.n_ctx = 32, .n_threads = 2};
    snprintf(nm, sizeof nm, "%s: cpu-ref of the f32 twin", tag);
    if (!wgf_t_check(t, ref && got && run(&wgf_llm_backend_ref, mf, &co, tok, ref, &rids, &err) == WGF_OK, nm, "%s",
                     err.msg))
        goto out;
    const struct wgf_llm_backend *plans[] = {&wgf_llm_backend_gpu_roles, &wgf_llm_backend_gpu_fused,
                                             &wgf_llm_backend_gpu_ops};
    /* 64 KiB bindings: the larger matrices of the test model in several row parts (each part
     * is its own pipeline, which lavapipe compiles at its first dispatch: a few, not dozens) */
    const uint64_t binds[] = {0, 65536, 0, 0, 0, 0, 0};
    static const char *const layout[] = {"", " (row parts)", " (gemv rows per group)", " --activations i8x3",
                                         " --activations i8x3 (gemv rows per group)",
                                         " (grids spread over 5 units)", " (grids spread over 5 units, no subgroups)"};
    for (size_t p = 0; p < (every_plan ? sizeof plans / sizeof plans[0] : 1); p++)
        for (size_t bi = 0; bi < 7; bi++) {
            /* the part split and the layout are the same code in every plan; i8x3 is each plan's
             * prelude (the fused and ops plans build their gemv parts apart) */
            if (bi > 0 && bi != 3 && p > 0) continue;
            if (bi == 1 && !parts) continue;
            /* 5 units: the K-quant norm-prologue layouts (taken with q_min_workgroups 1) of grids
             * of at most 20 workgroups grow them (cfg_spread: W_qkv's 8 of 256 invocations become
             * 5 of 416), no power of two: the reductions, subgroups or workgroup memory, must still
             * sum every invocation (a tree starting at WG / 2 fails the decode check) */
            if (bi >= 5 && !every_plan && strcasecmp(tag, "Q5_K") && strcasecmp(tag, "Q6_K")) continue;
            struct wgf_llm_backend_options go = {.n_ctx             = 32,
                                                 .gpu               = ctx,
                                                 .weights_f32       = true,
                                                 .max_binding_bytes = binds[bi],
                                                 .act_i8x3          = bi == 3 || bi == 4,
                                                 .q_min_workgroups  = bi == 2 || bi >= 5 ? 1 : 0,
                                                 .q8_min_workgroups = bi == 4 ? 1 : 0,
                                                 .compute_units     = bi >= 5 ? 5 : 0,
                                                 .no_subgroups      = bi == 6};
            struct ids ids = {0};
            snprintf(nm, sizeof nm, "%s: %s%s quantized == cpu-ref f32 twin", tag, plans[p]->plan, layout[bi]);
            if (run(plans[p], mq, &go, tok, got, &ids, &err) != WGF_OK) {
                wgf_t_check(t, false, nm, "%s", err.msg);
                continue;
            }
            if (getenv("WGF_TEST_VERBOSE")) printf("%s done\n", nm);
            double dmax = 0, smax = 0;
            for (size_t i = 0; i < n; i++) {
                double d = fabs((double)got[i] - ref[i]);
                dmax     = isnan(d) || d > dmax ? (isnan(d) ? INFINITY : d) : dmax;
                smax     = fmax(smax, fabs((double)ref[i]));
            }
            bool same_ids = ids.n == rids.n && !memcmp(ids.id, rids.id, sizeof(int32_t) * (size_t)(ids.n < N_GEN ? ids.n : N_GEN));
            wgf_t_check(t, smax > 0 && dmax <= 1e-4 * smax && same_ids, nm,
                        "logits max |diff| %.3g of %.3g (tolerance 1e-4 relative); greedy ids %s (%d)", dmax, smax,
                        same_ids ? "equal" : "DIFFER", ids.n);
            if (bi == 1) continue; /* row parts: the same decoders over other bindings */
            snprintf(nm, sizeof nm, "%s: %s%s decode kernels == cpu-ref f32 twin", tag, plans[p]->plan, layout[bi]);
            double e = decode_err(plans[p], mq, mf, &go, &err);
            wgf_t_check(t, e <= 1e-4, nm, "%d one-token forwards from an empty cache: largest %.3g of the row's largest "
                        "(tolerance 1e-4)%s%s", ONE_TOKENS, e, e < INFINITY ? "" : ": ", e < INFINITY ? "" : err.msg);
        }
    check_q8(t, ctx, tag, mq, ref, every_plan);
    /* mega: refused with the reason */
    struct wgf_llm_backend         b;
    struct wgf_llm_backend_options go = {.n_ctx = 32, .gpu = ctx, .weights_f32 = true};
    enum wgf_status                s  = wgf_llm_backend_open(&b, &wgf_llm_backend_gpu_mega, mq, &go, &err);
    if (s == WGF_OK) wgf_llm_backend_close(&b);
    snprintf(nm, sizeof nm, "%s: mega refuses quantized rows", tag);
    wgf_t_check(t, s == WGF_ERR_UNSUPPORTED && strstr(err.msg, "quantized"), nm, "status %d: %s", (int)s, err.msg);
out:
    free(ref);
    free(got);
    wgf_llm_model_free(mq);
    wgf_llm_model_free(mf);
}

/* One dispatch per matrix on the roles plan, as the f32 twin (one type per matrix) has: a
 * file whose matrices mix block types one wider type holds exactly (widen_*: Q4_0, Q5_0 in
 * Q8_0; Q4_K in Q5_K: gr_qwidens) reads each as one part; a W_qkv of parts that do not widen
 * (split_qkv: Q4_K q/k, Q6_K v; mixed: three types) is one dispatch over its parts
 * (attn_qkv's instances). check_files has already run the logits, ids and q8 checks. */
static void check_widened(struct wgf_t *t, wgf_ctx *ctx, const char *tag, const char *qp, const char *fp)
{
    char                           nm[200];
    struct wgf_err                 err = {0};
    struct wgf_llm_model          *mq = NULL, *mf = NULL;
    struct wgf_llm_backend         bq = {0}, bf = {0};
    struct wgf_llm_backend_options go = {.n_ctx = 8, .gpu = ctx, .weights_f32 = true};
    bool oq = false, of = false;
    bool ok = wgf_llm_model_load(qp, &mq, &err) == WGF_OK && wgf_llm_model_load(fp, &mf, &err) == WGF_OK &&
              (oq = wgf_llm_backend_open(&bq, &wgf_llm_backend_gpu_roles, mq, &go, &err) == WGF_OK) &&
              (of = wgf_llm_backend_open(&bf, &wgf_llm_backend_gpu_roles, mf, &go, &err) == WGF_OK);
    snprintf(nm, sizeof nm, "%s: one dispatch per matrix: dispatches per token as the f32 twin's", tag);
    wgf_t_check(t, ok && bq.dispatches_per_token == bf.dispatches_per_token, nm, "%s: %u against %u",
                ok ? "ok" : err.msg, bq.dispatches_per_token, bf.dispatches_per_token);
    if (oq) wgf_llm_backend_close(&bq);
    if (of) wgf_llm_backend_close(&bf);
    wgf_llm_model_free(mq);
    wgf_llm_model_free(mf);
}

/* random blocks of `types` (cycled over the matrices) */
static void check_type(struct wgf_t *t, wgf_ctx *ctx, const char *dir, const char *tag, const enum wgf_dtype *types,
                       int ntypes, bool tied, bool every_plan, bool parts)
{
    char qp[600], fp[600], nm[200];
    snprintf(qp, sizeof qp, "%s/%s_q.gguf", dir, tag);
    snprintf(fp, sizeof fp, "%s/%s_f32.gguf", dir, tag);
    struct wgf_err err = {0};
    snprintf(nm, sizeof nm, "%s: write quantized and f32 twins", tag);
    if (!wgf_t_check(t, write_pair(qp, fp, types, ntypes, tied, &err) == WGF_OK, nm, "%s", err.msg)) return;
    check_files(t, ctx, tag, qp, fp, every_plan, parts);
    if (!strncmp(tag, "widen", 5) || !strcmp(tag, "split_qkv") || !strcmp(tag, "mixed")) check_widened(t, ctx, tag, qp, fp);
}

/* Every logit below zero (write_pair_signed's neg model) with a quantized lm_head (Q6_K, as a
 * Q4_K_M file's): the device's greedy argmax must still pick cpu-ref's ids. Its partials are
 * one per lm_head workgroup; counted from the matrix's float layout instead of its quantized
 * parts' (the bug 804d671 fixed), unwritten partials (0.0, id 0) beat every real logit and the
 * ids come out all 0. */
static void check_negative(struct wgf_t *t, wgf_ctx *ctx, const char *dir)
{
    char qp[600], fp[600], nm[200];
    snprintf(qp, sizeof qp, "%s/neg_q.gguf", dir);
    snprintf(fp, sizeof fp, "%s/neg_f32.gguf", dir);
    const enum wgf_dtype  ty[] = {WGF_DT_Q8_0, WGF_DT_Q4_K, WGF_DT_Q6_K};
    struct wgf_err        err  = {0};
    struct wgf_llm_model *mf   = NULL;
    float                *lg   = malloc((size_t)M_NTOK * M_VOCAB * sizeof *lg);
    int32_t               tok[M_NTOK];
    for (int i = 0; i < M_NTOK; i++) tok[i] = (int32_t)((7 * i + 3) % M_VOCAB);
    struct ids                     rids = {0};
    struct wgf_llm_backend_options co   = {.n_ctx = 32, .n_threads = 2};
    bool ok = lg && write_pair_signed(qp, fp, ty, 3, false, true, &err) == WGF_OK && wgf_llm_model_load(fp, &mf, &err) == WGF_OK &&
              run(&wgf_llm_backend_ref, mf, &co, tok, lg, &rids, &err) == WGF_OK;
    float top = -INFINITY;
    for (size_t i = 0; ok && i < (size_t)M_NTOK * M_VOCAB; i++) top = fmaxf(top, lg[i]);
    wgf_llm_model_free(mf);
    free(lg);
    snprintf(nm, sizeof nm, "neg_logits: the test model's logits are all below zero (cpu-ref)");
    if (wgf_t_check(t, ok && top < 0, nm, "%s: largest logit %g", ok ? "ok" : err.msg, (double)top))
        check_files(t, ctx, "neg_logits", qp, fp, false, false);
}

/* A file `wgfuse llm quantize` writes with `recipe` from an f32 test Llama of the same
 * shape (n_gqa 4: Q2_K's attn_v is Q4_K), and its dequantized F32 twin. */
static void check_recipe(struct wgf_t *t, wgf_ctx *ctx, const char *dir, const char *recipe, bool every_plan)
{
    char qp[600], fp[600], src[600], nm[200];
    snprintf(src, sizeof src, "%s/recipe_src", dir);
    snprintf(qp, sizeof qp, "%s/%s_q.gguf", dir, recipe);
    snprintf(fp, sizeof fp, "%s/%s_f32.gguf", dir, recipe);
    struct wgf_test_model_spec s;
    wgf_test_model_spec_default(&s, WGF_ARCH_LLAMA);
    s.dim = M_DIM, s.hidden_dim = M_HID, s.n_layers = M_LAYERS, s.n_heads = M_HEADS, s.n_kv_heads = 1, s.vocab_size = M_VOCAB;
    struct wgf_test_model_opts o   = {.format = WGF_TEST_MODEL_HF, .dtype = WGF_DT_F32};
    struct wgf_err             err = {0};
    struct wgf_llm_model      *q   = NULL;
    snprintf(nm, sizeof nm, "%s: llm quantize a test Llama, write its dequantized twin", recipe);
    bool ok = wgf_test_model_write(&s, &o, src, &err) == WGF_OK && wgf_llm_quantize(src, qp, recipe, false, true, NULL, &err) == WGF_OK &&
              wgf_llm_model_load(qp, &q, &err) == WGF_OK && wgf_llm_model_save_gguf(q, fp, WGF_DT_F32, &err) == WGF_OK;
    wgf_llm_model_free(q);
    if (wgf_t_check(t, ok, nm, "%s", ok ? "ok" : err.msg)) check_files(t, ctx, recipe, qp, fp, every_plan, false);
}

int main(void)
{
    struct wgf_t t   = {0};
    wgf_ctx     *ctx = wgf_t_gpu_timeout(&t, 300000);
    if (!ctx) return wgf_t_finish(&t);
    char dir[512];
    wgf_t_tmpdir("quant_gpu", dir, sizeof dir);
    enum wgf_dtype all[NQT];
    for (int i = 0; i < NQT; i++) all[i] = QT[i].dt;
    const char *only = getenv("WGF_TEST_ONLY"); /* one tag, for iterating */
    if (!only || !strcmp(only, "mixed")) check_type(&t, ctx, dir, "mixed", all, NQT, true, true, true);
    /* types that widen to one (gr_qwidens): W_qkv and the gate/up pairs read as one part */
    const enum wgf_dtype w8[] = {WGF_DT_Q4_0, WGF_DT_Q5_0, WGF_DT_Q8_0}, w5k[] = {WGF_DT_Q4_K, WGF_DT_Q5_K};
    if (!only || !strcmp(only, "widen_q8_0")) check_type(&t, ctx, dir, "widen_q8_0", w8, 3, true, false, false);
    if (!only || !strcmp(only, "widen_q5_k")) check_type(&t, ctx, dir, "widen_q5_k", w5k, 2, true, false, false);
    /* Q4_K_M's layout where no type widens (dims multiples of 256): Q4_K q/k beside Q6_K v, one
     * dispatch over both parts; gate/up one type (8 matrices a layer: the same types each) */
    const enum wgf_dtype sq[] = {WGF_DT_Q8_0, WGF_DT_Q4_K, WGF_DT_Q4_K, WGF_DT_Q6_K,
                                 WGF_DT_Q4_K, WGF_DT_Q5_K, WGF_DT_Q5_K, WGF_DT_Q6_K};
    if (!only || !strcmp(only, "split_qkv")) check_type(&t, ctx, dir, "split_qkv", sq, 8, true, false, false);
    for (int i = 0; i < NQT; i++) {
        bool k4 = QT[i].dt == WGF_DT_Q4_K; /* one pure type through every plan (the ops plans' row offsets) */
        if (!only || !strcmp(only, wgf_dtype_str(QT[i].dt)))
            check_type(&t, ctx, dir, wgf_dtype_str(QT[i].dt), &QT[i].dt, 1, false, k4, QT[i].dt == WGF_DT_Q6_K);
    }
    /* what the quantizers write, in a recipe's mixture: Q2_K at n_gqa 4 holds Q2_K (q, k,
     * gate, up, token_embd), Q3_K (attn_output, ffn_down), Q4_K (attn_v) and Q6_K (output) */
    if (!only || !strcmp(only, "Q2_K")) check_recipe(&t, ctx, dir, "Q2_K", true);
    if (!only || !strcmp(only, "neg_logits")) check_negative(&t, ctx, dir);
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
