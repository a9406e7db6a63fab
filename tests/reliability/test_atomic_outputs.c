/* Killed runs and full disks keep earlier results (RELIABILITY.md item 38). Every output
 * wgfuse writes goes to "<path>.tmp.<pid>" and is renamed over the result only when
 * complete: benchmark JSON/CSV/SVG (wgf_cli_write_atomic), trained policies and market
 * paths (cmd_sim.c, same helper), logits .npy (wgf_npy_writer). Each case starts with an
 * earlier result "EARLIER\n" at the path, then:
 *   - SIGKILL in the middle of `wgfuse bench dispatch --out` and `wgfuse sim train --out`;
 *   - a disk that fills up (RLIMIT_FSIZE with SIGXFSZ ignored: writes fail with EFBIG, as
 *     on ENOSPC) under `wgfuse sim market --out`: exit 1 naming the path, no temp left;
 *   - the .npy writer killed before close, and failing on a full disk.
 * and checks the earlier result is byte-identical afterwards. A completed run replaces it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "wgfuse/llm_run.h"

static char        dir[600];
static const char *cli;
static const char  earlier[] = "EARLIER\n";

static void put_earlier(const char *path)
{
    FILE *f = fopen(path, "wb");
    fputs(earlier, f);
    fclose(f);
}

static bool is_earlier(const char *path)
{
    char  buf[64] = {0};
    FILE *f       = fopen(path, "rb");
    if (!f) return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n == strlen(earlier) && !memcmp(buf, earlier, n);
}

/* Files in dir whose name starts with base".tmp." */
static int temps_left(const char *base)
{
    char cmd[1400], out[256];
    snprintf(cmd, sizeof cmd, "ls -1 '%s' | grep -c '^%s\\.tmp\\.' || true", dir, base);
    wgf_t_run(cmd, out, sizeof out);
    return atoi(out);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Start `cli args...` (stdout/stderr to dir/log), SIGKILL it after `after` s. Returns true
 * if it was still running when killed. */
static bool run_and_kill(char *const argv[], double after)
{
    pid_t pid = fork();
    if (pid == 0) {
        char log[700];
        snprintf(log, sizeof log, "%s/log", dir);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1), dup2(fd, 2);
        execv(cli, argv);
        _exit(127);
    }
    double t0 = now_s();
    int    st;
    while (now_s() - t0 < after) {
        if (waitpid(pid, &st, WNOHANG) == pid) return false;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

static void killed_cli(struct wgf_t *t, const char *what, const char *file, char *const argv[], double after)
{
    char path[800], name[160];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    put_earlier(path);
    bool killed = run_and_kill(argv, after);
    snprintf(name, sizeof name, "%s killed after %.1f s: earlier result intact", what, after);
    if (!killed) {
        wgf_t_skip(t, name, "the run finished before the kill");
        return;
    }
    wgf_t_check(t, is_earlier(path), name, "%s", is_earlier(path) ? "unchanged" : "earlier result overwritten");
}

static void disk_full_cli(struct wgf_t *t)
{
    char path[800], cmd[2400], out[4096];
    snprintf(path, sizeof path, "%s/market.json", dir);
    put_earlier(path);
    /* 16 KiB limit: the 300 KB market path cannot be written; SIGXFSZ ignored -> EFBIG */
    snprintf(cmd, sizeof cmd, "trap '' XFSZ; ulimit -f 16; exec '%s' sim market --out '%s'", cli, path);
    int rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(t, rc == 1 && strstr(out, path) && is_earlier(path) && temps_left("market.json") == 0,
                "sim market --out on a full disk: exit 1 naming the path, earlier result intact, no temp left", "rc %d: %.300s", rc,
                out);
    snprintf(cmd, sizeof cmd, "'%s' sim market --out '%s'", cli, path);
    rc = wgf_t_run(cmd, out, sizeof out);
    struct stat sb = {0};
    bool        ok = rc == 0 && stat(path, &sb) == 0 && sb.st_size > 1000 && temps_left("market.json") == 0;
    wgf_t_check(t, ok,
                "sim market --out completed: result replaced", "rc %d, %lld bytes", rc, (long long)sb.st_size);
}

static void npy_cases(struct wgf_t *t)
{
    char path[800];
    snprintf(path, sizeof path, "%s/logits.npy", dir);
    static float rows[64 * 1024];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) rows[i] = (float)i;

    /* killed before close: the child writes rows, then dies without closing */
    put_earlier(path);
    pid_t pid = fork();
    if (pid == 0) {
        struct wgf_npy_writer w;
        struct wgf_err        e;
        if (wgf_npy_writer_open(&w, path, 1024, &e) || wgf_npy_writer_append(&w, rows, 64, &e)) _exit(3);
        fflush(NULL); /* every stream, the writer's temp file among them */
        raise(SIGKILL);
        _exit(4);
    }
    int st;
    waitpid(pid, &st, 0);
    wgf_t_check(t, WIFSIGNALED(st) && is_earlier(path), "logits .npy writer killed before close: earlier result intact", "status 0x%x",
                st);
    /* the killed writer's temp file stays behind (harmless, never read); clear it */
    char cmd[1400], out[64];
    snprintf(cmd, sizeof cmd, "rm -f '%s'/logits.npy.tmp.*", dir);
    wgf_t_run(cmd, out, sizeof out);

    /* full disk: append/close fail with an error naming the path; no temp is left */
    put_earlier(path);
    char tmpname[64];
    snprintf(tmpname, sizeof tmpname, "logits.npy");
    pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {16384, 16384};
        setrlimit(RLIMIT_FSIZE, &rl);
        struct wgf_npy_writer w;
        struct wgf_err        e = {0};
        enum wgf_status       s = wgf_npy_writer_open(&w, path, 1024, &e);
        if (s == WGF_OK) s = wgf_npy_writer_append(&w, rows, 64, &e);
        if (s == WGF_OK) s = wgf_npy_writer_close(&w, &e);
        else wgf_npy_writer_abort(&w);
        _exit(s == WGF_ERR_IO && strstr(e.msg, path) ? 0 : 5);
    }
    waitpid(pid, &st, 0);
    wgf_t_check(t, WIFEXITED(st) && WEXITSTATUS(st) == 0 && is_earlier(path) && temps_left(tmpname) == 0,
                "logits .npy on a full disk: WGF_ERR_IO naming the path, earlier result intact, no temp left", "status 0x%x", st);

    struct wgf_err  e  = {0};
    enum wgf_status s  = wgf_npy_write_f32(path, rows, 4, 8, &e);
    struct stat     sb = {0};
    bool            ok = s == WGF_OK && stat(path, &sb) == 0 && sb.st_size == 128 + 4 * 8 * 4;
    wgf_t_check(t, ok, ".npy completed: result replaced", "%s",
                e.msg);
}

int main(void)
{
    struct wgf_t t = {0};
    cli            = getenv("WGF_CLI");
    if (!wgf_t_check(&t, cli && access(cli, X_OK) == 0, "WGF_CLI", "%s", cli ? cli : "not set")) return wgf_t_finish(&t);
    wgf_t_tmpdir("atomic_outputs", dir, sizeof dir);

    char out1[800], out2[800];
    snprintf(out1, sizeof out1, "%s/dispatch.json", dir);
    char *bench[] = {(char *)cli, "bench", "dispatch", "--quick", "--json", "--out", out1, NULL};
    killed_cli(&t, "bench dispatch --out", "dispatch.json", bench, 1.5);
    snprintf(out2, sizeof out2, "%s/cartpole.policy", dir);
    char *train[] = {(char *)cli, "sim", "train", "cartpole", "--pop", "256", "--gens", "100000", "--target", "1e9",
                     "--out", out2, NULL};
    killed_cli(&t, "sim train --out", "cartpole.policy", train, 1.5);
    disk_full_cli(&t);
    npy_cases(&t);
    return wgf_t_finish(&t);
}
