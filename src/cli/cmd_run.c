/* wgfuse run — text generation on the CPU reference backend or the GPU (--backend gpu).
 * Flags follow llama.cpp's names. Exit codes: 0 ok, 1 failure (model, file, context), 2 usage
 * error, 128 + signal when interrupted. Only the CLI prints; src/llm/ does the work. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/file.h"
#include "wgfuse/chat.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/tokenizer.h"

#define MAX_CTX (1L << 24)

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: wgfuse run -m PATH [-p PROMPT | -f FILE | --messages FILE.json | --tokens 1,2,3] [-n N] [--temp T]\n"
            "                  [--top-k K] [--top-p P] [--repeat-penalty R] [--repeat-last-n N] [--seed S] [--ctx C]\n"
            "                  [--threads N] [--system TEXT] [--no-template] [--chat-template FILE]\n"
            "                  [--chat-template-name NAME] [--parse-special] [--stop STR]... [--ignore-eos]\n"
            "                  [--logits-out FILE.npy] [--backend cpu-ref|gpu] [--plan roles|unfused] [--weights f16|f32]\n"
            "                  [--activations f32|i8x3|q8]\n"
            "  -m, --model PATH       Hugging Face directory (config.json + safetensors) or .gguf file\n"
            "  -p, --prompt TEXT      user text; wrapped in the model's chat template unless --no-template\n"
            "  -f, --file PATH        read the prompt text from a file (at most 64 MiB)\n"
            "  --messages FILE.json   a conversation: [{\"role\": \"system\"|\"user\"|\"assistant\", \"content\": \"...\"}, ...]\n"
            "  --system TEXT          a system message before the prompt\n"
            "  --chat-template FILE   render with this Jinja chat template instead of the model's own\n"
            "  --chat-template-name N use the model's chat template named N (tokenizer_config.json list form)\n"
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
            , WGF_GEN_MAX_STOP);
    wgf_cli_backend_usage(f);
    fprintf(f, "Text streams to stdout as it is produced; a stats line goes to stderr.\n");
}

struct run_opts {
    const char *model, *prompt, *prompt_file, *system, *tokens, *logits_out, *messages, *tmpl_file, *tmpl_name;
    struct wgf_cli_backend backend;
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
        int         bf = wgf_cli_backend_flag(&o->backend, argc, argv, &i);
        if (bf == 2) return 2;
        if (bf == 1) continue;
#define VAL()                                                                                                      \
    do {                                                                                                           \
        if (!(v = wgf_cli_flag_value(argc, argv, &i))) return 2;                                                           \
    } while (0)
        if (wgf_cli_is_help(a)) {
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
        } else if (!strcmp(a, "--messages")) {
            VAL();
            o->messages = v;
        } else if (!strcmp(a, "--chat-template")) {
            VAL();
            o->tmpl_file = v;
        } else if (!strcmp(a, "--chat-template-name")) {
            VAL();
            o->tmpl_name = v;
        } else if (!strcmp(a, "--tokens")) {
            VAL();
            o->tokens = v;
        } else if (!strcmp(a, "--logits-out")) {
            VAL();
            o->logits_out = v;
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
    if ((o->prompt != NULL) + (o->prompt_file != NULL) + (o->tokens != NULL) + (o->messages != NULL) > 1) {
        wgf_cli_error("run: give one of -p, -f, --messages and --tokens");
        return 2;
    }
    if (o->messages && (o->system || o->no_template)) {
        wgf_cli_error("run: --messages carries its own system message and needs a template (no --system, --no-template)");
        return 2;
    }
    return 0;
}

struct run_io {
    struct wgf_npy_writer npy;
    bool                  npy_open;
    bool                  have_text; /* tokenizer present: print text, else ids */
    size_t                tok_vocab; /* the tokenizer's ids                       */
    uint32_t              model_vocab;
    bool                  warned_no_text;
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
    } else if ((size_t)id >= io->tok_vocab && !io->warned_no_text) {
        /* a padded model vocabulary (Qwen2.5: 151936 rows, 151665 tokens) can sample a row
         * the tokenizer has no text for: say so once instead of printing nothing silently */
        io->warned_no_text = true;
        fflush(stdout);
        fprintf(stderr, "\nwgfuse: warning: generated id %d is past the tokenizer's %zu ids (the model has %u): it has no "
                        "text and prints nothing; later ones are not reported\n",
                (int)id, io->tok_vocab, io->model_vocab);
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
    struct wgf_llm_model  *mq  = NULL; /* --weights TYPE: the weights quantized at load */
    struct wgf_tokenizer  *tok = NULL;
    struct wgf_llm_backend be  = {0};
    wgf_ctx               *gctx = NULL;
    struct wgf_sampler     smp = {0};
    int32_t               *ids = NULL;
    size_t                 n_ids = 0;
    struct run_io          io  = {0};
    rc                         = 1;

    /* --tokens is parsed before the model loads so a malformed list is a usage error */
    if (o.tokens && !wgf_cli_parse_ids("--tokens", o.tokens, &ids, &n_ids)) return 2;
    char  *file_text = NULL;
    size_t file_len  = 0;
    if (o.prompt_file) {
        /* no tokenizer splits more than a few hundred bytes into one token, and no context
         * here exceeds 2^24 tokens, so past 64 MiB the prompt cannot fit: refused from its
         * size before reading (util/file.h: a regular file, sized first, named) */
        if (wgf_file_read(o.prompt_file, 64ull << 20, "a prompt (more tokens than any ctx)", &file_text, &file_len,
                          &err) != WGF_OK) {
            wgf_cli_error("%s", err.msg);
            return 1;
        }
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
        const char *text = file_text ? file_text : o.prompt ? o.prompt : "";
        size_t      len  = file_text ? file_len : strlen(text);
        size_t      nuls = 0;
        for (const char *p = text; (p = memchr(p, 0, len - (size_t)(p - text))) != NULL; p++) nuls++;
        if (nuls)
            fprintf(stderr, "wgfuse: warning: %s: the prompt holds %zu NUL byte%s; each is encoded like any other byte "
                            "(nothing is cut)\n", o.prompt_file, nuls, nuls == 1 ? "" : "s");
        if (wgf_cli_chat_encode(o.model, tok, wgf_arch_str(c->arch), &(struct wgf_cli_chat){
                                    .messages = o.messages, .system = o.system, .user = text, .user_len = len,
                                    .tmpl_file = o.tmpl_file, .tmpl_name = o.tmpl_name, .no_template = o.no_template,
                                    .parse_special = o.parse_special, .gen_prompt = true}, &ids, &n_ids, NULL, NULL) != 0)
            goto out;
    }
    for (size_t i = 0; i < n_ids; i++)
        if ((uint32_t)ids[i] >= (uint32_t)c->vocab_size) {
            if (o.tokens) {
                wgf_cli_error("--tokens: id %d is outside the vocabulary [0, %d) of %s", (int)ids[i], c->vocab_size, o.model);
                rc = 2;
            } else { /* the model's own tokenizer gave it: a model/tokenizer mismatch, not a usage error */
                const char *ts = wgf_tokenizer_token_str(tok, ids[i]);
                wgf_cli_error("%s: prompt token %zu is id %d ('%.40s') from the tokenizer, outside the model's vocabulary "
                              "[0, %d): the tokenizer (%zu ids) does not belong to these weights",
                              o.model, i, (int)ids[i], ts ? ts : "?", c->vocab_size, wgf_tokenizer_vocab_size(tok));
            }
            goto out;
        }
    if (n_ids == 0) {
        wgf_cli_error("run: empty prompt (the tokenizer adds no BOS): give -p TEXT or --tokens");
        rc = 2;
        goto out;
    }

    uint32_t n_ctx = o.ctx ? (uint32_t)o.ctx : wgf_cli_default_ctx(c);
    if (n_ids > n_ctx) {
        wgf_cli_error("%s: prompt of %zu tokens > ctx %u", o.model, n_ids, n_ctx);
        goto out;
    }
    uint64_t reach = (uint64_t)n_ids + (o.n_predict > 0 ? (uint64_t)o.n_predict : 0);
    wgf_cli_note_window(o.model, c, reach < n_ctx ? reach : n_ctx);
    if (o.ctx) wgf_cli_note_ctx(m, "--ctx", n_ctx);
    struct wgf_llm_backend_options bo = {.n_ctx = n_ctx, .n_threads = o.threads ? (uint32_t)o.threads : wgf_cli_default_threads()};
    /* --weights TYPE: the backend runs the model quantized at load; the tokenizer and the
     * config stay the file's */
    if (o.backend.quant && wgf_cli_llm_model(o.model, NULL, &o.backend, &mq)) goto out;
    if (!wgf_cli_backend_open(&o.backend, o.model, mq ? mq : m, &bo, &gctx, &be)) goto out;
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
        if (wgf_npy_writer_open(&io.npy, o.logits_out, be.n_vocab, &err) != WGF_OK) {
            wgf_cli_error("%s", err.msg);
            goto out;
        }
        io.npy_open   = true;
        gp.all_logits = true;
    }
    io.have_text                = tok != NULL;
    io.tok_vocab                = wgf_tokenizer_vocab_size(tok);
    io.model_vocab              = be.n_vocab;
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
    wgf_llm_model_free(mq);
    wgf_llm_model_free(m);
    return rc;
}
