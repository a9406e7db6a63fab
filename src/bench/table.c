/* wgfuse bench — rendering results as a terminal table, JSON and CSV.
 *
 * Every renderer returns malloc'd text (the CLI decides where it goes: stdout, or a file
 * written to a temp name and renamed). Wrong kernels print as WRONG with the check's detail
 * and never with a time. Outliers are counted in every row. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wgfuse/bench.h"

/* Paper anchors ("Characterizing WebGPU Dispatch Overhead for LLM Inference"), printed next
 * to the local numbers so a reader can compare without looking them up. */
#define WGF__PAPER_SEQ_US    23.8  /* Dawn/Vulkan, RTX 5090, sequential method           */
#define WGF__PAPER_SINGLE_US 496.8 /* same, single-op                                    */

static enum wgf_status wgf__mem_open(FILE **f, char **buf, size_t *len, struct wgf_err *err)
{
    *buf = NULL;
    *f   = open_memstream(buf, len);
    return *f ? WGF_OK : wgf_fail(err, WGF_ERR_NOMEM, "bench: open_memstream");
}

/* buf is read after fclose: open_memstream publishes the pointer only then. */
static enum wgf_status wgf__mem_close(FILE *f, char **buf, char **out, struct wgf_err *err)
{
    if (fclose(f) != 0 || !*buf) {
        free(*buf);
        return wgf_fail(err, WGF_ERR_NOMEM, "bench: rendering failed");
    }
    *out = *buf;
    return WGF_OK;
}

/* "12.3 [12.1, 12.6]" */
static void wgf__ci(FILE *f, const struct wgf_stats *s, int w)
{
    char b[64];
    snprintf(b, sizeof b, "%.2f [%.2f, %.2f]", s->median, s->ci_lo, s->ci_hi);
    fprintf(f, "%-*s", w, b);
}

/* ---- dispatch ----------------------------------------------------------------------------- */
enum wgf_status wgf_bench_dispatch_table(const struct wgf_dispatch_report *r, char **out, struct wgf_err *err)
{
    FILE           *f;
    char           *buf;
    size_t          len;
    enum wgf_status s = wgf__mem_open(&f, &buf, &len, err);
    if (s) return s;
    const struct wgf_dispatch_opts *o = &r->opts;
    fprintf(f, "wgfuse bench dispatch: %s (%s, %s), driver %s, %s\n", r->adapter, r->backend, r->type, r->driver,
            r->date);
    fprintf(f, "sequential: slope of wall time vs N for N in {");
    for (int i = 0; i < o->n_ns; i++) fprintf(f, "%s%d", i ? "," : "", o->ns[i]);
    fprintf(f, "}, %d sweeps after %d warm-up; single-op: 1 dispatch + submit + wait, %d samples.\n", o->reps,
            o->warmup, o->single_reps);
    fprintf(f, "times in us; [95%% CI of the median, bootstrap]; CV of the per-sweep slopes; outl = Tukey outliers "
               "(kept).\n");
    if (!r->complete) fprintf(f, "INCOMPLETE: the run was stopped early; only the modes listed were measured.\n");
    fprintf(f, "\n");
    fprintf(f, "%-5s %-12s %-26s %6s %4s %10s %7s   %-26s %6s %4s\n", "dtype", "mode", "per-dispatch (sequential)",
            "CV", "outl", "fit resid", "r2", "single-op (1 dispatch)", "CV", "outl");
    for (int dt = 0; dt < WGF_BENCH_DTYPES; dt++) {
        for (int m = 0; m < WGF_MODE_COUNT; m++) {
            const struct wgf_dispatch_mode_result *x = &r->mode[dt][m];
            if (!x->ran) continue;
            fprintf(f, "%-5s %-12s ", dt ? "f16" : "f32", wgf_dispatch_mode_name((enum wgf_dispatch_mode)m));
            wgf__ci(f, &x->per_dispatch_us, 26);
            fprintf(f, " %5.1f%% %4d %10.2f %7.4f   ", 100 * x->per_dispatch_us.cv, x->per_dispatch_us.n_outliers,
                    x->fit.resid_rms, x->fit.r2);
            wgf__ci(f, &x->single_op_us, 26);
            fprintf(f, " %5.1f%% %4d\n", 100 * x->single_op_us.cv, x->single_op_us.n_outliers);
        }
    }
    if (r->f16_skip[0]) fprintf(f, "SKIP f16: %s\n", r->f16_skip);
    else fprintf(f, "f16 kernel: %s%s\n", r->f16_kernel,
                 strcmp(r->f16_kernel, "tiny_f16") == 0 ? " (shader-f16)" : " (halves packed in u32, f32 math: no shader-f16 needed)");
    if (isfinite(r->single_over_sequential))
        fprintf(f, "\nsingle-op / sequential (f32: wait_each single-op over one_pass slope): %.1fx  (%.2f / %.2f us)\n",
                r->single_over_sequential, r->single_op_us, r->sequential_us);
    else
        fprintf(f, "\nsingle-op / sequential: n/a (one_pass slope %.2f us: noise swamped the per-dispatch cost; "
                   "rerun with more --reps on a quieter machine)\n",
                r->sequential_us);
    fprintf(f, "paper (Dawn/Vulkan, RTX 5090): %.1fx  (%.1f / %.1f us)\n", WGF__PAPER_SINGLE_US / WGF__PAPER_SEQ_US,
            WGF__PAPER_SINGLE_US, WGF__PAPER_SEQ_US);
    const struct wgf_dispatch_mode_result *one = &r->mode[0][WGF_MODE_ONE_PASS];
    if (one->ran) {
        fprintf(f, "one_pass fit: t(N) = %.1f us + %.3f us x N (slope 95%% t-interval +-%.3f), max |resid| %.1f us\n",
                one->fit.intercept, one->fit.slope, one->fit.slope_ci, one->fit.resid_max);
        fprintf(f, "median wall time per N (one_pass):");
        for (int i = 0; i < one->n_points; i++) fprintf(f, " %d:%.0f", one->ns[i], one->t_us[i]);
        fprintf(f, " us\n");
    }
    if (r->has_gpu_time) {
        fprintf(f, "GPU timestamps: pass holding one dispatch ");
        wgf__ci(f, &r->gpu_pass_us, 0);
        fprintf(f, " us; one pass of %d dispatches, per dispatch ", o->ns[o->n_ns - 1]);
        wgf__ci(f, &r->gpu_amortized_us, 0);
        fprintf(f, " us\n");
        if (r->gpu_time_note[0]) fprintf(f, "  %s\n", r->gpu_time_note);
    } else fprintf(f, "SKIP gpu timestamps: %s\n", r->gpu_time_skip);
    if (r->has_calls) {
        const struct wgf_call_breakdown *c = &r->calls;
        fprintf(f, "per-call CPU cost (us, %d reps): encoder create %.2f, pass begin %.2f, set pipeline %.2f, "
                   "set bind group %.2f, dispatch %.2f, pass end %.2f, finish %.2f, submit %.2f; total %.2f\n",
                c->reps, c->encoder_create_us, c->pass_begin_us, c->set_pipeline_us, c->set_bind_group_us,
                c->dispatch_us, c->pass_end_us, c->finish_us, c->submit_us, c->total_us);
    } else fprintf(f, "SKIP per-call breakdown: %s\n", r->calls_skip);
    return wgf__mem_close(f, &buf, out, err);
}

static json_t *wgf__stats_json(const struct wgf_stats *s)
{
    return json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:i}", "n", s->n, "median", s->median,
                     "ci95_lo", s->ci_lo, "ci95_hi", s->ci_hi, "mean", s->mean, "min", s->min, "max", s->max,
                     "stddev", s->stddev, "cv", s->cv, "q1", s->q1, "q3", s->q3, "outliers", s->n_outliers);
}

/* json_real rejects NaN/inf: write null for those. */
static json_t *wgf__num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static enum wgf_status wgf__json_out(json_t *root, char **out, struct wgf_err *err)
{
    if (!root) return wgf_fail(err, WGF_ERR_NOMEM, "bench: JSON");
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!text) return wgf_fail(err, WGF_ERR_NOMEM, "bench: JSON dump");
    size_t n   = strlen(text);
    char  *res = malloc(n + 2);
    if (!res) {
        free(text);
        return wgf_fail(err, WGF_ERR_NOMEM, "bench: JSON");
    }
    memcpy(res, text, n);
    res[n] = '\n';
    res[n + 1] = 0;
    free(text);
    *out = res;
    return WGF_OK;
}

enum wgf_status wgf_bench_dispatch_json(const struct wgf_dispatch_report *r, char **out, struct wgf_err *err)
{
    json_t *root = json_object(), *modes = json_array(), *ns = json_array();
    if (!root || !modes || !ns) {
        json_decref(root);
        json_decref(modes);
        json_decref(ns);
        return wgf_fail(err, WGF_ERR_NOMEM, "bench: JSON");
    }
    json_object_set_new(root, "bench", json_string("dispatch"));
    json_object_set_new(root, "complete", json_boolean(r->complete));
    json_object_set_new(root, "adapter", json_string(r->adapter));
    json_object_set_new(root, "backend", json_string(r->backend));
    json_object_set_new(root, "type", json_string(r->type));
    json_object_set_new(root, "driver", json_string(r->driver));
    json_object_set_new(root, "date", json_string(r->date));
    for (int i = 0; i < r->opts.n_ns; i++) json_array_append_new(ns, json_integer(r->opts.ns[i]));
    json_object_set_new(root, "ns", ns);
    json_object_set_new(root, "reps", json_integer(r->opts.reps));
    json_object_set_new(root, "warmup", json_integer(r->opts.warmup));
    json_object_set_new(root, "single_reps", json_integer(r->opts.single_reps));
    for (int dt = 0; dt < WGF_BENCH_DTYPES; dt++)
        for (int m = 0; m < WGF_MODE_COUNT; m++) {
            const struct wgf_dispatch_mode_result *x = &r->mode[dt][m];
            if (!x->ran) continue;
            json_t *pts = json_array();
            for (int i = 0; i < x->n_points; i++)
                json_array_append_new(pts, json_pack("{s:i, s:f}", "n", x->ns[i], "median_us", x->t_us[i]));
            json_array_append_new(
                modes, json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:f, s:f, s:f, s:f, s:f, s:f}, s:o}", "dtype",
                                 dt ? "f16" : "f32", "mode", wgf_dispatch_mode_name((enum wgf_dispatch_mode)m),
                                 "description", wgf_dispatch_mode_desc((enum wgf_dispatch_mode)m), "per_dispatch_us",
                                 wgf__stats_json(&x->per_dispatch_us), "single_op_us",
                                 wgf__stats_json(&x->single_op_us), "fit", "slope_us", x->fit.slope, "intercept_us",
                                 x->fit.intercept, "slope_ci95", x->fit.slope_ci, "r2", x->fit.r2, "resid_rms_us",
                                 x->fit.resid_rms, "resid_max_us", x->fit.resid_max, "points", pts));
        }
    json_object_set_new(root, "modes", modes);
    json_object_set_new(root, "f16_kernel", json_string(r->f16_kernel));
    json_object_set_new(root, "has_shader_f16", json_boolean(r->has_f16));
    json_object_set_new(root, "f16_skip", r->f16_skip[0] ? json_string(r->f16_skip) : json_null());
    json_object_set_new(root, "sequential_us", wgf__num(r->sequential_us));
    json_object_set_new(root, "single_op_us", wgf__num(r->single_op_us));
    json_object_set_new(root, "single_over_sequential", wgf__num(r->single_over_sequential));
    json_object_set_new(root, "paper",
                        json_pack("{s:s, s:f, s:f}", "setup", "Dawn/Vulkan RTX 5090", "sequential_us",
                                  WGF__PAPER_SEQ_US, "single_op_us", WGF__PAPER_SINGLE_US));
    if (r->has_gpu_time)
        json_object_set_new(root, "gpu_time",
                            json_pack("{s:o, s:o, s:o}", "pass_one_dispatch_us", wgf__stats_json(&r->gpu_pass_us),
                                      "amortized_per_dispatch_us", wgf__stats_json(&r->gpu_amortized_us), "note",
                                      r->gpu_time_note[0] ? json_string(r->gpu_time_note) : json_null()));
    else json_object_set_new(root, "gpu_time", json_pack("{s:s}", "skip", r->gpu_time_skip));
    if (r->has_calls) {
        const struct wgf_call_breakdown *c = &r->calls;
        json_object_set_new(root, "call_breakdown_us",
                            json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "reps", c->reps,
                                      "encoder_create", c->encoder_create_us, "pass_begin", c->pass_begin_us,
                                      "set_pipeline", c->set_pipeline_us, "set_bind_group", c->set_bind_group_us,
                                      "dispatch", c->dispatch_us, "pass_end", c->pass_end_us, "finish", c->finish_us,
                                      "submit", c->submit_us, "total", c->total_us));
    } else json_object_set_new(root, "call_breakdown_us", json_pack("{s:s}", "skip", r->calls_skip));
    return wgf__json_out(root, out, err);
}

static void wgf__csv_stats(FILE *f, const char *section, const char *dtype, const char *mode, int n,
                           const struct wgf_stats *s)
{
    fprintf(f, "%s,%s,%s,%d,%.4f,%.4f,%.4f,%.5f,%.4f,%.4f,%d,%d\n", section, dtype, mode, n, s->median, s->ci_lo,
            s->ci_hi, s->cv, s->min, s->max, s->n, s->n_outliers);
}

enum wgf_status wgf_bench_dispatch_csv(const struct wgf_dispatch_report *r, char **out, struct wgf_err *err)
{
    FILE           *f;
    char           *buf;
    size_t          len;
    enum wgf_status s = wgf__mem_open(&f, &buf, &len, err);
    if (s) return s;
    fprintf(f, "section,dtype,mode,n,median_us,ci95_lo,ci95_hi,cv,min_us,max_us,samples,outliers\n");
    for (int dt = 0; dt < WGF_BENCH_DTYPES; dt++)
        for (int m = 0; m < WGF_MODE_COUNT; m++) {
            const struct wgf_dispatch_mode_result *x = &r->mode[dt][m];
            if (!x->ran) continue;
            const char *dn = dt ? "f16" : "f32", *mn = wgf_dispatch_mode_name((enum wgf_dispatch_mode)m);
            wgf__csv_stats(f, "per_dispatch", dn, mn, 0, &x->per_dispatch_us);
            wgf__csv_stats(f, "single_op", dn, mn, 1, &x->single_op_us);
            for (int i = 0; i < x->n_points; i++)
                fprintf(f, "wall_time,%s,%s,%d,%.4f,,,,,,%d,\n", dn, mn, x->ns[i], x->t_us[i], r->opts.reps);
        }
    if (r->has_gpu_time) {
        wgf__csv_stats(f, "gpu_pass", "f32", "pass_each", 1, &r->gpu_pass_us);
        wgf__csv_stats(f, "gpu_amortized", "f32", "one_pass", r->opts.ns[r->opts.n_ns - 1], &r->gpu_amortized_us);
    }
    return wgf__mem_close(f, &buf, out, err);
}

/* ---- fusion ------------------------------------------------------------------------------- */
enum wgf_status wgf_bench_fusion_table(const struct wgf_fusion_result *r, int n, const char *adapter,
                                       const struct wgf_bench_size *size, char **out, struct wgf_err *err)
{
    FILE           *f;
    char           *buf;
    size_t          len;
    enum wgf_status s = wgf__mem_open(&f, &buf, &len, err);
    if (s) return s;
    fprintf(f, "wgfuse bench fusion: size %s (hidden %u, intermediate %u, %u/%u heads, head dim %u), %s\n",
            size->name, size->hidden, size->intermediate, size->n_heads, size->n_kv_heads, size->head_dim,
            adapter ? adapter : "");
    fprintf(f, "us/iter: marginal cost per iteration, (t(2n) - t(n)) / n, median [95%% CI, bootstrap]; speedup = "
               "variant 0 median / this median;\nwall: t(2n) / 2n; GPU: timestamps, same slope. Every variant is checked "
               "against the C reference first, and every timed run after.\n");
    fprintf(f, "paper (wgpu/Vulkan): RMSNorm fusion 1.41x, tiled MLP 1.17x, device argmax +71%%.\n");
    for (int e = 0; e < n; e++)
        if (r[e].interrupted) {
            fprintf(f, "INCOMPLETE: the run was stopped early (from experiment %s on).\n", r[e].name);
            break;
        }
    for (int e = 0; e < n; e++) {
        const struct wgf_fusion_result *x = &r[e];
        fprintf(f, "\n%s: %s\n", x->name, x->what);
        if (!x->ran) {
            fprintf(f, "  SKIP %s: %s\n", x->name, x->skip);
            continue;
        }
        fprintf(f, "  %-20s %5s %7s %-30s %6s %4s %8s %10s %10s  %s\n", "variant", "disp", "submits", "us/iter", "CV",
                "outl", "speedup", "wall/it", "GPU us/it", "check");
        for (int i = 0; i < x->n_variants; i++) {
            const struct wgf_fusion_variant *v = &x->v[i];
            fprintf(f, "  %-20s %5d %7d ", v->name, v->dispatches, v->submits);
            if (!v->correct) {
                fprintf(f, "%-30s %6s %4s %8s %10s %10s  WRONG: %s\n", "-", "-", "-", "-", "-", "-", v->detail);
                continue;
            }
            if (v->us.n) {
                wgf__ci(f, &v->us, 30);
                fprintf(f, " %5.1f%% %4d ", 100 * v->us.cv, v->us.n_outliers);
                if (v->speedup > 0) fprintf(f, "%7.2fx", v->speedup);
                else fprintf(f, "%8s", "-");
                fprintf(f, " %10.2f ", v->us_wall.median);
                if (v->has_gpu) fprintf(f, "%10.2f  ok", v->gpu_us.median);
                else fprintf(f, "%10s  ok", "-");
            } else fprintf(f, "%-30s %6s %4s %8s %10s %10s  ok", "(not timed)", "-", "-", "-", "-", "-");
            fprintf(f, " (%s)\n", v->detail);
        }
    }
    return wgf__mem_close(f, &buf, out, err);
}

enum wgf_status wgf_bench_fusion_json(const struct wgf_fusion_result *r, int n, const char *adapter,
                                      const struct wgf_bench_size *size, char **out, struct wgf_err *err)
{
    json_t *root = json_object(), *exps = json_array();
    if (!root || !exps) {
        json_decref(root);
        json_decref(exps);
        return wgf_fail(err, WGF_ERR_NOMEM, "bench: JSON");
    }
    json_object_set_new(root, "bench", json_string("fusion"));
    bool complete = true;
    for (int e = 0; e < n; e++) complete = complete && !r[e].interrupted;
    json_object_set_new(root, "complete", json_boolean(complete));
    json_object_set_new(root, "adapter", json_string(adapter ? adapter : ""));
    json_object_set_new(root, "size", json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:f}", "name", size->name,
                                                "hidden", (int)size->hidden, "intermediate", (int)size->intermediate,
                                                "n_heads", (int)size->n_heads, "n_kv_heads", (int)size->n_kv_heads,
                                                "head_dim", (int)size->head_dim, "vocab", (int)size->vocab,
                                                "softmax_len", (int)size->softmax_len, "eps", (double)size->eps));
    for (int e = 0; e < n; e++) {
        const struct wgf_fusion_result *x  = &r[e];
        json_t                         *vs = json_array();
        for (int i = 0; i < x->n_variants; i++) {
            const struct wgf_fusion_variant *v = &x->v[i];
            json_t *jv = json_pack("{s:s, s:i, s:i, s:b, s:o, s:o, s:s}", "name", v->name, "dispatches", v->dispatches,
                                   "submits", v->submits, "correct", v->correct, "max_abs_err",
                                   wgf__num(v->max_abs_err), "tol", wgf__num(v->tol), "check", v->detail);
            if (v->correct && v->us.n) {
                json_object_set_new(jv, "us_per_iter", wgf__stats_json(&v->us));
                json_object_set_new(jv, "speedup", wgf__num(v->speedup));
                json_object_set_new(jv, "wall_us_per_iter", wgf__stats_json(&v->us_wall));
                if (v->has_gpu) json_object_set_new(jv, "gpu_us_per_iter", wgf__stats_json(&v->gpu_us));
            }
            json_array_append_new(vs, jv);
        }
        json_t *je = json_pack("{s:s, s:s, s:b, s:i, s:o}", "experiment", x->name, "what", x->what, "ran", x->ran,
                               "iters", x->iters, "variants", vs);
        if (!x->ran) json_object_set_new(je, "skip", json_string(x->skip));
        json_array_append_new(exps, je);
    }
    json_object_set_new(root, "experiments", exps);
    json_object_set_new(root, "paper", json_pack("{s:f, s:f, s:f}", "rmsnorm_fusion_speedup", 1.41,
                                                 "tiled_mlp_speedup", 1.17, "device_argmax_gain", 0.71));
    return wgf__json_out(root, out, err);
}

enum wgf_status wgf_bench_fusion_csv(const struct wgf_fusion_result *r, int n, char **out, struct wgf_err *err)
{
    FILE           *f;
    char           *buf;
    size_t          len;
    enum wgf_status s = wgf__mem_open(&f, &buf, &len, err);
    if (s) return s;
    fprintf(f, "experiment,variant,dispatches,submits,correct,max_abs_err,median_us,ci95_lo,ci95_hi,cv,min_us,max_"
               "us,samples,outliers,speedup,wall_median_us,gpu_median_us\n");
    for (int e = 0; e < n; e++)
        for (int i = 0; i < r[e].n_variants; i++) {
            const struct wgf_fusion_variant *v = &r[e].v[i];
            fprintf(f, "%s,%s,%d,%d,%d,%.3g", r[e].name, v->name, v->dispatches, v->submits, v->correct ? 1 : 0,
                    v->max_abs_err);
            if (v->correct && v->us.n)
                fprintf(f, ",%.4f,%.4f,%.4f,%.5f,%.4f,%.4f,%d,%d,%.4f,", v->us.median, v->us.ci_lo, v->us.ci_hi,
                        v->us.cv, v->us.min, v->us.max, v->us.n, v->us.n_outliers, v->speedup);
            else fprintf(f, ",,,,,,,,,,");
            if (v->correct && v->us.n) fprintf(f, "%.4f", v->us_wall.median);
            fputc(',', f);
            if (v->correct && v->has_gpu) fprintf(f, "%.4f", v->gpu_us.median);
            fputc('\n', f);
        }
    return wgf__mem_close(f, &buf, out, err);
}
