/* Special files where the CLI ($WGF_CLI) expects a file, and non-regular output paths
 * (issue 11, "Reliability II"): one rule for every file read (src/util/file.h: a regular
 * file, sized before reading, named in the error) and for every output (a regular file is
 * replaced atomically, a character device or FIFO written through, anything else refused).
 *
 * Every command runs under `timeout` (cli_run.h): a reader that waits on a FIFO or reads /dev/zero
 * until memory runs out fails the check with exit 124 instead of hanging the suite. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_run.h"
#include "harness.h"

static char        dir[512];

static void run(struct cli_out *o, const char *args) { cli_run(o, dir, args); }

/* One refusal: exit 1, one line naming `path` and saying `what`. */
static void expect_refusal(struct wgf_t *t, const char *name, const char *args, const char *path, const char *what)
{
    struct cli_out o;
    run(&o, args);
    wgf_t_check(t, o.rc == 1 && cli_lines(o.se) == 1 && strstr(o.se, path) && strstr(o.se, what), name, "rc %d: %s", o.rc, o.se);
}

static void path_in(char *buf, size_t cap, const char *name) { snprintf(buf, cap, "%s/%s", dir, name); }

static mode_t type_of(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

/* A copy of the test model directory whose file `file` is replaced by a FIFO. */
static void model_with_fifo(const char *model, const char *copy, const char *file)
{
    char cmd[2048], out[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s' && rm -f '%s/%s'", copy, model, copy, copy, file);
    wgf_t_run(cmd, out, sizeof out);
    snprintf(cmd, sizeof cmd, "%s/%s", copy, file);
    mkfifo(cmd, 0600);
}

static void readers(struct wgf_t *t, const char *model)
{
    char p[700], q[700], a[4096];

    /* FIFOs: tokenizer.json, tokenizer_config.json, -m x.json, a policy file, a prompt file,
     * config.json */
    path_in(p, sizeof p, "m_fifo_tok");
    model_with_fifo(model, p, "tokenizer.json");
    snprintf(a, sizeof a, "tokenize -m '%s' -p hi", p);
    expect_refusal(t, "FIFO as tokenizer.json: tokenize refuses it, no hang", a, "tokenizer.json", "not a regular file (a FIFO)");
    snprintf(a, sizeof a, "run -m '%s' -p hi -n 1", p);
    expect_refusal(t, "FIFO as tokenizer.json: run refuses it (not 'no tokenizer')", a, "tokenizer.json", "a FIFO");

    path_in(p, sizeof p, "m_fifo_cfg");
    model_with_fifo(model, p, "tokenizer_config.json");
    snprintf(a, sizeof a, "tokenize -m '%s' -p hi", p);
    expect_refusal(t, "FIFO as tokenizer_config.json: refused, no hang", a, "tokenizer_config.json", "a FIFO");

    path_in(p, sizeof p, "m_fifo_config");
    model_with_fifo(model, p, "config.json");
    snprintf(a, sizeof a, "run -m '%s' -p hi -n 1", p);
    expect_refusal(t, "FIFO as config.json: refused, no hang", a, "config.json", "a FIFO");

    path_in(p, sizeof p, "fifo.json");
    unlink(p);
    mkfifo(p, 0600);
    snprintf(a, sizeof a, "tokenize -m '%s' -p hi", p);
    expect_refusal(t, "FIFO given as -m x.json: refused, no hang", a, p, "not a regular file (a FIFO)");
    snprintf(a, sizeof a, "sim eval '%s'", p);
    expect_refusal(t, "FIFO as a policy file: sim eval refuses it, no hang", a, p, "a FIFO");
    snprintf(a, sizeof a, "run -m '%s' -f '%s' -n 1", model, p);
    expect_refusal(t, "FIFO as a prompt file (-f): refused, no hang", a, p, "a FIFO");

    /* /dev/zero: never read until memory runs out */
    expect_refusal(t, "sim eval /dev/zero: refused before reading", "sim eval /dev/zero", "/dev/zero",
                   "not a regular file (a character device)");
    snprintf(a, sizeof a, "run -m '%s' -f /dev/zero -n 1", model);
    expect_refusal(t, "run -f /dev/zero: refused before reading", a, "/dev/zero", "a character device");

    /* a directory where a file is expected: "is a directory", not a parse error */
    snprintf(a, sizeof a, "sim eval '%s'", model);
    expect_refusal(t, "directory as a policy file: 'is a directory'", a, model, "is a directory");
    snprintf(a, sizeof a, "run -m '%s' -f '%s' -n 1", model, model);
    expect_refusal(t, "directory as a prompt file: 'is a directory'", a, model, "is a directory");
    path_in(p, sizeof p, "m_dir_tok");
    snprintf(a, sizeof a, "rm -rf '%s' && cp -r '%s' '%s' && rm '%s/tokenizer.json' && mkdir '%s/tokenizer.json'", p, model, p, p, p);
    wgf_t_run(a, q, sizeof q);
    snprintf(a, sizeof a, "tokenize -m '%s' -p hi", p);
    expect_refusal(t, "directory as tokenizer.json: 'is a directory'", a, "tokenizer.json", "is a directory");

    /* symlink loops: named as a loop, not "no model.safetensors" */
    path_in(p, sizeof p, "m_loop");
    snprintf(a, sizeof a,
             "rm -rf '%s' && cp -r '%s' '%s' && cd '%s' && rm model.safetensors && ln -s l2 l1 && ln -s l1 l2 && "
             "ln -s l1 model.safetensors",
             p, model, p, p);
    wgf_t_run(a, q, sizeof q);
    snprintf(a, sizeof a, "run -m '%s' -p hi -n 1", p);
    expect_refusal(t, "symlink loop as model.safetensors: names the loop", a, "model.safetensors", "symlink loop");
    path_in(p, sizeof p, "loop");
    unlink(p);
    if (symlink(p, p) == 0) {
        snprintf(a, sizeof a, "run -m '%s' -p hi -n 1", p);
        expect_refusal(t, "symlink loop as -m: names the loop", a, p, "symlink loop");
        snprintf(a, sizeof a, "tokenize -m '%s' -p hi", p);
        expect_refusal(t, "symlink loop as tokenize -m: names the loop", a, p, "symlink loop");
    }

    /* size bounded before reading: a sparse 2 MiB policy file is not read */
    path_in(p, sizeof p, "big.policy");
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0 && ftruncate(fd, 2 << 20) == 0) {
        snprintf(a, sizeof a, "sim eval '%s'", p);
        expect_refusal(t, "2 MiB policy file: refused from its size", a, p, "above the 1048576-byte limit");
    }
    if (fd >= 0) close(fd);
}

/* A character device to write to: a clone of /dev/null when mknod is allowed (root), else
 * /dev/null itself (the check then only proves it was not replaced by a regular file). */
static void char_device(char *buf, size_t cap)
{
    path_in(buf, cap, "null_clone");
    unlink(buf);
    if (mknod(buf, S_IFCHR | 0666, makedev(1, 3)) != 0) snprintf(buf, cap, "/dev/null");
}

static void outputs(struct wgf_t *t, const char *model)
{
    char dev[700], p[700], a[4096];
    struct cli_out o;
    char_device(dev, sizeof dev);

    /* --logits-out to a character device: written through, never replaced */
    snprintf(a, sizeof a, "run -m '%s' --tokens 1,2 -n 2 --temp 0 --logits-out '%s'", model, dev);
    run(&o, a);
    wgf_t_check(t, o.rc == 0 && type_of(dev) == S_IFCHR, "--logits-out to a character device: written through, still a device",
                "rc %d, type 0%o: %s", o.rc, (unsigned)type_of(dev), o.se);
    snprintf(a, sizeof a, "sim market --steps 10 --out '%s'", dev);
    run(&o, a);
    wgf_t_check(t, o.rc == 0 && type_of(dev) == S_IFCHR, "sim market --out to a character device: still a device",
                "rc %d, type 0%o: %s", o.rc, (unsigned)type_of(dev), o.se);

    /* a FIFO with a reader: the .npy goes through it whole */
    path_in(p, sizeof p, "out_fifo");
    unlink(p);
    mkfifo(p, 0600);
    /* the reader is this process (opened before the run, read after it: 6,272 bytes fit in
     * the pipe buffer), so no race decides whether a reader exists */
    int rfd = open(p, O_RDONLY | O_NONBLOCK);
    snprintf(a, sizeof a, "run -m '%s' --tokens 1,2 -n 2 --temp 0 --logits-out '%s'", model, p);
    run(&o, a);
    static unsigned char npy[65536];
    ssize_t              got = rfd >= 0 ? read(rfd, npy, sizeof npy) : -1;
    if (rfd >= 0) close(rfd);
    /* 3 evaluated positions (2 prompt + 1 decode) x 512 floats after the 128-byte header */
    bool ok = o.rc == 0 && got == 128 + 3 * 512 * 4 && memcmp(npy, "\x93NUMPY", 6) == 0 && type_of(p) == S_IFIFO;
    wgf_t_check(t, ok, "--logits-out to a FIFO with a reader: the whole .npy goes through, still a FIFO", "rc %d, %zd bytes: %s",
                o.rc, got, o.se);
    /* ... and without one: refused before generating, not blocked */
    snprintf(a, sizeof a, "run -m '%s' --tokens 1,2 -n 2 --logits-out '%s'", model, p);
    expect_refusal(t, "--logits-out to a FIFO nobody reads: refused, no hang", a, p, "no process is reading");

    /* a directory and a socket: refused, untouched */
    path_in(p, sizeof p, "out_dir");
    mkdir(p, 0755);
    snprintf(a, sizeof a, "run -m '%s' --tokens 1,2 -n 2 --logits-out '%s'", model, p);
    expect_refusal(t, "--logits-out to a directory: refused", a, p, "is a directory, not a regular file; refusing to replace it");
    wgf_t_check(t, type_of(p) == S_IFDIR, "--logits-out directory untouched", "type 0%o", (unsigned)type_of(p));
    snprintf(a, sizeof a, "sim market --steps 10 --out '%s'", p);
    expect_refusal(t, "sim market --out a directory: refused", a, p, "is a directory");

    path_in(p, sizeof p, "out_sock");
    unlink(p);
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (sfd >= 0 && strlen(p) < sizeof sa.sun_path) {
        memcpy(sa.sun_path, p, strlen(p) + 1);
        if (bind(sfd, (struct sockaddr *)&sa, sizeof sa) == 0) {
            snprintf(a, sizeof a, "sim market --steps 10 --out '%s'", p);
            expect_refusal(t, "sim market --out a socket: refused", a, p, "is a socket, not a regular file");
            snprintf(a, sizeof a, "run -m '%s' --tokens 1,2 -n 2 --logits-out '%s'", model, p);
            expect_refusal(t, "--logits-out to a socket: refused", a, p, "is a socket");
            wgf_t_check(t, type_of(p) == S_IFSOCK, "socket untouched", "type 0%o", (unsigned)type_of(p));
        } else {
            wgf_t_skip(t, "output to a socket", "cannot bind a UNIX socket here");
        }
    }
    if (sfd >= 0) close(sfd);
}

int main(void)
{
    struct wgf_t t = {0};
    wgf_t_tmpdir("special_files", dir, sizeof dir);
    char model[700], a[1024];
    path_in(model, sizeof model, "m");
    struct cli_out o;
    snprintf(a, sizeof a, "llm make-test-model --arch qwen2 -o '%s'", model);
    run(&o, a);
    if (!wgf_t_check(&t, o.rc == 0, "make-test-model", "rc %d: %s", o.rc, o.se)) return wgf_t_finish(&t);
    readers(&t, model);
    outputs(&t, model);
    return wgf_t_finish(&t);
}
