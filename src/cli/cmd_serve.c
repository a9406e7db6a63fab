/* wgfuse serve — an OpenAI-compatible HTTP server over one model (docs/serve.md). Loads the
 * model, its tokenizer and a backend exactly as `wgfuse run` does, hands them to the serve
 * library (include/wgfuse/serve.h), prints the access log on stderr, and on SIGINT/SIGTERM
 * stops accepting, lets the requests held finish for --shutdown-grace seconds, cancels the
 * rest and exits 0. Exit codes: 0 stopped by a signal, 1 failure (model, bind), 2 usage. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "wgfuse/chat.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/tokenizer.h"
#ifdef WGF_HAVE_SERVE
#include "wgfuse/serve.h"
#endif

#define MAX_CTX (1L << 24)

static void serve_usage(FILE *f)
{
    fprintf(f,
            "usage: wgfuse serve -m PATH [--host ADDR] [--port N] [--api-key KEY] [--alias NAME] [--ctx C]\n"
            "                    [--parallel N] [--backend cpu-ref|gpu] [--plan P] [options]\n"
            "  An OpenAI-compatible HTTP server: POST /v1/chat/completions, POST /v1/completions (stream: true\n"
            "  for server-sent events), GET /v1/models, GET /health, POST /tokenize, POST /detokenize.\n"
            "  One engine runs one request at a time, in arrival order (docs/serve.md).\n"
            "  -m, --model PATH       Hugging Face directory or GGUF file (with its tokenizer)\n"
            "  --host ADDR            address to listen on (default 127.0.0.1; anything else without\n"
            "                         --api-key gets a warning)\n"
            "  --port N               TCP port (default 8080; 0: the OS picks one, printed at start)\n"
            "  --api-key KEY          require \"Authorization: Bearer KEY\" (default: $WGFUSE_API_KEY; the\n"
            "                         environment keeps the key out of `ps`)\n"
            "  --alias NAME           the model's name in /v1/models and responses (default: the path's\n"
            "                         last component)\n"
            "  -c, --ctx C            context length in tokens (default: the model's, at most 4096)\n"
            "  -t, --threads N        cpu-ref threads (default: online cores, at most 16)\n"
            "  --parallel N           requests held at once: 1 generating + N-1 waiting in FIFO order;\n"
            "                         one more gets 503 (default %u)\n"
            "  --max-prompt-tokens N  a longer prompt gets 422 (default: the context)\n"
            "  --max-tokens N         the largest max_tokens accepted, and the default (default: the context)\n"
            "  --max-body BYTES       a larger request body gets 413 (default %u)\n"
            "  --timeout S            a request's deadline, waiting + generating (default %u)\n"
            "  --read-timeout S       a request's headers and body must arrive within S seconds, else the\n"
            "                         connection is closed (default %u)\n"
            "  --shutdown-grace S     on SIGINT/SIGTERM, time for the requests held to finish before they\n"
            "                         are cancelled (default 10)\n"
            "  --chat-template FILE   render chat messages with this Jinja chat template instead of the\n"
            "                         model's own (as `wgfuse run --chat-template`)\n"
            "  --chat-template-name N use the model's chat template named N (tokenizer_config.json list form)\n"
            "  --no-template          no chat template: a chat request must be one user message, encoded as\n"
            "                         it is\n",
#ifdef WGF_HAVE_SERVE
            WGF_SERVE_DEFAULT_PARALLEL, WGF_SERVE_DEFAULT_MAX_BODY, WGF_SERVE_DEFAULT_TIMEOUT_S, WGF_SERVE_DEFAULT_READ_S
#else
            8u, 4u << 20, 600u, 15u
#endif
    );
    wgf_cli_backend_usage(f);
}

struct serve_opts {
    const char            *model, *host, *api_key, *alias, *tmpl_file, *tmpl_name;
    struct wgf_cli_backend backend;
    long   port, ctx, threads, parallel, max_prompt, max_tokens, max_body, timeout, read_timeout;
    double grace;
    bool   no_template;
};

/* 0 ok, 2 usage error (printed), -1 help printed */
static int serve_parse(int argc, char **argv, struct serve_opts *o)
{
    memset(o, 0, sizeof *o);
    o->port  = 8080;
    o->grace = 10;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int         bf = wgf_cli_backend_flag(&o->backend, argc, argv, &i);
        if (bf == 2) return 2;
        if (bf == 1) continue;
#define VAL()                                                                                                      \
    do {                                                                                                           \
        if (!(v = wgf_cli_flag_value(argc, argv, &i))) return 2;                                                   \
    } while (0)
#define LONG(lo, hi, dst)                                                                                          \
    do {                                                                                                           \
        VAL();                                                                                                     \
        if (!wgf_cli_parse_long(a, v, lo, hi, dst)) return 2;                                                      \
    } while (0)
        if (wgf_cli_is_help(a)) {
            serve_usage(stdout);
            return -1;
        } else if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            VAL();
            o->model = v;
        } else if (!strcmp(a, "--host")) {
            VAL();
            o->host = v;
        } else if (!strcmp(a, "--api-key")) {
            VAL();
            o->api_key = v;
        } else if (!strcmp(a, "--alias")) {
            VAL();
            o->alias = v;
        } else if (!strcmp(a, "--chat-template") || !strcmp(a, "--chat-template-name")) {
            VAL(); /* the file's contents, or one of the model's named templates (as `wgfuse run`) */
            *(strcmp(a, "--chat-template") ? &o->tmpl_name : &o->tmpl_file) = v;
        } else if (!strcmp(a, "--port")) LONG(0, 65535, &o->port);
        else if (!strcmp(a, "-c") || !strcmp(a, "--ctx") || !strcmp(a, "--ctx-size")) LONG(1, MAX_CTX, &o->ctx);
        else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) LONG(1, 256, &o->threads);
        else if (!strcmp(a, "--parallel")) LONG(1, 4096, &o->parallel);
        else if (!strcmp(a, "--max-prompt-tokens")) LONG(1, MAX_CTX, &o->max_prompt);
        else if (!strcmp(a, "--max-tokens")) LONG(1, MAX_CTX, &o->max_tokens);
        else if (!strcmp(a, "--max-body")) LONG(1, 1L << 30, &o->max_body);
        else if (!strcmp(a, "--timeout")) LONG(1, 86400, &o->timeout);
        else if (!strcmp(a, "--read-timeout")) LONG(1, 3600, &o->read_timeout);
        else if (!strcmp(a, "--shutdown-grace")) {
            VAL();
            if (!wgf_cli_parse_double(a, v, 0, 3600, &o->grace)) return 2;
        } else if (!strcmp(a, "--no-template")) {
            o->no_template = true;
        } else {
            wgf_cli_error("serve: unknown option '%s' (wgfuse serve --help)", a);
            return 2;
        }
#undef LONG
#undef VAL
    }
    if (!o->model) {
        wgf_cli_error("serve: -m PATH is required");
        return 2;
    }
    if (o->no_template && (o->tmpl_file || o->tmpl_name)) {
        wgf_cli_error("serve: --no-template and --chat-template%s contradict each other", o->tmpl_file ? "" : "-name");
        return 2;
    }
    if (o->host && !*o->host) {
        wgf_cli_error("--host: empty address");
        return 2;
    }
    if (!o->api_key) o->api_key = getenv("WGFUSE_API_KEY");
    return 0;
}

#ifdef WGF_HAVE_SERVE
static void log_line(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "%s\n", line); /* one call: stdio keeps the line whole across threads */
}

/* The model's name for clients: the last non-empty path component. */
static void model_name(const char *path, char *out, size_t cap)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/') b--;
    snprintf(out, cap, "%.*s", (int)(n - b), path + b);
}
#endif

int wgf_cmd_serve(int argc, char **argv)
{
    struct serve_opts o;
    int               rc = serve_parse(argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
#ifndef WGF_HAVE_SERVE
    wgf_cli_error("serve: this wgfuse was built without libmicrohttpd (-DWGF_SERVE=OFF, the default of "
                  "-DWGF_STATIC_DEPS=ON); rebuild with -DWGF_SERVE=ON");
    return 1;
#else
    struct wgf_err         err  = {0};
    struct wgf_llm_model  *m    = NULL;
    struct wgf_tokenizer  *tok  = NULL;
    struct wgf_llm_backend be   = {0};
    wgf_ctx               *gctx = NULL;
    struct wgf_server     *srv  = NULL;
    struct wgf_chat       *chat = NULL;
    rc                          = 1;
    signal(SIGPIPE, SIG_IGN); /* a client gone mid-write is an error return, not a signal */
    wgf_cli_catch_interrupts();

    wgf_cli_note_mapped(o.model);
    if (wgf_llm_model_load(o.model, &m, &err) != WGF_OK || wgf_llm_tokenizer_load(m, &tok, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        goto out;
    }
    if (!tok) {
        wgf_cli_error("%s: the model has no tokenizer (tokenizer.json / tokenizer.ggml.*): serve needs one", o.model);
        goto out;
    }
    const struct wgf_llm_config *c = &m->cfg;
    if (!o.no_template) { /* one template for the server's life: every connection thread encodes with it */
        enum wgf_status st = wgf_cli_chat_open(o.model, tok, wgf_arch_str(c->arch), o.tmpl_file, o.tmpl_name, false,
                                               &chat, &err);
        if (st == WGF_ERR_UNSUPPORTED && !o.tmpl_name)
            fprintf(stderr, "wgfuse: warning: %s: the model ships no chat template and none of the built-in ones fits "
                            "its special tokens; chat requests must be one user message, sent without a template\n",
                    o.model);
        else if (st) {
            wgf_cli_error("%s", err.msg);
            goto out;
        }
    }
    uint32_t n_ctx = (uint32_t)(o.ctx ? o.ctx : wgf_cli_default_ctx(c));
    wgf_cli_note_window(o.model, c, n_ctx);
    if (o.ctx) wgf_cli_note_ctx(m, "--ctx", n_ctx);
    struct wgf_llm_backend_options bo = {.n_ctx     = n_ctx,
                                         .n_threads = o.threads ? (uint32_t)o.threads : wgf_cli_default_threads()};
    if (!wgf_cli_backend_open(&o.backend, o.model, m, &bo, &gctx, &be)) goto out;

    char name[256];
    model_name(o.model, name, sizeof name);
    struct wgf_serve_config sc = {
        .host              = o.host,
        .port              = (uint16_t)o.port,
        .api_key           = o.api_key,
        .model_id          = o.alias ? o.alias : name,
        .backend           = &be,
        .tok               = tok,
        .model             = c,
        .chat              = chat,
        .parallel          = (uint32_t)o.parallel,
        .max_prompt_tokens = (uint32_t)o.max_prompt,
        .max_tokens        = (uint32_t)o.max_tokens,
        .max_body          = (size_t)o.max_body,
        .timeout_s         = (uint32_t)o.timeout,
        .read_timeout_s    = (uint32_t)o.read_timeout,
        .log               = log_line,
    };
    if (wgf_serve_start(&sc, &srv, &err) != WGF_OK) {
        wgf_cli_error("serve: %s", err.msg);
        rc = err.status == WGF_ERR_ARG ? 2 : 1;
        goto out;
    }
    const char *h = o.host ? o.host : "127.0.0.1";
    fprintf(stderr, "wgfuse: serve: listening on http://%s%s%s:%u (model %s, %s, ctx %u, %s, parallel %u%s)\n",
            strchr(h, ':') ? "[" : "", h, strchr(h, ':') ? "]" : "", (unsigned)wgf_serve_port(srv), sc.model_id,
            be.name, be.n_ctx, chat ? wgf_chat_source(chat) : "no chat template",
            o.parallel ? (unsigned)o.parallel : WGF_SERVE_DEFAULT_PARALLEL, o.api_key && *o.api_key ? ", API key required" : "");
    while (!wgf_cli_interrupt_pending()) {
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "wgfuse: serve: %s: no new connections; the requests held get %.3g s to finish\n",
            wgf_cli_interrupt_name(), o.grace);
    double t0 = wgf_llm_now();
    wgf_serve_stop(srv, o.grace);
    struct wgf_serve_stats st = wgf_serve_stats(srv);
    fprintf(stderr, "wgfuse: serve: stopped in %.2f s: %llu requests, %llu generations, %llu tokens, %llu cancelled, %llu "
                    "turned away busy\n",
            wgf_llm_now() - t0, (unsigned long long)st.requests, (unsigned long long)st.generations,
            (unsigned long long)st.tokens_generated, (unsigned long long)st.cancelled,
            (unsigned long long)st.rejected_busy);
    rc = 0;
out:
    wgf_serve_free(srv);
    wgf_chat_close(chat);
    wgf_llm_backend_close(&be);
    wgf_ctx_free(gctx);
    wgf_tokenizer_free(tok);
    wgf_llm_model_free(m);
    return rc;
#endif
}
