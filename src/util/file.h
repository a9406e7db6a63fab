/* wgfuse — the one rule for every file the program reads or writes.
 *
 * Reading (wgf_file_open_regular, wgf_file_read; wgf_mapfile_open builds on them): the path
 * must name a regular file whose size, taken from fstat on the opened descriptor, is within
 * the caller's limit before a byte is read. Opening never blocks (O_NONBLOCK: a FIFO without
 * a writer is refused, not waited for), and every refusal is one line naming the path:
 *     "<path>: no such file or directory"
 *     "<path>: is a directory, expected a file"
 *     "<path>: not a regular file (FIFO, device or socket)"
 *     "<path>: too many levels of symbolic links (a symlink loop?)"
 *     "<path>: 9000000 bytes, above the 1048576-byte limit for <what>"
 * so /dev/zero, a FIFO, a directory or a symlink loop given where a file is expected ends in
 * a specific error instead of a hang, an out-of-memory or a parse error.
 *
 * Writing (struct wgf_out): what is at the path decides how it is written.
 *   - nothing, or a regular file (through a symlink too): a temp file "<path>.tmp.<pid>" in
 *     the same directory (O_EXCL | O_NOFOLLOW), renamed over the path on commit, so a killed
 *     run never leaves a partial file and an earlier file stays intact until then;
 *   - a character device or a FIFO (/dev/null, /dev/stdout, a pipe): written through, never
 *     replaced (a FIFO without a reader is refused: "no process is reading it");
 *   - anything else (a directory, a block device, a socket): refused, nothing is written.
 * No writer ever replaces a non-regular file: as root, `--out /dev/null` used to turn
 * /dev/null into a regular file. */
#ifndef WGF_UTIL_FILE_H
#define WGF_UTIL_FILE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wgfuse/status.h"

/* Open `path` read-only as a regular file of at most max_bytes (UINT64_MAX: no limit but
 * the platform's). On success *fd is an open descriptor the caller closes and *size the
 * file's size. `what` names the file's role for the size error ("a policy file"); NULL
 * gives "this file". On failure *fd is -1 and *size the size when it was known (else 0). */
enum wgf_status wgf_file_open_regular(const char *path, uint64_t max_bytes, const char *what, int *fd,
                                      uint64_t *size, struct wgf_err *err);

/* Read the whole regular file at `path` (at most max_bytes) into a malloc'd buffer the
 * caller frees, NUL-terminated (*len excludes the NUL; the text may hold NULs of its own).
 * An empty file is an empty buffer. A file that grows past max_bytes while being read is
 * refused like a larger one. */
enum wgf_status wgf_file_read(const char *path, uint64_t max_bytes, const char *what, char **data, size_t *len,
                              struct wgf_err *err);

/* stat(path) with the same one-line errors as the open ("no such file or directory",
 * "too many levels of symbolic links (a symlink loop?)", ...). */
struct stat;
enum wgf_status wgf_file_stat(const char *path, struct stat *st, struct wgf_err *err);

/* True when something (a file, a directory, a dangling or looping symlink) has this name:
 * a loader that looks for optional files uses it so "is a FIFO" or "symlink loop" is
 * reported by the open instead of "no such file". */
bool wgf_file_present(const char *path);

/* ---- output ------------------------------------------------------------------------------ */
struct wgf_out {
    FILE *f;        /* write here (stdio); NULL when closed                                    */
    char *path;     /* destination (owned)                                                     */
    char *tmp;      /* "<path>.tmp.<pid>" when replacing, else NULL (owned)                    */
    int   dev_fd;   /* the device / FIFO written through at commit (seekable mode), else -1    */
    bool  through;  /* the destination is a character device or FIFO                          */
};

#define WGF_OUT_SEEKABLE 1u /* the writer seeks back (a header patched on close): a device
                               or FIFO destination gets an anonymous temp file, copied to it
                               on commit */

/* Open an output for `path` (see the header comment for what each kind of destination
 * gets). Stale "<path>.tmp.<pid>" files of processes that no longer exist are removed
 * first. On failure *o is closed and err names the path. */
enum wgf_status wgf_out_open(struct wgf_out *o, const char *path, unsigned flags, struct wgf_err *err);
/* Write n bytes; a short write is an error naming the path. */
enum wgf_status wgf_out_write(struct wgf_out *o, const void *data, size_t n, struct wgf_err *err);
/* Flush, fsync, close and rename the temp file over the path (or finish the write-through).
 * On failure the temp file is removed and the destination is untouched. *o is closed either
 * way. */
enum wgf_status wgf_out_commit(struct wgf_out *o, struct wgf_err *err);
/* Drop what was written (the temp file is removed); no-op on a closed or zeroed output. */
void wgf_out_abort(struct wgf_out *o);

/* Open + one write + commit. */
enum wgf_status wgf_file_write_atomic(const char *path, const void *data, size_t n, struct wgf_err *err);

/* Remove "<path>.tmp.<pid>" files whose process no longer exists (a SIGKILLed run's). */
void wgf_file_remove_stale_temps(const char *path);

#endif
