/* wgfuse bench matvec — the shared matvec kernel on real projection shapes against the copy
 * bandwidth of the device (src/bench/bench_matvec.c has the protocol).
 *
 *   wgfuse bench matvec [--models qwen2.5-0.5b,qwen2.5-1.5b,phi-3-mini|toy] [--roles NAMES] [--all-variants]
 *                       [--reps N] [--rotate-mb N] [--json] [--out FILE]
 *
 * Exit 0 ok, 1 failure (a variant that fails its check is printed as WRONG and fails the
 * run), 2 usage; SIGINT/SIGTERM: the cases measured so far are printed, marked incomplete,
 * exit 128 + signal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "wgfuse/bench.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: wgfuse bench matvec [--models LIST] [--roles NAMES] [--all-variants] [--reps N] [--rotate-mb N] [--json]\n"
               "                           [--out FILE]\n"
               "  The matvec kernel every LLM projection role shares, on the projection shapes of real models\n"
               "  (LIST: qwen2.5-0.5b, qwen2.5-1.5b, phi-3-mini, toy; default the first three), f16 (packed)\n"
               "  and f32 weights, checked against a C reference, then timed; GB/s and %% of the copy\n"
               "  bandwidth measured in the same run. --roles: only these shapes (attn_qkv, attn_output,\n"
               "  ffn_gate_up, ffn_down, lm_head). --all-variants adds invocations-per-row /2 and x2 and\n"
               "  the workgroup-memory reduction. --rotate-mb: weight copies cycled per pass (default 256 on\n"
               "  GPUs, 0 on CPU adapters), so the timing reads memory, not the cache.\n");
}

static bool stop_requested(void *user)
{
    (void)user;
    return wgf_cli_interrupt_pending();
}

int wgf__cmd_bench_matvec(int argc, char **argv)
{
    struct wgf_matvec_opts o = {.reps = 7, .stop = stop_requested};
    bool                   json = false;
    const char            *out  = NULL;
    for (int i = 2; i < argc; i++) {
        const char *f   = argv[i];
        const char *v   = i + 1 < argc ? argv[i + 1] : NULL;
        long        n;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(f, "--json")) json = true;
        else if (!strcmp(f, "--all-variants")) o.all_variants = true;
        else if (!v && (!strcmp(f, "--models") || !strcmp(f, "--roles") || !strcmp(f, "--reps") || !strcmp(f, "--rotate-mb") || !strcmp(f, "--out"))) {
            wgf_cli_error("bench matvec: %s needs a value", f);
            return 2;
        } else if (!strcmp(f, "--models")) o.models = argv[++i];
        else if (!strcmp(f, "--roles")) o.roles = argv[++i];
        else if (!strcmp(f, "--out")) out = argv[++i];
        else if (!strcmp(f, "--reps")) {
            if (!wgf_cli_parse_long(f, argv[++i], 1, 64, &n)) return 2;
            o.reps = (int)n;
        } else if (!strcmp(f, "--rotate-mb")) {
            if (!wgf_cli_parse_long(f, argv[++i], 0, 65536, &n)) return 2;
            o.rotate_bytes = (uint64_t)n << 20;
        } else {
            wgf_cli_error("bench matvec: unknown option '%s'", f);
            usage(stderr);
            return 2;
        }
    }
    struct wgf_gpu_options go  = wgf_cli_gpu_options();
    struct wgf_err         err = {0};
    wgf_ctx               *ctx = NULL;
    if (wgf_ctx_create(&go, &ctx, &err) != WGF_OK) {
        wgf_cli_error("bench matvec: %s", err.msg);
        return 1;
    }
    wgf_cli_catch_interrupts();
    struct wgf_matvec_report r;
    enum wgf_status          s  = wgf_bench_matvec(ctx, &o, &r, &err);
    int                      rc = 0;
    if (s && s != WGF_ERR_INTERRUPTED) {
        wgf_cli_error("%s", err.msg);
        rc = 1;
    }
    char *text = NULL;
    if (r.n && (json ? wgf_matvec_json(&r, &text, &err) : wgf_matvec_table(&r, &text, &err)) == WGF_OK) {
        if (s == WGF_ERR_INTERRUPTED && !json) {
            size_t l = strlen(text);
            char  *t = realloc(text, l + 64);
            if (t) snprintf((text = t) + l, 64, "INCOMPLETE: interrupted by %s\n", wgf_cli_interrupt_name());
        }
        if (out) {
            int e = wgf_cli_write_atomic(out, text, strlen(text));
            if (e) {
                wgf_cli_error("bench matvec: cannot write %s", out);
                rc = 1;
            }
        } else {
            fputs(text, stdout);
        }
    }
    for (int i = 0; i < r.n; i++)
        if (!r.rows[i].skipped && !r.rows[i].correct) rc = 1;
    free(text);
    wgf_matvec_report_free(&r);
    wgf_ctx_free(ctx);
    if (s == WGF_ERR_INTERRUPTED) return wgf_cli_interrupt_code();
    return rc;
}
