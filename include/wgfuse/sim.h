/* wgfuse sim — fused sequential simulation and evolution on the GPU.
 *
 * A population of genomes (flat f32 parameter vectors, one policy each) is evaluated on a
 * workload and evolved, and the whole generation stays on the GPU:
 *
 *   reset     one dispatch: every genome's initial state from a counter-based hash RNG
 *   episode   the time steps, recorded by a strategy:
 *               fused      one dispatch runs every genome's whole episode (one thread per
 *                          genome, genome copied to private memory, all steps in a loop)
 *               chunked K  K steps per dispatch, state ping-ponging between state_buf[2]
 *               per-step   one dispatch per time step (chunked with K = 1)
 *               fused-wide fused, a genome over several threads (a hidden unit or, finsim, an asset each)
 *   evolve    elitism + tournament selection + uniform crossover + gaussian mutation (GA):
 *             on a GPU by default 2 or 3 passes (select | rank | breed, WGF_SIM_EVOLVE_SPLIT),
 *             one dispatch with WGF_SIM_EVOLVE_THREAD or _WIDE (enum wgf_sim_evolve below);
 *             or the OpenAI-ES sample/rank/Adam-update (es.c)
 *
 * Metric (docs/sim.md): a generation = evaluate + evolve over the whole population.
 * gen/s is reported twice, labelled: without readback (generations submitted back to back)
 * and with the per-generation fitness readback (what a training loop that prints does).
 *
 * Every workload has a plain-C reference with the same f32 arithmetic order; the GPU may
 * contract a*b+c into fma and its sin/cos differ from libm's, so C vs GPU agreement is
 * checked within a stated tolerance per step (tests/sim/), and bitwise across strategies.
 * Definitions (metric, workloads, the synthetic price path): docs/sim.md.
 *
 * Library calls return enum wgf_status with the message in *err; they never print. */
#ifndef WGFUSE_SIM_H
#define WGFUSE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wgfuse/gpu.h"
#include "wgfuse/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- workloads ---------------------------------------------------------------------------- */
enum wgf_sim_workload {
    WGF_SIM_CARTPOLE    = 0, /* CartPole-v1: Euler, 500-step limit, reward 1 per step       */
    WGF_SIM_ACROBOT     = 1, /* Acrobot-v1: RK4 over dt = 0.2, book dynamics, 500 steps      */
    WGF_SIM_MOUNTAINCAR = 2, /* MountainCar-v0: 200 steps, reward -1 per step               */
    WGF_SIM_RASTRIGIN   = 3, /* f(x) = 10 d + sum(x_i^2 - 10 cos(2 pi x_i)); fitness = -f    */
    WGF_SIM_FINSIM      = 4, /* 16-asset trading simulation on a synthetic price path        */
    WGF_SIM_N_WORKLOADS
};

struct wgf_sim_workload_info {
    const char *name;        /* CLI name, e.g. "cartpole"                                  */
    const char *gym_id;      /* "CartPole-v1", or a wgfuse name                            */
    int         n_state;     /* env state floats (<= WGF_SIM_MAX_STATE)                    */
    int         n_obs;       /* observation floats fed to the policy                       */
    int         n_actions;   /* discrete actions (argmax over the first n_actions outputs) */
    int         max_steps;   /* the episode limit Gymnasium registers                      */
    int         hidden;      /* default hidden width                                       */
    int         n_feedback;  /* default outputs fed back as inputs (recurrent policy)      */
    bool        sequential;  /* false: no time steps (Rastrigin); strategies do not apply  */
};
#define WGF_SIM_MAX_STATE 4

const struct wgf_sim_workload_info *wgf_sim_workload_info(enum wgf_sim_workload w);
enum wgf_status wgf_sim_workload_parse(const char *name, enum wgf_sim_workload *out, struct wgf_err *err);

enum wgf_sim_strategy {
    WGF_SIM_FUSED      = 0,
    WGF_SIM_CHUNKED    = 1,
    WGF_SIM_PER_STEP   = 2,
    WGF_SIM_FUSED_WIDE = 3, /* fused, a genome over several lanes: classic control a lane
                               per hidden unit (sim_episode_wide.wgsl), finsim a lane per
                               asset (finsim_wide.wgsl); bitwise equal to fused          */
};
const char *wgf_sim_strategy_name(enum wgf_sim_strategy s); /* "fused", "chunked", "per-step", "fused-wide" */
/* "fused", "fused-wide", "per-step", "chunked" (K = 50), "chunked:K" or "chunked K". */
enum wgf_status wgf_sim_strategy_parse(const char *s, enum wgf_sim_strategy *out, int *chunk,
                                       struct wgf_err *err);

/* ---- counter-based RNG, identical in C and WGSL (src/kernels/sim/sim_rng.inc.wgsl) --------- */
/* PCG-RXS-M-XS 32-bit hash (O'Neill's PCG output permutation on an LCG step). */
uint32_t wgf_sim_hash(uint32_t x);
/* hash(hash(hash(hash(seed) ^ gen) ^ i) ^ j): one u32 per (seed, generation, i, j). */
uint32_t wgf_sim_rand(uint32_t seed, uint32_t gen, uint32_t i, uint32_t j);
/* Top 24 bits as a float in [0, 1) (exact in f32). */
float    wgf_sim_u01(uint32_t h);
/* The `j` streams: tag << 28 | counter. */
#define WGF_SIM_TAG_RESET      0u
#define WGF_SIM_TAG_TOURNAMENT 1u
#define WGF_SIM_TAG_CROSSOVER  2u
#define WGF_SIM_TAG_MUTATE     3u
#define WGF_SIM_TAG_NORMAL     4u /* Box-Muller: counter 2k and 2k+1                      */
#define WGF_SIM_TAG_INIT       5u /* initial population                                  */
#define WGF_SIM_TAG_ES         6u /* ES noise (counter 2k, 2k+1 per parameter k)          */
#define WGF_SIM_J(tag, k) (((uint32_t)(tag) << 28) | ((uint32_t)(k) & 0x0FFFFFFFu))
/* Standard normal from two hashed uniforms (Box-Muller, cos branch), as the kernels do. */
float    wgf_sim_normal(uint32_t seed, uint32_t gen, uint32_t i, uint32_t tag, uint32_t k);

/* ---- classic-control C references (f32, Gymnasium's arithmetic order) --------------------- */
/* Initial state of `genome` in generation `gen`: Gymnasium's reset distribution drawn from
 * wgf_sim_rand(seed, gen, genome, WGF_SIM_J(WGF_SIM_TAG_RESET, component)). */
void  wgf_sim_env_reset(enum wgf_sim_workload w, uint32_t seed, uint32_t gen, uint32_t genome,
                        float s[WGF_SIM_MAX_STATE]);
void  wgf_sim_env_obs(enum wgf_sim_workload w, const float s[WGF_SIM_MAX_STATE], float *obs);
/* One step in place; returns the reward and sets *terminated. */
float wgf_sim_env_step(enum wgf_sim_workload w, float s[WGF_SIM_MAX_STATE], int action, bool *terminated);

/* ---- policies ------------------------------------------------------------------------------ */
/* A per-genome MLP n_in -> n_hidden (tanh) -> n_out. Recurrent by output feedback: the last
 * n_feedback outputs, through tanh, become the last n_feedback inputs of the next step
 * (zero at reset). n_in = n_obs + n_feedback, n_out = n_actions + n_feedback.
 * Parameter layout (flat f32): W1 (n_hidden, n_in) row-major, b1 (n_hidden),
 * W2 (n_out, n_hidden) row-major, b2 (n_out). */
struct wgf_sim_policy {
    int n_in, n_hidden, n_out, n_feedback;
};
struct wgf_sim_policy wgf_sim_policy_for(enum wgf_sim_workload w, int hidden, int n_feedback);
int  wgf_sim_policy_n_params(const struct wgf_sim_policy *p);
/* out[n_out] = W2 tanh(W1 in + b1) + b2; accumulation order = the kernel's. */
void wgf_sim_policy_forward(const struct wgf_sim_policy *p, const float *w, const float *in, float *out);
/* First index of the maximum of out[0..n). */
int  wgf_sim_argmax(const float *out, int n);
/* Serialise a policy (text: header lines + one %.9g per line) into a malloc'd string the
 * caller owns; and parse it back (params malloc'd, caller owns). Policy files hold
 * classic-control policies (cartpole, acrobot, mountaincar): the load checks every field
 * against the workload the file names and wgf_sim_create's limits (hidden 1..64, 0..4 fed
 * back, the shape and parameter count that follow), refuses NULs and any text after the
 * parameters, so params holds exactly wgf_sim_policy_n_params(p) finite floats. */
enum wgf_status wgf_sim_policy_save(enum wgf_sim_workload w, const struct wgf_sim_policy *p, const float *params,
                                    char **text, size_t *len, struct wgf_err *err);
enum wgf_status wgf_sim_policy_load(const char *text, size_t len, enum wgf_sim_workload *w,
                                    struct wgf_sim_policy *p, float **params, struct wgf_err *err);

/* One classic-control episode in plain C, exactly as the GPU runs it. Returns the return;
 * *steps (may be NULL) gets the steps taken. */
float wgf_sim_ref_episode(enum wgf_sim_workload w, const struct wgf_sim_policy *p, const float *params,
                          int max_steps, uint32_t seed, uint32_t gen, uint32_t genome, int *steps);

/* ---- Rastrigin ---------------------------------------------------------------------------- */
/* f(x) = 10 d + sum_i (x_i^2 - 10 cos(2 pi x_i)), summed in f32 in the kernel's order
 * (64 strided partial sums, then a tree). Fitness = -f. */
float wgf_sim_rastrigin_ref(const float *x, int dim);

/* ---- financial simulation (docs/sim.md defines it precisely) ------------------------------ */
#define WGF_FIN_ASSETS   16
#define WGF_FIN_SIGNALS  36 /* 2 per asset (1-step return, 10-step momentum) + 4 market     */
#define WGF_FIN_FEATURES 6  /* per asset: its 2 signals + the 4 market signals              */
#define WGF_FIN_WARMUP   20 /* path steps before t = 0 (the signals' look-back)             */
struct wgf_sim_market {
    int    n_steps;  /* episode length L                                                */
    float *returns;  /* (L, 16): simple return of each asset from t to t+1               */
    float *signals;  /* (L, 36): what the policy sees at t (only data up to t)           */
};
/* Generate the seeded synthetic path (one-factor model with a two-state volatility
 * regime; docs/sim.md). Owned by *m; free with wgf_sim_market_free. */
enum wgf_status wgf_sim_market_generate(uint32_t seed, int n_steps, struct wgf_sim_market *m, struct wgf_err *err);
void            wgf_sim_market_free(struct wgf_sim_market *m);
/* The trading episode in plain C (policy 8 -> 16 -> 6, 2 outputs fed back); returns the
 * fitness = log of final equity (or its value at ruin, which ends the episode). */
float wgf_sim_finsim_ref_episode(const struct wgf_sim_market *m, const struct wgf_sim_policy *p, const float *params,
                                 int n_steps);

/* ---- the GPU population -------------------------------------------------------------------- */
/* Which evolve kernels run a GA generation (src/sim/evolve.c); bitwise-identical results in
 * every case. The values are the ones the int field took before it was this enum. */
enum wgf_sim_evolve {
    WGF_SIM_EVOLVE_AUTO   = -1, /* on a GPU SPLIT; on a CPU adapter THREAD, or WIDE from 512
                                   parameters up (and a population <= 65535)               */
    WGF_SIM_EVOLVE_THREAD = 0,  /* evolve.wgsl: one dispatch, a thread per genome          */
    WGF_SIM_EVOLVE_WIDE   = 1,  /* evolve_wide.wgsl: one dispatch, a workgroup per genome  */
    WGF_SIM_EVOLVE_SPLIT  = 2,  /* evolve_select | evolve_rank | evolve_breed, 2 or 3 passes */
};
/* "auto", "thread", "wide", "split"; and back (WGF_ERR_ARG for another name). */
const char     *wgf_sim_evolve_name(enum wgf_sim_evolve e);
enum wgf_status wgf_sim_evolve_parse(const char *name, enum wgf_sim_evolve *out, struct wgf_err *err);

struct wgf_sim_ga {
    int   elites;     /* copied unchanged, best first, into slots 0..elites-1           */
    int   tournament; /* tournament size                                                */
    float mut_rate;   /* per-parameter probability of a gaussian perturbation          */
    float mut_sigma;  /* its standard deviation                                         */
};

struct wgf_sim_config {
    enum wgf_sim_workload workload;
    enum wgf_sim_strategy strategy;
    int                   chunk;      /* K for WGF_SIM_CHUNKED                                */
    int                   pop;        /* genomes                                              */
    int                   max_steps;  /* episode length (0 = the workload's)                  */
    int                   hidden;     /* policy hidden width (0 = the workload's default)     */
    int                   n_feedback; /* -1 = the workload's default                          */
    int                   dim;        /* Rastrigin dimension                                  */
    uint32_t              seed;
    float                 init_sigma; /* initial parameters ~ N(0, init_sigma^2); Rastrigin:
                                         U(-5.12, 5.12)                                     */
    struct wgf_sim_ga     ga;
    enum wgf_sim_evolve   evolve;     /* evolve kernels (default AUTO); wgf_sim_config_of()
                                         gives the one AUTO chose                           */
    /* The genomes wgf_sim_evaluate runs: eval_first .. eval_first + eval_count - 1
     * (eval_count 0 = all; wgf_sim_create fills it in). A process of an MPI job evaluates its
     * slice, the fitness of the others comes from them (wgf_sim_fitness_write), and every
     * process evolves the whole population identically. Unevaluated genomes' fitness is left
     * as it was. */
    int                   eval_first, eval_count;
};
struct wgf_sim_config wgf_sim_config_default(enum wgf_sim_workload w);

typedef struct wgf_sim wgf_sim;

/* Build every buffer, pipeline and bind group for the population (the loops after this
 * only record dispatches) and upload a random initial population and generation 0. `ctx` is
 * borrowed and must outlive the sim. */
enum wgf_status wgf_sim_create(wgf_ctx *ctx, const struct wgf_sim_config *cfg, wgf_sim **out, struct wgf_err *err);
void            wgf_sim_free(wgf_sim *sim);
const struct wgf_sim_config *wgf_sim_config_of(const wgf_sim *sim);
struct wgf_sim_policy        wgf_sim_policy_of(const wgf_sim *sim);
int                          wgf_sim_n_params(const wgf_sim *sim);
/* The market path a finsim population runs on (NULL for other workloads). */
const struct wgf_sim_market *wgf_sim_market_of(const wgf_sim *sim);

/* Current population (pop, n_params) f32, host <-> GPU. */
enum wgf_status wgf_sim_params_write(wgf_sim *sim, const float *params, struct wgf_err *err);
enum wgf_status wgf_sim_params_read(wgf_sim *sim, float *params, struct wgf_err *err);
/* One genome (n_params floats) of the current population. After an evolve with elites >= 1,
 * genome 0 is the best of the last evaluated population. */
enum wgf_status wgf_sim_genome_read(wgf_sim *sim, int genome, float *params, struct wgf_err *err);
/* The generation counter the kernels draw their randomness from (starts at 0). */
enum wgf_status wgf_sim_generation_set(wgf_sim *sim, uint32_t gen, struct wgf_err *err);
uint32_t        wgf_sim_generation(const wgf_sim *sim);

/* Evaluate the current population (reset + episode) in one submit; no readback. */
enum wgf_status wgf_sim_evaluate(wgf_sim *sim, struct wgf_err *err);
/* n GA generations (reset + episode + evolve each) in one submit; no readback. Afterwards
 * the fitness buffer holds the last evaluated population's returns. */
enum wgf_status wgf_sim_generations(wgf_sim *sim, int n, struct wgf_err *err);
/* Only the evolve step (on the fitness already on the GPU). */
enum wgf_status wgf_sim_evolve(wgf_sim *sim, struct wgf_err *err);
/* Read the last evaluation's fitness (pop floats); waits for the GPU. */
enum wgf_status wgf_sim_fitness_read(wgf_sim *sim, float *fitness, struct wgf_err *err);
/* Fitness of genomes first .. first + n - 1 from the last evaluation (waits for the GPU), and
 * the whole fitness vector (pop floats) written to the GPU, where evolve ranks it: how an MPI
 * driver gathers the slices and hands every process the same vector. */
enum wgf_status wgf_sim_fitness_read_range(wgf_sim *sim, int first, int n, float *fitness, struct wgf_err *err);
enum wgf_status wgf_sim_fitness_write(wgf_sim *sim, const float *fitness, struct wgf_err *err);
/* Dispatches one generation records (for reports). */
int             wgf_sim_dispatches_per_generation(const wgf_sim *sim);
/* The dispatches of one GA generation (reset, episode chunks, evolve) exactly as
 * wgf_sim_generations records them (the same code emits both), each with its label, grid,
 * workgroup size and cost (bytes, operations), for the advisor (sim_advise.h).
 * episode_steps: the steps one SIMD group of genomes runs per episode (episodes end early;
 * a group runs until its longest ends); 0 or >= max_steps: max_steps (a trained population).
 * out NULL: count only; *n = dispatches (WGF_ERR_LIMIT when more than cap). Nothing on sim
 * changes. */
enum wgf_status wgf_sim_generation_steps(wgf_sim *sim, uint32_t episode_steps, struct wgf_step_info *out, uint32_t cap,
                                         uint32_t *n, struct wgf_err *err);
/* GPU memory of the population: every buffer the sim created (ES trainer's excluded), in
 * bytes, and per genome (that total / population: finsim's shared market path included). */
uint64_t        wgf_sim_gpu_bytes(const wgf_sim *sim);
double          wgf_sim_bytes_per_genome(const wgf_sim *sim);

/* ---- OpenAI-ES trainer (es.c) -------------------------------------------------------------- */
struct wgf_sim_es_config {
    float sigma;  /* perturbation scale                                                */
    float lr;     /* Adam step size                                                    */
    float beta1, beta2, eps;
    float weight_decay; /* L2 coefficient subtracted from the gradient estimate         */
};
struct wgf_sim_es_config wgf_sim_es_config_default(void);
typedef struct wgf_sim_es wgf_sim_es;
/* An ES trainer over `sim` (borrowed; pop must be even: antithetic pairs). theta starts at
 * `theta0` (n_params floats; NULL = the sim's genome 0). */
enum wgf_status wgf_sim_es_create(wgf_sim *sim, const struct wgf_sim_es_config *cfg, const float *theta0,
                                  wgf_sim_es **out, struct wgf_err *err);
void            wgf_sim_es_free(wgf_sim_es *es);
/* n ES generations (sample + reset + episode + centered ranks + Adam update) in one submit. */
enum wgf_status wgf_sim_es_generations(wgf_sim_es *es, int n, struct wgf_err *err);
/* One ES generation in two halves, for a driver that moves the fitness between them (MPI):
 * sample + evaluate (the config's evaluated genomes), then centered ranks + Adam update.
 * Together the same dispatches in the same order as wgf_sim_es_generations(es, 1). */
enum wgf_status wgf_sim_es_sample_evaluate(wgf_sim_es *es, struct wgf_err *err);
enum wgf_status wgf_sim_es_update(wgf_sim_es *es, struct wgf_err *err);
enum wgf_status wgf_sim_es_theta_read(wgf_sim_es *es, float *theta, struct wgf_err *err);

/* ---- benchmark (sim_bench.c) --------------------------------------------------------------- */
struct wgf_sim_bench_result {
    double gen_per_s_noreadback; /* generations per second, submitted back to back        */
    double host_ms_record;       /* of a no-readback run: its recording and submit call (median) */
    double gen_per_s_readback;   /* with a fitness readback after every generation        */
    double eval_per_s;           /* evaluations (reset + episode only) per second          */
    int    gens;                 /* generations timed per run                             */
    int    dispatches_per_gen;
    double checksum;             /* sum of fitness of the first evaluation                 */
    int    ref_checked, ref_matched; /* genomes compared with the C reference              */
    /* episode lengths, each the mean over the `gens` generations of a timed submit (the
     * population evolves within it: on lavapipe at 500 steps the first of 3 generations'
     * groups ran 95 steps, the mean was higher); Rastrigin: 1 */
    double mean_steps;           /* steps per genome (episodes end early at termination)   */
    double group_steps;          /* the mean over SIMD groups (a subgroup's genomes) of the
                                    longest episode in the group: the steps a group runs,
                                    what the advisor's episode_steps means                 */
    double longest_steps;        /* the longest episode of the population (a dispatch whose
                                    workgroups all run at once lasts as long as it): the
                                    advisor's longest_steps                                */
    double ref_tolerance;
    /* GPU timestamps of generations recorded as three passes (reset | episode | evolve),
     * milliseconds, medians of profile_reps generations; -1 where the device has no
     * timestamp-query (or WGF_GPU_PROFILE is off). */
    double gpu_ms_reset, gpu_ms_episode, gpu_ms_evolve;
    /* The split evolve's kernels each in a pass of its own (select, rank, breed),
     * microseconds, medians; -1 where not measured (no timestamps, one-dispatch evolve, no
     * rank pass). Their sum against gpu_ms_evolve is what the dispatch boundaries cost. */
    double gpu_us_evolve_pass[3];
    int    profile_reps;
};
/* Warm up, verify the first evaluation against the C reference (returns WGF_ERR_INTERNAL
 * when it disagrees: no numbers for a wrong kernel), then time `gens` generations `runs`
 * times each way and report medians. */
enum wgf_status wgf_sim_bench_run(wgf_sim *sim, int gens, int runs, struct wgf_sim_bench_result *out,
                                  struct wgf_err *err);

#ifdef __cplusplus
}
#endif
#endif
