/* wgfuse CLI — the process-wide CLI state and helpers shared by subcommands. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

struct wgf_cli_state wgf_cli;

struct wgf_gpu_options wgf_cli_gpu_options(void)
{
    struct wgf_gpu_options o = wgf_gpu_options_default();
    o.lib_path = wgf_cli.webgpu_lib;
    o.adapter  = wgf_cli.adapter;
    return o;
}

void wgf_cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("wgfuse: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

bool wgf_cli_parse_long(const char *flag, const char *s, long lo, long hi, long *out)
{
    if (!s || !*s) {
        wgf_cli_error("%s needs a value", flag);
        return false;
    }
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        wgf_cli_error("%s: '%s' is not an integer in [%ld, %ld]", flag, s, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

bool wgf_cli_parse_double(const char *flag, const char *s, double lo, double hi, double *out)
{
    if (!s || !*s) {
        wgf_cli_error("%s needs a value", flag);
        return false;
    }
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < lo || v > hi) {
        wgf_cli_error("%s: '%s' is not a number in [%g, %g]", flag, s, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

void wgf_cli_note_mapped(const char *path)
{
    snprintf(wgf_cli.mapped_path, sizeof wgf_cli.mapped_path, "%s", path ? path : "");
}

int wgf_cli_write_atomic(const char *path, const void *data, size_t n)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp) return ENAMETOOLONG;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return errno;
    const char *p = data;
    size_t left = n;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            close(fd);
            unlink(tmp);
            return e;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return e;
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return e;
    }
    return 0;
}
