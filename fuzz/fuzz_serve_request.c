/* Fuzz target serve_request: a `wgfuse serve` request body (serve_request_parse, the JSON ->
 * request step every POST goes through before any tokenizer or engine sees it). The first
 * byte picks the endpoint (chat, completions, tokenize, detokenize); the rest is the body.
 * Oracle: a refusal is an OpenAI error with a 4xx/5xx status, a one-line message and a body
 * that is itself valid JSON; an accepted request keeps the documented limits. */
#include <jansson.h>

#include "fuzz_common.h"
#include "serve/serve_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    enum serve_kind      kind = (enum serve_kind)(data[0] % 4);
    struct serve_request r;
    struct serve_error   e;
    memset(&e, 0, sizeof e);
    if (serve_request_parse(kind, (const char *)data + 1, size - 1, 256, &r, &e)) {
        FZ_REQUIRE(e.http >= 400 && e.http < 600, "status %d", e.http);
        FZ_REQUIRE(e.msg[0] && !strchr(e.msg, '\n'), "message '%s'", e.msg);
        char *body = serve_error_json(&e);
        FZ_REQUIRE(body != NULL, "error body for '%s'", e.msg);
        json_t *o = json_loads(body, 0, NULL);
        FZ_REQUIRE(o && json_is_object(json_object_get(o, "error")), "error body is not JSON: %s", body);
        json_decref(o);
        free(body);
        return 0;
    }
    FZ_REQUIRE(r.max_tokens >= 0 && r.max_tokens <= 256, "max_tokens %lld", (long long)r.max_tokens);
    if (kind == SERVE_CHAT) FZ_REQUIRE(r.n_msgs >= 1 && r.n_msgs <= WGF_SERVE_MAX_MESSAGES, "n_msgs %zu", r.n_msgs);
    for (size_t i = 0; i < r.n_msgs; i++) FZ_REQUIRE(r.msgs[i].role && r.msgs[i].content, "message %zu", i);
    size_t n_stop = 0;
    while (r.stop[n_stop]) FZ_REQUIRE(++n_stop <= WGF_SERVE_MAX_STOP, "stop strings %zu", n_stop);
    if (kind == SERVE_CHAT || kind == SERVE_COMPLETION)
        FZ_REQUIRE(r.temperature >= 0 && r.temperature <= 2 && r.top_p > 0 && r.top_p <= 1, "sampling %g %g",
                   r.temperature, r.top_p);
    serve_request_free(&r);
    return 0;
}
