/* wgfuse — Jinja values and the render context beneath everything else of the engine:
 * the arena (every allocation of a render, counted against its memory limit), steps,
 * errors, and Python's semantics for the values templates see: truth, str(), repr(),
 * json.dumps() as transformers' tojson calls it (ensure_ascii=False, separators ", " and
 * ": " unless indent is given), ==, ordering, len(), iteration. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/uchar.h>

#include "llm/jinja/jinja_internal.h"
#include "llm/tokenizer_internal.h"

/* ---- context: errors, steps, arena ------------------------------------------------------ */
_Noreturn void jfail(struct jctx *c, const char *fmt, ...)
{
    char    msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* one line: a message quoting user text must not break the line */
    for (char *q = msg; *q; q++)
        if (*q == '\n' || *q == '\r') *q = ' ';
    c->status = wgf_fail(c->err, c->status ? c->status : WGF_ERR_ARG, "line %u, column %u: %s", c->line, c->col, msg);
    longjmp(c->jb, 1);
}

void jstep(struct jctx *c, uint64_t n)
{
    c->steps += n;
    if (c->steps > c->lim.max_steps)
        jfail(c, "rendering took more than %llu steps (a loop or recursion without end?)",
              (unsigned long long)c->lim.max_steps);
}

struct jchunk {
    struct jchunk *next;
    _Alignas(16) char data[];
};
#define JCHUNK 65536u

void *jalloc(struct jctx *c, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n > c->lim.max_alloc || c->mem + n > c->lim.max_mem || c->mem + n < c->mem)
        jfail(c, "rendering needs more than %zu bytes of memory", n > c->lim.max_alloc ? c->lim.max_alloc : c->lim.max_mem);
    c->mem += n;
    jstep(c, n / 256);
    if (n > c->left) {
        size_t         sz = n > JCHUNK / 4 ? n : JCHUNK;
        struct jchunk *k  = malloc(sizeof *k + sz);
        if (!k) {
            c->status = WGF_ERR_NOMEM;
            jfail(c, "out of memory");
        }
        k->next = c->chunks, c->chunks = k;
        if (sz == n && c->left > 0) { /* a big one: keep bumping in the previous chunk */
            memset(k->data, 0, n);
            return k->data;
        }
        c->cur = k->data, c->left = sz;
    }
    void *r = c->cur;
    c->cur += n, c->left -= n;
    memset(r, 0, n);
    return r;
}

void *jalloc_array(struct jctx *c, size_t n, size_t size)
{
    size_t b;
    if (!wgf_mul_size(n, size, &b)) jfail(c, "rendering needs more memory than can be counted");
    return jalloc(c, b ? b : 1);
}

void jarena_free(struct jctx *c)
{
    for (struct jchunk *k = c->chunks; k;) {
        struct jchunk *n = k->next;
        free(k);
        k = n;
    }
    c->chunks = NULL, c->cur = NULL, c->left = 0;
}

/* ---- constructors ----------------------------------------------------------------------- */
struct jv jv_undef(const char *what) { return (struct jv){.kind = JV_UNDEF, .u.undef = what}; }
struct jv jv_none(void) { return (struct jv){.kind = JV_NONE}; }
struct jv jv_bool(bool b) { return (struct jv){.kind = JV_BOOL, .u.b = b}; }
struct jv jv_int(int64_t i) { return (struct jv){.kind = JV_INT, .u.i = i}; }
struct jv jv_float(double f) { return (struct jv){.kind = JV_FLOAT, .u.f = f}; }

struct jv jv_str(struct jctx *c, const char *s, size_t len, const unsigned char *mask)
{
    if (len > c->lim.max_output) jfail(c, "a string of %zu bytes is longer than the output limit (%zu)", len, c->lim.max_output);
    struct jstr *js = jalloc(c, sizeof *js);
    char        *d  = jalloc(c, len + 1);
    if (len) memcpy(d, s, len);
    js->s = d, js->len = len;
    if (mask) {
        bool any = false;
        for (size_t i = 0; i < len && !any; i++) any = mask[i] != 0;
        if (any) {
            unsigned char *m = jalloc(c, len);
            memcpy(m, mask, len);
            js->mask = m;
        }
    }
    jstep(c, len / 64);
    return (struct jv){.kind = JV_STR, .u.s = js};
}

struct jv jv_str_all(struct jctx *c, const char *s, size_t len, bool content)
{
    struct jv v = jv_str(c, s, len, NULL);
    if (content && len) {
        unsigned char *m = jalloc(c, len);
        memset(m, 1, len);
        ((struct jstr *)v.u.s)->mask = m;
    }
    return v;
}

struct jv jv_cstr(struct jctx *c, const char *s) { return jv_str(c, s, strlen(s), NULL); }

struct jv jv_list(struct jctx *c, size_t n, bool tuple)
{
    struct jlist *l = jalloc(c, sizeof *l);
    l->v = jalloc_array(c, n, sizeof *l->v), l->n = n, l->tuple = tuple;
    jstep(c, n);
    return (struct jv){.kind = JV_LIST, .u.l = l};
}

struct jv jv_dict(struct jctx *c, size_t cap)
{
    struct jdict *d = jalloc(c, sizeof *d);
    d->cap = cap ? cap : 4;
    d->k = jalloc_array(c, d->cap, sizeof *d->k), d->v = jalloc_array(c, d->cap, sizeof *d->v);
    return (struct jv){.kind = JV_DICT, .u.d = d};
}

static bool hashable(struct jv k)
{
    return k.kind == JV_STR || k.kind == JV_INT || k.kind == JV_FLOAT || k.kind == JV_BOOL || k.kind == JV_NONE ||
           (k.kind == JV_LIST && k.u.l->tuple);
}

const struct jv *jdict_get(struct jctx *c, const struct jdict *d, struct jv k)
{
    jstep(c, d->n / 8);
    for (size_t i = 0; i < d->n; i++)
        if (jv_equal(c, d->k[i], k)) return &d->v[i];
    return NULL;
}

const struct jv *jdict_get_str(struct jctx *c, const struct jdict *d, const char *k)
{
    size_t n = strlen(k);
    jstep(c, d->n / 8);
    for (size_t i = 0; i < d->n; i++)
        if (d->k[i].kind == JV_STR && d->k[i].u.s->len == n && memcmp(d->k[i].u.s->s, k, n) == 0) return &d->v[i];
    return NULL;
}

void jdict_set(struct jctx *c, struct jdict *d, struct jv k, struct jv v)
{
    if (!hashable(k)) jfail(c, "unhashable type: '%s' as a dict key", jv_type_name(k));
    jstep(c, d->n / 8); /* a linear search: building a dict of n keys is O(n^2), counted */
    for (size_t i = 0; i < d->n; i++)
        if (jv_equal(c, d->k[i], k)) {
            d->v[i] = v;
            return;
        }
    if (d->n == d->cap) {
        size_t     cap = d->cap * 2;
        struct jv *nk  = jalloc_array(c, cap, sizeof *nk), *nv = jalloc_array(c, cap, sizeof *nv);
        memcpy(nk, d->k, d->n * sizeof *nk), memcpy(nv, d->v, d->n * sizeof *nv);
        d->k = nk, d->v = nv, d->cap = cap;
    }
    d->k[d->n] = k, d->v[d->n] = v, d->n++;
}

struct jv jv_from_json(struct jctx *c, json_t *j, bool content, uint32_t depth)
{
    if (depth > 64) jfail(c, "a variable's JSON is nested deeper than 64 levels");
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        struct jv   d = jv_dict(c, json_object_size(j));
        const char *key;
        json_t     *val;
        json_object_foreach(j, key, val)
        {
            /* keys are not message text: they select fields, as in transformers */
            jdict_set(c, d.u.d, jv_cstr(c, key), jv_from_json(c, val, content, depth + 1));
        }
        return d;
    }
    case JSON_ARRAY: {
        struct jv l = jv_list(c, json_array_size(j), false);
        for (size_t i = 0; i < l.u.l->n; i++) l.u.l->v[i] = jv_from_json(c, json_array_get(j, i), content, depth + 1);
        return l;
    }
    case JSON_STRING: return jv_str_all(c, json_string_value(j), json_string_length(j), content);
    case JSON_INTEGER: return jv_int((int64_t)json_integer_value(j));
    case JSON_REAL: return jv_float(json_real_value(j));
    case JSON_TRUE: return jv_bool(true);
    case JSON_FALSE: return jv_bool(false);
    default: return jv_none();
    }
}

/* ---- buffers ---------------------------------------------------------------------------- */
static void jbuf_grow(struct jctx *c, struct jbuf *b, size_t add)
{
    size_t need;
    if (!wgf_add_size(b->len, add, &need) || need > c->lim.max_output)
        jfail(c, "a string would be longer than the output limit (%zu bytes)", c->lim.max_output);
    if (need + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need + 1) cap *= 2;
    char *s = jalloc(c, cap);
    if (b->len) memcpy(s, b->s, b->len);
    if (b->mask) {
        unsigned char *m = jalloc(c, cap);
        memcpy(m, b->mask, b->len);
        b->mask = m;
    }
    b->s = s, b->cap = cap;
}

void jbuf_put(struct jctx *c, struct jbuf *b, const char *s, size_t n, const unsigned char *mask)
{
    jbuf_grow(c, b, n);
    bool any = false;
    for (size_t i = 0; mask && i < n && !any; i++) any = mask[i] != 0;
    if (any && !b->mask) b->mask = jalloc(c, b->cap);
    if (n) memcpy(b->s + b->len, s, n);
    if (b->mask) {
        if (any) memcpy(b->mask + b->len, mask, n);
        else memset(b->mask + b->len, 0, n);
    }
    b->len += n;
    b->s[b->len] = '\0';
    jstep(c, n / 64);
}
void jbuf_puts(struct jctx *c, struct jbuf *b, const char *s) { jbuf_put(c, b, s, strlen(s), NULL); }
void jbuf_putc(struct jctx *c, struct jbuf *b, char ch) { jbuf_put(c, b, &ch, 1, NULL); }
void jbuf_putv(struct jctx *c, struct jbuf *b, const struct jstr *s) { jbuf_put(c, b, s->s, s->len, s->mask); }
/* n <= 16 bytes (one character or one escape), all content or none */
static void jbuf_put_marked(struct jctx *c, struct jbuf *b, const char *s, size_t n, bool content)
{
    static const unsigned char ones[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    jbuf_put(c, b, s, n, content && n <= sizeof ones ? ones : NULL);
}

struct jv jbuf_value(struct jctx *c, struct jbuf *b)
{
    if (!b->s) return jv_str(c, "", 0, NULL);
    struct jstr *js = jalloc(c, sizeof *js);
    js->s = b->s, js->len = b->len, js->mask = NULL;
    for (size_t i = 0; b->mask && i < b->len; i++)
        if (b->mask[i]) {
            js->mask = b->mask;
            break;
        }
    return (struct jv){.kind = JV_STR, .u.s = js};
}

/* ---- strings ---------------------------------------------------------------------------- */
size_t jstr_next(const struct jstr *s, size_t i, uint32_t *cp)
{
    size_t k = wgf__utf8_next((const unsigned char *)s->s + i, s->len - i, cp);
    if (!k) {
        *cp = 0xDC00u + (unsigned char)s->s[i]; /* Python's surrogateescape stand-in */
        k   = 1;
    }
    return k;
}

size_t jstr_count_cps(const struct jstr *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->len; n++) {
        uint32_t cp;
        i += jstr_next(s, i, &cp);
    }
    return n;
}

struct jv jstr_sub(struct jctx *c, const struct jstr *s, size_t off, size_t len)
{
    return jv_str(c, s->s + off, len, s->mask ? s->mask + off : NULL);
}

bool jv_is_str(struct jv v) { return v.kind == JV_STR; }

/* ---- Python semantics ------------------------------------------------------------------- */
bool jv_truthy(struct jv v)
{
    switch (v.kind) {
    case JV_UNDEF:
    case JV_NONE: return false;
    case JV_BOOL: return v.u.b;
    case JV_INT: return v.u.i != 0;
    case JV_FLOAT: return v.u.f != 0.0;
    case JV_STR: return v.u.s->len != 0;
    case JV_LIST: return v.u.l->n != 0;
    case JV_DICT: return v.u.d->n != 0;
    default: return true;
    }
}

const char *jv_type_name(struct jv v)
{
    switch (v.kind) {
    case JV_UNDEF: return "Undefined";
    case JV_NONE: return "NoneType";
    case JV_BOOL: return "bool";
    case JV_INT: return "int";
    case JV_FLOAT: return "float";
    case JV_STR: return "str";
    case JV_LIST: return v.u.l->tuple ? "tuple" : "list";
    case JV_DICT: return "dict";
    case JV_NS: return "Namespace";
    case JV_LOOP: return "LoopContext";
    case JV_MACRO: return "Macro";
    default: return "builtin_function_or_method";
    }
}

_Noreturn void jv_undefined_fail(struct jctx *c, struct jv v)
{
    if (v.u.undef) jfail(c, "%s", v.u.undef);
    jfail(c, "an undefined value is used");
}

/* Python's repr(float): the shortest digits that read back to the same double; fixed
 * notation when the decimal exponent is in [-4, 16), else d.ddde[+-]XX. */
static void float_repr(double f, char *out, size_t cap)
{
    if (isnan(f)) {
        snprintf(out, cap, "nan");
        return;
    }
    if (isinf(f)) {
        snprintf(out, cap, f < 0 ? "-inf" : "inf");
        return;
    }
    char e[40];
    int  prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, f);
        if (strtod(e, NULL) == f) break;
    }
    /* e = [-]D[.DDD]e[+-]XX */
    const char *p   = e;
    bool        neg = *p == '-';
    if (neg) p++;
    char digits[24];
    int  nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.') digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd]  = '\0';
    int exp10   = atoi(p + 1);
    int decpt   = exp10 + 1; /* digits * 10^(decpt - nd) */
    char *o     = out;
    size_t left = cap;
#define PUT(...)                                                                                                       \
    do {                                                                                                               \
        int w_ = snprintf(o, left, __VA_ARGS__);                                                                       \
        if (w_ > 0 && (size_t)w_ < left) o += w_, left -= (size_t)w_;                                                  \
    } while (0)
    if (neg) PUT("-");
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            PUT("0.");
            for (int k = 0; k < -decpt; k++) PUT("0");
            PUT("%s", digits);
        } else if (decpt >= nd) {
            PUT("%s", digits);
            for (int k = nd; k < decpt; k++) PUT("0");
            PUT(".0");
        } else {
            PUT("%.*s.%s", decpt, digits, digits + decpt);
        }
    } else {
        PUT("%c", digits[0]);
        if (nd > 1) PUT(".%s", digits + 1);
        PUT("e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    }
#undef PUT
}

static bool py_printable(uint32_t cp)
{
    if (cp == ' ') return true;
    if (cp < 0x20 || cp == 0x7f) return false;
    if (cp < 0x7f) return true;
    if (cp >= 0xDC80 && cp <= 0xDCFF) return false; /* an invalid byte's stand-in */
    int8_t t = u_charType((UChar32)cp);
    return !(t == U_CONTROL_CHAR || t == U_FORMAT_CHAR || t == U_SURROGATE || t == U_PRIVATE_USE_CHAR ||
             t == U_UNASSIGNED || t == U_LINE_SEPARATOR || t == U_PARAGRAPH_SEPARATOR || t == U_SPACE_SEPARATOR);
}

static void repr_str(struct jctx *c, struct jbuf *b, const struct jstr *s)
{
    bool sq = memchr(s->s, '\'', s->len) != NULL, dq = memchr(s->s, '"', s->len) != NULL;
    char q  = sq && !dq ? '"' : '\'';
    jbuf_putc(c, b, q);
    for (size_t i = 0; i < s->len;) {
        uint32_t cp;
        size_t   k       = jstr_next(s, i, &cp);
        bool     content = s->mask && s->mask[i];
        char     esc[16];
        if (cp == (uint32_t)q || cp == '\\') snprintf(esc, sizeof esc, "\\%c", (char)cp);
        else if (cp == '\n') snprintf(esc, sizeof esc, "\\n");
        else if (cp == '\r') snprintf(esc, sizeof esc, "\\r");
        else if (cp == '\t') snprintf(esc, sizeof esc, "\\t");
        else if (py_printable(cp)) {
            jbuf_put_marked(c, b, s->s + i, k, content);
            i += k;
            continue;
        } else if (cp < 0x100) snprintf(esc, sizeof esc, "\\x%02x", cp);
        else if (cp >= 0xDC80 && cp <= 0xDCFF) snprintf(esc, sizeof esc, "\\udc%02x", cp & 0xFF);
        else if (cp < 0x10000) snprintf(esc, sizeof esc, "\\u%04x", cp);
        else snprintf(esc, sizeof esc, "\\U%08x", cp);
        jbuf_put_marked(c, b, esc, strlen(esc), content);
        i += k;
    }
    jbuf_putc(c, b, q);
}

static void str_or_repr(struct jctx *c, struct jbuf *b, struct jv v, bool repr, uint32_t depth)
{
    if (depth > 64) jfail(c, "a value nested deeper than 64 levels cannot be printed");
    char num[48];
    switch (v.kind) {
    case JV_UNDEF: return;
    case JV_NONE: jbuf_puts(c, b, "None"); return;
    case JV_BOOL: jbuf_puts(c, b, v.u.b ? "True" : "False"); return;
    case JV_INT: snprintf(num, sizeof num, "%lld", (long long)v.u.i); jbuf_puts(c, b, num); return;
    case JV_FLOAT: float_repr(v.u.f, num, sizeof num); jbuf_puts(c, b, num); return;
    case JV_STR:
        if (repr) repr_str(c, b, v.u.s);
        else jbuf_putv(c, b, v.u.s);
        return;
    case JV_LIST:
        jbuf_putc(c, b, v.u.l->tuple ? '(' : '[');
        for (size_t i = 0; i < v.u.l->n; i++) {
            if (i) jbuf_puts(c, b, ", ");
            str_or_repr(c, b, v.u.l->v[i], true, depth + 1);
        }
        if (v.u.l->tuple && v.u.l->n == 1) jbuf_putc(c, b, ',');
        jbuf_putc(c, b, v.u.l->tuple ? ')' : ']');
        return;
    case JV_NS:
        jbuf_puts(c, b, "<Namespace ");
        /* fall through */
    case JV_DICT:
        jbuf_putc(c, b, '{');
        for (size_t i = 0; i < v.u.d->n; i++) {
            if (i) jbuf_puts(c, b, ", ");
            str_or_repr(c, b, v.u.d->k[i], true, depth + 1);
            jbuf_puts(c, b, ": ");
            str_or_repr(c, b, v.u.d->v[i], true, depth + 1);
        }
        jbuf_putc(c, b, '}');
        if (v.kind == JV_NS) jbuf_putc(c, b, '>');
        return;
    case JV_LOOP:
        snprintf(num, sizeof num, "<LoopContext %zu/%zu>", v.u.loop->index0 + 1, v.u.loop->length);
        jbuf_puts(c, b, num);
        return;
    case JV_MACRO:
        jbuf_puts(c, b, "<Macro '");
        jbuf_puts(c, b, v.u.macro->name);
        jbuf_puts(c, b, "'>");
        return;
    default: jbuf_puts(c, b, "<built-in function>"); return;
    }
}

void jv_str_into(struct jctx *c, struct jbuf *b, struct jv v) { str_or_repr(c, b, v, false, 0); }
void jv_repr_into(struct jctx *c, struct jbuf *b, struct jv v) { str_or_repr(c, b, v, true, 0); }

struct jv jv_to_str(struct jctx *c, struct jv v)
{
    if (v.kind == JV_STR) return v;
    struct jbuf b = {0};
    jv_str_into(c, &b, v);
    return jbuf_value(c, &b);
}

/* ---- json.dumps ------------------------------------------------------------------------- */
static void json_str(struct jctx *c, struct jbuf *b, const struct jstr *s, bool ensure_ascii)
{
    jbuf_putc(c, b, '"');
    for (size_t i = 0; i < s->len;) {
        uint32_t cp;
        size_t   k       = jstr_next(s, i, &cp);
        bool     content = s->mask && s->mask[i];
        char     esc[16];
        esc[0] = '\0';
        switch (cp) {
        case '"': snprintf(esc, sizeof esc, "\\\""); break;
        case '\\': snprintf(esc, sizeof esc, "\\\\"); break;
        case '\n': snprintf(esc, sizeof esc, "\\n"); break;
        case '\r': snprintf(esc, sizeof esc, "\\r"); break;
        case '\t': snprintf(esc, sizeof esc, "\\t"); break;
        case '\b': snprintf(esc, sizeof esc, "\\b"); break;
        case '\f': snprintf(esc, sizeof esc, "\\f"); break;
        default:
            if (cp < 0x20) snprintf(esc, sizeof esc, "\\u%04x", cp);
            else if (ensure_ascii && cp >= 0x10000) {
                uint32_t v = cp - 0x10000;
                snprintf(esc, sizeof esc, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
            } else if (ensure_ascii && cp >= 0x80) snprintf(esc, sizeof esc, "\\u%04x", cp);
        }
        if (esc[0]) jbuf_put_marked(c, b, esc, strlen(esc), content);
        else jbuf_put_marked(c, b, s->s + i, k, content);
        i += k;
    }
    jbuf_putc(c, b, '"');
}

static void json_newline(struct jctx *c, struct jbuf *b, const struct jtojson *o, uint32_t level)
{
    jbuf_putc(c, b, '\n');
    size_t n = (size_t)o->indent * level;
    for (size_t i = 0; i < n; i++) jbuf_putc(c, b, ' ');
}

static void json_key(struct jctx *c, struct jbuf *b, struct jv k, const struct jtojson *o)
{
    char num[48];
    switch (k.kind) {
    case JV_STR: json_str(c, b, k.u.s, o->ensure_ascii); return;
    case JV_INT: snprintf(num, sizeof num, "\"%lld\"", (long long)k.u.i); break;
    case JV_FLOAT: {
        char f[40];
        float_repr(k.u.f, f, sizeof f);
        snprintf(num, sizeof num, "\"%s\"", !strcmp(f, "inf") ? "Infinity" : !strcmp(f, "-inf") ? "-Infinity" : !strcmp(f, "nan") ? "NaN" : f);
        break;
    }
    case JV_BOOL: snprintf(num, sizeof num, "\"%s\"", k.u.b ? "true" : "false"); break;
    case JV_NONE: snprintf(num, sizeof num, "\"null\""); break;
    default: jfail(c, "tojson: keys must be str, int, float, bool or None, not %s", jv_type_name(k));
    }
    jbuf_puts(c, b, num);
}

static void json_value(struct jctx *c, struct jbuf *b, struct jv v, const struct jtojson *o, uint32_t level)
{
    if (level > 64) jfail(c, "tojson: a value nested deeper than 64 levels");
    char num[48];
    switch (v.kind) {
    case JV_NONE: jbuf_puts(c, b, "null"); return;
    case JV_BOOL: jbuf_puts(c, b, v.u.b ? "true" : "false"); return;
    case JV_INT: snprintf(num, sizeof num, "%lld", (long long)v.u.i); jbuf_puts(c, b, num); return;
    case JV_FLOAT:
        float_repr(v.u.f, num, sizeof num);
        jbuf_puts(c, b, !strcmp(num, "inf") ? "Infinity" : !strcmp(num, "-inf") ? "-Infinity" : !strcmp(num, "nan") ? "NaN" : num);
        return;
    case JV_STR: json_str(c, b, v.u.s, o->ensure_ascii); return;
    case JV_LIST:
        if (!v.u.l->n) {
            jbuf_puts(c, b, "[]");
            return;
        }
        jbuf_putc(c, b, '[');
        for (size_t i = 0; i < v.u.l->n; i++) {
            if (i) jbuf_puts(c, b, o->item_sep);
            if (o->indent >= 0) json_newline(c, b, o, level + 1);
            json_value(c, b, v.u.l->v[i], o, level + 1);
        }
        if (o->indent >= 0) json_newline(c, b, o, level);
        jbuf_putc(c, b, ']');
        return;
    case JV_DICT: {
        const struct jdict *d = v.u.d;
        if (!d->n) {
            jbuf_puts(c, b, "{}");
            return;
        }
        size_t *order = jalloc_array(c, d->n, sizeof *order);
        for (size_t i = 0; i < d->n; i++) order[i] = i;
        if (o->sort_keys) /* insertion sort: dicts in templates are small, steps count it */
            for (size_t i = 1; i < d->n; i++) {
                jstep(c, i);
                for (size_t j = i; j > 0 && jv_compare(c, d->k[order[j - 1]], d->k[order[j]]) > 0; j--) {
                    size_t t = order[j];
                    order[j] = order[j - 1], order[j - 1] = t;
                }
            }
        jbuf_putc(c, b, '{');
        for (size_t i = 0; i < d->n; i++) {
            if (i) jbuf_puts(c, b, o->item_sep);
            if (o->indent >= 0) json_newline(c, b, o, level + 1);
            json_key(c, b, d->k[order[i]], o);
            jbuf_puts(c, b, o->key_sep);
            json_value(c, b, d->v[order[i]], o, level + 1);
        }
        if (o->indent >= 0) json_newline(c, b, o, level);
        jbuf_putc(c, b, '}');
        return;
    }
    default: jfail(c, "tojson: Object of type %s is not JSON serializable", jv_type_name(v));
    }
}

struct jv jv_tojson(struct jctx *c, struct jv v, const struct jtojson *o)
{
    struct jbuf b = {0};
    json_value(c, &b, v, o, 0);
    return jbuf_value(c, &b);
}

/* ---- comparison ------------------------------------------------------------------------- */
static bool is_num(struct jv v) { return v.kind == JV_INT || v.kind == JV_FLOAT || v.kind == JV_BOOL; }
static double num_f(struct jv v) { return v.kind == JV_FLOAT ? v.u.f : v.kind == JV_INT ? (double)v.u.i : (double)v.u.b; }
static int64_t num_i(struct jv v) { return v.kind == JV_INT ? v.u.i : (int64_t)v.u.b; }

bool jv_equal(struct jctx *c, struct jv a, struct jv b)
{
    if (is_num(a) && is_num(b)) {
        if (a.kind != JV_FLOAT && b.kind != JV_FLOAT) return num_i(a) == num_i(b);
        return num_f(a) == num_f(b);
    }
    if (a.kind != b.kind) return false;
    switch (a.kind) {
    case JV_UNDEF:
    case JV_NONE: return true;
    case JV_STR: jstep(c, a.u.s->len / 64); return a.u.s->len == b.u.s->len && memcmp(a.u.s->s, b.u.s->s, a.u.s->len) == 0;
    case JV_LIST:
        if (a.u.l->tuple != b.u.l->tuple || a.u.l->n != b.u.l->n) return false;
        for (size_t i = 0; i < a.u.l->n; i++) {
            jstep(c, 1);
            if (!jv_equal(c, a.u.l->v[i], b.u.l->v[i])) return false;
        }
        return true;
    case JV_DICT:
        if (a.u.d->n != b.u.d->n) return false;
        for (size_t i = 0; i < a.u.d->n; i++) {
            const struct jv *o = jdict_get(c, b.u.d, a.u.d->k[i]);
            if (!o || !jv_equal(c, a.u.d->v[i], *o)) return false;
        }
        return true;
    case JV_NS: return a.u.d == b.u.d;
    case JV_LOOP: return a.u.loop == b.u.loop;
    case JV_MACRO: return a.u.macro == b.u.macro;
    default: return a.fn == b.fn && a.u.self == b.u.self;
    }
}

int jv_compare(struct jctx *c, struct jv a, struct jv b)
{
    if (is_num(a) && is_num(b)) {
        if (a.kind != JV_FLOAT && b.kind != JV_FLOAT) return num_i(a) < num_i(b) ? -1 : num_i(a) > num_i(b);
        double x = num_f(a), y = num_f(b);
        return x < y ? -1 : x > y;
    }
    if (a.kind == JV_STR && b.kind == JV_STR) {
        /* UTF-8 byte order is code point order */
        size_t n = a.u.s->len < b.u.s->len ? a.u.s->len : b.u.s->len;
        int    r = n ? memcmp(a.u.s->s, b.u.s->s, n) : 0;
        if (r) return r < 0 ? -1 : 1;
        return a.u.s->len < b.u.s->len ? -1 : a.u.s->len > b.u.s->len;
    }
    if (a.kind == JV_LIST && b.kind == JV_LIST && a.u.l->tuple == b.u.l->tuple) {
        for (size_t i = 0; i < a.u.l->n && i < b.u.l->n; i++) {
            jstep(c, 1);
            if (!jv_equal(c, a.u.l->v[i], b.u.l->v[i])) return jv_compare(c, a.u.l->v[i], b.u.l->v[i]);
        }
        return a.u.l->n < b.u.l->n ? -1 : a.u.l->n > b.u.l->n;
    }
    if (a.kind == JV_UNDEF) jv_undefined_fail(c, a);
    if (b.kind == JV_UNDEF) jv_undefined_fail(c, b);
    jfail(c, "'<' not supported between instances of '%s' and '%s'", jv_type_name(a), jv_type_name(b));
}

size_t jv_length(struct jctx *c, struct jv v)
{
    switch (v.kind) {
    case JV_UNDEF: return 0;
    case JV_STR: jstep(c, v.u.s->len / 64); return jstr_count_cps(v.u.s);
    case JV_LIST: return v.u.l->n;
    case JV_DICT: return v.u.d->n;
    default: jfail(c, "object of type '%s' has no len()", jv_type_name(v));
    }
}

const struct jlist *jv_iterate(struct jctx *c, struct jv v)
{
    switch (v.kind) {
    case JV_UNDEF: return jv_list(c, 0, false).u.l;
    case JV_LIST: return v.u.l;
    case JV_DICT: {
        struct jv l = jv_list(c, v.u.d->n, false);
        memcpy(l.u.l->v, v.u.d->k, v.u.d->n * sizeof *v.u.d->k);
        return l.u.l;
    }
    case JV_STR: {
        size_t    n = jstr_count_cps(v.u.s);
        struct jv l = jv_list(c, n, false);
        for (size_t i = 0, k = 0; i < v.u.s->len; k++) {
            uint32_t cp;
            size_t   w = jstr_next(v.u.s, i, &cp);
            l.u.l->v[k] = jstr_sub(c, v.u.s, i, w);
            i += w;
        }
        return l.u.l;
    }
    default: jfail(c, "'%s' object is not iterable", jv_type_name(v));
    }
}
