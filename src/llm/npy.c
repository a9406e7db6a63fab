/* wgfuse — float32 .npy output, written atomically.
 *
 * Format (NumPy format spec v1.0): "\x93NUMPY" 1 0, uint16 LE header length, an ASCII dict
 * "{'descr': '<f4', 'fortran_order': False, 'shape': (R, C), }" padded with spaces and a
 * final '\n' so data starts at a multiple of 64, then R*C little-endian float32 values.
 * The row count is not known while generating, so the header is written with a fixed
 * 128-byte size and patched on close (a shape of two 20-digit numbers still fits).
 * Rows go to "<path>.tmp.<pid>"; close flushes and renames, so `path` is never partial
 * (util/file.h's output rule: a device or FIFO is written through at close, never replaced). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"
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
    struct wgf_out *o = malloc(sizeof *o);
    if (!o) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", path);
    /* seekable: the header is patched with the row count on close */
    enum wgf_status s = wgf_out_open(o, path, WGF_OUT_SEEKABLE, err);
    if (s) {
        free(o);
        return s;
    }
    w->out  = o;
    w->path = o->path;
    w->tmp  = o->tmp;
    w->cols = cols;
    char h[NPY_HEADER_BYTES];
    npy_header(h, 0, cols);
    if ((s = wgf_out_write(o, h, sizeof h, err))) wgf_npy_writer_abort(w);
    return s;
}

enum wgf_status wgf_npy_writer_append(struct wgf_npy_writer *w, const float *rows, uint64_t n_rows,
                                      struct wgf_err *err)
{
    if (!w->out) return wgf_fail(err, WGF_ERR_ARG, ".npy writer is not open");
    uint64_t n;
    if (!wgf_mul_u64(n_rows, w->cols, &n) || n > SIZE_MAX / sizeof(float))
        return wgf_fail(err, WGF_ERR_LIMIT, "%s: %" PRIu64 " rows overflow", w->path, n_rows);
    enum wgf_status s = wgf_out_write(w->out, rows, (size_t)n * sizeof(float), err);
    if (s == WGF_OK) w->rows += n_rows;
    return s;
}

enum wgf_status wgf_npy_writer_close(struct wgf_npy_writer *w, struct wgf_err *err)
{
    struct wgf_out *o = w->out;
    if (!o) return wgf_fail(err, WGF_ERR_ARG, ".npy writer is not open");
    char h[NPY_HEADER_BYTES];
    npy_header(h, w->rows, w->cols);
    if (fflush(o->f) != 0 || fseek(o->f, 0, SEEK_SET) != 0) {
        int e = errno;
        wgf_fail(err, WGF_ERR_IO, "%s: write: %s", w->path, strerror(e));
        wgf_npy_writer_abort(w);
        return WGF_ERR_IO;
    }
    enum wgf_status s = wgf_out_write(o, h, sizeof h, err);
    if (s == WGF_OK && fseek(o->f, 0, SEEK_END) != 0) s = wgf_fail(err, WGF_ERR_IO, "%s: seek: %s", w->path, strerror(errno));
    if (s) {
        wgf_npy_writer_abort(w);
        return s;
    }
    s = wgf_out_commit(o, err);
    free(o);
    memset(w, 0, sizeof *w);
    return s;
}

void wgf_npy_writer_abort(struct wgf_npy_writer *w)
{
    if (!w) return;
    wgf_out_abort(w->out);
    free(w->out);
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
