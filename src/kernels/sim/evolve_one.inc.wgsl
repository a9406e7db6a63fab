// evolve_one — one GA generation in one dispatch, shared by evolve.wgsl (a thread per genome)
// and evolve_wide.wgsl (a workgroup per genome): their bindings and the whole per-genome step
// (a fragment; each kernel's main only maps threads to (genome, lane)).
//
// Role:     evolve_genome(g, lane, lanes): the genome g's part of params_out, its parameters
//           k = lane, lane + lanes, ... (lanes = 1: all of them).
// Math:     rank(g) = #{j : better(j, g)}, stopping once `elites` are seen; rank < elites ->
//           slot rank gets genome g unchanged; every slot c >= elites: parents A, B = best of
//           `tournament` uniform draws each (draws t = 0..T-1 and T..2T-1); child[k] = A[k]
//           or B[k] by a fair coin; with probability mut_rate child[k] += mut_sigma N(0,1).
//           Randomness: sim_rand(seed, generation, c, tag|k), so any lane split gives the
//           same bits. Genome 0's lane 0 advances the counter: ctl_out = (gen + 1, seed, 0, 0).
// Bindings: 0 params_out (POP, N_PARAMS) f32 rw   1 ctl_out (4) u32 rw
//           2 params_in  (POP, N_PARAMS) f32 r    3 fitness (POP) f32 r
//           4 ctl_in     (4) u32 r: generation, seed
//           5 ga         uniform: elites, tournament, mut_rate, mut_sigma
// Injected: prelude consts POP, N_PARAMS.
//#include "sim/ga.inc.wgsl"
//#include "sim/fitness.inc.wgsl"
//#include "sim/sim_rng.inc.wgsl"
//#include "sim/generation.inc.wgsl"

@group(0) @binding(0) var<storage, read_write> params_out : array<f32>; // (POP, N_PARAMS)
@group(0) @binding(1) var<storage, read_write> ctl_out    : array<u32>; // (4)
@group(0) @binding(2) var<storage, read>       params_in  : array<f32>; // (POP, N_PARAMS)
@group(0) @binding(3) var<storage, read>       fitness    : array<f32>; // (POP)
@group(0) @binding(4) var<storage, read>       ctl_in     : array<u32>; // (4)
@group(0) @binding(5) var<uniform>             ga         : Ga;

fn tournament(seed: u32, gen: u32, c: u32, first: u32) -> u32 {
    var best = sim_rand(seed, gen, c, sim_j(TAG_TOURNAMENT, first)) % POP;
    var fbest = fit(best);
    for (var t = 1u; t < ga.tournament; t++) {
        let j = sim_rand(seed, gen, c, sim_j(TAG_TOURNAMENT, first + t)) % POP;
        let fj = fit(j);
        if (better(j, fj, best, fbest)) {
            best = j;
            fbest = fj;
        }
    }
    return best;
}

fn evolve_genome(g: u32, lane: u32, lanes: u32) {
    let gen = ctl_in[0];
    let seed = ctl_in[1];
    if (g == 0u && lane == 0u) {
        generation_advance(gen, seed);
    }

    let fg = fit(g);
    var rank = 0u;
    for (var j = 0u; j < POP && rank < ga.elites; j++) {
        if (better(j, fit(j), g, fg)) {
            rank++;
        }
    }
    if (rank < ga.elites) {
        for (var k = lane; k < N_PARAMS; k += lanes) {
            params_out[rank * N_PARAMS + k] = params_in[g * N_PARAMS + k];
        }
    }
    if (g < ga.elites) {
        return;
    }

    let pa = tournament(seed, gen, g, 0u) * N_PARAMS;
    let pb = tournament(seed, gen, g, ga.tournament) * N_PARAMS;
    let out = g * N_PARAMS;
    for (var k = lane; k < N_PARAMS; k += lanes) {
        let coin = sim_rand(seed, gen, g, sim_j(TAG_CROSSOVER, k)) & 1u;
        var v = select(params_in[pa + k], params_in[pb + k], coin == 1u);
        if (sim_u01(sim_rand(seed, gen, g, sim_j(TAG_MUTATE, k))) < ga.mut_rate) {
            v = v + ga.mut_sigma * sim_normal(seed, gen, g, TAG_NORMAL, k);
        }
        params_out[out + k] = v;
    }
}
