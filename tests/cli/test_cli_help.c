/* CLI: every command and subcommand answers -h / --help with its usage and exit 0, also after
 * other arguments (before, `wgfuse llm bench --help` answered "--help needs a value" and
 * `wgfuse sim train cartpole --help` "unknown flag"). No device is touched. */
#include <stdio.h>
#include <string.h>

#include "harness.h"

int main(void)
{
    struct wgf_t t = {0};
    static char  out[1 << 16];
    char         cmd[1024];
    const char  *cli = wgf_t_cli();
    static const char *const subs[] = {
        "", "info", "report", "run", "tokenize", "serve",
        "llm", "llm make-test-model", "llm load-check", "llm bench", "llm bench -m model.gguf",
        "sim", "sim train", "sim train cartpole", "sim eval", "sim eval x.policy",
        "sim bench", "sim trace", "sim trace cartpole", "sim market",
        "bench", "bench dispatch", "bench fusion", "advise",
    };
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        for (int form = 0; form < 2; form++) {
            const char *flag = form ? "-h" : "--help";
            snprintf(cmd, sizeof cmd, "%s %s %s 2>/dev/null", cli, subs[i], flag);
            int  rc = wgf_t_run(cmd, out, sizeof out);
            char name[160];
            snprintf(name, sizeof name, "wgfuse %s%s%s: usage, exit 0", subs[i], *subs[i] ? " " : "", flag);
            wgf_t_check(&t, rc == 0 && strstr(out, "usage:") != NULL, name, "rc=%d %.200s", rc, out);
        }
    return wgf_t_finish(&t);
}
