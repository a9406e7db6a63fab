/* wgfuse sim — the financial simulation: a seeded synthetic 16-asset price path and the
 * trading episode's plain-C reference (the twin of src/kernels/finsim.wgsl).
 *
 * docs/sim.md defines both precisely; in short:
 *   path     k = 0 .. W+L-1 (W = 20 warm-up steps): a two-state volatility regime (calm
 *            market vol 0.8%, volatile 2%; calm->volatile p = 0.02, back p = 0.10), market
 *            factor f_k = vol * N(0,1), asset returns
 *            R[k][a] = mu_a + beta_a f_k + sig_a s_z N(0,1) + phi_a R[k-1][a], clipped to +-0.3
 *   signals  at step t (k = W + t) from data up to k-1 only: per asset last return and
 *            10-step momentum, market last return, momentum, 20-step vol, cross-sectional
 *            dispersion; 36 = 16 x 2 + 4
 *   episode  per asset the policy (8 -> 16 -> 6) sees its 2 signals, the 4 market signals
 *            and its 2 fed-back outputs; direction tanh(o0), leverage 1 + 2 sigmoid(o1)
 *            (1-3x), trade gate o2 > 0, conviction sigmoid(o3), o4 o5 fed back; exposure
 *            = leverage x direction x conviction / 16; growth 1 + sum e_a R[k][a] - cost x
 *            turnover; fitness = sum log growth (log final equity); growth <= 1e-6 is ruin.
 * The generator runs in double on the host (xoshiro256** normals) and stores f32. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"
#include "util/rng.h"

#define FIN_COST 0.001f /* cost per unit of traded exposure (10 bp)                   */
#define FIN_RUIN 1e-6f  /* growth factor at or below which the account is ruined      */

static double clip5(double x) { return x < -5.0 ? -5.0 : x > 5.0 ? 5.0 : x; }

enum wgf_status wgf_sim_market_generate(uint32_t seed, int n_steps, struct wgf_sim_market *m, struct wgf_err *err)
{
    memset(m, 0, sizeof *m);
    if (n_steps < 1 || n_steps > 1000000) return wgf_fail(err, WGF_ERR_ARG, "sim: finsim: %d steps (1..1e6)", n_steps);
    const int A = WGF_FIN_ASSETS, W = WGF_FIN_WARMUP, K = W + n_steps;
    double   *R  = calloc((size_t)K * (size_t)A, sizeof *R); /* (K, 16) path returns              */
    double   *M  = calloc((size_t)K, sizeof *M);     /* (K) equal-weight market return    */
    m->returns   = malloc((size_t)n_steps * (size_t)A * sizeof *m->returns);
    m->signals   = malloc((size_t)n_steps * WGF_FIN_SIGNALS * sizeof *m->signals);
    if (!R || !M || !m->returns || !m->signals) {
        free(R), free(M), wgf_sim_market_free(m);
        return wgf_fail(err, WGF_ERR_NOMEM, "sim: finsim: path of %d steps", n_steps);
    }
    m->n_steps = n_steps;
    struct wgf_rng rng;
    wgf_rng_seed(&rng, 0x46494E53ull ^ ((uint64_t)seed << 32)); /* "FINS" */
    int regime = 0;
    for (int k = 0; k < K; k++) {
        double u = wgf_rng_f64(&rng);
        if (regime == 0 && u < 0.02) regime = 1;
        else if (regime == 1 && u < 0.10) regime = 0;
        double f = (regime ? 0.020 : 0.008) * wgf_rng_normal(&rng), scale = regime ? 2.0 : 1.0, sum = 0;
        for (int a = 0; a < A; a++) {
            double beta = 0.5 + a / 15.0, sig = 0.004 + 0.0005 * a, mu = 0.0001 * ((a % 5) - 2);
            double phi  = 0.1 * ((a % 3) - 1), prev = k ? R[(size_t)(k - 1) * (size_t)A + (size_t)a] : 0.0;
            double r    = mu + beta * f + sig * scale * wgf_rng_normal(&rng) + phi * prev;
            r           = r < -0.3 ? -0.3 : r > 0.3 ? 0.3 : r;
            R[(size_t)k * (size_t)A + (size_t)a] = r;
            sum += r;
        }
        M[k] = sum / A;
    }
    for (int t = 0; t < n_steps; t++) {
        int    k   = W + t;
        float *sig = m->signals + (size_t)t * WGF_FIN_SIGNALS;
        for (int a = 0; a < A; a++) {
            double mom = 0;
            for (int j = 1; j <= 10; j++) mom += R[(size_t)(k - j) * (size_t)A + (size_t)a];
            sig[2 * a]     = (float)clip5(R[(size_t)(k - 1) * (size_t)A + (size_t)a] / 0.01);
            sig[2 * a + 1] = (float)clip5(mom / 0.03);
            m->returns[(size_t)t * (size_t)A + (size_t)a] = (float)R[(size_t)k * (size_t)A + (size_t)a];
        }
        double mmom = 0, mmean = 0, mvar = 0, xmean = 0, xvar = 0;
        for (int j = 1; j <= 10; j++) mmom += M[k - j];
        for (int j = 1; j <= 20; j++) mmean += M[k - j] / 20.0;
        for (int j = 1; j <= 20; j++) mvar += (M[k - j] - mmean) * (M[k - j] - mmean) / 20.0;
        for (int a = 0; a < A; a++) xmean += R[(size_t)(k - 1) * (size_t)A + (size_t)a] / A;
        for (int a = 0; a < A; a++) {
            double d = R[(size_t)(k - 1) * (size_t)A + (size_t)a] - xmean;
            xvar += d * d / A;
        }
        sig[32] = (float)clip5(M[k - 1] / 0.01);
        sig[33] = (float)clip5(mmom / 0.03);
        sig[34] = (float)clip5(sqrt(mvar) / 0.01 - 1.0);
        sig[35] = (float)clip5(sqrt(xvar) / 0.01 - 1.0);
    }
    free(R), free(M);
    return WGF_OK;
}

void wgf_sim_market_free(struct wgf_sim_market *m)
{
    if (!m) return;
    free(m->returns), free(m->signals);
    m->returns = m->signals = NULL;
    m->n_steps = 0;
}

static float fin_sigmoid(float x) { return 1.0f / (1.0f + expf(-fminf(fmaxf(x, -30.0f), 30.0f))); }

float wgf_sim_finsim_ref_episode(const struct wgf_sim_market *m, const struct wgf_sim_policy *p, const float *params,
                                 int n_steps)
{
    float e[WGF_FIN_ASSETS] = {0}, fb[WGF_FIN_ASSETS][2] = {{0}}, logeq = 0.0f, in[8], out[6];
    WGF_ASSERT(p->n_in == 8 && p->n_out == 6 && n_steps <= m->n_steps);
    for (int t = 0; t < n_steps; t++) {
        const float *sig = m->signals + (size_t)t * WGF_FIN_SIGNALS, *ret = m->returns + (size_t)t * WGF_FIN_ASSETS;
        float pnl = 0.0f, turnover = 0.0f;
        for (int a = 0; a < WGF_FIN_ASSETS; a++) {
            in[0] = sig[2 * a], in[1] = sig[2 * a + 1];
            in[2] = sig[32], in[3] = sig[33], in[4] = sig[34], in[5] = sig[35];
            in[6] = fb[a][0], in[7] = fb[a][1];
            wgf_sim_policy_forward(p, params, in, out);
            if (out[2] > 0.0f) {
                float lev = 1.0f + 2.0f * fin_sigmoid(out[1]);
                float ne  = lev * wgf__sim_tanh(out[0]) * fin_sigmoid(out[3]) / 16.0f;
                turnover  = turnover + fabsf(ne - e[a]);
                e[a]      = ne;
            }
            fb[a][0] = wgf__sim_tanh(out[4]), fb[a][1] = wgf__sim_tanh(out[5]);
            pnl = pnl + e[a] * ret[a];
        }
        float growth = 1.0f + pnl - FIN_COST * turnover;
        if (growth <= FIN_RUIN) return logeq + logf(FIN_RUIN);
        logeq = logeq + logf(growth);
    }
    return logeq;
}
