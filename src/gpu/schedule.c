/* wgfuse runtime — step schedules: a plan's steps built once, replayed per token.
 *
 * Replay is the hot path of every LLM plan: per dispatch it costs setPipeline + setBindGroup
 * + dispatchWorkgroups(Indirect), what a hand-written loop would make (the recorder's calls);
 * a host-grid step reads its grid from the caller's memory as it is replayed.
 * The profiled replay puts each step in its own compute pass so the attached timer times it;
 * the extra pass boundaries cost a little GPU time, so a profile explains where the time
 * goes but its total is not the throughput (docs/llm.md says by how much). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_internal.h"

struct sched_step {
    struct wgf_step_info info;
    wgf_pipeline        *pl;
    wgf_bind_group      *bg;   /* owned                                                     */
    wgf_buffer          *src;  /* copy source, or the indirect-argument buffer              */
    wgf_buffer          *dst;  /* copy destination                                          */
    const uint32_t      *hgrid; /* WGF_STEP_DISPATCH_HOST: the caller's grid, read at replay   */
    uint64_t             src_off, dst_off, n;
};

struct wgf_schedule {
    wgf_ctx           *ctx;
    char               label[WGF_LABEL_MAX];
    struct sched_step *steps;
    uint32_t           n, cap, n_dispatches;
};

enum wgf_status wgf_schedule_create(wgf_ctx *ctx, const char *label, wgf_schedule **out)
{
    *out            = NULL;
    wgf_schedule *s = calloc(1, sizeof *s);
    if (!s) return wgf__fail(ctx, WGF_ERR_NOMEM, "schedule '%s': out of host memory", label ? label : "");
    s->ctx = ctx;
    snprintf(s->label, sizeof s->label, "%s", label ? label : "schedule");
    *out = s;
    return WGF_OK;
}

void wgf_schedule_free(wgf_schedule *s)
{
    if (!s) return;
    for (uint32_t i = 0; i < s->n; i++) wgf_bind_group_free(s->steps[i].bg);
    free(s->steps);
    free(s);
}

static struct sched_step *push(wgf_schedule *s, const char *label, enum wgf_step_kind kind, wgf_bind_group *bg)
{
    if (s->n == s->cap) {
        uint32_t           cap = s->cap ? 2 * s->cap : 32;
        struct sched_step *p   = realloc(s->steps, cap * sizeof *p);
        if (!p) {
            wgf_bind_group_free(bg);
            wgf__fail(s->ctx, WGF_ERR_NOMEM, "schedule '%s': step '%s': out of host memory", s->label, label);
            return NULL;
        }
        s->steps = p;
        s->cap   = cap;
    }
    struct sched_step *st = &s->steps[s->n++];
    memset(st, 0, sizeof *st);
    st->info.kind = kind;
    st->bg        = bg;
    snprintf(st->info.label, sizeof st->info.label, "%s", label ? label : "step");
    return st;
}

enum wgf_status wgf_schedule_dispatch(wgf_schedule *s, const char *label, wgf_pipeline *p, wgf_bind_group *bg,
                                      uint32_t x, uint32_t y, uint32_t z, struct wgf_step_cost cost)
{
    uint32_t lim = s->ctx->limits.max_compute_workgroups_per_dimension;
    if (!p || !bg || x == 0 || y == 0 || z == 0 || x > lim || y > lim || z > lim) {
        wgf_bind_group_free(bg);
        return wgf__fail(s->ctx, x > lim || y > lim || z > lim ? WGF_ERR_LIMIT : WGF_ERR_ARG,
                         "schedule '%s': step '%s': grid %u x %u x %u (limit %u per dimension) or no pipeline/bind group",
                         s->label, label, x, y, z, lim);
    }
    struct sched_step *st = push(s, label, WGF_STEP_DISPATCH, bg);
    if (!st) return WGF_ERR_NOMEM;
    st->pl           = p;
    st->info.grid[0] = x, st->info.grid[1] = y, st->info.grid[2] = z;
    st->info.cost    = cost;
    s->n_dispatches++;
    return WGF_OK;
}

enum wgf_status wgf_schedule_dispatch_indirect(wgf_schedule *s, const char *label, wgf_pipeline *p,
                                               wgf_bind_group *bg, wgf_buffer *args, uint64_t offset,
                                               struct wgf_step_cost cost)
{
    if (!p || !bg || !args || !(args->usage & WGF_BUF_INDIRECT) || offset % 4 || offset + 12 > args->alloc_size) {
        wgf_bind_group_free(bg);
        return wgf__fail(s->ctx, WGF_ERR_ARG, "schedule '%s': indirect step '%s': arguments buffer '%s' unusable",
                         s->label, label, args ? args->label : "(none)");
    }
    struct sched_step *st = push(s, label, WGF_STEP_DISPATCH_INDIRECT, bg);
    if (!st) return WGF_ERR_NOMEM;
    st->pl        = p;
    st->src       = args;
    st->src_off   = offset;
    st->info.cost = cost;
    s->n_dispatches++;
    return WGF_OK;
}

enum wgf_status wgf_schedule_dispatch_host(wgf_schedule *s, const char *label, wgf_pipeline *p, wgf_bind_group *bg,
                                           const uint32_t *grid, struct wgf_step_cost cost)
{
    if (!p || !bg || !grid) {
        wgf_bind_group_free(bg);
        return wgf__fail(s->ctx, WGF_ERR_ARG, "schedule '%s': host-grid step '%s': no pipeline, bind group or grid",
                         s->label, label);
    }
    struct sched_step *st = push(s, label, WGF_STEP_DISPATCH_HOST, bg);
    if (!st) return WGF_ERR_NOMEM;
    st->pl        = p;
    st->hgrid     = grid;
    st->info.cost = cost;
    s->n_dispatches++;
    return WGF_OK;
}

enum wgf_status wgf_schedule_copy(wgf_schedule *s, const char *label, wgf_buffer *src, uint64_t src_off,
                                  wgf_buffer *dst, uint64_t dst_off, uint64_t n)
{
    uint64_t se, de;
    if (!src || !dst || src_off % 4 || dst_off % 4 || n % 4 || n == 0 || !wgf_add_u64(src_off, n, &se) ||
        !wgf_add_u64(dst_off, n, &de) || se > src->alloc_size || de > dst->alloc_size)
        return wgf__fail(s->ctx, WGF_ERR_ARG, "schedule '%s': copy '%s': bad range", s->label, label);
    struct sched_step *st = push(s, label, WGF_STEP_COPY, NULL);
    if (!st) return WGF_ERR_NOMEM;
    st->src                     = src;
    st->dst                     = dst;
    st->src_off                 = src_off;
    st->dst_off                 = dst_off;
    st->n                       = n;
    st->info.cost.bytes_read    = n;
    st->info.cost.bytes_written = n;
    return WGF_OK;
}

uint32_t wgf_schedule_len(const wgf_schedule *s) { return s ? s->n : 0; }
uint32_t wgf_schedule_dispatches(const wgf_schedule *s) { return s ? s->n_dispatches : 0; }
const struct wgf_step_info *wgf_schedule_step(const wgf_schedule *s, uint32_t i)
{
    return s && i < s->n ? &s->steps[i].info : NULL;
}

struct wgf_step_cost wgf_schedule_cost(const wgf_schedule *s)
{
    struct wgf_step_cost c = {0, 0, 0};
    for (uint32_t i = 0; s && i < s->n; i++) {
        c.bytes_read += s->steps[i].info.cost.bytes_read;
        c.bytes_written += s->steps[i].info.cost.bytes_written;
        c.flops += s->steps[i].info.cost.flops;
    }
    return c;
}

static enum wgf_status record_one(const struct sched_step *x, wgf_recorder *r)
{
    switch (x->info.kind) {
    case WGF_STEP_DISPATCH: return wgf_recorder_dispatch(r, x->pl, x->bg, x->info.grid[0], x->info.grid[1], x->info.grid[2]);
    case WGF_STEP_DISPATCH_INDIRECT: return wgf_recorder_dispatch_indirect(r, x->pl, x->bg, x->src, x->src_off);
    case WGF_STEP_COPY: return wgf_recorder_copy(r, x->src, x->src_off, x->dst, x->dst_off, x->n);
    case WGF_STEP_DISPATCH_HOST: {
        uint32_t lim = r->ctx->limits.max_compute_workgroups_per_dimension;
        if (x->hgrid[0] > lim || x->hgrid[1] > lim || x->hgrid[2] > lim)
            return wgf__fail(r->ctx, WGF_ERR_LIMIT, "step '%s': the grid set for this replay, %u x %u x %u, exceeds %u per dimension",
                             x->info.label, x->hgrid[0], x->hgrid[1], x->hgrid[2], lim);
        return wgf_recorder_dispatch(r, x->pl, x->bg, x->hgrid[0], x->hgrid[1], x->hgrid[2]);
    }
    }
    return WGF_ERR_INTERNAL;
}

enum wgf_status wgf_schedule_record_step(const wgf_schedule *s, uint32_t i, wgf_recorder *r)
{
    if (i >= s->n) return wgf__fail(s->ctx, WGF_ERR_ARG, "schedule '%s': step %u of %u", s->label, i, s->n);
    enum wgf_status st = record_one(&s->steps[i], r);
    if (st != WGF_OK) return wgf__fail(s->ctx, st, "schedule '%s': %s", s->label, wgf_ctx_last_error(s->ctx));
    return WGF_OK;
}

enum wgf_status wgf_schedule_record(const wgf_schedule *s, wgf_recorder *r, struct wgf_schedule_trace *trace)
{
    enum wgf_status st = WGF_OK;
    for (uint32_t i = 0; i < s->n && st == WGF_OK; i++) {
        const struct sched_step *x = &s->steps[i];
        if (trace) {
            wgf_recorder_end_pass(r);
            uint32_t slot = wgf_timer_used(r->timer);
            if (!r->timer || slot >= r->timer->max_passes || slot >= trace->cap)
                return wgf__fail(s->ctx, WGF_ERR_LIMIT, "schedule '%s': profile out of timer slots at step '%s'",
                                 s->label, x->info.label);
            if (x->info.kind != WGF_STEP_COPY) { /* a copy opens no pass: not timed */
                trace->step[slot] = &x->info;
                if (slot + 1 > trace->n) trace->n = slot + 1;
            }
        }
        st = record_one(x, r);
    }
    if (st != WGF_OK) return wgf__fail(s->ctx, st, "schedule '%s': %s", s->label, wgf_ctx_last_error(s->ctx));
    return WGF_OK;
}

enum wgf_status wgf_profile_add(struct wgf_profile *p, const struct wgf_schedule_trace *trace, const double *pass_ns,
                                uint32_t n)
{
    for (uint32_t k = 0; k < n && k < trace->n; k++) {
        const struct wgf_step_info *si = trace->step[k];
        if (!si) continue;
        uint32_t j = 0;
        while (j < p->n && strcmp(p->rows[j].label, si->label)) j++;
        if (j == p->n) {
            if (p->n == p->cap) {
                uint32_t                cap = p->cap ? 2 * p->cap : 32;
                struct wgf_profile_row *r   = realloc(p->rows, cap * sizeof *r);
                if (!r) return WGF_ERR_NOMEM;
                p->rows = r;
                p->cap  = cap;
            }
            memset(&p->rows[j], 0, sizeof p->rows[j]);
            snprintf(p->rows[j].label, sizeof p->rows[j].label, "%s", si->label);
            p->n++;
        }
        p->rows[j].dispatches++;
        p->rows[j].ns += pass_ns[k];
        p->rows[j].bytes += si->cost.bytes_read + si->cost.bytes_written;
        p->rows[j].flops += si->cost.flops;
        p->total_ns += pass_ns[k];
    }
    return WGF_OK;
}

void wgf_profile_free(struct wgf_profile *p)
{
    if (!p) return;
    free(p->rows);
    memset(p, 0, sizeof *p);
}
