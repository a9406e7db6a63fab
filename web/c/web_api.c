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
#include "wgfuse/llm.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/sim.h"
#include "wgfuse/tokenizer.h"

#define WGFW_EXPORT(name) __attribute__((export_name(#name)))
#define WGFW_SIMS 2

struct wgfw_run {
    wgf_sim  *sim;
    float    *fit;
    long      gen;
    uint64_t  ns;          /* time in generations (GPU work + readback), summed            */
};

/* the page's side of a generation: text as it streams, and a pause between tokens so the
 * page paints (web/wgfuse.js, import module "wgfw"; yield suspends through JSPI) */
__attribute__((import_module("wgfw"), import_name("text"))) void wgfw_host_text(const char *text, size_t len);
__attribute__((import_module("wgfw"), import_name("yield"))) void wgfw_host_yield(void);

/* the host state (like the CLI's): one page, one thread */
static struct {
    wgf_ctx        *ctx;
    struct wgfw_run run[WGFW_SIMS];
    struct wgf_llm_model *model;
    struct wgf_tokenizer *tok;
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

/* ---- text generation ---------------------------------------------------------------------- */

static void llm_close(void)
{
    wgf_tokenizer_free(H.tok);
    wgf_llm_model_free(H.model);
    H.tok   = NULL;
    H.model = NULL;
}

/* Load a model the page mounted (web/wgfuse.js mount(): a HF directory or a .gguf file). */
WGFW_EXPORT(wgfw_llm_load)
const char *wgfw_llm_load(const char *path)
{
    llm_close();
    struct wgf_err err = {0};
    if (wgf_llm_model_load(path, &H.model, &err) != WGF_OK || wgf_llm_tokenizer_load(H.model, &H.tok, &err) != WGF_OK) {
        llm_close();
        return fail(err.msg);
    }
    if (!H.tok) {
        llm_close();
        return fail("the model has no tokenizer (tokenizer.json / tokenizer.ggml.*)");
    }
    const struct wgf_llm_config *c = &H.model->cfg;
    return reply("{\"arch\":\"%s\",\"layers\":%d,\"dim\":%d,\"heads\":%d,\"kv_heads\":%d,\"vocab\":%d,\"ctx\":%d,"
                 "\"dtype\":\"%s\",\"tokenizer_vocab\":%zu}",
                 wgf_arch_str(c->arch), c->n_layers, c->dim, c->n_heads, c->n_kv_heads, c->vocab_size, c->max_seq_len,
                 c->source_dtype, wgf_tokenizer_vocab_size(H.tok));
}

struct gen_ids {
    int32_t *v;
    size_t   n, cap;
    float   *logits;     /* keep_logits: every row as evaluated (n_rows * n_vocab)            */
    size_t   n_rows, rows_cap;
    uint32_t n_vocab;
};

static int on_logits(void *user, const float *logits, uint32_t n, uint32_t n_vocab)
{
    struct gen_ids *g = user;
    if (g->n_rows + n > g->rows_cap) {
        size_t cap = 2 * (g->n_rows + n);
        float *p   = realloc(g->logits, cap * n_vocab * sizeof *p);
        if (!p) return 1;
        g->logits = p, g->rows_cap = cap;
    }
    memcpy(g->logits + g->n_rows * n_vocab, logits, (size_t)n * n_vocab * sizeof *logits);
    g->n_rows += n, g->n_vocab = n_vocab;
    return 0;
}

static int on_token(void *user, int32_t id)
{
    struct gen_ids *g = user;
    if (g->n == g->cap) {
        size_t   cap = g->cap ? 2 * g->cap : 64;
        int32_t *v   = realloc(g->v, cap * sizeof *v);
        if (!v) return 1;
        g->v = v, g->cap = cap;
    }
    g->v[g->n++] = id;
    wgfw_host_yield();
    return 0;
}

static int on_text(void *user, const char *text, size_t len)
{
    (void)user;
    wgfw_host_text(text, len);
    return 0;
}

/* append "[a,b,...]" of n ids to buf at *o */
static void ids_json(char *buf, size_t cap, size_t *o, const int32_t *v, size_t n)
{
    *o += (size_t)snprintf(buf + *o, cap - *o, "[");
    for (size_t i = 0; i < n && *o + 16 < cap; i++) *o += (size_t)snprintf(buf + *o, cap - *o, "%s%d", i ? "," : "", (int)v[i]);
    if (*o + 2 < cap) *o += (size_t)snprintf(buf + *o, cap - *o, "]");
}

/* Greedy generation of up to n tokens from the raw prompt (BOS added when the tokenizer
 * wants one; no chat template): `wgfuse run -m M --no-template --temp 0 -p P -n N`.
 * backend "cpu-ref" or "gpu" (the roles plan, on the page's device). Text streams through
 * wgfw.text as it comes. keep_logits: the reply also holds every logits row as evaluated
 * (each prompt token's, then one per decode step, as `wgfuse run --logits-out`; for small
 * models: the test compares them with cpu-ref's), refused above 1M floats. */
WGFW_EXPORT(wgfw_llm_generate)
const char *wgfw_llm_generate(const char *backend, const char *prompt, uint32_t n, int keep_logits)
{
    if (!H.model) return fail("no model loaded");
    const struct wgf_llm_backend *proto = wgf_llm_backend_find(backend, NULL);
    if (!proto) return fail("unknown backend (cpu-ref or gpu)");
    bool gpu = strcmp(backend, "cpu-ref") != 0;
    if (gpu && !H.ctx) return fail("no GPU context");
    if (n < 1 || n > 65536) return fail("tokens to generate: 1..65536");
    if (keep_logits && (uint64_t)H.model->cfg.vocab_size * (n + strlen(prompt) + 1) > (1u << 20))
        return fail("keep_logits: more than 1M floats");
    struct wgf_err         err = {0};
    int32_t               *ids = NULL;
    size_t                 n_ids = 0;
    struct wgf_llm_backend be  = {0};
    struct wgf_sampler     smp = {0};
    struct gen_ids         out = {0};
    const char            *r   = NULL;
    const struct wgf_llm_config *c = &H.model->cfg;
    if (wgf_tokenizer_encode_ex(H.tok, prompt, strlen(prompt), WGF_TOK_ADD_BOS, &ids, &n_ids, &err) != WGF_OK) goto fail;
    if (n_ids == 0) {
        wgf_fail(&err, WGF_ERR_ARG, "empty prompt (the tokenizer adds no BOS)");
        goto fail;
    }
    uint32_t n_ctx = c->max_seq_len > 0 && c->max_seq_len < 4096 ? (uint32_t)c->max_seq_len : 4096;
    if (n_ids > n_ctx) {
        wgf_fail(&err, WGF_ERR_CONTEXT, "prompt of %zu tokens > ctx %u", n_ids, n_ctx);
        goto fail;
    }
    struct wgf_llm_backend_options bo = {.n_ctx = n_ctx, .n_threads = 1, .gpu = gpu ? H.ctx : NULL};
    if (wgf_llm_backend_open(&be, proto, H.model, &bo, &err) != WGF_OK) goto fail;
    struct wgf_sampler_params sp = wgf_sampler_params_default();
    sp.temperature               = 0;
    if (wgf_sampler_init(&smp, &sp, be.n_vocab, &err) != WGF_OK) goto fail;
    struct wgf_gen_params gp = wgf_gen_params_default();
    gp.max_tokens            = n;
    gp.all_logits            = keep_logits != 0; /* every prompt row too, as --logits-out */
    for (int i = 0; i < c->n_eos && i < WGF_GEN_MAX_EOS; i++) gp.eos_ids[i] = c->eos_ids[i];
    struct wgf_gen_callbacks cb = {.user = &out, .on_token = on_token, .on_text = on_text,
                                   .on_logits = keep_logits ? on_logits : NULL};
    struct wgf_gen_stats     st;
    if (wgf_generate(&be, H.tok, &smp, &gp, ids, (uint32_t)n_ids, &cb, &st, &err) != WGF_OK) goto fail;
    {
        size_t cap = 256 + 12 * (n_ids + out.n) + 18 * out.n_rows * out.n_vocab, o = 0;
        char  *buf = malloc(cap);
        if (!buf) {
            wgf_fail(&err, WGF_ERR_NOMEM, "out of memory for the reply");
            goto fail;
        }
        o += (size_t)snprintf(buf, cap, "{\"backend\":\"%s\",\"prompt_ids\":", be.name);
        ids_json(buf, cap, &o, ids, n_ids);
        o += (size_t)snprintf(buf + o, cap - o, ",\"ids\":");
        ids_json(buf, cap, &o, out.v, out.n);
        if (out.n_rows) {
            o += (size_t)snprintf(buf + o, cap - o, ",\"n_vocab\":%u,\"logits\":[", out.n_vocab);
            for (size_t i = 0; i < out.n_rows * out.n_vocab && o + 20 < cap; i++)
                o += (size_t)snprintf(buf + o, cap - o, "%s%.9g", i ? "," : "", (double)out.logits[i]);
            o += (size_t)snprintf(buf + o, cap - o, "]");
        }
        snprintf(buf + o, cap - o, ",\"n_prompt\":%u,\"n_generated\":%u,\"prefill_tok_s\":%.4g,\"decode_tok_s\":%.4g,"
                                   "\"ttft_s\":%.4g,\"stop\":\"%s\"}",
                 st.n_prompt, st.n_generated, st.prefill_tok_s, st.decode_tok_s, st.ttft_s,
                 st.stop_reason ? st.stop_reason : "-");
        r = reply("%s", buf);
        free(buf);
    }
    goto done;
fail:
    r = fail(err.msg);
done:
    free(ids);
    free(out.v);
    free(out.logits);
    wgf_sampler_free(&smp);
    wgf_llm_backend_close(&be);
    return r;
}
