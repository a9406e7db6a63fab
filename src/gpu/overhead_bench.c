/* wgfuse runtime — the runtime's own overhead, measured against raw wgpu* calls.
 *
 * Protocol (docs/methodology.md, "sequential method"): for N in {n_small, n_large} record N
 * dependent tiny dispatches (overhead_tick) into ONE compute pass of one encoder, submit, and
 * wait for the queue; time submit-to-idle on the host clock. Per-dispatch cost is the slope
 * (T(n_large) - T(n_small)) / (n_large - n_small), which cancels the fixed submit+wait cost.
 * The same loop is timed twice, alternating repetitions to share drift:
 *   - through the runtime: wgf_recorder_begin / wgf_recorder_dispatch / wgf_recorder_submit
 *   - with raw calls: CreateCommandEncoder, BeginComputePass, SetPipeline, SetBindGroup,
 *     DispatchWorkgroups, End, Finish, Submit
 * Both wait the same way (wgf__queue_idle), and every repetition's counter is read back
 * and checked (it must equal the number of dispatches) before any number is reported. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_internal.h"
#include "gpu/kernels.h"
#include "wgfuse/gpu_bench.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static enum wgf_status run_raw(wgf_ctx *ctx, wgf_pipeline *p, wgf_bind_group *bg, uint32_t n)
{
    WGPUCommandEncoder enc = ctx->p.DeviceCreateCommandEncoder(ctx->device, NULL);
    WGPUComputePassEncoder pass = ctx->p.CommandEncoderBeginComputePass(enc, NULL);
    for (uint32_t i = 0; i < n; i++) {
        ctx->p.ComputePassEncoderSetPipeline(pass, p->h);
        ctx->p.ComputePassEncoderSetBindGroup(pass, 0, bg->h, 0, NULL);
        ctx->p.ComputePassEncoderDispatchWorkgroups(pass, 1, 1, 1);
    }
    ctx->p.ComputePassEncoderEnd(pass);
    ctx->p.ComputePassEncoderRelease(pass);
    WGPUCommandBuffer cb = ctx->p.CommandEncoderFinish(enc, NULL);
    ctx->p.QueueSubmit(ctx->queue, 1, &cb);
    ctx->p.CommandBufferRelease(cb);
    ctx->p.CommandEncoderRelease(enc);
    return wgf__check(ctx);
}

static enum wgf_status run_runtime(wgf_ctx *ctx, wgf_pipeline *p, wgf_bind_group *bg, uint32_t n)
{
    wgf_recorder *r;
    enum wgf_status s = wgf_recorder_begin(ctx, "overhead_tick chain", NULL, &r);
    if (s != WGF_OK) return s;
    for (uint32_t i = 0; i < n && s == WGF_OK; i++) s = wgf_recorder_dispatch(r, p, bg, 1, 1, 1);
    if (s != WGF_OK) {
        wgf_recorder_abandon(r);
        return s;
    }
    return wgf_recorder_submit(r);
}

/* time one repetition (zero the counter, record+submit+wait, verify); *ns = wall time */
static enum wgf_status one_rep(wgf_ctx *ctx, wgf_pipeline *p, wgf_bind_group *bg, wgf_buffer *counter, bool raw,
                               uint32_t n, double *ns)
{
    static const float zero[64];
    enum wgf_status s = wgf_buffer_write(ctx, counter, 0, zero, sizeof zero);
    if (s == WGF_OK) s = wgf__queue_idle(ctx, "counter reset");
    if (s != WGF_OK) return s;
    uint64_t t0 = wgf_now_ns();
    s = raw ? run_raw(ctx, p, bg, n) : run_runtime(ctx, p, bg, n);
    if (s == WGF_OK) s = wgf__queue_idle(ctx, "the dispatch chain");
    *ns = (double)(wgf_now_ns() - t0);
    if (s != WGF_OK) return s;
    float got[64];
    s = wgf_buffer_read(ctx, counter, 0, got, sizeof got);
    if (s != WGF_OK) return s;
    for (int i = 0; i < 64; i++)
        if (got[i] != (float)n)
            return wgf__fail(ctx, WGF_ERR_INTERNAL, "overhead bench: counter[%d] = %g after %u dispatches", i,
                             (double)got[i], n);
    return WGF_OK;
}

enum wgf_status wgf_gpu_bench_overhead(wgf_ctx *ctx, uint32_t n_small, uint32_t n_large, int reps,
                                       struct wgf_overhead_result *out)
{
    memset(out, 0, sizeof *out);
    if (n_large <= n_small || reps < 3 || reps > WGF_OVERHEAD_MAX_REPS)
        return wgf__fail(ctx, WGF_ERR_ARG, "overhead bench: need n_large > n_small and 3 <= reps <= %d",
                         WGF_OVERHEAD_MAX_REPS);
    if ((double)n_large > 16777216.0) return wgf__fail(ctx, WGF_ERR_ARG, "overhead bench: n_large > 2^24 (f32 counter)");
    wgf_pipeline *p;
    wgf_buffer *counter = NULL;
    wgf_bind_group *bg = NULL;
    enum wgf_status s = wgf__pipeline_for(ctx, WGF_KERNEL_OVERHEAD_TICK, &p);
    if (s == WGF_OK) s = wgf_buffer_create(ctx, "overhead counter", 64 * sizeof(float), WGF_BUF_STORAGE, &counter);
    if (s == WGF_OK) s = wgf_bind_group_create(ctx, p, &counter, 1, &bg);
    double t[2][2][WGF_OVERHEAD_MAX_REPS]; /* [raw?][large?][rep] */
    /* warm-up: pipeline, driver caches, first-submit costs */
    for (int w = 0; w < 2 && s == WGF_OK; w++) {
        double ns;
        s = one_rep(ctx, p, bg, counter, w, n_large, &ns);
    }
    for (int r = 0; r < reps && s == WGF_OK; r++)
        for (int raw = 0; raw < 2 && s == WGF_OK; raw++)
            for (int large = 0; large < 2 && s == WGF_OK; large++)
                s = one_rep(ctx, p, bg, counter, raw, large ? n_large : n_small, &t[raw][large][r]);
    if (s == WGF_OK) {
        double dn = (double)(n_large - n_small);
        for (int raw = 0; raw < 2; raw++) {
            double slope[WGF_OVERHEAD_MAX_REPS];
            for (int r = 0; r < reps; r++) slope[r] = (t[raw][1][r] - t[raw][0][r]) / dn * 1e-3;
            for (int r = 0; r < reps; r++) (raw ? out->raw_us : out->runtime_us)[r] = slope[r];
            double m = median(slope, reps);
            if (raw) out->raw_us_median = m;
            else out->runtime_us_median = m;
            double small[WGF_OVERHEAD_MAX_REPS];
            for (int r = 0; r < reps; r++) small[r] = t[raw][0][r] * 1e-3;
            if (raw) out->raw_fixed_us = median(small, reps);
            else out->runtime_fixed_us = median(small, reps);
        }
        out->reps    = reps;
        out->n_small = n_small;
        out->n_large = n_large;
        out->ratio   = out->raw_us_median > 0 ? out->runtime_us_median / out->raw_us_median : NAN;
    }
    wgf_bind_group_free(bg);
    wgf_buffer_free(counter);
    return s;
}
