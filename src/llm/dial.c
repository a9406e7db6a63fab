/* wgfuse — the fusion dial (include/wgfuse/llm_dial.h): each GPU plan of one model checked
 * against cpu-ref, then timed the way `llm bench` times one backend. Reads top to bottom:
 * reference logits once, then per plan open -> check -> warm-up -> timed runs -> GPU step
 * time -> profile -> close. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wgfuse/llm_dial.h"
#include "wgfuse/llm_run.h"

#define DIAL_PROFILE_STEPS 8
#define DIAL_STEP_TIME_N   8

static const char *const DEFAULT_PLANS[] = {"ops", "fused", "roles", "mega"};

struct wgf_dial_opts wgf_dial_opts_default(void)
{
    struct wgf_dial_opts o = {0};
    o.n_prompt = 32, o.n_gen = 64, o.runs = 5;
    o.check_prompt = 8, o.check_steps = 8;
    o.n_threads = 1;
    return o;
}

double wgf_llm_weight_bytes_per_token(const struct wgf_llm_config *c, double bytes_per_weight)
{
    double q = (double)c->n_heads * c->head_dim, kv = (double)c->n_kv_heads * c->head_dim, d = c->dim;
    double per_layer = d * q + 2 * d * kv + q * d + 3 * d * c->hidden_dim;
    return bytes_per_weight * (per_layer * c->n_layers + d * c->vocab_size);
}

void wgf_dial_report_free(struct wgf_dial_report *r)
{
    for (uint32_t i = 0; i < WGF_DIAL_MAX_PLANS; i++) wgf_profile_free(&r->row[i].profile);
}

static void progress(const struct wgf_dial_opts *o, const char *fmt, const char *a, const char *b)
{
    if (!o->progress) return;
    char line[160];
    snprintf(line, sizeof line, fmt, a, b);
    o->progress(o->user, line);
}

static uint32_t argmax(const float *x, uint32_t n)
{
    uint32_t best = 0;
    for (uint32_t i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* The check's reference: cpu-ref's logits of the check prompt (every row) and of check_steps
 * decode steps, each fed the token it picked greedily; seq gets prompt + picks. */
static enum wgf_status reference(const struct wgf_llm_model *m, const struct wgf_dial_opts *o, int32_t *seq,
                                 float *logits, struct wgf_err *err)
{
    struct wgf_llm_backend         ref = {0};
    struct wgf_llm_backend_options bo  = {
        .n_ctx = o->check_prompt + o->check_steps + 1, .n_threads = o->n_threads, .act_q8 = o->act_q8};
    enum wgf_status                s   = wgf_llm_backend_open(&ref, &wgf_llm_backend_ref, m, &bo, err);
    if (s) return s;
    uint32_t V = ref.n_vocab, P = o->check_prompt;
    s          = ref.forward(&ref, seq, P, 0, logits, true, err);
    for (uint32_t i = 0; !s && i < o->check_steps; i++) {
        seq[P + i] = (int32_t)argmax(logits + (size_t)(P + i - 1) * V, V);
        s          = ref.forward(&ref, seq + P + i, 1, P + i, logits + (size_t)(P + i) * V, false, err);
    }
    wgf_llm_backend_close(&ref);
    return s;
}

/* The plan on the same tokens: relative max error over every row, rows whose argmax agree. */
static enum wgf_status check(struct wgf_llm_backend *b, const struct wgf_dial_opts *o, const int32_t *seq,
                             const float *ref, float *got, struct wgf_dial_row *row, struct wgf_err *err)
{
    uint32_t        V = b->n_vocab, P = o->check_prompt, R = P + o->check_steps;
    enum wgf_status s = b->forward(b, seq, P, 0, got, true, err);
    for (uint32_t i = 0; !s && i < o->check_steps; i++)
        s = b->forward(b, seq + P + i, 1, P + i, got + (size_t)(P + i) * V, false, err);
    if (s) return s;
    double scale = 0, diff = 0;
    for (size_t k = 0; k < (size_t)R * V; k++) {
        scale = fmax(scale, fabs((double)ref[k]));
        double d = fabs((double)got[k] - (double)ref[k]);
        diff     = isnan(d) ? INFINITY : fmax(diff, d); /* NaN must not pass */
    }
    row->check_err  = scale > 0 ? diff / scale : diff;
    row->check_rows = R;
    for (uint32_t r = 0; r < R; r++)
        row->argmax_agree += argmax(got + (size_t)r * V, V) == argmax(ref + (size_t)r * V, V);
    b->reset(b);
    return WGF_OK;
}

static int on_id(void *u, int32_t id)
{
    uint64_t *h = u;
    *h          = (*h ^ (uint32_t)id) * 0x100000001b3ull; /* FNV-1a over ids */
    return 0;
}

/* warm-up + runs timed generations; the ids must hash the same every time */
static enum wgf_status timed_runs(struct wgf_llm_backend *b, const struct wgf_dial_opts *o, struct wgf_sampler *smp,
                                  const int32_t *prompt, struct wgf_dial_row *row, struct wgf_err *err)
{
    struct wgf_gen_params gp = wgf_gen_params_default();
    gp.max_tokens            = o->n_gen;
    gp.ignore_eos            = true;
    for (int r = -1; r < (int)o->runs; r++) { /* r = -1: warm-up */
        if (o->stop && o->stop(o->user))
            return wgf_fail(err, WGF_ERR_INTERRUPTED, "dial: stopped during plan %s", row->plan);
        if (r == 0) b->decode_host_s = 0, b->decode_host_steps = 0;
        uint64_t                 h  = 0xcbf29ce484222325ull;
        struct wgf_gen_callbacks cb = {.user = &h, .on_token = on_id};
        struct wgf_gen_stats     st;
        enum wgf_status          s = wgf_generate(b, NULL, smp, &gp, prompt, o->n_prompt, &cb, &st, err);
        if (s) return s;
        if (r < 0) {
            row->ids_hash = h;
            continue;
        }
        if (h != row->ids_hash)
            return wgf_fail(err, WGF_ERR_INTERNAL, "dial: plan %s: run %d generated other ids (hash %016llx vs %016llx)",
                            row->plan, r, (unsigned long long)h, (unsigned long long)row->ids_hash);
        row->prefill_tok_s[r] = st.prefill_tok_s;
        row->decode_tok_s[r]  = st.decode_tok_s;
    }
    row->host_us_per_token = b->decode_host_steps ? 1e6 * b->decode_host_s / (double)b->decode_host_steps : 0;
    return WGF_OK;
}

static enum wgf_status one_plan(wgf_ctx *ctx, const struct wgf_llm_model *m, const struct wgf_dial_opts *o,
                                const char *plan, const int32_t *seq, const float *ref, float *got,
                                const int32_t *prompt, struct wgf_dial_row *row, struct wgf_err *err)
{
    const struct wgf_llm_backend *proto = wgf_llm_backend_find("gpu", plan);
    if (!proto) return wgf_fail(err, WGF_ERR_ARG, "dial: '%s' is not a GPU plan (%s)", plan, wgf_llm_plan_names());
    snprintf(row->plan, sizeof row->plan, "%s", plan);
    bool unfused = proto == &wgf_llm_backend_gpu; /* the first plan: f32 only, no options */
    bool f32     = unfused || o->weights_f32;
    row->weights = f32 ? "f32" : "f16";
    row->weight_bytes_per_token = wgf_llm_weight_bytes_per_token(&m->cfg, f32 ? 4.0 : 2.0);
    row->tolerance              = f32 ? 1e-4 : 2e-2;
    /* int8 activations: both sides round, and a value that sits at a half step in one and not in
     * the other (their last bits differ) rounds apart: ~1e-2 at once (test_quant_gpu) */
    if (o->act_q8) row->tolerance = 5e-2;
    uint32_t n_ctx = o->n_prompt + o->n_gen + 1;
    if (n_ctx < o->check_prompt + o->check_steps + 1) n_ctx = o->check_prompt + o->check_steps + 1;
    struct wgf_llm_backend_options bo = {
        .n_ctx = n_ctx, .gpu = ctx, .max_binding_bytes = o->max_binding_bytes, .act_q8 = o->act_q8,
        .act_i8x3 = o->act_i8x3};
    if (!unfused) bo.weights_f32 = o->weights_f32, bo.no_subgroups = o->no_subgroups;
    struct wgf_llm_backend    b  = {0};
    struct wgf_sampler        smp = {0};
    struct wgf_sampler_params sp = wgf_sampler_params_default();
    sp.temperature               = 0;
    progress(o, "dial: %s: init%s", plan, "");
    enum wgf_status s = wgf_llm_backend_open(&b, proto, m, &bo, err);
    if (s == WGF_ERR_UNSUPPORTED) { /* this device cannot run the plan: say why, go on */
        snprintf(row->skipped, sizeof row->skipped, "%s", err->msg);
        return WGF_OK;
    }
    if (s) return s;
    row->dispatches = b.dispatches_per_token;
    if (b.weight_bytes_per_token) row->weight_bytes_per_token = (double)b.weight_bytes_per_token; /* as on the GPU */
    if (b.weights) row->weights = b.weights;
    progress(o, "dial: %s: check against cpu-ref%s", plan, "");
    if ((s = check(&b, o, seq, ref, got, row, err))) goto out;
    if (!(row->check_err <= row->tolerance)) {
        s = wgf_fail(err, WGF_ERR_INTERNAL, "dial: plan %s: logits differ from cpu-ref by %.3g (relative; tolerance %.0e)",
                     plan, row->check_err, row->tolerance);
        goto out;
    }
    if ((s = wgf_sampler_init(&smp, &sp, b.n_vocab, err))) goto out;
    progress(o, "dial: %s: %s", plan, "timed runs");
    if ((s = timed_runs(&b, o, &smp, prompt, row, err))) goto out;
    if (b.step_time) {
        double ns = 0;
        s         = b.step_time(&b, o->n_prompt, DIAL_STEP_TIME_N, &ns, err);
        if (s == WGF_ERR_UNSUPPORTED) s = WGF_OK, ns = 0; /* no timestamps on this adapter */
        if (s) goto out;
        row->gpu_us_per_token = ns * 1e-3;
    }
    if (o->profile && b.profile) {
        progress(o, "dial: %s: %s", plan, "profile");
        s = b.profile(&b, o->n_prompt, DIAL_PROFILE_STEPS, &row->profile, err);
    }
out:
    wgf_sampler_free(&smp);
    wgf_llm_backend_close(&b);
    return s;
}

enum wgf_status wgf_llm_dial(wgf_ctx *ctx, const struct wgf_llm_model *m, const struct wgf_dial_opts *o,
                             struct wgf_dial_report *out, struct wgf_err *err)
{
    memset(out, 0, sizeof *out);
    if (!ctx || !m || !o || o->n_plans > WGF_DIAL_MAX_PLANS || o->runs < 1 || o->runs > WGF_DIAL_MAX_RUNS ||
        o->n_gen < 2 || o->n_prompt < 1 || o->check_prompt < 1)
        return wgf_fail(err, WGF_ERR_ARG, "dial: plans <= %d, runs 1..%d, n_gen >= 2, prompts >= 1", WGF_DIAL_MAX_PLANS,
                        WGF_DIAL_MAX_RUNS);
    snprintf(out->adapter, sizeof out->adapter, "%s", wgf_ctx_adapter(ctx)->name);
    out->runs = o->runs, out->n_prompt = o->n_prompt, out->n_gen = o->n_gen;
    uint32_t     n_plans = o->n_plans ? o->n_plans : (uint32_t)(sizeof DEFAULT_PLANS / sizeof DEFAULT_PLANS[0]);
    uint32_t     R = o->check_prompt + o->check_steps, V = (uint32_t)m->cfg.vocab_size;
    int32_t     *seq    = malloc((size_t)R * sizeof *seq);
    int32_t     *prompt = malloc((size_t)o->n_prompt * sizeof *prompt);
    float       *ref    = malloc((size_t)R * V * sizeof *ref);
    float       *got    = malloc((size_t)R * V * sizeof *got);
    enum wgf_status s   = WGF_OK;
    if (!seq || !prompt || !ref || !got) s = wgf_fail(err, WGF_ERR_NOMEM, "dial: check buffers (%u x %u logits)", R, V);
    /* fixed, spread ids: the check prompt and the timed prompt */
    for (uint32_t i = 0; !s && i < o->check_prompt; i++) seq[i] = (int32_t)((i * 4099u + 3u) % V);
    for (uint32_t i = 0; !s && i < o->n_prompt; i++) prompt[i] = (int32_t)((i * 7919u + 1u) % V);
    if (!s) {
        progress(o, "dial: cpu-ref logits for the check%s%s", "", "");
        s = reference(m, o, seq, ref, err);
    }
    for (uint32_t p = 0; !s && p < n_plans; p++) {
        const char *plan = o->n_plans ? o->plans[p] : DEFAULT_PLANS[p];
        s                = one_plan(ctx, m, o, plan, seq, ref, got, prompt, &out->row[p], err);
        out->n           = p + 1; /* a failed row stays: its check error is the evidence */
    }
    free(seq);
    free(prompt);
    free(ref);
    free(got);
    return s;
}
