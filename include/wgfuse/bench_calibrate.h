/* wgfuse — the advisor's calibration: what this adapter costs per dispatch (by recording mode),
 * per byte read, per FLOP, per barrier and per subgroup reduction (src/bench/calibrate.c).
 *
 * wgf_calibrate measures (under a minute on lavapipe with quick sizes, seconds on a GPU);
 * wgf_calibration_save/_load keep the result as JSON in the user's cache directory, one
 * file per adapter (its name, driver and WebGPU library), written atomically. A file that is
 * not valid JSON, is cut short, carries another format version, lacks a field, holds a
 * non-finite or non-positive rate, or names another adapter is refused with WGF_ERR_FORMAT
 * and a message saying which (the caller warns and recalibrates). The library never prints. */
#ifndef WGFUSE_BENCH_CALIBRATE_H
#define WGFUSE_BENCH_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>

#include "wgfuse/bench.h"
#include "wgfuse/gpu.h"
#include "wgfuse/gpu_cost.h"
#include "wgfuse/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WGF_CALIBRATION_VERSION 3 /* 2: dispatch cost by schedule length, the serial term;
                                     3: the indirect dispatch mode */

struct wgf_calibration {
    char   adapter[256], driver[256], backend[16], webgpu_lib[1024];
    char   date[32];                      /* UTC, ISO 8601                                      */
    double seconds;                       /* how long the calibration took                      */
    double mode_us[WGF_MODE_COUNT];       /* per-dispatch cost by recording mode (slopes, us)   */
    struct wgf_device_cost dev;           /* what the cost model uses                           */
};

/* Measure ctx's adapter (borrowed). quick: small sizes (CPU adapters, tests). progress may be
 * NULL. Fills every field of *out. */
enum wgf_status wgf_calibrate(wgf_ctx *ctx, bool quick, void (*progress)(void *user, const char *what), void *user,
                              struct wgf_calibration *out, struct wgf_err *err);
/* The cache file for ctx's adapter: $XDG_CACHE_HOME/wgfuse/ (else $HOME/.cache/wgfuse/)
 * calibration-<hash of name, driver and library>.json. Creates the directory. */
enum wgf_status wgf_calibration_path(const wgf_ctx *ctx, char *buf, size_t cap, struct wgf_err *err);
/* The calibration as JSON text (malloc'd, caller frees). */
enum wgf_status wgf_calibration_json(const struct wgf_calibration *c, char **out, struct wgf_err *err);
/* Write atomically (temp file + rename). */
enum wgf_status wgf_calibration_save(const struct wgf_calibration *c, const char *path, struct wgf_err *err);
/* Read and validate (see the header comment). ctx non-NULL: the file must name ctx's adapter,
 * driver and library; NULL: any adapter (a device description handed in by the user). A
 * missing file is WGF_ERR_IO. */
enum wgf_status wgf_calibration_load(const char *path, const wgf_ctx *ctx, struct wgf_calibration *out,
                                     struct wgf_err *err);

#ifdef __cplusplus
}
#endif
#endif
