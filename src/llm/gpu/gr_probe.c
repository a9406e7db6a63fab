/* wgfuse — the advisor's probe of a GPU plan: what one greedy decode step costs on this device,
 * from its kinds of dispatch timed in chains (wgf_llm_backend.probe).
 *
 * Why measure: the static model (src/gpu/cost_model.c) charges every dispatch the larger of a
 * calibrated per-dispatch cost and its bytes / FLOPs at calibrated rates. On the H200 that
 * priced the ops and fused plans' dispatches at about 4 us each where a replayed decode step
 * pays about 2: a dispatch's cost depends on what it does (a norm of 896 floats, a matvec of
 * 4,864 rows, one workgroup walking every layer), not one number. So the probe times each kind
 * of dispatch the step holds, once, on this device, and the advisor composes the step:
 *
 *   kinds      the step's dispatches grouped by label, grid, bytes and FLOPs (a layer's
 *              instances of one role are one kind: the same kernel over other weights)
 *   pass W     the whole step in one pass (warms the device; its time is reported, step_us)
 *   per kind   pass S: its first instance alone; pass L: PROBE_MIN_CHAIN or more dispatches
 *              cycling through its instances (each layer's own weights, as the step reads
 *              them: no re-read from cache that the step would not get); its time in a chain
 *              = (L - S) / (dispatches(L) - 1): the pass's own cost cancels, the barrier
 *              between dependent dispatches stays
 *   gpu_us     sum over the step's dispatches of their kind's time in a chain
 *   host_us    the wall clock of recording the steps of one submit and submitting them, per
 *              step; steps per submit as the decode loop sets them (GR_STEPS at first, 2 on
 *              a CPU adapter, then as many as take about GR_SUBMIT_S)
 *
 * First the whole step runs, a submit's steps at a time, for PROBE_WARM_S and until two submits
 * in a row take the same time (PROBE_WARM_MAX_S at most): on the H200 a plan
 * probed right after its weights were uploaded measured its f32 matvecs at a third of the
 * bandwidth the decode loop gets (the one-pass step 3.4x the loop's token), a state the dial
 * never sees as it warms up before timing. Every pass of a repetition goes into one submit, so
 * the device stays busy from the first pass to the last; each time is the least of the
 * repetitions (what disturbs a timing only adds to it), which are PROBE_REPS at least and
 * spread over PROBE_SPREAD_S with a submit of whole steps between two: once on the H200 the
 * f32 roles plan's whole probe ran in a slow spell (its argmax and attention, which read no
 * weights, at 3x their f16 plan's times) that the warm-up did not outlast. The step state is written
 * before each repetition; what the chains leave in the activations and the cache is garbage
 * (the backend says so: forward again before decoding). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/gpu/gr.h"

#define PROBE_REPS       5   /* timed repetitions at least ...                                */
#define PROBE_SPREAD_S   1.0 /* ... spread over this long at least (a slow spell passes) ...   */
#define PROBE_MAX_REPS   64  /* ... and this many at most                                      */
#define PROBE_MIN_CHAIN 4 /* dispatches of a chain at least (a kind of one instance repeats it) */
#define PROBE_WARM_S     0.3 /* the whole step run first for this long at least ...             */
#define PROBE_WARM_MAX_S 3.0 /* ... and until its submits take a steady time, this long at most */

struct kind {
    const struct wgf_step_info *info; /* its first instance's                                  */
    uint32_t                    n;    /* instances in the step                                 */
    uint32_t                    first; /* index (into the step's list) of the first instance    */
    double                      s_ns, l_ns; /* least pass times                                */
};

struct ref {
    const wgf_schedule *s;
    uint32_t            i;
    uint32_t            kind;
};

static bool same_kind(const struct wgf_step_info *a, const struct wgf_step_info *b)
{
    return a->kind == b->kind && !strcmp(a->label, b->label) && !memcmp(a->grid, b->grid, sizeof a->grid) &&
           a->cost.bytes_read == b->cost.bytes_read && a->cost.bytes_written == b->cost.bytes_written &&
           a->cost.flops == b->cost.flops;
}

/* the j-th instance (cycling) of kind k */
static const struct ref *instance(const struct ref *refs, uint32_t n_refs, const struct kind *k, uint32_t kid, uint32_t j)
{
    j %= k->n;
    for (uint32_t i = k->first; i < n_refs; i++)
        if (refs[i].kind == kid && j-- == 0) return &refs[i];
    return &refs[k->first];
}

static uint32_t chain_len(const struct kind *k) { return k->n > PROBE_MIN_CHAIN ? k->n : PROBE_MIN_CHAIN; }

static double least(double a, double b) { return a < 0 || b < a ? b : a; }

/* `steps` whole decode steps in one submit, waited for (the warm-up, and between repetitions) */
static enum wgf_status run_steps(struct gr *g, const wgf_schedule *const *list, int n_list, const uint32_t st_words[4],
                                 int steps, struct wgf_err *err)
{
    wgf_recorder   *r = NULL;
    enum wgf_status s = wgf_buffer_write(g->ctx, g->st, 0, st_words, 16);
    if (!s) s = wgf_recorder_begin(g->ctx, "llm.probe.warm", NULL, &r);
    for (int i = 0; i < steps && !s; i++)
        for (int k = 0; k < n_list && !s; k++) s = wgf_schedule_record(list[k], r, NULL);
    if (s && r) wgf_recorder_abandon(r);
    else if (!s && !(s = wgf_recorder_submit(r))) s = wgf_ctx_wait(g->ctx);
    return s ? gr_fail(g, err, s, "probe warm-up") : WGF_OK;
}

enum wgf_status gr_probe_steps(struct gr *g, const wgf_schedule *const *list, int n_list, const uint32_t st_words[4],
                               struct wgf_llm_probe *out, struct wgf_err *err)
{
    memset(out, 0, sizeof *out);
    double t_start = wgf_llm_now();
    uint32_t n_refs = 0;
    for (int k = 0; k < n_list; k++) n_refs += wgf_schedule_len(list[k]);
    struct ref  *refs  = calloc(n_refs ? n_refs : 1, sizeof *refs);
    struct kind *kinds = calloc(n_refs ? n_refs : 1, sizeof *kinds);
    wgf_timer   *tm    = NULL;
    enum wgf_status s  = refs && kinds ? WGF_OK : wgf_fail(err, WGF_ERR_NOMEM, "probe: %u steps", n_refs);
    uint32_t n_kinds = 0, r_i = 0;
    for (int k = 0; k < n_list && !s; k++)
        for (uint32_t i = 0; i < wgf_schedule_len(list[k]); i++, r_i++) {
            const struct wgf_step_info *si = wgf_schedule_step(list[k], i);
            refs[r_i] = (struct ref){list[k], i, UINT32_MAX};
            if (si->kind == WGF_STEP_COPY) continue; /* opens no pass; none in a decode step today */
            uint32_t j = 0;
            while (j < n_kinds && !same_kind(kinds[j].info, si)) j++;
            if (j == n_kinds) kinds[n_kinds++] = (struct kind){si, 0, r_i, -1, -1};
            kinds[j].n++;
            refs[r_i].kind = j;
            out->dispatches++;
        }
    /* slots: W, then S and L of every kind */
    if (!s && (s = wgf_timer_create(g->ctx, "llm.probe", 1 + 2 * n_kinds, &tm)))
        s = s == WGF_ERR_UNSUPPORTED ? wgf_fail(err, s, "probe: no GPU timestamps on this device")
                                     : gr_fail(g, err, s, "probe timer");
    double  w_ns = -1, *ns = s ? NULL : malloc((1 + 2 * (size_t)n_kinds) * sizeof *ns);
    if (!s && !ns) s = wgf_fail(err, WGF_ERR_NOMEM, "probe: timings");
    int steps = strcmp(wgf_ctx_adapter(g->ctx)->type, "cpu") ? GR_STEPS : 2; /* per submit, as decode */
    double t_warm = wgf_llm_now(), last = 0, prev = 0;
    for (double t = t_warm; !s; t = wgf_llm_now()) {
        /* at least PROBE_WARM_S, then until two submits in a row take the same time (3%) */
        if (t - t_warm >= PROBE_WARM_MAX_S ||
            (t - t_warm >= PROBE_WARM_S && prev > 0 && last < 1.03 * prev && prev < 1.03 * last))
            break;
        prev = last;
        s    = run_steps(g, list, n_list, st_words, steps, err);
        last = wgf_llm_now() - t;
        /* steps per submit as the decode loop sets them: a submit of about GR_SUBMIT_S */
        int want = last > 0 ? (int)(GR_SUBMIT_S / (last / steps)) : steps;
        want     = want < 1 ? 1 : want > GR_STEPS ? GR_STEPS : want;
        if (want != steps) last = 0, steps = want; /* steady: two submits of the same steps */
    }
    out->warm_s = wgf_llm_now() - t_warm;
    /* the repetitions: PROBE_REPS at least, and over PROBE_SPREAD_S at least, a submit of whole
     * steps between two (the device as loaded as the decode loop keeps it) */
    double t_reps = wgf_llm_now();
    for (int rep = 0; !s && rep < PROBE_MAX_REPS && (rep < PROBE_REPS || wgf_llm_now() - t_reps < PROBE_SPREAD_S); rep++) {
        if (rep > 0 && (s = run_steps(g, list, n_list, st_words, steps, err))) break;
        out->reps       = (uint32_t)rep + 1;
        wgf_recorder *r = NULL;
        wgf_timer_reset(tm);
        if ((s = wgf_buffer_write(g->ctx, g->st, 0, st_words, 16)) || (s = wgf_recorder_begin(g->ctx, "llm.probe", tm, &r))) {
            s = gr_fail(g, err, s, "probe");
            break;
        }
        for (int k = 0; k < n_list && !s; k++) s = wgf_schedule_record(list[k], r, NULL);
        if (!s) s = wgf_recorder_end_pass(r);
        for (uint32_t k = 0; k < n_kinds && !s; k++) {
            const struct ref *f = &refs[kinds[k].first];
            if ((s = wgf_schedule_record_step(f->s, f->i, r)) || (s = wgf_recorder_end_pass(r))) break;
            for (uint32_t j = 0; j < chain_len(&kinds[k]) && !s; j++) {
                const struct ref *x = instance(refs, n_refs, &kinds[k], k, j);
                s = wgf_schedule_record_step(x->s, x->i, r);
            }
            if (!s) s = wgf_recorder_end_pass(r);
        }
        if (s) {
            wgf_recorder_abandon(r);
            s = gr_fail(g, err, s, "probe");
            break;
        }
        uint32_t n = 0;
        if ((s = wgf_recorder_submit(r)) || (s = wgf_timer_read(g->ctx, tm, ns, 1 + 2 * n_kinds, &n))) {
            s = gr_fail(g, err, s, "probe");
            break;
        }
        if (n != 1 + 2 * n_kinds) {
            s = wgf_fail(err, WGF_ERR_INTERNAL, "probe: %u timed passes, %u recorded", n, 1 + 2 * n_kinds);
            break;
        }
        if (rep == 0) out->step_first_us = ns[0] * 1e-3;
        w_ns = least(w_ns, ns[0]);
        for (uint32_t k = 0; k < n_kinds; k++) {
            kinds[k].s_ns = least(kinds[k].s_ns, ns[1 + 2 * k]);
            kinds[k].l_ns = least(kinds[k].l_ns, ns[2 + 2 * k]);
        }
    }
    /* the host: a submit's steps recorded and submitted (as the decode loop does), then waited for */
    double host = -1;
    for (int rep = 0; rep < PROBE_REPS && !s; rep++) {
        wgf_recorder *r  = NULL;
        double        t0 = wgf_llm_now();
        if ((s = wgf_recorder_begin(g->ctx, "llm.probe.host", NULL, &r))) break;
        for (int t = 0; t < steps && !s; t++)
            for (int k = 0; k < n_list && !s; k++) s = wgf_schedule_record(list[k], r, NULL);
        if (s) {
            wgf_recorder_abandon(r);
            break;
        }
        if ((s = wgf_recorder_submit(r))) break;
        host = least(host, (wgf_llm_now() - t0) / steps);
        if ((s = wgf_ctx_wait(g->ctx))) break;
    }
    if (s && !err->msg[0]) s = gr_fail(g, err, s, "probe host");
    if (!s) {
        out->kinds   = n_kinds;
        out->step_us = w_ns * 1e-3;
        out->host_us = host * 1e6;
        for (uint32_t k = 0; k < n_kinds; k++) {
            double per = (kinds[k].l_ns - kinds[k].s_ns) / (chain_len(&kinds[k]) - 1);
            per        = per > 0 ? per * 1e-3 : 0;
            out->gpu_us += kinds[k].n * per;
            if (k < WGF_LLM_PROBE_LIST) {
                snprintf(out->kind[k].label, sizeof out->kind[k].label, "%s", kinds[k].info->label);
                out->kind[k].n  = kinds[k].n;
                out->kind[k].us = per;
                out->listed     = k + 1;
            }
        }
        out->seconds = wgf_llm_now() - t_start;
    }
    free(ns);
    wgf_timer_free(tm);
    free(kinds);
    free(refs);
    return s;
}
