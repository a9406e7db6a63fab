/* A real (not injected) WebGPU validation error is recorded with the label of the object
 * that caused it and returned by the current call (RELIABILITY.md item 37): a dispatch of
 * 70000 workgroups (above maxComputeWorkgroupsPerDimension, 65535 in WebGPU's defaults)
 * inside a recorder labelled "reliability.too_many_workgroups", and a copy from a buffer
 * onto itself. Either the runtime refuses the call up front (WGF_ERR_ARG/WGF_ERR_LIMIT) or
 * Dawn's error comes back from submit/wait as WGF_ERR_GPU; the message must name the label
 * (the recorder's, the pipeline's or the buffer's) either way, and the context must keep
 * working (selfcheck). */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/gpu.h"

static enum wgf_status submit_and_wait(wgf_ctx *ctx, wgf_recorder *r, enum wgf_status s)
{
    if (s != WGF_OK) {
        wgf_recorder_abandon(r);
        return s;
    }
    s = wgf_recorder_submit(r);
    return s != WGF_OK ? s : wgf_ctx_wait(ctx);
}

int main(void)
{
    struct wgf_t t   = {0};
    wgf_ctx     *ctx = wgf_t_gpu(&t);
    if (!ctx) return wgf_t_finish(&t);
    wgf_pipeline   *p = NULL;
    wgf_buffer     *y = NULL, *x = NULL, *u = NULL;
    wgf_bind_group *bg = NULL;
    if (!wgf_t_check(&t,
                     wgf_pipeline_for_kernel(ctx, "selfcheck_saxpy", &p) == WGF_OK &&
                         wgf_buffer_create(ctx, "reliability.y", 256, WGF_BUF_STORAGE, &y) == WGF_OK &&
                         wgf_buffer_create(ctx, "reliability.x", 256, WGF_BUF_STORAGE, &x) == WGF_OK &&
                         wgf_buffer_create(ctx, "reliability.u", 16, WGF_BUF_UNIFORM, &u) == WGF_OK &&
                         wgf_bind_group_create(ctx, p, (wgf_buffer *[]){y, x, u}, 3, &bg) == WGF_OK,
                     "setup", "%s", wgf_ctx_last_error(ctx)))
        goto out;

    wgf_recorder   *r = NULL;
    enum wgf_status s = wgf_recorder_begin(ctx, "reliability.too_many_workgroups", NULL, &r);
    if (s == WGF_OK) s = submit_and_wait(ctx, r, wgf_recorder_dispatch(r, p, bg, 70000, 1, 1));
    const char *msg = wgf_ctx_last_error(ctx);
    wgf_t_check(&t, (s == WGF_ERR_GPU || s == WGF_ERR_ARG || s == WGF_ERR_LIMIT) &&
                    (strstr(msg, "reliability.too_many_workgroups") || strstr(msg, "'selfcheck_saxpy'")),
                "dispatch of 70000 workgroups: error names the recorder or pipeline", "[%s] %s", wgf_status_str(s), msg);

    r = NULL;
    s = wgf_recorder_begin(ctx, "reliability.self_copy", NULL, &r);
    if (s == WGF_OK) s = submit_and_wait(ctx, r, wgf_recorder_copy(r, y, 0, y, 128, 64));
    msg = wgf_ctx_last_error(ctx);
    wgf_t_check(&t, (s == WGF_ERR_GPU || s == WGF_ERR_ARG) && (strstr(msg, "reliability.y") || strstr(msg, "reliability.self_copy")),
                "copy of a buffer onto itself: error names the buffer or recorder", "[%s] %s", wgf_status_str(s), msg);

    double e = 0;
    s        = wgf_gpu_selfcheck(ctx, 1024, 3, &e);
    wgf_t_check(&t, s == WGF_OK, "context works after the validation errors", "%s", s ? wgf_ctx_last_error(ctx) : "selfcheck ok");
out:
    wgf_bind_group_free(bg);
    wgf_buffer_free(y);
    wgf_buffer_free(x);
    wgf_buffer_free(u);
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
