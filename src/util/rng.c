#include "util/rng.h"

#include <math.h>

double wgf_rng_normal(struct wgf_rng *r)
{
    double u1 = wgf_rng_f64(r), u2 = wgf_rng_f64(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
