/* wgfuse runtime — the self-check: one real kernel, checked against C. */
#include <math.h>
#include <stdlib.h>

#include "gpu/gpu_internal.h"
#include "gpu/kernels.h"
#include "util/rng.h"

enum wgf_status wgf_gpu_selfcheck(wgf_ctx *ctx, uint32_t n, uint64_t seed, double *max_abs_err)
{
    *max_abs_err = INFINITY;
    if (n == 0) return wgf__fail(ctx, WGF_ERR_ARG, "selfcheck: n = 0");
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n), *got = malloc(sizeof(float) * n);
    wgf_buffer *by = NULL, *bx = NULL, *bp = NULL;
    wgf_bind_group *bg = NULL;
    wgf_pipeline *p = NULL;
    enum wgf_status s = WGF_OK;
    if (!x || !y || !got) {
        s = wgf__fail(ctx, WGF_ERR_NOMEM, "selfcheck: out of host memory");
        goto done;
    }
    struct wgf_rng r;
    wgf_rng_seed(&r, seed);
    for (uint32_t i = 0; i < n; i++) {
        x[i] = wgf_rng_uniform(&r, -2.0f, 2.0f);
        y[i] = wgf_rng_uniform(&r, -2.0f, 2.0f);
    }
    struct {
        float    a;
        uint32_t n;
    } params = {wgf_rng_uniform(&r, 0.5f, 1.5f), n};

    if ((s = wgf__pipeline_for(ctx, WGF_KERNEL_SELFCHECK_SAXPY, &p)) != WGF_OK) goto done;
    if ((s = wgf_buffer_create(ctx, "selfcheck y", sizeof(float) * n, WGF_BUF_STORAGE, &by)) != WGF_OK) goto done;
    if ((s = wgf_buffer_create(ctx, "selfcheck x", sizeof(float) * n, WGF_BUF_STORAGE, &bx)) != WGF_OK) goto done;
    if ((s = wgf_buffer_create(ctx, "selfcheck params", sizeof params, WGF_BUF_UNIFORM, &bp)) != WGF_OK) goto done;
    if ((s = wgf_buffer_write(ctx, by, 0, y, sizeof(float) * n)) != WGF_OK) goto done;
    if ((s = wgf_buffer_write(ctx, bx, 0, x, sizeof(float) * n)) != WGF_OK) goto done;
    if ((s = wgf_buffer_write(ctx, bp, 0, &params, sizeof params)) != WGF_OK) goto done;
    wgf_buffer *bufs[3] = {by, bx, bp};
    if ((s = wgf_bind_group_create(ctx, p, bufs, 3, &bg)) != WGF_OK) goto done;
    uint32_t groups = (n + 63) / 64, gx = groups < 65535 ? groups : 65535, gy = (groups + gx - 1) / gx;
    if ((s = wgf_dispatch_once(ctx, p, bg, gx, gy, 1)) != WGF_OK) goto done;
    if ((s = wgf_buffer_read(ctx, by, 0, got, sizeof(float) * n)) != WGF_OK) goto done;
    double m = 0;
    for (uint32_t i = 0; i < n; i++) {
        float want = params.a * x[i] + y[i];
        double d = fabs((double)got[i] - (double)want);
        if (!(d <= m)) m = d; /* NaN propagates as "bad" */
    }
    *max_abs_err = m;
    /* f32 a*x+y: one rounding (or two without FMA): |err| <= 2 ulp of |result| <= 8 */
    if (!(m <= 4e-6)) s = wgf__fail(ctx, WGF_ERR_INTERNAL, "selfcheck: GPU result differs from C by %g", m);
done:
    wgf_bind_group_free(bg);
    wgf_buffer_free(by);
    wgf_buffer_free(bx);
    wgf_buffer_free(bp);
    free(x);
    free(y);
    free(got);
    return s;
}
