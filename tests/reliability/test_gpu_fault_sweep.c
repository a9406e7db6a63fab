/* GPU faults at load time, swept over every call site (RELIABILITY.md items 33, 35, 36):
 * a CartPole simulation is built (wgf_sim_create: every buffer, shader, pipeline and bind
 * group up front, then an upload) on a context whose fault plan fails the Nth buffer /
 * shader / pipeline creation, for N = 1 .. the first N that no longer fails; the Nth map
 * fails in the first fitness read. Each failure must be the specific status with a one-line
 * message naming the object the Nth creation made (expected[] below, in the order
 * wgf_sim_create creates them), leave no simulation behind (*out == NULL; under ASan/LSan
 * nothing leaks), and leave the context usable (a selfcheck on the same context passes).
 * A 1 ms wait timeout on work that takes far longer (thousands of dispatches: >= 8 ms even
 * at the H200's ~4 us per dispatch) ends in WGF_ERR_TIMEOUT naming the fitness read-back it
 * waited for, never in success and never in an abort. Runs on lavapipe through the
 * runtime's fault plan (Dawn InjectError).
 *
 * Mutations these checks catch (tried 2026-12-01):
 *   - src/gpu/buffer.c: the label left out of a failed buffer's message
 *     (snprintf(what, ..., "buffer (%s)", ...)): "injected failure at every buffer creation"
 *     fails (the old check only looked for "injected");
 *   - src/gpu/context.c wgf__wait_instance never timing out (the `el > timeout_ns` test
 *     made false): the 1 ms case fails (the old check accepted WGF_OK). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/gpu.h"
#include "wgfuse/sim.h"

enum kind { K_BUFFER, K_SHADER, K_PIPELINE };
static const char *const kind_name[] = {"buffer", "shader", "pipeline"};

/* What the Nth creation of each kind in wgf_sim_create is, for small_sim() (CartPole, per
 * step, GA): src/sim/population.c makes params/state_buf/ctl for each parity, then the
 * fitness and GA buffers; the strategy's kernels come reset, step, then evolve (a shader
 * module and its pipeline per kernel). Read from the source, not from a run's output. */
static const char *const expected_buffer[] = {"sim.params[0]", "sim.state_buf[0]", "sim.ctl[0]", "sim.params[1]",
                                               "sim.state_buf[1]", "sim.ctl[1]", "sim.fitness", "sim.ga"};
static const char *const expected_kernel[] = {"cartpole_reset", "cartpole_per_step", "evolve_cartpole"};

static wgf_ctx *ctx_with(struct wgf_fault_plan f, uint32_t timeout_ms, struct wgf_err *e)
{
    struct wgf_gpu_options o = wgf_gpu_options_default();
    o.fault                  = f;
    o.timeout_ms             = timeout_ms;
    wgf_ctx *c               = NULL;
    if (wgf_ctx_create(&o, &c, e) != WGF_OK) return NULL;
    return c;
}

static struct wgf_sim_config small_sim(void)
{
    struct wgf_sim_config c = wgf_sim_config_default(WGF_SIM_CARTPOLE);
    c.pop = 32, c.max_steps = 20, c.strategy = WGF_SIM_PER_STEP;
    return c;
}

static bool one_line(const char *s) { return s[0] && !strchr(s, '\n'); }

/* Sweep N for one kind; returns the number of call sites that failed as they should. */
static void sweep(struct wgf_t *t, enum kind k)
{
    enum wgf_status want = k == K_BUFFER ? WGF_ERR_GPU_OOM : WGF_ERR_SHADER;
    int             sites = 0, bad = 0;
    char            first_bad[2600] = "", example[1200] = "";
    for (uint32_t n = 1; n <= 64; n++) {
        struct wgf_fault_plan f = {0};
        if (k == K_BUFFER) f.fail_buffer_create = n;
        if (k == K_SHADER) f.fail_shader = n;
        if (k == K_PIPELINE) f.fail_pipeline = n;
        struct wgf_err e   = {0};
        wgf_ctx       *ctx = ctx_with(f, 0, &e);
        if (!ctx) {
            wgf_t_check(t, false, "context", "%s", e.msg);
            return;
        }
        wgf_sim              *sim = NULL;
        struct wgf_sim_config c   = small_sim();
        enum wgf_status       s   = wgf_sim_create(ctx, &c, &sim, &e);
        if (s == WGF_OK) { /* n is past the last call site of this kind */
            float fit[32];
            s = wgf_sim_generations(sim, 1, &e);
            if (s == WGF_OK) s = wgf_sim_fitness_read(sim, fit, &e);
            char name[96];
            snprintf(name, sizeof name, "sim works once the %s faults are past (N=%u)", kind_name[k], n);
            wgf_t_check(t, s == WGF_OK, name, "%s", e.msg);
            wgf_sim_free(sim);
            wgf_ctx_free(ctx);
            break;
        }
        sites++;
        /* the object the Nth creation makes, and the exact phrase its failure must carry */
        const char *const *names  = k == K_BUFFER ? expected_buffer : expected_kernel;
        uint32_t           nnames = k == K_BUFFER ? sizeof expected_buffer / sizeof *names : sizeof expected_kernel / sizeof *names;
        char               phrase[200];
        if (n > nnames) snprintf(phrase, sizeof phrase, "(no creation #%u expected)", n);
        else if (k == K_BUFFER)
            snprintf(phrase, sizeof phrase, "buffer '%s' (", names[n - 1]);
        else
            snprintf(phrase, sizeof phrase, "kernel '%s': %s", names[n - 1], k == K_SHADER ? "WGSL compile" : "pipeline creation");
        const char *fault = k == K_BUFFER ? "out of GPU memory: injected out-of-memory fault"
                            : k == K_SHADER ? "injected shader-creation fault"
                                            : "injected pipeline-creation fault";
        double      err_abs = 0;
        bool ok = s == want && sim == NULL && one_line(e.msg) && strstr(e.msg, phrase) != NULL && strstr(e.msg, fault) != NULL;
        bool   usable  = wgf_gpu_selfcheck(ctx, 256, 7, &err_abs) == WGF_OK;
        if (!example[0]) snprintf(example, sizeof example, "N=%u: [%s] %s", n, wgf_status_str(s), e.msg);
        if ((!ok || !usable) && !first_bad[0])
            snprintf(first_bad, sizeof first_bad, "N=%u: want [%s] with \"%s\" and \"%s\", got [%s] %s%s", n,
                     wgf_status_str(want), phrase, fault, wgf_status_str(s), e.msg, usable ? "" : " (context unusable afterwards)");
        bad += !ok || !usable;
        wgf_sim_free(sim);
        wgf_ctx_free(ctx);
    }
    /* every expected object failed in turn, and no more (a creation added or dropped shows) */
    int  want_sites = k == K_BUFFER ? (int)(sizeof expected_buffer / sizeof *expected_buffer)
                                    : (int)(sizeof expected_kernel / sizeof *expected_kernel);
    char name[128];
    snprintf(name, sizeof name, "injected failure at every %s creation of wgf_sim_create", kind_name[k]);
    wgf_t_check(t, sites == want_sites && bad == 0, name, "%d call sites (want %d), %d wrong; %s", sites, want_sites, bad,
                bad ? first_bad : example);
}

static void map_fault(struct wgf_t *t)
{
    struct wgf_fault_plan f = {.fail_map = 1};
    struct wgf_err        e = {0};
    wgf_ctx              *ctx = ctx_with(f, 0, &e);
    if (!wgf_t_check(t, ctx != NULL, "context with fail_map = 1", "%s", e.msg)) return;
    wgf_sim              *sim = NULL;
    struct wgf_sim_config c   = small_sim();
    float                 fit[32];
    enum wgf_status       s = wgf_sim_create(ctx, &c, &sim, &e);
    if (s == WGF_OK) s = wgf_sim_generations(sim, 1, &e);
    if (s == WGF_OK) s = wgf_sim_fitness_read(sim, fit, &e);
    wgf_t_check(t, s == WGF_ERR_GPU && one_line(e.msg) && strstr(e.msg, "read-back of buffer 'sim.fitness': mapAsync failed: injected fault"),
                "injected map failure in the fitness read",
                "[%s] %s", wgf_status_str(s), e.msg);
    s = sim ? wgf_sim_fitness_read(sim, fit, &e) : WGF_ERR_INTERNAL;
    wgf_t_check(t, s == WGF_OK, "the next fitness read works", "%s", s ? e.msg : "ok");
    wgf_sim_free(sim);
    wgf_ctx_free(ctx);
}

/* Every wait has a timeout. 1024 CartPoles x 500 steps, one dispatch per step, 8
 * generations: >= 4000 dispatches, tens of ms on any GPU (lavapipe ~16 us, the H200 ~4 us
 * per dispatch), so a 1 ms timeout must run out, at the first wait: the fitness read-back
 * (wgf_sim_create and wgf_sim_generations only record and submit). Nothing aborts; freeing
 * afterwards is clean. */
static void tiny_timeout(struct wgf_t *t)
{
    struct wgf_fault_plan f   = {0};
    struct wgf_err        e   = {0};
    wgf_ctx              *ctx = ctx_with(f, 1, &e);
    enum wgf_status       s   = ctx ? WGF_OK : e.status;
    wgf_sim              *sim = NULL;
    const char           *at  = "context";
    if (ctx) {
        struct wgf_sim_config c = small_sim();
        c.pop = 1024, c.max_steps = 500;
        float *fit = calloc(1024, sizeof *fit);
        s          = wgf_sim_create(ctx, &c, &sim, &e);
        if (s == WGF_OK) at = "generations", s = wgf_sim_generations(sim, 8, &e);
        if (s == WGF_OK) at = "fitness read", s = wgf_sim_fitness_read(sim, fit, &e);
        free(fit);
    }
    const char *want = "sim: fitness read: timed out after ";
    const char *what = "s waiting for read-back of buffer 'sim.fitness'";
    bool        ok   = s == WGF_ERR_TIMEOUT && one_line(e.msg) && !strncmp(e.msg, want, strlen(want)) && strstr(e.msg, what);
    wgf_t_check(t, ok, "1 ms wait timeout -> WGF_ERR_TIMEOUT naming the fitness read-back it waited for", "at %s: [%s] %s", at,
                wgf_status_str(s), s ? e.msg : "all waits finished within 1 ms");
    wgf_sim_free(sim);
    wgf_ctx_free(ctx);
}

int main(void)
{
    struct wgf_t t = {0};
    sweep(&t, K_BUFFER);
    sweep(&t, K_SHADER);
    sweep(&t, K_PIPELINE);
    map_fault(&t);
    tiny_timeout(&t);
    return wgf_t_finish(&t);
}
