/* wgfuse sim — Rastrigin, the embarrassingly parallel control workload (no time steps):
 * f(x) = 10 d + sum_i (x_i^2 - 10 cos(2 pi x_i)), minimum 0 at x = 0, search box
 * [-5.12, 5.12]^d. Fitness = -f. The reference sums in the kernel's order: 64 strided
 * partial sums (lane l takes i = l, l + 64, ...), then a halving tree. */
#include <math.h>

#include "sim/sim_internal.h"

float wgf_sim_rastrigin_ref(const float *x, int dim)
{
    float part[WGF_SIM_WG];
    for (int l = 0; l < WGF_SIM_WG; l++) {
        float acc = 0.0f;
        for (int i = l; i < dim; i += WGF_SIM_WG) acc = acc + (x[i] * x[i] - 10.0f * cosf(6.28318531f * x[i]));
        part[l] = acc;
    }
    for (int s = WGF_SIM_WG / 2; s > 0; s >>= 1)
        for (int l = 0; l < s; l++) part[l] = part[l] + part[l + s];
    return 10.0f * (float)dim + part[0];
}
