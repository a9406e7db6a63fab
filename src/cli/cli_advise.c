/* wgfuse CLI — the advisor's shared part (cli/cli.h): the device description from the cache
 * (measured when missing or unusable) and the `--plan auto` choice of `run` and `llm bench`;
 * beneath cmd_advise.c and cli_llm.c, which both call it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "wgfuse/bench_calibrate.h"
#include "wgfuse/llm_advise.h"
#include "wgfuse/llm_run.h"

static void progress(void *user, const char *what)
{
    (void)user;
    if (!wgf_cli.quiet) fprintf(stderr, "calibrate: %s\n", what);
}

int wgf_cli_calibration(wgf_ctx *ctx, const char *file, bool recalibrate, bool quick, struct wgf_calibration *c)
{
    struct wgf_err err = {0};
    if (!file) file = getenv("WGFUSE_CALIBRATION");
    if (file && *file) {
        if (wgf_calibration_load(file, NULL, c, &err) == WGF_OK) return 0;
        wgf_cli_error("--calibration: %s", err.msg);
        return 1;
    }
    char path[4096];
    if (wgf_calibration_path(ctx, path, sizeof path, &err)) {
        wgf_cli_error("%s", err.msg);
        return 1;
    }
    if (!recalibrate) {
        enum wgf_status s = wgf_calibration_load(path, ctx, c, &err);
        if (s == WGF_OK) return 0;
        if (s != WGF_ERR_IO) fprintf(stderr, "wgfuse: warning: ignoring %s; recalibrating\n", err.msg);
    }
    quick = quick || !strcmp(wgf_ctx_adapter(ctx)->type, "cpu");
    if (wgf_calibrate(ctx, quick, progress, NULL, c, &err) || wgf_calibration_save(c, path, &err)) {
        wgf_cli_error("%s", err.msg);
        return 1;
    }
    if (!wgf_cli.quiet) fprintf(stderr, "calibrate: %.1f s, stored in %s\n", c->seconds, path);
    return 0;
}

const struct wgf_llm_backend *wgf_cli_plan_auto(wgf_ctx *ctx, const struct wgf_llm_model *m, const struct wgf_llm_backend_options *bo)
{
    struct wgf_calibration cal;
    if (wgf_cli_calibration(ctx, NULL, false, false, &cal)) return NULL;
    struct wgf_llm_advice a;
    struct wgf_err        err = {0};
    if (wgf_llm_advise(ctx, m, bo, &cal.dev, &a, &err)) {
        wgf_cli_error("--plan auto: %s", err.msg);
        return NULL;
    }
    if (a.best < 0) {
        wgf_cli_error("--plan auto: %s", a.reason);
        return NULL;
    }
    fprintf(stderr, "plan auto: chose %s\n", a.reason);
    return wgf_llm_backend_find("gpu", a.row[a.best].plan);
}
