/* wgfuse — the Jinja evaluator: runs the AST over the variables, writing the output and its
 * content mask.
 *
 * Scopes follow Jinja2: the render's variables, then the template's top level; each for-loop
 * iteration is a fresh scope ({% set %} inside it is gone at the next iteration, which is why
 * templates use namespace()); a macro call sees its parameters and the top level only.
 * Every node evaluated, loop iteration and unit of copying is a step; the output and every
 * allocation are counted; macro calls nest at most limits.max_calls deep. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/jinja/jinja_internal.h"

enum flow { FLOW_NORMAL = 0, FLOW_BREAK, FLOW_CONTINUE };

struct jrun {
    struct jctx *c;
    struct jbuf *capture; /* a {% set %} block or a macro call collects here; NULL: the output */
    int          test_in; /* the id of the `in` test */
};

static struct jv eval(struct jrun *r, const struct jnode *n);
static enum flow exec(struct jrun *r, const struct jnode *n);

static void at(struct jctx *c, const struct jnode *n) { c->line = n->line, c->col = n->col; }

/* ---- output ----------------------------------------------------------------------------- */
static void emit(struct jrun *r, const char *s, size_t len, const unsigned char *mask)
{
    struct jctx *c = r->c;
    if (r->capture) {
        jbuf_put(c, r->capture, s, len, mask);
        return;
    }
    if (len > c->lim.max_output - c->olen) jfail(c, "the rendered text exceeds the output limit of %zu bytes", c->lim.max_output);
    jstep(c, len / 64);
    if (c->olen + len + 1 > c->ocap) {
        size_t cap = c->ocap ? c->ocap : 4096;
        while (cap < c->olen + len + 1) cap *= 2;
        if (cap > c->lim.max_output + 1) cap = c->lim.max_output + 1;
        char          *o = realloc(c->out, cap);
        if (o) c->out = o;
        unsigned char *m = o ? realloc(c->omask, cap) : NULL;
        if (m) c->omask = m;
        if (!o || !m) {
            c->status = WGF_ERR_NOMEM;
            jfail(c, "out of memory for the rendered text");
        }
        c->ocap = cap;
    }
    memcpy(c->out + c->olen, s, len);
    if (mask) memcpy(c->omask + c->olen, mask, len);
    else memset(c->omask + c->olen, 0, len);
    c->olen += len;
}

static void emit_value(struct jrun *r, struct jv v)
{
    struct jv s = jv_to_str(r->c, v);
    emit(r, s.u.s->s, s.u.s->len, s.u.s->mask);
}

/* ---- scopes ----------------------------------------------------------------------------- */
static void push_frame(struct jctx *c, bool opaque)
{
    if (c->n_frames == c->cap_frames) {
        size_t  cap = c->cap_frames ? c->cap_frames * 2 : 16;
        size_t *f   = jalloc_array(c, cap, sizeof *f);
        bool   *o   = jalloc_array(c, cap, sizeof *o);
        if (c->n_frames) memcpy(f, c->frame, c->n_frames * sizeof *f), memcpy(o, c->opaque, c->n_frames * sizeof *o);
        c->frame = f, c->opaque = o, c->cap_frames = cap;
    }
    c->frame[c->n_frames] = c->n_vars, c->opaque[c->n_frames] = opaque, c->n_frames++;
}

static void pop_frame(struct jctx *c) { c->n_vars = c->frame[--c->n_frames]; }

static void set_var(struct jctx *c, const char *name, struct jv v)
{
    size_t start = c->frame[c->n_frames - 1];
    for (size_t i = start; i < c->n_vars; i++)
        if (!strcmp(c->vars[i].name, name)) {
            c->vars[i].v = v;
            return;
        }
    if (c->n_vars == c->cap_vars) {
        size_t       cap = c->cap_vars ? c->cap_vars * 2 : 64;
        struct jvar *v2  = jalloc_array(c, cap, sizeof *v2);
        if (c->n_vars) memcpy(v2, c->vars, c->n_vars * sizeof *v2);
        c->vars = v2, c->cap_vars = cap;
    }
    c->vars[c->n_vars].name = name, c->vars[c->n_vars].v = v, c->n_vars++;
}

static const struct jv *get_var(struct jctx *c, const char *name)
{
    for (size_t f = c->n_frames; f-- > 0;) {
        size_t end = f + 1 < c->n_frames ? c->frame[f + 1] : c->n_vars;
        jstep(c, (end - c->frame[f]) / 16);
        for (size_t i = end; i-- > c->frame[f];)
            if (!strcmp(c->vars[i].name, name)) return &c->vars[i].v;
        if (c->opaque[f] && f > 2) f = 2; /* a macro sees the top level (frame 1) and the variables (frame 0) */
    }
    return NULL;
}

static struct jv undef_msg(struct jctx *c, const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(fmt) + strlen(a) + (b ? strlen(b) : 0) + 1;
    char  *m = jalloc(c, n);
    snprintf(m, n, fmt, a, b ? b : "");
    return jv_undef(m);
}

/* ---- expressions ------------------------------------------------------------------------ */
static struct jv attr_get(struct jrun *r, struct jv obj, const char *name, const struct jnode *n)
{
    struct jctx *c = r->c;
    at(c, n->kind == N_ATTR || n->kind == N_ITEM ? n->kids[0] : n);
    if (obj.kind == JV_UNDEF) jv_undefined_fail(c, obj); /* at the object that is undefined */
    at(c, n);
    switch (obj.kind) {
    case JV_DICT: {
        struct jv m = jv_method(c, obj, name);
        if (m.kind != JV_UNDEF) return m;
        const struct jv *v = jdict_get_str(c, obj.u.d, name);
        return v ? *v : undef_msg(c, "'dict object' has no attribute '%s'%s", name, NULL);
    }
    case JV_NS: {
        const struct jv *v = jdict_get_str(c, obj.u.d, name);
        return v ? *v : undef_msg(c, "'Namespace object' has no attribute '%s'%s", name, NULL);
    }
    case JV_LOOP: {
        const struct jloop *l = obj.u.loop;
        if (!strcmp(name, "index")) return jv_int((int64_t)l->index0 + 1);
        if (!strcmp(name, "index0")) return jv_int((int64_t)l->index0);
        if (!strcmp(name, "revindex")) return jv_int((int64_t)(l->length - l->index0));
        if (!strcmp(name, "revindex0")) return jv_int((int64_t)(l->length - l->index0 - 1));
        if (!strcmp(name, "first")) return jv_bool(l->index0 == 0);
        if (!strcmp(name, "last")) return jv_bool(l->index0 + 1 == l->length);
        if (!strcmp(name, "length")) return jv_int((int64_t)l->length);
        if (!strcmp(name, "depth")) return jv_int((int64_t)l->depth0 + 1);
        if (!strcmp(name, "depth0")) return jv_int((int64_t)l->depth0);
        if (!strcmp(name, "previtem"))
            return l->index0 ? l->items->v[l->index0 - 1] : jv_undef("there is no previous item");
        if (!strcmp(name, "nextitem"))
            return l->index0 + 1 < l->length ? l->items->v[l->index0 + 1] : jv_undef("there is no next item");
        return jv_method(c, obj, name);
    }
    default: {
        struct jv m = jv_method(c, obj, name);
        if (m.kind != JV_UNDEF) return m;
        size_t tl = strlen(jv_type_name(obj)) + 16;
        char  *t  = jalloc(c, tl);
        snprintf(t, tl, "'%s object'", jv_type_name(obj));
        return undef_msg(c, "%s has no attribute '%s'", t, name);
    }
    }
}

static bool index_of(struct jv key, size_t len, size_t *out)
{
    if (key.kind != JV_INT && key.kind != JV_BOOL) return false;
    int64_t i = key.kind == JV_INT ? key.u.i : key.u.b;
    if (i < 0) i += (int64_t)len;
    if (i < 0 || (uint64_t)i >= len) return false;
    *out = (size_t)i;
    return true;
}

static struct jv item_get(struct jrun *r, struct jv obj, struct jv key, const struct jnode *n)
{
    struct jctx *c = r->c;
    at(c, n->kids[0]);
    if (obj.kind == JV_UNDEF) jv_undefined_fail(c, obj);
    at(c, n);
    size_t i;
    switch (obj.kind) {
    case JV_DICT:
    case JV_NS: {
        const struct jv *v = jdict_get(c, obj.u.d, key);
        if (v) return *v;
        if (key.kind == JV_STR && obj.kind == JV_DICT) {
            struct jv m = jv_method(c, obj, key.u.s->s);
            if (m.kind != JV_UNDEF) return m;
        }
        if (key.kind == JV_STR) return undef_msg(c, "'dict object' has no attribute '%s'%s", key.u.s->s, NULL);
        return jv_undef("a key missing from a dict is used");
    }
    case JV_LIST:
        if (index_of(key, obj.u.l->n, &i)) return obj.u.l->v[i];
        return jv_undef(key.kind == JV_INT ? "a list index out of range is used" : "a list indexed by a non-integer is used");
    case JV_STR: {
        if (key.kind == JV_STR) return attr_get(r, obj, key.u.s->s, n);
        const struct jlist *chars = jv_iterate(c, obj);
        if (index_of(key, chars->n, &i)) return chars->v[i];
        return jv_undef("a string index out of range is used");
    }
    case JV_LOOP:
        if (key.kind == JV_STR) return attr_get(r, obj, key.u.s->s, n);
        return jv_undef(NULL);
    default: return jv_undef("an item of a value that has none is used");
    }
}

/* Python's slice.indices() then the selected positions */
static struct jv slice_get(struct jrun *r, struct jv obj, const struct jnode *n)
{
    struct jctx *c = r->c;
    struct jv    part[3];
    for (int k = 0; k < 3; k++) part[k] = n->kids[k + 1] ? eval(r, n->kids[k + 1]) : jv_none();
    at(c, n);
    if (obj.kind == JV_UNDEF) jv_undefined_fail(c, obj);
    const struct jlist *items = obj.kind == JV_STR ? jv_iterate(c, obj) : obj.kind == JV_LIST ? obj.u.l : NULL;
    if (!items) jfail(c, "'%s' object is not subscriptable with a slice", jv_type_name(obj));
    int64_t len = (int64_t)items->n, step = 1, start, stop;
    for (int k = 0; k < 3; k++)
        if (part[k].kind != JV_NONE && part[k].kind != JV_INT && part[k].kind != JV_BOOL)
            jfail(c, "slice indices must be integers or None, not %s", jv_type_name(part[k]));
    if (part[2].kind != JV_NONE) step = part[2].kind == JV_INT ? part[2].u.i : part[2].u.b;
    if (step == 0) jfail(c, "slice step cannot be zero");
    if (step == INT64_MIN) step = -INT64_MAX;
    int64_t lo = step < 0 ? -1 : 0, hi = step < 0 ? len - 1 : len;
    if (part[0].kind == JV_NONE) start = step < 0 ? hi : lo;
    else {
        start = part[0].kind == JV_INT ? part[0].u.i : part[0].u.b;
        if (start < 0) start = start < -len ? lo : start + len;
        else if (start > hi) start = hi;
    }
    if (part[1].kind == JV_NONE) stop = step < 0 ? lo : hi;
    else {
        stop = part[1].kind == JV_INT ? part[1].u.i : part[1].u.b;
        if (stop < 0) stop = stop < -len ? lo : stop + len;
        else if (stop > hi) stop = hi;
    }
    size_t cnt = 0;
    if (step > 0 && stop > start) cnt = (size_t)((stop - start - 1) / step + 1);
    if (step < 0 && start > stop) cnt = (size_t)((start - stop - 1) / -step + 1);
    struct jv out = jv_list(c, cnt, obj.kind == JV_LIST && obj.u.l->tuple);
    for (size_t k = 0; k < cnt; k++) ((struct jlist *)out.u.l)->v[k] = items->v[start + (int64_t)k * step];
    if (obj.kind != JV_STR) return out;
    struct jbuf b = {0};
    for (size_t k = 0; k < cnt; k++) jbuf_putv(c, &b, out.u.l->v[k].u.s);
    return jbuf_value(c, &b);
}

static _Noreturn void bad_operands(struct jctx *c, const char *op, struct jv a, struct jv b)
{
    if (a.kind == JV_UNDEF) jv_undefined_fail(c, a);
    if (b.kind == JV_UNDEF) jv_undefined_fail(c, b);
    jfail(c, "unsupported operand type(s) for %s: '%s' and '%s'", op, jv_type_name(a), jv_type_name(b));
}

static bool numeric(struct jv v) { return v.kind == JV_INT || v.kind == JV_FLOAT || v.kind == JV_BOOL; }
static double  as_f(struct jv v) { return v.kind == JV_FLOAT ? v.u.f : v.kind == JV_INT ? (double)v.u.i : (double)v.u.b; }
static int64_t as_i(struct jv v) { return v.kind == JV_INT ? v.u.i : (int64_t)v.u.b; }

static struct jv repeat(struct jctx *c, struct jv seq, int64_t times)
{
    if (times < 0) times = 0;
    if (seq.kind == JV_STR) {
        uint64_t total;
        if (!wgf_mul_u64(seq.u.s->len, (uint64_t)times, &total) || total > c->lim.max_output)
            jfail(c, "a string repeated %lld times exceeds the output limit", (long long)times);
        struct jbuf b = {0};
        for (int64_t k = 0; k < times; k++) jbuf_putv(c, &b, seq.u.s);
        return jbuf_value(c, &b);
    }
    uint64_t total;
    if (!wgf_mul_u64(seq.u.l->n, (uint64_t)times, &total) || total > c->lim.max_mem / sizeof(struct jv))
        jfail(c, "a list repeated %lld times is too long", (long long)times);
    struct jv o = jv_list(c, (size_t)total, seq.u.l->tuple);
    for (size_t k = 0; k < (size_t)total; k++) ((struct jlist *)o.u.l)->v[k] = seq.u.l->v[k % seq.u.l->n];
    return o;
}

static struct jv binop(struct jrun *r, uint8_t op, struct jv a, struct jv b)
{
    struct jctx *c = r->c;
    int64_t      x;
    switch (op) {
    case OP_CONCAT: {
        struct jbuf s = {0};
        jv_str_into(c, &s, a);
        jv_str_into(c, &s, b);
        return jbuf_value(c, &s);
    }
    case OP_IN:
    case OP_NOTIN: return jv_bool(jtest_apply(c, r->test_in, a, 1, &b) == (op == OP_IN));
    case OP_ADD:
        if (a.kind == JV_STR && b.kind == JV_STR) {
            struct jbuf s = {0};
            jbuf_putv(c, &s, a.u.s);
            jbuf_putv(c, &s, b.u.s);
            return jbuf_value(c, &s);
        }
        if (a.kind == JV_LIST && b.kind == JV_LIST && a.u.l->tuple == b.u.l->tuple) {
            struct jv o = jv_list(c, a.u.l->n + b.u.l->n, a.u.l->tuple);
            memcpy(((struct jlist *)o.u.l)->v, a.u.l->v, a.u.l->n * sizeof *a.u.l->v);
            memcpy(((struct jlist *)o.u.l)->v + a.u.l->n, b.u.l->v, b.u.l->n * sizeof *b.u.l->v);
            return o;
        }
        if (!numeric(a) || !numeric(b)) bad_operands(c, "+", a, b);
        if (a.kind == JV_FLOAT || b.kind == JV_FLOAT) return jv_float(as_f(a) + as_f(b));
        if (__builtin_add_overflow(as_i(a), as_i(b), &x)) jfail(c, "integer overflow in +");
        return jv_int(x);
    case OP_SUB:
        if (!numeric(a) || !numeric(b)) bad_operands(c, "-", a, b);
        if (a.kind == JV_FLOAT || b.kind == JV_FLOAT) return jv_float(as_f(a) - as_f(b));
        if (__builtin_sub_overflow(as_i(a), as_i(b), &x)) jfail(c, "integer overflow in -");
        return jv_int(x);
    case OP_MUL:
        if ((a.kind == JV_STR || a.kind == JV_LIST) && (b.kind == JV_INT || b.kind == JV_BOOL)) return repeat(c, a, as_i(b));
        if ((b.kind == JV_STR || b.kind == JV_LIST) && (a.kind == JV_INT || a.kind == JV_BOOL)) return repeat(c, b, as_i(a));
        if (!numeric(a) || !numeric(b)) bad_operands(c, "*", a, b);
        if (a.kind == JV_FLOAT || b.kind == JV_FLOAT) return jv_float(as_f(a) * as_f(b));
        if (__builtin_mul_overflow(as_i(a), as_i(b), &x)) jfail(c, "integer overflow in *");
        return jv_int(x);
    case OP_DIV:
        if (!numeric(a) || !numeric(b)) bad_operands(c, "/", a, b);
        if (as_f(b) == 0.0) jfail(c, "division by zero");
        return jv_float(as_f(a) / as_f(b));
    case OP_FLOORDIV:
    case OP_MOD:
        if (!numeric(a) || !numeric(b)) bad_operands(c, op == OP_MOD ? "%" : "//", a, b);
        if (as_f(b) == 0.0) jfail(c, "integer division or modulo by zero");
        if (a.kind == JV_FLOAT || b.kind == JV_FLOAT) {
            double p = as_f(a), q = as_f(b), m = fmod(p, q);
            if (m != 0 && ((m < 0) != (q < 0))) m += q;
            return op == OP_MOD ? jv_float(m) : jv_float(floor((p - m) / q + 0.5));
        } else {
            int64_t p = as_i(a), q = as_i(b);
            if (p == INT64_MIN && q == -1) jfail(c, "integer overflow in //");
            int64_t d = p / q, m = p % q;
            if (m != 0 && ((m < 0) != (q < 0))) m += q, d -= 1;
            return jv_int(op == OP_MOD ? m : d);
        }
    case OP_POW:
        if (!numeric(a) || !numeric(b)) bad_operands(c, "**", a, b);
        if (a.kind != JV_FLOAT && b.kind != JV_FLOAT && as_i(b) >= 0) {
            int64_t base = as_i(a), e = as_i(b), res = 1;
            for (; e > 0; e--) {
                jstep(c, 1);
                if (__builtin_mul_overflow(res, base, &res)) jfail(c, "integer overflow in **");
                if (res == 0 || res == 1) break;
            }
            return jv_int(res);
        }
        return jv_float(pow(as_f(a), as_f(b)));
    default: jfail(c, "unknown operator");
    }
}

static bool compare(struct jctx *c, uint8_t op, struct jv a, struct jv b)
{
    switch (op) {
    case OP_EQ: return jv_equal(c, a, b);
    case OP_NE: return !jv_equal(c, a, b);
    case OP_LT: return jv_compare(c, a, b) < 0;
    case OP_LE: return jv_compare(c, a, b) <= 0;
    case OP_GT: return jv_compare(c, a, b) > 0;
    default: return jv_compare(c, a, b) >= 0;
    }
}

/* Evaluate kids[from..) of a call, filter or test into args/kw. */
static size_t eval_args(struct jrun *r, const struct jnode *n, uint32_t from, struct jv **args, const char *const **kw)
{
    size_t cnt = n->n - from;
    *args      = jalloc_array(r->c, cnt ? cnt : 1, sizeof **args);
    for (size_t i = 0; i < cnt; i++) (*args)[i] = eval(r, n->kids[from + i]);
    *kw = n->kw + from;
    return cnt;
}

static struct jv call_macro(struct jrun *r, const struct jnode *m, size_t n, const struct jv *args, const char *const *kw,
                            const struct jnode *site)
{
    struct jctx *c = r->c;
    at(c, site);
    if (c->calls >= c->lim.max_calls) jfail(c, "macro calls nested deeper than %u (unbounded recursion?)", c->lim.max_calls);
    uint32_t np = m->n - 1;
    const struct jnode *const *params = (const struct jnode *const *)m->kids + 1;
    struct jv *vals  = jalloc_array(c, np ? np : 1, sizeof *vals);
    bool      *given = jalloc_array(c, np ? np : 1, sizeof *given);
    size_t     pos   = 0;
    for (size_t i = 0; i < n; i++) {
        if (!kw[i]) {
            if (pos >= np) jfail(c, "macro '%s' takes not more than %u argument(s)", m->name, np);
            vals[pos] = args[i], given[pos] = true, pos++;
            continue;
        }
        uint32_t k = 0;
        while (k < np && strcmp(params[k]->name, kw[i]) != 0) k++;
        if (k == np) jfail(c, "macro '%s' has no argument named '%s'", m->name, kw[i]);
        if (given[k]) jfail(c, "macro '%s' got multiple values for argument '%s'", m->name, kw[i]);
        vals[k] = args[i], given[k] = true;
    }
    struct jbuf  out = {0};
    struct jbuf *saved = r->capture;
    c->calls++;
    push_frame(c, true);
    for (uint32_t k = 0; k < np; k++) {
        struct jv v = given[k] ? vals[k] : params[k]->n ? eval(r, params[k]->kids[0])
                                                        : undef_msg(c, "parameter '%s' was not provided%s", params[k]->name, NULL);
        set_var(c, params[k]->name, v);
    }
    r->capture = &out;
    exec(r, m->kids[0]);
    r->capture = saved;
    pop_frame(c);
    c->calls--;
    return jbuf_value(c, &out);
}

static struct jv eval_inner(struct jrun *r, const struct jnode *n)
{
    struct jctx *c = r->c;
    struct jv    a, b;
    switch (n->kind) {
    case N_LIT: return n->lit;
    case N_NAME: {
        const struct jv *v = get_var(c, n->name);
        if (v) return *v;
        enum jfn g = jfn_global(n->name);
        if (g != JFN_NONE) return (struct jv){.kind = JV_FUNC, .fn = (uint16_t)g};
        return undef_msg(c, "'%s' is undefined%s", n->name, NULL);
    }
    case N_ATTR: return attr_get(r, eval(r, n->kids[0]), n->name, n);
    case N_ITEM: a = eval(r, n->kids[0]), b = eval(r, n->kids[1]); return item_get(r, a, b, n);
    case N_SLICE: return slice_get(r, eval(r, n->kids[0]), n);
    case N_CALL: {
        struct jv          fn = eval(r, n->kids[0]);
        struct jv         *args;
        const char *const *kw;
        size_t             cnt = eval_args(r, n, 1, &args, &kw);
        at(c, n);
        if (fn.kind == JV_MACRO) return call_macro(r, fn.u.macro, cnt, args, kw, n);
        if (fn.kind == JV_FUNC) return jcall_builtin(c, fn, cnt, args, kw);
        if (fn.kind == JV_UNDEF) jv_undefined_fail(c, fn);
        jfail(c, "'%s' object is not callable", jv_type_name(fn));
    }
    case N_FILTER: {
        a = eval(r, n->kids[0]);
        struct jv         *args;
        const char *const *kw;
        size_t             cnt = eval_args(r, n, 1, &args, &kw);
        at(c, n);
        return jfilter_apply(c, n->id, a, cnt, args, kw);
    }
    case N_TEST: {
        a = eval(r, n->kids[0]);
        struct jv         *args;
        const char *const *kw;
        size_t             cnt = eval_args(r, n, 1, &args, &kw);
        at(c, n);
        return jv_bool(jtest_apply(c, n->id, a, cnt, args) != (n->op != 0));
    }
    case N_BIN:
        a = eval(r, n->kids[0]), b = eval(r, n->kids[1]);
        at(c, n);
        return binop(r, n->op, a, b);
    case N_CMP:
        a = eval(r, n->kids[0]);
        for (uint32_t k = 1; k < n->n; k++) {
            b = eval(r, n->kids[k]);
            at(c, n);
            bool ok = n->ops[k - 1] == OP_IN || n->ops[k - 1] == OP_NOTIN ? jv_truthy(binop(r, n->ops[k - 1], a, b))
                                                                            : compare(c, n->ops[k - 1], a, b);
            if (!ok) return jv_bool(false);
            a = b;
        }
        return jv_bool(true);
    case N_AND: a = eval(r, n->kids[0]); return jv_truthy(a) ? eval(r, n->kids[1]) : a;
    case N_OR: a = eval(r, n->kids[0]); return jv_truthy(a) ? a : eval(r, n->kids[1]);
    case N_NOT: return jv_bool(!jv_truthy(eval(r, n->kids[0])));
    case N_NEG:
    case N_POS:
        a = eval(r, n->kids[0]);
        at(c, n);
        if (a.kind == JV_UNDEF) jv_undefined_fail(c, a);
        if (!numeric(a)) jfail(c, "bad operand type for unary %c: '%s'", n->kind == N_NEG ? '-' : '+', jv_type_name(a));
        if (n->kind == N_POS) return a.kind == JV_BOOL ? jv_int(a.u.b) : a;
        if (a.kind == JV_FLOAT) return jv_float(-a.u.f);
        if (as_i(a) == INT64_MIN) jfail(c, "integer overflow in unary -");
        return jv_int(-as_i(a));
    case N_COND:
        if (jv_truthy(eval(r, n->kids[1]))) return eval(r, n->kids[0]);
        return n->kids[2] ? eval(r, n->kids[2]) : jv_undef("the else branch of a conditional expression without else is used");
    case N_LIST:
    case N_TUPLE: {
        struct jv l = jv_list(c, n->n, n->kind == N_TUPLE);
        for (uint32_t k = 0; k < n->n; k++) ((struct jlist *)l.u.l)->v[k] = eval(r, n->kids[k]);
        return l;
    }
    case N_DICT: {
        struct jv d = jv_dict(c, n->n / 2);
        for (uint32_t k = 0; k + 1 < n->n; k += 2) {
            a = eval(r, n->kids[k]), b = eval(r, n->kids[k + 1]);
            at(c, n->kids[k]);
            jdict_set(c, d.u.d, a, b);
        }
        return d;
    }
    default: at(c, n); jfail(c, "statement used as an expression");
    }
}

static struct jv eval(struct jrun *r, const struct jnode *n)
{
    at(r->c, n);
    jstep(r->c, 1);
    return eval_inner(r, n);
}

/* ---- statements ------------------------------------------------------------------------- */
static void assign(struct jrun *r, const struct jnode *target, struct jv v)
{
    struct jctx *c = r->c;
    at(c, target);
    if (target->kind == N_NAME) {
        set_var(c, target->name, v);
        return;
    }
    if (target->kind == N_ATTR) {
        const struct jv *ns = get_var(c, target->kids[0]->name);
        if (!ns || ns->kind != JV_NS) jfail(c, "cannot assign attribute on non-namespace object");
        jdict_set(c, ns->u.d, jv_cstr(c, target->name), v);
        return;
    }
    /* unpacking */
    if (v.kind == JV_UNDEF) jv_undefined_fail(c, v);
    const struct jlist *l = jv_iterate(c, v);
    if (l->n != target->n)
        jfail(c, "%s values to unpack (expected %u, got %zu)", l->n > target->n ? "too many" : "not enough", target->n, l->n);
    for (uint32_t k = 0; k < target->n; k++) set_var(c, target->kids[k]->name, l->v[k]);
}

static enum flow exec_for(struct jrun *r, const struct jnode *n)
{
    struct jctx        *c     = r->c;
    struct jv           it    = eval(r, n->kids[1]);
    at(c, n);
    if (it.kind == JV_NONE) jfail(c, "'NoneType' object is not iterable");
    const struct jlist *items = jv_iterate(c, it);
    if (n->kids[2]) { /* {% for x in y if cond %}: filtered before the loop (loop.length counts the kept) */
        struct jv kept = jv_list(c, items->n, false);
        size_t    k    = 0;
        for (size_t i = 0; i < items->n; i++) {
            jstep(c, 1);
            push_frame(c, false);
            assign(r, n->kids[0], items->v[i]);
            bool keep = jv_truthy(eval(r, n->kids[2]));
            pop_frame(c);
            if (keep) ((struct jlist *)kept.u.l)->v[k++] = items->v[i];
        }
        ((struct jlist *)kept.u.l)->n = k;
        items                         = kept.u.l;
    }
    uint32_t depth0 = 0; /* loop.depth counts recursive calls of a loop, which are not supported: always 1 */
    /* one loop object per loop, advanced in place: an iteration allocates nothing itself */
    struct jloop *l = jalloc(c, sizeof *l);
    l->length = items->n, l->items = items, l->depth0 = depth0;
    for (size_t i = 0; i < items->n; i++) {
        jstep(c, 1);
        l->index0 = i;
        push_frame(c, false);
        set_var(c, "loop", (struct jv){.kind = JV_LOOP, .u.loop = l});
        assign(r, n->kids[0], items->v[i]);
        enum flow f = exec(r, n->kids[3]);
        pop_frame(c);
        if (f == FLOW_BREAK) break;
    }
    if (!items->n && n->kids[4]) return exec(r, n->kids[4]);
    return FLOW_NORMAL;
}

static enum flow exec(struct jrun *r, const struct jnode *n)
{
    struct jctx *c = r->c;
    at(c, n);
    jstep(c, 1);
    switch (n->kind) {
    case N_BODY:
        for (uint32_t k = 0; k < n->n; k++) {
            enum flow f = exec(r, n->kids[k]);
            if (f != FLOW_NORMAL) return f;
        }
        return FLOW_NORMAL;
    case N_TEXT: emit(r, n->lit.u.s->s, n->lit.u.s->len, NULL); return FLOW_NORMAL;
    case N_OUT: emit_value(r, eval(r, n->kids[0])); return FLOW_NORMAL;
    case N_IF:
        /* the elif chain iteratively: its length is not bounded by the nesting limit */
        while (n) {
            if (jv_truthy(eval(r, n->kids[0]))) return exec(r, n->kids[1]);
            const struct jnode *e = n->n > 2 ? n->kids[2] : NULL;
            if (e && e->kind == N_IF) {
                n = e;
                jstep(c, 1);
                continue;
            }
            return e ? exec(r, e) : FLOW_NORMAL;
        }
        return FLOW_NORMAL;
    case N_FOR: return exec_for(r, n);
    case N_SET: assign(r, n->kids[0], eval(r, n->kids[1])); return FLOW_NORMAL;
    case N_SETBLOCK: {
        struct jbuf  out   = {0};
        struct jbuf *saved = r->capture;
        r->capture         = &out;
        exec(r, n->kids[1]);
        r->capture = saved;
        assign(r, n->kids[0], jbuf_value(c, &out));
        return FLOW_NORMAL;
    }
    case N_MACRO: set_var(c, n->name, (struct jv){.kind = JV_MACRO, .u.macro = n}); return FLOW_NORMAL;
    case N_BREAK: return FLOW_BREAK;
    case N_CONTINUE: return FLOW_CONTINUE;
    default: emit_value(r, eval(r, n)); return FLOW_NORMAL;
    }
}

/* ---- entry ------------------------------------------------------------------------------ */
void wgf__jinja_limits_default(struct wgf__jinja_limits *l, size_t input_bytes)
{
    size_t in = input_bytes > (SIZE_MAX >> 6) ? (SIZE_MAX >> 6) : input_bytes;
    l->max_steps  = 20u * 1000u * 1000u;
    l->max_output = (4u << 20) + 4 * in;
    l->max_mem    = (64u << 20) + 16 * in;
    l->max_alloc  = l->max_mem;
    l->max_calls  = 64;
}

enum wgf_status wgf__jinja_render(const struct wgf__jinja *t, const struct wgf__jinja_var *vars, size_t n_vars,
                                  const struct wgf__jinja_limits *limits, int64_t now, struct wgf__jinja_out *out,
                                  struct wgf_err *err)
{
    if (!t || !out || (!vars && n_vars)) return wgf_fail(err, WGF_ERR_ARG, "chat template: NULL argument");
    memset(out, 0, sizeof *out);
    struct jctx *c = calloc(1, sizeof *c);
    if (!c) return wgf_fail(err, WGF_ERR_NOMEM, "chat template: out of memory");
    if (limits) c->lim = *limits;
    else wgf__jinja_limits_default(&c->lim, 0);
    c->err = err, c->now = now, c->line = 1, c->col = 1;
    struct jrun r = {.c = c, .capture = NULL, .test_in = jtest_id("in")};
    enum wgf_status st = WGF_OK;
    if (setjmp(c->jb) == 0) {
        push_frame(c, false); /* 0: the variables */
        for (size_t i = 0; i < n_vars; i++) set_var(c, vars[i].name, jv_from_json(c, vars[i].value, vars[i].content, 0));
        push_frame(c, false); /* 1: the template's top level */
        exec(&r, t->root);
        emit(&r, "", 0, NULL); /* the buffers exist even for an empty output */
        c->out[c->olen] = '\0';
        out->text = c->out, out->mask = c->omask, out->len = c->olen;
        c->out = NULL, c->omask = NULL;
    } else {
        st = c->status ? c->status : WGF_ERR_ARG;
    }
    free(c->out);
    free(c->omask);
    jarena_free(c);
    free(c);
    return st;
}
