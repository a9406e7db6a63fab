/* wgfuse — Jinja lexer: template source -> tokens, with the whitespace rules of the
 * environment transformers uses for chat templates:
 *  - newlines are normalized to "\n" and one trailing newline of the source is dropped
 *    (keep_trailing_newline=False);
 *  - "{%-", "{{-", "{#-" strip all whitespace before the tag, "-%}", "-}}", "-#}" all after;
 *  - trim_blocks: the first "\n" after a block or comment tag is dropped (not after "+%}");
 *  - lstrip_blocks: spaces and tabs between a line start and a block or comment tag are
 *    dropped (not before "{%+"), "line start" being a newline in the text or a preceding
 *    tag whose match ended with one;
 *  - {% raw %}...{% endraw %} is text.
 * String literals are unescaped as Python does (\n \t \r \\ \' \" \xhh \uhhhh \Uhhhhhhhh
 * \ooo \a \b \f \v; an unknown escape keeps its backslash). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/jinja/jinja_internal.h"
#include "llm/tokenizer_internal.h"

struct lx {
    const char     *s; /* normalized source */
    size_t          n, i;
    uint32_t        line, col; /* of s[i] */
    struct jtoks   *t;
    char           *store;
    size_t          used;
    struct wgf_err *err;
    int             depth; /* open brackets inside a tag */
};

/* Python's str.isspace() for a code point. */
bool jpy_isspace(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/* Length of the whitespace character at s[i..n) (0 if none). */
static size_t ws_at(const char *s, size_t n, size_t i)
{
    uint32_t cp;
    size_t   k = wgf__utf8_next((const unsigned char *)s + i, n - i, &cp);
    return k && jpy_isspace(cp) ? k : 0;
}

/* Length of the whitespace run ending at s[end) (scanning back by characters). */
static size_t ws_before(const char *s, size_t start, size_t end)
{
    size_t e = end;
    while (e > start) {
        size_t b = e - 1;
        while (b > start && ((unsigned char)s[b] & 0xC0) == 0x80 && e - b < 4) b--;
        uint32_t cp;
        size_t   k = wgf__utf8_next((const unsigned char *)s + b, e - b, &cp);
        if (k != e - b || !jpy_isspace(cp)) break;
        e = b;
    }
    return end - e;
}

static void advance(struct lx *l, size_t k)
{
    for (size_t j = 0; j < k && l->i < l->n; j++, l->i++) {
        if (l->s[l->i] == '\n') l->line++, l->col = 1;
        else if (((unsigned char)l->s[l->i] & 0xC0) != 0x80) l->col++;
    }
}

static enum wgf_status lfail(struct lx *l, uint32_t line, uint32_t col, const char *what)
{
    return wgf_fail(l->err, WGF_ERR_FORMAT, "line %u, column %u: %s", line, col, what);
}

static struct jtok *push(struct lx *l, uint8_t kind, uint32_t line, uint32_t col)
{
    struct jtoks *t = l->t;
    if (t->n == t->cap) {
        size_t       cap = t->cap ? t->cap * 2 : 256;
        struct jtok *v   = realloc(t->v, cap * sizeof *v);
        if (!v) return NULL;
        t->v = v, t->cap = cap;
    }
    struct jtok *k = &t->v[t->n++];
    memset(k, 0, sizeof *k);
    k->kind = kind, k->line = line, k->col = col;
    return k;
}

/* Copy n bytes into the store (sized for every token text plus its NUL). */
static const char *keep(struct lx *l, const char *s, size_t n)
{
    char *d = l->store + l->used;
    memcpy(d, s, n);
    d[n] = '\0';
    l->used += n + 1;
    return d;
}

static enum wgf_status text_tok(struct lx *l, const char *s, size_t n, uint32_t line, uint32_t col)
{
    if (!n) return WGF_OK;
    struct jtok *k = push(l, T_TEXT, line, col);
    if (!k) return wgf_fail(l->err, WGF_ERR_NOMEM, "chat template: out of memory");
    k->text = keep(l, s, n), k->len = n;
    return WGF_OK;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* A string literal starting at l->i (the quote). */
static enum wgf_status lex_string(struct lx *l)
{
    uint32_t line = l->line, col = l->col;
    char     q    = l->s[l->i];
    size_t   j    = l->i + 1;
    while (j < l->n && l->s[j] != q) j += (l->s[j] == '\\' && j + 1 < l->n) ? 2 : 1;
    if (j >= l->n) return lfail(l, line, col, "unterminated string");
    char  *d = l->store + l->used;
    size_t o = 0;
    for (size_t p = l->i + 1; p < j;) {
        char ch = l->s[p];
        if (ch != '\\') {
            d[o++] = ch, p++;
            continue;
        }
        char     e  = l->s[p + 1];
        uint32_t cp = 0;
        int      nd = 0;
        p += 2;
        switch (e) {
        case 'n': d[o++] = '\n'; continue;
        case 't': d[o++] = '\t'; continue;
        case 'r': d[o++] = '\r'; continue;
        case '\\': d[o++] = '\\'; continue;
        case '\'': d[o++] = '\''; continue;
        case '"': d[o++] = '"'; continue;
        case 'a': d[o++] = '\a'; continue;
        case 'b': d[o++] = '\b'; continue;
        case 'f': d[o++] = '\f'; continue;
        case 'v': d[o++] = '\v'; continue;
        case '\n': continue; /* line continuation */
        case 'x': nd = 2; break;
        case 'u': nd = 4; break;
        case 'U': nd = 8; break;
        default:
            if (e >= '0' && e <= '7') {
                cp = (uint32_t)(e - '0');
                for (int k = 0; k < 2 && p < j && l->s[p] >= '0' && l->s[p] <= '7'; k++, p++)
                    cp = cp * 8 + (uint32_t)(l->s[p] - '0');
                o += wgf__utf8_put(cp, d + o);
                continue;
            }
            d[o++] = '\\', d[o++] = e; /* Python keeps unknown escapes */
            continue;
        }
        for (int k = 0; k < nd; k++, p++) {
            int h = p < j ? hexval(l->s[p]) : -1;
            if (h < 0) return lfail(l, line, col, "malformed \\x, \\u or \\U escape in a string");
            cp = cp * 16 + (uint32_t)h;
        }
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return lfail(l, line, col, "string escape outside Unicode scalar values");
        o += wgf__utf8_put(cp, d + o);
    }
    d[o] = '\0';
    l->used += o + 1;
    struct jtok *k = push(l, T_STRING, line, col);
    if (!k) return wgf_fail(l->err, WGF_ERR_NOMEM, "chat template: out of memory");
    k->text = d, k->len = o;
    advance(l, j + 1 - l->i);
    return WGF_OK;
}

static enum wgf_status lex_number(struct lx *l)
{
    uint32_t line = l->line, col = l->col;
    size_t   j = l->i;
    bool     fl = false;
    while (j < l->n && ((l->s[j] >= '0' && l->s[j] <= '9') || l->s[j] == '_')) j++;
    if (j + 1 < l->n && l->s[j] == '.' && l->s[j + 1] >= '0' && l->s[j + 1] <= '9') {
        fl = true;
        for (j++; j < l->n && ((l->s[j] >= '0' && l->s[j] <= '9') || l->s[j] == '_');) j++;
    }
    if (j < l->n && (l->s[j] == 'e' || l->s[j] == 'E')) {
        size_t k = j + 1;
        if (k < l->n && (l->s[k] == '+' || l->s[k] == '-')) k++;
        if (k < l->n && l->s[k] >= '0' && l->s[k] <= '9') {
            fl = true;
            for (j = k; j < l->n && l->s[j] >= '0' && l->s[j] <= '9';) j++;
        }
    }
    char   buf[64];
    size_t o = 0;
    for (size_t p = l->i; p < j; p++)
        if (l->s[p] != '_') {
            if (o + 1 >= sizeof buf) return lfail(l, line, col, "number literal too long");
            buf[o++] = l->s[p];
        }
    buf[o] = '\0';
    struct jtok *k = push(l, fl ? T_FLOAT : T_INT, line, col);
    if (!k) return wgf_fail(l->err, WGF_ERR_NOMEM, "chat template: out of memory");
    errno = 0;
    if (fl) {
        k->f = strtod(buf, NULL);
    } else {
        long long v = strtoll(buf, NULL, 10);
        if (errno == ERANGE) return lfail(l, line, col, "integer literal out of the 64-bit range");
        k->i = (int64_t)v;
    }
    advance(l, j - l->i);
    return WGF_OK;
}

static const char *const ops3[] = {"**", "//", "==", "!=", ">=", "<=", NULL};
static const char        ops1[] = "+-*/%~<>=.,:|()[]{}";

/* Tokens inside a tag until its end delimiter ("}}" or "%}"); returns with l->i after the
 * delimiter and *strip_after set for a "-" end, *plus for a "+" end. */
static enum wgf_status lex_tag(struct lx *l, char endch, bool *strip_after, bool *plus, bool *found)
{
    *found = false;
    l->depth = 0;
    while (l->i < l->n) {
        char   ch = l->s[l->i];
        size_t w  = ws_at(l->s, l->n, l->i);
        if (w) {
            advance(l, w);
            continue;
        }
        /* the end: "-%}" / "+%}" / "%}" (only outside brackets) */
        if (l->depth == 0) {
            size_t k = l->i;
            bool   minus = ch == '-', pl = ch == '+';
            if (minus || pl) k++;
            if (k + 1 < l->n && l->s[k] == endch && l->s[k + 1] == '}') {
                uint32_t line = l->line, col = l->col;
                struct jtok *t = push(l, endch == '%' ? T_BLOCK_END : T_VAR_END, line, col);
                if (!t) return wgf_fail(l->err, WGF_ERR_NOMEM, "chat template: out of memory");
                advance(l, k + 2 - l->i);
                *strip_after = minus, *plus = pl, *found = true;
                return WGF_OK;
            }
        }
        uint32_t line = l->line, col = l->col;
        if (ch == '"' || ch == '\'') {
            enum wgf_status st = lex_string(l);
            if (st) return st;
            continue;
        }
        if (ch >= '0' && ch <= '9') {
            enum wgf_status st = lex_number(l);
            if (st) return st;
            continue;
        }
        if (ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
            size_t j = l->i;
            while (j < l->n && (l->s[j] == '_' || (l->s[j] >= 'a' && l->s[j] <= 'z') || (l->s[j] >= 'A' && l->s[j] <= 'Z') ||
                                (l->s[j] >= '0' && l->s[j] <= '9')))
                j++;
            struct jtok *t = push(l, T_NAME, line, col);
            if (!t) return wgf_fail(l->err, WGF_ERR_NOMEM, "chat template: out of memory");
            t->text = keep(l, l->s + l->i, j - l->i), t->len = j - l->i;
            advance(l, j - l->i);
            continue;
        }
        size_t oplen = 0;
        for (int k = 0; ops3[k]; k++)
            if (l->i + 1 < l->n && l->s[l->i] == ops3[k][0] && l->s[l->i + 1] == ops3[k][1]) oplen = 2;
        if (!oplen && ch && strchr(ops1, ch)) oplen = 1;
        if (!oplen) {
            char msg[64];
            if ((unsigned char)ch >= 0x20 && (unsigned char)ch < 0x7f) snprintf(msg, sizeof msg, "unexpected character '%c'", ch);
            else snprintf(msg, sizeof msg, "unexpected byte 0x%02x", (unsigned)(unsigned char)ch);
            return lfail(l, line, col, msg);
        }
        if (ch == '(' || ch == '[' || ch == '{') l->depth++;
        if ((ch == ')' || ch == ']' || ch == '}') && l->depth > 0) l->depth--;
        struct jtok *t = push(l, T_OP, line, col);
        if (!t) return wgf_fail(l->err, WGF_ERR_NOMEM, "chat template: out of memory");
        t->text = keep(l, l->s + l->i, oplen), t->len = oplen;
        advance(l, oplen);
    }
    return WGF_OK;
}

/* Is s[i..) "{%" [-+]? ws* word ws* [-+]? "%}"? Returns the length of the whole tag, 0 if not. */
static size_t simple_tag(const char *s, size_t n, size_t i, const char *word, bool *minus_before, bool *minus_after,
                         bool *plus_before, bool *plus_after)
{
    if (i + 2 > n || s[i] != '{' || s[i + 1] != '%') return 0;
    size_t j = i + 2;
    *minus_before = j < n && s[j] == '-';
    *plus_before  = j < n && s[j] == '+';
    if (*minus_before || *plus_before) j++;
    while (j < n && ws_at(s, n, j)) j += ws_at(s, n, j);
    size_t wl = strlen(word);
    if (j + wl > n || memcmp(s + j, word, wl) != 0) return 0;
    j += wl;
    size_t k = j;
    while (j < n && ws_at(s, n, j)) j += ws_at(s, n, j);
    if (j == k && j < n && s[j] != '-' && s[j] != '+' && s[j] != '%') return 0;
    *minus_after = j < n && s[j] == '-';
    *plus_after  = j < n && s[j] == '+';
    if (*minus_after || *plus_after) j++;
    if (j + 2 > n || s[j] != '%' || s[j + 1] != '}') return 0;
    return j + 2 - i;
}

enum wgf_status jlex(const char *src, size_t len, struct jtoks *out, struct wgf_err *err)
{
    memset(out, 0, sizeof *out);
    size_t cap;
    if (!wgf_mul_size(len, 2, &cap) || !wgf_add_size(cap, 64, &cap))
        return wgf_fail(err, WGF_ERR_LIMIT, "chat template: %zu bytes is too long", len);
    /* normalized source: \r\n and \r -> \n, one trailing \n dropped */
    char *s = malloc(len + 1);
    out->store = malloc(cap);
    if (!s || !out->store) {
        free(s);
        return wgf_fail(err, WGF_ERR_NOMEM, "chat template: out of memory");
    }
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (src[i] == '\r') {
            s[n++] = '\n';
            if (i + 1 < len && src[i + 1] == '\n') i++;
        } else {
            s[n++] = src[i];
        }
    }
    if (n && s[n - 1] == '\n') n--;
    s[n] = '\0';
    struct lx l = {.s = s, .n = n, .i = 0, .line = 1, .col = 1, .t = out, .store = out->store, .err = err};

    bool            line_starting = true; /* the previous tag's match ended with "\n" (or start) */
    bool            strip_next    = false; /* the previous tag ended with "-": lstrip this text */
    enum wgf_status st            = WGF_OK;
    while (!st) {
        /* the next tag start */
        size_t p = l.i;
        while (p + 1 < n && !(s[p] == '{' && (s[p + 1] == '{' || s[p + 1] == '%' || s[p + 1] == '#'))) p++;
        bool   at_end = p + 1 >= n;
        size_t tstart = at_end ? n : p;
        /* the text before it, with whitespace control */
        size_t a = l.i, b = tstart;
        if (strip_next)
            while (a < b && ws_at(s, b, a)) a += ws_at(s, b, a);
        char kind  = at_end ? 0 : s[p + 1];
        char modch = !at_end && p + 2 < n ? s[p + 2] : 0;
        if (!at_end && modch == '-') {
            b -= ws_before(s, a, b);
        } else if (!at_end && (kind == '%' || kind == '#') && modch != '+') {
            /* lstrip_blocks: spaces/tabs back to the line start */
            size_t k = b;
            while (k > a && (s[k - 1] == ' ' || s[k - 1] == '\t')) k--;
            if ((k > a && s[k - 1] == '\n') || (k == a && (a > l.i ? s[a - 1] == '\n' : line_starting))) b = k;
        }
        uint32_t tl = l.line, tc = l.col;
        advance(&l, a - l.i);
        tl = l.line, tc = l.col;
        if ((st = text_tok(&l, s + a, b - a, tl, tc))) break;
        advance(&l, tstart - l.i);
        if (at_end) break;

        uint32_t line = l.line, col = l.col;
        bool     strip_after = false, plus_after = false;
        if (kind == '#') {
            size_t e = p + 2;
            while (e + 1 < n && !(s[e] == '#' && s[e + 1] == '}')) e++;
            if (e + 1 >= n) {
                st = lfail(&l, line, col, "unterminated comment");
                break;
            }
            strip_after = s[e - 1] == '-' && e - 1 >= p + 2;
            plus_after  = s[e - 1] == '+' && e - 1 >= p + 2;
            advance(&l, e + 2 - l.i);
        } else {
            bool mb, ma, pb, pa;
            size_t raw = kind == '%' ? simple_tag(s, n, p, "raw", &mb, &ma, &pb, &pa) : 0;
            if (raw) {
                advance(&l, raw);
                /* the raw text up to {% endraw %} */
                size_t e = l.i, endlen = 0;
                bool   emb = false, ema = false, epb = false, epa = false;
                for (; e + 1 < n; e++)
                    if ((endlen = simple_tag(s, n, e, "endraw", &emb, &ema, &epb, &epa))) break;
                if (!endlen) {
                    st = lfail(&l, line, col, "{% raw %} without {% endraw %}");
                    break;
                }
                size_t ra = l.i, rb = e;
                if (ma) while (ra < rb && ws_at(s, rb, ra)) ra += ws_at(s, rb, ra);
                else if (!pa && ra < rb && s[ra] == '\n') ra++;
                if (emb) rb -= ws_before(s, ra, rb);
                else if (!epb) {
                    size_t k = rb;
                    while (k > ra && (s[k - 1] == ' ' || s[k - 1] == '\t')) k--;
                    if (k > ra && s[k - 1] == '\n') rb = k;
                }
                advance(&l, ra - l.i);
                if ((st = text_tok(&l, s + ra, rb - ra, l.line, l.col))) break;
                advance(&l, e + endlen - l.i);
                strip_after = ema, plus_after = epa;
                kind = '%';
            } else {
                struct jtok *t = push(&l, kind == '%' ? T_BLOCK_BEGIN : T_VAR_BEGIN, line, col);
                if (!t) {
                    st = wgf_fail(err, WGF_ERR_NOMEM, "chat template: out of memory");
                    break;
                }
                advance(&l, 2 + (modch == '-' || modch == '+' ? 1u : 0u));
                bool found;
                if ((st = lex_tag(&l, kind == '%' ? '%' : '}', &strip_after, &plus_after, &found))) break;
                if (!found) {
                    st = lfail(&l, line, col, kind == '%' ? "block tag '{%' without '%}'" : "'{{' without '}}'");
                    break;
                }
            }
        }
        /* after the tag: "-" strips all whitespace; trim_blocks drops one "\n" after a
         * block or comment tag */
        strip_next    = strip_after;
        line_starting = false;
        if (strip_after) {
            size_t k = l.i;
            while (k < n && ws_at(s, n, k)) k += ws_at(s, n, k);
            line_starting = k > l.i && s[k - 1] == '\n';
            advance(&l, k - l.i);
            strip_next = false;
        } else if ((kind == '%' || kind == '#') && !plus_after && l.i < n && s[l.i] == '\n') {
            advance(&l, 1);
            line_starting = true;
        }
    }
    if (!st && !push(&l, T_EOF, l.line, l.col)) st = wgf_fail(err, WGF_ERR_NOMEM, "chat template: out of memory");
    free(s);
    if (st) jtoks_free(out);
    return st;
}

void jtoks_free(struct jtoks *t)
{
    if (!t) return;
    free(t->v);
    free(t->store);
    memset(t, 0, sizeof *t);
}
