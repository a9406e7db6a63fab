/* wgfuse web — what the page calls: the entry points of wgfuse.wasm (a reactor module).
 *
 * This file plays the CLI's role for the browser: it owns the host state (the context, the
 * simulations the page shows, the reply text) and turns library results into JSON for
 * web/app.js. Every export that may wait on the GPU is called through
 * WebAssembly.promising by web/wgfuse.js (its waits suspend in wgpuInstanceProcessEvents);
 * the page never calls two of them at once. A reply is a NUL-terminated JSON text in
 * memory the host reads before its next call; failures reply {"error": "..."}. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_trace.h"
#include "wgfuse/bench.h"
#include "wgfuse/gpu.h"
#include "wgfuse/sim.h"

#define WGFW_EXPORT(name) __attribute__((export_name(#name)))
#define WGFW_SIMS 2

struct wgfw_run {
    wgf_sim  *sim;
    float    *fit;
    long      gen;
    uint64_t  ns;          /* time in generations (GPU work + readback), summed            */
};

/* the host state (like the CLI's): one page, one thread */
static struct {
    wgf_ctx        *ctx;
    struct wgfw_run run[WGFW_SIMS];
    char           *reply;
    size_t          cap;
} H;

static const char *reply(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(H.reply, H.cap, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n >= H.cap) {
        size_t cap = (size_t)n + 1024;
        char  *p   = realloc(H.reply, cap);
        if (!p) return "{\"error\":\"out of memory for the reply\"}";
        H.reply = p, H.cap = cap;
        va_start(ap, fmt);
        vsnprintf(H.reply, H.cap, fmt, ap);
        va_end(ap);
    }
    return H.reply ? H.reply : "{\"error\":\"out of memory for the reply\"}";
}

/* JSON string body: quotes, backslashes and control characters escaped */
static const char *jesc(const char *s, char *buf, size_t cap)
{
    size_t o = 0;
    for (; *s && o + 7 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') buf[o++] = '\\', buf[o++] = (char)c;
        else if (c < 0x20) o += (size_t)snprintf(buf + o, cap - o, "\\u%04x", c);
        else buf[o++] = (char)c;
    }
    buf[o] = '\0';
    return buf;
}

static const char *fail(const char *msg)
{
    char e[1024];
    return reply("{\"error\":\"%s\"}", jesc(msg, e, sizeof e));
}

WGFW_EXPORT(wgfw_malloc) void *wgfw_malloc(size_t n) { return malloc(n); }
WGFW_EXPORT(wgfw_free) void wgfw_free(void *p) { free(p); }

/* Open the context on the browser's adapter; {"ok":true} or {"error":...}. */
WGFW_EXPORT(wgfw_open)
const char *wgfw_open(void)
{
    if (H.ctx) return reply("{\"ok\":true}");
    struct wgf_gpu_options o = wgf_gpu_options_default();
    struct wgf_err         err = {0};
    if (wgf_ctx_create(&o, &H.ctx, &err) != WGF_OK) return fail(err.msg);
    return reply("{\"ok\":true}");
}

WGFW_EXPORT(wgfw_device)
const char *wgfw_device(void)
{
    if (!H.ctx) return fail("no GPU context (wgfw_open first)");
    const struct wgf_adapter_desc *d = wgf_ctx_adapter(H.ctx);
    const struct wgf_limits       *l = wgf_ctx_limits(H.ctx);
    char feats[2048], nb[16], e1[512], e2[512], e3[300], e4[300];
    size_t o = 0;
    feats[0] = '\0';
    for (int i = 0; i < d->n_features && o + 64 < sizeof feats; i++)
        o += (size_t)snprintf(feats + o, sizeof feats - o, "%s\"%s\"", i ? "," : "", wgf_feature_name(d->features[i], nb));
    return reply("{\"name\":\"%s\",\"driver\":\"%s\",\"vendor\":\"%s\",\"architecture\":\"%s\",\"backend\":\"%s\","
                 "\"type\":\"%s\",\"subgroup_min\":%u,\"subgroup_max\":%u,\"f16\":%s,\"subgroups\":%s,"
                 "\"timestamp\":%s,\"features\":[%s],\"limits\":{\"maxBufferSize\":%llu,"
                 "\"maxStorageBufferBindingSize\":%llu,\"maxStorageBuffersPerShaderStage\":%u,"
                 "\"maxComputeWorkgroupStorageSize\":%u,\"maxComputeInvocationsPerWorkgroup\":%u,"
                 "\"maxComputeWorkgroupsPerDimension\":%u}}",
                 jesc(d->name, e1, sizeof e1), jesc(d->driver, e2, sizeof e2), jesc(d->vendor, e3, sizeof e3),
                 jesc(d->architecture, e4, sizeof e4), d->backend, d->type, d->subgroup_min_size,
                 d->subgroup_max_size, d->has_f16 ? "true" : "false", d->has_subgroups ? "true" : "false",
                 d->has_timestamp ? "true" : "false", feats, (unsigned long long)l->max_buffer_size,
                 (unsigned long long)l->max_storage_buffer_binding_size, l->max_storage_buffers_per_shader_stage,
                 l->max_compute_workgroup_storage_size, l->max_compute_invocations_per_workgroup,
                 l->max_compute_workgroups_per_dimension);
}

/* `wgfuse report`'s self-check: the saxpy kernel at n against C. */
WGFW_EXPORT(wgfw_selfcheck)
const char *wgfw_selfcheck(uint32_t n, uint32_t seed)
{
    if (!H.ctx) return fail("no GPU context");
    double   maxerr = 0;
    uint64_t t0     = wgf_now_ns();
    if (wgf_gpu_selfcheck(H.ctx, n, seed, &maxerr) != WGF_OK) return fail(wgf_ctx_last_error(H.ctx));
    return reply("{\"n\":%u,\"max_abs_err\":%.3g,\"ms\":%.2f,\"pass\":true}", n, maxerr,
                 (double)(wgf_now_ns() - t0) * 1e-6);
}

static int append_mode(char *buf, size_t cap, const char *name, const struct wgf_dispatch_mode_result *r)
{
    int o = snprintf(buf, cap, "\"%s\":{\"per_dispatch_us\":%.4g,\"ci_lo\":%.4g,\"ci_hi\":%.4g,\"r2\":%.4f,"
                               "\"single_op_us\":%.4g,\"ns\":[", name, r->per_dispatch_us.median,
                     r->per_dispatch_us.ci_lo, r->per_dispatch_us.ci_hi, r->fit.r2, r->single_op_us.median);
    for (int i = 0; i < r->n_points && o > 0 && (size_t)o < cap; i++)
        o += snprintf(buf + o, cap - (size_t)o, "%s%d", i ? "," : "", r->ns[i]);
    if (o > 0 && (size_t)o < cap) o += snprintf(buf + o, cap - (size_t)o, "],\"t_us\":[");
    for (int i = 0; i < r->n_points && o > 0 && (size_t)o < cap; i++)
        o += snprintf(buf + o, cap - (size_t)o, "%s%.4g", i ? "," : "", r->t_us[i]);
    if (o > 0 && (size_t)o < cap) o += snprintf(buf + o, cap - (size_t)o, "]}");
    return o;
}

/* Dispatch overhead by the sequential method (`wgfuse bench dispatch --quick`'s one_pass:
 * N dispatches in one pass, one submit, one wait; cost = slope over N), and single-op
 * (wait_each: submit and wait per dispatch). */
WGFW_EXPORT(wgfw_dispatch)
const char *wgfw_dispatch(int quick)
{
    if (!H.ctx) return fail("no GPU context");
    struct wgf_dispatch_opts        o = wgf_dispatch_opts_default(quick != 0);
    struct wgf_dispatch_mode_result seq, one;
    struct wgf_err                  err = {0};
    memset(&seq, 0, sizeof seq), memset(&one, 0, sizeof one);
    if (wgf_bench_dispatch_cost(H.ctx, &o, WGF_MODE_ONE_PASS, &seq, &err) != WGF_OK ||
        wgf_bench_dispatch_cost(H.ctx, &o, WGF_MODE_WAIT_EACH, &one, &err) != WGF_OK)
        return fail(err.msg);
    char a[1024], b[1024];
    append_mode(a, sizeof a, "one_pass", &seq);
    append_mode(b, sizeof b, "wait_each", &one);
    return reply("{\"reps\":%d,%s,%s,\"single_over_sequential\":%.4g}", o.reps, a, b,
                 one.single_op_us.median / seq.per_dispatch_us.median);
}

static void run_close(struct wgfw_run *r)
{
    wgf_sim_free(r->sim);
    free(r->fit);
    memset(r, 0, sizeof *r);
}

/* A CartPole GA run in slot 0|1 (the page shows fused and per-step side by side). */
WGFW_EXPORT(wgfw_sim_open)
const char *wgfw_sim_open(int slot, const char *strategy, int pop, uint32_t seed)
{
    if (!H.ctx) return fail("no GPU context");
    if (slot < 0 || slot >= WGFW_SIMS) return fail("sim slot out of range");
    if (pop < 2 || pop > 1000000) return fail("population must be 2..1000000");
    struct wgf_err        err = {0};
    enum wgf_sim_strategy st;
    int                   chunk = 0;
    if (wgf_sim_strategy_parse(strategy, &st, &chunk, &err) != WGF_OK) return fail(err.msg);
    run_close(&H.run[slot]);
    struct wgf_sim_config c = wgfw_train_config(WGF_SIM_CARTPOLE, pop, seed, st);
    c.chunk                 = chunk;
    struct wgfw_run *r      = &H.run[slot];
    if (wgf_sim_create(H.ctx, &c, &r->sim, &err) != WGF_OK) return fail(err.msg);
    if (!(r->fit = malloc((size_t)pop * sizeof *r->fit))) {
        run_close(r);
        return fail("out of memory for the fitness");
    }
    struct wgf_sim_policy p = wgf_sim_policy_of(r->sim);
    return reply("{\"slot\":%d,\"strategy\":\"%s\",\"pop\":%d,\"seed\":%u,\"policy\":\"%d-%d-%d\",\"params\":%d,"
                 "\"steps\":%d,\"dispatches_per_gen\":%d}",
                 slot, wgf_sim_strategy_name(st), pop, seed, p.n_in, p.n_hidden, p.n_out, wgf_sim_n_params(r->sim),
                 wgf_sim_config_of(r->sim)->max_steps, wgf_sim_dispatches_per_generation(r->sim));
}

/* One generation with its fitness readback, as `wgfuse sim train` prints it. */
WGFW_EXPORT(wgfw_sim_step)
const char *wgfw_sim_step(int slot)
{
    if (slot < 0 || slot >= WGFW_SIMS || !H.run[slot].sim) return fail("no simulation in this slot");
    struct wgfw_run *r   = &H.run[slot];
    struct wgfw_gen  g   = {.gen = r->gen};
    struct wgf_err   err = {0};
    uint64_t         t0  = wgf_now_ns();
    if (wgfw_train_generation(r->sim, r->fit, &g, &err) != WGF_OK) return fail(err.msg);
    r->ns += wgf_now_ns() - t0;
    r->gen++;
    char line[128];
    wgfw_gen_line(&g, line, sizeof line);
    return reply("{\"gen\":%ld,\"best\":%.9g,\"mean\":%.9g,\"line\":\"%s\",\"gen_per_s\":%.4g}", g.gen, g.best, g.mean,
                 line, (double)r->gen / ((double)r->ns * 1e-9));
}

WGFW_EXPORT(wgfw_sim_hash)
const char *wgfw_sim_hash(int slot)
{
    if (slot < 0 || slot >= WGFW_SIMS || !H.run[slot].sim) return fail("no simulation in this slot");
    uint64_t       h   = 0;
    struct wgf_err err = {0};
    if (wgfw_population_hash(H.run[slot].sim, &h, &err) != WGF_OK) return fail(err.msg);
    return reply("{\"population_hash\":\"%016llx\",\"gens\":%ld}", (unsigned long long)h, H.run[slot].gen);
}

WGFW_EXPORT(wgfw_sim_close)
void wgfw_sim_close(int slot)
{
    if (slot >= 0 && slot < WGFW_SIMS) run_close(&H.run[slot]);
}
