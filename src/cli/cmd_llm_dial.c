/* wgfuse llm bench --plan all — the fusion dial of one model (include/wgfuse/llm_dial.h) with
 * the device's own floors, measured in the same run: the copy bandwidth (bytes floor: tok/s
 * <= bandwidth / weight bytes per token) and the per-dispatch cost of one compute pass
 * (dispatch floor: tok/s <= 1 / (dispatches x cost)). Prints one table (or one JSON line),
 * the speed-up of each plan over the one before it with a 95% bootstrap CI, and optionally
 * an SVG plot. `wgfuse report` runs it on a small built-in model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "wgfuse/bench.h"
#include "wgfuse/llm_dial.h"

struct dial_floors {
    double copy_gbps;   /* bytes read + written per second                    */
    double dispatch_us; /* slope of N dispatches in one pass                   */
};

static void dial_progress(void *u, const char *what)
{
    (void)u;
    if (!wgf_cli.quiet) fprintf(stderr, "wgfuse: %s\n", what);
}
static bool dial_stop(void *u)
{
    (void)u;
    return wgf_cli_interrupt_pending();
}

static enum wgf_status measure_floors(wgf_ctx *ctx, struct dial_floors *f, struct wgf_err *err)
{
    enum wgf_status s = wgf_bench_copy_gbps(ctx, 5, &f->copy_gbps, err);
    if (s) return s;
    struct wgf_dispatch_opts        o = wgf_dispatch_opts_default(true);
    struct wgf_dispatch_mode_result r;
    o.reps = 5, o.single_reps = 3, o.warmup = 1;
    s              = wgf_bench_dispatch_cost(ctx, &o, WGF_MODE_ONE_PASS, &r, err);
    f->dispatch_us = s ? 0 : r.per_dispatch_us.median;
    return s;
}

/* median and 95% CI of a plan's decode tok/s */
static enum wgf_status decode_stats(const struct wgf_dial_report *r, uint32_t i, struct wgf_stats *st, struct wgf_err *err)
{
    return wgf_stats_compute(r->row[i].decode_tok_s, (int)r->runs, st, err);
}

/* the next measured row after i (skipped rows have no samples); r->n when none */
static uint32_t next_measured(const struct wgf_dial_report *r, uint32_t i)
{
    while (i < r->n && r->row[i].skipped[0]) i++;
    return i;
}

/* s as the inside of a JSON string (quotes, backslashes and control bytes escaped) */
static void json_str(const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
}

static double pct_floor(const struct wgf_dial_row *x, double tok_s, const struct dial_floors *f)
{
    double floor_tok_s = f->copy_gbps * 1e9 / x->weight_bytes_per_token; /* every weight byte once at the copy rate */
    return floor_tok_s > 0 ? 100.0 * tok_s / floor_tok_s : 0;
}

static int print_table(const char *name, const struct wgf_dial_report *r, const struct wgf_dial_opts *o,
                       const struct dial_floors *f, struct wgf_err *err)
{
    printf("fusion dial: %s on %s; prompt %u tokens, %u generated, %u runs after 1 warm-up per plan\n", name,
           r->adapter, r->n_prompt, r->n_gen, r->runs);
    printf("floors measured in this run: copy %.0f GB/s (read + write), %.2f us per dispatch (one pass)\n",
           f->copy_gbps, f->dispatch_us);
    printf("checked against cpu-ref first (%u-token prefill + %u decode steps, tokens cpu-ref picks): every plan "
           "run is within tolerance\n",
           o->check_prompt, o->check_steps);
    printf("%-8s %4s %10s %26s %12s %9s %9s %8s %10s %8s\n", "plan", "wts", "disp/tok", "decode tok/s [95% CI]",
           "prefill t/s", "GPU ms/t", "host ms/t", "% bytes", "check err", "argmax");
    for (uint32_t i = 0; i < r->n; i++) {
        const struct wgf_dial_row *x = &r->row[i];
        struct wgf_stats           st;
        if (x->skipped[0]) {
            printf("%-8s skipped: %s\n", x->plan, x->skipped);
            continue;
        }
        if (decode_stats(r, i, &st, err)) return 1;
        double pre = wgf_stats_median(x->prefill_tok_s, (int)r->runs);
        char   ci[40];
        snprintf(ci, sizeof ci, "%.1f [%.1f, %.1f]", st.median, st.ci_lo, st.ci_hi);
        printf("%-8s %4s %10u %26s %12.1f %9.3f %9.3f %7.1f%% %10.2e %4u/%-3u\n", x->plan, x->weights, x->dispatches, ci,
               pre, x->gpu_us_per_token * 1e-3, x->host_us_per_token * 1e-3, pct_floor(x, st.median, f), x->check_err,
               x->argmax_agree, x->check_rows);
    }
    for (uint32_t d = next_measured(r, 0), i; d < r->n && (i = next_measured(r, d + 1)) < r->n; d = i) {
        struct wgf_ratio q;
        if (wgf_stats_ratio(r->row[i].decode_tok_s, (int)r->runs, r->row[d].decode_tok_s, (int)r->runs, &q, err))
            return 1;
        printf("%s / %s decode: %.3fx [%.3f, %.3f]\n", r->row[i].plan, r->row[d].plan, q.ratio, q.ci_lo, q.ci_hi);
    }
    for (uint32_t i = 0; i < r->n; i++) {
        const struct wgf_profile *p = &r->row[i].profile;
        if (!p->n) continue;
        printf("profile %s (GPU us per decode token, each role in its own pass; sum %.1f):\n", r->row[i].plan,
               p->total_ns / 8e3);
        for (uint32_t k = 0; k < p->n; k++)
            printf("  %-28s %8.1f disp %10.1f us %8.0f GB/s\n", p->rows[k].label, (double)p->rows[k].dispatches / 8,
                   p->rows[k].ns / 8e3, p->rows[k].ns > 0 ? (double)p->rows[k].bytes / p->rows[k].ns : 0.0);
    }
    return 0;
}

static int print_json(const char *name, const struct wgf_dial_report *r, const struct dial_floors *f,
                      struct wgf_err *err)
{
    printf("{\"bench\": \"llm_dial\", \"model\": \"%s\", \"adapter\": \"%s\", \"prompt_tokens\": %u, \"generated\": %u, "
           "\"runs\": %u, \"copy_gbps\": %.1f, \"dispatch_us\": %.3f, \"plans\": [",
           name, r->adapter, r->n_prompt, r->n_gen, r->runs, f->copy_gbps, f->dispatch_us);
    for (uint32_t i = 0; i < r->n; i++) {
        const struct wgf_dial_row *x = &r->row[i];
        struct wgf_stats           st;
        if (x->skipped[0]) {
            printf("%s{\"plan\": \"%s\", \"skipped\": \"", i ? ", " : "", x->plan);
            json_str(x->skipped);
            printf("\"}");
            continue;
        }
        if (decode_stats(r, i, &st, err)) return 1;
        printf("%s{\"plan\": \"%s\", \"weights\": \"%s\", \"dispatches_per_token\": %u, \"weight_bytes_per_token\": %.0f, "
               "\"decode_tok_s_median\": %.2f, \"decode_tok_s_ci\": [%.2f, %.2f], \"prefill_tok_s_median\": %.2f, "
               "\"gpu_ms_per_token\": %.4f, \"host_ms_per_token\": %.4f, \"pct_bytes_floor\": %.2f, \"check_err\": %.3e, "
               "\"tolerance\": %.0e, \"argmax_agree\": %u, \"check_rows\": %u, \"ids_hash\": \"%016llx\", "
               "\"decode_tok_s\": [",
               i ? ", " : "", x->plan, x->weights, x->dispatches, x->weight_bytes_per_token, st.median, st.ci_lo,
               st.ci_hi, wgf_stats_median(x->prefill_tok_s, (int)r->runs), x->gpu_us_per_token * 1e-3,
               x->host_us_per_token * 1e-3, pct_floor(x, st.median, f), x->check_err, x->tolerance, x->argmax_agree,
               x->check_rows, (unsigned long long)x->ids_hash);
        for (uint32_t k = 0; k < r->runs; k++) printf("%s%.2f", k ? ", " : "", x->decode_tok_s[k]);
        printf("]");
        if (x->profile.n) {
            printf(", \"profile_us_per_token\": {");
            for (uint32_t k = 0; k < x->profile.n; k++)
                printf("%s\"%s\": [%.2f, %.2f]", k ? ", " : "", x->profile.rows[k].label, x->profile.rows[k].ns / 8e3,
                       (double)x->profile.rows[k].dispatches / 8);
            printf("}");
        }
        printf("}");
    }
    printf("], \"ratios\": [");
    int n_ratios = 0;
    for (uint32_t d = next_measured(r, 0), i; d < r->n && (i = next_measured(r, d + 1)) < r->n; d = i) {
        struct wgf_ratio q;
        if (wgf_stats_ratio(r->row[i].decode_tok_s, (int)r->runs, r->row[d].decode_tok_s, (int)r->runs, &q, err))
            return 1;
        printf("%s{\"num\": \"%s\", \"den\": \"%s\", \"ratio\": %.4f, \"ci\": [%.4f, %.4f]}", n_ratios++ ? ", " : "",
               r->row[i].plan, r->row[d].plan, q.ratio, q.ci_lo, q.ci_hi);
    }
    printf("]}\n");
    return 0;
}

static int write_svg(const char *path, const char *name, const struct wgf_dial_report *r, const struct dial_floors *f,
                     struct wgf_err *err)
{
    struct wgf_dial_point pt[WGF_DIAL_MAX_PLANS];
    double                bytes_floor = 0;
    int                   np          = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        struct wgf_stats st;
        if (r->row[i].skipped[0]) continue;
        if (decode_stats(r, i, &st, err)) return 1;
        pt[np++] = (struct wgf_dial_point){r->row[i].plan, r->row[i].dispatches, st.median, st.ci_lo, st.ci_hi};
        double bf = f->copy_gbps * 1e9 / r->row[i].weight_bytes_per_token;
        if (bf > bytes_floor) bytes_floor = bf; /* the smallest weights' floor */
    }
    char title[400];
    snprintf(title, sizeof title, "fusion dial: %s on %s (%s weights)", name, r->adapter, r->n ? r->row[0].weights : "-");
    char *svg = NULL;
    if (wgf_bench_dial_svg(pt, np, f->dispatch_us, bytes_floor, title, &svg, err)) return 1;
    int rc = wgf_cli_write_file("llm bench --svg", path, svg, strlen(svg));
    free(svg);
    return rc;
}

int wgf_cli_llm_dial(wgf_ctx *ctx, const char *name, const struct wgf_llm_model *m, struct wgf_dial_opts *o,
                     bool json, const char *svg_path)
{
    struct wgf_err         err = {0};
    struct wgf_dial_report r;
    struct dial_floors     f = {0};
    o->progress = dial_progress, o->stop = dial_stop;
    wgf_cli_catch_interrupts();
    if (measure_floors(ctx, &f, &err)) {
        wgf_cli_error("llm bench --plan all: floors: %s", err.msg);
        return 1;
    }
    enum wgf_status s  = wgf_llm_dial(ctx, m, o, &r, &err);
    int             rc = 0;
    if (s == WGF_ERR_INTERRUPTED) {
        wgf_cli_error("llm bench: interrupted by %s: nothing printed", wgf_cli_interrupt_name());
        rc = wgf_cli_interrupt_code();
    } else if (s) {
        wgf_cli_error("%s: %s", name, err.msg);
        rc = 1;
    } else {
        rc = json ? print_json(name, &r, &f, &err) : print_table(name, &r, o, &f, &err);
        if (!rc && svg_path) rc = write_svg(svg_path, name, &r, &f, &err);
        if (rc && err.msg[0]) wgf_cli_error("%s: %s", name, err.msg);
    }
    wgf_dial_report_free(&r);
    if (!rc && fflush(stdout)) rc = 1;
    return rc;
}

/* `wgfuse report`'s section: the dial on a small built-in model (f16 weights, 3 runs). */
int wgf_report_llm_dial_section(wgf_ctx *ctx)
{
    struct wgf_err        err = {0};
    struct wgf_llm_model *m   = NULL;
    if (wgf_llm_model_synth("tiny", WGF_DT_F16, 1, &m, &err) != WGF_OK) {
        wgf_cli_error("report: %s", err.msg);
        return 1;
    }
    struct wgf_dial_opts o = wgf_dial_opts_default();
    o.n_gen = 32, o.runs = 3;
    o.n_threads = wgf_cli_default_threads();
    int rc      = wgf_cli_llm_dial(ctx, "tiny (built in, random f16 weights)", m, &o, false, NULL);
    wgf_llm_model_free(m);
    return rc;
}
