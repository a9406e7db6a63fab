/* web_sim_trace — the page's CartPole training run (web/c/sim_trace.c), built natively.
 *
 *   web_sim_trace POP GENS SEED STRATEGY
 *
 * Prints one "gen,best,mean,fithash" line per generation and "hash <population hash>", the
 * same lines the page's wgfw_sim_step / wgfw_sim_hash give; tests/web/test_web.mjs runs it
 * on Chromium's SwiftShader Vulkan driver and compares them with the browser's. */
#include <stdio.h>
#include <stdlib.h>

#include "sim_trace.h"

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: web_sim_trace POP GENS SEED STRATEGY\n");
        return 2;
    }
    int                   pop  = atoi(argv[1]);
    long                  gens = atol(argv[2]);
    uint32_t              seed = (uint32_t)strtoul(argv[3], NULL, 10);
    struct wgf_err        err  = {0};
    enum wgf_sim_strategy st;
    int                   chunk = 0;
    if (pop < 2 || gens < 1 || wgf_sim_strategy_parse(argv[4], &st, &chunk, &err) != WGF_OK) {
        fprintf(stderr, "web_sim_trace: bad arguments%s%s\n", err.msg[0] ? ": " : "", err.msg);
        return 2;
    }
    struct wgf_gpu_options go  = wgf_gpu_options_default();
    wgf_ctx               *ctx = NULL;
    wgf_sim               *sim = NULL;
    float                 *fit = malloc((size_t)pop * sizeof *fit);
    int                    rc  = 1;
    struct wgf_sim_config  c   = wgfw_train_config(WGF_SIM_CARTPOLE, pop, seed, st);
    c.chunk                    = chunk;
    if (!fit || wgf_ctx_create(&go, &ctx, &err) != WGF_OK || wgf_sim_create(ctx, &c, &sim, &err) != WGF_OK) goto out;
    printf("# adapter %s (%s)\n", wgf_ctx_adapter(ctx)->name, wgf_ctx_adapter(ctx)->driver);
    for (long g = 0; g < gens; g++) {
        struct wgfw_gen r = {.gen = g};
        char            line[128];
        if (wgfw_train_generation(sim, fit, &r, &err) != WGF_OK) goto out;
        wgfw_gen_line(&r, line, sizeof line);
        printf("%s\n", line);
    }
    uint64_t h = 0;
    if (wgfw_population_hash(sim, &h, &err) != WGF_OK) goto out;
    printf("hash %016llx\n", (unsigned long long)h);
    rc = 0;
out:
    if (rc) fprintf(stderr, "web_sim_trace: %s\n", err.msg);
    free(fit);
    wgf_sim_free(sim);
    wgf_ctx_free(ctx);
    return rc;
}
