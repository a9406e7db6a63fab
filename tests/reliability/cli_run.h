/* The CLI under test ($WGF_CLI) run from the reliability tests: one command at a time under
 * `timeout`, its stderr captured and its stdout kept in <dir>/stdout, so a command that
 * hangs (a FIFO read, /dev/zero) fails its check with exit 124 instead of the suite. */
#ifndef WGF_TEST_CLI_RUN_H
#define WGF_TEST_CLI_RUN_H
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

struct cli_out {
    int  rc;          /* exit code; 124 timed out; -1 killed by a signal */
    char se[16384];   /* stderr, truncated                                */
};

/* `timeout 120 CLI ARGS` (ARGS already quoted for sh) in the scratch directory `dir`. */
static inline void cli_run(struct cli_out *o, const char *dir, const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "{ timeout 120 '%s' %s 2>&1 >'%s/stdout' </dev/null; }", wgf_t_cli(), args, dir);
    o->rc = wgf_t_run(cmd, o->se, sizeof o->se);
}

/* Bytes the last cli_run wrote to stdout (-1 if none). */
static inline long cli_stdout_bytes(const char *dir)
{
    char        p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/stdout", dir);
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static inline int cli_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

#endif
