/* `wgfuse advise --sim`, `sim bench --strategy auto [--autotune]` and `advise --batch` through
 * the CLI binary ($WGF_CLI), on synthetic device descriptions (--calibration FILE /
 * $WGFUSE_CALIBRATION), small sizes (a few seconds on lavapipe):
 *   - device A (dispatches of 1 ms, everything else free): the recommended strategy is the one
 *     with the fewest dispatches per generation (fused: one episode dispatch), never chunked or
 *     per-step;
 *   - device B (dispatches nearly free, one workgroup 1e6 times slower than the device): the
 *     strategy with the most workgroups per episode dispatch wins (fused-wide: a workgroup per
 *     4 genomes against fused's per 64);
 *   - `sim bench --strategy auto` under each device runs what the advisor chose (stderr line
 *     "strategy auto: chose ...", the JSON row's strategy), and the two differ; --autotune says
 *     what it measured;
 *   - every plan's dispatch count in advise's JSON is what `sim bench` reports for it
 *     (dispatches_per_gen: the advisor reads the sim's own emitted dispatches);
 *   - `llm bench --plan auto --autotune` on the tiny model: the stderr line with both plans'
 *     measured and predicted ms/token;
 *   - B* per operation from advise --shape tiny --batch 4 --json: B*_dispatch, B*_bytes and B*
 *     recomputed from the row's own MB, MFLOP and dispatches and the device's figures;
 *   - errors: unknown workload, --steps 0, two modes, --autotune without auto: exit 2. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/bench_calibrate.h"

static char out[1 << 17];

static json_t *last_json(const char *text)
{
    const char  *p = strchr(text, '{');
    json_error_t je;
    return p ? json_loads(p, JSON_DISABLE_EOF_CHECK, &je) : NULL;
}

static void device(const char *path, double disp, double bw, double bw_wg, double gf, double gf_wg)
{
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fprintf(f,
            "{\"format\": \"wgfuse-calibration\", \"version\": %d, \"adapter\": \"synthetic\", \"driver\": \"\", "
            "\"backend\": \"\", \"webgpu_lib\": \"\", \"date\": \"\", \"seconds\": 0, "
            "\"dispatch_us_by_mode\": {\"one_pass\": %g, \"pass_each\": %g, \"submit_each\": %g, \"wait_each\": %g, \"indirect\": %g}, "
            "\"device\": {\"dispatch_us\": %g, \"read_gbps\": %g, \"read_gbps_wg\": %g, \"gflops\": %g, "
            "\"gflops_wg\": %g, \"barrier_ns\": 0, \"subgroup_ns\": 0, \"dispatch_us_long\": 0, \"len_short\": 16, "
            "\"len_long\": 2048, \"serial_gflops_wg\": 0, \"serial_wg\": 1024, \"workgroup_us\": 0, \"chain_gflops\": 0}}",
            WGF_CALIBRATION_VERSION, disp, disp, disp, disp, disp, disp, bw, bw_wg, gf, gf_wg);
    fclose(f);
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-6 * (fabs(b) + 1e-9); }

int main(void)
{
    struct wgf_t t   = {0};
    const char  *cli = wgf_t_cli();
    char         dir[512], cmd[4096], devA[700], devB[700];
    wgf_t_tmpdir("cli_advise_sim", dir, sizeof dir);
    snprintf(devA, sizeof devA, "%s/devA.json", dir);
    snprintf(devB, sizeof devB, "%s/devB.json", dir);
    setenv("XDG_CACHE_HOME", dir, 1);
    unsetenv("WGFUSE_CALIBRATION");
    device(devA, 1000, 1e6, 1e6, 1e6, 1e6);
    device(devB, 0.001, 100, 100, 1000, 0.001);
    const char *sim = "--sim cartpole --steps 20 --pop 256 --hidden 16";

    /* device A: fewest dispatches */
    snprintf(cmd, sizeof cmd, "{ '%s' --quiet advise %s --calibration '%s' --json 2>&1; }", cli, sim, devA);
    int     rc = wgf_t_run(cmd, out, sizeof out);
    json_t *j  = last_json(out);
    json_t *plans = json_object_get(j, "plans");
    long long min_d = 1 << 30, rec_d = -1;
    const char *rec = json_string_value(json_object_get(j, "recommended"));
    for (size_t i = 0; i < json_array_size(plans); i++) {
        json_t   *r = json_array_get(plans, i);
        long long d = json_integer_value(json_object_get(r, "dispatches"));
        if (d < min_d) min_d = d;
        if (rec && !strcmp(rec, json_string_value(json_object_get(r, "plan")))) rec_d = d;
    }
    const char *recs = json_string_value(json_object_get(j, "recommended_strategy"));
    wgf_t_check(&t, rc == 0 && json_array_size(plans) >= 8 && rec_d == min_d && recs && !strncmp(recs, "fused", 5),
                "device A: the fewest dispatches", "exit %d, %zu plans, recommended %s (%lld dispatches, min %lld): %.300s",
                rc, json_array_size(plans), rec ? rec : "-", rec_d, min_d, out);
    char stratA[32] = "", planA[48] = "";
    snprintf(stratA, sizeof stratA, "%s", recs ? recs : "");
    snprintf(planA, sizeof planA, "%s", rec ? rec : "");
    /* the dispatches advise counts = what sim bench runs (fused/thread, per-step/thread) */
    const char *check[2] = {"fused/thread", "per-step/thread"}, *strat[2] = {"fused", "per-step"};
    for (int k = 0; k < 2; k++) {
        long long adv = -1;
        for (size_t i = 0; i < json_array_size(plans); i++)
            if (!strcmp(json_string_value(json_object_get(json_array_get(plans, i), "plan")), check[k]))
                adv = json_integer_value(json_object_get(json_array_get(plans, i), "dispatches"));
        char c2[2048], o2[1 << 14];
        snprintf(c2, sizeof c2,
                 "{ '%s' --quiet sim bench --workload cartpole --steps 20 --pop 256 --hidden 16 --strategy %s "
                 "--evolve thread --gens 1 --runs 1 --json 2>/dev/null; }",
                 cli, strat[k]);
        int       r2 = wgf_t_run(c2, o2, sizeof o2);
        json_t   *b  = last_json(o2);
        long long d  = json_integer_value(json_object_get(json_array_get(json_object_get(b, "results"), 0), "dispatches_per_gen"));
        wgf_t_check(&t, r2 == 0 && adv > 0 && adv == d, "advise counts the dispatches sim bench runs",
                    "%s: advise %lld, sim bench %lld (exit %d)", check[k], adv, d, r2);
        json_decref(b);
    }
    json_decref(j);

    /* device B: the most workgroups */
    snprintf(cmd, sizeof cmd, "{ '%s' --quiet advise %s --calibration '%s' --json 2>&1; }", cli, sim, devB);
    rc   = wgf_t_run(cmd, out, sizeof out);
    j    = last_json(out);
    recs = json_string_value(json_object_get(j, "recommended_strategy"));
    wgf_t_check(&t, rc == 0 && recs && !strcmp(recs, "fused-wide"), "device B: fused-wide",
                "exit %d, recommended %s: %.300s", rc, recs ? recs : "-", out);
    json_decref(j);

    /* sim bench --strategy auto under each device */
    char got[2][32] = {"", ""};
    const char *devs[2] = {devA, devB};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd,
                 "{ WGFUSE_CALIBRATION='%s' '%s' --quiet sim bench --workload cartpole --steps 20 --pop 256 --hidden 16 "
                 "--strategy auto --gens 1 --runs 1 --json 2>'%s/err%d.txt'; }",
                 devs[k], cli, dir, k);
        rc = wgf_t_run(cmd, out, sizeof out);
        j  = last_json(out);
        const char *s = json_string_value(json_object_get(json_array_get(json_object_get(j, "results"), 0), "strategy"));
        snprintf(got[k], sizeof got[k], "%s", s ? s : "");
        char errp[700], errt[2048] = "";
        snprintf(errp, sizeof errp, "%s/err%d.txt", dir, k);
        FILE *f = fopen(errp, "rb");
        if (f) {
            size_t n = fread(errt, 1, sizeof errt - 1, f);
            errt[n] = 0;
            fclose(f);
        }
        char want[64];
        snprintf(want, sizeof want, "strategy auto: chose %s", k == 0 ? planA : "fused-wide/");
        wgf_t_check(&t, rc == 0 && strstr(errt, want) && s && !strcmp(s, k == 0 ? stratA : "fused-wide"),
                    "sim bench --strategy auto runs the advisor's choice", "device %c: exit %d, ran %s, stderr %.300s",
                    'A' + k, rc, s ? s : "-", errt);
        json_decref(j);
    }
    wgf_t_check(&t, got[0][0] && strcmp(got[0], got[1]), "two devices, two choices", "%s vs %s", got[0], got[1]);

    snprintf(cmd, sizeof cmd,
             "{ WGFUSE_CALIBRATION='%s' '%s' --quiet sim bench --workload cartpole --steps 20 --pop 256 --hidden 16 "
             "--strategy auto --autotune --gens 1 --runs 1 --json 2>&1 >/dev/null; }",
             devB, cli);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 0 && strstr(out, "strategy auto --autotune: chose") && strstr(out, "measured") &&
                        strstr(out, "ms/generation"),
                "--autotune times the top two and says so", "exit %d: %.300s", rc, out);

    snprintf(cmd, sizeof cmd,
             "{ WGFUSE_CALIBRATION='%s' '%s' --quiet llm bench --shape tiny --plan auto --autotune -n 2 --prompt-tokens 2 "
             "--runs 1 --json 2>&1 >/dev/null; }",
             devB, cli);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 0 && strstr(out, "plan auto --autotune: chose plan") && strstr(out, "measured") &&
                        strstr(out, "ms/token") && strstr(out, "predicted"),
                "llm bench --plan auto --autotune", "exit %d: %.300s", rc, out);

    /* B* per operation, recomputed from the row */
    snprintf(cmd, sizeof cmd, "{ '%s' --quiet advise --shape tiny --batch 4 --calibration '%s' --json 2>/dev/null; }",
             cli, devB);
    rc              = wgf_t_run(cmd, out, sizeof out);
    j               = last_json(out);
    json_t *cross   = json_object_get(j, "crossover");
    bool    ok      = rc == 0 && json_array_size(cross) >= 3;
    bool    has_mlp = false;
    for (size_t i = 0; ok && i < json_array_size(cross); i++) {
        json_t *x    = json_array_get(cross, i);
        double  mb = json_number_value(json_object_get(x, "mb")), mf = json_number_value(json_object_get(x, "mflop"));
        double  nd = (double)json_integer_value(json_object_get(x, "dispatches"));
        double  t_f = mf * 1e6 / (1000 * 1e3), t_d = nd * 0.001, t_b = mb * 1e6 / (100 * 1e3);
        double  bd = json_number_value(json_object_get(x, "b_dispatch")), bb = json_number_value(json_object_get(x, "b_bytes"));
        double  bs = json_number_value(json_object_get(x, "b_star"));
        /* mb and mflop are printed rounded: compare at 1e-6 relative after recomputing both */
        ok = mf > 0 && fabs(bd - t_d / t_f) <= 1e-4 * bd + 1e-9 && fabs(bb - t_b / t_f) <= 1e-4 * bb + 1e-9 &&
             near(bs, fmax(bd, bb));
        if (!ok) fprintf(stderr, "row %zu: B*_d %g (want %g), B*_b %g (want %g), B* %g\n", i, bd, t_d / t_f, bb, t_b / t_f, bs);
        if (!strcmp(json_string_value(json_object_get(x, "operation")), "mlp")) has_mlp = nd == 3;
    }
    wgf_t_check(&t, ok && has_mlp, "B* per operation: dispatch and bytes crossovers, the larger", "exit %d: %.300s", rc,
                out);
    json_decref(j);

    /* errors */
    const char *bad[4] = {"advise --sim nosuch --steps 10", "advise --sim cartpole --steps 0",
                          "advise --sim cartpole --shape tiny", "sim train cartpole --autotune"};
    for (int k = 0; k < 4; k++) {
        snprintf(cmd, sizeof cmd, "{ '%s' --quiet %s 2>&1; }", cli, bad[k]);
        rc = wgf_t_run(cmd, out, sizeof out);
        wgf_t_check(&t, rc == 2 && strchr(out, '\n') == strrchr(out, '\n'), "usage error: exit 2, one line",
                    "%s: exit %d: %.200s", bad[k], rc, out);
    }
    return wgf_t_finish(&t);
}
