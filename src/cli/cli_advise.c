/* wgfuse CLI — the advisor's shared part (cli/cli.h): the device description from the cache
 * (measured when missing or unusable) and the `--plan auto` choice of `run` and `llm bench`;
 * beneath cmd_advise.c and cli_llm.c, which both call it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "wgfuse/bench_calibrate.h"
#include "wgfuse/llm_advise.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/sim_advise.h"

static void progress(void *user, const char *what)
{
    (void)user;
    if (!wgf_cli.quiet) fprintf(stderr, "calibrate: %s\n", what);
}

int wgf_cli_calibration(wgf_ctx *ctx, const char *file, bool recalibrate, bool quick, struct wgf_calibration *c)
{
    struct wgf_err err = {0};
    if (!file) file = getenv("WGFUSE_CALIBRATION");
    if (file && *file) {
        if (wgf_calibration_load(file, NULL, c, &err) == WGF_OK) return 0;
        wgf_cli_error("--calibration: %s", err.msg);
        return 1;
    }
    char path[4096];
    if (wgf_calibration_path(ctx, path, sizeof path, &err)) {
        wgf_cli_error("%s", err.msg);
        return 1;
    }
    if (!recalibrate) {
        enum wgf_status s = wgf_calibration_load(path, ctx, c, &err);
        if (s == WGF_OK) return 0;
        if (s != WGF_ERR_IO) fprintf(stderr, "wgfuse: warning: ignoring %s; recalibrating\n", err.msg);
    }
    quick = quick || !strcmp(wgf_ctx_adapter(ctx)->type, "cpu");
    if (wgf_calibrate(ctx, quick, progress, NULL, c, &err) || wgf_calibration_save(c, path, &err)) {
        wgf_cli_error("%s", err.msg);
        return 1;
    }
    if (!wgf_cli.quiet) fprintf(stderr, "calibrate: %.1f s, stored in %s\n", c->seconds, path);
    return 0;
}

bool wgf_cli_calibration_local(const char *file)
{
    const char *env = getenv("WGFUSE_CALIBRATION");
    return !(file && *file) && !(env && *env);
}

/* GPU ms of one greedy decode step of plan (its step_time: whole steps in timed passes) */
static enum wgf_status time_plan(const char *plan, const struct wgf_llm_model *m, const struct wgf_llm_backend_options *bo,
                                 double *ms, struct wgf_err *err)
{
    const struct wgf_llm_backend *proto = wgf_llm_backend_find("gpu", plan);
    struct wgf_llm_backend        be;
    enum wgf_status               s = wgf_llm_backend_open(&be, proto, m, bo, err);
    if (s) return s;
    double ns = 0;
    if (!be.step_time) s = wgf_fail(err, WGF_ERR_UNSUPPORTED, "plan %s has no step timer", plan);
    else if (!(s = be.step_time(&be, 0, 4, &ns, err)) && !(ns > 0))
        s = wgf_fail(err, WGF_ERR_UNSUPPORTED, "no GPU timestamps on this device");
    wgf_llm_backend_close(&be);
    *ms = ns * 1e-6;
    return s;
}

const struct wgf_llm_backend *wgf_cli_plan_auto(wgf_ctx *ctx, const struct wgf_llm_model *m,
                                                const struct wgf_llm_backend_options *bo, bool autotune)
{
    struct wgf_calibration cal;
    if (wgf_cli_calibration(ctx, NULL, false, false, &cal)) return NULL;
    struct wgf_llm_advice a;
    struct wgf_err        err = {0};
    if (wgf_llm_advise(ctx, m, bo, &cal.dev, wgf_cli_calibration_local(NULL), &a, &err)) {
        wgf_cli_error("--plan auto: %s", err.msg);
        return NULL;
    }
    if (a.best < 0) {
        wgf_cli_error("--plan auto: %s", a.reason);
        return NULL;
    }
    int second = -1;
    for (uint32_t i = 0; i < a.n; i++)
        if ((int)i != a.best && !a.row[i].skipped[0] &&
            (second < 0 || a.row[i].pred.total_us < a.row[second].pred.total_us))
            second = (int)i;
    if (!autotune || second < 0) {
        fprintf(stderr, "plan auto: chose %s\n", a.reason);
        return wgf_llm_backend_find("gpu", a.row[a.best].plan);
    }
    /* --autotune: the top two predictions timed once each (GPU time of 4 decode steps) */
    const char *pick[2] = {a.row[a.best].plan, a.row[second].plan};
    double      ms[2]   = {0, 0};
    for (int k = 0; k < 2; k++)
        if (time_plan(pick[k], m, bo, &ms[k], &err)) {
            fprintf(stderr, "plan auto: chose %s (autotune could not time %s: %s)\n", a.reason, pick[k], err.msg);
            return wgf_llm_backend_find("gpu", a.row[a.best].plan);
        }
    int w = ms[1] < ms[0];
    fprintf(stderr,
            "plan auto --autotune: chose plan %s: measured %.4f ms/token against %s's %.4f (predicted %.4f and "
            "%.4f)%s\n",
            pick[w], ms[w], pick[!w], ms[!w], a.row[w ? second : a.best].pred.total_us * 1e-3,
            a.row[w ? a.best : second].pred.total_us * 1e-3, w ? ": the measurement overrode the model" : "");
    return wgf_llm_backend_find("gpu", pick[w]);
}

/* ms per generation of cfg, timed once: one warm-up generation, then 3 in one submit with the
 * fitness read back (wall clock) */
static enum wgf_status time_sim(wgf_ctx *ctx, const struct wgf_sim_config *cfg, double *ms, struct wgf_err *err)
{
    wgf_sim        *sim = NULL;
    enum wgf_status s   = wgf_sim_create(ctx, cfg, &sim, err);
    float          *fit = s ? NULL : malloc((size_t)cfg->pop * sizeof *fit);
    if (!s && !fit) s = wgf_fail(err, WGF_ERR_NOMEM, "autotune: fitness");
    if (!s) s = wgf_sim_generations(sim, 1, err);
    if (!s) s = wgf_sim_fitness_read(sim, fit, err);
    uint64_t t0 = wgf_now_ns();
    if (!s) s = wgf_sim_generations(sim, 3, err);
    if (!s) s = wgf_sim_fitness_read(sim, fit, err);
    *ms = (double)(wgf_now_ns() - t0) * 1e-6 / 3;
    free(fit);
    wgf_sim_free(sim);
    return s;
}

int wgf_cli_sim_auto(wgf_ctx *ctx, struct wgf_sim_config *cfg, bool autotune)
{
    struct wgf_calibration cal;
    if (wgf_cli_calibration(ctx, NULL, false, false, &cal)) return 1;
    struct wgf_err       err   = {0};
    struct wgf_sim_probe probe = {0}; /* the kernels timed once here; without timestamps: static */
    if (wgf_cli_calibration_local(NULL) && wgf_sim_probe_run(ctx, cfg, &probe, &err) != WGF_OK && !wgf_cli.quiet)
        fprintf(stderr, "--strategy auto: no kernel probe (%s): the static model\n", err.msg);
    err = (struct wgf_err){0};
    struct wgf_sim_advise_options o = {
        .gens_per_submit = 10, .evolve_fixed = cfg->evolve != WGF_SIM_EVOLVE_AUTO, .probe = &probe};
    struct wgf_sim_advice *a = malloc(sizeof *a);
    if (!a || wgf_sim_advise(ctx, cfg, &cal.dev, &o, a, &err) || a->best < 0) {
        wgf_cli_error("--strategy auto: %s", !a ? "out of memory" : err.msg[0] ? err.msg : a->reason);
        free(a);
        return 1;
    }
    int w = a->best;
    if (autotune && a->second >= 0) {
        double ms[2];
        int    idx[2] = {a->best, a->second};
        for (int k = 0; k < 2; k++) {
            struct wgf_sim_config c = *cfg;
            c.strategy = a->row[idx[k]].strategy, c.chunk = a->row[idx[k]].chunk, c.evolve = a->row[idx[k]].evolve;
            if (time_sim(ctx, &c, &ms[k], &err)) {
                wgf_cli_error("--autotune: %s: %s", a->row[idx[k]].name, err.msg);
                free(a);
                return 1;
            }
        }
        w = ms[1] < ms[0] ? a->second : a->best;
        int o2 = w == a->best ? a->second : a->best;
        fprintf(stderr,
                "strategy auto --autotune: chose %s: measured %.4f ms/generation against %s's %.4f (predicted %.4f "
                "and %.4f)%s\n",
                a->row[w].name, ms[w != a->best], a->row[o2].name, ms[w == a->best], a->row[w].pred.total_us * 1e-3,
                a->row[o2].pred.total_us * 1e-3, w != a->best ? ": the measurement overrode the model" : "");
    } else
        fprintf(stderr, "strategy auto: chose %s\n", a->reason);
    cfg->strategy = a->row[w].strategy, cfg->chunk = a->row[w].chunk, cfg->evolve = a->row[w].evolve;
    free(a);
    return 0;
}
