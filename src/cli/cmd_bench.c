/* wgfuse bench — CLI for the dispatch-overhead and fusion characterization.
 *
 *   wgfuse bench dispatch [--quick] [--reps N] [--json|--csv] [--out FILE] [--plot DIR]
 *   wgfuse bench fusion   [--size toy|qwen05b] [--exp a,b,...] [--quick] [--reps N] [--iters N]
 *                         [--json|--csv] [--out FILE] [--plot DIR]
 *
 * Output goes to stdout, or with --out to FILE (written to a temp name, then renamed, so an
 * interrupted run never leaves half a file over an earlier result). --plot DIR writes SVGs the
 * same way. Exit 0 ok, 1 failure (including any kernel that failed its correctness check:
 * its time is never printed), 2 usage. SIGINT/SIGTERM stop the run at the next measurement:
 * what was measured is written marked incomplete ("complete": false in JSON, an INCOMPLETE
 * line in the table; CSV cannot carry the mark, so an interrupted --csv run does not
 * replace --out) and the exit code is 128 + the signal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "wgfuse/bench.h"

enum wgf__fmt { FMT_TABLE, FMT_JSON, FMT_CSV };

static void wgf__bench_progress(void *user, const char *what)
{
    (void)user;
    if (!wgf_cli.quiet) fprintf(stderr, "[bench] %s\n", what);
}

static bool wgf__bench_stop(void *user)
{
    (void)user;
    return wgf_cli_interrupt_pending();
}

static void wgf__bench_usage(FILE *f)
{
    fprintf(f, "usage: wgfuse bench dispatch [--quick] [--reps N] [--json|--csv] [--out FILE] [--plot DIR]\n"
               "       wgfuse bench fusion [--size toy|qwen05b] [--exp NAME,...] [--quick] [--reps N] [--iters N]\n"
               "                           [--json|--csv] [--out FILE] [--plot DIR]\n"
               "  dispatch: per-dispatch cost by the sequential method (slope of wall time vs N) and by\n"
               "            single-op, for 5 recording modes (the fifth: grids read from a buffer, indirect),\n"
               "            f32 and f16; GPU timestamps where present.\n"
               "  fusion:   unfused vs fused kernels, each checked against a C reference before timing.\n"
               "            experiments: rmsnorm, mlp, kv_proj, argmax, softmax, batching, pooling (default all)\n"
               "  --quick   fewer sizes and repetitions (dispatch: under a minute on lavapipe)\n"
               "       wgfuse bench matvec [--models LIST] [--all-variants] [--reps N] [--json] [--out FILE]\n"
               "  matvec:   the LLM projection kernel on real model shapes, GB/s and %% of copy bandwidth.\n"
               "  see docs/methodology.md for how to read the tables.\n");
}

/* Write text to stdout or atomically to a file. */
static int wgf__emit(const char *path, const char *text)
{
    if (!path) {
        fputs(text, stdout);
        fflush(stdout);
        return 0;
    }
    if (wgf_cli_write_file("bench", path, text, strlen(text))) return 1;
    if (!wgf_cli.quiet) fprintf(stderr, "[bench] wrote %s\n", path);
    return 0;
}

static int wgf__plot(const char *dir, const char *name, const char *svg)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        wgf_cli_error("bench: cannot create %s: %s", dir, strerror(errno));
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return wgf__emit(path, svg);
}

struct wgf__bench_args {
    bool          quick;
    enum wgf__fmt fmt;
    const char   *out, *plot, *size, *exps;
    long          reps, iters;
};

/* Parse the flags after the sub-subcommand; returns 0, or 2 on a usage error. */
static int wgf__bench_parse(int argc, char **argv, bool fusion, struct wgf__bench_args *a)
{
    memset(a, 0, sizeof *a);
    a->size = "qwen05b";
    for (int i = 2; i < argc; i++) {
        const char *f   = argv[i];
        bool        val = i + 1 < argc;
        if (!strcmp(f, "--quick")) a->quick = true;
        else if (!strcmp(f, "--json")) a->fmt = FMT_JSON;
        else if (!strcmp(f, "--csv")) a->fmt = FMT_CSV;
        else if (!strcmp(f, "--out") && val) a->out = argv[++i];
        else if (!strcmp(f, "--plot") && val) a->plot = argv[++i];
        else if (!strcmp(f, "--reps") && val) {
            if (!wgf_cli_parse_long(f, argv[++i], 2, WGF_BENCH_MAX_REPS, &a->reps)) return 2;
        } else if (fusion && !strcmp(f, "--iters") && val) {
            if (!wgf_cli_parse_long(f, argv[++i], 1, 100000, &a->iters)) return 2;
        } else if (fusion && !strcmp(f, "--size") && val) a->size = argv[++i];
        else if (fusion && !strcmp(f, "--exp") && val) a->exps = argv[++i];
        else if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            wgf__bench_usage(stdout);
            return -1;
        } else {
            wgf_cli_error("bench: unknown or incomplete option '%s'", f);
            wgf__bench_usage(stderr);
            return 2;
        }
    }
    return 0;
}

/* After an interrupt: say what is written, and whether it may be. False when the format
 * cannot carry the "incomplete" mark (CSV to --out): then nothing replaces --out. */
static bool wgf__bench_partial_ok(const struct wgf__bench_args *a, const char *family, const char *what)
{
    if (a->fmt == FMT_CSV && a->out) {
        wgf_cli_error("bench %s: interrupted by %s: %s not written (CSV cannot mark a partial run)", family,
                      wgf_cli_interrupt_name(), a->out);
        return false;
    }
    wgf_cli_error("bench %s: interrupted by %s: writing %s finished so far, marked incomplete", family,
                  wgf_cli_interrupt_name(), what);
    return true;
}

static wgf_ctx *wgf__bench_ctx(void)
{
    struct wgf_gpu_options opt = wgf_cli_gpu_options();
    struct wgf_err         err = {0};
    wgf_ctx               *ctx = NULL;
    if (wgf_ctx_create(&opt, &ctx, &err) != WGF_OK) {
        wgf_cli_error("bench: %s", err.msg);
        return NULL;
    }
    return ctx;
}

static int wgf__bench_dispatch(const struct wgf__bench_args *a)
{
    struct wgf_dispatch_opts o = wgf_dispatch_opts_default(a->quick);
    if (a->reps) o.reps = (int)a->reps;
    o.progress = wgf__bench_progress;
    o.stop     = wgf__bench_stop;
    wgf_ctx *ctx = wgf__bench_ctx();
    if (!ctx) return 1;
    wgf_cli_catch_interrupts();
    struct wgf_dispatch_report *r   = calloc(1, sizeof *r);
    struct wgf_err              err = {0};
    int                         rc  = 1;
    char                       *text = NULL;
    if (!r) {
        wgf_cli_error("bench: out of memory");
        goto out;
    }
    enum wgf_status bs = wgf_bench_dispatch(ctx, &o, r, &err);
    if (bs != WGF_OK && bs != WGF_ERR_INTERRUPTED) {
        wgf_cli_error("%s", err.msg);
        goto out;
    }
    if (bs == WGF_OK) {
        /* the per-call breakdown is measured in src/gpu (only it touches webgpu.h) */
        enum wgf_status cs = wgf_gpu_bench_call_breakdown(ctx, a->quick ? 2000 : 20000, &r->calls);
        if (cs == WGF_OK) r->has_calls = true;
        else snprintf(r->calls_skip, sizeof r->calls_skip, "%.120s", wgf_ctx_last_error(ctx));
    } else {
        snprintf(r->calls_skip, sizeof r->calls_skip, "not measured: interrupted");
        if (!wgf__bench_partial_ok(a, "dispatch", "the modes")) {
            rc = wgf_cli_interrupt_code();
            goto out;
        }
    }
    enum wgf_status s = a->fmt == FMT_JSON  ? wgf_bench_dispatch_json(r, &text, &err)
                        : a->fmt == FMT_CSV ? wgf_bench_dispatch_csv(r, &text, &err)
                                            : wgf_bench_dispatch_table(r, &text, &err);
    if (s) {
        wgf_cli_error("%s", err.msg);
        goto out;
    }
    rc = wgf__emit(a->out, text);
    free(text);
    text = NULL;
    if (!rc && a->plot && r->complete) {
        if (wgf_bench_dispatch_svg(r, &text, &err) != WGF_OK) {
            wgf_cli_error("%s", err.msg);
            rc = 1;
        } else rc = wgf__plot(a->plot, "dispatch_time_vs_n.svg", text);
    }
    if (!rc && !r->complete) rc = wgf_cli_interrupt_code();
out:
    free(text);
    free(r);
    wgf_ctx_free(ctx);
    return rc;
}

static int wgf__bench_fusion(const struct wgf__bench_args *a)
{
    struct wgf_bench_size size;
    struct wgf_err        err = {0};
    if (wgf_bench_size_get(a->size, &size, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        return 2;
    }
    bool want[WGF_FUSION_COUNT];
    for (int e = 0; e < WGF_FUSION_COUNT; e++) want[e] = a->exps == NULL;
    if (a->exps) { /* comma-separated names, each an experiment (a repeat is harmless) */
        char       *copy = NULL;
        const char *items[4 * WGF_FUSION_COUNT];
        int         n    = wgf_cli_split_list("--exp", a->exps, &copy, items, 4 * WGF_FUSION_COUNT);
        for (int k = 0; k < n; k++) {
            int e = 0;
            while (e < WGF_FUSION_COUNT && strcmp(items[k], wgf_fusion_exp_name((enum wgf_fusion_exp)e))) e++;
            if (e == WGF_FUSION_COUNT) {
                wgf_cli_error("bench: unknown experiment '%s'", items[k]);
                n = -1;
                break;
            }
            want[e] = true;
        }
        free(copy);
        if (n < 0) return 2;
    }
    struct wgf_fusion_opts o = wgf_fusion_opts_default(&size, a->quick);
    if (a->reps) o.reps = (int)a->reps;
    o.iters    = (int)a->iters;
    o.progress = wgf__bench_progress;
    o.stop     = wgf__bench_stop;
    wgf_ctx *ctx = wgf__bench_ctx();
    if (!ctx) return 1;
    wgf_cli_catch_interrupts();
    struct wgf_fusion_result *res = calloc(WGF_FUSION_COUNT, sizeof *res);
    int                       n = 0, rc = 0;
    char                     *text = NULL;
    if (!res) {
        wgf_cli_error("bench: out of memory");
        wgf_ctx_free(ctx);
        return 1;
    }
    bool interrupted = false;
    for (int e = 0; e < WGF_FUSION_COUNT; e++) {
        if (!want[e]) continue;
        enum wgf_status fs = interrupted ? WGF_ERR_INTERRUPTED : wgf_bench_fusion(ctx, &o, (enum wgf_fusion_exp)e, &res[n], &err);
        if (fs == WGF_ERR_INTERRUPTED) {
            /* this and every later experiment: listed as not run, the report marked incomplete */
            memset(&res[n], 0, sizeof res[n]);
            res[n].exp         = (enum wgf_fusion_exp)e;
            res[n].interrupted = true;
            snprintf(res[n].name, sizeof res[n].name, "%s", wgf_fusion_exp_name((enum wgf_fusion_exp)e));
            snprintf(res[n].skip, sizeof res[n].skip, "not run: interrupted by %s", wgf_cli_interrupt_name());
            interrupted = true;
            n++;
            continue;
        }
        if (fs != WGF_OK) {
            /* one experiment failing (e.g. a limit) does not hide the others' results */
            wgf_cli_error("%s", err.msg);
            res[n].exp = (enum wgf_fusion_exp)e;
            snprintf(res[n].name, sizeof res[n].name, "%s", wgf_fusion_exp_name((enum wgf_fusion_exp)e));
            snprintf(res[n].skip, sizeof res[n].skip, "failed: %.110s", err.msg);
            rc = 1;
        }
        for (int i = 0; i < res[n].n_variants; i++)
            if (!res[n].v[i].correct) rc = 1;
        n++;
    }
    /* the device line of every report: adapter, backend, type, driver, UTC date */
    const struct wgf_adapter_desc *ad = wgf_ctx_adapter(ctx);
    char                           adapter[700], date[32];
    time_t                         now = time(NULL);
    struct tm                      tmv;
    gmtime_r(&now, &tmv);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    snprintf(adapter, sizeof adapter, "%s (%s, %s), driver %s, %s", ad->name, ad->backend, ad->type, ad->driver, date);
    if (interrupted && !wgf__bench_partial_ok(a, "fusion", "the experiments")) {
        free(res);
        wgf_ctx_free(ctx);
        return wgf_cli_interrupt_code();
    }
    enum wgf_status s   = a->fmt == FMT_JSON  ? wgf_bench_fusion_json(res, n, adapter, &size, &text, &err)
                          : a->fmt == FMT_CSV ? wgf_bench_fusion_csv(res, n, &text, &err)
                                              : wgf_bench_fusion_table(res, n, adapter, &size, &text, &err);
    if (s) {
        wgf_cli_error("%s", err.msg);
        rc = 1;
    } else if (wgf__emit(a->out, text)) rc = 1;
    free(text);
    text = NULL;
    if (a->plot && !s && !interrupted) {
        char title[160];
        snprintf(title, sizeof title, "fusion, size %s, %.120s", size.name, ad->name);
        if (wgf_bench_fusion_svg(res, n, title, &text, &err) != WGF_OK) {
            wgf_cli_error("%s", err.msg);
            rc = 1;
        } else {
            char name[64];
            snprintf(name, sizeof name, "fusion_%s.svg", size.name);
            if (wgf__plot(a->plot, name, text)) rc = 1;
        }
        free(text);
    }
    free(res);
    wgf_ctx_free(ctx);
    return interrupted && rc == 0 ? wgf_cli_interrupt_code() : rc;
}

int wgf_cmd_bench(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        wgf__bench_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "matvec")) return wgf__cmd_bench_matvec(argc, argv);
    bool fusion = !strcmp(argv[1], "fusion");
    if (!fusion && strcmp(argv[1], "dispatch")) {
        wgf_cli_error("bench: unknown experiment family '%s' (dispatch, fusion, matvec)", argv[1]);
        return 2;
    }
    struct wgf__bench_args a;
    int                    rc = wgf__bench_parse(argc, argv, fusion, &a);
    if (rc) return rc < 0 ? 0 : rc;
    return fusion ? wgf__bench_fusion(&a) : wgf__bench_dispatch(&a);
}

/* `wgfuse report` section: the quick dispatch characterization, key numbers only. */
int wgf_report_bench_section(FILE *out, wgf_ctx *ctx)
{
    struct wgf_dispatch_opts    o   = wgf_dispatch_opts_default(true);
    struct wgf_dispatch_report *r   = calloc(1, sizeof *r);
    struct wgf_err              err = {0};
    if (!r) return 1;
    if (wgf_bench_dispatch(ctx, &o, r, &err) != WGF_OK) {
        fprintf(out, "dispatch bench FAILED: %s\n", err.msg);
        free(r);
        return 1;
    }
    fprintf(out, "per-dispatch cost, sequential method (slope of wall time vs N), median [95%% CI]:\n");
    for (int dt = 0; dt < WGF_BENCH_DTYPES; dt++)
        for (int m = 0; m < WGF_MODE_COUNT; m++) {
            const struct wgf_dispatch_mode_result *x = &r->mode[dt][m];
            if (!x->ran) continue;
            fprintf(out, "  %s %-12s %8.2f us [%.2f, %.2f]  CV %4.1f%%   single-op %8.2f us\n", dt ? "f16" : "f32",
                    wgf_dispatch_mode_name((enum wgf_dispatch_mode)m), x->per_dispatch_us.median,
                    x->per_dispatch_us.ci_lo, x->per_dispatch_us.ci_hi, 100 * x->per_dispatch_us.cv,
                    x->single_op_us.median);
        }
    if (r->f16_skip[0]) fprintf(out, "  SKIP f16: %s\n", r->f16_skip);
    if (r->single_over_sequential > 0)
        fprintf(out, "single-op / sequential: %.1fx (%.2f / %.2f us; paper, Dawn/Vulkan RTX 5090: 20.9x)\n",
                r->single_over_sequential, r->single_op_us, r->sequential_us);
    else
        fprintf(out, "single-op / sequential: n/a (one_pass slope %.2f us: too noisy here; single-op %.2f us)\n",
                r->sequential_us, r->single_op_us);
    if (r->has_gpu_time)
        fprintf(out, "GPU time per dispatch (timestamps, in one pass): %.2f us%s%s\n", r->gpu_amortized_us.median,
                r->gpu_time_note[0] ? "  " : "", r->gpu_time_note);
    free(r);
    return 0;
}
