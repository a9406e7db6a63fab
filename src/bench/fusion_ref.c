/* wgfuse bench — plain-C references for every kernel the benchmarks time.
 *
 * Written from the math alone (not from the WGSL), f32 in and out, sums in double: the
 * GPU kernels sum in f32 in a different order, so the checks allow a tolerance relative to
 * the output's scale (bench_fusion.c states each one). */
#include <math.h>
#include <string.h>

#include "wgfuse/bench.h"

void wgf_ref_rmsnorm(float *y, const float *x, const float *w, uint32_t n, float eps)
{
    double ss = 0;
    for (uint32_t i = 0; i < n; i++) ss += (double)x[i] * x[i];
    double scale = 1.0 / sqrt(ss / n + eps);
    for (uint32_t i = 0; i < n; i++) y[i] = (float)(x[i] * scale * w[i]);
}

void wgf_ref_matvec(float *y, const float *x, const float *w, const float *res, uint32_t rows, uint32_t k_dim)
{
    for (uint32_t r = 0; r < rows; r++) {
        const float *wr  = w + (size_t)r * k_dim;
        double       acc = 0;
        for (uint32_t k = 0; k < k_dim; k++) acc += (double)wr[k] * x[k];
        if (res) acc += res[r];
        y[r] = (float)acc;
    }
}

static double wgf__silu(double v) { return v / (1.0 + exp(-v)); }

void wgf_ref_mlp(float *y, const float *x, const float *w_gate_up, const float *w_down, uint32_t hidden,
                 uint32_t inter)
{
    /* h[r] = silu(gate[r]) * up[r] in double, accumulated into y column by column, so no
     * scratch of the MLP width is needed (acc: hidden doubles, a few KiB). */
    double acc[hidden];
    for (uint32_t j = 0; j < hidden; j++) acc[j] = x[j];
    for (uint32_t r = 0; r < inter; r++) {
        const float *wg = w_gate_up + (size_t)r * hidden;
        const float *wu = w_gate_up + (size_t)(inter + r) * hidden;
        double       g = 0, u = 0;
        for (uint32_t k = 0; k < hidden; k++) {
            g += (double)wg[k] * x[k];
            u += (double)wu[k] * x[k];
        }
        double h = wgf__silu(g) * u;
        for (uint32_t j = 0; j < hidden; j++) acc[j] += w_down[(size_t)j * inter + r] * h;
    }
    for (uint32_t j = 0; j < hidden; j++) y[j] = (float)acc[j];
}

void wgf_ref_softmax(float *y, const float *x, uint32_t rows, uint32_t len)
{
    for (uint32_t r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * len;
        float       *yr = y + (size_t)r * len;
        double       m  = -INFINITY, s = 0;
        for (uint32_t i = 0; i < len; i++)
            if (xr[i] > m) m = xr[i];
        for (uint32_t i = 0; i < len; i++) s += exp(xr[i] - m);
        for (uint32_t i = 0; i < len; i++) yr[i] = (float)(exp(xr[i] - m) / s);
    }
}

uint32_t wgf_ref_argmax(const float *x, uint32_t n)
{
    uint32_t best = 0;
    float    bv   = -INFINITY;
    for (uint32_t i = 0; i < n; i++)
        if (x[i] > bv) { /* strict: the lowest index wins ties; NaN compares false */
            bv   = x[i];
            best = i;
        }
    return best;
}

void wgf_ref_tiny(float *y, const float *x, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) y[i] = 2.0f * x[i] + 1.0f;
}
