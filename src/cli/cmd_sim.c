/* wgfuse sim — train, eval, trace and bench the fused sequential simulation, and the sim
 * section of `wgfuse report`. Only this file prints; src/sim/ does the work. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/sim_mpi.h"
#include "util/file.h"
#include "util/hash.h"
#include "wgfuse/sim.h"

#define METRIC_TEXT                                                                                        \
    "metric: a generation = evaluate (reset + every genome's episode) + evolve (GA or ES update) over the\n" \
    "        whole population, on the GPU. gen/s is reported twice, labelled: without readback (generations\n" \
    "        submitted back to back, one wait at the end) and with readback (the fitness of every generation\n" \
    "        read to the host, as a training loop that prints does). docs/sim.md has the details.\n"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: wgfuse sim train ENV [--algo ga|es] [--pop N] [--gens MAX] [--seed N] [--strategy S]\n"
            "                 [--steps L] [--hidden H] [--feedback F] [--target R] [--eval-episodes N] [--out FILE]\n"
            "                 [--elites N] [--tournament N] [--mut-rate P] [--mut-sigma S] [--es-sigma S] [--lr A]\n"
            "                 [--autotune]\n"
            "       wgfuse sim eval FILE [--episodes N] [--seed N] [--strategy S]\n"
            "       wgfuse sim trace ENV --actions A,A,... [--state S,S,...] [--seed N]\n"
            "       wgfuse sim market [--steps L] [--seed N] --out FILE   (finsim's path, for bench/sim_peers.py)\n"
            "       wgfuse sim bench [--workload W,...] [--strategy S,...] [--pop N,...] [--steps L,...]\n"
            "                 [--gens N] [--runs N] [--hidden H] [--feedback F] [--dim D] [--evolve E] [--json] [--gather]\n"
            "                 [--autotune]\n"
            "       mpirun -n R wgfuse sim train|bench ... [--rank-adapters A,B,..] [--mpi-timeout S]\n"
            "\n"
            "ENV: cartpole (CartPole-v1), acrobot (Acrobot-v1), mountaincar (MountainCar-v0); bench also\n"
            "     rastrigin (population x dimension 2000) and finsim (16 assets, 8-16-6 recurrent policy).\n"
            "E:   GA evolve kernels (same results): split (select | rank | breed passes), thread (evolve.wgsl,\n"
            "     one dispatch, a thread per genome), wide (evolve_wide.wgsl, a workgroup per genome), auto\n"
            "     (default: split on a GPU; thread, or wide from 512 parameters, on a CPU adapter).\n"
            "S:   fused (one dispatch per episode), chunked:K (K steps per dispatch), per-step, fused-wide\n"
            "     (a genome over several threads: classic control one per hidden unit, finsim one per asset),\n"
            "     auto (train, bench: what `wgfuse advise --sim` predicts fastest here, evolve kernels too\n"
            "     unless --evolve is given; --autotune times the two predicted fastest once and takes the\n"
            "     faster; one stderr line says what it chose and why).\n"
            "H:   hidden width (defaults: CartPole 8, Acrobot 16, MountainCar 8); F: outputs fed back as\n"
            "     inputs (a recurrent policy; default 0).\n"
            "train stops when the best genome's mean return over --eval-episodes (100) fresh episodes\n"
            "reaches --target (Gymnasium's threshold: CartPole 475, Acrobot -100, MountainCar -110),\n"
            "then writes the policy to --out (default ENV.policy) atomically.\n"
            "MPI: under mpirun each rank evaluates its slice of the population on its own adapter (the\n"
            "     local rank's among the GPUs, or --rank-adapters by local rank; --adapter: all the same),\n"
            "     the fitness is gathered every generation and every rank evolves the same population:\n"
            "     the result (\"population hash\") is the one-process run's. bench --gather times that path\n"
            "     with one process too. --mpi-timeout (300 s): a rank waiting longer for the others exits.\n"
            "trace steps the plain-C environment from --state (default: the seeded reset state) and\n"
            "prints t,action,reward,terminated and the state as CSV; it stops at termination.\n"
            "\n" METRIC_TEXT);
}

/* ---- small helpers ------------------------------------------------------------------------ */

static int open_ctx(wgf_ctx **ctx)
{
    struct wgf_gpu_options o = wgf_cli_gpu_options();
    struct wgf_err err = {0};
    if (wgf_ctx_create(&o, ctx, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        return 1;
    }
    return 0;
}

static float default_target(enum wgf_sim_workload w)
{
    return w == WGF_SIM_CARTPOLE ? 475.0f : w == WGF_SIM_ACROBOT ? -100.0f : -110.0f;
}

static void stats(const float *f, int n, double *mean, double *best)
{
    double s = 0, b = -INFINITY;
    for (int i = 0; i < n; i++) s += f[i], b = fmax(b, f[i]);
    *mean = s / n, *best = b;
}

/* Mean return of one policy over `episodes` fresh episodes (a population of copies). The
 * eval sim is built once by the caller; this only uploads and evaluates. */
static enum wgf_status eval_policy(wgf_sim *ev, const float *params, int np, int episodes, float *fit, double *mean,
                                   struct wgf_err *err)
{
    float *all = malloc((size_t)episodes * (size_t)np * sizeof *all);
    if (!all) return wgf_fail(err, WGF_ERR_NOMEM, "eval: %d episodes", episodes);
    for (int i = 0; i < episodes; i++) memcpy(all + (size_t)i * (size_t)np, params, (size_t)np * sizeof *all);
    enum wgf_status s = wgf_sim_params_write(ev, all, err);
    free(all);
    if (s == WGF_OK) s = wgf_sim_evaluate(ev, err);
    if (s == WGF_OK) s = wgf_sim_fitness_read(ev, fit, err);
    double best;
    if (s == WGF_OK) stats(fit, episodes, mean, &best);
    return s;
}

static int save_policy(const char *path, enum wgf_sim_workload w, const struct wgf_sim_policy *p, const float *params)
{
    char  *text = NULL;
    size_t len  = 0;
    struct wgf_err err = {0};
    if (wgf_sim_policy_save(w, p, params, &text, &len, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        return 1;
    }
    int rc = wgf_cli_write_file("sim", path, text, len);
    free(text);
    return rc;
}

/* ---- MPI: ranks, adapters, one generation across ranks (src/cli/sim_mpi.h) -------------- */

/* Join the job (if mpirun started us) and pick this rank's adapter: --adapter (every rank the
 * same) wins, else --rank-adapters LIST by local rank, else the local_rank-th adapter of the
 * best type present (discrete > integrated > cpu), so the ranks of a host spread over its GPUs.
 * `sel` (>= 16 bytes) holds the chosen index for wgf_cli.adapter. 0 ok, else the exit code. */
static int mpi_join(struct wgf_mpi *m, long timeout_s, const char *rank_adapters, char *sel, size_t cap)
{
    int rc = wgf_mpi_start(m, (int)timeout_s);
    if (rc || m->size <= 1 || (wgf_cli.adapter && *wgf_cli.adapter)) return rc;
    if (rank_adapters) {
        char       *copy = NULL;
        const char *items[64];
        int         n = wgf_cli_split_list("--rank-adapters", rank_adapters, &copy, items, 64);
        if (n > 0) snprintf(sel, cap, "%s", items[m->local_rank % n]);
        free(copy);
        if (n <= 0) return 2;
        wgf_cli.adapter = sel;
        return 0;
    }
    struct wgf_gpu_options o = wgf_cli_gpu_options();
    struct wgf_adapter_desc ad[16];
    struct wgf_err err = {0};
    int n = 0;
    if (wgf_gpu_list_adapters(&o, ad, 16, &n, &err) != WGF_OK) return wgf_cli_error("%s", err.msg), 1;
    static const char *order[3] = {"discrete", "integrated", "cpu"};
    for (int t = 0; t < 3; t++) {
        int idx[16], k = 0;
        for (int i = 0; i < n && i < 16; i++)
            if (!strcmp(ad[i].type, order[t]) && strcmp(ad[i].backend, "null")) idx[k++] = ad[i].index;
        if (k) {
            snprintf(sel, cap, "%d", idx[m->local_rank % k]);
            wgf_cli.adapter = sel;
            return 0;
        }
    }
    return 0; /* nothing typed: the default choice */
}

/* One generation across the ranks: evaluate this rank's slice, gather every slice into fit
 * (pop floats, identical on every rank), hand the whole vector to the GPU, evolve (GA) or
 * rank + update (ES). The same dispatches as wgf_sim_generations(sim, 1), in two submits. */
static enum wgf_status mpi_generation(struct wgf_mpi *m, wgf_sim *sim, wgf_sim_es *es, float *fit, struct wgf_err *err)
{
    const struct wgf_sim_config *c = wgf_sim_config_of(sim);
    enum wgf_status s = es ? wgf_sim_es_sample_evaluate(es, err) : wgf_sim_evaluate(sim, err);
    if (s == WGF_OK) s = wgf_sim_fitness_read_range(sim, c->eval_first, c->eval_count, fit + c->eval_first, err);
    if (s == WGF_OK && wgf_mpi_allgather_fitness(m, c->pop, fit + c->eval_first, fit))
        return wgf_fail(err, WGF_ERR_INTERNAL, "rank %d: the fitness gather failed", m->rank);
    if (s == WGF_OK) s = wgf_sim_fitness_write(sim, fit, err);
    if (s == WGF_OK) s = es ? wgf_sim_es_update(es, err) : wgf_sim_evolve(sim, err);
    return s;
}

/* SipHash-2-4 (key 0) of the population (GA: every genome; ES: theta): the run's result in 64
 * bits, compared across ranks and against a one-rank run (tests/sim/test_sim_mpi.c). */
static enum wgf_status population_hash(wgf_sim *sim, wgf_sim_es *es, uint64_t *h, struct wgf_err *err)
{
    size_t n = es ? (size_t)wgf_sim_n_params(sim) : (size_t)wgf_sim_config_of(sim)->pop * (size_t)wgf_sim_n_params(sim);
    float *x = malloc(n * sizeof *x);
    if (!x) return wgf_fail(err, WGF_ERR_NOMEM, "population hash: %zu floats", n);
    enum wgf_status s = es ? wgf_sim_es_theta_read(es, x, err) : wgf_sim_params_read(sim, x, err);
    struct wgf_hash_key k = {0, 0};
    if (s == WGF_OK) *h = wgf_siphash(&k, x, n * sizeof *x, 2, 4);
    free(x);
    return s;
}

/* Every rank's hash equal? Prints "# population hash H (R ranks agree)" on rank 0; 0, or 1
 * after printing which rank differs. */
static int report_hash(struct wgf_mpi *m, wgf_sim *sim, wgf_sim_es *es, const char *prefix, char *json, size_t cap)
{
    struct wgf_err err = {0};
    uint64_t h = 0, all[1024];
    if (population_hash(sim, es, &h, &err) != WGF_OK) return wgf_cli_error("%s", err.msg), 1;
    if (m->size > 1024) return wgf_cli_error("more than 1024 ranks"), 1;
    if (wgf_mpi_allgather_u64(m, h, all)) return 1;
    for (int r = 1; r < m->size; r++)
        if (all[r] != all[0]) {
            if (m->rank == 0)
                wgf_cli_error("rank %d's population hash %016llx differs from rank 0's %016llx", r,
                              (unsigned long long)all[r], (unsigned long long)all[0]);
            return 1;
        }
    if (json) snprintf(json, cap, "%016llx", (unsigned long long)h);
    else if (m->rank == 0) printf("%spopulation hash %016llx (%d rank%s)\n", prefix, (unsigned long long)h, m->size, m->size > 1 ? "s agree" : "");
    return 0;
}

/* ---- train ------------------------------------------------------------------------------- */

static int cmd_train(int argc, char **argv)
{
    if (argc >= 2 && wgf_cli_is_help(argv[1])) return usage(stdout), 0;
    if (argc < 2 || argv[1][0] == '-') {
        usage(stderr);
        return 2;
    }
    struct wgf_err err = {0};
    enum wgf_sim_workload w;
    if (wgf_sim_workload_parse(argv[1], &w, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        return 2;
    }
    if (!wgf_sim_workload_info(w)->sequential || w == WGF_SIM_FINSIM) {
        wgf_cli_error("sim train: %s has no policy to save; use `wgfuse sim bench --workload %s`", argv[1], argv[1]);
        return 2;
    }
    struct wgf_sim_config c = wgf_sim_config_default(w);
    struct wgf_sim_es_config ec = wgf_sim_es_config_default();
    bool   es = false, elites_given = false, strat_auto = false, autotune = false;
    long   max_gens = 500, eval_eps = 100, v, mpi_timeout = 300;
    double target = default_target(w), d;
    char   out_default[256], adapter_sel[32];
    const char *out = NULL, *rank_adapters = NULL, *ga_flag = NULL, *es_flag = NULL;
    c.pop = 1024;
    c.ga.elites = 16;
    for (int i = 2; i < argc; i++) {
        const char *f = argv[i], *a = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--algo") && a) {
            if (!strcmp(a, "es")) es = true;
            else if (strcmp(a, "ga")) return wgf_cli_error("--algo: ga or es"), 2;
            i++;
        } else if (!strcmp(f, "--pop")) {
            if (!wgf_cli_parse_long(f, a, 2, 4000000, &v)) return 2;
            c.pop = (int)v, i++;
        } else if (!strcmp(f, "--gens")) {
            if (!wgf_cli_parse_long(f, a, 1, 100000000, &max_gens)) return 2;
            i++;
        } else if (!strcmp(f, "--seed")) {
            if (!wgf_cli_parse_long(f, a, 0, 4294967295L, &v)) return 2;
            c.seed = (uint32_t)v, i++;
        } else if (!strcmp(f, "--steps")) {
            if (!wgf_cli_parse_long(f, a, 1, 1000000, &v)) return 2;
            c.max_steps = (int)v, i++;
        } else if (!strcmp(f, "--hidden")) {
            if (!wgf_cli_parse_long(f, a, 1, 64, &v)) return 2;
            c.hidden = (int)v, i++;
        } else if (!strcmp(f, "--feedback")) {
            if (!wgf_cli_parse_long(f, a, 0, 4, &v)) return 2;
            c.n_feedback = (int)v, i++;
        } else if (!strcmp(f, "--strategy") && a) {
            strat_auto = !strcmp(a, "auto");
            if (!strat_auto && wgf_sim_strategy_parse(a, &c.strategy, &c.chunk, &err) != WGF_OK)
                return wgf_cli_error("%s", err.msg), 2;
            i++;
        } else if (!strcmp(f, "--autotune")) {
            autotune = true;
        } else if (!strcmp(f, "--target")) {
            if (!wgf_cli_parse_double(f, a, -1e9, 1e9, &target)) return 2;
            i++;
        } else if (!strcmp(f, "--eval-episodes")) {
            if (!wgf_cli_parse_long(f, a, 1, 100000, &eval_eps)) return 2;
            i++;
        } else if (!strcmp(f, "--out") && a) {
            out = a, i++;
        } else if (!strcmp(f, "--elites")) {
            if (!wgf_cli_parse_long(f, a, 0, 1000000, &v)) return 2;
            c.ga.elites = (int)v, elites_given = true, ga_flag = f, i++;
        } else if (!strcmp(f, "--tournament")) {
            if (!wgf_cli_parse_long(f, a, 1, 64, &v)) return 2;
            c.ga.tournament = (int)v, ga_flag = f, i++;
        } else if (!strcmp(f, "--mut-rate")) {
            if (!wgf_cli_parse_double(f, a, 0, 1, &d)) return 2;
            c.ga.mut_rate = (float)d, ga_flag = f, i++;
        } else if (!strcmp(f, "--mut-sigma")) {
            if (!wgf_cli_parse_double(f, a, 0, 100, &d)) return 2;
            c.ga.mut_sigma = (float)d, ga_flag = f, i++;
        } else if (!strcmp(f, "--es-sigma")) {
            if (!wgf_cli_parse_double(f, a, 1e-6, 100, &d)) return 2;
            ec.sigma = (float)d, es_flag = f, i++;
        } else if (!strcmp(f, "--lr")) {
            if (!wgf_cli_parse_double(f, a, 1e-9, 100, &d)) return 2;
            ec.lr = (float)d, es_flag = f, i++;
        } else if (!strcmp(f, "--rank-adapters") && a) {
            rank_adapters = a, i++;
        } else if (!strcmp(f, "--mpi-timeout")) {
            if (!wgf_cli_parse_long(f, a, 1, 86400, &mpi_timeout)) return 2;
            i++;
        } else if (wgf_cli_is_help(f)) {
            return usage(stdout), 0;
        } else {
            wgf_cli_error("sim train: unknown or incomplete flag '%s'", f);
            return 2;
        }
    }
    /* each algorithm's settings: given to the other, they would be ignored without a word */
    if (es && ga_flag) return wgf_cli_error("sim train: %s applies to --algo ga, not es", ga_flag), 2;
    if (!es && es_flag) return wgf_cli_error("sim train: %s applies to --algo es (the default is ga)", es_flag), 2;
    if (es && c.pop % 2) c.pop++;
    if (!es && c.ga.elites < 1) return wgf_cli_error("sim train: the GA needs --elites >= 1 (genome 0 is the candidate)"), 2;
    if (c.ga.elites >= c.pop) { /* ES evolves no elites, but the population's GA settings are still checked */
        if (elites_given) return wgf_cli_error("sim train: --elites %d must be less than --pop %d", c.ga.elites, c.pop), 2;
        c.ga.elites = c.pop / 2; /* the default 16 does not fit a small population */
    }
    if (!out) {
        snprintf(out_default, sizeof out_default, "%s.policy", wgf_sim_workload_info(w)->name);
        out = out_default;
    }
    if (es) c.init_sigma = 0.0f; /* ES starts from the zero policy */

    /* an mpirun job: this rank evaluates its slice; only rank 0 prints and writes the policy */
    struct wgf_mpi m;
    int jrc = mpi_join(&m, mpi_timeout, rank_adapters, adapter_sel, sizeof adapter_sel);
    if (jrc) {
        if (m.active) wgf_mpi_abort(&m, jrc);
        return jrc;
    }
    if (m.size > 1) {
        if (c.pop < m.size) {
            wgf_cli_error("sim train: population %d smaller than the %d ranks", c.pop, m.size);
            wgf_mpi_abort(&m, 2);
        }
        wgf_mpi_slice(c.pop, m.size, m.rank, &c.eval_first, &c.eval_count);
        if (m.rank != 0 && !freopen("/dev/null", "w", stdout)) wgf_mpi_abort(&m, 1);
    }
    if (autotune && !strat_auto) return wgf_cli_error("sim train: --autotune applies to --strategy auto"), 2;
    wgf_ctx *ctx = NULL;
    if (open_ctx(&ctx)) {
        if (m.active) wgf_mpi_abort(&m, 1);
        return 1;
    }
    if (strat_auto && wgf_cli_sim_auto(ctx, &c, autotune)) { /* the cost model's choice (cli_advise.c) */
        wgf_ctx_free(ctx);
        if (m.active) wgf_mpi_abort(&m, 1);
        return 1;
    }
    int rc = 1;
    wgf_sim *sim = NULL, *ev = NULL;
    wgf_sim_es *trainer = NULL;
    float *fit = NULL, *efit = NULL, *cand = NULL;
    struct wgf_sim_config ecfg = c;
    ecfg.pop = (int)eval_eps, ecfg.seed = c.seed + 1u, ecfg.strategy = WGF_SIM_FUSED;
    ecfg.ga.elites = 0; /* the evaluation population is never evolved */
    ecfg.eval_first = ecfg.eval_count = 0; /* every rank evaluates all of it (the same numbers) */
    if (ecfg.pop < 2) ecfg.pop = 2;
    if (wgf_sim_create(ctx, &c, &sim, &err) != WGF_OK || wgf_sim_create(ctx, &ecfg, &ev, &err) != WGF_OK ||
        (es && wgf_sim_es_create(sim, &ec, NULL, &trainer, &err) != WGF_OK)) {
        wgf_cli_error("%s", err.msg);
        if (m.active) wgf_mpi_abort(&m, 1);
        goto done;
    }
    int np = wgf_sim_n_params(sim);
    struct wgf_sim_policy pol = wgf_sim_policy_of(sim);
    fit  = malloc((size_t)c.pop * sizeof *fit);
    efit = malloc((size_t)ecfg.pop * sizeof *efit);
    cand = malloc((size_t)np * sizeof *cand);
    if (!fit || !efit || !cand) {
        wgf_cli_error("sim train: out of memory");
        if (m.active) wgf_mpi_abort(&m, 1);
        goto done;
    }
    const struct wgf_adapter_desc *ad = wgf_ctx_adapter(ctx);
    printf("# sim train %s: %s, population %d, policy %d-%d-%d (%d params), %d steps, %s, seed %u, device %s\n",
           wgf_sim_workload_info(w)->gym_id, es ? "OpenAI-ES" : "GA", c.pop, pol.n_in, pol.n_hidden, pol.n_out, np,
           wgf_sim_config_of(sim)->max_steps, wgf_sim_strategy_name(c.strategy), c.seed, ad->name);
    if (m.size > 1)
        printf("# MPI: %d ranks, each evaluates about %d genomes on its adapter (rank 0: %s), fitness gathered every "
               "generation, every rank evolves the whole population\n", m.size, c.eval_count, ad->name);
    printf("# gen/s below includes the per-generation fitness readback (and the printing)\n");
    printf("gen,best,mean,gen_per_s\n");
    uint64_t t0 = wgf_now_ns();
    double   eval_mean = -INFINITY;
    long     g;
    bool     solved = false;
    wgf_cli_catch_interrupts();
    for (g = 0; g < max_gens; g++) {
        wgf_mpi_test_fault(&m, g);
        double any_int = wgf_cli_interrupt_pending() ? 1 : 0;
        if (m.size > 1 && wgf_mpi_max_double(&m, any_int, &any_int)) wgf_mpi_abort(&m, 1);
        if (any_int > 0) { /* every rank stops at the same generation */
            printf("# interrupted by %s after %ld generations (%.2f s): incomplete, not solved; no policy written\n",
                   wgf_cli_interrupt_name(), g, (double)(wgf_now_ns() - t0) / 1e9);
            fflush(stdout);
            rc = wgf_cli_interrupt_pending() ? wgf_cli_interrupt_code() : 130;
            goto done;
        }
        enum wgf_status s;
        if (m.size > 1) {
            s = mpi_generation(&m, sim, trainer, fit, &err);
        } else {
            s = es ? wgf_sim_es_generations(trainer, 1, &err) : wgf_sim_generations(sim, 1, &err);
            if (s == WGF_OK) s = wgf_sim_fitness_read(sim, fit, &err);
        }
        if (s != WGF_OK) {
            wgf_cli_error("%s", err.msg);
            if (m.active) wgf_mpi_abort(&m, 1);
            goto done;
        }
        double mean, best, secs = (double)(wgf_now_ns() - t0) / 1e9;
        stats(fit, c.pop, &mean, &best);
        printf("%ld,%.2f,%.2f,%.1f\n", g, best, mean, (double)(g + 1) / secs);
        fflush(stdout);
        /* a candidate worth the 100-episode check: GA's genome 0 after evolve is the best of
         * the population just evaluated; ES's is the centre theta */
        if (best >= target) {
            s = es ? wgf_sim_es_theta_read(trainer, cand, &err) : wgf_sim_genome_read(sim, 0, cand, &err);
            if (s == WGF_OK) s = eval_policy(ev, cand, np, ecfg.pop, efit, &eval_mean, &err);
            if (s != WGF_OK) {
                wgf_cli_error("%s", err.msg);
                if (m.active) wgf_mpi_abort(&m, 1);
                goto done;
            }
            printf("# eval gen %ld: mean return over %d episodes %.2f (target %.1f)\n", g, ecfg.pop, eval_mean, target);
            if (eval_mean >= target) {
                solved = true;
                g++;
                break;
            }
        }
    }
    double secs = (double)(wgf_now_ns() - t0) / 1e9;
    if (report_hash(&m, sim, trainer, "# ", NULL, 0)) {
        if (m.active) wgf_mpi_abort(&m, 1);
        goto done;
    }
    if (!solved) {
        printf("# not solved after %ld generations (%.2f s); last eval mean %.2f\n", g, secs, eval_mean);
        rc = 1;
        goto done;
    }
    if (m.rank == 0 && save_policy(out, w, &pol, cand)) goto done;
    printf("# solved: %ld generations in %.2f s (%.1f gen/s with readback), mean return %.2f over %d episodes; "
           "policy saved to %s\n",
           g, secs, (double)g / secs, eval_mean, ecfg.pop, out);
    rc = 0;
done:
    free(fit), free(efit), free(cand);
    wgf_sim_es_free(trainer);
    wgf_sim_free(ev);
    wgf_sim_free(sim);
    wgf_ctx_free(ctx);
    fflush(stdout);
    wgf_mpi_finish(&m);
    return rc;
}

/* ---- eval -------------------------------------------------------------------------------- */

static int cmd_eval(int argc, char **argv)
{
    if (argc >= 2 && wgf_cli_is_help(argv[1])) return usage(stdout), 0;
    if (argc < 2 || argv[1][0] == '-') {
        usage(stderr);
        return 2;
    }
    long   episodes = 100, seed = 12345, v;
    struct wgf_err err = {0};
    enum wgf_sim_strategy strategy = WGF_SIM_FUSED;
    int    chunk = 50;
    for (int i = 2; i < argc; i++) {
        const char *f = argv[i], *a = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--episodes")) {
            if (!wgf_cli_parse_long(f, a, 2, 1000000, &episodes)) return 2;
            i++;
        } else if (!strcmp(f, "--seed")) {
            if (!wgf_cli_parse_long(f, a, 0, 4294967295L, &v)) return 2;
            seed = v, i++;
        } else if (!strcmp(f, "--strategy") && a) {
            if (wgf_sim_strategy_parse(a, &strategy, &chunk, &err) != WGF_OK) return wgf_cli_error("%s", err.msg), 2;
            i++;
        } else if (wgf_cli_is_help(f)) {
            return usage(stdout), 0;
        } else {
            wgf_cli_error("sim eval: unknown or incomplete flag '%s'", f);
            return 2;
        }
    }
    /* util/file.h's rule: a regular file, at most 1 MiB (the largest policy, 64 hidden units
     * with 4 fed back, is ~20 KB of text): a FIFO, /dev/zero or a directory is refused */
    char  *text = NULL;
    size_t len  = 0;
    if (wgf_file_read(argv[1], 1u << 20, "a policy file", &text, &len, &err) != WGF_OK) {
        wgf_cli_error("sim eval: %s", err.msg);
        return 1;
    }
    enum wgf_sim_workload w;
    struct wgf_sim_policy p;
    float *params = NULL;
    if (wgf_sim_policy_load(text, len, &w, &p, &params, &err) != WGF_OK) {
        wgf_cli_error("%s: %s", argv[1], err.msg);
        free(text);
        return 1;
    }
    free(text);
    wgf_ctx *ctx = NULL;
    if (open_ctx(&ctx)) {
        free(params);
        return 1;
    }
    int rc = 1;
    struct wgf_sim_config c = wgf_sim_config_default(w);
    c.pop = (int)episodes, c.seed = (uint32_t)seed, c.hidden = p.n_hidden, c.n_feedback = p.n_feedback;
    c.strategy = strategy, c.chunk = chunk;
    c.ga.elites = 0; /* evaluation only: no generation is evolved, so no GA setting applies */
    wgf_sim *sim = NULL;
    float   *fit = malloc((size_t)episodes * sizeof *fit);
    double   mean = 0, best = 0, lo = INFINITY;
    if (!fit || wgf_sim_create(ctx, &c, &sim, &err) != WGF_OK) {
        wgf_cli_error("%s", fit ? err.msg : "out of memory");
        goto done;
    }
    if (wgf_sim_n_params(sim) != wgf_sim_policy_n_params(&p)) { /* the loader checked it: a bug if not */
        wgf_cli_error("sim eval: %s: %d parameters, the %s population takes %d", argv[1], wgf_sim_policy_n_params(&p),
                      wgf_sim_workload_info(w)->name, wgf_sim_n_params(sim));
        goto done;
    }
    if (eval_policy(sim, params, wgf_sim_n_params(sim), c.pop, fit, &mean, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        goto done;
    }
    stats(fit, c.pop, &mean, &best);
    for (int i = 0; i < c.pop; i++) lo = fmin(lo, fit[i]);
    float target = default_target(w);
    printf("%s: %s policy %d-%d-%d, %ld episodes (seed %ld, %s): mean return %.2f, min %.0f, max %.0f -> %s (threshold %.0f)\n",
           argv[1], wgf_sim_workload_info(w)->gym_id, p.n_in, p.n_hidden, p.n_out, episodes, seed,
           wgf_sim_strategy_name(strategy), mean, lo, best, mean >= target ? "solved" : "not solved", target);
    rc = 0;
done:
    free(fit), free(params);
    wgf_sim_free(sim);
    wgf_ctx_free(ctx);
    return rc;
}

/* ---- trace ------------------------------------------------------------------------------- */

static int cmd_trace(int argc, char **argv)
{
    if (argc >= 2 && wgf_cli_is_help(argv[1])) return usage(stdout), 0;
    if (argc < 2 || argv[1][0] == '-') {
        usage(stderr);
        return 2;
    }
    struct wgf_err err = {0};
    enum wgf_sim_workload w;
    if (wgf_sim_workload_parse(argv[1], &w, &err) != WGF_OK || wgf_sim_workload_info(w)->n_state == 0) {
        wgf_cli_error("sim trace: %s", err.msg[0] ? err.msg : "only cartpole, acrobot, mountaincar have a state to trace");
        return 2;
    }
    const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(w);
    const char *actions = NULL, *state = NULL;
    long seed = 1, v;
    for (int i = 2; i < argc; i++) {
        const char *f = argv[i], *a = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--actions") && a) actions = a, i++;
        else if (!strcmp(f, "--state") && a) state = a, i++;
        else if (!strcmp(f, "--seed")) {
            if (!wgf_cli_parse_long(f, a, 0, 4294967295L, &v)) return 2;
            seed = v, i++;
        } else if (wgf_cli_is_help(f)) {
            return usage(stdout), 0;
        } else {
            wgf_cli_error("sim trace: unknown or incomplete flag '%s'", f);
            return 2;
        }
    }
    if (!actions) return wgf_cli_error("sim trace: --actions A,A,... is required"), 2;
    float s[WGF_SIM_MAX_STATE] = {0};
    wgf_sim_env_reset(w, (uint32_t)seed, 0, 0, s);
    char       *copy = NULL;
    const char *items[64];
    if (state) {
        int n = wgf_cli_split_list("--state", state, &copy, items, 64);
        if (n < 0) return free(copy), 2;
        if (n != wi->n_state) {
            free(copy);
            return wgf_cli_error("sim trace: --state wants %d comma-separated numbers for %s", wi->n_state, wi->name), 2;
        }
        for (int i = 0; i < n; i++) {
            double x;
            if (!wgf_cli_parse_double("--state", items[i], -1e30, 1e30, &x)) return free(copy), 2;
            /* Acrobot wraps its angles into [-pi, pi] by steps of 2 pi, as Gymnasium does: from
             * 1e9 on, x - 2 pi == x in float and the step never returned */
            if (w == WGF_SIM_ACROBOT && i < 2 && fabs(x) > 1000) {
                free(copy);
                return wgf_cli_error("sim trace: --state: acrobot's theta%d %g is outside [-1000, 1000] (angles "
                                     "wrap into [-pi, pi]: give one there)", i + 1, x), 2;
            }
            s[i] = (float)x;
        }
        free(copy);
    }
    int          cap = 1, t = 0;
    for (const char *q = actions; *q; q++) cap += *q == ',';
    const char **acts  = malloc((size_t)cap * sizeof *acts);
    char        *acopy = NULL;
    int          na    = acts ? wgf_cli_split_list("--actions", actions, &acopy, acts, cap) : -1;
    int         *av    = na > 0 ? malloc((size_t)na * sizeof *av) : NULL;
    for (int k = 0; k < na && av; k++) { /* every action checked before the first CSV line */
        long a;
        if (!wgf_cli_parse_long("--actions", acts[k], 0, wi->n_actions - 1, &a)) na = -1;
        else av[k] = (int)a;
    }
    free(acts);
    free(acopy);
    if (na < 0 || !av) return free(av), na < 0 ? 2 : 1;
    /* the whole trace stepped once before the first CSV line: a --state far outside the
     * environment's range overflows float (CartPole's theta_dot^2) and would print nan rows */
    float s0[WGF_SIM_MAX_STATE];
    memcpy(s0, s, sizeof s0);
    bool term0 = false;
    for (int k = 0;; k++) {
        bool finite = true;
        for (int i = 0; i < wi->n_state; i++) finite = finite && isfinite(s0[i]);
        if (!finite) {
            free(av);
            return wgf_cli_error("sim trace: --state %s: the %s state is not finite after step %d (out of the "
                                 "environment's range)", state ? state : "(reset)", wi->name, k), 2;
        }
        if (k == na || term0) break;
        wgf_sim_env_step(w, s0, av[k], &term0);
    }
    static const char *names[3][4] = {{"x", "x_dot", "theta", "theta_dot"},
                                      {"theta1", "theta2", "dtheta1", "dtheta2"},
                                      {"position", "velocity", "", ""}};
    printf("t,action,reward,terminated");
    for (int i = 0; i < wi->n_state; i++) printf(",%s", names[w][i]);
    printf("\n0,,,0");
    for (int i = 0; i < wi->n_state; i++) printf(",%.9g", s[i]);
    printf("\n");
    for (int k = 0; k < na; k++) {
        bool  term = false;
        float r    = wgf_sim_env_step(w, s, av[k], &term);
        printf("%d,%d,%g,%d", ++t, av[k], r, term);
        for (int i = 0; i < wi->n_state; i++) printf(",%.9g", s[i]);
        printf("\n");
        if (term) break;
    }
    free(av);
    return 0;
}

/* ---- bench ------------------------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
    fputc('"', f);
}

/* The bench under MPI (or --gather): `gens` generations, each evaluate this rank's slice +
 * fitness gather + evolve (mpi_generation), `runs` times from the same snapshot; gen/s of the
 * slowest rank, median over runs; the population hash after the last run, equal on every
 * rank. What a multi-GPU run costs per generation, host gather included. */
static enum wgf_status mpi_bench(struct wgf_mpi *m, wgf_sim *sim, int gens, int runs, double *gen_per_s, char *hash,
                                 struct wgf_err *err)
{
    const struct wgf_sim_config *c = wgf_sim_config_of(sim);
    size_t n = (size_t)c->pop * (size_t)wgf_sim_n_params(sim);
    float *fit = malloc((size_t)c->pop * sizeof *fit), *snap = malloc(n * sizeof *snap);
    double t[101];
    enum wgf_status s = fit && snap ? WGF_OK : wgf_fail(err, WGF_ERR_NOMEM, "sim bench: MPI buffers");
    if (s == WGF_OK) s = mpi_generation(m, sim, NULL, fit, err); /* warm up */
    uint32_t gen0 = wgf_sim_generation(sim);
    if (s == WGF_OK) s = wgf_sim_params_read(sim, snap, err);
    for (int r = 0; r < runs && s == WGF_OK; r++) {
        if ((s = wgf_sim_params_write(sim, snap, err)) == WGF_OK) s = wgf_sim_generation_set(sim, gen0, err);
        if (s == WGF_OK) s = wgf_sim_fitness_read_range(sim, 0, 1, fit, err); /* the writes landed */
        uint64_t t0 = wgf_now_ns();
        for (int g = 0; g < gens && s == WGF_OK; g++) s = mpi_generation(m, sim, NULL, fit, err);
        double mine = (double)(wgf_now_ns() - t0) / 1e9;
        if (s == WGF_OK && wgf_mpi_max_double(m, mine, &t[r])) s = wgf_fail(err, WGF_ERR_INTERNAL, "time reduction");
    }
    if (s == WGF_OK) {
        for (int i = 1; i < runs; i++) /* insertion sort: a median of <= 101 */
            for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
                double x = t[j];
                t[j] = t[j - 1], t[j - 1] = x;
            }
        double med = runs % 2 ? t[runs / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2]);
        *gen_per_s = gens / med;
        if (report_hash(m, sim, NULL, "", hash, 17)) s = wgf_fail(err, WGF_ERR_INTERNAL, "the ranks' populations differ");
    }
    free(fit), free(snap);
    return s;
}

static int cmd_bench(int argc, char **argv)
{
    const char *workloads = "cartpole", *strategies = "fused,chunked:50,per-step", *pops = "1024", *steps = "0";
    long gens = 10, runs = 3, hidden = 0, dim = 2000, feedback = -1, mpi_timeout = 300;
    enum wgf_sim_evolve evolve = WGF_SIM_EVOLVE_AUTO;
    bool json = false, gather = false, autotune = false;
    const char *rank_adapters = NULL;
    char adapter_sel[32];
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *a = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--workload") && a) workloads = a, i++;
        else if (!strcmp(f, "--strategy") && a) strategies = a, i++;
        else if (!strcmp(f, "--pop") && a) pops = a, i++;
        else if (!strcmp(f, "--steps") && a) steps = a, i++;
        else if (!strcmp(f, "--gens")) {
            if (!wgf_cli_parse_long(f, a, 1, 100000, &gens)) return 2;
            i++;
        } else if (!strcmp(f, "--runs")) {
            if (!wgf_cli_parse_long(f, a, 1, 101, &runs)) return 2;
            i++;
        } else if (!strcmp(f, "--hidden")) {
            if (!wgf_cli_parse_long(f, a, 1, 64, &hidden)) return 2;
            i++;
        } else if (!strcmp(f, "--dim")) {
            if (!wgf_cli_parse_long(f, a, 1, 1000000, &dim)) return 2;
            i++;
        } else if (!strcmp(f, "--feedback")) {
            if (!wgf_cli_parse_long(f, a, 0, 4, &feedback)) return 2;
            i++;
        } else if (!strcmp(f, "--evolve") && a) {
            if (wgf_sim_evolve_parse(a, &evolve, NULL) != WGF_OK) {
                wgf_cli_error("sim bench: --evolve %s: expected auto, split, thread or wide", a);
                return 2;
            }
            i++;
        } else if (!strcmp(f, "--json")) json = true;
        else if (!strcmp(f, "--gather")) gather = true;
        else if (!strcmp(f, "--autotune")) autotune = true;
        else if (!strcmp(f, "--rank-adapters") && a) rank_adapters = a, i++;
        else if (!strcmp(f, "--mpi-timeout")) {
            if (!wgf_cli_parse_long(f, a, 1, 86400, &mpi_timeout)) return 2;
            i++;
        } else if (wgf_cli_is_help(f)) return usage(stdout), 0;
        else {
            wgf_cli_error("sim bench: unknown or incomplete flag '%s'", f);
            return 2;
        }
    }
    char *cw = NULL, *cs = NULL, *cp = NULL, *cl = NULL;
    const char *W[16], *S[16], *P[16], *L[16];
    int nw = wgf_cli_split_list("--workload", workloads, &cw, W, 16), ns = nw < 0 ? -1 : wgf_cli_split_list("--strategy", strategies, &cs, S, 16);
    int np = ns < 0 ? -1 : wgf_cli_split_list("--pop", pops, &cp, P, 16), nl = np < 0 ? -1 : wgf_cli_split_list("--steps", steps, &cl, L, 16);
    int rc = 2;
    struct wgf_err err = {0};
    if (nl < 0) goto out;
    /* validate everything before touching the GPU */
    for (int i = 0; i < nw; i++) {
        enum wgf_sim_workload w;
        if (wgf_sim_workload_parse(W[i], &w, &err) != WGF_OK) goto usage_err;
    }
    bool any_auto = false;
    for (int i = 0; i < ns; i++) {
        enum wgf_sim_strategy st;
        int k;
        any_auto = any_auto || !strcmp(S[i], "auto");
        if (strcmp(S[i], "auto") && wgf_sim_strategy_parse(S[i], &st, &k, &err) != WGF_OK) goto usage_err;
    }
    if (autotune && !any_auto) { /* as train: nothing else to time, it would be ignored */
        wgf_cli_error("sim bench: --autotune applies to --strategy auto");
        goto out;
    }
    long tmp;
    for (int i = 0; i < np; i++)
        if (!wgf_cli_parse_long("--pop", P[i], 2, 4000000, &tmp)) goto out;
    for (int i = 0; i < nl; i++)
        if (!wgf_cli_parse_long("--steps", L[i], 0, 1000000, &tmp)) goto out;

    rc = 1;
    struct wgf_mpi m;
    int jrc = mpi_join(&m, mpi_timeout, rank_adapters, adapter_sel, sizeof adapter_sel);
    if (jrc) {
        if (m.active) wgf_mpi_abort(&m, jrc);
        rc = jrc;
        goto out;
    }
    if (m.size > 1) gather = true;
    if (m.rank != 0 && !freopen("/dev/null", "w", stdout)) wgf_mpi_abort(&m, 1);
    wgf_ctx *ctx = NULL;
    if (open_ctx(&ctx)) {
        if (m.active) wgf_mpi_abort(&m, 1);
        goto out;
    }
    const struct wgf_adapter_desc *ad = wgf_ctx_adapter(ctx);
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    if (json) {
        printf("{\"tool\": \"wgfuse sim bench\", \"date\": \"%s\", \"device\": ", date);
        json_str(stdout, ad->name);
        printf(", \"backend\": ");
        json_str(stdout, ad->backend);
        printf(", \"driver\": ");
        json_str(stdout, ad->driver);
        printf(", \"webgpu_lib\": ");
        json_str(stdout, wgf_ctx_lib_path(ctx));
        printf(",\n \"metric\": \"generation = evaluate + evolve over the whole population; gen_per_s_noreadback: "
               "generations submitted back to back; host_ms_record: that run's recording and submit call (median); "
               "gen_per_s_readback: fitness read after every generation; eval_per_s: reset + episode only; "
               "mean_steps, group_steps, longest_steps: means over the generations of a timed submit\",\n "
               "\"results\": [");
    } else {
        printf("# wgfuse sim bench on %s (%s, %s), %s\n# %s", ad->name, ad->backend, ad->driver, date, METRIC_TEXT);
        printf("%-12s %-12s %8s %6s %7s %5s %12s %12s %12s %7s %19s\n", "workload", "strategy", "pop", "steps", "params",
               "disp", "gen/s(noRB)", "gen/s(RB)", "eval/s", "ref", "GPU ms episode/evo");
    }
    int first = 1;
    rc = 0;
    wgf_cli_catch_interrupts();
    for (int iw = 0; iw < nw; iw++) {
        enum wgf_sim_workload w;
        wgf_sim_workload_parse(W[iw], &w, &err);
        const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(w);
        for (int is = 0; is < ns; is++) {
            struct wgf_sim_config c = wgf_sim_config_default(w);
            bool strat_auto = !strcmp(S[is], "auto");
            if (!strat_auto) wgf_sim_strategy_parse(S[is], &c.strategy, &c.chunk, &err);
            if (!wi->sequential && is > 0) break; /* Rastrigin: strategies do not apply */
            for (int ip = 0; ip < np; ip++)
                for (int il = 0; il < nl; il++) {
                    if (!wi->sequential && il > 0) break;
                    c.pop       = atoi(P[ip]);
                    c.max_steps = atoi(L[il]);
                    c.hidden    = (int)hidden;
                    c.dim       = (int)dim;
                    if (w != WGF_SIM_FINSIM) c.n_feedback = (int)feedback;
                    c.ga.elites = c.pop > 64 ? c.pop / 64 : 1;
                    c.evolve    = evolve;
                    if (!gather && wgf_cli_interrupt_pending()) goto end; /* the rows so far, marked incomplete */
                    wgf_sim *sim = NULL;
                    struct wgf_sim_bench_result r;
                    char hash[17] = "";
                    double gps = 0;
                    if (gather) {
                        if (c.pop < m.size) {
                            wgf_cli_error("sim bench: population %d smaller than the %d ranks", c.pop, m.size);
                            wgf_mpi_abort(&m, 2);
                        }
                        wgf_mpi_slice(c.pop, m.size, m.rank, &c.eval_first, &c.eval_count);
                    }
                    if (strat_auto && wgf_cli_sim_auto(ctx, &c, autotune)) { /* the advisor's choice */
                        rc = 1;
                        continue;
                    }
                    enum wgf_status s = wgf_sim_create(ctx, &c, &sim, &err);
                    if (s == WGF_OK && !gather) s = wgf_sim_bench_run(sim, (int)gens, (int)runs, &r, &err);
                    if (s == WGF_OK && gather) s = mpi_bench(&m, sim, (int)gens, (int)runs, &gps, hash, &err);
                    if (s != WGF_OK && m.active) {
                        wgf_cli_error("rank %d: %s", m.rank, err.msg);
                        wgf_mpi_abort(&m, 1);
                    }
                    const struct wgf_sim_config *rc_cfg = sim ? wgf_sim_config_of(sim) : &c;
                    char strat[32];
                    if (!wi->sequential) snprintf(strat, sizeof strat, "n/a");
                    else if (c.strategy == WGF_SIM_CHUNKED) snprintf(strat, sizeof strat, "chunked:%d", c.chunk);
                    else snprintf(strat, sizeof strat, "%s", wgf_sim_strategy_name(c.strategy));
                    int L_eff = wi->sequential ? rc_cfg->max_steps : 0;
                    if (s != WGF_OK) {
                        wgf_cli_error("sim bench %s %s pop %d: %s", wi->name, strat, c.pop, err.msg);
                        rc = 1;
                        wgf_sim_free(sim);
                        if (s == WGF_ERR_DEVICE_LOST) goto end;
                        continue;
                    }
                    if (gather) { /* gen/s with the fitness gathered over ranks every generation */
                        if (json)
                            printf("%s\n  {\"workload\": \"%s\", \"strategy\": \"%s\", \"pop\": %d, \"steps\": %d, "
                                   "\"params\": %d, \"ranks\": %d, \"gens\": %ld, \"runs\": %ld, \"gen_per_s_gather\": %.4g, "
                                   "\"pop_hash\": \"%s\"}",
                                   first ? "" : ",", wi->name, strat, c.pop, L_eff, wgf_sim_n_params(sim), m.size, gens, runs, gps, hash);
                        else
                            printf("%-12s %-12s %8d %6d %7d ranks %d: %.2f gen/s (fitness gathered every generation), "
                                   "population hash %s\n", wi->name, strat, c.pop, L_eff, wgf_sim_n_params(sim), m.size, gps, hash);
                    } else if (json) {
                        printf("%s\n  {\"workload\": \"%s\", \"strategy\": \"%s\", \"pop\": %d, \"steps\": %d, "
                               "\"params\": %d, \"evolve\": \"%s\", \"dispatches_per_gen\": %d, \"gens\": %d, \"runs\": %ld, "
                               "\"gen_per_s_noreadback\": %.4g, \"host_ms_record\": %.4g, \"gen_per_s_readback\": %.4g, "
                               "\"eval_per_s\": %.4g, \"checksum\": %.9g, \"ref_matched\": %d, \"ref_checked\": %d, "
                               "\"gpu_ms_reset\": %.4g, \"gpu_ms_episode\": %.4g, \"gpu_ms_evolve\": %.4g, "
                               "\"gpu_us_select\": %.4g, \"gpu_us_rank\": %.4g, \"gpu_us_breed\": %.4g, \"profile_reps\": %d, "
                               "\"bytes_per_genome\": %.0f, \"mean_steps\": %.5g, \"group_steps\": %.5g, \"longest_steps\": %.5g, \"genome_steps_per_s\": %.4g}",
                               first ? "" : ",", wi->name, strat, c.pop, L_eff, wgf_sim_n_params(sim),
                               wgf_sim_evolve_name(wgf_sim_config_of(sim)->evolve), r.dispatches_per_gen, r.gens, runs, r.gen_per_s_noreadback, r.host_ms_record,
                               r.gen_per_s_readback, r.eval_per_s, r.checksum, r.ref_matched, r.ref_checked, r.gpu_ms_reset,
                               r.gpu_ms_episode, r.gpu_ms_evolve, r.gpu_us_evolve_pass[0], r.gpu_us_evolve_pass[1],
                               r.gpu_us_evolve_pass[2], r.profile_reps, wgf_sim_bytes_per_genome(sim), r.mean_steps, r.group_steps, r.longest_steps,
                               r.gen_per_s_noreadback * c.pop * r.mean_steps);
                    } else {
                        printf("%-12s %-12s %8d %6d %7d %5d %12.2f %12.2f %12.2f %3d/%-3d %9.3f/%-9.3f\n", wi->name,
                               strat, c.pop, L_eff, wgf_sim_n_params(sim), r.dispatches_per_gen, r.gen_per_s_noreadback,
                               r.gen_per_s_readback, r.eval_per_s, r.ref_matched, r.ref_checked, r.gpu_ms_episode,
                               r.gpu_ms_evolve);
                    }
                    fflush(stdout);
                    first = 0;
                    wgf_sim_free(sim);
                }
        }
    }
end:
    if (wgf_cli_interrupt_pending()) {
        /* stopped between configurations: every printed row is a finished measurement */
        if (json) printf("\n ],\n \"complete\": false, \"interrupted\": \"%s\"}\n", wgf_cli_interrupt_name());
        else printf("# interrupted by %s: incomplete, the remaining configurations did not run\n", wgf_cli_interrupt_name());
        rc = wgf_cli_interrupt_code();
    } else if (json) printf("\n ],\n \"complete\": true}\n");
    wgf_ctx_free(ctx);
    fflush(stdout);
    wgf_mpi_finish(&m);
    goto out;
usage_err:
    wgf_cli_error("%s", err.msg);
out:
    free(cw), free(cs), free(cp), free(cl);
    return rc;
}

/* ---- market ------------------------------------------------------------------------------ */

/* Write finsim's synthetic path for the peers (bench/sim_peers.py --market): magic
 * "WGFMKT1\0", int32 L, 16, 36, then f32 returns (L, 16) and signals (L, 36), little endian. */
static int cmd_market(int argc, char **argv)
{
    long steps = 1500, seed = 1;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *a = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--steps")) {
            if (!wgf_cli_parse_long(f, a, 1, 1000000, &steps)) return 2;
            i++;
        } else if (!strcmp(f, "--seed")) {
            if (!wgf_cli_parse_long(f, a, 0, 4294967295L, &seed)) return 2;
            i++;
        } else if (!strcmp(f, "--out") && a) {
            out = a, i++;
        } else if (wgf_cli_is_help(f)) {
            return usage(stdout), 0;
        } else {
            wgf_cli_error("sim market: unknown or incomplete flag '%s'", f);
            return 2;
        }
    }
    if (!out) return wgf_cli_error("sim market: --out FILE is required"), 2;
    struct wgf_sim_market m;
    struct wgf_err err = {0};
    if (wgf_sim_market_generate((uint32_t)seed, (int)steps, &m, &err) != WGF_OK) return wgf_cli_error("%s", err.msg), 1;
    size_t nr = (size_t)steps * WGF_FIN_ASSETS * 4, ns = (size_t)steps * WGF_FIN_SIGNALS * 4, n = 20 + nr + ns;
    unsigned char *buf = malloc(n);
    int rc = 1;
    if (buf) {
        int32_t hdr[3] = {(int32_t)steps, WGF_FIN_ASSETS, WGF_FIN_SIGNALS}; /* x86/ARM hosts: little endian */
        memcpy(buf, "WGFMKT1", 8);
        memcpy(buf + 8, hdr, 12);
        memcpy(buf + 20, m.returns, nr);
        memcpy(buf + 20 + nr, m.signals, ns);
        rc = wgf_cli_write_file("sim market", out, buf, n);
    }
    free(buf);
    wgf_sim_market_free(&m);
    return rc;
}

/* ---- entry points ------------------------------------------------------------------------ */

int wgf_cmd_sim(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "train")) return cmd_train(argc - 1, argv + 1);
    if (!strcmp(sub, "eval")) return cmd_eval(argc - 1, argv + 1);
    if (!strcmp(sub, "trace")) return cmd_trace(argc - 1, argv + 1);
    if (!strcmp(sub, "bench")) return cmd_bench(argc - 1, argv + 1);
    if (!strcmp(sub, "market")) return cmd_market(argc - 1, argv + 1);
    wgf_cli_error("sim: unknown subcommand '%s' (train, eval, trace, bench, market)", sub);
    return 2;
}

/* Fused vs per-step CartPole on this device: population 256, 500 steps, MLP 4-16-2, a few
 * generations each (a few seconds on lavapipe). */
int wgf_report_sim_section(FILE *out, wgf_ctx *ctx)
{
    fprintf(out, "\n## sim: fused vs per-step, CartPole-v1 (population 256, 500 steps, MLP 4-16-2, GA)\n");
    fprintf(out, "%s", METRIC_TEXT);
    enum wgf_sim_strategy st[2] = {WGF_SIM_FUSED, WGF_SIM_PER_STEP};
    double g[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        struct wgf_sim_config c = wgf_sim_config_default(WGF_SIM_CARTPOLE);
        c.pop = 256, c.strategy = st[i], c.ga.elites = 4, c.hidden = 16;
        struct wgf_err err = {0};
        wgf_sim *sim = NULL;
        struct wgf_sim_bench_result r;
        enum wgf_status s = wgf_sim_create(ctx, &c, &sim, &err);
        if (s == WGF_OK) s = wgf_sim_bench_run(sim, 5, 3, &r, &err);
        wgf_sim_free(sim);
        if (s != WGF_OK) {
            fprintf(out, "sim %s: FAILED: %s\n", wgf_sim_strategy_name(st[i]), err.msg);
            return 1;
        }
        g[i] = r.gen_per_s_noreadback;
        fprintf(out, "  %-9s %4d dispatches/gen  %9.2f gen/s (no readback)  %9.2f gen/s (readback)  %9.2f eval/s  "
                     "[C reference: %d/%d returns within 5%%]",
                wgf_sim_strategy_name(st[i]), r.dispatches_per_gen, r.gen_per_s_noreadback, r.gen_per_s_readback,
                r.eval_per_s, r.ref_matched, r.ref_checked);
        if (r.gpu_ms_episode >= 0) fprintf(out, "  GPU: episode %.3f ms, evolve %.3f ms", r.gpu_ms_episode, r.gpu_ms_evolve);
        fprintf(out, "\n");
    }
    fprintf(out, "  fused / per-step: %.1fx (no readback)\n", g[1] > 0 ? g[0] / g[1] : 0.0);
    return 0;
}
