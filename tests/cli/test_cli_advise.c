/* `wgfuse advise` and `--plan auto` through the CLI binary ($WGF_CLI), on the default adapter,
 * with the cache in a temporary $XDG_CACHE_HOME:
 *   - `advise --calibrate --json`: exit 0, one JSON object with the figures, the cache file
 *     written (valid JSON, format version 2);
 *   - a cache file that is corrupt, cut short or of another version: one warning line naming
 *     it, a recalibration, and a valid file again (`advise --shape tiny`, exit 0);
 *   - two synthetic devices (--calibration FILE) where the right plan differs: dispatches of
 *     1 ms on a device whose single workgroup reaches the whole bandwidth (mega: fewest
 *     dispatches) vs dispatches of 0.5 us on a wide device where one workgroup gets 1% of the
 *     bandwidth (mega's one-workgroup layers are slow: roles); `advise --json` recommends each,
 *     and `run --plan auto` on the tiny Llama (via $WGFUSE_CALIBRATION) says on stderr which
 *     plan it chose and runs it;
 *   - the dispatches advise counts for roles and mega are the dispatches_per_token `llm bench`
 *     reports for them (the model reads the plans, not a second description);
 *   - `advise --shape`: on this adapter each plan's kinds of dispatch are probed (every row
 *     "model": "probe", predicted = max(probe GPU, host)); --no-probe: every row "static";
 *   - `advise --sim`: on this adapter the kernels are probed (a "probe" object, every row
 *     "model": "probe" with its measured episode time); --no-probe or a --calibration FILE:
 *     every row "static", probe null;
 *   - errors: no mode (exit 2), --calibrate with --calibration (2), a missing --calibration
 *     file (exit 1, one line naming it), --plan with advise (2). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/bench_calibrate.h"

static char out[1 << 16];

static json_t *last_json(const char *text)
{
    const char  *p = strchr(text, '{');
    json_error_t je;
    return p ? json_loads(p, JSON_DISABLE_EOF_CHECK, &je) : NULL;
}

static void write_text(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) fwrite(text, 1, n, f), fclose(f);
}

/* the cache file of the default adapter: the one file in DIR/wgfuse */
static bool cache_file(const char *xdg, char *buf, size_t cap)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ls '%s'/wgfuse/calibration-*.json", xdg);
    if (wgf_t_run(cmd, buf, cap) != 0) return false;
    char *nl = strchr(buf, '\n');
    if (nl) *nl = 0;
    return buf[0] == '/';
}

static bool cache_valid(const char *path)
{
    json_error_t je;
    json_t      *j  = json_load_file(path, 0, &je);
    bool         ok = j && json_integer_value(json_object_get(j, "version")) == WGF_CALIBRATION_VERSION &&
              json_number_value(json_object_get(json_object_get(j, "device"), "read_gbps")) > 0;
    json_decref(j);
    return ok;
}

static void device(const char *path, double disp, double bw, double bw_wg, double gf, double gf_wg)
{
    char text[2048];
    int  n = snprintf(text, sizeof text,
                      "{\"format\": \"wgfuse-calibration\", \"version\": %d, \"adapter\": \"synthetic\", \"driver\": \"\", "
                      "\"backend\": \"\", \"webgpu_lib\": \"\", \"date\": \"\", \"seconds\": 0, "
                      "\"dispatch_us_by_mode\": {\"one_pass\": %g, \"pass_each\": %g, \"submit_each\": %g, "
                      "\"wait_each\": %g, \"indirect\": %g}, \"device\": {\"dispatch_us\": %g, \"read_gbps\": %g, \"read_gbps_wg\": %g, "
                      "\"gflops\": %g, \"gflops_wg\": %g, \"barrier_ns\": 0, \"subgroup_ns\": 0, \"dispatch_us_long\": 0, "
                      "\"len_short\": 16, \"len_long\": 2048, \"serial_gflops_wg\": 0, \"serial_wg\": 1024, \"workgroup_us\": 0, \"chain_gflops\": 0}}",
                      WGF_CALIBRATION_VERSION, disp, disp, disp, disp, disp, disp, bw, bw_wg, gf, gf_wg);
    write_text(path, text, (size_t)n);
}

int main(void)
{
    struct wgf_t t   = {0};
    const char  *cli = wgf_t_cli();
    char         dir[512], cmd[4096], cache[1024], devA[700], devB[700];
    wgf_t_tmpdir("cli_advise", dir, sizeof dir);
    snprintf(devA, sizeof devA, "%s/devA.json", dir);
    snprintf(devB, sizeof devB, "%s/devB.json", dir);
    setenv("XDG_CACHE_HOME", dir, 1);
    unsetenv("WGFUSE_CALIBRATION");

    snprintf(cmd, sizeof cmd, "{ '%s' --quiet advise --calibrate --json 2>/dev/null; }", cli);
    int     rc = wgf_t_run(cmd, out, sizeof out);
    json_t *j  = last_json(out);
    wgf_t_check(&t, rc == 0 && j && json_number_value(json_object_get(json_object_get(j, "device"), "gflops")) > 0 &&
                        json_object_get(json_object_get(j, "dispatch_us_by_mode"), "wait_each"),
                "advise --calibrate --json", "exit %d: %.300s", rc, out);
    json_decref(j);
    bool have = cache_file(dir, cache, sizeof cache);
    if (!wgf_t_check(&t, have && cache_valid(cache), "cache file written", "%.300s", cache)) return wgf_t_finish(&t);

    /* damaged cache files: warned about, recalibrated, rewritten */
    char *good = NULL;
    FILE *f    = fopen(cache, "rb");
    size_t len = 0;
    if (f) {
        good = malloc(1 << 16);
        len  = fread(good, 1, (1 << 16) - 1, f);
        fclose(f);
        good[len] = 0;
    }
    char vs[32];
    snprintf(vs, sizeof vs, "\"version\": %d", WGF_CALIBRATION_VERSION);
    const char *ver = good ? strstr(good, vs) : NULL;
    char        other[1 << 16];
    snprintf(other, sizeof other, "%.*s\"version\": 7%s", (int)(ver ? ver - good : 0), good ? good : "",
             ver ? ver + strlen(vs) : "");
    struct {
        const char *name, *text;
        size_t      n;
        const char *want;
    } cases[3] = {{"corrupt cache", "not json at all", 15, "corrupt"},
                  {"truncated cache", good, len / 2, "corrupt"},
                  {"other-version cache", other, strlen(other), "version"}};
    for (int i = 0; i < 3 && good && ver; i++) {
        write_text(cache, cases[i].text, cases[i].n);
        snprintf(cmd, sizeof cmd, "{ '%s' --quiet advise --shape tiny --no-probe 2>&1 >/dev/null; }", cli);
        rc = wgf_t_run(cmd, out, sizeof out);
        wgf_t_check(&t, rc == 0 && strstr(out, "warning: ignoring") && strstr(out, cache) && strstr(out, cases[i].want) &&
                            strstr(out, "recalibrating") && cache_valid(cache),
                    cases[i].name, "exit %d: %.400s", rc, out);
    }
    wgf_t_check(&t, good && ver, "cache file has a version field", "%.200s", good ? good : "");
    free(good);

    /* two synthetic devices */
    device(devA, 1000, 100, 100, 1000, 1000);
    device(devB, 0.5, 100, 1, 1000, 10);
    /* --ctx past the shape's trained context (tiny: 2048): the note run and serve give */
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "{ '%s' --quiet advise --shape tiny --no-probe --ctx %d --calibration '%s' 2>&1 >/dev/null; }",
                 cli, k ? 2048 : 2049, devA);
        rc = wgf_t_run(cmd, out, sizeof out);
        bool note = strstr(out, "note: --ctx 2049 is above the model's trained context 2048") != NULL;
        wgf_t_check(&t, rc == 0 && (k ? !strstr(out, "trained context") : note),
                    k ? "advise --ctx at the trained context: no note" : "advise --ctx past the trained context: the note",
                    "exit %d: %.300s", rc, out);
    }
    const char *want[2] = {"mega", "roles"};
    const char *dev[2]  = {devA, devB};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "{ '%s' --quiet advise --shape tiny --calibration '%s' --json 2>/dev/null; }", cli,
                 dev[i]);
        rc          = wgf_t_run(cmd, out, sizeof out);
        j           = last_json(out);
        json_t *rec = json_object_get(j, "recommended");
        if (i == 0) { /* the cost model reads the plan's own dispatches: as many as the plan runs */
            json_t   *plans = json_object_get(j, "plans");
            long long adv[4];
            for (size_t k = 0; k < 4; k++)
                adv[k] = json_integer_value(json_object_get(json_array_get(plans, k), "dispatches"));
            for (int k = 2; k < 4; k++) { /* roles, mega */
                char c2[2048], o2[8192];
                snprintf(c2, sizeof c2,
                         "{ '%s' --quiet llm bench --shape tiny --plan %s -n 2 --prompt-tokens 2 --runs 1 --json "
                         "2>/dev/null; }",
                         cli, k == 2 ? "roles" : "mega");
                int     r2 = wgf_t_run(c2, o2, sizeof o2);
                json_t *b  = last_json(o2);
                long long d = json_integer_value(json_object_get(b, "dispatches_per_token"));
                wgf_t_check(&t, r2 == 0 && d > 0 && d == adv[k], "advise counts the dispatches the plan runs",
                            "%s: advise %lld, llm bench %lld (exit %d)", k == 2 ? "roles" : "mega", adv[k], d, r2);
                json_decref(b);
            }
        }
        wgf_t_check(&t, rc == 0 && json_is_string(rec) && !strcmp(json_string_value(rec), want[i]) &&
                            json_array_size(json_object_get(j, "plans")) == 4,
                    i ? "wide device: roles" : "expensive dispatches: mega", "exit %d: %.600s", rc, out);
        json_decref(j);
        snprintf(cmd, sizeof cmd,
                 "{ WGFUSE_CALIBRATION='%s' '%s' run -m '%s' --tokens 1,2 -n 2 --temp 0 --plan auto 2>&1 >/dev/null; }",
                 dev[i], cli, wgf_t_tiny_llama());
        rc = wgf_t_run(cmd, out, sizeof out);
        char line[64];
        snprintf(line, sizeof line, "plan auto: chose plan %s:", want[i]);
        wgf_t_check(&t, rc == 0 && strstr(out, line), "run --plan auto says what it chose", "exit %d: %.400s", rc, out);
    }

    /* advise --sim: the kernels probed on this adapter (its calibration is the cache's), every
     * row composed from them; --no-probe and a --calibration FILE: the static model */
    for (int i = 0; i < 3; i++) {
        char extra[800] = "";
        if (i == 1) snprintf(extra, sizeof extra, " --no-probe");
        if (i == 2) snprintf(extra, sizeof extra, " --calibration '%s'", devA);
        snprintf(cmd, sizeof cmd,
                 "{ '%s' --quiet advise --sim cartpole --steps 20 --pop 128 --hidden 8 --gens-per-submit 3%s --json "
                 "2>/dev/null; }",
                 cli, extra);
        rc                = wgf_t_run(cmd, out, sizeof out);
        j                 = last_json(out);
        json_t     *pr    = json_object_get(j, "probe");
        json_t     *plans = json_object_get(j, "plans");
        const char *model = i == 0 ? "probe" : "static";
        size_t      n_model = 0, n_rows = json_array_size(plans);
        for (size_t k = 0; k < n_rows; k++) {
            json_t     *row = json_array_get(plans, k);
            const char *m   = json_string_value(json_object_get(row, "model"));
            n_model += m && !strcmp(m, model) && (i != 0 || json_real_value(json_object_get(row, "episode_ms")) > 0);
        }
        bool probe_ok = i == 0 ? json_is_object(pr) && json_real_value(json_object_get(pr, "chunk_us")) > 0
                               : json_is_null(pr);
        wgf_t_check(&t, rc == 0 && n_rows == 12 && n_model == n_rows && probe_ok, /* 4 strategies x 3 evolve */
                    i == 0 ? "advise --sim probes this adapter"
                    : i == 1 ? "--no-probe: the static model"
                             : "--calibration FILE: the static model",
                    "exit %d, %zu of %zu rows '%s', probe %s: %.300s", rc, n_model, n_rows, model,
                    pr ? (json_is_null(pr) ? "null" : "object") : "absent", out);
        json_decref(j);
    }

    /* advise --shape: each plan's kinds of dispatch timed on this adapter (its calibration is the
     * cache's) and the token composed from them: every row "model": "probe", its prediction
     * max(probe GPU, probe host), its kinds between 1 and its dispatches (the ops plan's
     * layers repeat kinds: fewer); --no-probe: every row "static", no probe object */
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "{ '%s' --quiet advise --shape tiny%s --json 2>/dev/null; }", cli,
                 i ? " --no-probe" : "");
        rc                  = wgf_t_run(cmd, out, sizeof out);
        j                   = last_json(out);
        json_t *plans       = json_object_get(j, "plans");
        size_t  n_rows      = json_array_size(plans), n_ok = 0;
        bool    ops_repeats = false;
        for (size_t k = 0; k < n_rows; k++) {
            json_t     *row   = json_array_get(plans, k);
            json_t     *pr    = json_object_get(row, "probe");
            const char *model = json_string_value(json_object_get(row, "model"));
            double      pred  = json_real_value(json_object_get(row, "predicted_ms_per_token"));
            long long   disp  = json_integer_value(json_object_get(row, "dispatches"));
            if (i) {
                n_ok += model && !strcmp(model, "static") && !pr;
                continue;
            }
            double    gpu = json_real_value(json_object_get(pr, "gpu_ms")), host = json_real_value(json_object_get(pr, "host_ms"));
            long long kinds = json_integer_value(json_object_get(pr, "kinds"));
            double    comp  = gpu > host ? gpu : host;
            n_ok += model && !strcmp(model, "probe") && gpu > 0 && host > 0 && kinds >= 1 && kinds <= disp &&
                    pred > 0 && (pred - comp) <= 1e-6 * comp && (comp - pred) <= 1e-6 * comp;
            if (k == 0) ops_repeats = kinds < disp;
        }
        wgf_t_check(&t, rc == 0 && n_rows == 4 && n_ok == 4 && (i || ops_repeats),
                    i ? "advise --shape --no-probe: the static model" : "advise --shape probes each plan on this adapter",
                    "exit %d, %zu of %zu rows right: %.600s", rc, n_ok, n_rows, out);
        json_decref(j);
    }

    struct {
        const char *args, *name, *want;
        int         rc;
    } errs[] = {{"advise", "no mode: usage error", "give --calibrate", 2},
                {"advise --calibrate --calibration x.json", "--calibrate with --calibration", "--calibration", 2},
                {"advise --shape tiny --calibration /nonexistent/dev.json", "missing --calibration file",
                 "/nonexistent/dev.json", 1},
                {"advise --shape tiny --plan roles", "--plan with advise", "--plan", 2},
                /* a flag of the other form is refused, not ignored */
                {"advise --sim cartpole --batch 8", "--batch with --sim", "--batch applies to --llm", 2},
                {"advise --sim cartpole --weights Q8_0", "--weights with --sim", "--weights applies to --llm", 2},
                {"advise --shape tiny --pop 64", "--pop with --shape", "--pop applies to --sim", 2},
                {"advise --table --chunks 5", "--chunks with --table", "--chunks applies to --sim", 2}};
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
        snprintf(cmd, sizeof cmd, "'%s' --quiet %s", cli, errs[i].args);
        rc        = wgf_t_run(cmd, out, sizeof out);
        int lines = 0;
        for (const char *p = out; *p; p++) lines += *p == '\n';
        wgf_t_check(&t, rc == errs[i].rc && strstr(out, errs[i].want) && lines == 1, errs[i].name, "exit %d: %.300s",
                    rc, out);
    }
    return wgf_t_finish(&t);
}
