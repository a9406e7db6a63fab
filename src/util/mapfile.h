/* wgfuse — read-only file mapping with the path errors every loader needs.
 *
 * wgf_mapfile_open opens by util/file.h's rule (a regular file, never a FIFO, device,
 * directory or symlink loop; one line naming the path) and refuses an empty file. The
 * size is taken from fstat on the opened descriptor, so no access
 * past the end of the mapping can happen from a stale size (a file truncated *while*
 * mapped can still SIGBUS; that is the OS contract of mmap, see RELIABILITY.md #30). */
#ifndef WGF_UTIL_MAPFILE_H
#define WGF_UTIL_MAPFILE_H
#include <stdint.h>

#include "wgfuse/status.h"

struct wgf_mapfile {
    const uint8_t *data; /* read-only mapping of the whole file, NULL when closed        */
    uint64_t       size; /* bytes, > 0 when open                                          */
};

/* Map `path` read-only. On failure *m is zeroed and err names the path. */
enum wgf_status wgf_mapfile_open(const char *path, struct wgf_mapfile *m, struct wgf_err *err);
/* Unmap; safe on a zeroed or already closed struct. */
void wgf_mapfile_close(struct wgf_mapfile *m);
/* Ask the kernel to drop the pages of [off, off+len) from this process's resident set
 * (they are clean file pages, re-read on demand). No-op on failure. */
void wgf_mapfile_release(const struct wgf_mapfile *m, uint64_t off, uint64_t len);

#endif
