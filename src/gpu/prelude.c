/* wgfuse runtime — const preludes, the subgroup probe and the matvec configuration.
 *
 * The prelude is the one place a kernel's numbers come from (STYLE.md rule 4): each constant
 * is rendered with a comment saying where it comes from, so a shader compiled for a model
 * can be read (WGFUSE_DUMP_WGSL is not needed: the compile error shows prelude lines). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_internal.h"

static void pre_printf(struct wgf_prelude *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void pre_printf(struct wgf_prelude *p, const char *fmt, ...)
{
    if (p->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = p->cap - p->len;
        int    n    = p->s ? vsnprintf(p->s + p->len, room, fmt, ap) : -1;
        va_end(ap);
        if (n >= 0 && (size_t)n < room) {
            p->len += (size_t)n;
            return;
        }
        size_t cap = p->cap ? 2 * p->cap : 4096;
        while (n >= 0 && cap < p->len + (size_t)n + 1) cap *= 2;
        char *s = realloc(p->s, cap);
        if (!s) {
            p->oom = true;
            return;
        }
        p->s   = s;
        p->cap = cap;
    }
}

void wgf_prelude_text(struct wgf_prelude *p, const char *text) { pre_printf(p, "%s\n", text); }

void wgf_prelude_u32(struct wgf_prelude *p, const char *name, uint64_t v, const char *why)
{
    if (v > UINT32_MAX) v = UINT32_MAX; /* callers check their ranges; never wrap silently */
    pre_printf(p, "const %s: u32 = %lluu;%s%s\n", name, (unsigned long long)v, why ? " // " : "", why ? why : "");
}

void wgf_prelude_f32(struct wgf_prelude *p, const char *name, float v, const char *why)
{
    /* %.9g round-trips every f32 */
    char num[48];
    snprintf(num, sizeof num, "%.9g", (double)v);
    bool has_dot = strpbrk(num, ".eE") != NULL;
    pre_printf(p, "const %s: f32 = %s%s;%s%s\n", name, num, has_dot ? "" : ".0", why ? " // " : "", why ? why : "");
}

void wgf_prelude_bool(struct wgf_prelude *p, const char *name, bool v, const char *why)
{
    pre_printf(p, "const %s: bool = %s;%s%s\n", name, v ? "true" : "false", why ? " // " : "", why ? why : "");
}

enum wgf_status wgf_prelude_fragment(struct wgf_prelude *p, const char *name)
{
    const char *src = wgf_kernel_source(name);
    if (!src) return WGF_ERR_INTERNAL;
    pre_printf(p, "%s\n", src);
    return WGF_OK;
}

/* ---- a second instance of a text in one module ----------------------------------------- */

static bool id_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static bool id_char(char c) { return id_start(c) || (c >= '0' && c <= '9'); }

/* length of the comment at s (0: none); WGSL block comments nest */
static size_t comment_len(const char *s)
{
    if (s[0] == '/' && s[1] == '/') return strcspn(s, "\n");
    if (s[0] != '/' || s[1] != '*') return 0;
    size_t i = 2, depth = 1;
    while (s[i] && depth) {
        if (s[i] == '/' && s[i + 1] == '*') depth++, i += 2;
        else if (s[i] == '*' && s[i + 1] == '/') depth--, i += 2;
        else i++;
    }
    return i;
}

struct names {
    char  **v;
    size_t  n, cap;
    bool    oom;
};

static bool names_has(const struct names *ns, const char *s, size_t len)
{
    for (size_t i = 0; i < ns->n; i++)
        if (strlen(ns->v[i]) == len && !memcmp(ns->v[i], s, len)) return true;
    return false;
}

static void names_add(struct names *ns, const char *s, size_t len)
{
    if (ns->oom || names_has(ns, s, len)) return;
    if (ns->n == ns->cap) {
        size_t cap = ns->cap ? 2 * ns->cap : 64;
        char **v   = realloc(ns->v, cap * sizeof *v);
        if (!v) {
            ns->oom = true;
            return;
        }
        ns->v = v, ns->cap = cap;
    }
    char *c = malloc(len + 1);
    if (!c) {
        ns->oom = true;
        return;
    }
    memcpy(c, s, len), c[len] = 0;
    ns->v[ns->n++] = c;
}

enum tok { TOK_COMMENT, TOK_ID, TOK_CHAR };

/* the token at s (a comment, an identifier, else one character) and its length */
static enum tok token(const char *s, size_t *len)
{
    size_t n = comment_len(s);
    if (n) {
        *len = n;
        return TOK_COMMENT;
    }
    if (!id_start(*s)) {
        *len = 1;
        return TOK_CHAR;
    }
    while (id_char(s[n])) n++;
    *len = n;
    return TOK_ID;
}

static bool is_word(const char *s, size_t len, const char *w) { return strlen(w) == len && !memcmp(s, w, len); }

void wgf_prelude_instance(struct wgf_prelude *p, const char *text, const char *suffix)
{
    /* pass 1: the names text declares at module scope (brace depth 0) */
    static const char *const kw[] = {"fn", "const", "override", "struct", "alias", "var"};
    struct names             ns    = {0};
    int                      depth = 0;
    const char              *decl  = NULL; /* the keyword whose name comes next */
    size_t                   len;
    for (const char *s = text; *s; s += len) {
        enum tok t = token(s, &len);
        if (t == TOK_ID && decl) {
            names_add(&ns, s, len);
            decl = NULL;
        } else if (t == TOK_ID && depth == 0) {
            for (size_t k = 0; k < sizeof kw / sizeof kw[0]; k++)
                if (is_word(s, len, kw[k])) decl = kw[k];
        } else if (t == TOK_CHAR && *s == '<' && decl && !strcmp(decl, "var")) { /* var<workgroup> name */
            len = strcspn(s, ">") + (s[strcspn(s, ">")] ? 1 : 0);
        } else if (t == TOK_CHAR) {
            depth += *s == '{' ? 1 : *s == '}' ? -1 : 0;
        }
    }
    /* pass 2: the text with those names suffixed (not after '.': a member or a swizzle), its
     * directives (enable ...;) dropped, being the first instance's */
    char prev = 0;
    depth     = 0;
    for (const char *s = text; *s && !ns.oom && !p->oom; s += len) {
        enum tok t = token(s, &len);
        if (t == TOK_ID && depth == 0 && (is_word(s, len, "enable") || is_word(s, len, "requires"))) {
            len = strcspn(s, ";") + (s[strcspn(s, ";")] ? 1 : 0);
            continue;
        }
        bool rn = t == TOK_ID && prev != '.' && names_has(&ns, s, len);
        pre_printf(p, "%.*s%s", (int)len, s, rn ? suffix : "");
        if (t == TOK_ID) prev = 'a';
        else if (t == TOK_CHAR) {
            depth += *s == '{' ? 1 : *s == '}' ? -1 : 0;
            if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') prev = *s;
        }
    }
    if (ns.oom) p->oom = true;
    for (size_t i = 0; i < ns.n; i++) free(ns.v[i]);
    free(ns.v);
    pre_printf(p, "\n");
}

enum wgf_status wgf_prelude_status(const struct wgf_prelude *p) { return p->oom ? WGF_ERR_NOMEM : WGF_OK; }

void wgf_prelude_free(struct wgf_prelude *p)
{
    if (!p) return;
    free(p->s);
    memset(p, 0, sizeof *p);
}

/* ---- subgroup probe --------------------------------------------------------------------- */

enum wgf_status wgf_ctx_subgroup_size(wgf_ctx *ctx, uint32_t *sgs)
{
    *sgs = 0;
    if (ctx->sg_probed) {
        *sgs = ctx->sg_size;
        return WGF_OK;
    }
    enum wgf_status s = wgf__check(ctx);
    if (s != WGF_OK) return s;
    ctx->sg_size = 0;
    if (!ctx->desc.has_subgroups) {
        ctx->sg_probed = true;
        return WGF_OK;
    }
    const char *src = wgf_kernel_source("subgroup_probe");
    if (!src) return wgf__fail(ctx, WGF_ERR_INTERNAL, "kernel 'subgroup_probe' is not embedded");
    struct wgf_pipeline_desc d  = {.label = "subgroup_probe", .wgsl = src};
    wgf_pipeline            *pl = NULL;
    wgf_buffer              *b  = NULL;
    wgf_bind_group          *bg = NULL;
    uint32_t                 out[512];
    if ((s = wgf_pipeline_get(ctx, &d, &pl)) || (s = wgf_buffer_create(ctx, "subgroup_probe.out", sizeof out,
                                                                         WGF_BUF_STORAGE, &b)) ||
        (s = wgf_bind_group_create(ctx, pl, &b, 1, &bg)) || (s = wgf_dispatch_once(ctx, pl, bg, 1, 1, 1)) ||
        (s = wgf_buffer_read(ctx, b, 0, out, sizeof out))) {
        wgf_bind_group_free(bg);
        wgf_buffer_free(b);
        /* a kernel the device refuses: the fallback, for good; out of memory, a lost device or
         * a timeout: the caller's error (the probe runs again next time) */
        if (s == WGF_ERR_SHADER || s == WGF_ERR_GPU) {
            ctx->sg_probed = true;
            return WGF_OK;
        }
        return s;
    }
    wgf_bind_group_free(bg);
    wgf_buffer_free(b);
    ctx->sg_probed = true;
    uint32_t size  = out[0];
    bool     ok   = size >= 4 && size <= 64 && !(size & (size - 1));
    for (uint32_t i = 0; i < 256 && ok; i++) ok = out[2 * i] == size && out[2 * i + 1] == i % size;
    ctx->sg_size = ok ? size : 0;
    *sgs         = ctx->sg_size;
    return WGF_OK;
}

/* ---- matvec configuration --------------------------------------------------------------- */

struct wgf_matvec_cfg wgf_matvec_cfg_pick(uint32_t kc, uint32_t rpg, uint32_t max_loads, uint32_t tpr)
{
    struct wgf_matvec_cfg c;
    c.rpg = rpg < 1 ? 1 : rpg > 4 ? 4 : rpg;
    if (max_loads == 0) max_loads = 8;
    uint32_t max_nit = max_loads / c.rpg ? max_loads / c.rpg : 1;
    if (kc == 0) kc = 1;
    if (tpr) {
        c.tpr = 8;
        while (c.tpr < tpr && c.tpr < 256) c.tpr *= 2;
    } else {
        c.tpr = 8;
        while (c.tpr < 256 && (kc + c.tpr - 1) / c.tpr > max_nit) c.tpr *= 2;
    }
    c.gpw = 256 / c.tpr;
    c.nit = (kc + c.tpr - 1) / c.tpr;
    return c;
}

enum wgf_status wgf_matvec_prelude(struct wgf_prelude *p, struct wgf_matvec_cfg cfg, uint32_t sgs, bool wf16)
{
    wgf_prelude_u32(p, "WG", cfg.gpw * cfg.tpr, "invocations per workgroup = GPW * TPR");
    wgf_prelude_u32(p, "TPR", cfg.tpr, "invocations sharing one weight row (wgf_matvec_cfg_pick)");
    wgf_prelude_u32(p, "GPW", cfg.gpw, "row groups per workgroup (256 / TPR unless the caller set more)");
    wgf_prelude_u32(p, "RPG", cfg.rpg, "rows per row group (each x chunk serves them all)");
    wgf_prelude_u32(p, "NIT", cfg.nit, "16-byte chunks each invocation loads per row = ceil(KC / TPR)");
    wgf_prelude_u32(p, "SGS", sgs ? sgs : 1, sgs ? "subgroup size (probe)" : "no subgroups: lib_reduce_wg");
    wgf_prelude_bool(p, "WF16", wf16, wf16 ? "weights: f16 pairs packed in u32" : "weights: f32");
    wgf_prelude_u32(p, "EPC", wf16 ? 8 : 4, "weight elements per 16-byte chunk");
    enum wgf_status s = wgf_prelude_fragment(p, sgs ? "lib_reduce_sg" : "lib_reduce_wg");
    if (!s) s = wgf_prelude_fragment(p, "lib_wchunk");
    return s ? s : wgf_prelude_status(p);
}
