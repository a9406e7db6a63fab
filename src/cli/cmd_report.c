/* wgfuse report — the main job on built-in defaults: the device, a self-check running a
 * real WGSL kernel, then each part's summary section: the dispatch-overhead summary (bench
 * dispatch --quick), the simulation summary, the LLM fusion dial on a small built-in model and
 * the advisor's decision table (advise --table --quick: the article's rules, predicted and
 * measured here).
 * The kernel-fusion experiments are not part of it: `wgfuse bench fusion`. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "wgfuse/bench_calibrate.h"

void wgf_cli_print_adapter(FILE *f, const struct wgf_adapter_desc *d, bool full);

int wgf_cmd_report(int argc, char **argv)
{
    bool skip_bench = false, skip_sim = false, skip_llm = false, skip_advise = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-bench")) skip_bench = true;
        else if (!strcmp(argv[i], "--no-sim")) skip_sim = true;
        else if (!strcmp(argv[i], "--no-llm")) skip_llm = true;
        else if (!strcmp(argv[i], "--no-advise")) skip_advise = true;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: wgfuse report [--no-bench] [--no-sim] [--no-llm] [--no-advise]\n"
                   "  The main job: device, a self-check on a real WGSL kernel, then the dispatch-overhead\n"
                   "  summary (bench dispatch --quick), the fused-vs-per-step simulation summary, the\n"
                   "  LLM fusion dial on a small built-in model (llm bench --shape tiny --plan all) and the\n"
                   "  advisor's decision table (advise --table --quick, calibrating first when needed).\n"
                   "  The kernel-fusion experiments are separate: wgfuse bench fusion.\n");
            return 0;
        } else {
            wgf_cli_error("report: unknown flag '%s'", argv[i]);
            return 2;
        }
    }
    struct wgf_gpu_options o = wgf_cli_gpu_options();
    wgf_ctx *ctx = NULL;
    struct wgf_err err = {0};
    printf("== wgfuse report ==\n");
    char lib[512];
    printf("WebGPU implementation: %s\n", wgf_gpu_lib_path(o.lib_path, lib, sizeof lib));
    if (wgf_ctx_create(&o, &ctx, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        return 1;
    }
    printf("\n-- device --\n");
    wgf_cli_print_adapter(stdout, wgf_ctx_adapter(ctx), false);

    printf("\n-- self-check --\n");
    int rc = 0;
    double maxerr = 0;
    const uint32_t sizes[] = {1, 1000, 1u << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint64_t t0 = wgf_now_ns();
        enum wgf_status s = wgf_gpu_selfcheck(ctx, sizes[i], 42 + i, &maxerr);
        double ms = (double)(wgf_now_ns() - t0) * 1e-6;
        if (s != WGF_OK) {
            printf("selfcheck_saxpy n=%-8u FAIL: %s\n", sizes[i], wgf_ctx_last_error(ctx));
            rc = 1;
            break;
        }
        printf("selfcheck_saxpy n=%-8u PASS  max |gpu - c| = %.3g  (%.1f ms incl. upload/readback)\n", sizes[i],
               maxerr, ms);
    }
    if (rc == 0 && !skip_bench) {
        printf("\n-- dispatch overhead (wgfuse bench dispatch --quick) --\n");
        fflush(stdout);
        if (wgf_report_bench_section(stdout, ctx) != 0) rc = 1;
    }
    if (rc == 0 && !skip_sim) {
        printf("\n-- fused simulation (wgfuse sim) --\n");
        fflush(stdout);
        if (wgf_report_sim_section(stdout, ctx) != 0) rc = 1;
    }
    if (rc == 0 && !skip_llm) {
        printf("\n-- LLM fusion dial (wgfuse llm bench --shape tiny --plan all -n 32 --runs 3) --\n");
        fflush(stdout);
        if (wgf_report_llm_dial_section(ctx) != 0) rc = 1;
    }
    if (rc == 0 && !skip_advise) {
        printf("\n-- the decision table, predicted and measured here (wgfuse advise --table --quick) --\n");
        fflush(stdout);
        struct wgf_calibration cal;
        if (wgf_cli_calibration(ctx, NULL, false, true, &cal) || wgf_cli_advise_table(ctx, &cal, true, false, wgf_cli_calibration_local(NULL))) rc = 1;
    }
    wgf_ctx_free(ctx);
    printf("\nreport: %s\n", rc == 0 ? "OK" : "FAILED");
    return rc;
}
