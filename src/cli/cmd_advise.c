/* wgfuse advise — the measured cost model (docs/advise.md): calibrate this adapter once
 * (per-dispatch cost by recording mode, read bandwidth, f32 rate, barrier and subgroup
 * costs; cached per adapter), then predict every LLM plan's time per token from the plans'
 * own dispatch lists and recommend one. Also the `--plan auto` of `run` and `llm bench`. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "wgfuse/bench_calibrate.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_advise.h"
#include "wgfuse/llm_run.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: wgfuse advise --calibrate [--quick] [--json]\n"
            "       wgfuse advise (--llm MODEL | --shape NAME) [--weights f16|f32|TYPE] [--no-subgroups]\n"
            "                     [--calibration FILE] [--recalibrate] [--quick] [--json]\n"
            "  --calibrate: measure this adapter (per-dispatch cost by recording mode, read bandwidth of\n"
            "  the whole device and of one workgroup, f32 FMA rate of both, workgroupBarrier and\n"
            "  subgroupAdd cost) and store it in $XDG_CACHE_HOME/wgfuse/ (else ~/.cache/wgfuse/), one\n"
            "  file per adapter, driver and WebGPU library. --quick: small sizes (default on CPU adapters).\n"
            "  --llm / --shape: every GPU plan (ops, fused, roles, mega) built on the model, its decode\n"
            "  step's dispatches with their bytes and FLOPs read back, and the time per token predicted\n"
            "  as the sum over dispatches of max(dispatch cost, bytes / bandwidth, FLOPs / rate), each\n"
            "  rate scaled down for a dispatch of few workgroups; prints each plan's ms/token, the share\n"
            "  of it that is dispatch-bound, and the recommendation with its reason. The calibration\n"
            "  comes from the cache (measured first when missing or unusable), or from --calibration\n"
            "  FILE (or $WGFUSE_CALIBRATION): a device description for any adapter.\n"
            "  `wgfuse run --plan auto` and `wgfuse llm bench --plan auto` use the same choice.\n");
}

static void print_calibration(const struct wgf_calibration *c, bool json)
{
    if (json) {
        char          *text = NULL;
        struct wgf_err err  = {0};
        if (wgf_calibration_json(c, &text, &err) == WGF_OK) {
            for (char *p = text; *p; p++)
                if (*p == '\n') *p = ' ';
            printf("%s\n", text);
        }
        free(text);
        return;
    }
    printf("adapter: %s (%s, %s)\nWebGPU library: %s\ncalibrated %s in %.1f s\n", c->adapter, c->backend, c->driver,
           c->webgpu_lib, c->date, c->seconds);
    printf("per dispatch (us):");
    for (int m = 0; m < WGF_MODE_COUNT; m++)
        printf(" %s %.3f", wgf_dispatch_mode_name((enum wgf_dispatch_mode)m), c->mode_us[m]);
    printf("\nread bandwidth: %.2f GB/s (one workgroup: %.2f GB/s)\n", c->dev.read_gbps, c->dev.read_gbps_wg);
    printf("f32 FMA rate: %.2f GFLOP/s (one workgroup: %.3f GFLOP/s)\n", c->dev.gflops, c->dev.gflops_wg);
    printf("workgroupBarrier: %.2f ns\n", c->dev.barrier_ns);
    if (c->dev.subgroup_ns > 0) printf("subgroupAdd: %.2f ns\n", c->dev.subgroup_ns);
    else printf("subgroupAdd: not measured (no subgroups)\n");
}

static void print_advice(const char *name, const struct wgf_calibration *c, const struct wgf_llm_advice *a, bool json)
{
    if (json) {
        json_t *plans = json_array();
        for (uint32_t i = 0; i < a->n; i++) {
            const struct wgf_llm_plan_prediction *r = &a->row[i];
            json_array_append_new(
                plans, json_pack("{s:s, s:o, s:s, s:i, s:I, s:I, s:f, s:f, s:f, s:f}", "plan", r->plan, "skipped",
                                 r->skipped[0] ? json_string(r->skipped) : json_false(), "weights",
                                 r->weights ? r->weights : "", "dispatches", (int)r->pred.dispatches, "bytes",
                                 (json_int_t)r->pred.bytes, "flops", (json_int_t)r->pred.flops, "predicted_ms_per_token",
                                 r->pred.total_us * 1e-3, "dispatch_bound_share", wgf_cost_dispatch_share(&r->pred),
                                 "bytes_bound_ms", r->pred.bound_us[WGF_BOUND_BYTES] * 1e-3, "flops_bound_ms",
                                 r->pred.bound_us[WGF_BOUND_FLOPS] * 1e-3));
        }
        json_t *root = json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:o, s:s, s:s}", "advise", "llm", "model", name,
                                 "adapter", c->adapter, "dispatch_us", c->dev.dispatch_us, "read_gbps", c->dev.read_gbps,
                                 "gflops", c->dev.gflops, "plans", plans, "recommended",
                                 a->best >= 0 ? a->row[a->best].plan : "", "reason", a->reason);
        char *text = root ? json_dumps(root, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;
        if (text) printf("%s\n", text);
        free(text);
        json_decref(root);
        return;
    }
    printf("model %s on %s (%.2f us/dispatch, %.1f GB/s read, %.1f GFLOP/s)\n", name, c->adapter, c->dev.dispatch_us,
           c->dev.read_gbps, c->dev.gflops);
    printf("%-6s %-7s %10s %12s %14s %10s\n", "plan", "weights", "dispatches", "MB/token", "predicted ms", "dispatch%");
    for (uint32_t i = 0; i < a->n; i++) {
        const struct wgf_llm_plan_prediction *r = &a->row[i];
        if (r->skipped[0]) {
            printf("%-6s skipped: %s\n", r->plan, r->skipped);
            continue;
        }
        printf("%-6s %-7s %10u %12.2f %14.4f %9.1f%%\n", r->plan, r->weights ? r->weights : "-", r->pred.dispatches,
               (double)r->pred.bytes * 1e-6, r->pred.total_us * 1e-3, 100.0 * wgf_cost_dispatch_share(&r->pred));
    }
    printf("recommendation: %s\n", a->reason);
}

int wgf_cmd_advise(int argc, char **argv)
{
    bool                   calibrate = false, recal = false, quick = false, json = false;
    const char            *model = NULL, *shape = NULL, *file = NULL;
    struct wgf_cli_backend bk = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wgf_cli_is_help(a)) {
            usage(stdout);
            return 0;
        }
        int r = wgf_cli_backend_flag(&bk, argc, argv, &i);
        if (r == 2) return 2;
        if (r == 1) {
            if (bk.name || bk.plan) {
                wgf_cli_error("advise: --backend and --plan do not apply (every GPU plan is predicted)");
                return 2;
            }
            continue;
        }
        if (!strcmp(a, "--calibrate")) calibrate = true;
        else if (!strcmp(a, "--recalibrate")) recal = true;
        else if (!strcmp(a, "--quick")) quick = true;
        else if (!strcmp(a, "--json")) json = true;
        else if (!strcmp(a, "--llm") || !strcmp(a, "--shape") || !strcmp(a, "--calibration")) {
            const char *v = wgf_cli_flag_value(argc, argv, &i);
            if (!v) return 2;
            *(!strcmp(a, "--llm") ? &model : !strcmp(a, "--shape") ? &shape : &file) = v;
        } else {
            wgf_cli_error("advise: unknown flag '%s' (see wgfuse advise --help)", a);
            return 2;
        }
    }
    if (!calibrate && !model == !shape) {
        wgf_cli_error("advise: give --calibrate, or exactly one of --llm MODEL and --shape NAME (%s)",
                      wgf_llm_synth_shapes());
        return 2;
    }
    if (calibrate && file) {
        wgf_cli_error("advise: --calibrate measures this adapter; --calibration FILE reads a description instead");
        return 2;
    }
    struct wgf_llm_model *m = NULL;
    int                   rc;
    if ((model || shape) && (rc = wgf_cli_llm_model(model, shape, &bk, &m))) return rc;
    struct wgf_gpu_options go  = wgf_cli_gpu_options();
    struct wgf_err         err = {0};
    wgf_ctx               *ctx = NULL;
    if (wgf_ctx_create(&go, &ctx, &err) != WGF_OK) {
        wgf_cli_error("advise: %s", err.msg);
        wgf_llm_model_free(m);
        return 1;
    }
    struct wgf_calibration cal;
    rc = wgf_cli_calibration(ctx, file, calibrate || recal, quick, &cal);
    if (!rc && calibrate && !m) print_calibration(&cal, json);
    if (!rc && m) {
        struct wgf_llm_backend_options bo = {.weights_f32 = bk.weights_f32, .no_subgroups = bk.no_subgroups};
        struct wgf_llm_advice          a;
        if (wgf_llm_advise(ctx, m, &bo, &cal.dev, &a, &err)) {
            wgf_cli_error("advise: %s", err.msg);
            rc = 1;
        } else {
            print_advice(model ? model : shape, &cal, &a, json);
            rc = a.best < 0;
        }
    }
    wgf_llm_model_free(m);
    wgf_ctx_free(ctx);
    return rc;
}
