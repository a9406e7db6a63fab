/* wgfuse — Jinja builtins: the filters, tests, string/dict methods and global functions
 * chat templates use, with Jinja2's / Python's semantics (Unicode-aware strip, split,
 * upper, lower through ICU's full case mapping as Python's str.upper does), plus
 * transformers' globals raise_exception and strftime_now.
 *
 * The sandbox: lists and dicts are immutable (ImmutableSandboxedEnvironment: append, pop,
 * update... are refused); namespace() attributes are set only by {% set ns.x = ... %}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unicode/uchar.h>
#include <unicode/ustring.h>

#include "llm/jinja/jinja_internal.h"
#include "llm/tokenizer_internal.h"

/* ---- argument binding --------------------------------------------------------------------- */
/* Bind positional args then keywords to params[0..np). given[i] says whether param i came. */
static void bind(struct jctx *c, const char *what, const char *const *params, size_t np, size_t n,
                 const struct jv *args, const char *const *kw, struct jv *out, bool *given)
{
    for (size_t i = 0; i < np; i++) out[i] = jv_undef(NULL), given[i] = false;
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        if (!kw || !kw[i]) {
            if (pos >= np) jfail(c, "%s takes at most %zu argument%s (%zu given)", what, np, np == 1 ? "" : "s", n);
            out[pos] = args[i], given[pos] = true, pos++;
            continue;
        }
        size_t k = 0;
        while (k < np && strcmp(params[k], kw[i]) != 0) k++;
        if (k == np) jfail(c, "%s got an unexpected keyword argument '%s'", what, kw[i]);
        if (given[k]) jfail(c, "%s got multiple values for argument '%s'", what, kw[i]);
        out[k] = args[i], given[k] = true;
    }
}

static const struct jstr *want_str(struct jctx *c, const char *what, struct jv v)
{
    if (v.kind == JV_UNDEF) jv_undefined_fail(c, v);
    if (v.kind != JV_STR) jfail(c, "%s: expected a string, got %s", what, jv_type_name(v));
    return v.u.s;
}

static int64_t want_int(struct jctx *c, const char *what, struct jv v)
{
    if (v.kind == JV_INT) return v.u.i;
    if (v.kind == JV_BOOL) return v.u.b;
    if (v.kind == JV_UNDEF) jv_undefined_fail(c, v);
    jfail(c, "%s: expected an integer, got %s", what, jv_type_name(v));
}

/* soft_str: str() of anything (Undefined -> "") */
static const struct jstr *soft_str(struct jctx *c, struct jv v) { return jv_to_str(c, v).u.s; }

static bool any_mask(const struct jstr *s)
{
    return s->mask != NULL; /* jv_str / jbuf_value keep a mask only when a byte is set */
}

/* ---- string helpers --------------------------------------------------------------------- */
/* Is code point cp in the set `chars` (NULL: whitespace)? */
static bool in_chars(const struct jstr *chars, uint32_t cp)
{
    if (!chars) return jpy_isspace(cp);
    for (size_t i = 0; i < chars->len;) {
        uint32_t x;
        i += jstr_next(chars, i, &x);
        if (x == cp) return true;
    }
    return false;
}

static struct jv strip(struct jctx *c, const struct jstr *s, const struct jstr *chars, bool left, bool right)
{
    size_t a = 0, b = s->len;
    jstep(c, s->len / 16);
    /* each character tested against the set: O(len * |chars|), counted */
    if (chars) jstep(c, (uint64_t)(s->len / 16 + 1) * (chars->len / 16 + 1));
    if (left)
        while (a < b) {
            uint32_t cp;
            size_t   k = jstr_next(s, a, &cp);
            if (!in_chars(chars, cp)) break;
            a += k;
        }
    if (right)
        while (b > a) {
            size_t p = b - 1;
            while (p > a && ((unsigned char)s->s[p] & 0xC0) == 0x80 && b - p < 4) p--;
            uint32_t cp;
            size_t   k = jstr_next(s, p, &cp);
            if (p + k != b) p = b - 1, k = jstr_next(s, p, &cp); /* a stray continuation byte */
            if (!in_chars(chars, cp)) break;
            b = p;
        }
    return jstr_sub(c, s, a, b - a);
}

/* memmem (glibc's two-way search): linear, where a naive scan is O(len * sub) */
static size_t find_bytes(const struct jstr *s, size_t from, const struct jstr *sub)
{
    if (sub->len == 0) return from;
    if (from > s->len) return SIZE_MAX;
    const char *p = memmem(s->s + from, s->len - from, sub->s, sub->len);
    return p ? (size_t)(p - s->s) : SIZE_MAX;
}

static struct jv split(struct jctx *c, const struct jstr *s, const struct jstr *sep, int64_t maxsplit)
{
    jstep(c, s->len / 8);
    struct jv parts[64];
    size_t    np = 0, cap = 64;
    struct jv *v = parts;
    /* collected into a growing array in the arena past 64 */
#define PUSH(x)                                                                                                        \
    do {                                                                                                               \
        if (np == cap) {                                                                                               \
            struct jv *nv = jalloc_array(c, cap * 2, sizeof *nv);                                                      \
            memcpy(nv, v, np * sizeof *nv);                                                                            \
            v = nv, cap *= 2;                                                                                          \
        }                                                                                                              \
        v[np++] = (x);                                                                                                 \
    } while (0)
    if (sep) {
        if (!sep->len) jfail(c, "split: empty separator");
        size_t a = 0, p;
        while ((maxsplit < 0 || (int64_t)np < maxsplit) && (p = find_bytes(s, a, sep)) != SIZE_MAX) {
            PUSH(jstr_sub(c, s, a, p - a));
            a = p + sep->len;
        }
        PUSH(jstr_sub(c, s, a, s->len - a));
    } else {
        size_t i = 0;
        for (;;) {
            uint32_t cp;
            while (i < s->len) {
                size_t k = jstr_next(s, i, &cp);
                if (!jpy_isspace(cp)) break;
                i += k;
            }
            if (i >= s->len) break;
            if (maxsplit >= 0 && (int64_t)np >= maxsplit) {
                /* the rest, trailing whitespace stripped */
                PUSH(strip(c, &(struct jstr){.s = s->s + i, .len = s->len - i, .mask = s->mask ? s->mask + i : NULL},
                           NULL, false, true));
                break;
            }
            size_t a = i;
            while (i < s->len) {
                size_t k = jstr_next(s, i, &cp);
                if (jpy_isspace(cp)) break;
                i += k;
            }
            PUSH(jstr_sub(c, s, a, i - a));
        }
    }
#undef PUSH
    struct jv l = jv_list(c, np, false);
    memcpy(l.u.l->v, v, np * sizeof *v);
    return l;
}

/* Python str.upper()/lower() (full case mapping, root locale) through ICU on each run of
 * valid UTF-8; invalid bytes pass through. The result is all content if any input byte was. */
static struct jv change_case(struct jctx *c, const struct jstr *s, bool upper)
{
    struct jbuf b = {0};
    jstep(c, s->len / 4);
    for (size_t i = 0; i < s->len;) {
        size_t j = i;
        uint32_t cp;
        size_t   k;
        while (j < s->len && (k = wgf__utf8_next((const unsigned char *)s->s + j, s->len - j, &cp)) > 0) j += k;
        if (j > i) {
            size_t n  = j - i;
            if (n > INT32_MAX / 8) jfail(c, "%s: string too long", upper ? "upper" : "lower");
            UChar *u  = jalloc_array(c, n, 2 * sizeof *u);
            int32_t un = 0;
            for (size_t p = i; p < j;) {
                p += wgf__utf8_next((const unsigned char *)s->s + p, j - p, &cp);
                if (cp >= 0x10000) {
                    u[un++] = (UChar)(0xD800u + ((cp - 0x10000u) >> 10));
                    u[un++] = (UChar)(0xDC00u + ((cp - 0x10000u) & 0x3FFu));
                } else {
                    u[un++] = (UChar)cp;
                }
            }
            int32_t    cap = un * 3 + 16;
            UChar     *o   = jalloc_array(c, (size_t)cap, sizeof *o);
            UErrorCode e   = U_ZERO_ERROR;
            int32_t    on  = upper ? u_strToUpper(o, cap, u, un, "", &e) : u_strToLower(o, cap, u, un, "", &e);
            if (U_FAILURE(e) || on < 0 || on > cap) jfail(c, "%s: ICU case mapping failed", upper ? "upper" : "lower");
            for (int32_t q = 0; q < on; q++) {
                uint32_t x = o[q];
                if (x >= 0xD800 && x <= 0xDBFF && q + 1 < on && o[q + 1] >= 0xDC00 && o[q + 1] <= 0xDFFF)
                    x = 0x10000u + ((x - 0xD800u) << 10) + (o[++q] - 0xDC00u);
                char enc[4];
                jbuf_put(c, &b, enc, wgf__utf8_put(x, enc), NULL);
            }
            i = j;
        }
        if (i < s->len) jbuf_put(c, &b, s->s + i, 1, NULL), i++;
    }
    struct jv r = jbuf_value(c, &b);
    return any_mask(s) ? jv_str_all(c, r.u.s->s, r.u.s->len, true) : r;
}

/* Python str.capitalize() (first character title-cased, the rest lower) and str.title()
 * (each run of cased letters starts title-cased), with ICU's simple mappings. */
static struct jv title_case(struct jctx *c, const struct jstr *s, bool all_words)
{
    struct jbuf b = {0};
    bool        prev_cased = false, first = true;
    for (size_t i = 0; i < s->len;) {
        uint32_t cp;
        size_t   k = jstr_next(s, i, &cp);
        uint32_t o = cp;
        if (cp < 0xDC80 || cp > 0xDCFF) {
            bool start = all_words ? !prev_cased : first;
            o          = (uint32_t)(start ? u_totitle((UChar32)cp) : u_tolower((UChar32)cp));
            prev_cased = u_hasBinaryProperty((UChar32)cp, UCHAR_CASED);
        }
        first = false;
        if (cp >= 0xDC80 && cp <= 0xDCFF) jbuf_put(c, &b, s->s + i, 1, NULL);
        else {
            char enc[4];
            jbuf_put(c, &b, enc, wgf__utf8_put(o, enc), NULL);
        }
        i += k;
    }
    struct jv r = jbuf_value(c, &b);
    return any_mask(s) ? jv_str_all(c, r.u.s->s, r.u.s->len, true) : r;
}

/* str.replace(old, new[, count]): the kept bytes keep their marks, `new` brings its own */
static struct jv replace(struct jctx *c, const struct jstr *s, const struct jstr *old, const struct jstr *nw, int64_t count)
{
    struct jbuf b = {0};
    size_t      a = 0, n = 0;
    jstep(c, s->len / 8);
    if (!old->len) {
        /* Python inserts `new` before every character and at the end */
        for (size_t i = 0; i <= s->len && (count < 0 || (int64_t)n < count);) {
            jbuf_putv(c, &b, nw);
            n++;
            if (i == s->len) {
                a = i;
                break;
            }
            uint32_t cp;
            size_t   k = jstr_next(s, i, &cp);
            jbuf_put(c, &b, s->s + i, k, s->mask ? s->mask + i : NULL);
            i += k, a = i;
        }
        jbuf_put(c, &b, s->s + a, s->len - a, s->mask ? s->mask + a : NULL);
        return jbuf_value(c, &b);
    }
    size_t p;
    while ((count < 0 || (int64_t)n < count) && (p = find_bytes(s, a, old)) != SIZE_MAX) {
        jbuf_put(c, &b, s->s + a, p - a, s->mask ? s->mask + a : NULL);
        jbuf_putv(c, &b, nw);
        a = p + old->len, n++;
    }
    jbuf_put(c, &b, s->s + a, s->len - a, s->mask ? s->mask + a : NULL);
    return jbuf_value(c, &b);
}

static bool starts_or_ends(struct jctx *c, const struct jstr *s, struct jv x, bool ends, const char *what)
{
    if (x.kind == JV_LIST && x.u.l->tuple) {
        for (size_t i = 0; i < x.u.l->n; i++)
            if (starts_or_ends(c, s, x.u.l->v[i], ends, what)) return true;
        return false;
    }
    const struct jstr *p = want_str(c, what, x);
    if (p->len > s->len) return false;
    return memcmp(ends ? s->s + s->len - p->len : s->s, p->s, p->len) == 0;
}

static struct jv join(struct jctx *c, const struct jlist *l, const struct jstr *sep, const char *attr)
{
    struct jbuf b = {0};
    for (size_t i = 0; i < l->n; i++) {
        if (i && sep) jbuf_putv(c, &b, sep);
        struct jv v = l->v[i];
        if (attr) {
            const struct jv *a = v.kind == JV_DICT ? jdict_get_str(c, v.u.d, attr) : NULL;
            v                  = a ? *a : jv_undef(NULL);
        }
        jv_str_into(c, &b, v);
    }
    return jbuf_value(c, &b);
}

/* ---- tests ------------------------------------------------------------------------------ */
enum {
    TS_DEFINED, TS_UNDEFINED, TS_NONE, TS_STRING, TS_MAPPING, TS_ITERABLE, TS_SEQUENCE, TS_NUMBER, TS_INTEGER,
    TS_FLOAT, TS_BOOLEAN, TS_TRUE, TS_FALSE, TS_ODD, TS_EVEN, TS_DIVISIBLEBY, TS_EQ, TS_NE, TS_LT, TS_LE, TS_GT, TS_GE,
    TS_IN, TS_LOWER, TS_UPPER, TS_CALLABLE, TS_SAMEAS, TS_COUNT
};
static const struct {
    const char *name;
    int         id;
} test_names[] = {
    {"defined", TS_DEFINED}, {"undefined", TS_UNDEFINED}, {"none", TS_NONE}, {"string", TS_STRING},
    {"mapping", TS_MAPPING}, {"iterable", TS_ITERABLE}, {"sequence", TS_SEQUENCE}, {"number", TS_NUMBER},
    {"integer", TS_INTEGER}, {"float", TS_FLOAT}, {"boolean", TS_BOOLEAN}, {"true", TS_TRUE}, {"false", TS_FALSE},
    {"odd", TS_ODD}, {"even", TS_EVEN}, {"divisibleby", TS_DIVISIBLEBY}, {"eq", TS_EQ}, {"equalto", TS_EQ},
    {"ne", TS_NE}, {"lt", TS_LT}, {"lessthan", TS_LT}, {"le", TS_LE}, {"gt", TS_GT}, {"greaterthan", TS_GT},
    {"ge", TS_GE}, {"in", TS_IN}, {"lower", TS_LOWER}, {"upper", TS_UPPER}, {"callable", TS_CALLABLE},
    {"sameas", TS_SAMEAS},
};

int jtest_id(const char *name)
{
    for (size_t i = 0; i < sizeof test_names / sizeof test_names[0]; i++)
        if (!strcmp(name, test_names[i].name)) return test_names[i].id;
    return -1;
}

static bool contains(struct jctx *c, struct jv hay, struct jv needle)
{
    switch (hay.kind) {
    case JV_STR: {
        const struct jstr *n = want_str(c, "'in <string>'", needle);
        jstep(c, hay.u.s->len / 8);
        return find_bytes(hay.u.s, 0, n) != SIZE_MAX;
    }
    case JV_LIST:
        jstep(c, hay.u.l->n / 4);
        for (size_t i = 0; i < hay.u.l->n; i++)
            if (jv_equal(c, hay.u.l->v[i], needle)) return true;
        return false;
    case JV_DICT: return jdict_get(c, hay.u.d, needle) != NULL;
    case JV_UNDEF: return false;
    default: jfail(c, "argument of type '%s' is not iterable", jv_type_name(hay));
    }
}

static bool is_case(struct jctx *c, const struct jstr *s, bool upper)
{
    /* Python: at least one cased character and no cased character of the other case */
    bool cased = false;
    jstep(c, s->len / 16);
    for (size_t i = 0; i < s->len;) {
        uint32_t cp;
        i += jstr_next(s, i, &cp);
        if (upper ? u_islower((UChar32)cp) : u_isupper((UChar32)cp)) return false;
        if (upper ? u_isupper((UChar32)cp) : u_islower((UChar32)cp)) cased = true;
    }
    return cased;
}

bool jtest_apply(struct jctx *c, int id, struct jv v, size_t n, const struct jv *args)
{
    int want = (id == TS_DIVISIBLEBY || id == TS_EQ || id == TS_NE || id == TS_LT || id == TS_LE || id == TS_GT ||
                id == TS_GE || id == TS_IN || id == TS_SAMEAS)
                   ? 1
                   : 0;
    if (n != (size_t)want) jfail(c, "test takes %d argument%s (%zu given)", want, want == 1 ? "" : "s", n);
    switch (id) {
    case TS_DEFINED: return v.kind != JV_UNDEF;
    case TS_UNDEFINED: return v.kind == JV_UNDEF;
    case TS_NONE: return v.kind == JV_NONE;
    case TS_STRING: return v.kind == JV_STR;
    case TS_MAPPING: return v.kind == JV_DICT;
    case TS_ITERABLE: return v.kind == JV_STR || v.kind == JV_LIST || v.kind == JV_DICT || v.kind == JV_UNDEF;
    case TS_SEQUENCE: return v.kind == JV_STR || v.kind == JV_LIST || v.kind == JV_DICT || v.kind == JV_UNDEF;
    case TS_NUMBER: return v.kind == JV_INT || v.kind == JV_FLOAT || v.kind == JV_BOOL;
    case TS_INTEGER: return v.kind == JV_INT;
    case TS_FLOAT: return v.kind == JV_FLOAT;
    case TS_BOOLEAN: return v.kind == JV_BOOL;
    case TS_TRUE: return v.kind == JV_BOOL && v.u.b;
    case TS_FALSE: return v.kind == JV_BOOL && !v.u.b;
    case TS_ODD:
    case TS_EVEN: {
        int64_t x = want_int(c, id == TS_ODD ? "odd" : "even", v);
        return (x % 2 != 0) == (id == TS_ODD);
    }
    case TS_DIVISIBLEBY: {
        int64_t x = want_int(c, "divisibleby", v), d = want_int(c, "divisibleby", args[0]);
        if (d == 0) jfail(c, "divisibleby: integer division or modulo by zero");
        return d == -1 || x % d == 0;
    }
    case TS_EQ: return jv_equal(c, v, args[0]);
    case TS_NE: return !jv_equal(c, v, args[0]);
    case TS_LT: return jv_compare(c, v, args[0]) < 0;
    case TS_LE: return jv_compare(c, v, args[0]) <= 0;
    case TS_GT: return jv_compare(c, v, args[0]) > 0;
    case TS_GE: return jv_compare(c, v, args[0]) >= 0;
    case TS_IN: return contains(c, args[0], v);
    case TS_LOWER: return v.kind == JV_STR ? is_case(c, v.u.s, false) : is_case(c, soft_str(c, v), false);
    case TS_UPPER: return v.kind == JV_STR ? is_case(c, v.u.s, true) : is_case(c, soft_str(c, v), true);
    case TS_CALLABLE: return v.kind == JV_MACRO || v.kind == JV_FUNC;
    case TS_SAMEAS:
        if (v.kind != args[0].kind) return false;
        if (v.kind == JV_NONE || v.kind == JV_UNDEF) return true;
        if (v.kind == JV_BOOL) return v.u.b == args[0].u.b;
        if (v.kind == JV_INT) return v.u.i == args[0].u.i;
        return v.kind != JV_FLOAT && v.u.self == args[0].u.self;
    default: jfail(c, "unknown test");
    }
}

/* ---- filters ---------------------------------------------------------------------------- */
enum {
    FL_ABS, FL_CAPITALIZE, FL_COUNT, FL_DEFAULT, FL_FIRST, FL_FLOAT, FL_INDENT, FL_INT, FL_ITEMS, FL_JOIN, FL_LAST,
    FL_LENGTH, FL_LIST, FL_LOWER, FL_MAP, FL_REJECT, FL_REJECTATTR, FL_REPLACE, FL_REVERSE, FL_SAFE, FL_SELECT,
    FL_SELECTATTR, FL_STRING, FL_TITLE, FL_TOJSON, FL_TRIM, FL_UNIQUE, FL_UPPER, FL_DICTSORT, FL_SORT, FL_ROUND,
    FL_SUM, FL_BATCH, FL_WORDCOUNT,
};
static const struct {
    const char *name;
    int         id;
} filter_names[] = {
    {"abs", FL_ABS}, {"capitalize", FL_CAPITALIZE}, {"count", FL_COUNT}, {"default", FL_DEFAULT}, {"d", FL_DEFAULT},
    {"first", FL_FIRST}, {"float", FL_FLOAT}, {"indent", FL_INDENT}, {"int", FL_INT}, {"items", FL_ITEMS},
    {"join", FL_JOIN}, {"last", FL_LAST}, {"length", FL_LENGTH}, {"list", FL_LIST}, {"lower", FL_LOWER},
    {"map", FL_MAP}, {"reject", FL_REJECT}, {"rejectattr", FL_REJECTATTR}, {"replace", FL_REPLACE},
    {"reverse", FL_REVERSE}, {"safe", FL_SAFE}, {"select", FL_SELECT}, {"selectattr", FL_SELECTATTR},
    {"string", FL_STRING}, {"title", FL_TITLE}, {"tojson", FL_TOJSON}, {"trim", FL_TRIM}, {"unique", FL_UNIQUE},
    {"upper", FL_UPPER}, {"dictsort", FL_DICTSORT}, {"sort", FL_SORT}, {"round", FL_ROUND}, {"sum", FL_SUM},
    {"batch", FL_BATCH}, {"wordcount", FL_WORDCOUNT},
};

int jfilter_id(const char *name)
{
    for (size_t i = 0; i < sizeof filter_names / sizeof filter_names[0]; i++)
        if (!strcmp(name, filter_names[i].name)) return filter_names[i].id;
    return -1;
}

static struct jv attr_of(struct jctx *c, struct jv v, const char *attr)
{
    /* "a.b" walks dicts; a digit part indexes a list */
    char   part[128];
    size_t n = 0;
    for (const char *p = attr;; p++) {
        if (*p && *p != '.') {
            if (n + 1 >= sizeof part) jfail(c, "attribute path too long");
            part[n++] = *p;
            continue;
        }
        part[n] = '\0';
        if (v.kind == JV_DICT) {
            const struct jv *x = jdict_get_str(c, v.u.d, part);
            v                  = x ? *x : jv_undef(NULL);
        } else if (v.kind == JV_LIST && n && part[0] >= '0' && part[0] <= '9') {
            size_t i = (size_t)strtoull(part, NULL, 10);
            v        = i < v.u.l->n ? v.u.l->v[i] : jv_undef(NULL);
        } else if (v.kind == JV_UNDEF) {
            jv_undefined_fail(c, v);
        } else {
            v = jv_undef(NULL);
        }
        if (!*p) return v;
        n = 0;
    }
}

/* select/reject/selectattr/rejectattr: args[0] (attr for *attr) then test name and its args */
static struct jv select_items(struct jctx *c, struct jv in, size_t n, const struct jv *args, bool attr, bool keep)
{
    const struct jlist *l  = jv_iterate(c, in);
    size_t              ai = 0;
    const char         *an = NULL;
    if (attr) {
        if (n < 1) jfail(c, "%s: missing the attribute", keep ? "selectattr" : "rejectattr");
        an = want_str(c, "selectattr attribute", args[0])->s;
        ai = 1;
    }
    int test = -1;
    if (n > ai) test = jtest_id(want_str(c, "select test", args[ai])->s);
    if (n > ai && test < 0) jfail(c, "no test named '%s'", args[ai].u.s->s);
    struct jv out = jv_list(c, l->n, false);
    size_t    k   = 0;
    for (size_t i = 0; i < l->n; i++) {
        jstep(c, 1);
        struct jv v = an ? attr_of(c, l->v[i], an) : l->v[i];
        bool      t = test < 0 ? jv_truthy(v) : jtest_apply(c, test, v, n - ai - 1, args + ai + 1);
        if (t == keep) ((struct jlist *)out.u.l)->v[k++] = l->v[i];
    }
    ((struct jlist *)out.u.l)->n = k;
    return out;
}

static struct jv tojson_filter(struct jctx *c, struct jv in, size_t n, const struct jv *args, const char *const *kw)
{
    static const char *const p[] = {"ensure_ascii", "indent", "separators", "sort_keys"};
    struct jv                a[4];
    bool                     g[4];
    bind(c, "tojson", p, 4, n, args, kw, a, g);
    struct jtojson o = {.ensure_ascii = g[0] && jv_truthy(a[0]), .sort_keys = g[3] && jv_truthy(a[3]), .indent = -1};
    if (g[1] && a[1].kind != JV_NONE) {
        int64_t ind = want_int(c, "tojson indent", a[1]);
        if (ind < 0 || ind > 64) jfail(c, "tojson: indent %lld out of [0, 64]", (long long)ind);
        o.indent = (int)ind;
    }
    o.item_sep = o.indent >= 0 ? "," : ", ";
    o.key_sep  = ": ";
    if (g[2] && a[2].kind != JV_NONE) {
        if (a[2].kind != JV_LIST || a[2].u.l->n != 2) jfail(c, "tojson: separators must be a pair of strings");
        o.item_sep = want_str(c, "tojson separators", a[2].u.l->v[0])->s;
        o.key_sep  = want_str(c, "tojson separators", a[2].u.l->v[1])->s;
    }
    return jv_tojson(c, in, &o);
}

static void sort_values(struct jctx *c, struct jv *v, size_t n, bool reverse, const char *attr, bool by_value)
{
    /* insertion sort, counted in steps */
    for (size_t i = 1; i < n; i++) {
        jstep(c, i);
        for (size_t j = i; j > 0; j--) {
            struct jv a = v[j - 1], b = v[j];
            if (by_value) a = a.u.l->v[1], b = b.u.l->v[1];
            else if (v[j].kind == JV_LIST && v[j].u.l->tuple && !attr) a = v[j - 1].u.l->v[0], b = v[j].u.l->v[0];
            if (attr) a = attr_of(c, v[j - 1], attr), b = attr_of(c, v[j], attr);
            int r = jv_compare(c, a, b);
            if (reverse ? r >= 0 : r <= 0) break;
            struct jv t = v[j];
            v[j] = v[j - 1], v[j - 1] = t;
        }
    }
}

struct jv jfilter_apply(struct jctx *c, int id, struct jv in, size_t n, const struct jv *args, const char *const *kw)
{
    jstep(c, 1);
    struct jv a[4];
    bool      g[4];
    switch (id) {
    case FL_ABS:
        bind(c, "abs", NULL, 0, n, args, kw, a, g);
        if (in.kind == JV_INT) {
            if (in.u.i == INT64_MIN) jfail(c, "abs: integer overflow");
            return jv_int(in.u.i < 0 ? -in.u.i : in.u.i);
        }
        if (in.kind == JV_FLOAT) return jv_float(in.u.f < 0 ? -in.u.f : in.u.f);
        if (in.kind == JV_BOOL) return jv_int(in.u.b);
        jfail(c, "abs: bad operand type '%s'", jv_type_name(in));
    case FL_CAPITALIZE: bind(c, "capitalize", NULL, 0, n, args, kw, a, g); return title_case(c, soft_str(c, in), false);
    case FL_TITLE: bind(c, "title", NULL, 0, n, args, kw, a, g); return title_case(c, soft_str(c, in), true);
    case FL_UPPER: bind(c, "upper", NULL, 0, n, args, kw, a, g); return change_case(c, soft_str(c, in), true);
    case FL_LOWER: bind(c, "lower", NULL, 0, n, args, kw, a, g); return change_case(c, soft_str(c, in), false);
    case FL_COUNT:
    case FL_LENGTH: bind(c, "length", NULL, 0, n, args, kw, a, g); return jv_int((int64_t)jv_length(c, in));
    case FL_DEFAULT: {
        static const char *const p[] = {"default_value", "boolean"};
        bind(c, "default", p, 2, n, args, kw, a, g);
        bool use = in.kind == JV_UNDEF || (g[1] && jv_truthy(a[1]) && !jv_truthy(in));
        return use ? (g[0] ? a[0] : jv_str(c, "", 0, NULL)) : in;
    }
    case FL_FIRST:
    case FL_LAST: {
        bind(c, "first", NULL, 0, n, args, kw, a, g);
        const struct jlist *l = jv_iterate(c, in);
        if (!l->n) return jv_undef(id == FL_FIRST ? "No first item, sequence was empty." : "No last item, sequence was empty.");
        return l->v[id == FL_FIRST ? 0 : l->n - 1];
    }
    case FL_FLOAT: {
        static const char *const p[] = {"default"};
        bind(c, "float", p, 1, n, args, kw, a, g);
        if (in.kind == JV_FLOAT) return in;
        if (in.kind == JV_INT || in.kind == JV_BOOL) return jv_float(in.kind == JV_INT ? (double)in.u.i : in.u.b);
        if (in.kind == JV_STR) {
            char *end;
            double f = strtod(in.u.s->s, &end);
            if (end != in.u.s->s && !*end) return jv_float(f);
        }
        return g[0] ? a[0] : jv_float(0.0);
    }
    case FL_INT: {
        static const char *const p[] = {"default", "base"};
        bind(c, "int", p, 2, n, args, kw, a, g);
        if (in.kind == JV_INT) return in;
        if (in.kind == JV_BOOL) return jv_int(in.u.b);
        if (in.kind == JV_FLOAT && in.u.f > -9.2e18 && in.u.f < 9.2e18) return jv_int((int64_t)in.u.f);
        if (in.kind == JV_STR) {
            char     *end;
            long long x = strtoll(in.u.s->s, &end, g[1] ? (int)want_int(c, "int base", a[1]) : 10);
            if (end != in.u.s->s && !*end) return jv_int((int64_t)x);
        }
        return g[0] ? a[0] : jv_int(0);
    }
    case FL_INDENT: {
        static const char *const p[] = {"width", "first", "blank"};
        bind(c, "indent", p, 3, n, args, kw, a, g);
        const struct jstr *s = soft_str(c, in);
        struct jbuf        pad = {0};
        if (g[0] && a[0].kind == JV_STR) jbuf_putv(c, &pad, a[0].u.s);
        else {
            int64_t w = g[0] ? want_int(c, "indent width", a[0]) : 4;
            if (w < 0 || w > 256) jfail(c, "indent: width %lld out of [0, 256]", (long long)w);
            for (int64_t k = 0; k < w; k++) jbuf_putc(c, &pad, ' ');
        }
        struct jbuf b = {0};
        bool first = g[1] && jv_truthy(a[1]), blank = g[2] && jv_truthy(a[2]);
        for (size_t i = 0, line = 0; i <= s->len; line++) {
            size_t e = i;
            while (e < s->len && s->s[e] != '\n') e++;
            bool empty = e == i;
            if ((line > 0 || first) && (!empty || blank) && !(e == s->len && empty && line > 0 && !blank))
                if (pad.len) jbuf_put(c, &b, pad.s, pad.len, NULL);
            jbuf_put(c, &b, s->s + i, e - i, s->mask ? s->mask + i : NULL);
            if (e == s->len) break;
            jbuf_putc(c, &b, '\n');
            i = e + 1;
        }
        return jbuf_value(c, &b);
    }
    case FL_ITEMS: {
        bind(c, "items", NULL, 0, n, args, kw, a, g);
        if (in.kind == JV_UNDEF) return jv_list(c, 0, false);
        if (in.kind != JV_DICT) jfail(c, "items: expected a mapping, got %s", jv_type_name(in));
        struct jv l = jv_list(c, in.u.d->n, false);
        for (size_t i = 0; i < in.u.d->n; i++) {
            struct jv t = jv_list(c, 2, true);
            ((struct jlist *)t.u.l)->v[0] = in.u.d->k[i], ((struct jlist *)t.u.l)->v[1] = in.u.d->v[i];
            ((struct jlist *)l.u.l)->v[i] = t;
        }
        return l;
    }
    case FL_DICTSORT: {
        static const char *const p[] = {"case_sensitive", "by", "reverse"};
        bind(c, "dictsort", p, 3, n, args, kw, a, g);
        struct jv items = jfilter_apply(c, FL_ITEMS, in, 0, NULL, NULL);
        bool      byv   = g[1] && a[1].kind == JV_STR && !strcmp(a[1].u.s->s, "value");
        sort_values(c, ((struct jlist *)items.u.l)->v, items.u.l->n, g[2] && jv_truthy(a[2]), NULL, byv);
        return items;
    }
    case FL_JOIN: {
        static const char *const p[] = {"d", "attribute"};
        bind(c, "join", p, 2, n, args, kw, a, g);
        const struct jstr *sep = g[0] ? soft_str(c, a[0]) : NULL;
        return join(c, jv_iterate(c, in), sep, g[1] ? want_str(c, "join attribute", a[1])->s : NULL);
    }
    case FL_LIST: {
        bind(c, "list", NULL, 0, n, args, kw, a, g);
        const struct jlist *l = jv_iterate(c, in);
        if (!l->tuple) return (struct jv){.kind = JV_LIST, .u.l = l};
        struct jv o = jv_list(c, l->n, false);
        memcpy(((struct jlist *)o.u.l)->v, l->v, l->n * sizeof *l->v);
        return o;
    }
    case FL_MAP: {
        const struct jlist *l = jv_iterate(c, in);
        struct jv           o = jv_list(c, l->n, false);
        const char         *attr = NULL;
        struct jv           dflt = jv_undef(NULL);
        bool                has_dflt = false;
        for (size_t i = 0; i < n; i++)
            if (kw && kw[i] && !strcmp(kw[i], "attribute")) attr = want_str(c, "map attribute", args[i])->s;
            else if (kw && kw[i] && !strcmp(kw[i], "default")) dflt = args[i], has_dflt = true;
        if (attr) {
            for (size_t i = 0; i < l->n; i++) {
                struct jv v = attr_of(c, l->v[i], attr);
                ((struct jlist *)o.u.l)->v[i] = v.kind == JV_UNDEF && has_dflt ? dflt : v;
            }
            return o;
        }
        if (n < 1 || (kw && kw[0])) jfail(c, "map: give a filter name or attribute=");
        int f = jfilter_id(want_str(c, "map filter", args[0])->s);
        if (f < 0 || f == FL_MAP) jfail(c, "map: no filter named '%s'", args[0].u.s->s);
        for (size_t i = 0; i < l->n; i++)
            ((struct jlist *)o.u.l)->v[i] = jfilter_apply(c, f, l->v[i], n - 1, args + 1, kw ? kw + 1 : NULL);
        return o;
    }
    case FL_SELECT: return select_items(c, in, n, args, false, true);
    case FL_REJECT: return select_items(c, in, n, args, false, false);
    case FL_SELECTATTR: return select_items(c, in, n, args, true, true);
    case FL_REJECTATTR: return select_items(c, in, n, args, true, false);
    case FL_REPLACE: {
        static const char *const p[] = {"old", "new", "count"};
        bind(c, "replace", p, 3, n, args, kw, a, g);
        if (!g[0] || !g[1]) jfail(c, "replace: needs old and new");
        return replace(c, soft_str(c, in), soft_str(c, a[0]), soft_str(c, a[1]),
                       g[2] && a[2].kind != JV_NONE ? want_int(c, "replace count", a[2]) : -1);
    }
    case FL_REVERSE: {
        bind(c, "reverse", NULL, 0, n, args, kw, a, g);
        if (in.kind == JV_STR) {
            const struct jlist *chars = jv_iterate(c, in);
            struct jbuf         b     = {0};
            for (size_t i = chars->n; i-- > 0;) jbuf_putv(c, &b, chars->v[i].u.s);
            return jbuf_value(c, &b);
        }
        const struct jlist *l = jv_iterate(c, in);
        struct jv           o = jv_list(c, l->n, false);
        for (size_t i = 0; i < l->n; i++) ((struct jlist *)o.u.l)->v[i] = l->v[l->n - 1 - i];
        return o;
    }
    case FL_SORT: {
        static const char *const p[] = {"reverse", "case_sensitive", "attribute"};
        bind(c, "sort", p, 3, n, args, kw, a, g);
        const struct jlist *l = jv_iterate(c, in);
        struct jv           o = jv_list(c, l->n, false);
        memcpy(((struct jlist *)o.u.l)->v, l->v, l->n * sizeof *l->v);
        sort_values(c, ((struct jlist *)o.u.l)->v, l->n, g[0] && jv_truthy(a[0]),
                    g[2] ? want_str(c, "sort attribute", a[2])->s : NULL, false);
        return o;
    }
    case FL_UNIQUE: {
        bind(c, "unique", NULL, 0, n, args, kw, a, g);
        const struct jlist *l = jv_iterate(c, in);
        struct jv           o = jv_list(c, l->n, false);
        size_t              k = 0;
        for (size_t i = 0; i < l->n; i++) {
            jstep(c, k / 4 + 1); /* quadratic in the list: counted */
            bool seen = false;
            for (size_t j = 0; j < k && !seen; j++) seen = jv_equal(c, o.u.l->v[j], l->v[i]);
            if (!seen) ((struct jlist *)o.u.l)->v[k++] = l->v[i];
        }
        ((struct jlist *)o.u.l)->n = k;
        return o;
    }
    case FL_SAFE: bind(c, "safe", NULL, 0, n, args, kw, a, g); return in;
    case FL_STRING: bind(c, "string", NULL, 0, n, args, kw, a, g); return jv_to_str(c, in);
    case FL_TOJSON: return tojson_filter(c, in, n, args, kw);
    case FL_TRIM: {
        static const char *const p[] = {"chars"};
        bind(c, "trim", p, 1, n, args, kw, a, g);
        return strip(c, soft_str(c, in), g[0] && a[0].kind != JV_NONE ? soft_str(c, a[0]) : NULL, true, true);
    }
    case FL_ROUND: {
        static const char *const p[] = {"precision", "method"};
        bind(c, "round", p, 2, n, args, kw, a, g);
        double  x    = in.kind == JV_FLOAT ? in.u.f : in.kind == JV_INT ? (double)in.u.i : 0.0;
        int64_t prec = g[0] ? want_int(c, "round precision", a[0]) : 0;
        if (prec < 0 || prec > 15) jfail(c, "round: precision %lld out of [0, 15]", (long long)prec);
        double m = 1;
        for (int64_t k = 0; k < prec; k++) m *= 10;
        const char *method = g[1] ? want_str(c, "round method", a[1])->s : "common";
        double      y      = x * m;
        /* "common" is Python's round(): halves to even */
        y = !strcmp(method, "floor") ? __builtin_floor(y) : !strcmp(method, "ceil") ? __builtin_ceil(y) : __builtin_rint(y);
        return jv_float(y / m);
    }
    case FL_SUM: {
        static const char *const p[] = {"attribute", "start"};
        bind(c, "sum", p, 2, n, args, kw, a, g);
        const struct jlist *l   = jv_iterate(c, in);
        int64_t             si  = g[1] ? want_int(c, "sum start", a[1]) : 0;
        double              sf  = 0;
        bool                flt = false;
        for (size_t i = 0; i < l->n; i++) {
            struct jv v = g[0] ? attr_of(c, l->v[i], want_str(c, "sum attribute", a[0])->s) : l->v[i];
            if (v.kind == JV_FLOAT) flt = true, sf += v.u.f;
            else if (__builtin_add_overflow(si, want_int(c, "sum", v), &si)) jfail(c, "sum: integer overflow");
        }
        return flt ? jv_float(sf + (double)si) : jv_int(si);
    }
    case FL_BATCH: {
        static const char *const p[] = {"linecount", "fill_with"};
        bind(c, "batch", p, 2, n, args, kw, a, g);
        int64_t per = want_int(c, "batch linecount", a[0]);
        if (per <= 0) jfail(c, "batch: linecount must be positive");
        const struct jlist *l  = jv_iterate(c, in);
        size_t              nb = (l->n + (size_t)per - 1) / (size_t)per;
        struct jv           o  = jv_list(c, nb, false);
        for (size_t b = 0; b < nb; b++) {
            size_t    from = b * (size_t)per, cnt = l->n - from < (size_t)per ? l->n - from : (size_t)per;
            size_t    tot  = g[1] ? (size_t)per : cnt;
            struct jv row  = jv_list(c, tot, false);
            for (size_t k = 0; k < tot; k++) ((struct jlist *)row.u.l)->v[k] = k < cnt ? l->v[from + k] : a[1];
            ((struct jlist *)o.u.l)->v[b] = row;
        }
        return o;
    }
    case FL_WORDCOUNT: {
        bind(c, "wordcount", NULL, 0, n, args, kw, a, g);
        return jv_int((int64_t)split(c, soft_str(c, in), NULL, -1).u.l->n);
    }
    default: jfail(c, "unknown filter");
    }
}

/* ---- methods and globals ------------------------------------------------------------------ */
static const struct {
    const char *name;
    uint8_t     on; /* 1 str, 2 dict, 3 loop */
    uint16_t    fn;
} methods[] = {
    {"strip", 1, JFN_STRIP}, {"lstrip", 1, JFN_LSTRIP}, {"rstrip", 1, JFN_RSTRIP}, {"split", 1, JFN_SPLIT},
    {"rsplit", 1, JFN_RSPLIT}, {"startswith", 1, JFN_STARTSWITH}, {"endswith", 1, JFN_ENDSWITH},
    {"upper", 1, JFN_UPPER}, {"lower", 1, JFN_LOWER}, {"title", 1, JFN_TITLE}, {"capitalize", 1, JFN_CAPITALIZE},
    {"replace", 1, JFN_REPLACE}, {"find", 1, JFN_FIND}, {"count", 1, JFN_COUNT}, {"join", 1, JFN_JOIN},
    {"splitlines", 1, JFN_SPLITLINES}, {"isdigit", 1, JFN_ISDIGIT}, {"isalpha", 1, JFN_ISALPHA},
    {"isspace", 1, JFN_ISSPACE}, {"items", 2, JFN_ITEMS}, {"keys", 2, JFN_KEYS}, {"values", 2, JFN_VALUES},
    {"get", 2, JFN_GET}, {"cycle", 3, JFN_CYCLE},
};
static const char *const mutators[] = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                                       "update", "setdefault", "popitem", "add", "discard"};

enum jfn jfn_global(const char *name)
{
    if (!strcmp(name, "range")) return JFN_RANGE;
    if (!strcmp(name, "namespace")) return JFN_NAMESPACE;
    if (!strcmp(name, "dict")) return JFN_DICT;
    if (!strcmp(name, "raise_exception")) return JFN_RAISE;
    if (!strcmp(name, "strftime_now")) return JFN_STRFTIME;
    return JFN_NONE;
}

struct jv jv_method(struct jctx *c, struct jv self, const char *name)
{
    uint8_t on = self.kind == JV_STR ? 1 : self.kind == JV_DICT ? 2 : self.kind == JV_LOOP ? 3 : 0;
    for (size_t i = 0; on && i < sizeof methods / sizeof methods[0]; i++)
        if (methods[i].on == on && !strcmp(methods[i].name, name)) {
            struct jv *s = jalloc(c, sizeof *s);
            *s           = self;
            return (struct jv){.kind = JV_FUNC, .fn = methods[i].fn, .u.self = s};
        }
    if (self.kind == JV_LIST || self.kind == JV_DICT)
        for (size_t i = 0; i < sizeof mutators / sizeof mutators[0]; i++)
            if (!strcmp(mutators[i], name))
                jfail(c, "access to attribute '%s' of '%s' object is unsafe (templates cannot modify values)", name,
                      jv_type_name(self));
    return jv_undef(NULL);
}

static struct jv str_method(struct jctx *c, uint16_t fn, const struct jstr *s, size_t n, const struct jv *args,
                            const char *const *kw)
{
    struct jv a[3];
    bool      g[3];
    switch (fn) {
    case JFN_STRIP:
    case JFN_LSTRIP:
    case JFN_RSTRIP: {
        static const char *const p[] = {"chars"};
        bind(c, "strip", p, 1, n, args, kw, a, g);
        const struct jstr *chars = g[0] && a[0].kind != JV_NONE ? want_str(c, "strip chars", a[0]) : NULL;
        return strip(c, s, chars, fn != JFN_RSTRIP, fn != JFN_LSTRIP);
    }
    case JFN_SPLIT:
    case JFN_RSPLIT: {
        static const char *const p[] = {"sep", "maxsplit"};
        bind(c, "split", p, 2, n, args, kw, a, g);
        const struct jstr *sep = g[0] && a[0].kind != JV_NONE ? want_str(c, "split sep", a[0]) : NULL;
        int64_t            max = g[1] ? want_int(c, "split maxsplit", a[1]) : -1;
        if (fn == JFN_RSPLIT && max >= 0) jfail(c, "rsplit with maxsplit is not supported");
        return split(c, s, sep, max);
    }
    case JFN_STARTSWITH:
    case JFN_ENDSWITH:
        if (n != 1 || (kw && kw[0])) jfail(c, "%s takes one argument", fn == JFN_STARTSWITH ? "startswith" : "endswith");
        return jv_bool(starts_or_ends(c, s, args[0], fn == JFN_ENDSWITH, "startswith"));
    case JFN_UPPER:
    case JFN_LOWER:
        bind(c, "upper", NULL, 0, n, args, kw, a, g);
        return change_case(c, s, fn == JFN_UPPER);
    case JFN_TITLE:
    case JFN_CAPITALIZE: bind(c, "title", NULL, 0, n, args, kw, a, g); return title_case(c, s, fn == JFN_TITLE);
    case JFN_REPLACE: {
        static const char *const p[] = {"old", "new", "count"};
        bind(c, "replace", p, 3, n, args, kw, a, g);
        if (!g[0] || !g[1]) jfail(c, "replace: needs old and new");
        return replace(c, s, want_str(c, "replace", a[0]), want_str(c, "replace", a[1]),
                       g[2] ? want_int(c, "replace count", a[2]) : -1);
    }
    case JFN_FIND:
    case JFN_COUNT: {
        static const char *const p[] = {"sub"};
        bind(c, "find", p, 1, n, args, kw, a, g);
        const struct jstr *sub = want_str(c, "find", a[0]);
        jstep(c, s->len / 8);
        if (fn == JFN_FIND) {
            size_t at = find_bytes(s, 0, sub);
            if (at == SIZE_MAX) return jv_int(-1);
            return jv_int((int64_t)jstr_count_cps(&(struct jstr){.s = s->s, .len = at}));
        }
        int64_t cnt = 0;
        if (!sub->len) return jv_int((int64_t)jstr_count_cps(s) + 1);
        for (size_t at = 0; (at = find_bytes(s, at, sub)) != SIZE_MAX; at += sub->len) cnt++;
        return jv_int(cnt);
    }
    case JFN_JOIN: {
        if (n != 1) jfail(c, "join takes one argument");
        const struct jlist *l = jv_iterate(c, args[0]);
        for (size_t i = 0; i < l->n; i++)
            if (l->v[i].kind != JV_STR)
                jfail(c, "sequence item %zu: expected str instance, %s found", i, jv_type_name(l->v[i]));
        return join(c, l, s, NULL);
    }
    case JFN_SPLITLINES: {
        bind(c, "splitlines", NULL, 0, n, args, kw, a, g);
        struct jv parts = split(c, s, &(struct jstr){.s = "\n", .len = 1}, -1);
        struct jlist *l = (struct jlist *)parts.u.l;
        if (l->n && l->v[l->n - 1].u.s->len == 0) l->n--;
        return parts;
    }
    case JFN_ISDIGIT:
    case JFN_ISALPHA:
    case JFN_ISSPACE: {
        bind(c, "isdigit", NULL, 0, n, args, kw, a, g);
        if (!s->len) return jv_bool(false);
        for (size_t i = 0; i < s->len;) {
            uint32_t cp;
            i += jstr_next(s, i, &cp);
            bool ok = fn == JFN_ISSPACE ? jpy_isspace(cp)
                      : fn == JFN_ISALPHA ? (bool)u_isalpha((UChar32)cp)
                                          : u_charType((UChar32)cp) == U_DECIMAL_DIGIT_NUMBER;
            if (!ok) return jv_bool(false);
        }
        return jv_bool(true);
    }
    default: jfail(c, "unknown string method");
    }
}

static struct jv dict_method(struct jctx *c, uint16_t fn, const struct jdict *d, size_t n, const struct jv *args,
                             const char *const *kw)
{
    struct jv a[2];
    bool      g[2];
    if (fn == JFN_GET) {
        static const char *const p[] = {"key", "default"};
        bind(c, "get", p, 2, n, args, kw, a, g);
        if (!g[0]) jfail(c, "get: needs a key");
        const struct jv *v = jdict_get(c, d, a[0]);
        return v ? *v : g[1] ? a[1] : jv_none();
    }
    bind(c, "items", NULL, 0, n, args, kw, a, g);
    struct jv l = jv_list(c, d->n, false);
    for (size_t i = 0; i < d->n; i++) {
        struct jv v = fn == JFN_KEYS ? d->k[i] : d->v[i];
        if (fn == JFN_ITEMS) {
            v = jv_list(c, 2, true);
            ((struct jlist *)v.u.l)->v[0] = d->k[i], ((struct jlist *)v.u.l)->v[1] = d->v[i];
        }
        ((struct jlist *)l.u.l)->v[i] = v;
    }
    return l;
}

struct jv jcall_builtin(struct jctx *c, struct jv fn, size_t n, const struct jv *args, const char *const *kw)
{
    jstep(c, 1);
    const struct jv *self = fn.u.self;
    if (self && self->kind == JV_STR) return str_method(c, fn.fn, self->u.s, n, args, kw);
    if (self && self->kind == JV_DICT) return dict_method(c, fn.fn, self->u.d, n, args, kw);
    if (self && self->kind == JV_LOOP) {
        if (!n) jfail(c, "loop.cycle: no items");
        return args[self->u.loop->index0 % n];
    }
    switch (fn.fn) {
    case JFN_RANGE: {
        int64_t r[3] = {0, 0, 1};
        if (n < 1 || n > 3) jfail(c, "range expected 1 to 3 arguments, got %zu", n);
        for (size_t i = 0; i < n; i++) {
            if (kw && kw[i]) jfail(c, "range() takes no keyword arguments");
            r[n == 1 ? 1 : i] = want_int(c, "range", args[i]);
        }
        if (r[2] == 0) jfail(c, "range() arg 3 must not be zero");
        /* count first, in 128 bits: no huge list is allocated before the memory limit says no */
        __int128 span = (__int128)r[1] - r[0], step = r[2];
        __int128 cnt  = step > 0 ? (span > 0 ? (span + step - 1) / step : 0) : (span < 0 ? (-span + -step - 1) / -step : 0);
        if (cnt > (__int128)(c->lim.max_mem / sizeof(struct jv))) jfail(c, "range of %lld items is too long", (long long)cnt);
        struct jv l = jv_list(c, (size_t)cnt, false);
        for (size_t i = 0; i < (size_t)cnt; i++) ((struct jlist *)l.u.l)->v[i] = jv_int(r[0] + (int64_t)i * r[2]);
        return l;
    }
    case JFN_NAMESPACE:
    case JFN_DICT: {
        struct jv d = jv_dict(c, n);
        for (size_t i = 0; i < n; i++) {
            if (!kw || !kw[i]) {
                if (args[i].kind != JV_DICT) jfail(c, "%s: positional argument must be a mapping", fn.fn == JFN_DICT ? "dict" : "namespace");
                for (size_t k = 0; k < args[i].u.d->n; k++) jdict_set(c, d.u.d, args[i].u.d->k[k], args[i].u.d->v[k]);
            } else {
                jdict_set(c, d.u.d, jv_cstr(c, kw[i]), args[i]);
            }
        }
        if (fn.fn == JFN_NAMESPACE) d.kind = JV_NS;
        return d;
    }
    case JFN_RAISE: {
        const struct jstr *m = n >= 1 ? soft_str(c, args[0]) : &(struct jstr){.s = "", .len = 0};
        jfail(c, "template error: %.*s", (int)(m->len > 600 ? 600 : m->len), m->s);
    }
    case JFN_STRFTIME: {
        if (n != 1) jfail(c, "strftime_now takes one argument (a format)");
        const struct jstr *f = want_str(c, "strftime_now", args[0]);
        if (f->len > 256 || memchr(f->s, 0, f->len)) jfail(c, "strftime_now: format longer than 256 bytes or with a NUL");
        time_t    t = (time_t)(c->now >= 0 ? c->now : (int64_t)time(NULL));
        struct tm tm;
        if (!localtime_r(&t, &tm)) jfail(c, "strftime_now: the host clock cannot be read");
        char   out[1024];
        size_t k = f->len ? strftime(out, sizeof out, f->s, &tm) : 0;
        if (f->len && k == 0) jfail(c, "strftime_now: the formatted date is empty or longer than 1 KiB");
        return jv_str(c, out, k, NULL);
    }
    default: jfail(c, "'%s' is not callable", jv_type_name(fn));
    }
}
