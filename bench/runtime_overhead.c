/* bench/runtime_overhead — µs per dispatch for N tiny dispatches in one pass, through the
 * wgfuse runtime and through raw wgpu* calls, in one program on one device. The ratio is the
 * runtime's overhead (target <= 1.1). Usage:
 *   runtime_overhead [--adapter SEL] [--webgpu-lib PATH] [--n-small N] [--n-large N] [--reps R]
 * Prints a table and one JSON line (for bench/RESULTS.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wgfuse/gpu_bench.h"

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    struct wgf_gpu_options o = wgf_gpu_options_default();
    long n_small = 100, n_large = 2000, reps = 11;
    for (int i = 1; i < argc; i += 2) { /* flag value pairs */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "runtime_overhead: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--adapter")) o.adapter = v;
        else if (!strcmp(a, "--webgpu-lib")) o.lib_path = v;
        else if (!strcmp(a, "--n-small")) n_small = strtol(v, NULL, 10);
        else if (!strcmp(a, "--n-large")) n_large = strtol(v, NULL, 10);
        else if (!strcmp(a, "--reps")) reps = strtol(v, NULL, 10);
        else {
            fprintf(stderr, "runtime_overhead: unknown flag %s\n", a);
            return 2;
        }
    }
    wgf_ctx *ctx;
    struct wgf_err err = {0};
    if (wgf_ctx_create(&o, &ctx, &err) != WGF_OK) {
        fprintf(stderr, "runtime_overhead: %s\n", err.msg);
        return 1;
    }
    struct wgf_overhead_result r;
    if (wgf_gpu_bench_overhead(ctx, (uint32_t)n_small, (uint32_t)n_large, (int)reps, &r) != WGF_OK) {
        fprintf(stderr, "runtime_overhead: %s\n", wgf_ctx_last_error(ctx));
        wgf_ctx_free(ctx);
        return 1;
    }
    double a[WGF_OVERHEAD_MAX_REPS], b[WGF_OVERHEAD_MAX_REPS];
    memcpy(a, r.runtime_us, sizeof a);
    memcpy(b, r.raw_us, sizeof b);
    qsort(a, (size_t)r.reps, sizeof *a, cmpd);
    qsort(b, (size_t)r.reps, sizeof *b, cmpd);
    const struct wgf_adapter_desc *d = wgf_ctx_adapter(ctx);
    printf("device: %s (%s, %s)\n", d->name, d->backend, d->driver);
    printf("N tiny dependent dispatches in one compute pass, one submit; slope between N=%u and N=%u; %d reps\n",
           r.n_small, r.n_large, r.reps);
    printf("%-28s %10s %10s %10s %14s\n", "path", "median us", "min us", "max us", "fixed us@Nsm");
    printf("%-28s %10.3f %10.3f %10.3f %14.1f\n", "wgfuse runtime (recorder)", r.runtime_us_median, a[0],
           a[r.reps - 1], r.runtime_fixed_us);
    printf("%-28s %10.3f %10.3f %10.3f %14.1f\n", "raw wgpu* calls", r.raw_us_median, b[0], b[r.reps - 1],
           r.raw_fixed_us);
    printf("runtime / raw = %.3f (target <= 1.1)\n", r.ratio);
    printf("{\"device\":\"%s\",\"n_small\":%u,\"n_large\":%u,\"reps\":%d,\"runtime_us\":%.4f,\"raw_us\":%.4f,"
           "\"ratio\":%.4f}\n",
           d->name, r.n_small, r.n_large, r.reps, r.runtime_us_median, r.raw_us_median, r.ratio);
    wgf_ctx_free(ctx);
    return 0;
}
