/* wgfuse sim internals, shared by the files of src/sim only. */
#ifndef WGF_SIM_INTERNAL_H
#define WGF_SIM_INTERNAL_H

#include "kernels/ids.h"
#include "wgfuse/gpu.h"
#include "wgfuse/sim.h"

#define WGF_SIM_WG           64 /* threads per workgroup, every sim kernel                 */
#define WGF_SIM_STRIDE       16 /* f32 words per genome state record, classic control      */
#define WGF_SIM_FIN_STRIDE   64 /* finsim: 16 exposures + 32 feedback + log equity + t, done */
#define WGF_SIM_PRELUDE_MAX  8192
#define WGF_SIM_TOP_WG       256 /* evolve_select / evolve_rank: genomes per block            */

/* fused-wide: lanes per genome = the smallest power of two >= the hidden width (<= WG). */
static inline int wgf__sim_lanes(int hidden)
{
    int l = 1;
    while (l < hidden && l < WGF_SIM_WG) l <<= 1;
    return l;
}

/* ---- per-environment C references (env_*.c) ---------------------------------------------- */
void  wgf__cartpole_reset(uint32_t seed, uint32_t gen, uint32_t genome, float s[4]);
void  wgf__cartpole_obs(const float s[4], float *obs);
float wgf__cartpole_step(float s[4], int action, bool *terminated);
void  wgf__acrobot_reset(uint32_t seed, uint32_t gen, uint32_t genome, float s[4]);
void  wgf__acrobot_obs(const float s[4], float *obs);
float wgf__acrobot_step(float s[4], int action, bool *terminated);
void  wgf__mountaincar_reset(uint32_t seed, uint32_t gen, uint32_t genome, float s[4]);
void  wgf__mountaincar_obs(const float s[4], float *obs);
float wgf__mountaincar_step(float s[4], int action, bool *terminated);

/* tanh as every sim kernel computes it: the argument clamped to [-15, 15] first (some GPU
 * tanh implementations return NaN for large |x|; tanh(15) rounds to 1 in f32 anyway). */
float wgf__sim_tanh(float x);

/* policy_load + policy_forward for sim_policy.wgsl, straight-line for this shape (policy.c);
 * malloc'd, NULL when out of memory. wgf__sim_compose puts it where WGF__SIM_POLICY_GEN is. */
char *wgf__sim_policy_wgsl(const struct wgf_sim_policy *p);

/* The kernel that holds a workload's environment functions (WGF_KERNEL_COUNT: none). */
enum wgf_kernel wgf__sim_env_kernel(enum wgf_sim_workload w);

/* ---- the GPU population (population.c builds it; strategies.c, evolve.c, es.c, sim_bench.c
 * record into it) ---------------------------------------------------------------------- */
struct wgf_sim {
    wgf_ctx              *ctx;          /* borrowed                                         */
    struct wgf_sim_config cfg;          /* resolved: max_steps, hidden, n_feedback filled   */
    struct wgf_sim_policy pol;
    int                   n_params;     /* per genome                                       */
    int                   stride;       /* f32 words per state record                       */
    int                   n_chunks;     /* episode dispatches per evaluation                */
    uint32_t              step_groups;  /* workgroups of one episode dispatch (x)           */
    uint32_t              step_groups_y; /* ... and y (fused-wide past 65,535 workgroups)   */
    uint32_t              gen;          /* host mirror of ctl[parity][0]                    */
    int                   parity;       /* params[parity] / ctl[parity] hold the population */
    int                   state_parity; /* state_buf[] the last episode dispatch wrote      */
    struct wgf_sim_market market;       /* finsim only                                      */
    uint64_t              gpu_bytes;    /* every buffer of the sim (wgf__sim_buffer)        */

    wgf_buffer *params[2];     /* (pop, n_params) f32; ping-pong across evolve            */
    wgf_buffer *fitness;       /* (pop) f32, the last evaluation's returns                */
    wgf_buffer *state_buf[2];  /* (pop, stride) f32; ping-pong across episode dispatches  */
    wgf_buffer *ctl[2];        /* (4) u32: generation, seed, 0, 0; ping-pong with params  */
    wgf_buffer *ga;            /* uniform (8) 32 B: elites, tournament, rate, sigma       */
    wgf_buffer *sel;           /* evolve: (pop) u32x4 parents A, B + RNG stream per child */
    wgf_buffer *cand_idx;      /* evolve: (n_blocks, cand_per_block) u32 block-best genomes */
    wgf_buffer *cand_fit;      /* evolve: their fitness, f32                              */
    wgf_buffer *elite;         /* evolve: (elites) u32 genome of global rank r            */
    wgf_buffer *mkt_returns;   /* finsim (L, 16) f32                                      */
    wgf_buffer *mkt_signals;   /* finsim (L, 36) f32                                      */

    wgf_pipeline   *reset;           /* episode kernel, MODE 0                            */
    wgf_pipeline   *step;            /* episode kernel, MODE 1, CHUNK steps per dispatch  */
    wgf_pipeline   *evolve;          /* one-dispatch evolve (cfg.evolve THREAD or WIDE)    */
    wgf_pipeline   *evolve_pass[3];  /* split evolve: select, rank, breed (cfg.evolve SPLIT) */
    wgf_bind_group *reset_bg[2];     /* [params parity]                                   */
    wgf_bind_group *step_bg[2][2];   /* [params parity][state_buf index read]             */
    wgf_bind_group *evolve_bg[2];    /* legacy evolve [params parity]                     */
    wgf_bind_group *select_bg[2];    /* [params parity]                                   */
    wgf_bind_group *rank_bg;
    wgf_bind_group *breed_bg[2];     /* [params parity]                                   */
    int             evolve_blocks;   /* split evolve: ceil(pop / WGF_SIM_TOP_WG)          */
    int             evolve_cand;     /* candidates per block: min(elites, TOP_WG)         */
    int             evolve_lpc;      /* evolve_rank: lanes per candidate                  */
    int             evolve_dispatches; /* per generation: 1 (legacy), 2 or 3 (split)       */
};

/* ---- GPU objects (sim_gpu.c) ------------------------------------------------------------- */
/* A runtime call on sim->ctx failed: "sim: <what>: <the context's message>" into *err
 * (wgf_ctx_err), naming the generation when the device was lost. */
enum wgf_status wgf__sim_gpu_fail(wgf_sim *sim, struct wgf_err *err, enum wgf_status s, const char *what);
/* A labelled buffer / bind group of the sim; a failure names it (wgf__sim_gpu_fail). */
enum wgf_status wgf__sim_buffer(wgf_sim *sim, const char *label, uint64_t size, unsigned usage, wgf_buffer **out,
                                struct wgf_err *err);
enum wgf_status wgf__sim_bind_group(wgf_sim *sim, wgf_pipeline *p, wgf_buffer *const *bufs, int n, wgf_bind_group **out,
                                    struct wgf_err *err);

/* ---- kernel preludes (prelude.c) --------------------------------------------------------- */
/* Render the const prelude shared by a workload's kernels into buf. */
void wgf__sim_prelude(const wgf_sim *sim, char *buf, size_t cap);
/* Prelude consts followed by up to 4 run-time fragments (kernels without an entry point, or
 * WGF__SIM_POLICY_GEN), malloc'd (caller frees); NULL on error. */
#define WGF__SIM_POLICY_GEN WGF_KERNEL_COUNT /* sim_policy.wgsl generated for the shape   */
char *wgf__sim_compose(const wgf_sim *sim, const enum wgf_kernel *fragments, int n, struct wgf_err *err);

/* ---- one generation's dispatches: recorded, or listed with their costs ------------------ */
/* The episode and evolve code emit every dispatch through this, so what the recorder gets and
 * what the advisor predicts (wgf_sim_generation_steps) are the same list, never two. */
struct wgf__sim_emit {
    wgf_recorder         *r;             /* record into r; NULL: list into steps          */
    struct wgf_step_info *steps;         /* (cap) the listing; NULL: count only           */
    uint32_t              cap, n;        /* n: dispatches emitted                          */
    uint32_t              episode_steps; /* listing: steps one SIMD group runs per episode */
};
enum wgf_status wgf__sim_emit(struct wgf__sim_emit *e, wgf_pipeline *p, wgf_bind_group *bg, uint32_t x, uint32_t y,
                              uint32_t wg_size, uint64_t barriers, uint64_t chain, struct wgf_step_cost cost);
/* The f32 operations of one policy forward + environment step for one genome (the advisor's
 * FLOPs; transcendental functions counted as 10). */
uint64_t        wgf__sim_step_flops(const wgf_sim *sim);
/* fused-wide: the operations of one lane's share of a step (the chain one invocation runs). */
uint64_t        wgf__sim_lane_flops(const wgf_sim *sim);

/* ---- the episode (strategies.c) and the evolve step (evolve.c) -------------------------- */
/* Reset and episode pipelines + bind groups for cfg.strategy. */
enum wgf_status wgf__sim_episode_init(wgf_sim *sim, struct wgf_err *err);
/* Record one generation's evaluation (reset + episode dispatches) / its evolve dispatches. */
enum wgf_status wgf__sim_record_evaluate(wgf_sim *sim, wgf_recorder *r, struct wgf_err *err);
enum wgf_status wgf__sim_record_evolve(wgf_sim *sim, wgf_recorder *r, struct wgf_err *err);
/* The same through an emitter (listing: nothing on sim changes). */
enum wgf_status wgf__sim_emit_evaluate(wgf_sim *sim, struct wgf__sim_emit *e, struct wgf_err *err);
enum wgf_status wgf__sim_emit_evolve(wgf_sim *sim, struct wgf__sim_emit *e, bool pass_each, struct wgf_err *err);
/* The same evolve with the compute pass ended after each dispatch but the last (the split's
 * select | rank | breed each in its own pass, for a timer; the caller ends the last one). */
enum wgf_status wgf__sim_record_evolve_passes(wgf_sim *sim, wgf_recorder *r, struct wgf_err *err);
/* sim_bench.c: the median of v[0..n) (sorts v). */
double          wgf__sim_median(double *v, int n);
/* sim_bench.c: the steps of the last evaluation read back from the state records: mean per
 * genome, mean over SIMD groups of their longest (fused-wide: over workgroups), the longest;
 * all 1 for a workload without episodes. */
enum wgf_status wgf__sim_episode_lengths(wgf_sim *sim, double *mean, double *group, double *longest,
                                        struct wgf_err *err);
/* evolve.c: pipelines + bind groups + the GA uniform. */
enum wgf_status wgf__sim_evolve_init(wgf_sim *sim, struct wgf_err *err);

#endif
