/* wgfuse — status strings and the error slot. */
#include "wgfuse/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *wgf_status_str(enum wgf_status s)
{
    switch (s) {
    case WGF_OK: return "ok";
    case WGF_ERR_ARG: return "invalid argument";
    case WGF_ERR_IO: return "i/o error";
    case WGF_ERR_FORMAT: return "malformed input";
    case WGF_ERR_NOMEM: return "out of host memory";
    case WGF_ERR_UNSUPPORTED: return "unsupported";
    case WGF_ERR_LIMIT: return "limit exceeded";
    case WGF_ERR_LIB: return "WebGPU library not loadable";
    case WGF_ERR_NO_ADAPTER: return "no usable WebGPU adapter";
    case WGF_ERR_GPU: return "GPU error";
    case WGF_ERR_GPU_OOM: return "GPU out of memory";
    case WGF_ERR_SHADER: return "shader error";
    case WGF_ERR_DEVICE_LOST: return "device lost";
    case WGF_ERR_TIMEOUT: return "timeout";
    case WGF_ERR_CONTEXT: return "context length exceeded";
    case WGF_ERR_INTERNAL: return "internal error";
    case WGF_ERR_INTERRUPTED: return "interrupted";
    }
    return "unknown status";
}

/* Messages are one line: each newline or carriage return from lower layers (Dawn's
 * multi-line reports) becomes a space, in place (tests/util/test_util_status.c). */
void wgf_one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r') *s = ' ';
}

enum wgf_status wgf_fail(struct wgf_err *e, enum wgf_status s, const char *fmt, ...)
{
    if (!e) return s;
    e->status = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    wgf_one_line(e->msg);
    return s;
}

enum wgf_status wgf_err_prefix(struct wgf_err *e, const char *fmt, ...)
{
    if (!e) return WGF_ERR_INTERNAL;
    char prefix[WGF_ERR_MSG_MAX], old[WGF_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    snprintf(e->msg, sizeof e->msg, "%.400s: %.600s", prefix, old);
    wgf_one_line(e->msg);
    return e->status;
}

void wgf_err_clear(struct wgf_err *e)
{
    if (!e) return;
    e->status = WGF_OK;
    e->msg[0] = '\0';
}

void wgf__assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: internal check failed: %s\n", file, line, expr);
    abort();
}
