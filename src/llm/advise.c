/* wgfuse — the advisor for the LLM plans (include/wgfuse/llm_advise.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wgfuse/llm_advise.h"

static const char *const PLANS[WGF_ADVISE_MAX_PLANS] = {"ops", "fused", "roles", "mega"};

void wgf_llm_advice_choose(struct wgf_llm_advice *a)
{
    a->best = -1;
    for (uint32_t i = 0; i < a->n; i++)
        if (!a->row[i].skipped[0] && (a->best < 0 || a->row[i].pred.total_us < a->row[a->best].pred.total_us))
            a->best = (int)i;
    if (a->best < 0) {
        snprintf(a->reason, sizeof a->reason, "no GPU plan can run on this device");
        return;
    }
    const struct wgf_llm_plan_prediction *b = &a->row[a->best], *next = NULL;
    for (uint32_t i = 0; i < a->n; i++)
        if ((int)i != a->best && !a->row[i].skipped[0] && (!next || a->row[i].pred.total_us < next->pred.total_us))
            next = &a->row[i];
    double share = wgf_cost_dispatch_share(&b->pred);
    int    bound = share >= 0.5 ? WGF_BOUND_DISPATCH
                   : b->pred.bound_us[WGF_BOUND_BYTES] >= b->pred.bound_us[WGF_BOUND_FLOPS] ? WGF_BOUND_BYTES
                                                                                              : WGF_BOUND_FLOPS;
    if (!next)
        snprintf(a->reason, sizeof a->reason, "plan %s: predicted %.3f ms/token, the only plan this device runs",
                 b->plan, b->pred.total_us * 1e-3);
    else
        snprintf(a->reason, sizeof a->reason,
                 "plan %s: predicted %.3f ms/token, %.2fx faster than %s (%u vs %u dispatches per token; "
                 "mostly %s-bound, %.0f%% of its time in dispatch-bound steps)",
                 b->plan, b->pred.total_us * 1e-3, next->pred.total_us / b->pred.total_us, next->plan,
                 b->pred.dispatches, next->pred.dispatches, wgf_cost_bound_name((enum wgf_cost_bound)bound), 100.0 * share);
}

/* the projections of the ops plan (labels with "gemv"; one per matrix part), per occurrence */
static void collect_ops(struct wgf_llm_advice *a, const struct wgf_step_info *steps, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!strstr(steps[i].label, "gemv")) continue;
        uint32_t k = 0;
        while (k < a->n_ops && strcmp(a->ops[k].label, steps[i].label)) k++;
        if (k == a->n_ops) {
            if (a->n_ops == WGF_ADVISE_MAX_OPS) continue;
            memset(&a->ops[k], 0, sizeof a->ops[k]);
            snprintf(a->ops[k].label, sizeof a->ops[k].label, "%s", steps[i].label);
            a->n_ops++;
        }
        a->ops[k].count++;
        a->ops[k].cost.bytes_read += steps[i].cost.bytes_read;
        a->ops[k].cost.bytes_written += steps[i].cost.bytes_written;
        a->ops[k].cost.flops += steps[i].cost.flops;
    }
    for (uint32_t k = 0; k < a->n_ops; k++) {
        a->ops[k].cost.bytes_read /= a->ops[k].count;
        a->ops[k].cost.bytes_written /= a->ops[k].count;
        a->ops[k].cost.flops /= a->ops[k].count;
    }
}

static enum wgf_status predict_plan(wgf_ctx *ctx, const struct wgf_llm_model *m, struct wgf_llm_backend_options bo,
                                    const struct wgf_device_cost *dev, bool probe, const char *plan,
                                    struct wgf_llm_plan_prediction *row, struct wgf_llm_advice *ops, struct wgf_err *err)
{
    memset(row, 0, sizeof *row);
    snprintf(row->plan, sizeof row->plan, "%s", plan);
    const struct wgf_llm_backend *proto = wgf_llm_backend_find("gpu", plan);
    if (!proto) return wgf_fail(err, WGF_ERR_INTERNAL, "advise: no plan '%s'", plan);
    struct wgf_llm_backend be;
    bo.gpu            = ctx;
    struct wgf_err e2 = {0};
    enum wgf_status s = wgf_llm_backend_open(&be, proto, m, &bo, &e2);
    if (s == WGF_ERR_UNSUPPORTED) {
        snprintf(row->skipped, sizeof row->skipped, "%s", e2.msg);
        return WGF_OK;
    }
    if (s) return wgf_fail(err, s, "advise: plan %s: %s", plan, e2.msg);
    row->weights = be.weights;
    uint32_t n   = 0;
    if (!be.decode_steps) s = wgf_fail(err, WGF_ERR_INTERNAL, "advise: plan %s reports no decode steps", plan);
    else s = be.decode_steps(&be, 0, NULL, 0, &n, err);
    struct wgf_step_info *steps = NULL;
    if (!s && !(steps = calloc(n ? n : 1, sizeof *steps))) s = wgf_fail(err, WGF_ERR_NOMEM, "advise: %u steps", n);
    if (!s) s = be.decode_steps(&be, 0, steps, n, &n, err);
    /* the decode loop records WGF_LLM_DECODE_PER_SUBMIT tokens per submit: one schedule */
    if (!s && wgf_cost_predict_replayed(dev, steps, n, WGF_ADVISE_TOKENS_PER_SUBMIT, &row->pred))
        s = wgf_fail(err, WGF_ERR_ARG, "advise: the device description has a zero or negative rate");
    if (!s && probe && be.probe) {
        struct wgf_err pe = {0};
        if (be.probe(&be, be.n_ctx / 2, &row->probe, &pe) == WGF_OK) {
            double t = row->probe.gpu_us > row->probe.host_us ? row->probe.gpu_us : row->probe.host_us;
            double k = row->pred.total_us > 0 ? t / row->pred.total_us : 0;
            row->static_us = row->pred.total_us;
            for (int b = 0; b < WGF_BOUND_COUNT; b++) row->pred.bound_us[b] *= k;
            row->pred.total_us = t;
            row->probed        = true;
        } else {
            snprintf(row->probe_error, sizeof row->probe_error, "%.120s", pe.msg);
        }
    }
    if (!s && ops) {
        collect_ops(ops, steps, n);
        ops->ops_dispatch_us = row->pred.dispatch_us;
    }
    free(steps);
    wgf_llm_backend_close(&be);
    return s;
}

enum wgf_status wgf_llm_advise(wgf_ctx *ctx, const struct wgf_llm_model *m, const struct wgf_llm_backend_options *bo,
                               const struct wgf_device_cost *dev, bool probe, struct wgf_llm_advice *out,
                               struct wgf_err *err)
{
    memset(out, 0, sizeof *out);
    out->best = -1;
    for (uint32_t i = 0; i < WGF_ADVISE_MAX_PLANS; i++) {
        enum wgf_status s = predict_plan(ctx, m, *bo, dev, probe, PLANS[i], &out->row[i], i == 0 ? out : NULL, err);
        if (s) return s;
        out->n++;
    }
    wgf_llm_advice_choose(out);
    return WGF_OK;
}
