/* wgfuse, wasm32 build: the chat-template engine is left out (replaces the sources of src/llm/jinja/).
 *
 * The engine unwinds its errors with setjmp/longjmp, which Debian's wasi-libc (2022) and
 * clang 14 do not support for wasm32. The page generates from a raw prompt, so a model's
 * chat template is not needed; a caller that asks for one gets this refusal. */
#include "llm/jinja/jinja.h"

#include <string.h>

static const char *const why = "chat templates are not in the browser build (the template engine needs setjmp/longjmp, "
                               "which wasm32-wasi lacks here); use a raw prompt";

void wgf__jinja_limits_default(struct wgf__jinja_limits *l, size_t input_bytes)
{
    (void)input_bytes;
    memset(l, 0, sizeof *l);
}

enum wgf_status wgf__jinja_parse(const char *src, size_t len, struct wgf__jinja **out, struct wgf_err *err)
{
    (void)src, (void)len;
    *out = NULL;
    return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s", why);
}

void wgf__jinja_free(struct wgf__jinja *t) { (void)t; }

enum wgf_status wgf__jinja_render(const struct wgf__jinja *t, const struct wgf__jinja_var *vars, size_t n_vars,
                                  const struct wgf__jinja_limits *limits, int64_t now, struct wgf__jinja_out *out,
                                  struct wgf_err *err)
{
    (void)t, (void)vars, (void)n_vars, (void)limits, (void)now;
    memset(out, 0, sizeof *out);
    return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s", why);
}
