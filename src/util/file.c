/* wgfuse — reading and writing files by one rule (see file.h). */
#include "util/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- reading ------------------------------------------------------------------------------ */

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m)) return "directory";
    if (S_ISFIFO(m)) return "FIFO";
    if (S_ISCHR(m)) return "character device";
    if (S_ISBLK(m)) return "block device";
    if (S_ISSOCK(m)) return "socket";
    return "special file";
}

static enum wgf_status path_error(const char *path, int e, const char *doing, struct wgf_err *err)
{
    if (e == ENOENT) return wgf_fail(err, WGF_ERR_IO, "%s: no such file or directory", path);
    if (e == ELOOP) return wgf_fail(err, WGF_ERR_IO, "%s: too many levels of symbolic links (a symlink loop?)", path);
    if (e == ENOTDIR) return wgf_fail(err, WGF_ERR_IO, "%s: a component of the path is not a directory", path);
    return wgf_fail(err, WGF_ERR_IO, "%s: cannot %s: %s", path, doing, strerror(e));
}

/* The refusal for a non-regular file met where a regular one is read. */
static enum wgf_status not_regular(const char *path, mode_t m, struct wgf_err *err)
{
    if (S_ISDIR(m)) return wgf_fail(err, WGF_ERR_IO, "%s: is a directory, expected a file", path);
    return wgf_fail(err, WGF_ERR_IO, "%s: not a regular file (a %s)", path, kind_of(m));
}

enum wgf_status wgf_file_open_regular(const char *path, uint64_t max_bytes, const char *what, int *fd,
                                      uint64_t *size, struct wgf_err *err)
{
    *fd   = -1;
    *size = 0;
    if (!path || !*path) return wgf_fail(err, WGF_ERR_ARG, "empty file path");
    /* stat before open: a device is never opened (opening some has side effects), a FIFO
     * never waited on */
    struct stat st;
    if (stat(path, &st) != 0) return path_error(path, errno, "stat", err);
    if (!S_ISREG(st.st_mode)) return not_regular(path, st.st_mode, err);
    /* O_NONBLOCK: if the name was swapped for a FIFO since the stat, the open still returns */
    int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (f < 0) return path_error(path, errno, "open", err);
    if (fstat(f, &st) != 0) {
        int e = errno;
        close(f);
        return path_error(path, e, "stat", err);
    }
    if (!S_ISREG(st.st_mode)) {
        close(f);
        return not_regular(path, st.st_mode, err);
    }
    uint64_t n = st.st_size > 0 ? (uint64_t)st.st_size : 0;
    *size      = n;
    if (n > max_bytes) {
        close(f);
        return wgf_fail(err, WGF_ERR_LIMIT, "%s: %llu bytes, above the %llu-byte limit for %s", path,
                        (unsigned long long)n, (unsigned long long)max_bytes, what ? what : "this file");
    }
    *fd = f;
    return WGF_OK;
}

enum wgf_status wgf_file_read(const char *path, uint64_t max_bytes, const char *what, char **data, size_t *len,
                              struct wgf_err *err)
{
    *data = NULL;
    *len  = 0;
    int             fd;
    uint64_t        size;
    enum wgf_status st = wgf_file_open_regular(path, max_bytes, what, &fd, &size, err);
    if (st) return st;
    if (size >= (uint64_t)SIZE_MAX) {
        close(fd);
        return wgf_fail(err, WGF_ERR_LIMIT, "%s: %llu bytes do not fit in memory", path, (unsigned long long)size);
    }
    char *buf = malloc((size_t)size + 1);
    if (!buf) {
        close(fd);
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory for %llu bytes", path, (unsigned long long)size);
    }
    /* at most the size fstat gave: a file that grows meanwhile is read as it was */
    size_t got = 0;
    while (got < (size_t)size) {
        ssize_t r = read(fd, buf + got, (size_t)size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            free(buf);
            return wgf_fail(err, WGF_ERR_IO, "%s: read: %s", path, strerror(e));
        }
        if (r == 0) break; /* shrank meanwhile: what is there */
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    *data    = buf;
    *len     = got;
    return WGF_OK;
}

enum wgf_status wgf_file_stat(const char *path, struct stat *st, struct wgf_err *err)
{
    if (!path || !*path) return wgf_fail(err, WGF_ERR_ARG, "empty file path");
    if (stat(path, st) != 0) return path_error(path, errno, "stat", err);
    return WGF_OK;
}

bool wgf_file_present(const char *path)
{
    struct stat st;
    if (!path || !*path) return false;
    if (lstat(path, &st) == 0) return true;
    return errno != ENOENT && errno != ENOTDIR;
}

/* ---- writing ------------------------------------------------------------------------------ */

void wgf_file_remove_stale_temps(const char *path)
{
    char dirbuf[4096];
    if ((size_t)snprintf(dirbuf, sizeof dirbuf, "%s", path) >= sizeof dirbuf) return;
    char       *slash = strrchr(dirbuf, '/');
    const char *base  = slash ? path + (slash - dirbuf) + 1 : path;
    const char *dname = slash ? (slash == dirbuf ? "/" : dirbuf) : ".";
    if (slash && slash != dirbuf) *slash = 0;
    size_t bl = strlen(base);
    DIR   *d  = opendir(dname);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        const char *n = e->d_name;
        if (strncmp(n, base, bl) || strncmp(n + bl, ".tmp.", 5)) continue;
        char *end;
        errno    = 0;
        long pid = strtol(n + bl + 5, &end, 10);
        if (errno || *end || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge */
        char full[4096 + 256];
        snprintf(full, sizeof full, "%s/%s", dname, n);
        unlink(full);
    }
    closedir(d);
}

static void out_free(struct wgf_out *o)
{
    free(o->path);
    free(o->tmp);
    o->path = o->tmp = NULL;
    o->f             = NULL;
    o->dev_fd        = -1;
    o->through       = false;
}

void wgf_out_abort(struct wgf_out *o)
{
    if (!o) return;
    if (o->f) fclose(o->f);
    if (o->dev_fd >= 0) close(o->dev_fd);
    if (o->tmp) unlink(o->tmp);
    out_free(o);
}

static enum wgf_status out_fail(struct wgf_out *o, enum wgf_status s, struct wgf_err *err)
{
    wgf_out_abort(o);
    return err ? err->status : s;
}

/* A character device or FIFO: opened for writing without blocking (a FIFO nobody reads is
 * refused), then switched back to blocking writes. */
static enum wgf_status open_through(struct wgf_out *o, unsigned flags, struct wgf_err *err)
{
    int fd = open(o->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        if (e == ENXIO)
            wgf_fail(err, WGF_ERR_IO, "%s: a FIFO that no process is reading; nothing written", o->path);
        else
            path_error(o->path, e, "open for writing", err);
        return out_fail(o, WGF_ERR_IO, err);
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
        close(fd);
        wgf_fail(err, WGF_ERR_IO, "%s: changed while it was being opened; nothing written", o->path);
        return out_fail(o, WGF_ERR_IO, err);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    o->through = true;
    if (flags & WGF_OUT_SEEKABLE) {
        o->dev_fd = fd;
        o->f      = tmpfile();
    } else if (!(o->f = fdopen(fd, "wb"))) {
        close(fd);
    }
    if (!o->f) {
        wgf_fail(err, WGF_ERR_IO, "%s: cannot open a stream: %s", o->path, strerror(errno));
        return out_fail(o, WGF_ERR_IO, err);
    }
    return WGF_OK;
}

static enum wgf_status open_replace(struct wgf_out *o, struct wgf_err *err)
{
    wgf_file_remove_stale_temps(o->path);
    size_t n = strlen(o->path) + 32;
    if (!(o->tmp = malloc(n))) {
        wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", o->path);
        return out_fail(o, WGF_ERR_NOMEM, err);
    }
    snprintf(o->tmp, n, "%s.tmp.%ld", o->path, (long)getpid());
    /* O_EXCL | O_NOFOLLOW: never write through a name someone else put there */
    int fd = -1;
    for (int attempt = 0; attempt < 2 && fd < 0; attempt++) {
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST && attempt == 0) unlink(o->tmp); /* ours: an earlier writer of this pid */
        else if (fd < 0) break;
    }
    if (fd < 0) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL; /* not ours to remove */
        wgf_fail(err, WGF_ERR_IO, "%s: cannot create the temporary file next to it: %s", o->path, strerror(e));
        return out_fail(o, WGF_ERR_IO, err);
    }
    if (!(o->f = fdopen(fd, "wb"))) {
        int e = errno;
        close(fd);
        wgf_fail(err, WGF_ERR_IO, "%s: cannot open a stream: %s", o->path, strerror(e));
        return out_fail(o, WGF_ERR_IO, err);
    }
    return WGF_OK;
}

/* What may be written over: nothing there, a regular file, a device or FIFO (through). */
static enum wgf_status check_destination(const char *path, bool *through, struct wgf_err *err)
{
    struct stat st;
    *through = false;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) return WGF_OK; /* a new file (or a dangling symlink, replaced) */
        return path_error(path, errno, "stat", err);
    }
    if (S_ISREG(st.st_mode)) return WGF_OK;
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
        *through = true;
        return WGF_OK;
    }
    return wgf_fail(err, WGF_ERR_IO, "%s: is a %s, not a regular file; refusing to replace it (nothing written)", path,
                    kind_of(st.st_mode));
}

enum wgf_status wgf_out_open(struct wgf_out *o, const char *path, unsigned flags, struct wgf_err *err)
{
    memset(o, 0, sizeof *o);
    o->dev_fd = -1;
    if (!path || !*path) return wgf_fail(err, WGF_ERR_ARG, "empty output path");
    bool            through;
    enum wgf_status st = check_destination(path, &through, err);
    if (st) return st;
    if (!(o->path = strdup(path))) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", path);
    return through ? open_through(o, flags, err) : open_replace(o, err);
}

enum wgf_status wgf_out_write(struct wgf_out *o, const void *data, size_t n, struct wgf_err *err)
{
    if (!o->f) return wgf_fail(err, WGF_ERR_ARG, "output is not open");
    if (n && fwrite(data, 1, n, o->f) != n) return wgf_fail(err, WGF_ERR_IO, "%s: write: %s", o->path, strerror(errno));
    return WGF_OK;
}

/* Seekable write-through: the anonymous temp file goes to the device now. */
static bool copy_to_device(FILE *f, int fd)
{
    char buf[65536];
    if (fflush(f) != 0 || fseek(f, 0, SEEK_SET) != 0) return false;
    for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) {
        for (size_t o = 0; o < n;) {
            ssize_t w = write(fd, buf + o, n - o);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) return false;
            o += (size_t)w;
        }
    }
    return !ferror(f);
}

enum wgf_status wgf_out_commit(struct wgf_out *o, struct wgf_err *err)
{
    if (!o->f) return wgf_fail(err, WGF_ERR_ARG, "output is not open");
    bool bad = false;
    int  e   = 0;
    if (o->through) {
        if (o->dev_fd >= 0) {
            bad = !copy_to_device(o->f, o->dev_fd);
            e   = errno;
            if (close(o->dev_fd) != 0 && !bad) bad = true, e = errno;
            o->dev_fd = -1;
        }
        if (fflush(o->f) != 0 && !bad) bad = true, e = errno;
        if (fclose(o->f) != 0 && !bad) bad = true, e = errno;
        o->f = NULL;
        if (bad) wgf_fail(err, WGF_ERR_IO, "%s: write: %s", o->path, strerror(e));
        out_free(o);
        return bad ? WGF_ERR_IO : WGF_OK;
    }
    bad = fflush(o->f) != 0 || fsync(fileno(o->f)) != 0;
    e   = errno;
    if (fclose(o->f) != 0 && !bad) bad = true, e = errno;
    o->f = NULL;
    if (bad) {
        wgf_fail(err, WGF_ERR_IO, "%s: write: %s", o->path, strerror(e));
        return out_fail(o, WGF_ERR_IO, err);
    }
    /* the destination may have changed since the open: the rule holds at the rename too */
    bool            through;
    enum wgf_status st = check_destination(o->path, &through, err);
    if (st == WGF_OK && through)
        st = wgf_fail(err, WGF_ERR_IO, "%s: became a device or FIFO while being written; not replaced", o->path);
    if (st) return out_fail(o, st, err);
    if (rename(o->tmp, o->path) != 0) {
        e = errno;
        wgf_fail(err, WGF_ERR_IO, "%s: rename from %s: %s", o->path, o->tmp, strerror(e));
        return out_fail(o, WGF_ERR_IO, err);
    }
    out_free(o);
    return WGF_OK;
}

enum wgf_status wgf_file_write_atomic(const char *path, const void *data, size_t n, struct wgf_err *err)
{
    struct wgf_out  o;
    enum wgf_status st = wgf_out_open(&o, path, 0, err);
    if (st) return st;
    if ((st = wgf_out_write(&o, data, n, err))) {
        wgf_out_abort(&o);
        return st;
    }
    return wgf_out_commit(&o, err);
}
