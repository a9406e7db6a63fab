/* CLI: a model file truncated while `wgfuse run` is using it (RELIABILITY.md #30) ends in one
 * line naming the file and exit code 1 — not a SIGBUS crash. The run decodes long enough
 * (thousands of tokens on a mid-size random model) that the truncation, made once the first
 * token is printed, lands mid-generation;
 * if the machine finished first, the case is reported as a skip, not a pass. */
#include <stdio.h>
#include <string.h>

#include "harness.h"

int main(void)
{
    struct wgf_t t = {0};
    static char out[1 << 16];
    char dir[512], cmd[4096];
    const char *cli = wgf_t_cli();
    wgf_t_tmpdir("cli_sigbus", dir, sizeof dir);
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s/m' && %s llm make-test-model --arch llama --format hf --dtype f32 "
             "--dims dim=256,hidden=688,layers=4,heads=8,kv_heads=4,vocab=512,ctx=4096 -o '%s/m'",
             dir, cli, dir);
    int rc = wgf_t_run(cmd, out, sizeof out);
    if (!wgf_t_check(&t, rc == 0, "make test model", "rc=%d %.300s", rc, out)) return wgf_t_finish(&t);
    /* start a long greedy run; once its first token is out (the weights are mapped and in use,
     * however slow the build: sanitizers start slowly) truncate them; collect its exit code.
     * The wait is bounded (120 s) and ends early if the run exits. */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && rm -f run.out run.err run.rc && "
             "( %s run -m m --tokens 1 -n 4000 --temp 0 --ignore-eos -t 1 > run.out 2> run.err & "
             "pid=$!; i=0; while [ ! -s run.out ] && kill -0 $pid 2>/dev/null && [ $i -lt 1200 ]; do "
             "sleep 0.1; i=$((i+1)); done; truncate -s 4096 m/model.safetensors; wait $pid; "
             "echo \"exit=$?\" > run.rc ); cat run.rc run.err",
             dir, cli);
    rc = wgf_t_run(cmd, out, sizeof out);
    if (strstr(out, "exit=0")) {
        wgf_t_skip(&t, "truncated while mapped", "the run finished before the truncation (machine too fast)");
    } else {
        wgf_t_check(&t, strstr(out, "error: m:") != NULL, "the message names the model path", "%.400s", out);
        wgf_t_check(&t, strstr(out, "exit=1") && strstr(out, "truncated or became unreadable while in use"),
                    "truncated while mapped: one line, exit 1, no crash", "%.400s", out);
    }
    return wgf_t_finish(&t);
}
