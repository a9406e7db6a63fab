/* wgfuse llm — LLM utilities: make-test-model (random-weight models with the test tokenizer),
 * load-check (map and touch every weight) and bench (prefill/decode speed of a backend).
 * Exit codes: 0 ok, 1 failure, 2 usage error. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "wgfuse/bench.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_dial.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/llm_test_model.h"
#include "wgfuse/tokenizer.h"

static void llm_usage(FILE *f)
{
    fprintf(f,
            "usage: wgfuse llm make-test-model --arch qwen2|llama|phi3 [--dims SPEC] [--format hf|gguf]\n"
            "                  [--dtype f32|f16|bf16|q8_0|q4_0] [--seed S] [--shards N] [--no-tokenizer] -o PATH\n"
            "       wgfuse llm load-check -m PATH\n"
            "       wgfuse llm quantize IN OUT --type Q8_0|Q4_0|Q4_K_M|Q5_K_M|Q6_K|... [--pure] (see --help there)\n"
            "       wgfuse llm bench (-m PATH | --shape NAME) [-n N] [--runs R] [--threads T] [--prompt-tokens P]\n"
            "                  [--backend cpu-ref|gpu] [--plan roles|unfused] [--weights f16|f32] [--no-subgroups]\n"
            "                  [--activations f32|i8x3|q8] [--profile] [--json]\n"
            "       wgfuse llm bench (-m PATH | --shape NAME) --plan all [--weights f16|f32] [--no-subgroups]\n"
            "                  [--activations f32|i8x3|q8]\n"
            "                  [-n N] [--runs R] [--prompt-tokens P] [--check-steps S] [--profile] [--json] [--svg PATH]\n"
            "  SPEC: comma-separated key=value from dim, hidden, layers, heads, kv_heads, vocab, ctx\n"
            "        (e.g. dim=64,hidden=96,layers=2,heads=4,kv_heads=2,vocab=512,ctx=256), or a preset:\n"
            "        qwen2.5-0.5b (dim 896, hidden 4864, 24 layers, 14/2 heads, vocab 151936).\n"
            "  The model gets a small byte-level BPE tokenizer (ChatML specials) unless --no-tokenizer;\n"
            "  its vocabulary then needs at least %d rows.\n"
            "  load-check maps the model, reads every weight byte once and prints tensor count and bytes\n"
            "  (bench/llm_load_rss.sh measures its peak RSS).\n"
            "  bench: greedy generation of N (64) tokens after a fixed P-token (32) prompt, R (5) runs\n"
            "  after a warm-up; the generated ids must match across runs before median/best prefill\n"
            "  and decode tok/s are printed. --shape qwen2.5-0.5b|qwen2.5-1.5b|phi-3-mini|llama-3.2-1b:\n"
            "  a model of that shape with random f16 weights, built in memory (no file). --profile: GPU\n"
            "  time per kernel role over 8 decode steps, and of the prompt's first prefill chunk where the\n"
            "  plan batches it (roles), each role timed in its own pass. --json: one JSON line instead of\n"
            "  the text.\n"
            "  --plan all: the fusion dial (docs/fusion.md): ops, fused, roles and mega on the same model and\n"
            "  weights, each checked against cpu-ref (8-token prefill + S (8) decode steps) before it is\n"
            "  timed; one table with dispatches per token, decode tok/s (median, 95%% CI), prefill tok/s, GPU\n"
            "  and host ms per token, %% of the bytes floor (copy bandwidth measured in the same run), and\n"
            "  each plan's speed-up over the previous one; --svg PATH: tok/s vs dispatches per token with\n"
            "  the dispatch floor and the bytes floor. A plan the device cannot run is skipped, with why.\n",
            WGF_TOK_TEST_VOCAB_MAX);
    wgf_cli_backend_usage(f);
}

static bool parse_dims(const char *spec, struct wgf_test_model_spec *s)
{
    if (!strcmp(spec, "qwen2.5-0.5b")) {
        s->dim = 896, s->hidden_dim = 4864, s->n_layers = 24, s->n_heads = 14, s->n_kv_heads = 2, s->vocab_size = 151936;
        s->max_seq_len = 32768, s->rope_theta = 1000000.0f, s->norm_eps = 1e-6f;
        return true;
    }
    char       *copy = NULL, *kv;
    const char *items[16];
    int         n  = wgf_cli_split_list("--dims", spec, &copy, items, 16);
    bool        ok = n > 0;
    for (int i = 0; i < n && ok; i++) {
        kv = copy + (items[i] - copy); /* the items point into copy: writable */
        char *eq = strchr(kv, '=');
        if (!eq) {
            wgf_cli_error("--dims: '%s' is not key=value", kv);
            ok = false;
            break;
        }
        *eq = 0;
        long        v;
        const char *k = kv;
        int        *dst = !strcmp(k, "dim") ? &s->dim : !strcmp(k, "hidden") ? &s->hidden_dim
                        : !strcmp(k, "layers") ? &s->n_layers : !strcmp(k, "heads") ? &s->n_heads
                        : !strcmp(k, "kv_heads") ? &s->n_kv_heads : !strcmp(k, "vocab") ? &s->vocab_size
                        : !strcmp(k, "ctx") ? &s->max_seq_len : NULL;
        if (!dst) {
            wgf_cli_error("--dims: unknown key '%s' (dim, hidden, layers, heads, kv_heads, vocab, ctx)", k);
            ok = false;
        } else if (!wgf_cli_parse_long(k, eq + 1, 1, 1L << 20, &v)) {
            ok = false;
        } else {
            *dst = (int)v;
        }
    }
    free(copy);
    if (ok && (s->dim % s->n_heads || s->n_heads % s->n_kv_heads || (s->dim / s->n_heads) % 2)) {
        wgf_cli_error("--dims: dim %% heads, heads %% kv_heads must be 0 and head_dim even");
        ok = false;
    }
    return ok;
}

static int make_test_model(int argc, char **argv)
{
    enum wgf_arch    arch = WGF_ARCH_QWEN2;
    bool             have_arch = false, no_tok = false;
    const char      *dims = NULL, *out = NULL, *fmt = "hf", *dt = "f32";
    long             seed = 1234, shards = 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (wgf_cli_is_help(a)) {
            llm_usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--no-tokenizer")) {
            no_tok = true;
            continue;
        }
        if (strcmp(a, "--arch") && strcmp(a, "--dims") && strcmp(a, "--format") && strcmp(a, "--dtype") &&
            strcmp(a, "--seed") && strcmp(a, "--shards") && strcmp(a, "-o") && strcmp(a, "--out")) {
            wgf_cli_error("llm make-test-model: unknown option '%s'", a);
            return 2;
        }
        if (!(v = wgf_cli_flag_value(argc, argv, &i))) return 2;
        if (!strcmp(a, "--arch")) {
            if (!strcmp(v, "qwen2")) arch = WGF_ARCH_QWEN2;
            else if (!strcmp(v, "llama")) arch = WGF_ARCH_LLAMA;
            else if (!strcmp(v, "phi3")) arch = WGF_ARCH_PHI3;
            else {
                wgf_cli_error("--arch: '%s' is not qwen2, llama or phi3", v);
                return 2;
            }
            have_arch = true;
        } else if (!strcmp(a, "--dims")) dims = v;
        else if (!strcmp(a, "--format")) fmt = v;
        else if (!strcmp(a, "--dtype")) dt = v;
        else if (!strcmp(a, "--seed")) {
            if (!wgf_cli_parse_long(a, v, 0, LONG_MAX, &seed)) return 2;
        } else if (!strcmp(a, "--shards")) {
            if (!wgf_cli_parse_long(a, v, 1, 64, &shards)) return 2;
        } else out = v;
    }
    if (!have_arch || !out) {
        wgf_cli_error("llm make-test-model: --arch and -o are required");
        return 2;
    }
    struct wgf_test_model_spec s;
    wgf_test_model_spec_default(&s, arch);
    s.seed = (uint64_t)seed;
    if (!no_tok) s.vocab_size = WGF_TOK_TEST_VOCAB_MAX;
    if (dims && !parse_dims(dims, &s)) return 2;
    struct wgf_test_model_opts o = {.n_shards = (int)shards};
    if (!strcmp(fmt, "hf")) o.format = WGF_TEST_MODEL_HF;
    else if (!strcmp(fmt, "gguf")) o.format = WGF_TEST_MODEL_GGUF;
    else {
        wgf_cli_error("--format: '%s' is not hf or gguf", fmt);
        return 2;
    }
    enum wgf_dtype dts[] = {WGF_DT_F32, WGF_DT_F16, WGF_DT_BF16, WGF_DT_Q8_0, WGF_DT_Q4_0};
    bool           found = false;
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++)
        if (!strcmp(dt, wgf_dtype_str(dts[i]))) o.dtype = dts[i], found = true;
    if (!found || (o.format == WGF_TEST_MODEL_HF && (o.dtype == WGF_DT_Q8_0 || o.dtype == WGF_DT_Q4_0))) {
        wgf_cli_error("--dtype: '%s' is not one of f32, f16, bf16%s", dt, o.format == WGF_TEST_MODEL_GGUF ? ", q8_0, q4_0" : "");
        return 2;
    }

    if (!no_tok && s.vocab_size < WGF_TOK_TEST_VOCAB) {
        wgf_cli_error("--dims: vocab %d < the test tokenizer's %d tokens (or use --no-tokenizer)", s.vocab_size,
                      WGF_TOK_TEST_VOCAB);
        return 2;
    }
    o.with_test_tokenizer = !no_tok; /* BOS <|endoftext|>, EOS <|im_end|>, as Qwen2.5 */
    struct wgf_err err = {0};
    if (wgf_test_model_write(&s, &o, out, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        return 1;
    }
    if (!wgf_cli.quiet)
        fprintf(stderr, "wgfuse: wrote %s (%s %s, %s, dim %d, hidden %d, %d layers, %d/%d heads, vocab %d%s)\n", out,
                wgf_arch_str(arch), fmt, wgf_dtype_str(o.dtype), s.dim, s.hidden_dim, s.n_layers, s.n_heads, s.n_kv_heads,
                s.vocab_size, no_tok ? ", no tokenizer" : "");
    return 0;
}

static int load_check(int argc, char **argv)
{
    const char *model = NULL;
    for (int i = 2; i < argc; i++) {
        if (wgf_cli_is_help(argv[i])) {
            llm_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "-m") || !strcmp(argv[i], "--model")) {
            if (!(model = wgf_cli_flag_value(argc, argv, &i))) return 2;
        } else {
            wgf_cli_error("llm load-check: unknown option '%s'", argv[i]);
            return 2;
        }
    }
    if (!model) {
        wgf_cli_error("llm load-check: -m PATH is required");
        return 2;
    }
    struct wgf_err        err = {0};
    struct wgf_llm_model *m   = NULL;
    double                t0  = wgf_llm_now();
    wgf_cli_note_mapped(model);
    if (wgf_llm_model_load(model, &m, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        return 1;
    }
    double   t1  = wgf_llm_now();
    uint64_t sum = wgf_llm_model_touch(m);
    double   t2  = wgf_llm_now();
    /* count the distinct tensor views the forward reads (a tied lm_head is tok_embd) */
    const struct wgf_llm_weights *W = &m->weights;
    long n = 2 + (W->lm_head.data != W->tok_embd.data);
    for (int l = 0; l < m->cfg.n_layers; l++) {
        const struct wgf_tensor *ts[] = {&W->layers[l].attn_norm, &W->layers[l].wq,  &W->layers[l].wk,
                                         &W->layers[l].wv,        &W->layers[l].bq,  &W->layers[l].bk,
                                         &W->layers[l].bv,        &W->layers[l].wo,  &W->layers[l].ffn_norm,
                                         &W->layers[l].w_gate,    &W->layers[l].w_up, &W->layers[l].w_down};
        for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) n += ts[i]->data != NULL;
    }
    const struct wgf_llm_config *c = &m->cfg;
    printf("model: %s (%s, %s)\n", model, wgf_arch_str(c->arch), m->format == WGF_LLM_FORMAT_GGUF ? "gguf" : "hf");
    printf("config: dim %d, hidden %d, layers %d, heads %d/%d, head_dim %d, vocab %d, ctx %d, dtype %s\n", c->dim,
           c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->head_dim, c->vocab_size, c->max_seq_len,
           c->source_dtype);
    printf("tensors: %ld\nbytes: %llu\nchecksum: %016llx\nload: %.3f s, touch: %.3f s\n", n,
           (unsigned long long)wgf_llm_model_weight_bytes(m), (unsigned long long)sum, t1 - t0, t2 - t1);
    wgf_llm_model_free(m);
    return 0;
}

/* wgfuse llm bench: decode/prefill speed of a backend.
 * Protocol: one warm-up generation (maps the weights in), then --runs greedy generations
 * of -n tokens after a fixed --prompt-tokens prompt, EOS ignored. The generated ids must
 * hash the same in every run (a backend that writes garbage fails here before any number
 * is printed); then the median and best of prefill and decode tok/s are reported. */
struct bench_hash {
    uint64_t h;
};
static int bench_token(void *u, int32_t id)
{
    struct bench_hash *b = u;
    b->h                 = (b->h ^ (uint32_t)id) * 0x100000001b3ull; /* FNV-1a over ids */
    return 0;
}

static int llm_bench(int argc, char **argv)
{
    const char            *model = NULL, *shape = NULL;
    struct wgf_cli_backend bk    = {0};
    const char            *svg = NULL;
    long                   n = 64, runs = 5, threads = 0, n_prompt = 32, check_steps = 8;
    bool                   profile = false, json = false, dial = false;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (wgf_cli_is_help(a)) {
            llm_usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--plan") && i + 1 < argc && !strcmp(argv[i + 1], "all")) { /* the fusion dial */
            dial = true, i++;
            continue;
        }
        int bf = wgf_cli_backend_flag(&bk, argc, argv, &i);
        if (bf == 2) return 2;
        if (bf == 1) continue;
        if (!strcmp(a, "--profile")) {
            profile = true;
            continue;
        }
        if (!strcmp(a, "--json")) {
            json = true;
            continue;
        }
        if (!(v = wgf_cli_flag_value(argc, argv, &i))) return 2;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) model = v;
        else if (!strcmp(a, "--shape")) shape = v;
        else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) {
            if (!wgf_cli_parse_long(a, v, 2, 1 << 16, &n)) return 2;
        } else if (!strcmp(a, "--runs")) {
            if (!wgf_cli_parse_long(a, v, 1, 1000, &runs)) return 2;
        } else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
            if (!wgf_cli_parse_long(a, v, 1, 256, &threads)) return 2;
        } else if (!strcmp(a, "--prompt-tokens")) {
            if (!wgf_cli_parse_long(a, v, 1, 1 << 16, &n_prompt)) return 2;
        } else if (!strcmp(a, "--check-steps")) {
            if (!wgf_cli_parse_long(a, v, 0, 1024, &check_steps)) return 2;
        } else if (!strcmp(a, "--svg")) {
            svg = v;
        } else {
            wgf_cli_error("llm bench: unknown option '%s'", a);
            return 2;
        }
    }
    if (!model == !shape) {
        wgf_cli_error("llm bench: give exactly one of -m PATH and --shape NAME (%s)", wgf_llm_synth_shapes());
        return 2;
    }
    if (!dial && (svg || check_steps != 8)) {
        wgf_cli_error("llm bench: --svg and --check-steps belong to --plan all");
        return 2;
    }
    if (dial && (bk.plan || (bk.name && strcmp(bk.name, "gpu")))) {
        wgf_cli_error("llm bench: --plan all runs the GPU plans; it takes no --backend %s or second --plan",
                      bk.name ? bk.name : "");
        return 2;
    }
    if (dial && runs > WGF_DIAL_MAX_RUNS) {
        wgf_cli_error("--runs: %ld is more than the %d --plan all keeps", runs, WGF_DIAL_MAX_RUNS);
        return 2;
    }
    struct wgf_err         err = {0};
    struct wgf_llm_model  *m   = NULL;
    struct wgf_llm_backend be  = {0};
    wgf_ctx               *gctx = NULL;
    struct wgf_sampler     smp = {0};
    struct wgf_profile     prof = {0}, pprof = {0}; /* decode tokens; a prefill chunk */
    int32_t               *prompt = NULL;
    double                *pre = NULL, *dec = NULL;
    int                    rc  = 1;
    const char            *name = model ? model : shape;
    if ((rc = wgf_cli_llm_model(model, shape, &bk, &m))) return rc;
    rc = 1;
    wgf_cli_note_ctx(m, "--prompt-tokens + -n =", (uint64_t)(n_prompt + n)); /* the positions each run fills */
    if (dial) {
        struct wgf_dial_opts   o  = wgf_dial_opts_default();
        struct wgf_gpu_options go = wgf_cli_gpu_options();
        o.n_prompt = (uint32_t)n_prompt, o.n_gen = (uint32_t)n, o.runs = (uint32_t)runs;
        o.check_steps = (uint32_t)check_steps, o.profile = profile;
        o.n_threads   = threads ? (uint32_t)threads : wgf_cli_default_threads();
        o.weights_f32 = bk.weights_f32, o.no_subgroups = bk.no_subgroups, o.act_q8 = bk.act_q8, o.act_i8x3 = bk.act_i8x3;
        if (wgf_ctx_create(&go, &gctx, &err) != WGF_OK) {
            wgf_cli_error("llm bench --plan all: %s", err.msg);
            goto out;
        }
        rc = wgf_cli_llm_dial(gctx, name, m, &o, json, svg);
        goto out;
    }
    struct wgf_llm_backend_options bo = {.n_ctx = (uint32_t)(n_prompt + n + 1),
                                         .n_threads = threads ? (uint32_t)threads : wgf_cli_default_threads()};
    struct wgf_sampler_params      sp = wgf_sampler_params_default();
    sp.temperature                    = 0;
    prompt = malloc((size_t)n_prompt * sizeof *prompt);
    pre    = malloc((size_t)runs * sizeof *pre);
    dec    = malloc((size_t)runs * sizeof *dec);
    if (!prompt || !pre || !dec) {
        wgf_cli_error("llm bench: out of memory");
        goto out;
    }
    double t_init = wgf_llm_now();
    if (!wgf_cli_backend_open(&bk, name, m, &bo, &gctx, &be)) goto out;
    t_init = wgf_llm_now() - t_init;
    if (wgf_sampler_init(&smp, &sp, be.n_vocab, &err) != WGF_OK) {
        wgf_cli_error("%s: %s", name, err.msg);
        goto out;
    }
    for (long i = 0; i < n_prompt; i++) prompt[i] = (int32_t)((i * 7919 + 1) % be.n_vocab); /* fixed, spread ids */
    struct wgf_gen_params gp = wgf_gen_params_default();
    gp.max_tokens            = (uint32_t)n;
    gp.ignore_eos            = true;
    uint64_t first_hash      = 0;
    wgf_cli_catch_interrupts();
    for (long r = -1; r < runs; r++) { /* r = -1: warm-up */
        struct bench_hash        h  = {0xcbf29ce484222325ull};
        struct wgf_gen_callbacks cb = {.user = &h, .on_token = bench_token};
        struct wgf_gen_stats     st;
        if (wgf_generate(&be, NULL, &smp, &gp, prompt, (uint32_t)n_prompt, &cb, &st, &err) != WGF_OK) {
            wgf_cli_error("%s: %s", name, err.msg);
            goto out;
        }
        if (wgf_cli_interrupt_pending()) {
            wgf_cli_error("llm bench: interrupted by %s: nothing printed", wgf_cli_interrupt_name());
            rc = wgf_cli_interrupt_code();
            goto out;
        }
        if (r < 0) {
            first_hash = h.h;
            continue;
        }
        if (h.h != first_hash) {
            wgf_cli_error("%s: run %ld generated different tokens (hash %016llx vs %016llx): not benchmarking a "
                          "nondeterministic backend", name, r, (unsigned long long)h.h, (unsigned long long)first_hash);
            goto out;
        }
        pre[r] = st.prefill_tok_s;
        dec[r] = st.decode_tok_s;
    }
    if (profile && be.profile && be.profile(&be, (uint32_t)n_prompt, 8, &prof, &err) != WGF_OK) {
        wgf_cli_error("%s: profile: %s", name, err.msg);
        goto out;
    }
    /* the batched prefill's first chunk (it overwrites the cache's first positions: last) */
    enum wgf_status pst = profile && be.profile_prefill ? be.profile_prefill(&be, (uint32_t)n_prompt, &pprof, &err)
                                                         : WGF_OK;
    if (pst != WGF_OK && pst != WGF_ERR_UNSUPPORTED) {
        wgf_cli_error("%s: prefill profile: %s", name, err.msg);
        goto out;
    }
    double best_pre = pre[0], best_dec = dec[0];
    for (long r = 1; r < runs; r++) {
        if (pre[r] > best_pre) best_pre = pre[r];
        if (dec[r] > best_dec) best_dec = dec[r];
    }
    double med_pre = wgf_stats_median(pre, (int)runs), med_dec = wgf_stats_median(dec, (int)runs);
    /* the bytes floor of decode: every weight byte once at the copy rate measured here */
    double copy_gbps = 0;
    if (gctx && wgf_bench_copy_gbps(gctx, 5, &copy_gbps, &err) != WGF_OK) {
        wgf_cli_error("%s: copy bandwidth: %s", name, err.msg);
        goto out;
    }
    const char *wfmt  = gctx && be.plan && !strcmp(be.plan, "roles") && !bk.weights_f32 ? "f16" : "f32";
    /* on the GPU every matrix in the plan's format; cpu-ref reads the stored bytes of every
     * matrix (mixed quantized files included), the embedding table only as a tied LM head */
    if (gctx && be.weights) wfmt = be.weights;
    double wbtok = gctx && be.weight_bytes_per_token ? (double)be.weight_bytes_per_token
                 : gctx ? wgf_llm_weight_bytes_per_token(&m->cfg, !strcmp(wfmt, "f16") ? 2.0 : 4.0)
                        : (double)wgf_llm_model_weight_bytes(m) -
                              (m->cfg.tie_embeddings ? 0.0 : (double)m->weights.tok_embd.nbytes);
    if (json) {
        printf("{\"model\": \"%s\", \"arch\": \"%s\", \"backend\": \"%s\", \"plan\": \"%s\", \"weights\": \"%s\", "
               "\"adapter\": \"%s\", \"prompt_tokens\": %ld, \"generated\": %ld, \"runs\": %ld, "
               "\"dispatches_per_token\": %u, \"weight_bytes_per_token\": %.0f, \"init_s\": %.2f, "
               "\"prefill_tok_s_median\": %.2f, \"prefill_tok_s_best\": %.2f, \"decode_tok_s_median\": %.2f, "
               "\"decode_tok_s_best\": %.2f, \"gpu_weight_bytes\": %llu, \"model_weight_bytes\": %llu, "
               "\"copy_gbps\": %.1f, \"activations\": \"%s\", \"shader_clamps\": %s, \"ids_hash\": \"%016llx\"",
               name, wgf_arch_str(m->cfg.arch), be.name, be.plan ? be.plan : "", gctx ? wfmt : m->cfg.source_dtype,
               gctx ? wgf_ctx_adapter(gctx)->name : "cpu", n_prompt, n, runs, be.dispatches_per_token, wbtok, t_init,
               med_pre, best_pre, med_dec, best_dec, (unsigned long long)be.gpu_weight_bytes,
               (unsigned long long)wgf_llm_model_weight_bytes(m), copy_gbps, bk.act_q8 ? "q8" : bk.act_i8x3 ? "i8x3" : "f32",
               gctx && !wgf_ctx_robust_shaders(gctx) ? "false" : "true", (unsigned long long)first_hash);
        if (gctx) printf(", \"compute_units\": %u", wgf_ctx_compute_units(gctx));
        if (prof.n) {
            printf(", \"profile_us_per_token\": {");
            for (uint32_t i = 0; i < prof.n; i++)
                printf("%s\"%s\": [%.2f, %.2f, %.1f]", i ? ", " : "", prof.rows[i].label, prof.rows[i].ns / 8e3,
                       (double)prof.rows[i].dispatches / 8, prof.rows[i].ns > 0 ? (double)prof.rows[i].bytes / prof.rows[i].ns : 0);
            printf("}");
        }
        if (pprof.n) {
            printf(", \"prefill_profile_us\": {");
            for (uint32_t i = 0; i < pprof.n; i++)
                printf("%s\"%s\": [%.2f, %.2f, %.1f]", i ? ", " : "", pprof.rows[i].label, pprof.rows[i].ns / 1e3,
                       (double)pprof.rows[i].dispatches, pprof.rows[i].ns > 0 ? (double)pprof.rows[i].bytes / pprof.rows[i].ns : 0);
            printf("}");
        }
        printf("}\n");
    } else {
        printf("model: %s (%s, %s, %d layers, dim %d, vocab %d)\n", name, wgf_arch_str(m->cfg.arch),
               m->cfg.source_dtype, m->cfg.n_layers, m->cfg.dim, m->cfg.vocab_size);
        if (gctx) {
            printf("backend: %s (plan %s, %s weights) on %s; %u dispatches per token; prompt %ld tokens, %ld "
                   "generated, %ld runs after 1 warm-up; ids hash %016llx\n",
                   be.name, be.plan ? be.plan : "-", wfmt, wgf_ctx_adapter(gctx)->name, be.dispatches_per_token,
                   n_prompt, n, runs, (unsigned long long)first_hash);
            printf("shader bounds clamps: %s\n", wgf_ctx_robust_shaders(gctx) ? "on" : "off (--robust-shaders: on)");
            uint32_t cu = wgf_ctx_compute_units(gctx);
            if (cu) printf("compute units (measured; one-wave grids are spread over them): %u\n", cu);
            else printf("compute units: not measured (default layouts)\n");
        } else
            printf("backend: %s, %u threads; prompt %ld tokens, %ld generated, %ld runs after 1 warm-up; ids hash "
                   "%016llx\n", be.name, bo.n_threads, n_prompt, n, runs, (unsigned long long)first_hash);
        printf("weights read per token: %.3f GB (%s)\n", wbtok * 1e-9, gctx ? wfmt : m->cfg.source_dtype);
        if (be.gpu_weight_bytes)
            printf("weights on the device: %.3f GB (%.3fx the %.3f GB the model stores)\n", (double)be.gpu_weight_bytes * 1e-9,
                   (double)be.gpu_weight_bytes / (double)wgf_llm_model_weight_bytes(m),
                   (double)wgf_llm_model_weight_bytes(m) * 1e-9);
        printf("prefill tok/s: median %.1f, best %.1f\n", med_pre, best_pre);
        printf("decode  tok/s: median %.1f, best %.1f\n", med_dec, best_dec);
        if (copy_gbps > 0 && wbtok > 0)
            printf("bytes floor: %.1f tok/s (%.3f GB per token at the %.0f GB/s copy rate); decode at %.1f%% of it\n",
                   copy_gbps * 1e9 / wbtok, wbtok * 1e-9, copy_gbps, 100.0 * med_dec * wbtok / (copy_gbps * 1e9));
        if (prof.n) {
            double tok_ns = prof.total_ns / 8;
            printf("profile (GPU time per decode token, each role in its own pass; sum %.1f us vs %.1f us measured):\n",
                   tok_ns * 1e-3, med_dec > 0 ? 1e6 / med_dec : 0.0);
            printf("  %-28s %10s %10s %9s %7s\n", "role", "dispatches", "us", "GB/s", "%");
            for (uint32_t i = 0; i < prof.n; i++) {
                const struct wgf_profile_row *pr = &prof.rows[i];
                printf("  %-28s %10.1f %10.1f %9.0f %6.1f%%\n", pr->label, (double)pr->dispatches / 8, pr->ns / 8e3,
                       pr->ns > 0 ? (double)pr->bytes / pr->ns : 0.0, 100.0 * pr->ns / prof.total_ns);
            }
        } else if (profile) {
            printf("profile: not offered by backend %s\n", be.name);
        }
        if (pprof.n) {
            printf("prefill profile (GPU time of the first chunk of the prompt, each role in its own pass; sum %.1f us):\n",
                   pprof.total_ns * 1e-3);
            printf("  %-28s %10s %10s %9s %7s\n", "role", "dispatches", "us", "GB/s", "%");
            for (uint32_t i = 0; i < pprof.n; i++) {
                const struct wgf_profile_row *pr = &pprof.rows[i];
                printf("  %-28s %10u %10.1f %9.0f %6.1f%%\n", pr->label, (unsigned)pr->dispatches, pr->ns / 1e3,
                       pr->ns > 0 ? (double)pr->bytes / pr->ns : 0.0, 100.0 * pr->ns / pprof.total_ns);
            }
        }
    }
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
    wgf_profile_free(&prof);
    wgf_profile_free(&pprof);
    free(prompt);
    free(pre);
    free(dec);
    wgf_sampler_free(&smp);
    wgf_llm_backend_close(&be);
    wgf_ctx_free(gctx);
    wgf_llm_model_free(m);
    return rc;
}

int wgf_cmd_llm(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        llm_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "make-test-model")) return make_test_model(argc, argv);
    if (!strcmp(argv[1], "load-check")) return load_check(argc, argv);
    if (!strcmp(argv[1], "bench")) return llm_bench(argc, argv);
    if (!strcmp(argv[1], "quantize")) return wgf__cmd_llm_quantize(argc, argv);
    wgf_cli_error("llm: unknown subcommand '%s' (make-test-model, load-check, bench, quantize)", argv[1]);
    return 2;
}
