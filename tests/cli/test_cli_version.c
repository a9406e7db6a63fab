/* CLI: `wgfuse --version` names the build a result came from (issue 19).
 *
 * - the commit line is the source tree's HEAD (git rev-parse in $WGF_SOURCE_DIR), and it is
 *   compiled in: a copy of the binary run from / with no source tree around says the same;
 * - the build, dependencies and WebGPU-library lines are present, and the library line
 *   follows --webgpu-lib and $WGFUSE_WEBGPU_LIB (a missing path is reported NOT FOUND);
 * - `wgfuse version` is the same command; an unknown flag is a usage error (exit 2).
 * Mutations this catches (each tried): a build_info.c written only at configure time (a commit
 * made after configuring leaves the old sha: the HEAD check fails); the commit read from git at
 * run time (the carried copy, run in /, prints "unknown"); lib_source() ignoring --webgpu-lib. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The text after "<key>: " on its line in out, copied into buf ("" when absent). */
static const char *line_value(const char *out, const char *key, char *buf, size_t cap)
{
    buf[0]      = 0;
    size_t      k = strlen(key);
    const char *p = out;
    while (p && *p) {
        if (!strncmp(p, key, k) && p[k] == ':' && p[k + 1] == ' ') {
            const char *v = p + k + 2, *e = strchr(v, '\n');
            size_t      n = e ? (size_t)(e - v) : strlen(v);
            if (n >= cap) n = cap - 1;
            memcpy(buf, v, n);
            buf[n] = 0;
            return buf;
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    return buf;
}

int main(void)
{
    struct wgf_t t = {0};
    static char  out[1 << 14], out2[1 << 14], head[256];
    char         cmd[2048], v[1024], tmp[512];
    const char  *cli = wgf_t_cli();

    snprintf(cmd, sizeof cmd, "%s --version 2>&1", cli);
    int rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 0 && !strncmp(out, "wgfuse ", 7), "--version: exit 0, first line 'wgfuse VERSION'",
                "rc=%d %.300s", rc, out);
    wgf_t_check(&t, *line_value(out, "build", v, sizeof v) != 0, "--version: build line", "%.300s", out);
    wgf_t_check(&t, strstr(line_value(out, "dependencies", v, sizeof v), "static") != NULL ||
                        strstr(v, "shared") != NULL,
                "--version: dependencies line says static or shared", "'%s'", v);
    wgf_t_check(&t, *line_value(out, "webgpu library", v, sizeof v) != 0, "--version: webgpu library line",
                "%.300s", out);

    /* the commit is HEAD of the tree the binary was built from */
    char commit[256];
    line_value(out, "commit", commit, sizeof commit);
    const char *src = getenv("WGF_SOURCE_DIR");
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD 2>/dev/null", src ? src : ".");
    if (wgf_t_run(cmd, head, sizeof head) != 0 || strlen(head) < 40) {
        wgf_t_skip(&t, "--version: commit is the source tree's HEAD", "no git checkout at $WGF_SOURCE_DIR");
    } else {
        head[40] = 0;
        wgf_t_check(&t, !strncmp(commit, head, 40) && (commit[40] == 0 || !strcmp(commit + 40, "-dirty")),
                    "--version: commit is the source tree's HEAD", "commit '%s', HEAD %s", commit, head);
    }

    /* compiled in: a copy run from / with no source tree and no git in PATH says the same */
    wgf_t_tmpdir("cli_version", tmp, sizeof tmp);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/wgfuse-copy' && cd / && PATH=/nonexistent '%s/wgfuse-copy' --version 2>&1",
             cli, tmp, tmp);
    rc = wgf_t_run(cmd, out2, sizeof out2);
    line_value(out2, "commit", v, sizeof v);
    wgf_t_check(&t, rc == 0 && !strcmp(v, commit) && strcmp(v, "unknown") != 0,
                "--version: a carried copy (run in /, no git) names the same commit", "rc=%d '%s' vs '%s'", rc, v,
                commit);

    /* the library line follows the flag, then the environment */
    snprintf(cmd, sizeof cmd, "%s --webgpu-lib /nonexistent/libx.so --version 2>&1", cli);
    rc = wgf_t_run(cmd, out, sizeof out);
    line_value(out, "webgpu library", v, sizeof v);
    wgf_t_check(&t, rc == 0 && !strcmp(v, "/nonexistent/libx.so (--webgpu-lib, NOT FOUND)"),
                "--version: --webgpu-lib is the library named, missing file NOT FOUND", "rc=%d '%s'", rc, v);
    snprintf(cmd, sizeof cmd, "WGFUSE_WEBGPU_LIB=/nonexistent/liby.so %s version 2>&1", cli);
    rc = wgf_t_run(cmd, out, sizeof out);
    line_value(out, "webgpu library", v, sizeof v);
    wgf_t_check(&t, rc == 0 && !strcmp(v, "/nonexistent/liby.so ($WGFUSE_WEBGPU_LIB, NOT FOUND)"),
                "version: $WGFUSE_WEBGPU_LIB is the library named", "rc=%d '%s'", rc, v);

    snprintf(cmd, sizeof cmd, "%s version --bogus 2>&1", cli);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 2 && strstr(out, "--bogus") != NULL, "version --bogus: usage error naming the flag",
                "rc=%d %.200s", rc, out);
    return wgf_t_finish(&t);
}
