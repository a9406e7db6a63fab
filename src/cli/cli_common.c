/* wgfuse CLI — the process-wide CLI state and helpers shared by subcommands. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/file.h"

struct wgf_cli_state wgf_cli;

struct wgf_gpu_options wgf_cli_gpu_options(void)
{
    struct wgf_gpu_options o = wgf_gpu_options_default();
    o.lib_path = wgf_cli.webgpu_lib;
    o.adapter  = wgf_cli.adapter;
    o.robust_shaders = wgf_cli.robust_shaders;
    o.backend_labels = wgf_cli.backend_labels;
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

bool wgf_cli_is_help(const char *arg) { return arg && (!strcmp(arg, "-h") || !strcmp(arg, "--help")); }

const char *wgf_cli_flag_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        wgf_cli_error("%s needs a value", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

bool wgf_cli_parse_ids(const char *flag, const char *s, int32_t **ids, size_t *n)
{
    *ids = NULL;
    *n   = 0;
    size_t cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    if (cap > (size_t)WGF_CLI_MAX_IDS) {
        wgf_cli_error("%s: more than %ld ids", flag, WGF_CLI_MAX_IDS);
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

int wgf_cli_split_list(const char *flag, const char *s, char **copy, const char **items, int cap)
{
    *copy = NULL;
    if (!s || !*s) return wgf_cli_error("%s: empty list", flag), -1;
    if (!(*copy = strdup(s))) return wgf_cli_error("%s: out of memory", flag), -1;
    int n = 0;
    for (char *p = *copy;; p++) {
        char *end = strchr(p, ',');
        if (end) *end = 0;
        if (!*p) return wgf_cli_error("%s: empty item in '%s'", flag, s), -1;
        if (n == cap) return wgf_cli_error("%s: more than %d items in '%s'", flag, cap, s), -1;
        items[n++] = p;
        if (!end) return n;
        p = end;
    }
}

void wgf_cli_note_mapped(const char *path)
{
    snprintf(wgf_cli.mapped_path, sizeof wgf_cli.mapped_path, "%s", path ? path : "");
}

static void on_interrupt(int sig) { wgf_cli.interrupted = sig; }

void wgf_cli_catch_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sa.sa_flags   = (int)SA_RESETHAND; /* the second signal gets the default action */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int wgf_cli_interrupt_code(void) { return 128 + (int)wgf_cli.interrupted; }

const char *wgf_cli_interrupt_name(void)
{
    return wgf_cli.interrupted == SIGINT ? "SIGINT" : wgf_cli.interrupted == SIGTERM ? "SIGTERM" : "a signal";
}

int wgf_cli_write_file(const char *who, const char *path, const void *data, size_t n)
{
    struct wgf_err err = {0};
    if (wgf_file_write_atomic(path, data, n, &err) == WGF_OK) return 0;
    wgf_cli_error("%s: %s", who, err.msg);
    return 1;
}

int wgf_cli_write_atomic(const char *path, const void *data, size_t n)
{
    struct wgf_err err = {0};
    errno              = 0;
    if (wgf_file_write_atomic(path, data, n, &err) == WGF_OK) return 0;
    return errno ? errno : EIO;
}
