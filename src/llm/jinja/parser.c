/* wgfuse — Jinja parser: tokens -> AST, with Jinja2's operator precedence
 * (condexpr < or < and < not < comparisons/in < + - < ~ < * / // % < ** < unary - +, then
 * postfix . [] () and filters | / tests `is` on the result).
 *
 * Bounded: nested expressions and blocks deeper than WGF__JINJA_MAX_DEPTH, and AST taller
 * than that (a long a+b+c+... chain is a tall left-deep tree the evaluator recurses on),
 * are syntax errors, so neither the parser nor the evaluator can run out of stack.
 * Unknown filters and tests are errors here, as Jinja2 reports them when compiling. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/jinja/jinja_internal.h"

struct pblock {
    struct pblock *next;
    size_t         used, cap;
    _Alignas(16) unsigned char data[];
};

struct parser {
    const struct jtoks *t;
    size_t              i;
    struct pblock      *mem;
    struct wgf_err     *err;
    uint32_t            depth;
    jmp_buf             jb;
    enum wgf_status     status;
};

static _Noreturn void pfail_at(struct parser *p, const struct jtok *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static _Noreturn void pfail_at(struct parser *p, const struct jtok *t, const char *fmt, ...)
{
    char    msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->status = wgf_fail(p->err, WGF_ERR_FORMAT, "line %u, column %u: %s", t->line, t->col, msg);
    longjmp(p->jb, 1);
}

static void *palloc(struct parser *p, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!p->mem || p->mem->cap - p->mem->used < n) {
        size_t cap = n > 16384 ? n : 16384;
        struct pblock *b = malloc(sizeof *b + cap);
        if (!b) {
            p->status = wgf_fail(p->err, WGF_ERR_NOMEM, "chat template: out of memory");
            longjmp(p->jb, 1);
        }
        b->next = p->mem, b->used = 0, b->cap = cap;
        p->mem = b;
    }
    void *r = p->mem->data + p->mem->used;
    p->mem->used += n;
    memset(r, 0, n);
    return r;
}

static const struct jtok *cur(struct parser *p) { return &p->t->v[p->i]; }
static const struct jtok *next(struct parser *p)
{
    const struct jtok *t = cur(p);
    if (t->kind != T_EOF) p->i++;
    return t;
}
static bool is_op(const struct jtok *t, const char *op) { return t->kind == T_OP && strcmp(t->text, op) == 0; }
static bool is_name(const struct jtok *t, const char *n) { return t->kind == T_NAME && strcmp(t->text, n) == 0; }
static bool skip_op(struct parser *p, const char *op)
{
    if (!is_op(cur(p), op)) return false;
    p->i++;
    return true;
}
static bool skip_name(struct parser *p, const char *n)
{
    if (!is_name(cur(p), n)) return false;
    p->i++;
    return true;
}

static const char *tok_desc(const struct jtok *t)
{
    switch (t->kind) {
    case T_EOF: return "end of template";
    case T_TEXT: return "template text";
    case T_VAR_BEGIN: return "'{{'";
    case T_VAR_END: return "'}}'";
    case T_BLOCK_BEGIN: return "'{%'";
    case T_BLOCK_END: return "'%}'";
    case T_STRING: return "a string";
    case T_INT:
    case T_FLOAT: return "a number";
    default: return t->text;
    }
}

static void expect_op(struct parser *p, const char *op)
{
    if (!skip_op(p, op)) pfail_at(p, cur(p), "expected '%s', got %s", op, tok_desc(cur(p)));
}

static const char *expect_name(struct parser *p)
{
    const struct jtok *t = cur(p);
    if (t->kind != T_NAME) pfail_at(p, t, "expected a name, got %s", tok_desc(t));
    p->i++;
    return t->text;
}

static void expect_block_end(struct parser *p)
{
    const struct jtok *t = cur(p);
    if (t->kind != T_BLOCK_END) pfail_at(p, t, "expected '%%}', got %s", tok_desc(t));
    p->i++;
}

static struct jnode *mk(struct parser *p, uint8_t kind, const struct jtok *at)
{
    struct jnode *n = palloc(p, sizeof *n);
    n->kind = kind, n->line = at->line, n->col = at->col, n->height = 1;
    return n;
}

static void add(struct parser *p, struct jnode *n, struct jnode *kid, const char *kw)
{
    if (n->n == n->cap) {
        uint32_t       cap  = n->cap ? n->cap * 2 : 4;
        struct jnode **kids = palloc(p, cap * sizeof *kids);
        const char   **kws  = palloc(p, cap * sizeof *kws);
        if (n->n) memcpy(kids, n->kids, n->n * sizeof *kids), memcpy(kws, n->kw, n->n * sizeof *kws);
        n->kids = kids, n->kw = kws, n->cap = cap;
    }
    n->kids[n->n] = kid, n->kw[n->n] = kw, n->n++;
    if (kid && kid->height + 1 > n->height) {
        n->height = kid->height + 1;
        if (n->height > WGF__JINJA_MAX_DEPTH)
            pfail_at(p, cur(p), "expression or block nesting deeper than %u", WGF__JINJA_MAX_DEPTH);
    }
}

static void enter(struct parser *p)
{
    if (++p->depth > WGF__JINJA_MAX_DEPTH / 4)
        pfail_at(p, cur(p), "expression or block nesting deeper than %u", WGF__JINJA_MAX_DEPTH / 4);
}

static struct jnode *lit_str(struct parser *p, const struct jtok *at, const char *s, size_t len)
{
    struct jnode *n = mk(p, N_LIT, at);
    struct jstr  *js = palloc(p, sizeof *js);
    js->s = s, js->len = len;
    n->lit.kind = JV_STR, n->lit.u.s = js;
    return n;
}

static struct jnode *parse_expr(struct parser *p, bool condexpr);
static struct jnode *parse_unary(struct parser *p, bool with_filter);
static struct jnode *parse_or(struct parser *p);

/* ---- expressions ---------------------------------------------------------------------- */
static struct jnode *parse_primary(struct parser *p)
{
    const struct jtok *t = next(p);
    struct jnode      *n;
    switch (t->kind) {
    case T_NAME:
        if (!strcmp(t->text, "true") || !strcmp(t->text, "True") || !strcmp(t->text, "false") ||
            !strcmp(t->text, "False")) {
            n = mk(p, N_LIT, t);
            n->lit = jv_bool(t->text[0] == 't' || t->text[0] == 'T');
        } else if (!strcmp(t->text, "none") || !strcmp(t->text, "None")) {
            n = mk(p, N_LIT, t);
            n->lit = jv_none();
        } else {
            n = mk(p, N_NAME, t);
            n->name = t->text;
        }
        return n;
    case T_STRING:
        if (cur(p)->kind != T_STRING) return lit_str(p, t, t->text, t->len);
        {
            /* adjacent literals concatenate */
            size_t total = t->len, k = p->i;
            for (; p->t->v[k].kind == T_STRING; k++) total += p->t->v[k].len;
            char *s = palloc(p, total + 1);
            memcpy(s, t->text, t->len);
            size_t o = t->len;
            while (cur(p)->kind == T_STRING) {
                const struct jtok *u = next(p);
                memcpy(s + o, u->text, u->len);
                o += u->len;
            }
            return lit_str(p, t, s, total);
        }
    case T_INT:
        n = mk(p, N_LIT, t);
        n->lit = jv_int(t->i);
        return n;
    case T_FLOAT:
        n = mk(p, N_LIT, t);
        n->lit = jv_float(t->f);
        return n;
    case T_OP:
        if (is_op(t, "(")) {
            enter(p);
            if (skip_op(p, ")")) {
                p->depth--;
                return mk(p, N_TUPLE, t);
            }
            struct jnode *e = parse_expr(p, true);
            if (is_op(cur(p), ",")) {
                struct jnode *tu = mk(p, N_TUPLE, t);
                add(p, tu, e, NULL);
                while (skip_op(p, ",")) {
                    if (is_op(cur(p), ")")) break;
                    add(p, tu, parse_expr(p, true), NULL);
                }
                e = tu;
            }
            expect_op(p, ")");
            p->depth--;
            return e;
        }
        if (is_op(t, "[")) {
            enter(p);
            n = mk(p, N_LIST, t);
            while (!is_op(cur(p), "]")) {
                if (n->n) expect_op(p, ",");
                if (is_op(cur(p), "]")) break;
                add(p, n, parse_expr(p, true), NULL);
            }
            expect_op(p, "]");
            p->depth--;
            return n;
        }
        if (is_op(t, "{")) {
            enter(p);
            n = mk(p, N_DICT, t);
            while (!is_op(cur(p), "}")) {
                if (n->n) expect_op(p, ",");
                if (is_op(cur(p), "}")) break;
                add(p, n, parse_expr(p, true), NULL);
                expect_op(p, ":");
                add(p, n, parse_expr(p, true), NULL);
            }
            expect_op(p, "}");
            p->depth--;
            return n;
        }
        break;
    default: break;
    }
    pfail_at(p, t, "unexpected %s", tok_desc(t));
}

/* (args) after a callee / filter / test name: positional then name=value. */
static void parse_args(struct parser *p, struct jnode *n)
{
    enter(p);
    bool kw_seen = false;
    while (!is_op(cur(p), ")")) {
        if (n->n > 1) expect_op(p, ","); /* kid 0 is the callee / the filtered value */
        if (is_op(cur(p), ")")) break;
        if (is_op(cur(p), "*") || is_op(cur(p), "**")) pfail_at(p, cur(p), "*args and **kwargs are not supported");
        const struct jtok *t = cur(p);
        if (t->kind == T_NAME && is_op(&p->t->v[p->i + 1], "=")) {
            p->i += 2;
            add(p, n, parse_expr(p, true), t->text);
            kw_seen = true;
        } else {
            if (kw_seen) pfail_at(p, t, "positional argument after a keyword argument");
            add(p, n, parse_expr(p, true), NULL);
        }
    }
    expect_op(p, ")");
    p->depth--;
}

static struct jnode *parse_subscript(struct parser *p, struct jnode *obj, const struct jtok *at)
{
    enter(p);
    struct jnode *parts[3] = {NULL, NULL, NULL};
    int           np = 0;
    bool          slice = false;
    for (;;) {
        if (is_op(cur(p), ":")) {
            slice = true;
            p->i++;
            if (++np > 2) pfail_at(p, cur(p), "too many ':' in a slice");
            continue;
        }
        if (is_op(cur(p), "]")) break;
        if (parts[np]) pfail_at(p, cur(p), "expected ']' or ':', got %s", tok_desc(cur(p)));
        parts[np] = parse_expr(p, true);
    }
    expect_op(p, "]");
    p->depth--;
    struct jnode *n = mk(p, slice ? N_SLICE : N_ITEM, at);
    add(p, n, obj, NULL);
    if (!slice) {
        if (!parts[0]) pfail_at(p, at, "empty subscript");
        add(p, n, parts[0], NULL);
    } else {
        for (int k = 0; k < 3; k++) add(p, n, parts[k], NULL);
    }
    return n;
}

static struct jnode *parse_postfix(struct parser *p, struct jnode *n)
{
    for (;;) {
        const struct jtok *t = cur(p);
        if (is_op(t, ".")) {
            p->i++;
            const struct jtok *a = next(p);
            struct jnode      *m;
            if (a->kind == T_NAME) {
                m = mk(p, N_ATTR, t);
                m->name = a->text;
                add(p, m, n, NULL);
            } else if (a->kind == T_INT) {
                m = mk(p, N_ITEM, t);
                struct jnode *k = mk(p, N_LIT, a);
                k->lit = jv_int(a->i);
                add(p, m, n, NULL);
                add(p, m, k, NULL);
            } else {
                pfail_at(p, a, "expected an attribute name after '.', got %s", tok_desc(a));
            }
            n = m;
        } else if (is_op(t, "[")) {
            p->i++;
            n = parse_subscript(p, n, t);
        } else if (is_op(t, "(")) {
            p->i++;
            struct jnode *c = mk(p, N_CALL, t);
            c->line = n->line, c->col = n->col; /* errors of a call point at the callee */
            add(p, c, n, NULL);
            parse_args(p, c);
            n = c;
        } else {
            return n;
        }
    }
}

static struct jnode *parse_filter_expr(struct parser *p, struct jnode *n)
{
    for (;;) {
        const struct jtok *t = cur(p);
        if (is_op(t, "|")) {
            p->i++;
            const struct jtok *nt   = cur(p);
            const char        *name = expect_name(p);
            int                id   = jfilter_id(name);
            if (id < 0) pfail_at(p, nt, "unknown filter '%s'", name);
            struct jnode *f = mk(p, N_FILTER, nt);
            f->name = name, f->id = (int16_t)id;
            add(p, f, n, NULL);
            if (skip_op(p, "(")) parse_args(p, f);
            n = f;
        } else if (is_name(t, "is")) {
            p->i++;
            bool               neg  = skip_name(p, "not");
            const struct jtok *nt   = cur(p);
            const char        *name = expect_name(p);
            /* "is none" etc.: names that are also keywords */
            int id = jtest_id(name);
            if (id < 0) pfail_at(p, nt, "unknown test '%s'", name);
            struct jnode *te = mk(p, N_TEST, nt);
            te->name = name, te->id = (int16_t)id, te->op = neg;
            add(p, te, n, NULL);
            const struct jtok *a = cur(p);
            if (skip_op(p, "(")) {
                parse_args(p, te);
            } else if ((a->kind == T_NAME || a->kind == T_STRING || a->kind == T_INT || a->kind == T_FLOAT ||
                        is_op(a, "[") || is_op(a, "{")) &&
                       !is_name(a, "else") && !is_name(a, "or") && !is_name(a, "and") && !is_name(a, "if") &&
                       !is_name(a, "is") && !is_name(a, "in") && !is_name(a, "not")) {
                struct jnode *arg = parse_postfix(p, parse_primary(p));
                add(p, te, arg, NULL);
            }
            n = te;
        } else if (is_op(t, "(")) {
            p->i++;
            struct jnode *c = mk(p, N_CALL, t);
            add(p, c, n, NULL);
            parse_args(p, c);
            n = c;
        } else {
            return n;
        }
    }
}

static struct jnode *parse_unary(struct parser *p, bool with_filter)
{
    const struct jtok *t = cur(p);
    struct jnode      *n;
    if (is_op(t, "-") || is_op(t, "+")) {
        p->i++;
        enter(p);
        n = mk(p, is_op(t, "-") ? N_NEG : N_POS, t);
        add(p, n, parse_unary(p, false), NULL);
        p->depth--;
    } else {
        n = parse_primary(p);
    }
    n = parse_postfix(p, n);
    if (with_filter) n = parse_filter_expr(p, n);
    return n;
}

static struct jnode *bin(struct parser *p, const struct jtok *at, uint8_t op, struct jnode *a, struct jnode *b)
{
    struct jnode *n = mk(p, N_BIN, at);
    n->op = op;
    add(p, n, a, NULL);
    add(p, n, b, NULL);
    return n;
}

static struct jnode *parse_pow(struct parser *p)
{
    struct jnode *n = parse_unary(p, true);
    while (is_op(cur(p), "**")) {
        const struct jtok *t = next(p);
        n = bin(p, t, OP_POW, n, parse_unary(p, true));
    }
    return n;
}

static struct jnode *parse_math2(struct parser *p)
{
    struct jnode *n = parse_pow(p);
    for (;;) {
        const struct jtok *t = cur(p);
        uint8_t op = is_op(t, "*") ? OP_MUL : is_op(t, "/") ? OP_DIV : is_op(t, "//") ? OP_FLOORDIV : is_op(t, "%") ? OP_MOD : 0;
        if (!op) return n;
        p->i++;
        n = bin(p, t, op, n, parse_pow(p));
    }
}

static struct jnode *parse_concat(struct parser *p)
{
    struct jnode *n = parse_math2(p);
    while (is_op(cur(p), "~")) {
        const struct jtok *t = next(p);
        n = bin(p, t, OP_CONCAT, n, parse_math2(p));
    }
    return n;
}

static struct jnode *parse_math1(struct parser *p)
{
    struct jnode *n = parse_concat(p);
    for (;;) {
        const struct jtok *t = cur(p);
        uint8_t op = is_op(t, "+") ? OP_ADD : is_op(t, "-") ? OP_SUB : 0;
        if (!op) return n;
        p->i++;
        n = bin(p, t, op, n, parse_concat(p));
    }
}

static struct jnode *parse_compare(struct parser *p)
{
    struct jnode *first = parse_math1(p), *n = NULL;
    for (;;) {
        const struct jtok *t = cur(p);
        uint8_t            op = 0;
        if (is_op(t, "==")) op = OP_EQ;
        else if (is_op(t, "!=")) op = OP_NE;
        else if (is_op(t, "<")) op = OP_LT;
        else if (is_op(t, "<=")) op = OP_LE;
        else if (is_op(t, ">")) op = OP_GT;
        else if (is_op(t, ">=")) op = OP_GE;
        else if (is_name(t, "in")) op = OP_IN;
        else if (is_name(t, "not") && is_name(&p->t->v[p->i + 1], "in")) op = OP_NOTIN, p->i++;
        if (!op) return n ? n : first;
        p->i++;
        if (!n) {
            n = mk(p, N_CMP, t);
            add(p, n, first, NULL);
        }
        if (n->n - 1 == 0 || ((n->n - 1) & (n->n - 2)) == 0) { /* 1, 2, 4, 8...: double */
            uint8_t *ops = palloc(p, 2 * (size_t)n->n);
            if (n->n > 1) memcpy(ops, n->ops, n->n - 1);
            n->ops = ops;
        }
        n->ops[n->n - 1] = op;
        add(p, n, parse_math1(p), NULL);
    }
}

static struct jnode *parse_not(struct parser *p)
{
    const struct jtok *t = cur(p);
    if (!is_name(t, "not")) return parse_compare(p);
    p->i++;
    enter(p);
    struct jnode *n = mk(p, N_NOT, t);
    add(p, n, parse_not(p), NULL);
    p->depth--;
    return n;
}

static struct jnode *parse_and(struct parser *p)
{
    struct jnode *n = parse_not(p);
    while (is_name(cur(p), "and")) {
        const struct jtok *t = next(p);
        struct jnode      *a = mk(p, N_AND, t);
        add(p, a, n, NULL);
        add(p, a, parse_not(p), NULL);
        n = a;
    }
    return n;
}

static struct jnode *parse_or(struct parser *p)
{
    struct jnode *n = parse_and(p);
    while (is_name(cur(p), "or")) {
        const struct jtok *t = next(p);
        struct jnode      *o = mk(p, N_OR, t);
        add(p, o, n, NULL);
        add(p, o, parse_and(p), NULL);
        n = o;
    }
    return n;
}

static struct jnode *parse_expr(struct parser *p, bool condexpr)
{
    enter(p);
    struct jnode *n = parse_or(p);
    while (condexpr && is_name(cur(p), "if")) {
        const struct jtok *t = next(p);
        struct jnode      *c = mk(p, N_COND, t);
        struct jnode      *cond = parse_or(p);
        struct jnode      *els  = skip_name(p, "else") ? parse_expr(p, true) : NULL;
        add(p, c, n, NULL);
        add(p, c, cond, NULL);
        add(p, c, els, NULL);
        n = c;
    }
    p->depth--;
    return n;
}

/* expr or expr, expr, ... (a tuple without parentheses) */
static struct jnode *parse_tuple(struct parser *p, bool condexpr)
{
    const struct jtok *t = cur(p);
    struct jnode      *e = parse_expr(p, condexpr);
    if (!is_op(cur(p), ",")) return e;
    struct jnode *tu = mk(p, N_TUPLE, t);
    add(p, tu, e, NULL);
    while (skip_op(p, ",")) {
        const struct jtok *c = cur(p);
        if (c->kind == T_BLOCK_END || c->kind == T_VAR_END || is_op(c, "=") || is_name(c, "in")) break;
        add(p, tu, parse_expr(p, condexpr), NULL);
    }
    return tu;
}

/* assignment target: name, name.attr, or names separated by commas */
static struct jnode *parse_target(struct parser *p, bool allow_attr)
{
    const struct jtok *t = cur(p);
    bool               paren = skip_op(p, "(");
    struct jnode      *tu    = mk(p, N_TUPLE, t);
    do {
        const struct jtok *nt = cur(p);
        struct jnode      *n  = mk(p, N_NAME, nt);
        n->name               = expect_name(p);
        if (allow_attr && is_op(cur(p), ".")) {
            p->i++;
            struct jnode *a = mk(p, N_ATTR, nt);
            a->name         = expect_name(p);
            add(p, a, n, NULL);
            n = a;
        }
        add(p, tu, n, NULL);
    } while (skip_op(p, ",") && cur(p)->kind == T_NAME);
    if (paren) expect_op(p, ")");
    if (tu->n == 1 && !paren) return tu->kids[0];
    for (uint32_t k = 0; k < tu->n; k++)
        if (tu->kids[k]->kind != N_NAME) pfail_at(p, t, "a namespace attribute cannot be unpacked into");
    return tu;
}

/* ---- statements ------------------------------------------------------------------------- */
/* Parse statements until a block tag whose first word is one of `ends` (NULL-terminated);
 * leaves the parser on that word (after "{%"). */
static struct jnode *parse_body(struct parser *p, const char *const *ends, const struct jtok *opened);

static struct jnode *parse_stmt(struct parser *p, const struct jtok *open)
{
    const struct jtok *t = cur(p);
    if (t->kind != T_NAME) pfail_at(p, t, "expected a statement name, got %s", tok_desc(t));
    const char *w = t->text;
    p->i++;
    if (!strcmp(w, "if")) {
        struct jnode *n = mk(p, N_IF, t);
        add(p, n, parse_tuple(p, true), NULL);
        expect_block_end(p);
        static const char *const ends[] = {"elif", "else", "endif", NULL};
        add(p, n, parse_body(p, ends, t), NULL);
        struct jnode *tail = n;
        for (;;) {
            const struct jtok *e = next(p);
            if (!strcmp(e->text, "elif")) {
                struct jnode *m = mk(p, N_IF, e);
                add(p, m, parse_tuple(p, true), NULL);
                expect_block_end(p);
                add(p, m, parse_body(p, ends, e), NULL);
                add(p, tail, m, NULL);
                tail = m;
            } else if (!strcmp(e->text, "else")) {
                expect_block_end(p);
                static const char *const end[] = {"endif", NULL};
                add(p, tail, parse_body(p, end, e), NULL);
                p->i++;
                break;
            } else {
                break; /* endif */
            }
        }
        if (tail->n < 3) add(p, tail, NULL, NULL);
        /* the chain was built by appending: re-check heights top-down is not needed
         * (each add checked the node it touched, and elif chains are bounded by enter()) */
        expect_block_end(p);
        return n;
    }
    if (!strcmp(w, "for")) {
        struct jnode *n = mk(p, N_FOR, t);
        add(p, n, parse_target(p, false), NULL);
        if (!skip_name(p, "in")) pfail_at(p, cur(p), "expected 'in' in a for loop, got %s", tok_desc(cur(p)));
        add(p, n, parse_tuple(p, false), NULL);
        add(p, n, skip_name(p, "if") ? parse_expr(p, true) : NULL, NULL);
        if (is_name(cur(p), "recursive")) pfail_at(p, cur(p), "recursive for loops are not supported");
        expect_block_end(p);
        static const char *const ends[] = {"else", "endfor", NULL};
        add(p, n, parse_body(p, ends, t), NULL);
        if (!strcmp(next(p)->text, "else")) {
            expect_block_end(p);
            static const char *const end[] = {"endfor", NULL};
            add(p, n, parse_body(p, end, t), NULL);
            p->i++;
        } else {
            add(p, n, NULL, NULL);
        }
        expect_block_end(p);
        return n;
    }
    if (!strcmp(w, "set")) {
        struct jnode *target = parse_target(p, true);
        if (skip_op(p, "=")) {
            struct jnode *n = mk(p, N_SET, t);
            add(p, n, target, NULL);
            add(p, n, parse_tuple(p, true), NULL);
            expect_block_end(p);
            return n;
        }
        if (target->kind != N_NAME) pfail_at(p, cur(p), "expected '=' after the set target");
        expect_block_end(p);
        struct jnode *n = mk(p, N_SETBLOCK, t);
        add(p, n, target, NULL);
        static const char *const end[] = {"endset", NULL};
        add(p, n, parse_body(p, end, t), NULL);
        p->i++;
        expect_block_end(p);
        return n;
    }
    if (!strcmp(w, "macro")) {
        struct jnode *n = mk(p, N_MACRO, t);
        n->name         = expect_name(p);
        add(p, n, NULL, NULL); /* the body, below */
        expect_op(p, "(");
        bool defaults = false;
        while (!is_op(cur(p), ")")) {
            if (n->n > 1) expect_op(p, ",");
            if (is_op(cur(p), ")")) break;
            const struct jtok *pt = cur(p);
            struct jnode      *pn = mk(p, N_NAME, pt);
            pn->name              = expect_name(p);
            if (skip_op(p, "=")) {
                add(p, pn, parse_expr(p, true), NULL);
                defaults = true;
            } else if (defaults) {
                pfail_at(p, pt, "a parameter without a default after one with a default");
            }
            add(p, n, pn, NULL);
        }
        expect_op(p, ")");
        expect_block_end(p);
        static const char *const end[] = {"endmacro", NULL};
        struct jnode *body = parse_body(p, end, t);
        n->kids[0] = body;
        if (body->height + 1 > n->height) n->height = body->height + 1;
        p->i++;
        if (cur(p)->kind == T_NAME) p->i++; /* {% endmacro name %} */
        expect_block_end(p);
        return n;
    }
    if (!strcmp(w, "break") || !strcmp(w, "continue")) {
        struct jnode *n = mk(p, w[0] == 'b' ? N_BREAK : N_CONTINUE, t);
        expect_block_end(p);
        return n;
    }
    if (!strcmp(w, "generation")) {
        /* transformers' AssistantTracker: renders its body (the span is only recorded) */
        expect_block_end(p);
        static const char *const end[] = {"endgeneration", NULL};
        struct jnode *body = parse_body(p, end, t);
        p->i++;
        expect_block_end(p);
        return body;
    }
    static const char *const closers[] = {"endif", "endfor", "endset", "endmacro", "elif", "else", "endgeneration", NULL};
    for (int k = 0; closers[k]; k++)
        if (!strcmp(w, closers[k])) pfail_at(p, t, "unexpected '%s' (no open block it closes)", w);
    (void)open;
    pfail_at(p, t, "unknown or unsupported tag '%s'", w);
}

static struct jnode *parse_body(struct parser *p, const char *const *ends, const struct jtok *opened)
{
    enter(p);
    struct jnode *body = mk(p, N_BODY, cur(p));
    for (;;) {
        const struct jtok *t = cur(p);
        if (t->kind == T_EOF) {
            if (!ends) break;
            pfail_at(p, opened, "'%s' block never closed (expected '{%% %s %%}')", opened->text, ends[0]);
        }
        p->i++;
        if (t->kind == T_TEXT) {
            add(p, body, lit_str(p, t, t->text, t->len), NULL);
        } else if (t->kind == T_VAR_BEGIN) {
            struct jnode *o = mk(p, N_OUT, t);
            add(p, o, parse_tuple(p, true), NULL);
            if (cur(p)->kind != T_VAR_END) pfail_at(p, cur(p), "expected '}}', got %s", tok_desc(cur(p)));
            p->i++;
            add(p, body, o, NULL);
        } else if (t->kind == T_BLOCK_BEGIN) {
            const struct jtok *w = cur(p);
            for (int k = 0; ends && ends[k]; k++)
                if (is_name(w, ends[k])) {
                    p->depth--;
                    return body;
                }
            add(p, body, parse_stmt(p, t), NULL);
        } else {
            pfail_at(p, t, "unexpected %s", tok_desc(t));
        }
    }
    p->depth--;
    return body;
}

enum wgf_status wgf__jinja_parse(const char *src, size_t len, struct wgf__jinja **out, struct wgf_err *err)
{
    if (!out || (!src && len)) return wgf_fail(err, WGF_ERR_ARG, "chat template: NULL argument");
    *out = NULL;
    struct jtoks    toks;
    enum wgf_status st = jlex(src ? src : "", len, &toks, err);
    if (st) return st;
    struct parser *p = calloc(1, sizeof *p); /* volatile-free: everything is reached through p */
    if (!p) {
        jtoks_free(&toks);
        return wgf_fail(err, WGF_ERR_NOMEM, "chat template: out of memory");
    }
    p->t = &toks, p->err = err;
    struct jnode *volatile root = NULL;
    if (setjmp(p->jb) == 0) {
        root = parse_body(p, NULL, NULL);
    }
    struct wgf__jinja *t = root ? malloc(sizeof *t) : NULL;
    if (!t) {
        st = root ? wgf_fail(err, WGF_ERR_NOMEM, "chat template: out of memory") : p->status;
        for (struct pblock *b = p->mem; b;) {
            struct pblock *n = b->next;
            free(b);
            b = n;
        }
        free(p);
        jtoks_free(&toks);
        return st;
    }
    t->root  = root;
    t->mem   = p->mem;
    t->store = toks.store;
    free(toks.v);
    free(p);
    *out = t;
    return WGF_OK;
}

void wgf__jinja_free(struct wgf__jinja *t)
{
    if (!t) return;
    for (struct pblock *b = t->mem; b;) {
        struct pblock *n = b->next;
        free(b);
        b = n;
    }
    free(t->store);
    free(t);
}
