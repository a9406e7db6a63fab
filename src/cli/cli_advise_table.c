/* wgfuse CLI — `wgfuse advise --table` and its `wgfuse report` section: the article's
 * decision table regenerated on this device. Each row is one of the article's rules, a pair
 * of plans of a real workload (the one the rule says to use, and the alternative), the
 * predicted speedup (the cost model, from the calibration) and the measured one (both run
 * once here), and whether the rule holds on this device:
 *   sequential simulation with long episodes: fuse fully   CartPole fused vs per-step
 *   transformer inference at D >= 768: 10-15 kernel roles   Qwen2.5-0.5B roles vs ops
 *   embarrassingly parallel work: don't fuse                 Rastrigin GA, evolve split vs thread
 *   small models: try both                                   tiny Llama roles vs mega
 * Quick (CPU adapters, the report): smaller populations and the tiny model in place of
 * Qwen2.5-0.5B. Simulation predictions use the episode lengths the measurement ran (a
 * random population's episodes end early; the model takes the steps a SIMD group runs). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "wgfuse/bench_calibrate.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_advise.h"
#include "wgfuse/llm_dial.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/sim_advise.h"

struct table_row {
    const char *rule, *workload, *fast, *slow;
    double      pred_fast_ms, pred_slow_ms, meas_fast_ms, meas_slow_ms;
    char        error[WGF_ERR_MSG_MAX];
};

/* one sim configuration: measured ms/generation (sim bench, 3 generations per submit, median
 * of 3) and the steps its SIMD groups ran; then predicted with those steps */
static enum wgf_status sim_cell(wgf_ctx *ctx, const struct wgf_device_cost *dev, bool probe_here, struct wgf_sim_config c, double *pred,
                                double *meas, struct wgf_err *err)
{
    wgf_sim                    *sim = NULL;
    struct wgf_sim_bench_result r;
    enum wgf_status             s = wgf_sim_create(ctx, &c, &sim, err);
    if (!s) s = wgf_sim_bench_run(sim, 3, 3, &r, err);
    wgf_sim_free(sim);
    if (s) return s;
    *meas = r.gen_per_s_noreadback > 0 ? 1e3 / r.gen_per_s_noreadback : 0;
    struct wgf_sim_probe probe = {0}; /* the kernels timed here (none without timestamps: static) */
    if (probe_here && wgf_sim_probe_run(ctx, &c, &probe, err) != WGF_OK) *err = (struct wgf_err){0};
    struct wgf_sim_advise_options o = {.episode_steps = (uint32_t)(r.group_steps + 0.5),
                                       .longest_steps = (uint32_t)(r.longest_steps + 0.5),
                                       .gens_per_submit = 3,
                                       .evolve_fixed  = true,
                                       .probe         = &probe};
    struct wgf_sim_advice        *a = malloc(sizeof *a);
    if (!a) return wgf_fail(err, WGF_ERR_NOMEM, "advise table");
    s = wgf_sim_advise(ctx, &c, dev, &o, a, err);
    /* the row of c's own strategy */
    *pred = 0;
    for (uint32_t i = 0; !s && i < a->n; i++)
        if (a->row[i].strategy == c.strategy && (c.strategy != WGF_SIM_CHUNKED || a->row[i].chunk == c.chunk))
            *pred = a->row[i].pred.total_us * 1e-3;
    free(a);
    return s;
}

/* the two plans of row: predicted (advise) and measured (the fusion dial: checked against
 * cpu-ref, then greedy generations timed; ms/token = 1 / median decode tok/s) */
static enum wgf_status llm_cells(wgf_ctx *ctx, const struct wgf_device_cost *dev, bool probe, const char *shape,
                                 bool quick, struct table_row *row, struct wgf_err *err)
{
    struct wgf_llm_model *m = NULL;
    enum wgf_status       s = wgf_llm_model_synth(shape, WGF_DT_F16, 1, &m, err);
    struct wgf_llm_advice a;
    /* the plans built for the context the dial below decodes in */
    uint32_t                       n_prompt = 4, n_gen = quick ? 16 : 64;
    struct wgf_llm_backend_options bo       = {.gpu = ctx, .n_ctx = n_prompt + n_gen + 1};
    if (!s) s = wgf_llm_advise(ctx, m, &bo, dev, probe, &a, err);
    for (uint32_t i = 0; !s && i < a.n; i++) {
        if (!strcmp(a.row[i].plan, row->fast)) row->pred_fast_ms = a.row[i].pred.total_us * 1e-3;
        if (!strcmp(a.row[i].plan, row->slow)) row->pred_slow_ms = a.row[i].pred.total_us * 1e-3;
    }
    struct wgf_dial_opts o = wgf_dial_opts_default();
    o.plans[0] = row->fast, o.plans[1] = row->slow, o.n_plans = 2;
    o.n_prompt = n_prompt, o.n_gen = n_gen, o.runs = quick ? 1 : 3, o.check_prompt = 2, o.check_steps = 2;
    struct wgf_dial_report rep;
    memset(&rep, 0, sizeof rep);
    if (!s) s = wgf_llm_dial(ctx, m, &o, &rep, err);
    for (uint32_t k = 0; !s && k < rep.n && k < 2; k++) {
        double t[WGF_DIAL_MAX_RUNS];
        uint32_t n = rep.runs < WGF_DIAL_MAX_RUNS ? rep.runs : WGF_DIAL_MAX_RUNS;
        for (uint32_t r = 0; r < n; r++) t[r] = rep.row[k].decode_tok_s[r];
        for (uint32_t i = 1; i < n; i++) /* insertion sort: a median of <= 64 */
            for (uint32_t j = i; j > 0 && t[j] < t[j - 1]; j--) {
                double x = t[j];
                t[j] = t[j - 1], t[j - 1] = x;
            }
        double med = n ? (n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2])) : 0;
        *(k == 0 ? &row->meas_fast_ms : &row->meas_slow_ms) = med > 0 ? 1e3 / med : 0;
    }
    wgf_dial_report_free(&rep);
    wgf_llm_model_free(m);
    return s;
}

int wgf_cli_advise_table(wgf_ctx *ctx, const struct wgf_calibration *cal, bool quick, bool json, bool probe)
{
    quick = quick || !strcmp(wgf_ctx_adapter(ctx)->type, "cpu");
    struct table_row rows[4] = {
        {"sequential simulation with long episodes: fuse fully", "cartpole", "fused", "per-step", 0, 0, 0, 0, ""},
        {"transformer inference at D >= 768: 10-15 kernel roles", quick ? "llm tiny" : "llm qwen2.5-0.5b", "roles",
         "ops", 0, 0, 0, 0, ""},
        {"embarrassingly parallel work: don't fuse", "rastrigin", "split", "thread", 0, 0, 0, 0, ""},
        {"small models: try both", "llm tiny", "roles", "mega", 0, 0, 0, 0, ""},
    };
    struct wgf_err e = {0};
    /* 1: CartPole, episodes of 500 steps (quick 200), fused vs per-step, split evolve */
    for (int k = 0; k < 2; k++) {
        struct wgf_sim_config c = wgf_sim_config_default(WGF_SIM_CARTPOLE);
        c.pop = quick ? 256 : 4096, c.max_steps = quick ? 100 : 500, c.hidden = 16, c.ga.elites = c.pop / 64;
        c.strategy = k ? WGF_SIM_PER_STEP : WGF_SIM_FUSED, c.evolve = WGF_SIM_EVOLVE_SPLIT;
        if (sim_cell(ctx, &cal->dev, probe, c, k ? &rows[0].pred_slow_ms : &rows[0].pred_fast_ms,
                     k ? &rows[0].meas_slow_ms : &rows[0].meas_fast_ms, &e)) {
            snprintf(rows[0].error, sizeof rows[0].error, "%s", e.msg);
            break;
        }
    }
    if (llm_cells(ctx, &cal->dev, probe, quick ? "tiny" : "qwen2.5-0.5b", quick, &rows[1], &e))
        snprintf(rows[1].error, sizeof rows[1].error, "%s", e.msg);
    for (int k = 0; k < 2; k++) {
        struct wgf_sim_config c = wgf_sim_config_default(WGF_SIM_RASTRIGIN);
        c.pop = quick ? 512 : 4096, c.dim = quick ? 200 : 2000, c.ga.elites = c.pop / 64;
        c.evolve = k ? WGF_SIM_EVOLVE_THREAD : WGF_SIM_EVOLVE_SPLIT;
        if (sim_cell(ctx, &cal->dev, probe, c, k ? &rows[2].pred_slow_ms : &rows[2].pred_fast_ms,
                     k ? &rows[2].meas_slow_ms : &rows[2].meas_fast_ms, &e)) {
            snprintf(rows[2].error, sizeof rows[2].error, "%s", e.msg);
            break;
        }
    }
    if (llm_cells(ctx, &cal->dev, probe, "tiny", quick, &rows[3], &e)) snprintf(rows[3].error, sizeof rows[3].error, "%s", e.msg);

    json_t *arr = json_array();
    if (!json)
        printf("decision table on %s (speedup = time of the alternative / time of the rule's plan; > 1: the rule "
               "holds)\n%-55s %-18s %-16s %10s %10s %s\n",
               cal->adapter, "rule", "workload", "plan vs alt", "predicted", "measured", "holds here");
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        struct table_row *r  = &rows[i];
        double            ps = r->pred_fast_ms > 0 ? r->pred_slow_ms / r->pred_fast_ms : 0;
        double            ms = r->meas_fast_ms > 0 ? r->meas_slow_ms / r->meas_fast_ms : 0;
        char              pair[40];
        snprintf(pair, sizeof pair, "%s vs %s", r->fast, r->slow);
        const char *holds = r->error[0] ? "not measured" : ms > 1 ? "yes" : "no";
        if (r->error[0]) bad++;
        if (!json) {
            if (r->error[0]) printf("%-55s %-18s %-16s %s\n", r->rule, r->workload, pair, r->error);
            else printf("%-55s %-18s %-16s %9.2fx %9.2fx %s\n", r->rule, r->workload, pair, ps, ms, holds);
        }
        json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:s, s:s}", "rule",
                                             r->rule, "workload", r->workload, "plan", r->fast, "alternative", r->slow,
                                             "predicted_ms", r->pred_fast_ms, "predicted_alt_ms", r->pred_slow_ms,
                                             "measured_ms", r->meas_fast_ms, "measured_alt_ms", r->meas_slow_ms,
                                             "predicted_speedup", ps, "measured_speedup", ms, "holds", holds, "error",
                                             r->error));
    }
    if (json) {
        json_t *root = json_pack("{s:s, s:s, s:b, s:o}", "advise", "table", "adapter", cal->adapter, "quick", quick,
                                 "rows", arr);
        char   *text = root ? json_dumps(root, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;
        if (text) printf("%s\n", text);
        free(text);
        json_decref(root);
    } else
        json_decref(arr);
    return bad ? 1 : 0;
}
