/* `wgfuse llm bench --plan all` (the fusion dial) through the CLI binary ($WGF_CLI), for real
 * on the default adapter, on the built-in tiny model:
 *   - --json: one line with the four plans in dial order (ops, fused, roles, mega), dispatches
 *     per token strictly decreasing, every plan's check error finite and within its tolerance
 *     with every row's argmax equal to cpu-ref's, positive decode rates (one per run), three
 *     ratios whose CI contains the ratio, and positive floors (copy bandwidth, dispatch cost);
 *   - --svg: a well-formed plot naming the four plans and both floors;
 *   - usage errors (exit 2, the flag named): --svg without --plan all, --plan all with
 *     --backend cpu-ref, --runs past the dial's 64. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static char out[1 << 16];

static void check_json(struct wgf_t *t, const char *text)
{
    const char  *line = strrchr(text, '{') ? strstr(text, "{\"bench\"") : NULL;
    json_error_t je;
    json_t      *j = line ? json_loads(line, JSON_DISABLE_EOF_CHECK, &je) : NULL;
    if (!wgf_t_check(t, j != NULL, "dial --json parses", "%.300s", text)) return;
    json_t     *plans = json_object_get(j, "plans"), *ratios = json_object_get(j, "ratios");
    const char *want[4] = {"ops", "fused", "roles", "mega"};
    bool        order = json_array_size(plans) == 4, checks = order, rates = order;
    long long   prev  = 1LL << 40;
    for (size_t i = 0; order && i < 4; i++) {
        json_t *p = json_array_get(plans, i);
        order     = order && !strcmp(json_string_value(json_object_get(p, "plan")), want[i]);
        long long d = json_integer_value(json_object_get(p, "dispatches_per_token"));
        order       = order && d > 0 && d < prev;
        prev        = d;
        double e = json_number_value(json_object_get(p, "check_err")), tol = json_number_value(json_object_get(p, "tolerance"));
        checks   = checks && isfinite(e) && e <= tol && tol > 0 &&
                 json_integer_value(json_object_get(p, "argmax_agree")) == json_integer_value(json_object_get(p, "check_rows"));
        json_t *runs = json_object_get(p, "decode_tok_s");
        rates        = rates && json_array_size(runs) == 2;
        for (size_t k = 0; rates && k < 2; k++) rates = json_number_value(json_array_get(runs, k)) > 0;
    }
    wgf_t_check(t, order, "dial: ops, fused, roles, mega with fewer dispatches each", "%.400s", line);
    wgf_t_check(t, checks, "dial: every plan within tolerance of cpu-ref, every argmax equal", "%.400s", line);
    wgf_t_check(t, rates, "dial: a positive decode rate per run", "%.400s", line);
    bool ok = json_array_size(ratios) == 3;
    for (size_t i = 0; ok && i < 3; i++) {
        json_t *r  = json_array_get(ratios, i), *ci = json_object_get(r, "ci");
        double  q  = json_number_value(json_object_get(r, "ratio"));
        ok = q > 0 && json_number_value(json_array_get(ci, 0)) <= q && q <= json_number_value(json_array_get(ci, 1));
    }
    wgf_t_check(t, ok, "dial: three ratios, each inside its CI", "%.400s", line);
    wgf_t_check(t, json_number_value(json_object_get(j, "copy_gbps")) > 0 &&
                       json_number_value(json_object_get(j, "dispatch_us")) > 0,
                "dial: floors measured", "%.400s", line);
    json_decref(j);
}

int main(void)
{
    struct wgf_t t   = {0};
    const char  *cli = wgf_t_cli();
    char         dir[512], svg[700], cmd[4096];
    wgf_t_tmpdir("cli_llm_dial", dir, sizeof dir);
    snprintf(svg, sizeof svg, "%s/dial.svg", dir);

    snprintf(cmd, sizeof cmd,
             "{ '%s' --quiet llm bench --shape tiny --plan all -n 4 --prompt-tokens 4 --runs 2 --check-steps 2 --json "
             "--svg '%s' 2>/dev/null; }",
             cli, svg);
    int rc = wgf_t_run(cmd, out, sizeof out);
    if (wgf_t_check(&t, rc == 0, "llm bench --plan all --json: exit 0", "exit %d: %.400s", rc, out)) check_json(&t, out);

    FILE  *f = fopen(svg, "r");
    size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
    if (f) fclose(f);
    out[n] = 0;
    wgf_t_check(&t, n > 0 && !strncmp(out, "<?xml", 5) && strstr(out, "</svg>") && strstr(out, ">ops ") &&
                        strstr(out, ">fused ") && strstr(out, ">roles ") && strstr(out, ">mega ") &&
                        strstr(out, "dispatch floor") && strstr(out, "bytes floor"),
                "--svg: the plot names the four plans and both floors", "%zu bytes: %.200s", n, out);

    const struct {
        const char *args, *needle, *what;
    } bad[] = {
        {"--shape tiny --svg x.svg", "--svg", "--svg without --plan all"},
        {"--shape tiny --plan all --backend cpu-ref", "--plan all", "--plan all with --backend cpu-ref"},
        {"--shape tiny --plan all --runs 65", "--runs", "--plan all --runs 65"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(cmd, sizeof cmd, "'%s' llm bench %s", cli, bad[i].args);
        rc = wgf_t_run(cmd, out, sizeof out);
        wgf_t_check(&t, rc == 2 && strstr(out, bad[i].needle), bad[i].what, "exit %d: %.300s", rc, out);
    }
    return wgf_t_finish(&t);
}
