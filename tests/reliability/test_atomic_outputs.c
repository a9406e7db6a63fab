/* Killed runs and full disks keep earlier results (RELIABILITY.md item 38). Every output
 * wgfuse writes goes to "<path>.tmp.<pid>" and is renamed over the result only when
 * complete: benchmark JSON/CSV/SVG (wgf_cli_write_atomic), trained policies and market
 * paths (cmd_sim.c, same helper), logits .npy (wgf_npy_writer). Each case starts with an
 * earlier result "EARLIER\n" at the path (or no file at all), then:
 *   - SIGKILL in the middle of `wgfuse bench dispatch --out` and `wgfuse sim train --out`,
 *     landing deterministically inside the write (see kill_in_write below);
 *   - a disk that fills up (RLIMIT_FSIZE with SIGXFSZ ignored: writes fail with EFBIG, as
 *     on ENOSPC) under `wgfuse sim market --out`: exit 1 naming the path, no temp left;
 *   - the .npy writer killed before close, and failing on a full disk.
 * and checks the earlier result is byte-identical afterwards (or, with none, that nothing
 * is at the final name). A completed run replaces it and clears the killed run's temp.
 *
 * Mutation these cases catch (tried 2026-12-01): in src/util/file.c open_replace, naming
 * the temp file after the destination itself (snprintf(o->tmp, n, "%s", o->path): the
 * writer then writes in place) makes both killed-CLI cases and the no-earlier case fail
 * ("earlier result overwritten" / "a partial file at the final name"). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

/* ---- a kill that lands inside the write ----------------------------------------------
 * A timed kill races the writer: at 1.5 s `bench dispatch --quick` had written nothing and
 * the test passed whatever the writer did. Here the child runs under ptrace with a seccomp
 * filter that stops it only at the write-family calls, renames and exit_group. At each stop
 * the tracer reads which file the write's descriptor names (/proc/TID/fd/FD); the first
 * write into the output (its final name or "<name>.tmp.*") is let through, and the whole
 * process is SIGKILLed at the next stop of any thread: before the next write, the rename
 * that would commit, or the exit. So the kill lands after output bytes reached the file
 * system and before the writer finished, every time, whatever the timing. */

static const int traced_nr[] = {
    SYS_write, SYS_writev, SYS_pwrite64, SYS_pwritev, SYS_exit_group, SYS_renameat,
#ifdef SYS_rename
    SYS_rename,
#endif
#ifdef SYS_renameat2
    SYS_renameat2,
#endif
#ifdef SYS_pwritev2
    SYS_pwritev2,
#endif
};
enum { N_TRACED = sizeof traced_nr / sizeof traced_nr[0] };

static bool is_write_nr(long nr)
{
    return nr == SYS_write || nr == SYS_writev || nr == SYS_pwrite64 || nr == SYS_pwritev
#ifdef SYS_pwritev2
           || nr == SYS_pwritev2
#endif
        ;
}

/* In the child, before exec: stop (SECCOMP_RET_TRACE) at the traced calls, allow the rest. */
static bool install_filter(void)
{
    struct sock_filter f[N_TRACED + 3];
    f[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (int i = 0; i < N_TRACED; i++) /* jump to RET_TRACE at index N_TRACED + 2 */
        f[1 + i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)traced_nr[i], (unsigned char)(N_TRACED - i), 0);
    f[N_TRACED + 1]           = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    f[N_TRACED + 2]           = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE);
    struct sock_fprog prog    = {(unsigned short)(N_TRACED + 3), f};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

struct kill_result {
    bool traced;        /* ptrace and seccomp worked                        */
    bool wrote;         /* a write into the output was let through           */
    bool killed;        /* and the process died of our SIGKILL right after  */
    char into[PATH_MAX]; /* the file that write went to                     */
    int  status;        /* wait status of the process                        */
};

/* Run `cli argv...` (output to dir/log) and kill it as described above; `prefix` is the
 * output's final name with the directory resolved (a write into any file whose resolved
 * name starts with it counts). */
static struct kill_result kill_in_write(char *const argv[], const char *prefix)
{
    struct kill_result r = {0};
    pid_t              pid = fork();
    if (pid == 0) {
        char log[700];
        snprintf(log, sizeof log, "%s/log", dir);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1), dup2(fd, 2);
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0) _exit(120);
        raise(SIGSTOP);
        if (!install_filter()) _exit(121);
        execv(cli, argv);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) { /* PTRACE_TRACEME refused */
        r.status = st;
        return r;
    }
    long opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
                PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
    r.traced  = ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)opts) == 0;
    if (!r.traced) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        return r;
    }
    ptrace(PTRACE_CONT, pid, NULL, NULL);
    size_t plen = strlen(prefix);
    for (;;) {
        pid_t tid = waitpid(-1, &st, __WALL);
        if (tid < 0) break; /* ECHILD: everything reaped */
        if (WIFEXITED(st) || WIFSIGNALED(st)) {
            if (tid == pid) {
                r.status = st;
                r.killed = r.wrote && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
            }
            continue;
        }
        if (!WIFSTOPPED(st)) continue;
        int sig = WSTOPSIG(st), event = (st >> 16) & 0xff, inject = 0;
        if (sig == SIGTRAP && event == PTRACE_EVENT_SECCOMP) {
            if (r.wrote) { /* the first stop after the output write: kill the whole process */
                kill(pid, SIGKILL);
                continue;
            }
            struct __ptrace_syscall_info info; /* glibc's name for the kernel's ptrace_syscall_info */
            memset(&info, 0, sizeof info);
            if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof info, &info) > 0 && info.op == PTRACE_SYSCALL_INFO_SECCOMP &&
                is_write_nr((long)info.seccomp.nr)) {
                char fdlink[64], target[PATH_MAX];
                snprintf(fdlink, sizeof fdlink, "/proc/%d/fd/%d", (int)tid, (int)info.seccomp.args[0]);
                ssize_t n = readlink(fdlink, target, sizeof target - 1);
                if (n > 0 && (size_t)n >= plen && !memcmp(target, prefix, plen)) {
                    target[n] = 0;
                    r.wrote   = true;
                    snprintf(r.into, sizeof r.into, "%s", target);
                }
            }
        } else if (sig == SIGTRAP && event) {
            /* clone/fork/exec events: nothing to do */
        } else if (sig != SIGSTOP) {
            inject = sig; /* a real signal: deliver it (new threads start with a SIGSTOP: drop it) */
        }
        ptrace(PTRACE_CONT, tid, NULL, (void *)(long)inject);
    }
    return r;
}

static bool absent(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) != 0 && errno == ENOENT;
}

/* `what` with --out dir/file, killed inside its write. With `earlier_there` the file holds
 * "EARLIER\n" first and must still hold exactly that; without, nothing may be at the name. */
static void killed_cli(struct wgf_t *t, const char *what, const char *file, char *const argv[], bool earlier_there)
{
    char path[800], name[200], rdir[PATH_MAX], prefix[PATH_MAX + 200];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (earlier_there) put_earlier(path);
    else unlink(path);
    if (!realpath(dir, rdir)) snprintf(rdir, sizeof rdir, "%s", dir);
    snprintf(prefix, sizeof prefix, "%s/%s", rdir, file);
    struct kill_result r = kill_in_write(argv, prefix);
    snprintf(name, sizeof name, "%s killed inside its write: %s", what,
             earlier_there ? "earlier result intact" : "nothing at the final name");
    if (!r.traced) {
        wgf_t_skip(t, name, "ptrace/seccomp not permitted here, so the kill cannot be placed inside the write");
        return;
    }
    char name_k[240];
    snprintf(name_k, sizeof name_k, "%s: the kill landed inside the write", what);
    if (!wgf_t_check(t, r.killed, name_k, "%s (status 0x%x)",
                     r.killed  ? "SIGKILLed at the first traced call after its first write into the output"
                     : r.wrote ? "wrote its output but was not killed by the test"
                               : "never wrote its output",
                     r.status))
        return;
    bool ok = earlier_there ? is_earlier(path) : absent(path);
    wgf_t_check(t, ok, name, "killed after a write into %s: %s", r.into,
                ok ? "final name untouched" : earlier_there ? "earlier result overwritten" : "a partial file at the final name");
}

/* The same run left alone replaces the earlier result and removes the killed run's temp
 * (its pid is dead: wgf_file_remove_stale_temps). */
static void completed_train(struct wgf_t *t, const char *path, char *const argv[])
{
    char cmd[2400], out[4096];
    int  n = snprintf(cmd, sizeof cmd, "'%s'", cli);
    for (int i = 1; argv[i] && n < (int)sizeof cmd; i++) n += snprintf(cmd + n, sizeof cmd - (size_t)n, " '%s'", argv[i]);
    int         rc = wgf_t_run(cmd, out, sizeof out);
    struct stat sb = {0};
    bool ok = rc == 0 && stat(path, &sb) == 0 && sb.st_size > 100 && !is_earlier(path) && temps_left("cartpole.policy") == 0;
    wgf_t_check(t, ok, "sim train --out completed: result replaced, the killed run's temp removed", "rc %d, %lld bytes, %d temps: %.300s",
                rc, (long long)sb.st_size, temps_left("cartpole.policy"), out);
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

    char out1[800], out2[800], out3[800];
    snprintf(out1, sizeof out1, "%s/dispatch.json", dir);
    char *bench[] = {(char *)cli, "bench", "dispatch", "--quick", "--json", "--out", out1, NULL};
    killed_cli(&t, "bench dispatch --out", "dispatch.json", bench, true);
    /* --target 0: solved at the first evaluation, so the policy is written within a second */
    snprintf(out2, sizeof out2, "%s/cartpole.policy", dir);
    char *train[] = {(char *)cli, "sim", "train", "cartpole", "--pop", "64", "--target", "0", "--out", out2, NULL};
    killed_cli(&t, "sim train --out", "cartpole.policy", train, true);
    snprintf(out3, sizeof out3, "%s/fresh.policy", dir);
    char *fresh[] = {(char *)cli, "sim", "train", "cartpole", "--pop", "64", "--target", "0", "--out", out3, NULL};
    killed_cli(&t, "sim train --out (no earlier file)", "fresh.policy", fresh, false);
    completed_train(&t, out2, train);
    disk_full_cli(&t);
    npy_cases(&t);
    return wgf_t_finish(&t);
}
