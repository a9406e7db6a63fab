/* wgfuse — float32 .npy output, written atomically.
 *
 * Format (NumPy format spec v1.0): "\x93NUMPY" 1 0, uint16 LE header length, an ASCII dict
 * "{'descr': '<f4', 'fortran_order': False, 'shape': (R, C), }" padded with spaces and a
 * final '\n' so data starts at a multiple of 64, then R*C little-endian float32 values.
 * The row count is not known while generating, so the header is written with a fixed
 * 128-byte size and patched on close (a shape of two 20-digit numbers still fits).
 * Rows go to "<path>.tmp.<pid>"; close flushes and renames, so `path` is never partial. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wgfuse/llm_run.h"

#define NPY_HEADER_BYTES 128

static void npy_header(char out[NPY_HEADER_BYTES], uint64_t rows, uint64_t cols)
{
    char dict[NPY_HEADER_BYTES];
    int  n = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%" PRIu64 ", %" PRIu64 "), }",
                      rows, cols);
    /* 10 bytes of preamble + dict + spaces + '\n' == 128; n <= 106 always (two u64s) */
    memset(out, ' ', NPY_HEADER_BYTES);
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (char)((NPY_HEADER_BYTES - 10) & 0xff);
    out[9] = (char)((NPY_HEADER_BYTES - 10) >> 8);
    memcpy(out + 10, dict, (size_t)n);
    out[NPY_HEADER_BYTES - 1] = '\n';
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

enum wgf_status wgf_npy_writer_open(struct wgf_npy_writer *w, const char *path, uint64_t cols,
                                    struct wgf_err *err)
{
    memset(w, 0, sizeof *w);
    if (!host_is_little_endian()) return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: .npy writer needs a little-endian host", path);
    if (cols == 0) return wgf_fail(err, WGF_ERR_ARG, "%s: .npy with zero columns", path);
    size_t plen = strlen(path);
    w->path     = malloc(plen + 1);
    w->tmp      = malloc(plen + 32);
    if (!w->path || !w->tmp) {
        wgf_npy_writer_abort(w);
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: path copy", path);
    }
    memcpy(w->path, path, plen + 1);
    snprintf(w->tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
    w->f = fopen(w->tmp, "wb");
    if (!w->f) {
        int e = errno;
        wgf_npy_writer_abort(w);
        return wgf_fail(err, WGF_ERR_IO, "%s: cannot create temp file: %s", path, strerror(e));
    }
    w->cols = cols;
    char h[NPY_HEADER_BYTES];
    npy_header(h, 0, cols);
    if (fwrite(h, 1, sizeof h, w->f) != sizeof h) {
        int e = errno;
        wgf_npy_writer_abort(w);
        return wgf_fail(err, WGF_ERR_IO, "%s: write: %s", path, strerror(e));
    }
    return WGF_OK;
}

enum wgf_status wgf_npy_writer_append(struct wgf_npy_writer *w, const float *rows, uint64_t n_rows,
                                      struct wgf_err *err)
{
    if (!w->f) return wgf_fail(err, WGF_ERR_ARG, ".npy writer is not open");
    uint64_t n;
    if (!wgf_mul_u64(n_rows, w->cols, &n) || n > SIZE_MAX / sizeof(float))
        return wgf_fail(err, WGF_ERR_LIMIT, "%s: %" PRIu64 " rows overflow", w->path, n_rows);
    if (n && fwrite(rows, sizeof(float), (size_t)n, w->f) != (size_t)n) {
        int e = errno;
        return wgf_fail(err, WGF_ERR_IO, "%s: write: %s", w->path, strerror(e));
    }
    w->rows += n_rows;
    return WGF_OK;
}

enum wgf_status wgf_npy_writer_close(struct wgf_npy_writer *w, struct wgf_err *err)
{
    if (!w->f) return wgf_fail(err, WGF_ERR_ARG, ".npy writer is not open");
    char h[NPY_HEADER_BYTES];
    npy_header(h, w->rows, w->cols);
    int bad = fflush(w->f) != 0 || fseek(w->f, 0, SEEK_SET) != 0 || fwrite(h, 1, sizeof h, w->f) != sizeof h ||
              fflush(w->f) != 0 || fsync(fileno(w->f)) != 0;
    int e = errno;
    if (fclose(w->f) != 0 && !bad) bad = 1, e = errno;
    w->f = NULL;
    if (bad) {
        wgf_fail(err, WGF_ERR_IO, "%s: write: %s", w->path, strerror(e));
        wgf_npy_writer_abort(w);
        return WGF_ERR_IO;
    }
    if (rename(w->tmp, w->path) != 0) {
        e = errno;
        wgf_fail(err, WGF_ERR_IO, "%s: rename from %s: %s", w->path, w->tmp, strerror(e));
        wgf_npy_writer_abort(w);
        return WGF_ERR_IO;
    }
    free(w->path);
    free(w->tmp);
    memset(w, 0, sizeof *w);
    return WGF_OK;
}

void wgf_npy_writer_abort(struct wgf_npy_writer *w)
{
    if (!w) return;
    if (w->f) fclose(w->f);
    if (w->tmp) unlink(w->tmp);
    free(w->path);
    free(w->tmp);
    memset(w, 0, sizeof *w);
}

enum wgf_status wgf_npy_write_f32(const char *path, const float *data, uint64_t rows, uint64_t cols,
                                  struct wgf_err *err)
{
    struct wgf_npy_writer w;
    enum wgf_status       s = wgf_npy_writer_open(&w, path, cols, err);
    if (s) return s;
    if ((s = wgf_npy_writer_append(&w, data, rows, err))) {
        wgf_npy_writer_abort(&w);
        return s;
    }
    return wgf_npy_writer_close(&w, err);
}
