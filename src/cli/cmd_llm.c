/* wgfuse run / tokenize / llm — text generation on the CPU reference backend or the GPU
 * (--backend gpu), tokenizer tools, test-model maker and load check. Flags follow llama.cpp's names.
 * Exit codes: 0 ok, 1 failure (model, file, context), 2 usage error. Only this file prints;
 * src/llm/ does the work. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "llm/gguf.h"
#include "llm/test_model.h"
#include "wgfuse/chat_template.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/tokenizer.h"

#define MAX_CTX (1L << 24)
#define MAX_IDS (1L << 24)

/* ======================================================================================
 * Shared helpers
 * ====================================================================================== */

/* Flag value at argv[i+1]; prints the usage error when missing. */
static const char *flag_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        wgf_cli_error("%s needs a value", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

/* "1,2,3" -> ids (malloc'd). Ids must be integers in [0, 2^31); false = usage error. */
static bool parse_ids(const char *flag, const char *s, int32_t **ids, size_t *n)
{
    *ids = NULL;
    *n   = 0;
    size_t cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    if (cap > (size_t)MAX_IDS) {
        wgf_cli_error("%s: more than %ld ids", flag, MAX_IDS);
        return false;
    }
    int32_t *v = malloc(cap * sizeof *v);
    if (!v) {
        wgf_cli_error("%s: out of memory", flag);
        return false;
    }
    const char *p = s;
    for (;;) {
        char *end;
        errno  = 0;
        long x = strtol(p, &end, 10);
        if (end == p || errno || x < 0 || x > INT32_MAX || (*end != ',' && *end != 0)) {
            wgf_cli_error("%s: '%s' is not a comma-separated list of token ids", flag, s);
            free(v);
            return false;
        }
        v[(*n)++] = (int32_t)x;
        if (!*end) break;
        p = end + 1;
    }
    *ids = v;
    return true;
}

static uint32_t default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > 16) n = 16;
    return (uint32_t)n;
}

/* --backend NAME: true when NAME is one of ours (else prints the usage error). */
static bool backend_name_ok(const char *v)
{
    if (!strcmp(v, "cpu-ref") || !strcmp(v, "gpu")) return true;
    wgf_cli_error("--backend: '%s' is not a backend (cpu-ref, gpu)", v);
    return false;
}

/* Open backend `name` ("cpu-ref" or "gpu") on m. For gpu a context is created from the
 * global --adapter/--webgpu-lib options into *ctx (the caller frees it after the backend).
 * Prints the error and returns false on failure. */
static bool backend_open(const char *name, const char *model, const struct wgf_llm_model *m,
                         struct wgf_llm_backend_options *bo, wgf_ctx **ctx, struct wgf_llm_backend *be)
{
    struct wgf_err err = {0};
    *ctx               = NULL;
    bool gpu           = name && !strcmp(name, "gpu");
    if (gpu) {
        struct wgf_gpu_options go = wgf_cli_gpu_options();
        if (wgf_ctx_create(&go, ctx, &err) != WGF_OK) {
            wgf_cli_error("--backend gpu: %s", err.msg);
            return false;
        }
        bo->gpu = *ctx;
    }
    if (wgf_llm_backend_open(be, gpu ? &wgf_llm_backend_gpu : &wgf_llm_backend_ref, m, bo, &err) != WGF_OK) {
        wgf_cli_error("%s: %s", model, err.msg);
        return false;
    }
    return true;
}

/* A tokenizer from PATH without loading weights: a directory's tokenizer.json, a
 * tokenizer.json file, or a GGUF file's tokenizer.ggml.*. *tok NULL when there is none. */
static enum wgf_status tokenizer_only(const char *path, struct wgf_tokenizer **tok, struct wgf_err *err)
{
    *tok = NULL;
    struct stat st;
    if (stat(path, &st) != 0) return wgf_fail(err, WGF_ERR_IO, "%s: %s", path, strerror(errno));
    size_t n  = strlen(path) + 32;
    char  *tj = malloc(n), *tc = malloc(n);
    if (!tj || !tc) {
        free(tj), free(tc);
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: path", path);
    }
    enum wgf_status s = WGF_OK;
    if (S_ISDIR(st.st_mode)) {
        snprintf(tj, n, "%s/tokenizer.json", path);
        snprintf(tc, n, "%s/tokenizer_config.json", path);
        struct stat s2;
        if (stat(tj, &s2) == 0) s = wgf_tokenizer_load_json(tj, stat(tc, &s2) == 0 ? tc : NULL, tok, err);
    } else {
        size_t pl = strlen(path);
        if (pl >= 5 && strcmp(path + pl - 5, ".json") == 0) {
            s = wgf_tokenizer_load_json(path, NULL, tok, err);
        } else {
            struct wgf_gguf *g = NULL;
            if ((s = wgf_gguf_open(path, &g, err)) == WGF_OK && wgf_gguf_find(g, "tokenizer.ggml.tokens") >= 0) {
                struct wgf_tok_spec spec;
                void               *storage = NULL;
                wgf_tok_spec_init(&spec);
                if ((s = wgf_gguf_tok_spec(g, &spec, &storage, err)) == WGF_OK) s = wgf_tokenizer_from_spec(&spec, tok, err);
                free(storage);
            }
            wgf_gguf_close(g);
        }
    }
    free(tj);
    free(tc);
    return s;
}

/* ======================================================================================
 * wgfuse run
 * ====================================================================================== */

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: wgfuse run -m PATH [-p PROMPT | -f FILE | --tokens 1,2,3] [-n N] [--temp T] [--top-k K] [--top-p P]\n"
            "                  [--repeat-penalty R] [--repeat-last-n N] [--seed S] [--ctx C] [--threads N]\n"
            "                  [--system TEXT] [--no-template] [--parse-special] [--stop STR]... [--ignore-eos]\n"
            "                  [--logits-out FILE.npy] [--backend cpu-ref|gpu]\n"
            "  -m, --model PATH       Hugging Face directory (config.json + safetensors) or .gguf file\n"
            "  -p, --prompt TEXT      user text; wrapped in the model's chat template unless --no-template\n"
            "  -f, --file PATH        read the prompt text from a file (at most 64 MiB)\n"
            "  --tokens IDS           prompt as token ids (no tokenizer needed; no template, no BOS added)\n"
            "  -n, --n-predict N      tokens to generate (default 128; 0 = only evaluate the prompt)\n"
            "  --temp T               temperature, 0 = greedy (default 0.8)\n"
            "  --top-k K              0 = off (default 40)       --top-p P   1 = off (default 0.95)\n"
            "  --repeat-penalty R     1 = off (default 1.0)      --repeat-last-n N (default 64)\n"
            "  --seed S               sampling seed (default 0): same seed, same output\n"
            "  -c, --ctx C            KV-cache length (default: the model's, at most 4096)\n"
            "  -t, --threads N        CPU threads (default: cores, at most 16)\n"
            "  --parse-special        special-token text in the prompt (<|im_start|>) becomes special tokens\n"
            "  --stop STR             stop when the output contains STR (up to %d; STR is not printed)\n"
            "  --logits-out FILE      float32 .npy (positions, vocab) of every evaluated position\n"
            "  --backend B            cpu-ref (default: the plain-C reference) or gpu (WebGPU, the unfused\n"
            "                         plan; the global --adapter / --webgpu-lib pick the device)\n"
            "Text streams to stdout as it is produced; a stats line goes to stderr.\n",
            WGF_GEN_MAX_STOP);
}

struct run_opts {
    const char *model, *prompt, *prompt_file, *system, *tokens, *logits_out, *backend;
    long        n_predict, ctx, threads, top_k, repeat_last_n, seed;
    double      temp, top_p, repeat_penalty;
    bool        no_template, parse_special, ignore_eos;
    const char *stop[WGF_GEN_MAX_STOP + 1];
    int         n_stop;
};

/* 0 ok, 2 usage error (printed) */
static int run_parse(int argc, char **argv, struct run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->n_predict = 128, o->temp = 0.8, o->top_k = 40, o->top_p = 0.95, o->repeat_penalty = 1.0, o->repeat_last_n = 64;
    o->ctx = 0, o->threads = 0, o->seed = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
#define VAL()                                                                                                      \
    do {                                                                                                           \
        if (!(v = flag_value(argc, argv, &i))) return 2;                                                           \
    } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            run_usage(stdout);
            return -1;
        } else if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            VAL();
            o->model = v;
        } else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) {
            VAL();
            o->prompt = v;
        } else if (!strcmp(a, "-f") || !strcmp(a, "--file")) {
            VAL();
            o->prompt_file = v;
        } else if (!strcmp(a, "--system")) {
            VAL();
            o->system = v;
        } else if (!strcmp(a, "--tokens")) {
            VAL();
            o->tokens = v;
        } else if (!strcmp(a, "--logits-out")) {
            VAL();
            o->logits_out = v;
        } else if (!strcmp(a, "--backend")) {
            VAL();
            if (!backend_name_ok(v)) return 2;
            o->backend = v;
        } else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) {
            VAL();
            if (!wgf_cli_parse_long(a, v, 0, MAX_CTX, &o->n_predict)) return 2;
        } else if (!strcmp(a, "-c") || !strcmp(a, "--ctx") || !strcmp(a, "--ctx-size")) {
            VAL();
            if (!wgf_cli_parse_long(a, v, 1, MAX_CTX, &o->ctx)) return 2;
        } else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
            VAL();
            if (!wgf_cli_parse_long(a, v, 1, 256, &o->threads)) return 2;
        } else if (!strcmp(a, "--top-k")) {
            VAL();
            if (!wgf_cli_parse_long(a, v, 0, INT32_MAX, &o->top_k)) return 2;
        } else if (!strcmp(a, "--repeat-last-n")) {
            VAL();
            if (!wgf_cli_parse_long(a, v, 0, MAX_CTX, &o->repeat_last_n)) return 2;
        } else if (!strcmp(a, "-s") || !strcmp(a, "--seed")) {
            VAL();
            if (!wgf_cli_parse_long(a, v, 0, LONG_MAX, &o->seed)) return 2;
        } else if (!strcmp(a, "--temp")) {
            VAL();
            if (!wgf_cli_parse_double(a, v, 0, 1e6, &o->temp)) return 2;
        } else if (!strcmp(a, "--top-p")) {
            VAL();
            if (!wgf_cli_parse_double(a, v, 0, 1, &o->top_p)) return 2;
            if (o->top_p <= 0) {
                wgf_cli_error("%s: must be > 0", a);
                return 2;
            }
        } else if (!strcmp(a, "--repeat-penalty")) {
            VAL();
            if (!wgf_cli_parse_double(a, v, 0, 1e6, &o->repeat_penalty)) return 2;
            if (o->repeat_penalty <= 0) {
                wgf_cli_error("%s: must be > 0", a);
                return 2;
            }
        } else if (!strcmp(a, "--stop")) {
            VAL();
            if (o->n_stop == WGF_GEN_MAX_STOP || !*v) {
                wgf_cli_error("--stop: %s", *v ? "too many stop strings" : "empty stop string");
                return 2;
            }
            o->stop[o->n_stop++] = v;
        } else if (!strcmp(a, "--no-template")) {
            o->no_template = true;
        } else if (!strcmp(a, "--parse-special")) {
            o->parse_special = true;
        } else if (!strcmp(a, "--ignore-eos")) {
            o->ignore_eos = true;
        } else {
            wgf_cli_error("run: unknown option '%s' (wgfuse run --help)", a);
            return 2;
        }
#undef VAL
    }
    if (!o->model) {
        wgf_cli_error("run: -m PATH is required");
        return 2;
    }
    if ((o->prompt != NULL) + (o->prompt_file != NULL) + (o->tokens != NULL) > 1) {
        wgf_cli_error("run: give one of -p, -f and --tokens");
        return 2;
    }
    return 0;
}

struct run_io {
    struct wgf_npy_writer npy;
    bool                  npy_open;
    bool                  have_text; /* tokenizer present: print text, else ids */
    struct wgf_err        err;
    bool                  failed;
};

static int on_text(void *user, const char *text, size_t len)
{
    (void)user;
    fwrite(text, 1, len, stdout);
    fflush(stdout);
    return 0;
}

static int on_token(void *user, int32_t id)
{
    struct run_io *io = user;
    if (!io->have_text) {
        printf("%d ", (int)id);
        fflush(stdout);
    }
    return wgf_cli_interrupt_pending(); /* SIGINT/SIGTERM: stop after this token */
}

static int on_logits(void *user, const float *logits, uint32_t n, uint32_t n_vocab)
{
    struct run_io *io = user;
    (void)n_vocab;
    if (io->npy_open && wgf_npy_writer_append(&io->npy, logits, n, &io->err) != WGF_OK) {
        io->failed = true;
        return 1;
    }
    return 0;
}

int wgf_cmd_run(int argc, char **argv)
{
    struct run_opts o;
    int             rc = run_parse(argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;

    struct wgf_err         err = {0};
    struct wgf_llm_model  *m   = NULL;
    struct wgf_tokenizer  *tok = NULL;
    struct wgf_llm_backend be  = {0};
    wgf_ctx               *gctx = NULL;
    struct wgf_sampler     smp = {0};
    int32_t               *ids = NULL;
    size_t                 n_ids = 0;
    struct run_io          io  = {0};
    rc                         = 1;

    /* --tokens is parsed before the model loads so a malformed list is a usage error */
    if (o.tokens && !parse_ids("--tokens", o.tokens, &ids, &n_ids)) return 2;
    char  *file_text = NULL;
    size_t file_len  = 0;
    if (o.prompt_file) {
        /* no tokenizer splits more than a few hundred bytes into one token, and no context
         * here exceeds 2^24 tokens, so past 64 MiB the prompt cannot fit: refuse before
         * reading (a 2 GiB file is not read into memory) */
        struct stat st;
        FILE       *f = NULL;
        errno         = 0;
        if (stat(o.prompt_file, &st) != 0 || !S_ISREG(st.st_mode) || !(f = fopen(o.prompt_file, "rb"))) {
            wgf_cli_error("%s: %s", o.prompt_file, errno ? strerror(errno) : "not a regular file");
            return 1;
        }
        if (st.st_size > (64 << 20)) {
            fclose(f);
            wgf_cli_error("%s: %lld bytes of prompt: more tokens than any ctx (limit 64 MiB)", o.prompt_file,
                          (long long)st.st_size);
            return 1;
        }
        file_text = malloc((size_t)st.st_size + 1);
        file_len  = file_text ? fread(file_text, 1, (size_t)st.st_size, f) : 0;
        int bad   = !file_text || ferror(f);
        fclose(f);
        if (bad) {
            free(file_text);
            wgf_cli_error("%s: cannot read", o.prompt_file);
            return 1;
        }
        file_text[file_len] = 0;
    }
    wgf_cli_note_mapped(o.model);
    if (wgf_llm_model_load(o.model, &m, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        goto out;
    }
    const struct wgf_llm_config *c = &m->cfg;
    if (wgf_llm_tokenizer_load(m, &tok, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        goto out;
    }
    if (!ids) {
        if (!tok) {
            wgf_cli_error("%s: the model has no tokenizer (tokenizer.json / tokenizer.ggml.*): give the prompt with --tokens",
                          o.model);
            goto out;
        }
        const char            *text  = file_text ? file_text : o.prompt ? o.prompt : "";
        unsigned               flags = WGF_TOK_ADD_BOS | (o.parse_special ? WGF_TOK_PARSE_SPECIAL : 0);
        enum wgf_chat_template kind  = o.no_template ? WGF_CHAT_NONE : wgf_chat_template_detect(tok, wgf_arch_str(c->arch));
        enum wgf_status        s;
        if (kind != WGF_CHAT_NONE) s = wgf_chat_template_encode(tok, kind, o.system, text, flags, &ids, &n_ids, &err);
        else s = wgf_tokenizer_encode_ex(tok, text, file_text ? file_len : strlen(text), flags, &ids, &n_ids, &err);
        if (s != WGF_OK) {
            wgf_cli_error("%s", err.msg);
            goto out;
        }
    }
    for (size_t i = 0; i < n_ids; i++)
        if ((uint32_t)ids[i] >= (uint32_t)c->vocab_size) {
            wgf_cli_error("--tokens: id %d is outside the vocabulary [0, %d) of %s", (int)ids[i], c->vocab_size, o.model);
            rc = 2;
            goto out;
        }
    if (n_ids == 0) {
        wgf_cli_error("run: empty prompt (the tokenizer adds no BOS): give -p TEXT or --tokens");
        rc = 2;
        goto out;
    }

    uint32_t n_ctx = (uint32_t)(o.ctx ? o.ctx : (c->max_seq_len > 0 && c->max_seq_len < 4096 ? c->max_seq_len : 4096));
    if (n_ids > n_ctx) {
        wgf_cli_error("%s: prompt of %zu tokens > ctx %u", o.model, n_ids, n_ctx);
        goto out;
    }
    struct wgf_llm_backend_options bo = {.n_ctx = n_ctx, .n_threads = o.threads ? (uint32_t)o.threads : default_threads()};
    if (!backend_open(o.backend, o.model, m, &bo, &gctx, &be)) goto out;
    struct wgf_sampler_params sp = wgf_sampler_params_default();
    sp.temperature = (float)o.temp, sp.top_k = (uint32_t)o.top_k, sp.top_p = (float)o.top_p;
    sp.repeat_penalty = (float)o.repeat_penalty, sp.repeat_last_n = (uint32_t)o.repeat_last_n, sp.seed = (uint64_t)o.seed;
    if (wgf_sampler_init(&smp, &sp, be.n_vocab, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        rc = 2;
        goto out;
    }
    struct wgf_gen_params gp = wgf_gen_params_default();
    gp.max_tokens            = (uint32_t)o.n_predict;
    gp.ignore_eos            = o.ignore_eos;
    for (int i = 0; i < c->n_eos && i < WGF_GEN_MAX_EOS; i++) gp.eos_ids[i] = c->eos_ids[i];
    for (int i = 0; i < o.n_stop; i++) gp.stop[i] = o.stop[i];
    if (o.n_stop && !tok) {
        wgf_cli_error("--stop needs a tokenizer (the model has none)");
        rc = 2;
        goto out;
    }
    if (o.logits_out) {
        wgf_cli_remove_stale_temps(o.logits_out);
        if (wgf_npy_writer_open(&io.npy, o.logits_out, be.n_vocab, &err) != WGF_OK) {
            wgf_cli_error("%s", err.msg);
            goto out;
        }
        io.npy_open   = true;
        gp.all_logits = true;
    }
    io.have_text                = tok != NULL;
    struct wgf_gen_callbacks cb = {.user = &io, .on_token = on_token, .on_text = on_text,
                                   .on_logits = o.logits_out ? on_logits : NULL};
    struct wgf_gen_stats     stats;
    wgf_cli_catch_interrupts();
    enum wgf_status          s = wgf_generate(&be, tok, &smp, &gp, ids, (uint32_t)n_ids, &cb, &stats, &err);
    if (!io.have_text && stats.n_generated) printf("\n");
    else if (io.have_text) printf("\n");
    fflush(stdout);
    if (io.failed) {
        wgf_cli_error("%s", io.err.msg);
        goto out;
    }
    if (s != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        goto out;
    }
    if (wgf_cli_interrupt_pending()) {
        /* the text so far is on stdout; a partial --logits-out never replaces a result */
        wgf_cli_error("run: interrupted by %s after %u generated tokens (incomplete)%s", wgf_cli_interrupt_name(),
                      stats.n_generated, io.npy_open ? "; --logits-out not written" : "");
        rc = wgf_cli_interrupt_code();
        goto out;
    }
    if (io.npy_open) {
        io.npy_open = false;
        if (wgf_npy_writer_close(&io.npy, &err) != WGF_OK) {
            wgf_cli_error("%s", err.msg);
            goto out;
        }
    }
    char where[300]; /* the device, or the CPU threads */
    if (gctx) snprintf(where, sizeof where, "%s", wgf_ctx_adapter(gctx)->name);
    else snprintf(where, sizeof where, "%u threads", bo.n_threads);
    if (!wgf_cli.quiet)
        fprintf(stderr,
                "wgfuse: prompt %u tokens, prefill %.1f tok/s, generated %u tokens, decode %.1f tok/s, "
                "ttft %.1f ms, stop: %s [%s, %s, ctx %u]\n",
                stats.n_prompt, stats.prefill_tok_s, stats.n_generated, stats.decode_tok_s, stats.ttft_s * 1e3,
                stats.stop_reason ? stats.stop_reason : "-", be.name, where, n_ctx);
    rc = 0;
out:
    free(file_text);
    if (io.npy_open) wgf_npy_writer_abort(&io.npy);
    wgf_sampler_free(&smp);
    wgf_llm_backend_close(&be);
    wgf_ctx_free(gctx);
    free(ids);
    wgf_tokenizer_free(tok);
    wgf_llm_model_free(m);
    return rc;
}

/* ======================================================================================
 * wgfuse tokenize
 * ====================================================================================== */

static void tokenize_usage(FILE *f)
{
    fprintf(f, "usage: wgfuse tokenize -m PATH (-p TEXT | --detokenize 1,2,3) [--parse-special] [--no-bos]\n"
               "  prints the ids as a JSON array, or the decoded text (special tokens rendered)\n"
               "  PATH: a model directory, a .gguf file, or a tokenizer.json\n");
}

int wgf_cmd_tokenize(int argc, char **argv)
{
    const char *model = NULL, *prompt = NULL, *detok = NULL;
    bool        parse_special = false, no_bos = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            tokenize_usage(stdout);
            return 0;
        } else if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            if (!(model = flag_value(argc, argv, &i))) return 2;
        } else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) {
            if (!(prompt = flag_value(argc, argv, &i))) return 2;
        } else if (!strcmp(a, "--detokenize")) {
            if (!(detok = flag_value(argc, argv, &i))) return 2;
        } else if (!strcmp(a, "--parse-special")) {
            parse_special = true;
        } else if (!strcmp(a, "--no-bos")) {
            no_bos = true;
        } else {
            wgf_cli_error("tokenize: unknown option '%s'", a);
            return 2;
        }
    }
    if (!model || (!prompt && !detok) || (prompt && detok)) {
        wgf_cli_error("tokenize: need -m PATH and exactly one of -p TEXT / --detokenize IDS");
        return 2;
    }
    int32_t *ids = NULL;
    size_t   n   = 0;
    if (detok && !parse_ids("--detokenize", detok, &ids, &n)) return 2;

    struct wgf_err        err = {0};
    struct wgf_tokenizer *tok = NULL;
    int                   rc  = 1;
    if (tokenizer_only(model, &tok, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        goto out;
    }
    if (!tok) {
        wgf_cli_error("%s: no tokenizer (tokenizer.json / tokenizer.ggml.*)", model);
        goto out;
    }
    if (detok) {
        char  *text = NULL;
        size_t len  = 0;
        if (wgf_tokenizer_decode(tok, ids, n, true, &text, &len, &err) != WGF_OK) {
            wgf_cli_error("--detokenize: %s", err.msg);
            rc = 2;
            goto out;
        }
        fwrite(text, 1, len, stdout);
        putchar('\n');
        free(text);
    } else {
        unsigned flags = (parse_special ? WGF_TOK_PARSE_SPECIAL : 0) | (no_bos ? 0 : WGF_TOK_ADD_BOS);
        if (wgf_tokenizer_encode_ex(tok, prompt, strlen(prompt), flags, &ids, &n, &err) != WGF_OK) {
            wgf_cli_error("%s", err.msg);
            goto out;
        }
        putchar('[');
        for (size_t i = 0; i < n; i++) printf("%s%d", i ? ", " : "", (int)ids[i]);
        puts("]");
    }
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
    free(ids);
    wgf_tokenizer_free(tok);
    return rc;
}

/* ======================================================================================
 * wgfuse llm make-test-model / load-check
 * ====================================================================================== */

static void llm_usage(FILE *f)
{
    fprintf(f,
            "usage: wgfuse llm make-test-model --arch qwen2|llama|phi3 [--dims SPEC] [--format hf|gguf]\n"
            "                  [--dtype f32|f16|bf16|q8_0|q4_0] [--seed S] [--shards N] [--no-tokenizer] -o PATH\n"
            "       wgfuse llm load-check -m PATH\n"
            "       wgfuse llm bench -m PATH [-n N] [--runs R] [--threads T] [--prompt-tokens P]\n"
            "                  [--backend cpu-ref|gpu]\n"
            "  SPEC: comma-separated key=value from dim, hidden, layers, heads, kv_heads, vocab, ctx\n"
            "        (e.g. dim=64,hidden=96,layers=2,heads=4,kv_heads=2,vocab=512,ctx=256), or a preset:\n"
            "        qwen2.5-0.5b (dim 896, hidden 4864, 24 layers, 14/2 heads, vocab 151936).\n"
            "  The model gets a small byte-level BPE tokenizer (ChatML specials) unless --no-tokenizer;\n"
            "  its vocabulary then needs at least %d rows.\n"
            "  load-check maps the model, reads every weight byte once and prints tensor count and bytes\n"
            "  (bench/llm_load_rss.sh measures its peak RSS).\n"
            "  bench: greedy generation of N (64) tokens after a fixed P-token (32) prompt, R (5) runs\n"
            "  after a warm-up; the generated ids must match across runs before median/best prefill\n"
            "  and decode tok/s are printed. --backend gpu runs the GPU forward (unfused plan).\n",
            WGF_TOK_TEST_VOCAB_MAX);
}

static bool parse_dims(const char *spec, struct wgf_test_model_spec *s)
{
    if (!strcmp(spec, "qwen2.5-0.5b")) {
        s->dim = 896, s->hidden_dim = 4864, s->n_layers = 24, s->n_heads = 14, s->n_kv_heads = 2, s->vocab_size = 151936;
        s->max_seq_len = 32768, s->rope_theta = 1000000.0f, s->norm_eps = 1e-6f;
        return true;
    }
    char *copy = strdup(spec);
    if (!copy) return false;
    bool ok = true;
    for (char *save = NULL, *kv = strtok_r(copy, ",", &save); kv && ok; kv = strtok_r(NULL, ",", &save)) {
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

struct tok_hook {
    char    json[4096]; /* the test tokenizer.json written for the GGUF case */
    int32_t eos;
};

static enum wgf_status tok_hook(void *user, const char *hf_dir, struct wgf_gguf_writer *gguf, struct wgf_err *err)
{
    struct tok_hook *h = user;
    if (hf_dir) {
        char p[4200];
        snprintf(p, sizeof p, "%s/tokenizer.json", hf_dir);
        return wgf_tokenizer_write_test_json(p, err);
    }
    return wgf_llm_gguf_add_tokenizer_json(gguf, h->json, -1, h->eos, err);
}

static int make_test_model(int argc, char **argv)
{
    enum wgf_arch    arch = WGF_ARCH_QWEN2;
    bool             have_arch = false, no_tok = false;
    const char      *dims = NULL, *out = NULL, *fmt = "hf", *dt = "f32";
    long             seed = 1234, shards = 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--no-tokenizer")) {
            no_tok = true;
            continue;
        }
        if (strcmp(a, "--arch") && strcmp(a, "--dims") && strcmp(a, "--format") && strcmp(a, "--dtype") &&
            strcmp(a, "--seed") && strcmp(a, "--shards") && strcmp(a, "-o") && strcmp(a, "--out")) {
            wgf_cli_error("llm make-test-model: unknown option '%s'", a);
            return 2;
        }
        if (!(v = flag_value(argc, argv, &i))) return 2;
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

    struct wgf_err  err = {0};
    struct tok_hook h   = {.eos = -1};
    int             rc  = 1;
    if (!no_tok) {
        /* write the tokenizer once to learn its ids (EOS = <|endoftext|>) and size */
        snprintf(h.json, sizeof h.json, "%s.tokenizer.tmp.%d.json", out, (int)getpid());
        struct wgf_tokenizer *tok = NULL;
        if (wgf_tokenizer_write_test_json(h.json, &err) != WGF_OK ||
            wgf_tokenizer_load_json(h.json, NULL, &tok, &err) != WGF_OK) {
            wgf_cli_error("%s", err.msg);
            goto out;
        }
        size_t tv = wgf_tokenizer_vocab_size(tok);
        h.eos     = wgf_tokenizer_find(tok, "<|endoftext|>");
        int32_t im_end = wgf_tokenizer_find(tok, "<|im_end|>");
        wgf_tokenizer_free(tok);
        if ((size_t)s.vocab_size < tv) {
            wgf_cli_error("--dims: vocab %d < the test tokenizer's %zu tokens (or use --no-tokenizer)", s.vocab_size, tv);
            rc = 2;
            goto out;
        }
        /* the chat template ends the assistant turn with <|im_end|>: generation stops there */
        if (h.eos >= 0) s.bos_id = h.eos; /* as Qwen2.5's config: bos_token_id = <|endoftext|> */
        s.eos_id = im_end >= 0 ? im_end : h.eos;
        h.eos    = s.eos_id;
        o.tokenizer      = tok_hook;
        o.tokenizer_user = &h;
    }
    if (wgf_test_model_write(&s, &o, out, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        goto out;
    }
    if (!wgf_cli.quiet)
        fprintf(stderr, "wgfuse: wrote %s (%s %s, %s, dim %d, hidden %d, %d layers, %d/%d heads, vocab %d%s)\n", out,
                wgf_arch_str(arch), fmt, wgf_dtype_str(o.dtype), s.dim, s.hidden_dim, s.n_layers, s.n_heads, s.n_kv_heads,
                s.vocab_size, no_tok ? ", no tokenizer" : "");
    rc = 0;
out:
    if (h.json[0]) unlink(h.json);
    return rc;
}

static int load_check(int argc, char **argv)
{
    const char *model = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-m") || !strcmp(argv[i], "--model")) {
            if (!(model = flag_value(argc, argv, &i))) return 2;
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
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

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
    const char *model = NULL, *backend = "cpu-ref";
    long        n = 64, runs = 5, threads = 0, n_prompt = 32;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!(v = flag_value(argc, argv, &i))) return 2;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) model = v;
        else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) {
            if (!wgf_cli_parse_long(a, v, 2, 1 << 16, &n)) return 2;
        } else if (!strcmp(a, "--runs")) {
            if (!wgf_cli_parse_long(a, v, 1, 1000, &runs)) return 2;
        } else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
            if (!wgf_cli_parse_long(a, v, 1, 256, &threads)) return 2;
        } else if (!strcmp(a, "--prompt-tokens")) {
            if (!wgf_cli_parse_long(a, v, 1, 1 << 16, &n_prompt)) return 2;
        } else if (!strcmp(a, "--backend")) {
            if (!backend_name_ok(v)) return 2;
            backend = v;
        } else {
            wgf_cli_error("llm bench: unknown option '%s'", a);
            return 2;
        }
    }
    if (!model) {
        wgf_cli_error("llm bench: -m PATH is required");
        return 2;
    }
    struct wgf_err         err = {0};
    struct wgf_llm_model  *m   = NULL;
    struct wgf_llm_backend be  = {0};
    wgf_ctx               *gctx = NULL;
    struct wgf_sampler     smp = {0};
    int32_t               *prompt = NULL;
    double                *pre = NULL, *dec = NULL;
    int                    rc  = 1;
    wgf_cli_note_mapped(model);
    if (wgf_llm_model_load(model, &m, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        return 1;
    }
    struct wgf_llm_backend_options bo = {.n_ctx = (uint32_t)(n_prompt + n + 1),
                                         .n_threads = threads ? (uint32_t)threads : default_threads()};
    struct wgf_sampler_params      sp = wgf_sampler_params_default();
    sp.temperature                    = 0;
    prompt = malloc((size_t)n_prompt * sizeof *prompt);
    pre    = malloc((size_t)runs * sizeof *pre);
    dec    = malloc((size_t)runs * sizeof *dec);
    if (!prompt || !pre || !dec) {
        wgf_cli_error("llm bench: out of memory");
        goto out;
    }
    if (!backend_open(backend, model, m, &bo, &gctx, &be)) goto out;
    if (wgf_sampler_init(&smp, &sp, be.n_vocab, &err) != WGF_OK) {
        wgf_cli_error("%s: %s", model, err.msg);
        goto out;
    }
    for (long i = 0; i < n_prompt; i++) prompt[i] = (int32_t)((i * 7919 + 1) % be.n_vocab); /* fixed, spread ids */
    struct wgf_gen_params gp = wgf_gen_params_default();
    gp.max_tokens            = (uint32_t)n;
    gp.ignore_eos            = true;
    uint64_t first_hash      = 0;
    for (long r = -1; r < runs; r++) { /* r = -1: warm-up */
        struct bench_hash        h  = {0xcbf29ce484222325ull};
        struct wgf_gen_callbacks cb = {.user = &h, .on_token = bench_token};
        struct wgf_gen_stats     st;
        if (wgf_generate(&be, NULL, &smp, &gp, prompt, (uint32_t)n_prompt, &cb, &st, &err) != WGF_OK) {
            wgf_cli_error("%s: %s", model, err.msg);
            goto out;
        }
        if (r < 0) {
            first_hash = h.h;
            continue;
        }
        if (h.h != first_hash) {
            wgf_cli_error("%s: run %ld generated different tokens (hash %016llx vs %016llx): not benchmarking a "
                          "nondeterministic backend", model, r, (unsigned long long)h.h, (unsigned long long)first_hash);
            goto out;
        }
        pre[r] = st.prefill_tok_s;
        dec[r] = st.decode_tok_s;
    }
    qsort(pre, (size_t)runs, sizeof *pre, cmp_double);
    qsort(dec, (size_t)runs, sizeof *dec, cmp_double);
    printf("model: %s (%s, %s, %d layers, dim %d, vocab %d)\n", model, wgf_arch_str(m->cfg.arch), m->cfg.source_dtype,
           m->cfg.n_layers, m->cfg.dim, m->cfg.vocab_size);
    if (gctx) printf("backend: %s on %s; prompt %ld tokens, %ld generated, %ld runs after 1 warm-up; ids hash %016llx\n",
                     be.name, wgf_ctx_adapter(gctx)->name, n_prompt, n, runs, (unsigned long long)first_hash);
    else printf("backend: %s, %u threads; prompt %ld tokens, %ld generated, %ld runs after 1 warm-up; ids hash %016llx\n",
           be.name, bo.n_threads, n_prompt, n, runs, (unsigned long long)first_hash);
    printf("prefill tok/s: median %.1f, best %.1f\n", pre[runs / 2], pre[runs - 1]);
    printf("decode  tok/s: median %.1f, best %.1f\n", dec[runs / 2], dec[runs - 1]);
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
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
    wgf_cli_error("llm: unknown subcommand '%s' (make-test-model, load-check, bench)", argv[1]);
    return 2;
}
