/* wgfuse — the Jinja engine's internals shared by its files (src/llm/jinja/ only).
 *
 * Files, each using only those above it in this list (no cycles between objects):
 *   value.c     the render context: arena, step/memory accounting, errors (longjmp),
 *               values, Python's str()/repr()/json.dumps, equality and ordering
 *   builtins.c  filters, tests, string/dict methods, global functions
 *   lexer.c     template source -> tokens (whitespace control, trim/lstrip_blocks)
 *   parser.c    tokens -> AST (owned by struct wgf__jinja)
 *   eval.c      AST -> output: statements, expressions, scopes, macros
 *
 * A render allocates only from its arena, so an error anywhere unwinds with longjmp to
 * wgf__jinja_render, which frees the arena: nothing leaks and no function below needs a
 * cleanup path. */
#ifndef WGFUSE_LLM_JINJA_INTERNAL_H
#define WGFUSE_LLM_JINJA_INTERNAL_H

#include <setjmp.h>
#include <stdarg.h>

#include "llm/jinja/jinja.h"

/* ---- values ----------------------------------------------------------------------------- */
enum jv_kind {
    JV_UNDEF = 0, /* Jinja's Undefined: prints "", false, an error when used further  */
    JV_NONE,
    JV_BOOL,
    JV_INT,
    JV_FLOAT,
    JV_STR,
    JV_LIST,  /* list or tuple (immutable)                                          */
    JV_DICT,  /* ordered mapping, keys any scalar value (immutable after creation)  */
    JV_NS,    /* namespace(): the one mutable object templates have                */
    JV_LOOP,  /* the `loop` variable of a for block                                 */
    JV_MACRO, /* a {% macro %}                                                      */
    JV_FUNC,  /* a global function or a method bound to a value                     */
};

struct jstr {
    size_t               len;
    const char          *s;    /* len bytes + NUL                                   */
    const unsigned char *mask; /* [len] 1 = content byte; NULL = no content bytes  */
};
struct jv;
struct jlist {
    size_t     n;
    struct jv *v;
    bool       tuple;
};
struct jdict {
    size_t     n, cap;
    struct jv *k, *v;
};
struct jloop;
struct jnode;

struct jv {
    uint8_t  kind; /* enum jv_kind                                                */
    uint16_t fn;   /* JV_FUNC: enum jfn                                           */
    union {
        bool                b;
        int64_t             i;
        double              f;
        const struct jstr  *s;
        const struct jlist *l;
        struct jdict       *d;    /* JV_DICT, JV_NS                                  */
        struct jloop       *loop;
        const struct jnode *macro;
        const struct jv    *self; /* JV_FUNC: the bound value, NULL for a global     */
        const char         *undef; /* JV_UNDEF: what was missing (may be NULL)       */
    } u;
};

struct jloop {
    size_t              index0, length;
    const struct jlist *items;
    uint32_t            depth0;
};

/* ---- the render context ---------------------------------------------------------------- */
struct jchunk;
struct jvar {
    const char *name;
    struct jv   v;
};
struct jctx {
    struct wgf__jinja_limits lim;
    uint64_t                 steps;
    size_t                   mem;
    struct jchunk           *chunks;  /* the arena                                       */
    char                    *cur;     /* bump pointer in the newest chunk                */
    size_t                   left;
    /* output */
    char          *out;
    unsigned char *omask;
    size_t         olen, ocap;
    /* scopes: vars[0..n_vars) grouped in frames; frame[i] = first var of frame i */
    struct jvar *vars;
    size_t       n_vars, cap_vars;
    size_t      *frame;
    bool        *opaque; /* frame i is a macro call: lookups skip to the globals    */
    size_t       n_frames, cap_frames;
    uint32_t     calls;
    int64_t      now;
    /* errors */
    uint32_t        line, col; /* position of the node being evaluated             */
    struct wgf_err *err;
    enum wgf_status status;
    jmp_buf         jb;
};

/* Fail the render: "line L, column C: <message>" into ctx->err, then longjmp. */
_Noreturn void jfail(struct jctx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Count n units of work against max_steps. */
void jstep(struct jctx *c, uint64_t n);
/* Arena allocation (zeroed), counted against max_mem / max_alloc. */
void *jalloc(struct jctx *c, size_t n);
void *jalloc_array(struct jctx *c, size_t n, size_t size);
void  jarena_free(struct jctx *c);

/* constructors */
struct jv jv_undef(const char *what);
struct jv jv_none(void);
struct jv jv_bool(bool b);
struct jv jv_int(int64_t i);
struct jv jv_float(double f);
/* A string of len bytes copied from s; mask may be NULL (no content bytes) or [len]. */
struct jv jv_str(struct jctx *c, const char *s, size_t len, const unsigned char *mask);
/* A string whose whole text is content when `content`. */
struct jv jv_str_all(struct jctx *c, const char *s, size_t len, bool content);
struct jv jv_cstr(struct jctx *c, const char *s);
struct jv jv_list(struct jctx *c, size_t n, bool tuple); /* n undefined items to fill      */
struct jv jv_dict(struct jctx *c, size_t cap);
void      jdict_set(struct jctx *c, struct jdict *d, struct jv k, struct jv v);
/* The value of key k in d, or NULL. */
const struct jv *jdict_get(struct jctx *c, const struct jdict *d, struct jv k);
const struct jv *jdict_get_str(struct jctx *c, const struct jdict *d, const char *k);
/* A JSON value as a template value (strings marked content when `content`). */
struct jv jv_from_json(struct jctx *c, json_t *j, bool content, uint32_t depth);

/* A growing string with a content mask. */
struct jbuf {
    char          *s;
    unsigned char *mask; /* NULL until a content byte is appended */
    size_t         len, cap;
};
void      jbuf_put(struct jctx *c, struct jbuf *b, const char *s, size_t n, const unsigned char *mask);
void      jbuf_puts(struct jctx *c, struct jbuf *b, const char *s);
void      jbuf_putc(struct jctx *c, struct jbuf *b, char ch);
void      jbuf_putv(struct jctx *c, struct jbuf *b, const struct jstr *s); /* with its mask */
struct jv jbuf_value(struct jctx *c, struct jbuf *b);

/* Python semantics */
bool        jv_truthy(struct jv v);
const char *jv_type_name(struct jv v);
bool        jv_is_str(struct jv v);
/* str(v) as Python prints it (Undefined -> ""). */
void      jv_str_into(struct jctx *c, struct jbuf *b, struct jv v);
struct jv jv_to_str(struct jctx *c, struct jv v);
/* repr(v) */
void jv_repr_into(struct jctx *c, struct jbuf *b, struct jv v);
/* json.dumps(v, ensure_ascii, indent (<0: none), separators, sort_keys) */
struct jtojson {
    bool        ensure_ascii, sort_keys;
    int         indent; /* < 0: none */
    const char *item_sep, *key_sep;
};
struct jv jv_tojson(struct jctx *c, struct jv v, const struct jtojson *o);
bool      jv_equal(struct jctx *c, struct jv a, struct jv b);
/* -1, 0, 1 for numbers and strings (and lists of those); anything else fails the render */
int jv_compare(struct jctx *c, struct jv a, struct jv b);
/* A string's / list's / dict's element count (strings count code points). */
size_t jv_length(struct jctx *c, struct jv v);
/* Elements of an iterable as a list: list/tuple as is, dict keys, string characters. */
const struct jlist *jv_iterate(struct jctx *c, struct jv v);
/* Undefined used where a value is needed: "'x' is undefined". */
_Noreturn void jv_undefined_fail(struct jctx *c, struct jv v);

/* strings: code points, slices (Python indices) with masks kept */
size_t    jstr_count_cps(const struct jstr *s);
struct jv jstr_sub(struct jctx *c, const struct jstr *s, size_t off, size_t len); /* bytes */
bool      jpy_isspace(uint32_t cp);
/* next code point at s[i] (an invalid byte stands for itself); returns its byte length */
size_t jstr_next(const struct jstr *s, size_t i, uint32_t *cp);

/* ---- builtins (builtins.c) ---------------------------------------------------------------- */
enum jfn {
    JFN_NONE = 0,
    /* globals */
    JFN_RANGE,
    JFN_NAMESPACE,
    JFN_DICT,
    JFN_RAISE,
    JFN_STRFTIME,
    /* methods: str */
    JFN_STRIP,
    JFN_LSTRIP,
    JFN_RSTRIP,
    JFN_SPLIT,
    JFN_RSPLIT,
    JFN_STARTSWITH,
    JFN_ENDSWITH,
    JFN_UPPER,
    JFN_LOWER,
    JFN_TITLE,
    JFN_CAPITALIZE,
    JFN_REPLACE,
    JFN_FIND,
    JFN_COUNT,
    JFN_JOIN,
    JFN_SPLITLINES,
    JFN_ISDIGIT,
    JFN_ISALPHA,
    JFN_ISSPACE,
    /* methods: dict */
    JFN_ITEMS,
    JFN_KEYS,
    JFN_VALUES,
    JFN_GET,
    /* methods: loop */
    JFN_CYCLE,
    JFN_COUNT_
};
/* global function by name (JFN_NONE if none) */
enum jfn jfn_global(const char *name);
/* The method `name` of v as a bound JV_FUNC, or an undefined value. */
struct jv jv_method(struct jctx *c, struct jv self, const char *name);
/* Call a JV_FUNC (not a macro). kw[i] NULL for positional argument i. */
struct jv jcall_builtin(struct jctx *c, struct jv fn, size_t n, const struct jv *args, const char *const *kw);

/* filters and tests by name: an id >= 0, or -1 when unknown (a parse error) */
int jfilter_id(const char *name);
int jtest_id(const char *name);
struct jv jfilter_apply(struct jctx *c, int id, struct jv in, size_t n, const struct jv *args, const char *const *kw);
bool      jtest_apply(struct jctx *c, int id, struct jv in, size_t n, const struct jv *args);

/* ---- AST (parser.c) --------------------------------------------------------------------- */
enum jnode_kind {
    /* statements */
    N_BODY = 1, /* kids: statements                                                   */
    N_TEXT,     /* lit: the text                                                      */
    N_OUT,      /* {{ kids[0] }}                                                      */
    N_IF,       /* kids: cond, body, else (N_BODY / N_IF for elif / NULL)             */
    N_FOR,      /* kids: target, iterable, filter or NULL, body, else or NULL          */
    N_SET,      /* kids: target (N_NAME / N_TUPLE / N_ATTR on a namespace), value      */
    N_SETBLOCK, /* kids: target name, body                                             */
    N_MACRO,    /* name; kids: body, then params (N_NAME, kids[0] = default or none)  */
    N_BREAK,
    N_CONTINUE,
    /* expressions */
    N_LIT,    /* lit                                                                  */
    N_NAME,   /* name                                                                 */
    N_ATTR,   /* kids[0].name                                                         */
    N_ITEM,   /* kids[0][kids[1]]                                                     */
    N_SLICE,  /* kids[0][kids[1]:kids[2]:kids[3]] (NULL parts)                        */
    N_CALL,   /* kids[0](kids[1..], kw)                                               */
    N_FILTER, /* kids[0] | name(kids[1..], kw); id                                    */
    N_TEST,   /* kids[0] is [not] name(kids[1..]); id, op = negated                   */
    N_BIN,    /* kids[0] op kids[1]: + - * / // % ** ~ in, not in                      */
    N_CMP,    /* kids[0] ops[0] kids[1] ops[1] kids[2] ... (chained comparison)      */
    N_AND,
    N_OR,
    N_NOT,
    N_NEG,
    N_POS,
    N_COND,  /* kids: then, cond, else or NULL                                       */
    N_LIST,  /* kids: items                                                          */
    N_TUPLE, /* kids: items                                                          */
    N_DICT,  /* kids: key, value, key, value...                                      */
};
enum jop {
    OP_ADD = 1, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_POW, OP_CONCAT, OP_IN, OP_NOTIN,
    OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
};
struct jnode {
    uint8_t        kind, op;
    int16_t        id;     /* filter / test id                                  */
    uint32_t       line, col;
    uint32_t       n, cap; /* kids, capacity of kids / kw                       */
    uint32_t       height; /* 1 + the tallest kid: bounded by MAX_DEPTH          */
    struct jnode **kids;
    const char   **kw;     /* N_CALL / N_FILTER / N_TEST: [n] keyword of kid i or NULL */
    uint8_t       *ops;    /* N_CMP: [n - 1]                                    */
    const char    *name;
    struct jv      lit;
};

struct wgf__jinja {
    struct jnode *root;
    void         *mem;   /* the parser's allocations, one list             */
    char         *store; /* the token texts literals point into            */
};

/* ---- lexer (lexer.c) -------------------------------------------------------------------- */
enum jtok_kind {
    T_EOF = 0,
    T_TEXT,        /* template data                        */
    T_VAR_BEGIN,   /* {{                                    */
    T_VAR_END,     /* }}                                    */
    T_BLOCK_BEGIN, /* {%                                    */
    T_BLOCK_END,   /* %}                                    */
    T_NAME,
    T_STRING, /* text: the unescaped value             */
    T_INT,
    T_FLOAT,
    T_OP, /* text: the operator                    */
};
struct jtok {
    uint8_t     kind;
    uint32_t    line, col;
    const char *text; /* T_TEXT, T_NAME, T_STRING, T_OP: NUL-terminated (T_TEXT/T_STRING may hold NULs) */
    size_t      len;
    int64_t     i;
    double      f;
};
struct jtoks {
    struct jtok *v;
    size_t       n, cap;
    char        *store; /* the token texts, one allocation list */
};
/* Tokenize src. Errors: WGF_ERR_FORMAT "line L, column C: ...". */
enum wgf_status jlex(const char *src, size_t len, struct jtoks *out, struct wgf_err *err);
void            jtoks_free(struct jtoks *t);

#endif
