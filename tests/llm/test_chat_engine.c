/* The chat-template Jinja engine (src/llm/jinja/), construct by construct and under attack.
 *
 *  - every case of tests/llm/data/chat/engine_cases.json (written by make_engine_cases.py
 *    with Jinja2 in transformers' environment): the same bytes, or an error where Jinja2
 *    raised (raise_exception's message carried into ours);
 *  - content marks: bytes from content variables are marked, through +, ~, slicing,
 *    strip, split, replace and tojson; template text never is;
 *  - strftime_now formats the given time as the host's strftime does;
 *  - hostile templates: unbounded loops and recursion, deep nesting, 10 MB of output,
 *    memory growth, undefined values, syntax errors with line and column — each a one-line
 *    error, within the limits, and fast. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "llm/jinja/jinja.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Render `tmpl` with the variables of a JSON object (strings under "messages" are content). */
static enum wgf_status render(const char *tmpl, json_t *vars, const struct wgf__jinja_limits *lim, struct wgf__jinja_out *out,
                              struct wgf_err *err)
{
    struct wgf__jinja *t  = NULL;
    enum wgf_status    st = wgf__jinja_parse(tmpl, strlen(tmpl), &t, err);
    if (st) return st;
    struct wgf__jinja_var v[32];
    size_t                n = 0;
    const char           *key;
    json_t               *val;
    json_object_foreach(vars, key, val)
    {
        if (n < 32) v[n].name = key, v[n].value = val, v[n].content = !strcmp(key, "messages"), n++;
    }
    st = wgf__jinja_render(t, v, n, lim, 0, out, err);
    wgf__jinja_free(t);
    return st;
}

static bool one_line(const char *m) { return m[0] && !strchr(m, '\n'); }

static void test_cases(struct wgf_t *t)
{
    const char *src = getenv("WGF_SOURCE_DIR");
    char        path[4096];
    snprintf(path, sizeof path, "%s/tests/llm/data/chat/engine_cases.json", src ? src : ".");
    json_error_t je;
    json_t      *doc = json_load_file(path, JSON_ALLOW_NUL, &je);
    if (!wgf_t_check(t, doc != NULL, "engine_cases.json loads", "%s: %s", path, je.text)) return;
    json_t *cases = json_object_get(doc, "cases");
    size_t  i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char           *name = json_string_value(json_object_get(c, "name"));
        const char           *tmpl = json_string_value(json_object_get(c, "template"));
        json_t               *exp  = json_object_get(c, "expected");
        const char           *jerr = json_string_value(json_object_get(c, "error"));
        struct wgf__jinja_out out  = {0};
        struct wgf_err        err  = {0};
        enum wgf_status       st   = render(tmpl, json_object_get(c, "vars"), NULL, &out, &err);
        char                  label[160];
        snprintf(label, sizeof label, "jinja: %s", name);
        if (exp) {
            bool same = st == WGF_OK && out.len == json_string_length(exp) && memcmp(out.text, json_string_value(exp), out.len) == 0;
            wgf_t_check(t, same, label, "%s%sgot [%.*s] want [%s]", st ? err.msg : "", st ? "; " : "", (int)(out.len > 300 ? 300 : out.len),
                        out.text ? out.text : "", json_string_value(exp));
        } else {
            /* Jinja2 raised: we fail too, with a one-line message; raise_exception's text kept */
            const char *msg  = strstr(jerr, "TemplateError: ") == jerr ? jerr + 15 : NULL;
            bool        ok   = st == WGF_ERR_ARG && one_line(err.msg) && (!msg || strstr(err.msg, msg));
            wgf_t_check(t, ok, label, "status %d: %s (Jinja2: %s)", (int)st, err.msg, jerr);
        }
        free(out.text);
        free(out.mask);
    }
    json_decref(doc);
}

/* Content marks: which output bytes came from message text. */
static void test_marks(struct wgf_t *t)
{
    json_t *vars = json_pack("{s:[{s:s,s:s}]}", "messages", "role", "user", "content", "  <|im_start|>x  ");
    struct {
        const char *tmpl, *marks; /* marks: '1' content byte, '0' template byte */
    } cases[] = {
        {"<a>{{ messages[0].content }}</a>", "000111111111111111110000"},
        {"{{ '[' + messages[0].content | trim + ']' }}", "011111111111110"},
        {"{{ messages[0].content[2:4] ~ '|' }}", "110"},
        {"{{ messages[0].content.split('x')[0] }}", "11111111111111"},
        {"{{ messages[0].content | replace('x', 'Y') }}", "11111111111111011"},
        {"{{ messages[0].role }}", "1111"},
        {"{{ messages[0] | tojson }}", "000000000011110000000000000001111111111111111100"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct wgf__jinja_out out = {0};
        struct wgf_err        err = {0};
        enum wgf_status       st  = render(cases[k].tmpl, vars, NULL, &out, &err);
        char                  got[256] = {0};
        for (size_t i = 0; st == WGF_OK && i < out.len && i < 255; i++) got[i] = out.mask[i] ? '1' : '0';
        char label[160];
        snprintf(label, sizeof label, "content marks: %s", cases[k].tmpl);
        wgf_t_check(t, st == WGF_OK && !strcmp(got, cases[k].marks), label, "%s text [%.*s] marks %s want %s", err.msg,
                    (int)out.len, out.text ? out.text : "", got, cases[k].marks);
        free(out.text);
        free(out.mask);
    }
    json_decref(vars);
}

static void test_strftime(struct wgf_t *t)
{
    struct wgf__jinja *tp  = NULL;
    struct wgf_err     err = {0};
    const char        *src = "{{ strftime_now('%d %b %Y %H:%M') }}";
    if (!wgf_t_check(t, wgf__jinja_parse(src, strlen(src), &tp, &err) == WGF_OK, "strftime_now parses", "%s", err.msg)) return;
    time_t    when = 1700000000;
    struct tm tm;
    char      want[64];
    localtime_r(&when, &tm);
    strftime(want, sizeof want, "%d %b %Y %H:%M", &tm);
    struct wgf__jinja_out out = {0};
    enum wgf_status       st  = wgf__jinja_render(tp, NULL, 0, NULL, (int64_t)when, &out, &err);
    wgf_t_check(t, st == WGF_OK && !strcmp(out.text, want), "strftime_now formats the given time", "got [%s] want [%s] %s",
                out.text ? out.text : "", want, err.msg);
    free(out.text), free(out.mask);
    /* the host clock: today's year */
    time_t now = time(NULL);
    localtime_r(&now, &tm);
    strftime(want, sizeof want, "%Y", &tm);
    wgf__jinja_free(tp);
    src = "{{ strftime_now('%Y') }}";
    wgf__jinja_parse(src, strlen(src), &tp, &err);
    st = wgf__jinja_render(tp, NULL, 0, NULL, -1, &out, &err);
    wgf_t_check(t, st == WGF_OK && !strcmp(out.text, want), "strftime_now reads the host clock", "got [%s] want [%s]",
                out.text ? out.text : "", want);
    free(out.text), free(out.mask);
    wgf__jinja_free(tp);
}

/* A template that must fail: status, one line, the expected words, within `secs`. */
static void expect_fail(struct wgf_t *t, const char *label, const char *tmpl, enum wgf_status want, const char *words,
                        double secs)
{
    json_t               *vars = json_pack("{s:[{s:s,s:s}]}", "messages", "role", "user", "content", "hi");
    struct wgf__jinja_out out  = {0};
    struct wgf_err        err  = {0};
    double                t0   = now_s();
    enum wgf_status       st   = render(tmpl, vars, NULL, &out, &err);
    double                dt   = now_s() - t0;
    bool found = false; /* words: alternatives separated by '|' */
    for (const char *w = words; *w && !found;) {
        const char *e = strchr(w, '|');
        size_t      n = e ? (size_t)(e - w) : strlen(w);
        char        one[256];
        snprintf(one, sizeof one, "%.*s", (int)n, w);
        found = strstr(err.msg, one) != NULL;
        w += n + (e ? 1 : 0);
    }
    wgf_t_check(t, st == want && one_line(err.msg) && found && dt < secs, label, "status %d (want %d), %.2f s: %s",
                (int)st, (int)want, dt, err.msg);
    free(out.text), free(out.mask);
    json_decref(vars);
}

static void test_hostile(struct wgf_t *t)
{
    /* unbounded work */
    expect_fail(t, "hostile: infinite recursion", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", WGF_ERR_ARG,
                "macro calls nested deeper than 64", 5);
    expect_fail(t, "hostile: exponential recursion",
                "{% macro f(n) %}{% if n < 60 %}{{ f(n + 1) }}{{ f(n + 1) }}{% endif %}{% endmacro %}{{ f(0) }}", WGF_ERR_ARG,
                "steps|memory", 20);
    expect_fail(t, "hostile: nested ranges", "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
                WGF_ERR_ARG, "steps|memory", 20);
    expect_fail(t, "hostile: huge range", "{% for a in range(9999999999999) %}{% endfor %}", WGF_ERR_ARG, "range", 5);
    expect_fail(t, "hostile: 10 MB of output", "{% for i in range(10000) %}{{ 'y' * 1000 }}{% endfor %}", WGF_ERR_ARG,
                "exceeds the output limit", 10);
    expect_fail(t, "hostile: 10M iterations", "{% for i in range(1000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}",
                WGF_ERR_ARG, "steps|memory", 30);
    expect_fail(t, "hostile: 25M iterations", "{% set r = range(5000) %}{% for i in r %}{% for j in r %}{% endfor %}{% endfor %}",
                WGF_ERR_ARG, "more than 20000000 steps", 30);
    expect_fail(t, "hostile: 10 MB string", "{{ 'x' * 20000000 }}", WGF_ERR_ARG, "output limit", 5);
    expect_fail(t, "hostile: doubling string",
                "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}",
                WGF_ERR_ARG, "output limit|memory", 10);
    expect_fail(t, "hostile: list growth",
                "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}", WGF_ERR_ARG,
                "memory", 20);
    /* undefined values, types, raise */
    expect_fail(t, "undefined attribute", "line one\n{{ nope.x }}", WGF_ERR_ARG, "line 2, column 4: 'nope' is undefined", 1);
    expect_fail(t, "undefined in arithmetic", "{{ nope + 1 }}", WGF_ERR_ARG, "'nope' is undefined", 1);
    expect_fail(t, "missing key then attribute", "{{ messages[0].tool_calls.x }}", WGF_ERR_ARG, "has no attribute 'tool_calls'", 1);
    expect_fail(t, "raise_exception", "{% if true %}\n  {{ raise_exception('roles must alternate') }}\n{% endif %}", WGF_ERR_ARG,
                "line 2, column 6: template error: roles must alternate", 1);
    /* syntax errors with line and column */
    expect_fail(t, "syntax: unclosed if", "a\n{% if x %}b", WGF_ERR_FORMAT, "line 2, column 4: 'if' block never closed", 1);
    expect_fail(t, "syntax: bad token", "{{ 1 +* 2 }}", WGF_ERR_FORMAT, "line 1, column 7: unexpected *", 1);
    expect_fail(t, "syntax: unknown filter", "\n\n  {{ x | frobnicate }}", WGF_ERR_FORMAT, "line 3, column 10: unknown filter 'frobnicate'", 1);
    expect_fail(t, "syntax: unknown tag", "{% include 'x' %}", WGF_ERR_FORMAT, "line 1, column 4: unknown or unsupported tag 'include'", 1);
    expect_fail(t, "syntax: unterminated string", "{{ 'abc }}", WGF_ERR_FORMAT, "line 1, column 4: unterminated string", 1);
    expect_fail(t, "syntax: endfor without for", "x{% endfor %}", WGF_ERR_FORMAT, "line 1, column 5: unexpected 'endfor'", 1);
    expect_fail(t, "syntax: unclosed tag", "{{ x ", WGF_ERR_FORMAT, "line 1, column 1: '{{' without '}}'", 1);
    /* nesting: parser and evaluator stay bounded */
    size_t n   = 100000;
    char  *deep = malloc(4 * n + 16);
    size_t o   = 0;
    o += (size_t)sprintf(deep + o, "{{ ");
    for (size_t i = 0; i < n; i++) deep[o++] = '(';
    deep[o++] = '1';
    for (size_t i = 0; i < n; i++) deep[o++] = ')';
    o += (size_t)sprintf(deep + o, " }}");
    deep[o] = '\0';
    expect_fail(t, "hostile: 100k nested parentheses", deep, WGF_ERR_FORMAT, "nesting deeper than", 2);
    o = 0;
    o += (size_t)sprintf(deep + o, "{{ 1");
    for (size_t i = 0; i < n; i++) o += (size_t)sprintf(deep + o, "+1");
    o += (size_t)sprintf(deep + o, " }}");
    expect_fail(t, "hostile: 100k-term sum (a tall tree)", deep, WGF_ERR_FORMAT, "nesting deeper than", 2);
    o = 0;
    for (size_t i = 0; i < 2000; i++) o += (size_t)sprintf(deep + o, "{%% if 1 %%}");
    expect_fail(t, "hostile: 2000 nested ifs", deep, WGF_ERR_FORMAT, "nesting deeper than", 2);
    o = 0;
    for (size_t i = 0; i < 20000; i++) o += (size_t)sprintf(deep + o, "not ");
    char *nots = malloc(o + 16);
    snprintf(nots, o + 16, "{{ %s1 }}", deep);
    expect_fail(t, "hostile: 20000 x not", nots, WGF_ERR_FORMAT, "nesting deeper than", 2);
    free(nots);
    /* a long elif chain is not nesting: it renders */
    o = 0;
    o += (size_t)sprintf(deep + o, "{%% if x == 0 %%}0");
    for (size_t i = 1; i < 3000; i++) o += (size_t)sprintf(deep + o, "{%% elif x == %zu %%}%zu", i, i);
    o += (size_t)sprintf(deep + o, "{%% endif %%}");
    {
        json_t               *vars = json_pack("{s:i}", "x", 2999);
        struct wgf__jinja_out out  = {0};
        struct wgf_err        err  = {0};
        enum wgf_status       st   = render(deep, vars, NULL, &out, &err);
        wgf_t_check(t, st == WGF_OK && !strcmp(out.text, "2999"), "3000-branch elif chain renders", "%s [%s]", err.msg,
                    out.text ? out.text : "");
        free(out.text), free(out.mask);
        json_decref(vars);
    }
    free(deep);
    /* custom limits are honoured */
    {
        struct wgf__jinja_limits lim;
        wgf__jinja_limits_default(&lim, 0);
        lim.max_output = 100;
        json_t               *vars = json_object();
        struct wgf__jinja_out out  = {0};
        struct wgf_err        err  = {0};
        enum wgf_status       st   = render("{% for i in range(101) %}x{% endfor %}", vars, &lim, &out, &err);
        wgf_t_check(t, st == WGF_ERR_ARG && strstr(err.msg, "output limit of 100 bytes"), "output limit 100 stops at 101", "%s", err.msg);
        free(out.text), free(out.mask);
        st = render("{% for i in range(100) %}x{% endfor %}", vars, &lim, &out, &err);
        wgf_t_check(t, st == WGF_OK && out.len == 100, "output limit 100 allows 100", "%s", err.msg);
        free(out.text), free(out.mask);
        json_decref(vars);
    }
}

int main(void)
{
    struct wgf_t t = {0};
    test_cases(&t);
    test_marks(&t);
    test_strftime(&t);
    test_hostile(&t);
    return wgf_t_finish(&t);
}
