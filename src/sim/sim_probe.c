/* wgfuse sim — the advisor's kernel probe (include/wgfuse/sim_advise.h).
 *
 * Why measure: a simulation kernel is latency-bound in a way its operation count does not
 * tell. On the H200, CartPole's thread-per-genome episode costs 1.49 us a step where the
 * dependent-FMA calibration predicts 0.41 (the policy, tanh, sin/cos, the branches: about
 * 3,000 cycles of one warp); the rank scan of the thread evolve 88 ns an element. So the
 * probe times each kernel a generation can run, once, on this device, at the asked
 * population, with GPU timestamps, and the advisor composes every strategy x evolve x
 * episode length from those few numbers (sim_advise.c):
 *
 *   pass A  per-step kernel (CHUNK 1), PROBE_STEPS dispatches in one pass  -> chunk_us each
 *           and PROBE_DEAD more after every episode ended                  -> dead_us each
 *   pass B  one dispatch of PROBE_K steps, one of PROBE_N (a CPU adapter:   -> step_us: the
 *           the asked length up to PROBE_TAIL), each alone                     difference over the
 *                                                                              steps between
 *   pass C  fused-wide at PROBE_K and PROBE_N steps (one dispatch each)     -> wide_us + r x wide_step_us
 *           and, on a GPU, at PROBE_TAIL steps: the slope past PROBE_N      -> wide_tail_us
 *   pass D  reset; each evolve variant (split, thread, wide) in a pass of its own
 *   host    a generation of PROBE_STEPS and of PROBE_LONG per-step dispatches, untimed:
 *           the wall clock of its recording and submit call, per dispatch (host_us: the
 *           slope), and of record + submit + wait less that and its GPU time (submit_us; a
 *           CPU adapter: an empty submit's wall clock)
 *
 * Pass A's PROBE_STEPS is short enough that every SIMD group still runs (a random CartPole
 * policy lasts ~10 steps); B and C read back the steps their dispatch ran
 * (wgf__sim_episode_lengths: the longest on a GPU, the groups' mean on a CPU adapter, as the
 * composition counts them) and take the slope over those. Each time is the least of PROBE_REPS:
 * what disturbs a timing only adds to it (a CPU adapter's thread wake-ups add milliseconds to
 * a pass of 0.1 ms), and the differences the slopes take would amplify a median's spread. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"
#include "wgfuse/sim_advise.h"

#define PROBE_STEPS 8  /* pass A: per-step dispatches, every SIMD group still running */
#define PROBE_K     8  /* passes B, C: one dispatch of PROBE_K steps ...                */
#define PROBE_N     32 /* ... and one of PROBE_N                                         */
#define PROBE_LONG  128 /* host: a generation of PROBE_LONG per-step dispatches          */
#define PROBE_TAIL  256 /* pass C on a GPU: fused-wide's dispatch at PROBE_TAIL steps too  */
#define PROBE_REPS  7
#define PROBE_DEAD  16 /* dispatches after every episode ended, in one pass                 */


static double least(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++) m = v[i] < m ? v[i] : m;
    return m;
}

static enum wgf_status make(wgf_ctx *ctx, const struct wgf_sim_config *base, enum wgf_sim_strategy st, int chunk,
                            int steps, enum wgf_sim_evolve ev, wgf_sim **out, struct wgf_err *err)
{
    struct wgf_sim_config c = *base;
    c.strategy = st, c.chunk = chunk, c.max_steps = steps, c.evolve = ev;
    return wgf_sim_create(ctx, &c, out, err);
}

/* What one recording holds: the reset, the first n_chunks episode dispatches, the evolve. */
struct probe_rec {
    int  reset; /* reset dispatches (0, 1; the pass cost's 2) */
    bool evolve;
    int  n_chunks;
};

/* Record `what` into r; with `passes` each part in a compute pass of its own (for a timer). */
static enum wgf_status record(wgf_sim *sim, wgf_recorder *r, struct probe_rec what, bool passes, struct wgf_err *err)
{
    enum wgf_status s = WGF_OK;
    uint32_t nx = (uint32_t)((sim->cfg.eval_count + WGF_SIM_WG - 1) / WGF_SIM_WG);
    if (what.reset && sim->reset) {
        for (int k = 0; k < what.reset && s == WGF_OK; k++)
            s = wgf_recorder_dispatch(r, sim->reset, sim->reset_bg[sim->parity], nx, 1, 1);
        if (s == WGF_OK && passes) s = wgf_recorder_end_pass(r);
    }
    for (int c = 0; c < what.n_chunks && s == WGF_OK; c++)
        s = wgf_recorder_dispatch(r, sim->step, sim->step_bg[sim->parity][c & 1], sim->step_groups, sim->step_groups_y, 1);
    if (s == WGF_OK && passes && what.n_chunks) s = wgf_recorder_end_pass(r);
    if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "probe");
    if (what.evolve) {
        if ((s = wgf__sim_record_evolve(sim, r, err)) != WGF_OK) return s;
        if (passes && (s = wgf_recorder_end_pass(r)) != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "probe");
    }
    if (what.n_chunks) sim->state_parity = what.n_chunks & 1;
    return WGF_OK;
}

static enum wgf_status wall(wgf_sim *sim, struct probe_rec what, double *ns, double *rec_ns, struct wgf_err *err);

/* A CPU adapter (lavapipe): the device is the host's own threads, and what a generation costs
 * is wall clock, which its timestamps undercount: with one device thread, per-step dispatches
 * measured ~350 us each in sim bench's generations against ~205 timestamped, those after the
 * episodes ended ~49 against ~30. So each part is timed as the wall clock it adds to a submit:
 * the submit of the parts before it, with it and without (the least of PROBE_REPS each). */
static enum wgf_status wall_parts(wgf_sim *sim, struct probe_rec what, double ns[3], struct wgf_err *err)
{
    struct probe_rec upto[4] = {{0, false, 0}, {what.reset, false, 0}, {what.reset, false, what.n_chunks}, what};
    double           w[4] = {0, 0, 0, 0}, rec = 0;
    enum wgf_status  s    = WGF_OK;
    for (int i = 0; i < 4 && s == WGF_OK; i++) s = wall(sim, upto[i], &w[i], &rec, err);
    bool has[3] = {what.reset && sim->reset, what.n_chunks > 0, what.evolve};
    for (int i = 0; i < 3; i++) ns[i] = has[i] ? fmax(0, w[i + 1] - w[i]) : 0;
    return s;
}

static bool cpu_adapter(const wgf_sim *sim)
{
    return strcmp(wgf_ctx_adapter(sim->ctx)->type, "cpu") == 0;
}

/* GPU ns of each part of `what` (ns[0] reset, ns[1] the chunks, ns[2] the evolve; 0 where
 * absent), the least of PROBE_REPS recordings, less `pass` (pass_cost: each part is timed in
 * a pass of its own); a CPU adapter: wall_parts. WGF_ERR_UNSUPPORTED without timestamp-query. */
static enum wgf_status gpu_parts(wgf_sim *sim, struct probe_rec what, double pass, double ns[3], struct wgf_err *err)
{
    if (cpu_adapter(sim)) return wall_parts(sim, what, ns, err);
    double v[3][PROBE_REPS];
    for (int rep = 0; rep < PROBE_REPS; rep++) {
        wgf_timer    *t = NULL;
        wgf_recorder *r = NULL;
        enum wgf_status s = wgf_timer_create(sim->ctx, "sim.probe", 3, &t);
        if (s == WGF_ERR_UNSUPPORTED) return wgf_fail(err, s, "probe: no GPU timestamps on this device");
        if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "probe timer");
        if ((s = wgf_recorder_begin(sim->ctx, "sim.probe", t, &r)) != WGF_OK) {
            wgf_timer_free(t);
            return wgf__sim_gpu_fail(sim, err, s, "probe");
        }
        s = record(sim, r, what, true, err);
        if (s != WGF_OK) {
            wgf_recorder_abandon(r);
            wgf_timer_free(t);
            return s;
        }
        double   got[3] = {0, 0, 0};
        uint32_t n      = 0;
        if ((s = wgf_recorder_submit(r)) == WGF_OK) s = wgf_timer_read(sim->ctx, t, got, 3, &n);
        wgf_timer_free(t);
        if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "probe");
        uint32_t want = (uint32_t)((what.reset && sim->reset) + !!what.n_chunks + what.evolve);
        if (n != want) return wgf_fail(err, WGF_ERR_INTERNAL, "probe: %u timed passes, %u recorded", n, want);
        uint32_t k = 0;
        v[0][rep]  = what.reset && sim->reset ? got[k++] : 0;
        v[1][rep]  = what.n_chunks ? got[k++] : 0;
        v[2][rep]  = what.evolve ? got[k++] : 0;
    }
    for (int i = 0; i < 3; i++) {
        double t = least(v[i], PROBE_REPS);
        ns[i]    = t > 0 ? fmax(0, t - pass) : 0;
    }
    return WGF_OK;
}

/* A timed pass's own cost, which a generation's one pass pays once but the probe's passes
 * each pay: the reset dispatch alone in a pass (T1) and twice in one (T2), T1 - (T2 - T1);
 * the least of PROBE_REPS each (0 without a reset kernel). On the H200 the probe's passes
 * summed to ~60 us for a generation of CartPole fused-wide/split at 10 steps that sim bench
 * ran at ~48 us of GPU time in a submit of 30 generations. */
static enum wgf_status pass_cost(wgf_sim *sim, double *ns, struct wgf_err *err)
{
    double          t1[3] = {0, 0, 0}, t2[3] = {0, 0, 0};
    struct probe_rec one = {1, false, 0}, two = {2, false, 0};
    enum wgf_status s    = sim->reset ? gpu_parts(sim, one, 0, t1, err) : WGF_OK;
    if (s == WGF_OK && sim->reset) s = gpu_parts(sim, two, 0, t2, err);
    *ns = s == WGF_OK ? fmin(t1[0], fmax(0, 2 * t1[0] - t2[0])) : 0;
    return s;
}

/* Host wall-clock ns of `what` recorded into one pass (as a generation is), submitted and
 * waited for (*ns), and of its recording and submit call alone (*rec_ns); each the least of
 * PROBE_REPS. */
static enum wgf_status wall(wgf_sim *sim, struct probe_rec what, double *ns, double *rec_ns, struct wgf_err *err)
{
    double v[PROBE_REPS], vr[PROBE_REPS];
    for (int rep = 0; rep < PROBE_REPS; rep++) {
        wgf_recorder   *r  = NULL;
        uint64_t        t0 = wgf_now_ns();
        enum wgf_status s  = wgf_recorder_begin(sim->ctx, "sim.probe", NULL, &r);
        if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "probe");
        if ((s = record(sim, r, what, false, err)) != WGF_OK) {
            wgf_recorder_abandon(r);
            return s;
        }
        s       = wgf_recorder_submit(r);
        vr[rep] = (double)(wgf_now_ns() - t0);
        if (s == WGF_OK) s = wgf_ctx_wait(sim->ctx);
        if (s != WGF_OK) return wgf__sim_gpu_fail(sim, err, s, "probe");
        v[rep] = (double)(wgf_now_ns() - t0);
    }
    *ns     = least(v, PROBE_REPS);
    *rec_ns = least(vr, PROBE_REPS);
    return WGF_OK;
}

/* steps the chunks of the last recording ran, as the composition counts them: the longest
 * episode where the population is resident (a dispatch lasts as long as its longest
 * workgroup), else the mean over SIMD groups of their longest (each group pays its own) */
static enum wgf_status ran(wgf_sim *sim, bool resident, double *steps, struct wgf_err *err)
{
    double mean, group, longest;
    enum wgf_status s = wgf__sim_episode_lengths(sim, &mean, &group, &longest, err);
    *steps = resident ? longest : group;
    return s;
}

/* One episode dispatch of `steps` steps (strategy st, chunks of PROBE_K) alone in a pass:
 * its GPU time (*us) and the steps it ran as the composition counts them (*r). */
static enum wgf_status one_length(wgf_ctx *ctx, const struct wgf_sim_config *base, bool resident, double pass,
                                  enum wgf_sim_strategy st, int steps, double *us, double *r, struct wgf_err *err)
{
    wgf_sim        *b     = NULL;
    double          ns[3] = {0, 0, 0};
    struct probe_rec ep   = {1, false, 1};
    enum wgf_status s     = make(ctx, base, st, PROBE_K, steps, WGF_SIM_EVOLVE_SPLIT, &b, err);
    if (s == WGF_OK) s = gpu_parts(b, ep, pass, ns, err);
    if (s == WGF_OK) s = ran(b, resident, r, err);
    *us = ns[1] * 1e-3;
    wgf_sim_free(b);
    return s;
}

/* One episode dispatch alone in a pass, of PROBE_K steps (strategy st_k: chunked's first
 * chunk or fused-wide at PROBE_K) and of n steps (st_n): the time a further step adds
 * (*per, us) and what is left at zero steps (*fixed); *t_n, *r_n: the n-step dispatch's time
 * and steps run (NULL: not wanted). */
static enum wgf_status two_lengths(wgf_ctx *ctx, const struct wgf_sim_config *base, bool resident, double pass,
                                   enum wgf_sim_strategy st_k, enum wgf_sim_strategy st_n, int n, double *per,
                                   double *fixed, double *t_n, double *r_n, struct wgf_err *err)
{
    double          t[2] = {0, 0}, r[2] = {0, 0};
    enum wgf_status s    = WGF_OK;
    for (int i = 0; i < 2 && s == WGF_OK; i++) {
        /* chunked: an episode of n in chunks of PROBE_K, only the first recorded */
        int steps = i == 0 && st_k == WGF_SIM_FUSED_WIDE ? PROBE_K : n;
        s         = one_length(ctx, base, resident, pass, i ? st_n : st_k, steps, &t[i], &r[i], err);
    }
    if (s != WGF_OK) return s;
    *per   = r[1] > r[0] ? fmax(0, (t[1] - t[0]) / (r[1] - r[0])) : 0;
    *fixed = fmax(0, t[0] - r[0] * *per);
    if (t_n) *t_n = t[1];
    if (r_n) *r_n = r[1];
    return WGF_OK;
}

enum wgf_status wgf_sim_probe_run(wgf_ctx *ctx, const struct wgf_sim_config *base, struct wgf_sim_probe *out,
                                  struct wgf_err *err)
{
    memset(out, 0, sizeof *out);
    const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(base->workload);
    if (!wi) return wgf_fail(err, WGF_ERR_ARG, "probe: unknown workload");
    uint64_t t0  = wgf_now_ns();
    bool     seq = wi->sequential;
    /* a GPU runs the population's workgroups at once; a CPU adapter runs them in waves over
     * its threads (workgroup after workgroup) */
    out->resident = strcmp(wgf_ctx_adapter(ctx)->type, "cpu") != 0;

    wgf_sim        *a = NULL, *b = NULL;
    enum wgf_status s = make(ctx, base, seq ? WGF_SIM_PER_STEP : WGF_SIM_FUSED, 1, PROBE_STEPS, WGF_SIM_EVOLVE_SPLIT,
                             &a, err);
    double ns[3] = {0, 0, 0}, pass = 0, w0 = 0, r0 = 0;
    struct probe_rec all = {1, true, a ? a->n_chunks : 0};
    /* untimed first: on lavapipe the first generations of a new sim ran its reset up to 30x
     * slower (1.47 ms against 0.04) for all seven repetitions of the first timing */
    if (s == WGF_OK) s = wall(a, all, &w0, &r0, err);
    /* taken off on a GPU only: a CPU adapter's pass costs are its threads' wake-ups, which
     * the least of the repetitions already leaves out */
    if (s == WGF_OK) s = pass_cost(a, &pass, err);
    out->pass_us = pass * 1e-3;
    if (!out->resident) pass = 0;
    /* a CPU adapter's submit cost: an empty submit's wall clock (its parts are wall clock) */
    double w_empty = 0, r_empty = 0;
    struct probe_rec none = {0, false, 0};
    if (s == WGF_OK && !out->resident) s = wall(a, none, &w_empty, &r_empty, err);
    /* A: reset | per-step chunks | split evolve */
    if (s == WGF_OK) s = gpu_parts(a, all, pass, ns, err);
    if (s == WGF_OK) {
        out->reset_us          = ns[0] * 1e-3;
        out->chunk_us          = ns[1] * 1e-3 / all.n_chunks;
        out->chunk_first_us    = out->chunk_us;
        out->evolve_us[WGF_SIM_EVOLVE_SPLIT] = ns[2] * 1e-3;
    }
    /* A': PROBE_DEAD more per-step dispatches after A's last: every episode has reached
     * PROBE_STEPS, each genome only copies its state. On lavapipe such a dispatch costs a
     * sixth to a tenth of a live one (chunk_us - step_us, what a GPU's composition uses) */
    double c8      = ns[1]; /* A's PROBE_STEPS per-step dispatches, every lane of every group alive */
    double g_short = ns[0] + ns[1] + ns[2]; /* A's generation, before A' reuses ns */
    struct probe_rec dead = {0, false, PROBE_DEAD};
    if (s == WGF_OK && seq) s = gpu_parts(a, dead, pass, ns, err);
    if (s == WGF_OK && seq) out->dead_us = ns[1] * 1e-3 / PROBE_DEAD;
    /* A'' on a CPU adapter: a live per-step dispatch once the lanes of a SIMD group diverge
     * (some episodes ended: the group runs both sides of its branches). An episode of
     * PROBE_LONG per-step dispatches against A's first PROBE_STEPS: the dead share taken off,
     * the rest over the group-steps run between. chunk_us becomes this one. On lavapipe (one
     * core, LP_NUM_THREADS=0, blocking waits) the live group-step that sim bench's per-step
     * generations imply costs ~205 us at 10 steps, ~240 at 100, ~190 at 500; this probe gives
     * 186-205 and A's first steps 188-203. An episode of PROBE_N steps measured the divergent
     * phase alone (352 us with the host polling on the other core, per-step at 500 steps then
     * +27-39%); one of the asked length with the probe's random policies gave what this one
     * does at 100 steps (bench/RESULTS.md, the advisor's seventh cut). */
    if (s == WGF_OK && seq && !out->resident) {
        wgf_sim        *c     = NULL;
        double          nc[3] = {0, 0, 0}, T = 0;
        struct probe_rec ep   = {1, false, PROBE_LONG};
        s = make(ctx, base, WGF_SIM_PER_STEP, 1, PROBE_LONG, WGF_SIM_EVOLVE_SPLIT, &c, err);
        if (s == WGF_OK) s = gpu_parts(c, ep, pass, nc, err);
        if (s == WGF_OK) s = ran(c, false, &T, err);
        wgf_sim_free(c);
        double dead_ns = out->dead_us * 1e3, rest = nc[1] - c8 - (PROBE_LONG - PROBE_STEPS) * dead_ns;
        if (s == WGF_OK && T > PROBE_STEPS + 1 && rest > 0)
            out->chunk_us = (dead_ns + rest / (T - PROBE_STEPS)) * 1e-3;
    }
    /* host: a generation of PROBE_STEPS and of PROBE_LONG per-step dispatches, one pass each */
    double w_short = 0, r_short = 0;
    int    d_short = all.n_chunks + (a && a->reset) + (a ? a->evolve_dispatches : 0);
    if (s == WGF_OK) s = wall(a, all, &w_short, &r_short, err);
    wgf_sim_free(a);
    a = NULL;
    if (s == WGF_OK && seq) {
        s = make(ctx, base, WGF_SIM_PER_STEP, 1, PROBE_LONG, WGF_SIM_EVOLVE_SPLIT, &a, err);
        struct probe_rec lg = {1, true, a ? a->n_chunks : 0};
        double           w_long = 0, r_long = 0;
        if (s == WGF_OK) s = gpu_parts(a, lg, pass, ns, err);
        if (s == WGF_OK) s = wall(a, lg, &w_long, &r_long, err);
        if (s == WGF_OK) {
            /* the recording's own clock, not wall less GPU time: on the H200 that difference
             * over 32 more dispatches gave 1.6-3.3 us a dispatch from one call to the next,
             * and over 128 more 3.9, where sim bench's generations of 104 and 504 dispatches
             * measured 1.5 (wall less their GPU profile) */
            int    d_long  = lg.n_chunks + (a->reset != NULL) + a->evolve_dispatches;
            double g_long  = ns[0] + ns[1] + ns[2];
            out->host_us   = fmax(0, (r_long - r_short) / (d_long - d_short)) * 1e-3;
            out->submit_us = fmax(0, (w_short - g_short) * 1e-3 - d_short * out->host_us);
            /* a CPU adapter: the parts are wall clock increments over an empty submit, which
             * is what is left (w_short - g_short gave 0 to 4.7 ms over five probes there) */
            if (!out->resident) out->submit_us = w_empty * 1e-3;
            out->record_short_us = r_short * 1e-3, out->record_long_us = r_long * 1e-3;
            out->wall_short_us = w_short * 1e-3, out->wall_long_us = w_long * 1e-3;
            out->gpu_short_us = g_short * 1e-3, out->gpu_long_us = g_long * 1e-3;
        }
        wgf_sim_free(a);
        a = NULL;
    } else if (s == WGF_OK) { /* no episode steps: the host cost per dispatch from this one generation */
        out->host_us = fmax(0, (w_short - g_short) / d_short) * 1e-3;
    }
    /* B: one dispatch of PROBE_K steps (chunked, its first chunk) and one of PROBE_N
     * (fused), each alone in a pass: what the extra steps cost, the pass's own cost cancelling;
     * C: fused-wide's one dispatch at the two lengths the same way: wide_us + r wide_step_us */
    /* on a CPU adapter the fused dispatch runs the asked episode length (up to PROBE_TAIL):
     * its random policies' SIMD groups run 8 -> 62 steps at 500 against 8 -> 27 at PROBE_N,
     * and the slope's spread over three runs each on lavapipe shrank from 15-18 to 15.6-15.9 us */
    int    n_fused = out->resident ? PROBE_N : (int)fmax(PROBE_N, fmin(base->max_steps > 0 ? base->max_steps : wi->max_steps, PROBE_TAIL));
    double fix     = 0;
    if (s == WGF_OK && seq)
        s = two_lengths(ctx, base, out->resident, pass, WGF_SIM_CHUNKED, WGF_SIM_FUSED, n_fused, &out->step_us, &fix,
                        NULL, NULL, err);
    double t_n = 0, r_n = 0;
    if (s == WGF_OK && seq)
        s = two_lengths(ctx, base, out->resident, pass, WGF_SIM_FUSED_WIDE, WGF_SIM_FUSED_WIDE, PROBE_N,
                        &out->wide_step_us, &out->wide_us, &t_n, &r_n, err);
    /* C on a GPU: past the first few dozen steps only the few groups with a long episode still
     * run, and each of their steps costs less than one among all the groups (H200, CartPole at
     * 4,096: 0.53 us a step over the first 32, 0.41 from 100 to 500 in sim bench's profile), so
     * a long episode is timed too. A CPU adapter's groups each pay their own steps: no knee. */
    out->wide_knee = 0, out->wide_tail_us = out->wide_step_us;
    if (s == WGF_OK && seq && out->resident) {
        double t_t = 0, r_t = 0;
        s = one_length(ctx, base, out->resident, pass, WGF_SIM_FUSED_WIDE, PROBE_TAIL, &t_t, &r_t, err);
        if (s == WGF_OK && r_t > r_n + 8) { /* some episode ran well past PROBE_N: a slope */
            out->wide_knee    = r_n;
            out->wide_tail_us = fmax(0, (t_t - t_n) / (r_t - r_n));
        }
    }
    /* D: the one-dispatch evolve kernels */
    const enum wgf_sim_evolve one[2] = {WGF_SIM_EVOLVE_THREAD, WGF_SIM_EVOLVE_WIDE};
    for (int i = 0; i < 2 && s == WGF_OK; i++) {
        s = make(ctx, base, seq ? WGF_SIM_PER_STEP : WGF_SIM_FUSED, 1, PROBE_STEPS, one[i], &b, err);
        if (s == WGF_ERR_UNSUPPORTED || s == WGF_ERR_ARG) { /* this variant cannot run here */
            out->evolve_us[one[i]] = -1;
            s                      = WGF_OK;
            continue;
        }
        struct probe_rec ev = {0, true, 0};
        if (s == WGF_OK) s = gpu_parts(b, ev, pass, ns, err);
        if (s == WGF_OK) out->evolve_us[one[i]] = ns[2] * 1e-3;
        wgf_sim_free(b);
        b = NULL;
    }
    /* a rastrigin-like workload: its one evaluation dispatch is "chunk_us", no steps */
    out->seconds = (double)(wgf_now_ns() - t0) * 1e-9;
    out->ok      = s == WGF_OK;
    return s;
}
