/* wgfuse serve, through the library: a real engine fault. The server runs the GPU backend
 * (roles plan) on lavapipe; one completion succeeds; then the device is lost
 * (wgf_ctx_force_loss, Dawn's own device loss); the next completion is a 500 with the
 * device-lost reason, /health turns 503 "unhealthy" with the same reason, and later requests
 * are 503 without touching the engine. Also wgf_serve_key_equal (the constant-time
 * comparison's answers) and wgf_serve_start's refusals (a host that does not resolve).
 * Mutation caught (tried 2026-12-01): leaving en->healthy true after the fault in
 * serve_engine.c's run_job fails the three checks after the 500. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "harness.h"
#include "wgfuse/chat.h"
#include "wgfuse/gpu.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/llm_test_model.h"
#include "wgfuse/serve.h"
#include "wgfuse/tokenizer.h"

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char            log_buf[1 << 16];

static void on_log(void *user, const char *line)
{
    (void)user;
    pthread_mutex_lock(&log_mu);
    size_t n = strlen(log_buf);
    snprintf(log_buf + n, sizeof log_buf - n, "%s\n", line);
    pthread_mutex_unlock(&log_mu);
}

/* One HTTP/1.0 exchange on 127.0.0.1:port: the status, and the body in out. */
static int http(uint16_t port, const char *method, const char *path, const char *body, char *out, size_t cap)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) return -1;
    struct timeval     tv = {120, 0};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in a  = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr     = htonl(INADDR_LOOPBACK);
    if (connect(s, (struct sockaddr *)&a, sizeof a)) {
        close(s);
        return -1;
    }
    char req[4096];
    int  n = snprintf(req, sizeof req, "%s %s HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                      method, path, body ? strlen(body) : 0, body ? body : "");
    if (write(s, req, (size_t)n) != n) {
        close(s);
        return -1;
    }
    size_t len = 0;
    ssize_t r;
    while (len + 1 < cap && (r = read(s, out + len, cap - 1 - len)) > 0) len += (size_t)r;
    out[len] = 0;
    close(s);
    int status = -1;
    if (sscanf(out, "HTTP/1.%*d %d", &status) != 1) return -1;
    char *b = strstr(out, "\r\n\r\n");
    if (b) memmove(out, b + 4, strlen(b + 4) + 1);
    return status;
}

static void check_keys(struct wgf_t *t)
{
    wgf_t_check(t, wgf_serve_key_equal("sk-abc", 6, "sk-abc"), "key_equal: the same key", "%s", "");
    wgf_t_check(t, !wgf_serve_key_equal("sk-abd", 6, "sk-abc"), "key_equal: last byte differs", "%s", "");
    wgf_t_check(t, !wgf_serve_key_equal("sk-ab", 5, "sk-abc"), "key_equal: a prefix", "%s", "");
    wgf_t_check(t, !wgf_serve_key_equal("sk-abcd", 7, "sk-abc"), "key_equal: longer", "%s", "");
    wgf_t_check(t, !wgf_serve_key_equal("", 0, "sk-abc"), "key_equal: empty", "%s", "");
    wgf_t_check(t, !wgf_serve_key_equal("sk-abc\0x", 8, "sk-abc"), "key_equal: a NUL then more", "%s", "");
}

int main(void)
{
    struct wgf_t t = {0};
    check_keys(&t);
    char dir[512], model_dir[600];
    wgf_t_tmpdir("serve_fault", dir, sizeof dir);
    snprintf(model_dir, sizeof model_dir, "%s/model", dir);
    struct wgf_test_model_spec spec;
    wgf_test_model_spec_default(&spec, WGF_ARCH_LLAMA);
    spec.vocab_size               = WGF_TOK_TEST_VOCAB;
    struct wgf_test_model_opts mo = {.format = WGF_TEST_MODEL_HF, .dtype = WGF_DT_F32, .with_test_tokenizer = true};
    struct wgf_err             err = {0};
    struct wgf_llm_model      *m   = NULL;
    struct wgf_tokenizer      *tok = NULL;
    if (!wgf_t_check(&t, wgf_test_model_write(&spec, &mo, model_dir, &err) == WGF_OK, "test model", "%s", err.msg) ||
        !wgf_t_check(&t, wgf_llm_model_load(model_dir, &m, &err) == WGF_OK && wgf_llm_tokenizer_load(m, &tok, &err) == WGF_OK && tok,
                     "load model and tokenizer", "%s", err.msg))
        return wgf_t_finish(&t);
    wgf_ctx *ctx = wgf_t_gpu(&t);
    if (!ctx) return wgf_t_finish(&t);
    struct wgf_llm_backend         be = {0};
    struct wgf_llm_backend_options bo = {.n_ctx = 128, .gpu = ctx};
    if (!wgf_t_check(&t, wgf_llm_backend_open(&be, wgf_llm_backend_find("gpu", NULL), m, &bo, &err) == WGF_OK,
                     "gpu backend (roles)", "%s", err.msg))
        goto out_ctx;

    struct wgf_chat *chat = NULL; /* the model's template, or the built-in one its tokens fit */
    if (!wgf_t_check(&t, wgf_chat_open(tok, wgf_arch_str(m->cfg.arch), NULL, &chat, &err) == WGF_OK, "chat template",
                     "%s", err.msg))
        goto out_be;
    struct wgf_serve_config sc = {.host = "no-such-host.invalid", .backend = &be, .tok = tok, .model = &m->cfg,
                                  .chat = chat, .log = on_log, .model_id = "fault"};
    struct wgf_server *srv = NULL;
    enum wgf_status    s   = wgf_serve_start(&sc, &srv, &err);
    wgf_t_check(&t, s == WGF_ERR_ARG && srv == NULL && strstr(err.msg, "no-such-host.invalid"),
                "a host that does not resolve is refused, named", "%s: %s", wgf_status_str(s), err.msg);
    sc.host = "127.0.0.1";
    if (!wgf_t_check(&t, wgf_serve_start(&sc, &srv, &err) == WGF_OK && wgf_serve_port(srv) > 0, "server started on a free port",
                     "%s", err.msg))
        goto out_be;
    uint16_t    port = wgf_serve_port(srv);
    static char out[1 << 16];
    const char *req = "{\"prompt\": \"Hello world\", \"max_tokens\": 4, \"temperature\": 0}";
    int         st  = http(port, "POST", "/v1/completions", req, out, sizeof out);
    wgf_t_check(&t, st == 200 && strstr(out, "\"completion_tokens\":"), "a completion on the GPU backend", "%d %.300s", st, out);
    st = http(port, "GET", "/health", NULL, out, sizeof out);
    wgf_t_check(&t, st == 200 && strstr(out, "\"ok\""), "health ok before the fault", "%d %.300s", st, out);

    s = wgf_ctx_force_loss(ctx, "test_serve_fault: device lost on purpose");
    if (wgf_t_check(&t, s == WGF_OK, "force the device loss", "%s", wgf_status_str(s))) {
        st = http(port, "POST", "/v1/completions", req, out, sizeof out);
        wgf_t_check(&t, st == 500 && strstr(out, "\"server_error\"") && strstr(out, "lost"),
                    "the request that meets the lost device: 500 naming it", "%d %.400s", st, out);
        char why[512];
        wgf_t_check(&t, !wgf_serve_healthy(srv, why, sizeof why) && strstr(why, "lost"), "wgf_serve_healthy: false, why",
                    "%s", why);
        st = http(port, "GET", "/health", NULL, out, sizeof out);
        wgf_t_check(&t, st == 503 && strstr(out, "unhealthy") && strstr(out, "lost"),
                    "health unhealthy after the fault, with the reason", "%d %.300s", st, out);
        struct wgf_serve_stats before = wgf_serve_stats(srv);
        st = http(port, "POST", "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", out, sizeof out);
        struct wgf_serve_stats after = wgf_serve_stats(srv);
        wgf_t_check(&t, st == 503 && strstr(out, "unhealthy") && after.generations == before.generations,
                    "later requests: 503 with the reason, the engine untouched", "%d %.300s", st, out);
    }
    wgf_serve_stop(srv, 1);
    wgf_serve_stop(srv, 1); /* idempotent */
    pthread_mutex_lock(&log_mu);
    wgf_t_check(&t, strstr(log_buf, "engine fault, the server is now unhealthy") && strstr(log_buf, "\"POST /v1/completions\" 500"),
                "the log names the fault and the 500", "%.1500s", log_buf);
    pthread_mutex_unlock(&log_mu);
    wgf_serve_free(srv);
out_be:
    wgf_chat_close(chat);
    wgf_llm_backend_close(&be);
out_ctx:
    wgf_ctx_free(ctx);
    wgf_tokenizer_free(tok);
    wgf_llm_model_free(m);
    return wgf_t_finish(&t);
}
