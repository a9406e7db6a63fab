/* sim_population — evolve a population of CartPole policies on the GPU with wgfuse, using only
 * its public API.
 *
 *   sim_population [POP] [GENS] [SEED]
 *
 * POP (default 1024) genomes, each a small MLP policy, run their whole CartPole-v1 episode in
 * one fused dispatch per generation; a GA (16 elites, tournaments, crossover, mutation) evolves
 * them without the population leaving the GPU. Prints "gen,best,mean" per generation (GENS,
 * default 20), as the first three columns of
 *   wgfuse sim train cartpole --pop POP --gens GENS --seed SEED
 * (tests/install/ checks it). The WebGPU implementation is the one wgfuse was built with, or
 * $WGFUSE_WEBGPU_LIB. Build: cc -std=c11 sim_population.c $(pkg-config --cflags --libs wgfuse). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <wgfuse/gpu.h>
#include <wgfuse/sim.h>

int main(int argc, char **argv)
{
    int      pop  = argc > 1 ? atoi(argv[1]) : 1024;
    long     gens = argc > 2 ? atol(argv[2]) : 20;
    uint32_t seed = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 1;

    struct wgf_err         err = {0};
    struct wgf_gpu_options go  = wgf_gpu_options_default(); /* the first usable adapter      */
    wgf_ctx               *ctx = NULL;                      /* owned: wgf_ctx_free, last     */
    wgf_sim               *sim = NULL;                      /* owned: wgf_sim_free           */
    float                 *fit = NULL;
    int                    rc  = 1;
    if (wgf_ctx_create(&go, &ctx, &err) != WGF_OK) goto out;

    struct wgf_sim_config c = wgf_sim_config_default(WGF_SIM_CARTPOLE);
    c.pop       = pop; /* strategy: fused, one dispatch per episode (the default)           */
    c.ga.elites = 16;
    c.seed      = seed;
    if (wgf_sim_create(ctx, &c, &sim, &err) != WGF_OK) goto out;
    if (!(fit = malloc((size_t)pop * sizeof *fit))) {
        wgf_fail(&err, WGF_ERR_NOMEM, "fitness of %d genomes", pop);
        goto out;
    }
    printf("gen,best,mean\n");
    for (long g = 0; g < gens; g++) {
        /* one generation (reset + episode + evolve) in one submit, then the returns */
        if (wgf_sim_generations(sim, 1, &err) != WGF_OK || wgf_sim_fitness_read(sim, fit, &err) != WGF_OK) goto out;
        double sum = 0, best = -INFINITY;
        for (int i = 0; i < pop; i++) sum += fit[i], best = fmax(best, fit[i]);
        printf("%ld,%.2f,%.2f\n", g, best, sum / pop);
    }
    rc = 0;
out:
    if (rc) fprintf(stderr, "sim_population: %s (%s)\n", err.msg, wgf_status_str(err.status));
    free(fit);
    wgf_sim_free(sim);
    wgf_ctx_free(ctx);
    return rc;
}
