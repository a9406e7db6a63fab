/* wgfuse web — one CartPole training generation at a time (sim_trace.h). */
#include "sim_trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/hash.h"

struct wgf_sim_config wgfw_train_config(enum wgf_sim_workload w, int pop, uint32_t seed, enum wgf_sim_strategy st)
{
    struct wgf_sim_config c = wgf_sim_config_default(w);
    c.pop       = pop;
    c.seed      = seed;
    c.strategy  = st;
    c.ga.elites = 16 < pop ? 16 : pop / 2;
    return c;
}

enum wgf_status wgfw_train_generation(wgf_sim *sim, float *fit, struct wgfw_gen *g, struct wgf_err *err)
{
    enum wgf_status s = wgf_sim_generations(sim, 1, err);
    if (s == WGF_OK) s = wgf_sim_fitness_read(sim, fit, err);
    if (s != WGF_OK) return s;
    int    pop  = wgf_sim_config_of(sim)->pop;
    double sum  = 0, best = -INFINITY;
    for (int i = 0; i < pop; i++) {
        sum += fit[i];
        best = fmax(best, fit[i]);
    }
    g->best = best;
    g->mean = sum / pop;
    struct wgf_hash_key k = {0, 0};
    g->fit_hash = wgf_siphash(&k, fit, (size_t)pop * sizeof *fit, 2, 4);
    return WGF_OK;
}

int wgfw_gen_line(const struct wgfw_gen *g, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%ld,%.2f,%.2f,%016llx", g->gen, g->best, g->mean, (unsigned long long)g->fit_hash);
}

enum wgf_status wgfw_population_hash(wgf_sim *sim, uint64_t *h, struct wgf_err *err)
{
    size_t n = (size_t)wgf_sim_config_of(sim)->pop * (size_t)wgf_sim_n_params(sim);
    float *x = malloc(n * sizeof *x);
    if (!x) return wgf_fail(err, WGF_ERR_NOMEM, "population hash: %zu floats", n);
    enum wgf_status s = wgf_sim_params_read(sim, x, err);
    struct wgf_hash_key k = {0, 0};
    if (s == WGF_OK) *h = wgf_siphash(&k, x, n * sizeof *x, 2, 4);
    free(x);
    return s;
}
