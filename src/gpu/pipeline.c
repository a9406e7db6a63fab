/* wgfuse runtime — WGSL kernels and compute pipelines, with a per-context cache.
 *
 * A pipeline is keyed by everything that makes it distinct: its label, the const prelude,
 * the WGSL source, the entry point and the override constants. Asking twice returns the
 * same pipeline. The label is part of the key because it names the pipeline in Dawn's
 * errors and in timings: two roles that compile to the same code (matvec_attn_k and
 * matvec_attn_v on Qwen shapes) stay two pipelines, each under the name its caller gave. Compile errors come back as WGF_ERR_SHADER with the compiler's messages and
 * line:column positions in the kernel file (prelude lines are not counted). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/wraps.h"
#include "gpu/gpu_internal.h"
#include "gpu/kernels.h"

const char *wgf_kernel_source(const char *role)
{
    if (!role) return NULL;
    for (int i = 0; i < wgf_kernel_table_count; i++)
        if (!strcmp(wgf_kernel_table[i].name, role)) return wgf_kernel_table[i].source;
    return NULL;
}
int wgf_kernel_count(void) { return wgf_kernel_table_count; }
const char *wgf_kernel_name(int i) { return i >= 0 && i < wgf_kernel_table_count ? wgf_kernel_table[i].name : NULL; }

/* By id: the table is generated in id order, so entry k is kernel k (no lookup, and a role
 * that does not exist is a compile error at the caller). */
const char *wgf__kernel_wgsl(enum wgf_kernel k)
{
    WGF_ASSERT((unsigned)k < (unsigned)WGF_KERNEL_COUNT);
    return wgf_kernel_table[k].source;
}
const char *wgf__kernel_role(enum wgf_kernel k)
{
    WGF_ASSERT((unsigned)k < (unsigned)WGF_KERNEL_COUNT);
    return wgf_kernel_table[k].name;
}

static uint64_t fnv1a(const char *p, size_t n) { return wgf__fnv1a(p, n); }

/* key = label \0 prelude \0 source \0 entry \0 name=value;... */
static char *make_key(const struct wgf_pipeline_desc *d, size_t *len)
{
    const char *pre = d->prelude ? d->prelude : "", *entry = d->entry ? d->entry : "main";
    size_t cap = strlen(d->label) + strlen(pre) + strlen(d->wgsl) + strlen(entry) + 5;
    for (int i = 0; i < d->n_constants; i++) cap += strlen(d->constants[i].name) + 40;
    char *k = malloc(cap);
    if (!k) return NULL;
    size_t off = 0;
    off += (size_t)snprintf(k + off, cap - off, "%s", d->label) + 1;
    off += (size_t)snprintf(k + off, cap - off, "%s", pre) + 1;
    off += (size_t)snprintf(k + off, cap - off, "%s", d->wgsl) + 1;
    off += (size_t)snprintf(k + off, cap - off, "%s", entry) + 1;
    for (int i = 0; i < d->n_constants; i++)
        off += (size_t)snprintf(k + off, cap - off, "%s=%.17g;", d->constants[i].name, d->constants[i].value);
    *len = off;
    return k;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

struct info_req {
    atomic_bool done;
    char        text[WGF_ERR_MSG_MAX - 200];
    int         prelude_lines;
    const char *code;
};

/* Copy line `ln` (1-based) of `code` into out, trimmed. */
static void source_line(const char *code, uint64_t ln, char *out, size_t cap)
{
    const char *p = code;
    for (uint64_t i = 1; i < ln && p; i++) {
        p = strchr(p, '\n');
        if (p) p++;
    }
    out[0] = '\0';
    if (!p) return;
    while (*p == ' ' || *p == '\t') p++;
    size_t n = strcspn(p, "\n");
    if (n >= cap) n = cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

static void on_info(WGPUCompilationInfoRequestStatus st, const WGPUCompilationInfo *info, void *u1, void *u2)
{
    (void)u2;
    struct info_req *r = u1;
    size_t off = 0;
    if (st == WGPUCompilationInfoRequestStatus_Success && info && r->code) { /* code NULL: abandoned */
        for (size_t i = 0; i < info->messageCount && off < sizeof r->text - 1; i++) {
            const WGPUCompilationMessage *m = &info->messages[i];
            if (m->type != WGPUCompilationMessageType_Error) continue;
            size_t len = !m->message.data ? 0 : m->message.length == WGPU_STRLEN ? strlen(m->message.data)
                                                                                  : m->message.length;
            long line = (long)m->lineNum - r->prelude_lines;
            char src[96];
            source_line(r->code, m->lineNum, src, sizeof src);
            off += (size_t)snprintf(r->text + off, sizeof r->text - off, "%s%s %ld:%llu: %.*s [`%s`]", off ? " | " : "",
                                    line > 0 ? "line" : "prelude line", line > 0 ? line : (long)m->lineNum,
                                    (unsigned long long)m->linePos, (int)len, m->message.data ? m->message.data : "",
                                    src);
        }
    }
    atomic_store(&r->done, true);
}

static void pipeline_free(wgf_ctx *ctx, wgf_pipeline *p)
{
    if (!p) return;
    WGF_RELEASE(ctx, BindGroupLayout, p->layout);
    WGF_RELEASE(ctx, ComputePipeline, p->h);
    free(p->key);
    free(p);
}

enum wgf_status wgf_pipeline_get(wgf_ctx *ctx, const struct wgf_pipeline_desc *d, wgf_pipeline **out)
{
    *out = NULL;
    enum wgf_status s = wgf__check(ctx);
    if (s != WGF_OK) return s;
    if (!d || !d->wgsl || !d->label) return wgf__fail(ctx, WGF_ERR_ARG, "pipeline: label and WGSL source required");
    size_t klen;
    char *key = make_key(d, &klen);
    if (!key) return wgf__fail(ctx, WGF_ERR_NOMEM, "pipeline '%s': out of host memory", d->label);
    uint64_t h = fnv1a(key, klen);
    for (int i = 0; i < ctx->n_pipes; i++) {
        wgf_pipeline *p = ctx->pipes[i];
        if (p->key_hash == h && p->key_len == klen && !memcmp(p->key, key, klen)) {
            free(key);
            *out = p;
            return WGF_OK;
        }
    }
    if (ctx->n_pipes == ctx->cap_pipes) {
        int cap = ctx->cap_pipes ? ctx->cap_pipes * 2 : 16;
        wgf_pipeline **np = realloc(ctx->pipes, (size_t)cap * sizeof *np);
        if (!np) {
            free(key);
            return wgf__fail(ctx, WGF_ERR_NOMEM, "pipeline '%s': out of host memory", d->label);
        }
        ctx->pipes     = np;
        ctx->cap_pipes = cap;
    }
    wgf_pipeline *p = calloc(1, sizeof *p);
    if (!p) {
        free(key);
        return wgf__fail(ctx, WGF_ERR_NOMEM, "pipeline '%s': out of host memory", d->label);
    }
    p->key      = key;
    p->key_len  = klen;
    p->key_hash = h;
    snprintf(p->label, sizeof p->label, "%s", d->label);

    /* ---- shader module ---- */
    const char *pre = d->prelude ? d->prelude : "";
    size_t clen = strlen(pre) + strlen(d->wgsl) + 2;
    char *code = malloc(clen);
    if (!code) {
        pipeline_free(ctx, p);
        return wgf__fail(ctx, WGF_ERR_NOMEM, "pipeline '%s': out of host memory", d->label);
    }
    snprintf(code, clen, "%s%s%s", pre, *pre ? "\n" : "", d->wgsl);
    WGPUShaderSourceWGSL src;
    memset(&src, 0, sizeof src);
    src.chain.sType = WGPUSType_ShaderSourceWGSL;
    src.code        = wgf__sv(code);
    WGPUShaderModuleDescriptor md;
    memset(&md, 0, sizeof md);
    md.nextInChain = &src.chain;
    md.label       = wgf__sv(p->label);
    wgf__scope_push(ctx);
    WGPUShaderModule mod = ctx->p.DeviceCreateShaderModule(ctx->device, &md);
    ctx->n_shaders++;
    bool inject = ctx->fault.fail_shader && ctx->n_shaders == ctx->fault.fail_shader;
    if (inject && ctx->p.DeviceInjectError)
        ctx->p.DeviceInjectError(ctx->device, WGPUErrorType_Validation, wgf__sv("injected shader-creation fault"));
    char what[160];
    snprintf(what, sizeof what, "kernel '%s': WGSL compile", p->label);
    s = wgf__scope_pop(ctx, WGF_ERR_SHADER, what);
    if (s == WGF_OK && inject) s = wgf__fail(ctx, WGF_ERR_SHADER, "%s: injected fault", what);
    if (s != WGF_OK && s != WGF_ERR_DEVICE_LOST && mod && !inject) {
        /* the scope's message is Dawn's long form; the compilation info gives positions */
        struct info_req *r = wgf__req_new(sizeof *r);
        if (r) {
            atomic_init(&r->done, false);
            r->prelude_lines = *pre ? count_lines(pre) + 1 : 0;
            r->code          = code;
            WGPUCompilationInfoCallbackInfo cb = {NULL, WGPUCallbackMode_AllowProcessEvents, on_info, r, NULL};
            ctx->p.ShaderModuleGetCompilationInfo(mod, cb);
            if (wgf__wait_instance(ctx->instance, &ctx->p, &r->done, ctx->timeout_ns, "compilation info", NULL) == WGF_OK &&
                r->text[0])
                wgf__fail(ctx, WGF_ERR_SHADER, "kernel '%s': WGSL compile error: %s", p->label, r->text);
            if (!atomic_load(&r->done)) r->code = NULL; /* `code` is freed below */
            wgf__req_end(&ctx->parked, r, atomic_load(&r->done));
        }
    }
    free(code);
    if (s != WGF_OK) {
        WGF_RELEASE(ctx, ShaderModule, mod);
        pipeline_free(ctx, p);
        return ctx->err.status;
    }

    /* ---- pipeline ---- */
    WGPUConstantEntry ce[32];
    if (d->n_constants > 32) {
        WGF_RELEASE(ctx, ShaderModule, mod);
        pipeline_free(ctx, p);
        return wgf__fail(ctx, WGF_ERR_ARG, "kernel '%s': more than 32 override constants", d->label);
    }
    for (int i = 0; i < d->n_constants; i++) {
        memset(&ce[i], 0, sizeof ce[i]);
        ce[i].key   = wgf__sv(d->constants[i].name);
        ce[i].value = d->constants[i].value;
    }
    WGPUComputePipelineDescriptor pd;
    memset(&pd, 0, sizeof pd);
    pd.label                 = wgf__sv(p->label);
    pd.compute.module        = mod;
    pd.compute.entryPoint    = wgf__sv(d->entry ? d->entry : "main");
    pd.compute.constantCount = (size_t)d->n_constants;
    pd.compute.constants     = d->n_constants ? ce : NULL;
    wgf__scope_push(ctx);
    p->h = ctx->p.DeviceCreateComputePipeline(ctx->device, &pd);
    ctx->n_pipelines++;
    inject = ctx->fault.fail_pipeline && ctx->n_pipelines == ctx->fault.fail_pipeline;
    if (inject && ctx->p.DeviceInjectError)
        ctx->p.DeviceInjectError(ctx->device, WGPUErrorType_Validation, wgf__sv("injected pipeline-creation fault"));
    snprintf(what, sizeof what, "kernel '%s': pipeline creation", p->label);
    s = wgf__scope_pop(ctx, WGF_ERR_SHADER, what);
    if (s == WGF_OK && inject) s = wgf__fail(ctx, WGF_ERR_SHADER, "%s: injected fault", what);
    WGF_RELEASE(ctx, ShaderModule, mod);
    if (s == WGF_OK) {
        p->layout = ctx->p.ComputePipelineGetBindGroupLayout(p->h, 0);
        if (!p->layout) s = wgf__fail(ctx, WGF_ERR_SHADER, "kernel '%s': no bind group 0", p->label);
    }
    if (s != WGF_OK) {
        pipeline_free(ctx, p);
        return s;
    }
    ctx->pipes[ctx->n_pipes++] = p;
    *out = p;
    return WGF_OK;
}

enum wgf_status wgf__pipeline_for(wgf_ctx *ctx, enum wgf_kernel k, wgf_pipeline **out)
{
    struct wgf_pipeline_desc d = {wgf__kernel_role(k), wgf__kernel_wgsl(k), NULL, "main", NULL, 0};
    return wgf_pipeline_get(ctx, &d, out);
}

enum wgf_status wgf_pipeline_for_kernel(wgf_ctx *ctx, const char *role, wgf_pipeline **out)
{
    const char *src = wgf_kernel_source(role);
    if (!src) return wgf__fail(ctx, WGF_ERR_ARG, "no embedded kernel named '%s' (src/kernels/<part>/%s.wgsl)", role, role);
    struct wgf_pipeline_desc d = {role, src, NULL, "main", NULL, 0};
    return wgf_pipeline_get(ctx, &d, out);
}

const char *wgf_pipeline_label(const wgf_pipeline *p) { return p->label; }
int wgf_ctx_pipeline_cache_size(const wgf_ctx *ctx) { return ctx->n_pipes; }
