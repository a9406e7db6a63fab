/* wgfuse — small seeded RNG (splitmix64 seeding a xoshiro256** stream).
 * Deterministic across platforms: tests, test-model weights, sim seeds and sampling
 * all draw from it so a seed reproduces a run bit for bit. */
#ifndef WGF_UTIL_RNG_H
#define WGF_UTIL_RNG_H
#include <stdint.h>

#include "util/wraps.h"

struct wgf_rng {
    uint64_t s[4];
};

WGF_WRAPS static inline uint64_t wgf__splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline void wgf_rng_seed(struct wgf_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = wgf__splitmix64(&seed);
}

WGF_WRAPS static inline uint64_t wgf__rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

WGF_WRAPS static inline uint64_t wgf_rng_u64(struct wgf_rng *r)
{
    uint64_t *s = r->s;
    uint64_t res = wgf__rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = wgf__rotl(s[3], 45);
    return res;
}

/* uniform in [0, 1) with 24 random bits (exactly representable as float) */
static inline float wgf_rng_f32(struct wgf_rng *r) { return (float)(wgf_rng_u64(r) >> 40) * (1.0f / 16777216.0f); }
/* uniform in [0, 1) with 53 random bits */
static inline double wgf_rng_f64(struct wgf_rng *r) { return (double)(wgf_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0); }
/* uniform in [lo, hi) */
static inline float wgf_rng_uniform(struct wgf_rng *r, float lo, float hi) { return lo + (hi - lo) * wgf_rng_f32(r); }
/* uniform integer in [0, n), n > 0 (Lemire's multiply; bias < 2^-32 for n < 2^32) */
static inline uint32_t wgf_rng_below(struct wgf_rng *r, uint32_t n) { return (uint32_t)(((wgf_rng_u64(r) >> 32) * (uint64_t)n) >> 32); }
/* standard normal (Box-Muller, one value per call) */
double wgf_rng_normal(struct wgf_rng *r);

#endif
