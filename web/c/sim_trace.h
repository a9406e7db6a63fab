/* wgfuse web — one CartPole training generation at a time, as `wgfuse sim train` runs it.
 *
 * Shared by the page (web_api.c, compiled to wasm) and tests/web/sim_trace_native.c (the
 * same code built natively), so the browser-vs-native test compares two builds of one
 * function. The configuration is cmd_train's: the workload's defaults, the given population,
 * seed and strategy, 16 elites (pop / 2 when 16 do not fit). */
#ifndef WGFW_SIM_TRACE_H
#define WGFW_SIM_TRACE_H
#include <stddef.h>
#include <stdint.h>

#include "wgfuse/sim.h"

struct wgfw_gen {
    long     gen;
    double   best, mean;
    uint64_t fit_hash; /* SipHash-2-4 (key 0) of the pop fitness floats' bytes             */
};

struct wgf_sim_config wgfw_train_config(enum wgf_sim_workload w, int pop, uint32_t seed, enum wgf_sim_strategy st);
/* One GA generation (reset + episode + evolve, one submit), then the fitness read back
 * into fit (pop floats) and summarised into *g (g->gen is the caller's counter). */
enum wgf_status wgfw_train_generation(wgf_sim *sim, float *fit, struct wgfw_gen *g, struct wgf_err *err);
/* "gen,best,mean,fithash": the first three columns exactly as `wgfuse sim train` prints them. */
int             wgfw_gen_line(const struct wgfw_gen *g, char *buf, size_t cap);
/* SipHash-2-4 (key 0) of the whole population's parameters: `wgfuse sim train`'s
 * "# population hash". */
enum wgf_status wgfw_population_hash(wgf_sim *sim, uint64_t *h, struct wgf_err *err);
#endif
