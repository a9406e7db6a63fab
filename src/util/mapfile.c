/* wgfuse — read-only file mapping (see mapfile.h). */
#include "util/mapfile.h"

#include "util/file.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum wgf_status wgf_mapfile_open(const char *path, struct wgf_mapfile *m, struct wgf_err *err)
{
    memset(m, 0, sizeof *m);
    /* the one rule for files read (util/file.h): a regular file, sized before mapping */
    int             fd;
    uint64_t        size;
    enum wgf_status st = wgf_file_open_regular(path, (uint64_t)SIZE_MAX, "a mapping", &fd, &size, err);
    if (st) return st;
    if (size == 0) {
        close(fd);
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: file is empty", path);
    }
    void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    int   e = errno;
    close(fd); /* the mapping keeps the file referenced */
    if (p == MAP_FAILED) return wgf_fail(err, WGF_ERR_IO, "%s: cannot map: %s", path, strerror(e));
    m->data = p;
    m->size = size;
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
