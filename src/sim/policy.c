/* wgfuse sim — per-genome policies: the MLP forward pass, policy files and the reference
 * classic-control episode (the plain-C twin of src/kernels/sim_episode.wgsl). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

float wgf__sim_tanh(float x) { return tanhf(fminf(fmaxf(x, -15.0f), 15.0f)); }

struct wgf_sim_policy wgf_sim_policy_for(enum wgf_sim_workload w, int hidden, int n_feedback)
{
    const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(w);
    struct wgf_sim_policy p = {0};
    if (!wi) return p;
    if (hidden <= 0) hidden = wi->hidden;
    if (n_feedback < 0) n_feedback = wi->n_feedback;
    p.n_in       = wi->n_obs + n_feedback;
    p.n_hidden   = hidden;
    p.n_out      = wi->n_actions + n_feedback;
    p.n_feedback = n_feedback;
    return p;
}

int wgf_sim_policy_n_params(const struct wgf_sim_policy *p)
{
    return p->n_hidden * p->n_in + p->n_hidden + p->n_out * p->n_hidden + p->n_out;
}

void wgf_sim_policy_forward(const struct wgf_sim_policy *p, const float *w, const float *in, float *out)
{
    const float *w1 = w, *b1 = w1 + p->n_hidden * p->n_in;
    const float *w2 = b1 + p->n_hidden, *b2 = w2 + p->n_out * p->n_hidden;
    float hid[256];
    WGF_ASSERT(p->n_hidden <= 256);
    for (int h = 0; h < p->n_hidden; h++) {
        float acc = b1[h];
        for (int i = 0; i < p->n_in; i++) acc = acc + w1[h * p->n_in + i] * in[i];
        hid[h] = wgf__sim_tanh(acc);
    }
    for (int o = 0; o < p->n_out; o++) {
        float acc = b2[o];
        for (int h = 0; h < p->n_hidden; h++) acc = acc + w2[o * p->n_hidden + h] * hid[h];
        out[o] = acc;
    }
}

int wgf_sim_argmax(const float *out, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (out[i] > out[best]) best = i;
    return best;
}

float wgf_sim_ref_episode(enum wgf_sim_workload w, const struct wgf_sim_policy *p, const float *params,
                          int max_steps, uint32_t seed, uint32_t gen, uint32_t genome, int *steps)
{
    const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(w);
    float s[WGF_SIM_MAX_STATE] = {0}, in[64] = {0}, out[64], ret = 0.0f;
    WGF_ASSERT(wi && wi->n_state > 0 && p->n_in <= 64 && p->n_out <= 64);
    wgf_sim_env_reset(w, seed, gen, genome, s);
    bool done = false;
    int  t    = 0;
    while (t < max_steps && !done) {
        wgf_sim_env_obs(w, s, in); /* in[n_obs..n_in) keeps the fed-back outputs */
        wgf_sim_policy_forward(p, params, in, out);
        int a = wgf_sim_argmax(out, wi->n_actions);
        for (int i = 0; i < p->n_feedback; i++) in[wi->n_obs + i] = wgf__sim_tanh(out[wi->n_actions + i]);
        ret = ret + wgf_sim_env_step(w, s, a, &done);
        t++;
    }
    if (steps) *steps = t;
    return ret;
}

/* ---- policy files --------------------------------------------------------------------------
 * Text, so a policy can be read and diffed:
 *   wgfuse-sim-policy 1
 *   workload cartpole
 *   shape 4 16 2 0          (n_in n_hidden n_out n_feedback)
 *   params 114
 *   <one %.9g per line: enough digits to round-trip every f32>                          */
enum wgf_status wgf_sim_policy_save(enum wgf_sim_workload w, const struct wgf_sim_policy *p, const float *params,
                                    char **text, size_t *len, struct wgf_err *err)
{
    const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(w);
    if (!wi) return wgf_fail(err, WGF_ERR_ARG, "sim: policy save: bad workload %d", (int)w);
    int    n   = wgf_sim_policy_n_params(p);
    size_t cap = 256 + (size_t)n * 20;
    char  *buf = malloc(cap);
    if (!buf) return wgf_fail(err, WGF_ERR_NOMEM, "sim: policy save: %zu bytes", cap);
    size_t off = (size_t)snprintf(buf, cap, "wgfuse-sim-policy 1\nworkload %s\nshape %d %d %d %d\nparams %d\n",
                                  wi->name, p->n_in, p->n_hidden, p->n_out, p->n_feedback, n);
    for (int i = 0; i < n && off < cap; i++) off += (size_t)snprintf(buf + off, cap - off, "%.9g\n", params[i]);
    if (off >= cap) {
        free(buf);
        return wgf_fail(err, WGF_ERR_INTERNAL, "sim: policy save: buffer too small");
    }
    *text = buf;
    *len  = off;
    return WGF_OK;
}

enum wgf_status wgf_sim_policy_load(const char *text, size_t len, enum wgf_sim_workload *w, struct wgf_sim_policy *p,
                                    float **params, struct wgf_err *err)
{
    char *copy = malloc(len + 1);
    if (!copy) return wgf_fail(err, WGF_ERR_NOMEM, "sim: policy load: %zu bytes", len + 1);
    memcpy(copy, text, len);
    copy[len] = 0;
    char name[64] = "";
    int  version = 0, n = 0, consumed = 0;
    struct wgf_sim_policy q = {0};
    enum wgf_status s = WGF_OK;
    if (sscanf(copy, "wgfuse-sim-policy %d workload %63s shape %d %d %d %d params %d%n", &version, name, &q.n_in,
               &q.n_hidden, &q.n_out, &q.n_feedback, &n, &consumed) != 7 ||
        version != 1) {
        s = wgf_fail(err, WGF_ERR_FORMAT, "sim: policy: bad header (want 'wgfuse-sim-policy 1', workload, shape, params)");
        goto out;
    }
    if ((s = wgf_sim_workload_parse(name, w, err)) != WGF_OK) goto out;
    struct wgf_sim_policy want = wgf_sim_policy_for(*w, q.n_hidden, q.n_feedback);
    if (q.n_hidden < 1 || q.n_hidden > 256 || q.n_feedback < 0 || q.n_feedback > 8 || want.n_in != q.n_in ||
        want.n_out != q.n_out || n != wgf_sim_policy_n_params(&q)) {
        s = wgf_fail(err, WGF_ERR_FORMAT, "sim: policy: shape %d-%d-%d (feedback %d, %d params) does not fit %s",
                     q.n_in, q.n_hidden, q.n_out, q.n_feedback, n, name);
        goto out;
    }
    float *v = malloc((size_t)n * sizeof *v);
    if (!v) {
        s = wgf_fail(err, WGF_ERR_NOMEM, "sim: policy load: %d params", n);
        goto out;
    }
    char *cur = copy + consumed;
    for (int i = 0; i < n; i++) {
        char *end = NULL;
        errno     = 0;
        float x   = strtof(cur, &end);
        if (end == cur || errno == ERANGE || !isfinite(x)) {
            free(v);
            s = wgf_fail(err, WGF_ERR_FORMAT, "sim: policy: parameter %d of %d missing or not a finite number", i, n);
            goto out;
        }
        v[i] = x;
        cur  = end;
    }
    *p      = q;
    *params = v;
out:
    free(copy);
    return s;
}
