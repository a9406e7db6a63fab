/* wgfuse advise — the measured cost model (docs/advise.md): calibrate this adapter once
 * (per-dispatch cost by recording mode, read bandwidth, f32 rate, barrier and subgroup
 * costs; cached per adapter), then predict every LLM plan's time per token from the plans'
 * own dispatch lists and recommend one. Also the `--plan auto` of `run` and `llm bench`. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "wgfuse/bench_calibrate.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_advise.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/sim_advise.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: wgfuse advise --calibrate [--quick] [--json]\n"
            "       wgfuse advise (--llm MODEL | --shape NAME) [--weights f16|f32|TYPE] [--no-subgroups] [--batch B]\n"
            "                  [--activations f32|i8x3|q8] [--ctx N] [--no-probe]\n"
            "       wgfuse advise --sim ENV --steps L --pop P [--hidden H] [--episode-steps T] [--longest-steps M]\n"
            "                     [--chunks K,K,..] [--gens-per-submit G] [--no-probe]\n"
            "       wgfuse advise --table [--quick] [--json]\n"
            "  every form also: [--calibration FILE] [--recalibrate] [--quick] [--json]\n"
            "  --calibrate: measure this adapter (per-dispatch cost by recording mode and by replayed\n"
            "  schedule length, read bandwidth and f32 FMA rate of the whole device and of one workgroup,\n"
            "  one workgroup streaming a matvec row loop, workgroupBarrier and subgroupAdd cost) and store\n"
            "  it in $XDG_CACHE_HOME/wgfuse/ (else ~/.cache/wgfuse/), one file per adapter, driver and\n"
            "  WebGPU library. --quick: small sizes (default on CPU adapters).\n"
            "  --llm / --shape: every GPU plan (ops, fused, roles, mega) built on the model, its decode\n"
            "  step's dispatches with their bytes and FLOPs read back, and the time per token predicted\n"
            "  as the sum over dispatches of max(dispatch cost at the schedule's length, bytes / bandwidth,\n"
            "  FLOPs / rate, and for one-workgroup steps FLOPs / one workgroup's streaming rate), the rates\n"
            "  scaled down for a dispatch of few workgroups; prints each plan's ms/token, its dispatch-bound\n"
            "  share, the recommendation with its reason, and the crossover batch B* of every projection\n"
            "  and of the attention and MLP groups (--batch B: their time at batch B). On this adapter each\n"
            "  plan's kinds of dispatch are first timed in chains (the probe, GPU timestamps) and the token\n"
            "  composed from them: max(their GPU time, the host's recording); --no-probe, a --calibration\n"
            "  FILE or no timestamps: the static model. --ctx N: the context the plans are built for (as\n"
            "  `run --ctx`; default the model's, at most 4096, as `run`).\n"
            "  --sim ENV (cartpole, acrobot, mountaincar, finsim, rastrigin): every strategy (fused,\n"
            "  fused-wide, chunked:K for --chunks (10,50), per-step) x GA evolve (split, thread, wide)\n"
            "  built and its generation's dispatches predicted; --episode-steps T: the steps a SIMD group\n"
            "  runs per episode (default L: a trained population; `sim bench` reports group_steps);\n"
            "  --longest-steps M: the population's longest episode (default L; sim bench's longest_steps);\n"
            "  --gens-per-submit G: generations recorded per submit (10, as sim bench). The kernels are\n"
            "  first timed once on this device at this population (the probe, GPU timestamps: about a\n"
            "  second on lavapipe once its shaders are cached) and every plan is composed from them;\n"
            "  --no-probe, a --calibration FILE (another device) or no timestamps: the static model\n"
            "  from the calibration alone.\n"
            "  --table: the article's decision table, each rule predicted and measured on this device.\n"
            "  The calibration comes from the cache (measured first when missing or unusable), or from\n"
            "  --calibration FILE (or $WGFUSE_CALIBRATION): a device description for any adapter.\n"
            "  `run`, `llm bench` and `serve` take --plan auto [--autotune]; `sim train` and `sim bench`\n"
            "  take --strategy auto [--autotune] (docs/advise.md).\n");
}

static void print_calibration(const struct wgf_calibration *c, bool json)
{
    if (json) {
        char          *text = NULL;
        struct wgf_err err  = {0};
        if (wgf_calibration_json(c, &text, &err) == WGF_OK) {
            for (char *p = text; *p; p++)
                if (*p == '\n') *p = ' ';
            printf("%s\n", text);
        }
        free(text);
        return;
    }
    printf("adapter: %s (%s, %s)\nWebGPU library: %s\ncalibrated %s in %.1f s\n", c->adapter, c->backend, c->driver,
           c->webgpu_lib, c->date, c->seconds);
    printf("per dispatch (us):");
    for (int m = 0; m < WGF_MODE_COUNT; m++)
        printf(" %s %.3f", wgf_dispatch_mode_name((enum wgf_dispatch_mode)m), c->mode_us[m]);
    printf("\nread bandwidth: %.2f GB/s (one workgroup: %.2f GB/s)\n", c->dev.read_gbps, c->dev.read_gbps_wg);
    printf("f32 FMA rate: %.2f GFLOP/s (one workgroup: %.3f GFLOP/s)\n", c->dev.gflops, c->dev.gflops_wg);
    printf("per dispatch in a replayed schedule: %.3f us at %.0f dispatches, %.3f us at %.0f\n", c->dev.dispatch_us,
           c->dev.len_short, c->dev.dispatch_us_long, c->dev.len_long);
    printf("one workgroup of %.0f streaming a dot product: %.3f GFLOP/s (the serial term)\n", c->dev.serial_wg,
           c->dev.serial_gflops_wg);
    printf("per workgroup launched: %.4f us\n", c->dev.workgroup_us);
    printf("one invocation's dependent FMA chain: %.4f GFLOP/s (the chain term)\n", c->dev.chain_gflops);
    printf("workgroupBarrier: %.2f ns\n", c->dev.barrier_ns);
    if (c->dev.subgroup_ns > 0) printf("subgroupAdd: %.2f ns\n", c->dev.subgroup_ns);
    else printf("subgroupAdd: not measured (no subgroups)\n");
}

/* the crossover batch of every projection of the ops plan, and of the paper's groups: the
 * attention projections (q, k, v, o) and the MLP (gate, up, down), each as its dispatches */
static json_t *crossovers(const struct wgf_calibration *c, const struct wgf_llm_advice *a, uint32_t batch, bool print)
{
    json_t *arr = json_array();
    struct {
        const char *name;
        const char *keys[4];
    } groups[2] = {{"attention projections", {"_q", "_k", "_v", "_o"}}, {"mlp", {"gate", "up", "down", NULL}}};
    if (print && a->n_ops)
        printf("\ncrossover batch B* per operation (ops plan, %.3f us/dispatch): B*_dispatch = its dispatches' cost / "
               "FLOPs time of one token, B*_bytes = bytes time / FLOPs time, B* = the larger\n%-28s %6s %10s %10s %10s "
               "%8s %8s %12s %9s\n",
               a->ops_dispatch_us, "operation", "disp", "MB", "MFLOP", "B*_disp", "B*_bytes", "B*", "us at batch",
               "bound");
    for (uint32_t k = 0; k < a->n_ops + 2; k++) {
        struct wgf_step_cost cost = {0};
        uint32_t             disp = 0;
        const char          *name;
        if (k < a->n_ops) {
            cost = a->ops[k].cost, disp = 1, name = a->ops[k].label;
        } else {
            name = groups[k - a->n_ops].name;
            for (uint32_t i = 0; i < a->n_ops; i++)
                for (int g = 0; g < 4 && groups[k - a->n_ops].keys[g]; g++)
                    if (strstr(a->ops[i].label, groups[k - a->n_ops].keys[g])) {
                        cost.bytes_read += a->ops[i].cost.bytes_read;
                        cost.bytes_written += a->ops[i].cost.bytes_written;
                        cost.flops += a->ops[i].cost.flops;
                        disp++;
                        break;
                    }
            if (!disp) continue;
        }
        struct wgf_cost_crossover x;
        wgf_cost_crossover(&c->dev, cost, disp, a->ops_dispatch_us, batch, &x);
        double mb = (double)(cost.bytes_read + cost.bytes_written) * 1e-6, mf = (double)cost.flops * 1e-6;
        if (print)
            printf("%-28s %6u %10.3f %10.3f %10.1f %8.1f %8.1f %12.3f %9s\n", name, disp, mb, mf, x.b_dispatch,
                   x.b_bytes, x.b_star, x.us_at_b, wgf_cost_bound_name(x.bound_at_b));
        json_array_append_new(arr, json_pack("{s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:i, s:f, s:s}", "operation", name,
                                             "dispatches", (int)disp, "mb", mb, "mflop", mf, "b_dispatch", x.b_dispatch,
                                             "b_bytes", x.b_bytes, "b_star", x.b_star, "batch", (int)batch, "us_at_batch",
                                             x.us_at_b, "bound_at_batch", wgf_cost_bound_name(x.bound_at_b)));
    }
    return arr;
}

static void print_advice(const char *name, const struct wgf_calibration *c, const struct wgf_llm_advice *a, bool json,
                         uint32_t batch)
{
    if (json) {
        json_t *plans = json_array();
        for (uint32_t i = 0; i < a->n; i++) {
            const struct wgf_llm_plan_prediction *r = &a->row[i];
            json_array_append_new(
                plans, json_pack("{s:s, s:o, s:s, s:i, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "plan", r->plan, "skipped",
                                 r->skipped[0] ? json_string(r->skipped) : json_false(), "weights",
                                 r->weights ? r->weights : "", "dispatches", (int)r->pred.dispatches, "bytes",
                                 (json_int_t)r->pred.bytes, "flops", (json_int_t)r->pred.flops, "predicted_ms_per_token",
                                 r->pred.total_us * 1e-3, "dispatch_bound_share", wgf_cost_dispatch_share(&r->pred),
                                 "bytes_bound_ms", r->pred.bound_us[WGF_BOUND_BYTES] * 1e-3, "flops_bound_ms",
                                 r->pred.bound_us[WGF_BOUND_FLOPS] * 1e-3, "serial_bound_ms",
                                 r->pred.bound_us[WGF_BOUND_SERIAL] * 1e-3, "dispatch_us", r->pred.dispatch_us));
            json_t *row = json_array_get(plans, json_array_size(plans) - 1);
            json_object_set_new(row, "model", json_string(r->probed ? "probe" : "static"));
            if (r->probed) {
                json_t *kinds = json_array();
                for (uint32_t k = 0; k < r->probe.listed; k++)
                    json_array_append_new(kinds, json_pack("{s:s, s:i, s:f}", "label", r->probe.kind[k].label, "n",
                                                           (int)r->probe.kind[k].n, "us", r->probe.kind[k].us));
                json_object_set_new(row, "probe",
                                    json_pack("{s:f, s:f, s:f, s:f, s:f, s:i, s:f, s:i, s:f, s:o}", "gpu_ms",
                                              r->probe.gpu_us * 1e-3, "host_ms", r->probe.host_us * 1e-3, "step_pass_ms",
                                              r->probe.step_us * 1e-3, "step_pass_first_ms", r->probe.step_first_us * 1e-3,
                                              "warm_s", r->probe.warm_s, "reps", (int)r->probe.reps,
                                              "static_ms", r->static_us * 1e-3, "kinds", (int)r->probe.kinds,
                                              "seconds", r->probe.seconds, "per_kind", kinds));
            }
            else if (r->probe_error[0])
                json_object_set_new(row, "probe_error", json_string(r->probe_error));
        }
        json_t *root = json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:o, s:s, s:s, s:o}", "advise", "llm", "model", name,
                                 "adapter", c->adapter, "dispatch_us", c->dev.dispatch_us, "read_gbps", c->dev.read_gbps,
                                 "gflops", c->dev.gflops, "plans", plans, "recommended",
                                 a->best >= 0 ? a->row[a->best].plan : "", "reason", a->reason, "crossover",
                                 crossovers(c, a, batch, false));
        char *text = root ? json_dumps(root, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;
        if (text) printf("%s\n", text);
        free(text);
        json_decref(root);
        return;
    }
    printf("model %s on %s (%.2f us/dispatch, %.1f GB/s read, %.1f GFLOP/s)\n", name, c->adapter, c->dev.dispatch_us,
           c->dev.read_gbps, c->dev.gflops);
    printf("%-6s %-7s %10s %12s %14s %10s %7s\n", "plan", "weights", "dispatches", "MB/token", "predicted ms", "dispatch%",
           "model");
    for (uint32_t i = 0; i < a->n; i++) {
        const struct wgf_llm_plan_prediction *r = &a->row[i];
        if (r->skipped[0]) {
            printf("%-6s skipped: %s\n", r->plan, r->skipped);
            continue;
        }
        printf("%-6s %-7s %10u %12.2f %14.4f %9.1f%% %7s\n", r->plan, r->weights ? r->weights : "-", r->pred.dispatches,
               (double)r->pred.bytes * 1e-6, r->pred.total_us * 1e-3, 100.0 * wgf_cost_dispatch_share(&r->pred),
               r->probed ? "probe" : "static");
        if (r->probed)
            printf("       probe: GPU %.4f ms (%u kinds of dispatch in chains), host %.4f ms, whole step in one pass "
                   "%.4f ms; static model %.4f ms\n",
                   r->probe.gpu_us * 1e-3, r->probe.kinds, r->probe.host_us * 1e-3, r->probe.step_us * 1e-3,
                   r->static_us * 1e-3);
        else if (r->probe_error[0])
            printf("       no probe (%s): the static model\n", r->probe_error);
    }
    printf("recommendation: %s\n", a->reason);
    json_decref(crossovers(c, a, batch, true));
}

static json_t *probe_json(const struct wgf_sim_probe *p)
{
    if (!p->ok) return json_null();
    json_t *o = json_pack("{s:b, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "resident", p->resident,
                     "reset_us", p->reset_us, "chunk_us", p->chunk_us, "step_us", p->step_us, "wide_us", p->wide_us,
                     "wide_step_us", p->wide_step_us, "wide_knee_steps", p->wide_knee, "wide_tail_us", p->wide_tail_us,
                     "evolve_thread_us", p->evolve_us[WGF_SIM_EVOLVE_THREAD], "evolve_wide_us",
                     p->evolve_us[WGF_SIM_EVOLVE_WIDE], "evolve_split_us", p->evolve_us[WGF_SIM_EVOLVE_SPLIT],
                     "host_us", p->host_us, "submit_us", p->submit_us, "seconds", p->seconds);
    json_t *host = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}", "record_short_us", p->record_short_us, "record_long_us",
                             p->record_long_us, "wall_short_us", p->wall_short_us, "wall_long_us", p->wall_long_us,
                             "gpu_short_us", p->gpu_short_us, "gpu_long_us", p->gpu_long_us);
    if (o) json_object_set_new(o, "pass_us", json_real(p->pass_us));
    if (o) json_object_set_new(o, "dead_us", json_real(p->dead_us));
    if (o) json_object_set_new(o, "chunk_first_us", json_real(p->chunk_first_us));
    if (o && host) json_object_set_new(o, "host_generations", host);
    else json_decref(host);
    return o;
}

static void print_sim(const char *name, const struct wgf_sim_config *cfg, uint32_t T, const struct wgf_calibration *c,
                      const struct wgf_sim_probe *probe, const struct wgf_sim_advice *a, bool json)
{
    if (json) {
        json_t *rows = json_array();
        for (uint32_t i = 0; i < a->n; i++) {
            const struct wgf_sim_plan_prediction *r = &a->row[i];
            char                                  spec[24];
            wgf_sim_strategy_spec(r->strategy, r->chunk, spec, sizeof spec);
            json_t *row = json_pack("{s:s, s:s, s:s, s:o, s:i, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "plan", r->name,
                                "strategy", spec, "evolve", wgf_sim_evolve_name(r->evolve), "skipped",
                                r->skipped[0] ? json_string(r->skipped) : json_false(), "dispatches",
                                (int)r->pred.dispatches, "bytes", (json_int_t)r->pred.bytes, "flops",
                                (json_int_t)r->pred.flops, "predicted_ms_per_generation", r->pred.total_us * 1e-3,
                                "dispatch_bound_share", wgf_cost_dispatch_share(&r->pred), "bytes_bound_ms",
                                r->pred.bound_us[WGF_BOUND_BYTES] * 1e-3, "flops_bound_ms",
                                r->pred.bound_us[WGF_BOUND_FLOPS] * 1e-3, "serial_bound_ms",
                                r->pred.bound_us[WGF_BOUND_SERIAL] * 1e-3, "dispatch_us", r->pred.dispatch_us);
            if (row) {
                json_object_set_new(row, "model", json_string(r->probed ? "probe" : "static"));
                if (r->probed) {
                    json_object_set_new(row, "episode_ms", json_real(r->episode_us * 1e-3));
                    json_object_set_new(row, "reset_evolve_ms", json_real(r->evolve_us * 1e-3));
                    json_object_set_new(row, "host_ms", json_real(r->host_us * 1e-3));
                }
                json_array_append_new(rows, row);
            }
        }
        const struct wgf_sim_plan_prediction *b = a->best >= 0 ? &a->row[a->best] : NULL;
        char                                  spec[24] = "";
        if (b) wgf_sim_strategy_spec(b->strategy, b->chunk, spec, sizeof spec);
        json_t *root = json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:s, s:o, s:s, s:s, s:s, s:s}", "advise", "sim", "workload",
                                 name, "pop", cfg->pop, "steps", cfg->max_steps, "hidden", cfg->hidden, "episode_steps",
                                 (int)T, "adapter", c->adapter, "plans", rows, "recommended", b ? b->name : "",
                                 "recommended_strategy", spec, "recommended_evolve",
                                 b ? wgf_sim_evolve_name(b->evolve) : "", "reason", a->reason);
        if (root) json_object_set_new(root, "probe", probe_json(probe));
        char *text = root ? json_dumps(root, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;
        if (text) printf("%s\n", text);
        free(text);
        json_decref(root);
        return;
    }
    printf("sim %s, population %d, episodes of %d steps (%u run per SIMD group), on %s\n", name, cfg->pop,
           cfg->max_steps, T, c->adapter);
    if (probe->ok)
        printf("kernels measured (us): reset %.2f, episode dispatch %.2f + %.3f per step, fused-wide %.2f + %.3f per "
               "step (%.3f past step %.0f), after the episodes end %.2f, evolve split %.2f thread %.2f wide %.2f; host "
               "%.2f per dispatch + %.2f per submit%s\n",
               probe->reset_us, probe->chunk_us, probe->step_us, probe->wide_us, probe->wide_step_us,
               probe->wide_tail_us, probe->wide_knee, probe->dead_us,
               probe->evolve_us[WGF_SIM_EVOLVE_SPLIT], probe->evolve_us[WGF_SIM_EVOLVE_THREAD],
               probe->evolve_us[WGF_SIM_EVOLVE_WIDE], probe->host_us, probe->submit_us,
               probe->resident ? "" : " (a CPU adapter)");
    printf("%-22s %10s %12s %14s %10s\n", "strategy/evolve", "dispatches", "MFLOP", "predicted ms", "dispatch%");
    for (uint32_t i = 0; i < a->n; i++) {
        const struct wgf_sim_plan_prediction *r = &a->row[i];
        if (r->skipped[0]) {
            printf("%-22s skipped: %s\n", r->name, r->skipped);
            continue;
        }
        printf("%-22s %10u %12.3f %14.4f %9.1f%%\n", r->name, r->pred.dispatches, (double)r->pred.flops * 1e-6,
               r->pred.total_us * 1e-3, 100.0 * wgf_cost_dispatch_share(&r->pred));
    }
    printf("recommendation: %s\n", a->reason);
}

static bool parse_u32(const char *flag, const char *v, long lo, long hi, uint32_t *out)
{
    long x;
    if (!wgf_cli_parse_long(flag, v, lo, hi, &x)) return false;
    *out = (uint32_t)x;
    return true;
}

int wgf_cmd_advise(int argc, char **argv)
{
    bool                   calibrate = false, recal = false, quick = false, json = false, table = false, no_probe = false;
    const char            *model = NULL, *shape = NULL, *file = NULL, *simw = NULL, *chunks = NULL;
    uint32_t               steps = 0, pop = 4096, hidden = 0, ep_steps = 0, longest = 0, batch = 1, gps = 10, ctx_len = 0;
    struct wgf_cli_backend bk = {0};
    const char            *sim_flag = NULL, *llm_flag = NULL; /* a flag of one form only, for the check below */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wgf_cli_is_help(a)) {
            usage(stdout);
            return 0;
        }
        int r = wgf_cli_backend_flag(&bk, argc, argv, &i);
        if (r == 2) return 2;
        if (r == 1) {
            if (bk.name || bk.plan || bk.autotune) {
                wgf_cli_error("advise: --backend, --plan and --autotune do not apply (every plan is predicted)");
                return 2;
            }
            llm_flag = a;
            continue;
        }
        const char *v = NULL;
        if (!strcmp(a, "--calibrate")) calibrate = true;
        else if (!strcmp(a, "--recalibrate")) recal = true;
        else if (!strcmp(a, "--quick")) quick = true;
        else if (!strcmp(a, "--json")) json = true;
        else if (!strcmp(a, "--table")) table = true;
        else if (!strcmp(a, "--no-probe")) no_probe = true;
        else if (!strcmp(a, "--llm") || !strcmp(a, "--shape") || !strcmp(a, "--calibration") || !strcmp(a, "--sim") ||
                 !strcmp(a, "--chunks")) {
            if (!(v = wgf_cli_flag_value(argc, argv, &i))) return 2;
            if (!strcmp(a, "--chunks")) sim_flag = a;
            *(!strcmp(a, "--llm")     ? &model
              : !strcmp(a, "--shape") ? &shape
              : !strcmp(a, "--sim")   ? &simw
              : !strcmp(a, "--chunks") ? &chunks
                                      : &file) = v;
        } else if (!strcmp(a, "--steps") || !strcmp(a, "--pop") || !strcmp(a, "--hidden") ||
                   !strcmp(a, "--episode-steps") || !strcmp(a, "--longest-steps") || !strcmp(a, "--batch") ||
                   !strcmp(a, "--gens-per-submit") || !strcmp(a, "--ctx")) {
            if (!(v = wgf_cli_flag_value(argc, argv, &i))) return 2;
            bool ok = !strcmp(a, "--steps")           ? parse_u32(a, v, 1, 1000000, &steps)
                      : !strcmp(a, "--pop")           ? parse_u32(a, v, 2, 4000000, &pop)
                      : !strcmp(a, "--hidden")        ? parse_u32(a, v, 1, 64, &hidden)
                      : !strcmp(a, "--episode-steps") ? parse_u32(a, v, 1, 1000000, &ep_steps)
                      : !strcmp(a, "--longest-steps") ? parse_u32(a, v, 1, 1000000, &longest)
                      : !strcmp(a, "--batch")         ? parse_u32(a, v, 1, 1000000, &batch)
                      : !strcmp(a, "--ctx")           ? parse_u32(a, v, 1, 1u << 24, &ctx_len)
                                                      : parse_u32(a, v, 1, 100000, &gps);
            if (!ok) return 2;
            *(!strcmp(a, "--batch") || !strcmp(a, "--ctx") ? &llm_flag : &sim_flag) = a;
        } else {
            wgf_cli_error("advise: unknown flag '%s' (see wgfuse advise --help)", a);
            return 2;
        }
    }
    int modes = !!model + !!shape + !!simw + table;
    if ((!calibrate && modes != 1) || modes > 1) {
        wgf_cli_error("advise: give --calibrate, or exactly one of --llm MODEL, --shape NAME (%s), --sim ENV, --table",
                      wgf_llm_synth_shapes());
        return 2;
    }
    /* a flag of the other form would be ignored without a word (`--sim cartpole --batch 8`) */
    if (sim_flag && !simw) return wgf_cli_error("advise: %s applies to --sim ENV", sim_flag), 2;
    if (llm_flag && !model && !shape) return wgf_cli_error("advise: %s applies to --llm MODEL or --shape NAME", llm_flag), 2;
    if (calibrate && file) {
        wgf_cli_error("advise: --calibrate measures this adapter; --calibration FILE reads a description instead");
        return 2;
    }
    struct wgf_sim_config sc = {0};
    int                   chunk_v[8], n_chunks = 0;
    if (simw) {
        enum wgf_sim_workload w;
        struct wgf_err        e = {0};
        if (wgf_sim_workload_parse(simw, &w, &e)) {
            wgf_cli_error("advise --sim: %s", e.msg);
            return 2;
        }
        sc           = wgf_sim_config_default(w);
        sc.pop       = (int)pop;
        sc.max_steps = (int)steps;
        sc.hidden    = (int)hidden;
        sc.ga.elites = sc.pop > 64 ? sc.pop / 64 : 1; /* as `sim bench` */
        if (chunks) {
            char       *copy = NULL;
            const char *items[8];
            int         n = wgf_cli_split_list("--chunks", chunks, &copy, items, 8);
            for (int k = 0; k < n; k++) {
                long x;
                if (!wgf_cli_parse_long("--chunks", items[k], 2, 1000000, &x)) {
                    free(copy);
                    return 2;
                }
                chunk_v[n_chunks++] = (int)x;
            }
            free(copy);
            if (n < 0) return 2;
        }
    }
    struct wgf_llm_model *m = NULL;
    int                   rc;
    if ((model || shape) && (rc = wgf_cli_llm_model(model, shape, &bk, &m))) return rc;
    struct wgf_gpu_options go  = wgf_cli_gpu_options();
    struct wgf_err         err = {0};
    wgf_ctx               *ctx = NULL;
    if (wgf_ctx_create(&go, &ctx, &err) != WGF_OK) {
        wgf_cli_error("advise: %s", err.msg);
        wgf_llm_model_free(m);
        return 1;
    }
    struct wgf_calibration cal;
    rc = wgf_cli_calibration(ctx, file, calibrate || recal, quick, &cal);
    if (!rc && calibrate && modes == 0) print_calibration(&cal, json);
    if (!rc && m) {
        struct wgf_llm_backend_options bo = {.weights_f32  = bk.weights_f32,
                                             .no_subgroups = bk.no_subgroups,
                                             .act_q8       = bk.act_q8,
                                             .act_i8x3     = bk.act_i8x3,
                                             .n_ctx        = ctx_len ? ctx_len : wgf_cli_default_ctx(&m->cfg)};
        struct wgf_llm_advice          a;
        if (ctx_len) wgf_cli_note_ctx(m, "--ctx", ctx_len);
        if (wgf_llm_advise(ctx, m, &bo, &cal.dev, !no_probe && wgf_cli_calibration_local(file), &a, &err)) {
            wgf_cli_error("advise: %s", err.msg);
            rc = 1;
        } else {
            print_advice(model ? model : shape, &cal, &a, json, batch);
            rc = a.best < 0;
        }
    }
    if (!rc && simw) {
        /* the probe measures this adapter: not for a description of another (--calibration) */
        struct wgf_sim_probe probe = {0};
        if (!no_probe && wgf_cli_calibration_local(file)) {
            if (wgf_sim_probe_run(ctx, &sc, &probe, &err) == WGF_OK) {
                if (!wgf_cli.quiet) fprintf(stderr, "advise: kernels probed on this device in %.2f s\n", probe.seconds);
            } else if (!wgf_cli.quiet)
                fprintf(stderr, "advise: no kernel probe (%s): the static model\n", err.msg);
        }
        struct wgf_sim_advise_options o = {.episode_steps   = ep_steps,
                                           .longest_steps   = longest,
                                           .probe           = &probe,
                                           .gens_per_submit = gps,
                                           .chunks          = n_chunks ? chunk_v : NULL,
                                           .n_chunks        = n_chunks};
        struct wgf_sim_advice        *a = malloc(sizeof *a);
        if (!a) {
            wgf_cli_error("advise: out of memory");
            rc = 1;
        } else if (wgf_sim_advise(ctx, &sc, &cal.dev, &o, a, &err)) {
            wgf_cli_error("advise: %s", err.msg);
            rc = 1;
        } else {
            const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(sc.workload);
            if (sc.max_steps <= 0) sc.max_steps = wi->max_steps;
            if (sc.hidden <= 0) sc.hidden = wi->hidden;
            uint32_t T = ep_steps && ep_steps < (uint32_t)sc.max_steps ? ep_steps : (uint32_t)sc.max_steps;
            print_sim(simw, &sc, T, &cal, &probe, a, json);
            rc = a->best < 0;
        }
        free(a);
    }
    if (!rc && table) rc = wgf_cli_advise_table(ctx, &cal, quick, json, wgf_cli_calibration_local(file));
    wgf_llm_model_free(m);
    wgf_ctx_free(ctx);
    return rc;
}
