/* wgfuse runtime — how many workgroups this device runs side by side at full rate: its compute
 * units (multiprocessors, CUs, a CPU adapter's threads), measured once per context.
 *
 * WebGPU does not say how many compute units an adapter has, yet a kernel whose workgroups all
 * fit on the device at once (one wave) takes as long as its busiest unit: 288 workgroups on
 * 132 units put three on 24 of them and two on the rest, and the three set the time. The LLM
 * plans size such grids by this count (src/llm/gpu/gr_weights.c).
 *
 * Method: calib_fma (eight independent FMA chains per invocation, 256 invocations) keeps one
 * unit's arithmetic busy, so a grid of n workgroups takes one workgroup's time t1 while each
 * lands on a unit of its own and about 2 t1 once some unit holds two. ITER grows until t1 is
 * at least CU_MIN_NS of GPU time (the pass's own cost is then small beside it); then the
 * largest n whose time stays under CU_STEP * t1 is found by doubling n, then halving the gap.
 * Each time is the least of CU_REPS timed passes (what disturbs a timing only adds to it).
 * Without timestamp queries, or when a step fails or the times make no sense, the answer is
 * 0: unknown (callers keep their default layouts). Its pipelines (calib_fma at up to a few
 * ITER values) stay in the context's cache; its buffer and timer are freed. */
#include <stdio.h>

#include "gpu/gpu_internal.h"

#define CU_MIN_NS  40000.0 /* one workgroup's GPU time at least                          */
#define CU_STEP    1.5     /* a grid counts as one round while its time is below this x t1 */
#define CU_REPS    3       /* timed passes per grid size (the least counts)               */
#define CU_MAX     4096u   /* grid sizes tried at most (units counted: 4095 at most)      */
#define CU_ITER0   4096u   /* FMA steps per chain to start from                           */
#define CU_ITER_MAX (1u << 20)
#define CU_WG      256u

struct cu_probe {
    wgf_ctx        *ctx;
    wgf_timer      *tm;
    wgf_buffer     *y;
    wgf_pipeline   *pl;
    wgf_bind_group *bg;
};

static void cu_kernel_free(struct cu_probe *c)
{
    wgf_bind_group_free(c->bg);
    c->bg = NULL;
    c->pl = NULL; /* owned by the context's cache */
}

static enum wgf_status cu_kernel(struct cu_probe *c, uint32_t iter)
{
    cu_kernel_free(c);
    struct wgf_prelude p = {0};
    char               label[64];
    snprintf(label, sizeof label, "compute_units.calib_fma_%u", iter);
    wgf_prelude_u32(&p, "WG", CU_WG, "invocations per workgroup");
    wgf_prelude_u32(&p, "ITER", iter, "FMA steps per chain: one workgroup's time >= CU_MIN_NS");
    enum wgf_status          s = wgf_prelude_status(&p);
    struct wgf_pipeline_desc d = {.label = label, .wgsl = wgf_kernel_source("calib_fma"), .prelude = p.s};
    if (!s) s = wgf_pipeline_get(c->ctx, &d, &c->pl);
    wgf_buffer *b[1] = {c->y};
    if (!s) s = wgf_bind_group_create(c->ctx, c->pl, b, 1, &c->bg);
    wgf_prelude_free(&p);
    return s;
}

/* the least GPU time (ns) of CU_REPS passes of one dispatch of n workgroups */
static enum wgf_status cu_time(struct cu_probe *c, uint32_t n, double *ns)
{
    double best = 0;
    for (int i = 0; i < CU_REPS; i++) {
        wgf_recorder   *r;
        enum wgf_status s;
        wgf_timer_reset(c->tm);
        if ((s = wgf_recorder_begin(c->ctx, "compute_units", c->tm, &r))) return s;
        if ((s = wgf_recorder_dispatch(r, c->pl, c->bg, n, 1, 1))) {
            wgf_recorder_abandon(r);
            return s;
        }
        if ((s = wgf_recorder_submit(r))) return s;
        double   t[1];
        uint32_t got = 0;
        if ((s = wgf_timer_read(c->ctx, c->tm, t, 1, &got))) return s;
        if (got != 1 || !(t[0] > 0)) return WGF_ERR_UNSUPPORTED;
        if (i == 0 || t[0] < best) best = t[0];
    }
    *ns = best;
    return WGF_OK;
}

uint32_t wgf_compute_units_search(double (*time_ns)(void *user, uint32_t n), void *user)
{
    double t1 = time_ns(user, 1), t = 0;
    if (!(t1 > 0)) return 0;
    double   limit = CU_STEP * t1;
    uint32_t lo = 1, hi = 2;
    for (;; hi *= 2) { /* doubling: lo fits one round, hi does not */
        if (hi > CU_MAX) return 0;
        if (!((t = time_ns(user, hi)) > 0)) return 0;
        if (t >= limit) break;
        lo = hi;
    }
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (!((t = time_ns(user, mid)) > 0)) return 0;
        if (t < limit) lo = mid;
        else hi = mid;
    }
    /* one more look at the answer: a slow spell during the search would have cut it short */
    if (!((t = time_ns(user, lo)) > 0) || t >= limit) return 0;
    return lo;
}

/* wgf_compute_units_search's timing: a failed pass answers -1 (the search then gives 0) */
static double cu_time_cb(void *u, uint32_t n)
{
    double t = 0;
    return cu_time(u, n, &t) ? -1.0 : t;
}

static enum wgf_status cu_measure(struct cu_probe *c, uint32_t *units)
{
    enum wgf_status s;
    double          t1 = 0;
    uint32_t        iter = CU_ITER0;
    for (;;) { /* the first pass of a new pipeline may carry its setup: time twice */
        if ((s = cu_kernel(c, iter)) || (s = cu_time(c, 1, &t1)) || (s = cu_time(c, 1, &t1))) return s;
        if (t1 >= CU_MIN_NS || iter >= CU_ITER_MAX) break;
        iter *= 2;
    }
    *units = wgf_compute_units_search(cu_time_cb, c);
    return *units ? WGF_OK : WGF_ERR_UNSUPPORTED;
}

uint32_t wgf_ctx_compute_units(wgf_ctx *ctx)
{
    if (ctx->cu_probed) return ctx->cu_units;
    /* an error from earlier work stays for its owner's next check (the probe's own checks would
     * take it): no probe then, and none latched */
    if (atomic_load(&ctx->lost) || atomic_load(&ctx->pending_error)) return 0;
    ctx->cu_probed      = true;
    ctx->cu_units       = 0;
    struct cu_probe c   = {.ctx = ctx};
    uint32_t        n   = 0;
    enum wgf_status s   = wgf_timer_create(ctx, "compute_units", 1, &c.tm);
    if (!s) s = wgf_buffer_create(ctx, "compute_units.y", (uint64_t)CU_MAX * CU_WG * 4, WGF_BUF_STORAGE, &c.y);
    if (!s) s = cu_measure(&c, &n);
    cu_kernel_free(&c);
    wgf_buffer_free(c.y);
    wgf_timer_free(c.tm);
    if (!s) ctx->cu_units = n;
    return ctx->cu_units;
}
