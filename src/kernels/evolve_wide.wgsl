// evolve_wide — one GA generation, one workgroup per genome: the variant of evolve.wgsl for
// long genomes (Rastrigin's 2,000 dimensions), where one thread per genome reads and writes
// its 8 KB rows with a 8 KB stride between neighbouring threads.
//
// Role:     params_out = next generation of params_in, given fitness (higher is better).
// Math:     exactly evolve.wgsl's (same ranks, tournaments, coins and normals from the same
//           sim_rand counters), so both variants give bitwise-identical populations.
// Fuses:    ranking + selection + crossover + mutation + the generation counter advance.
// Mapping:  workgroup g (WG lanes) owns genome g: every lane computes the same rank and the
//           same two tournaments (uniform loads, broadcast), then lane l handles parameters
//           k = l, l + WG, ... so each warp's reads and writes of a row are coalesced.
//           POP workgroups (POP <= 65535).
// Bindings: 0 params_out (POP, N_PARAMS) f32 rw   1 ctl_out (4) u32 rw
//           2 params_in  (POP, N_PARAMS) f32 r    3 fitness (POP) f32 r
//           4 ctl_in     (4) u32 r: generation, seed
//           5 ga         uniform: elites, tournament, mut_rate, mut_sigma
// Injected: prelude consts POP, N_PARAMS, WG + fragment sim_rng.

struct Ga {
    elites: u32,
    tournament: u32,
    mut_rate: f32,
    mut_sigma: f32,
}

@group(0) @binding(0) var<storage, read_write> params_out : array<f32>; // (POP, N_PARAMS)
@group(0) @binding(1) var<storage, read_write> ctl_out    : array<u32>; // (4)
@group(0) @binding(2) var<storage, read>       params_in  : array<f32>; // (POP, N_PARAMS)
@group(0) @binding(3) var<storage, read>       fitness    : array<f32>; // (POP)
@group(0) @binding(4) var<storage, read>       ctl_in     : array<u32>; // (4)
@group(0) @binding(5) var<uniform>             ga         : Ga;

fn fit(i: u32) -> f32 {
    let f = fitness[i];
    if ((bitcast<u32>(f) & 0x7fffffffu) > 0x7f800000u) {
        return -3.0e38;
    }
    return f;
}

fn better(a: u32, fa: f32, b: u32, fb: f32) -> bool {
    return fa > fb || (fa == fb && a < b);
}

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

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    let g = wid.x;
    if (g >= POP) {
        return;
    }
    let gen = ctl_in[0];
    let seed = ctl_in[1];
    if (g == 0u && l == 0u) {
        ctl_out[0] = gen + 1u;
        ctl_out[1] = seed;
        ctl_out[2] = 0u;
        ctl_out[3] = 0u;
    }

    let fg = fit(g);
    var rank = 0u;
    for (var j = 0u; j < POP && rank < ga.elites; j++) {
        if (better(j, fit(j), g, fg)) {
            rank++;
        }
    }
    if (rank < ga.elites) {
        for (var k = l; k < N_PARAMS; k += WG) {
            params_out[rank * N_PARAMS + k] = params_in[g * N_PARAMS + k];
        }
    }
    if (g < ga.elites) {
        return;
    }

    let pa = tournament(seed, gen, g, 0u) * N_PARAMS;
    let pb = tournament(seed, gen, g, ga.tournament) * N_PARAMS;
    let out = g * N_PARAMS;
    for (var k = l; k < N_PARAMS; k += WG) {
        let coin = sim_rand(seed, gen, g, sim_j(TAG_CROSSOVER, k)) & 1u;
        var v = select(params_in[pa + k], params_in[pb + k], coin == 1u);
        if (sim_u01(sim_rand(seed, gen, g, sim_j(TAG_MUTATE, k))) < ga.mut_rate) {
            v = v + ga.mut_sigma * sim_normal(seed, gen, g, TAG_NORMAL, k);
        }
        params_out[out + k] = v;
    }
}
