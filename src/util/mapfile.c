/* wgfuse — read-only file mapping (see mapfile.h). */
#include "util/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum wgf_status wgf_mapfile_open(const char *path, struct wgf_mapfile *m, struct wgf_err *err)
{
    memset(m, 0, sizeof *m);
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is rejected below. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT) return wgf_fail(err, WGF_ERR_IO, "%s: no such file", path);
        return wgf_fail(err, WGF_ERR_IO, "%s: cannot open: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return wgf_fail(err, WGF_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return wgf_fail(err, WGF_ERR_IO, "%s: is a directory, expected a file", path);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return wgf_fail(err, WGF_ERR_IO, "%s: not a regular file (FIFO, device or socket)", path);
    }
    if (st.st_size <= 0) {
        close(fd);
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: file is empty", path);
    }
    if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        return wgf_fail(err, WGF_ERR_LIMIT, "%s: file too large to map", path);
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int   e = errno;
    close(fd); /* the mapping keeps the file referenced */
    if (p == MAP_FAILED) return wgf_fail(err, WGF_ERR_IO, "%s: cannot map: %s", path, strerror(e));
    m->data = p;
    m->size = (uint64_t)st.st_size;
    return WGF_OK;
}

void wgf_mapfile_close(struct wgf_mapfile *m)
{
    if (!m || !m->data) return;
    munmap((void *)m->data, (size_t)m->size);
    m->data = NULL;
    m->size = 0;
}

void wgf_mapfile_release(const struct wgf_mapfile *m, uint64_t off, uint64_t len)
{
    if (!m || !m->data || off >= m->size) return;
    long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0) return;
    uint64_t start = off / (uint64_t)pg * (uint64_t)pg;
    uint64_t end   = off + (len < m->size - off ? len : m->size - off);
    if (end <= start) return;
    madvise((void *)(m->data + start), (size_t)(end - start), MADV_DONTNEED);
}
