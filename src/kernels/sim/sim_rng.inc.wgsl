// sim_rng — the counter-based hash RNG of wgfuse sim (a fragment, no entry point).
//
// Role:     every random number a sim kernel draws: reset states, tournaments, crossover,
//           mutation, ES noise. A pure function of (seed, generation, i, j), so strategies
//           and the C reference (src/sim/sim_rng.c) draw identical u32s.
// Math:     hash(x) = PCG-RXS-M-XS 32 (LCG step, then PCG's output permutation);
//           rand(seed, gen, i, j) = hash(hash(hash(hash(seed) ^ gen) ^ i) ^ j);
//           u01(h) = (h >> 8) / 2^24, exact in f32. sim_stream(seed, gen, i) is the
//           (seed, gen, i) prefix, so sim_draw(sim_stream(seed, gen, i), j) ==
//           sim_rand(seed, gen, i, j) bit for bit: a kernel that draws many j for one i
//           hashes the prefix once.
// Fuses:    nothing; appended (//#include) to the episode, evolve and es kernels.
// Mapping:  none (functions only).
// Bindings: none.
// Injected: nothing; TAG_* below must equal WGF_SIM_TAG_* in include/wgfuse/sim.h.

const TAG_RESET: u32 = 0u;
const TAG_TOURNAMENT: u32 = 1u;
const TAG_CROSSOVER: u32 = 2u;
const TAG_MUTATE: u32 = 3u;
const TAG_NORMAL: u32 = 4u;
const TAG_INIT: u32 = 5u;
const TAG_ES: u32 = 6u;

fn sim_hash(x: u32) -> u32 {
    let state = x * 747796405u + 2891336453u;
    let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

fn sim_rand(seed: u32, gen: u32, i: u32, j: u32) -> u32 {
    return sim_hash(sim_hash(sim_hash(sim_hash(seed) ^ gen) ^ i) ^ j);
}

fn sim_stream(seed: u32, gen: u32, i: u32) -> u32 { return sim_hash(sim_hash(sim_hash(seed) ^ gen) ^ i); }

fn sim_draw(stream: u32, j: u32) -> u32 { return sim_hash(stream ^ j); }

fn sim_j(tag: u32, k: u32) -> u32 { return (tag << 28u) | (k & 0x0FFFFFFFu); }

fn sim_u01(h: u32) -> f32 { return f32(h >> 8u) * (1.0 / 16777216.0); }

// Standard normal, Box-Muller cos branch; u1 in (0, 1] so log never sees 0.
fn sim_normal(seed: u32, gen: u32, i: u32, tag: u32, k: u32) -> f32 {
    let u1 = 1.0 - sim_u01(sim_rand(seed, gen, i, sim_j(tag, 2u * k)));
    let u2 = sim_u01(sim_rand(seed, gen, i, sim_j(tag, 2u * k + 1u)));
    return sqrt(-2.0 * log(u1)) * cos(6.28318530718 * u2);
}

// sim_normal(seed, gen, i, tag, k) from the stream sim_stream(seed, gen, i): same bits.
fn sim_normal_s(stream: u32, tag: u32, k: u32) -> f32 {
    let u1 = 1.0 - sim_u01(sim_draw(stream, sim_j(tag, 2u * k)));
    let u2 = sim_u01(sim_draw(stream, sim_j(tag, 2u * k + 1u)));
    return sqrt(-2.0 * log(u1)) * cos(6.28318530718 * u2);
}

// tanh with its argument clamped: some GPU tanh implementations return NaN for large |x|,
// and tanh(15) already rounds to 1 in f32. The C reference does the same (wgf__sim_tanh).
fn sim_tanh(x: f32) -> f32 { return tanh(clamp(x, -15.0, 15.0)); }
