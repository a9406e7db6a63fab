/* wgfuse sim — the counter-based hash RNG shared bit for bit by C and WGSL.
 *
 * Every random number a kernel draws is a pure function of (seed, generation, i, j): no RNG
 * state lives on the GPU, so any strategy, any dispatch split and the C reference draw the
 * same numbers. The mirror is src/kernels/sim_rng.wgsl (u32 arithmetic only: WGSL has no
 * 64-bit integers). */
#include <math.h>

#include "wgfuse/sim.h"

/* PCG-RXS-M-XS 32: one LCG step then PCG's output permutation (the "pcg" hash of Jarzynski
 * and Olano, "Hash Functions for GPU Rendering", JCGT 2020). */
uint32_t wgf_sim_hash(uint32_t x)
{
    uint32_t state = x * 747796405u + 2891336453u;
    uint32_t word  = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

uint32_t wgf_sim_rand(uint32_t seed, uint32_t gen, uint32_t i, uint32_t j)
{
    return wgf_sim_hash(wgf_sim_hash(wgf_sim_hash(wgf_sim_hash(seed) ^ gen) ^ i) ^ j);
}

float wgf_sim_u01(uint32_t h) { return (float)(h >> 8) * (1.0f / 16777216.0f); }

/* Box-Muller, cos branch: u1 in (0, 1] so log never sees 0. The GPU's log/cos differ from
 * libm by a few ulp, so GPU and C normals agree to ~1e-6, not bitwise.
 * The host's normals (the initial population) are the same bits on every C library: the
 * cosine is taken in double and rounded once, which glibc and musl (the wasm build's
 * wasi-libc) give identically for all 2^24 values of u2, while their cosf differ in the last
 * bit for ~1% of them; logf already agrees on all 2^24 values of u1. So the page's
 * population equals the native build's, bit for bit (tests/web). */
float wgf_sim_normal(uint32_t seed, uint32_t gen, uint32_t i, uint32_t tag, uint32_t k)
{
    float u1 = 1.0f - wgf_sim_u01(wgf_sim_rand(seed, gen, i, WGF_SIM_J(tag, 2u * k)));
    float u2 = wgf_sim_u01(wgf_sim_rand(seed, gen, i, WGF_SIM_J(tag, 2u * k + 1u)));
    return sqrtf(-2.0f * logf(u1)) * (float)cos((double)(6.28318530718f * u2));
}
