/* wgfuse test harness: every check reports {name, pass, detail}; a test binary ends with
 * one line "N passed, N failed, N skipped" and exits 0 only when nothing failed.
 * Skips are loud ("SKIP <name>: <reason>") and counted apart from passes.
 * A binary whose every case skipped exits 77 (CTest shows it as skipped, never passed). */
#ifndef WGF_TEST_HARNESS_H
#define WGF_TEST_HARNESS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/rng.h"
#include "wgfuse/status.h"

struct wgf_ctx;

struct wgf_t {
    int passed, failed, skipped;
};

/* Record one check. Returns `ok` so callers can bail out: if (!wgf_t_check(...)) return; */
bool wgf_t_check(struct wgf_t *t, bool ok, const char *name, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
void wgf_t_skip(struct wgf_t *t, const char *name, const char *reason);
/* Print the summary line; return the process exit code. */
int wgf_t_finish(const struct wgf_t *t);

/* A GPU context on the default adapter (lavapipe in CI). On failure the check fails with
 * the runtime's message and NULL is returned: a missing adapter is a failure, not a skip. */
struct wgf_ctx *wgf_t_gpu(struct wgf_t *t);
/* The same with every wait's timeout set (slow work on a busy CPU adapter). */
struct wgf_ctx *wgf_t_gpu_timeout(struct wgf_t *t, uint32_t timeout_ms);

/* Max |a-b| and relative L2 error ||a-b|| / ||b||. */
double wgf_t_max_abs_diff(const float *a, const float *b, size_t n);
double wgf_t_rel_l2(const float *a, const float *b, size_t n);
/* Fill with uniform values in [lo, hi), never all-zero. */
void wgf_t_fill(struct wgf_rng *r, float *x, size_t n, float lo, float hi);
/* A scratch directory for files a test writes: $WGF_TEST_TMP/<name> (created). */
const char *wgf_t_tmpdir(const char *name, char *buf, size_t cap);

/* Run a shell command (stdout+stderr captured into out, NUL-terminated, truncated to cap).
 * Returns the exit code, or -1 if it could not run / was killed by a signal. `$WGF_CLI` in
 * the environment holds the path of the wgfuse binary. */
int wgf_t_run(const char *cmd, char *out, size_t cap);
/* Path of the wgfuse CLI under test ($WGF_CLI), or "wgfuse". */
const char *wgf_t_cli(void);
/* The generated tiny Llama folder ($WGF_TINY_LLAMA, written into the build tree by
 * tests/llm/data/make_tiny_*.py at build time; "tiny_llama" when unset). */
const char *wgf_t_tiny_llama(void);

#endif
