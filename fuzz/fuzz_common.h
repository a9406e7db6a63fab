/* wgfuse fuzz targets — shared helpers (header-only: each target is one binary).
 *
 * Oracle shared by every target: a parser that refuses its input must return a negative
 * wgf_status with a non-empty, one-line message (RELIABILITY.md: "a specific error").
 * Anything else (crash, sanitizer report, leak, an allocation over -malloc_limit_mb,
 * a broken invariant below) aborts and is a finding. */
#ifndef WGF_FUZZ_COMMON_H
#define WGF_FUZZ_COMMON_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wgfuse/status.h"

#define FZ_REQUIRE(cond, ...)                                                                   \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "fuzz invariant broken: %s: ", #cond);                              \
            fprintf(stderr, __VA_ARGS__);                                                       \
            fputc('\n', stderr);                                                                \
            abort();                                                                            \
        }                                                                                       \
    } while (0)

/* A refusal is a negative status with a one-line message. */
static inline void fz_check_refusal(enum wgf_status st, const struct wgf_err *e)
{
    FZ_REQUIRE(st < 0 && st >= WGF_ERR_INTERNAL, "status %d", (int)st);
    FZ_REQUIRE(st != WGF_ERR_INTERNAL, "internal error on input: %s", e->msg);
    FZ_REQUIRE(e->msg[0] != '\0', "empty message for %s", wgf_status_str(st));
    FZ_REQUIRE(strchr(e->msg, '\n') == NULL, "multi-line message: %s", e->msg);
}

/* Parsers that only take paths get the input through a memfd: "/proc/self/fd/N" is a
 * regular file (mmap, fstat and fopen all work) and nothing touches the disk. One memfd
 * per slot, rewritten for every input. */
static inline const char *fz_memfd_path(int slot, const uint8_t *data, size_t size)
{
    static int  fds[4] = {-1, -1, -1, -1};
    static char paths[4][64];
    if (fds[slot] < 0) {
        fds[slot] = memfd_create("wgf_fuzz", 0);
        FZ_REQUIRE(fds[slot] >= 0, "memfd_create failed");
        snprintf(paths[slot], sizeof paths[slot], "/proc/self/fd/%d", fds[slot]);
    }
    FZ_REQUIRE(ftruncate(fds[slot], 0) == 0, "ftruncate");
    size_t done = 0;
    while (done < size) {
        ssize_t w = pwrite(fds[slot], data + done, size - done, (off_t)done);
        FZ_REQUIRE(w > 0, "pwrite");
        done += (size_t)w;
    }
    return paths[slot];
}

#endif
