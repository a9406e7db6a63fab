// evolve — one GA generation on the GPU: elitism, tournament selection, uniform crossover,
// gaussian mutation. The population never leaves the GPU.
//
// Role:     params_out = next generation of params_in, given fitness (higher is better).
// Math:     rank(g) = #{j : f_j > f_g or (f_j = f_g and j < g)} (NaN counts as -3e38);
//           genome with rank r < elites -> slot r unchanged; every slot c >= elites:
//           parents A, B = best of `tournament` uniform draws each; child[k] = A[k] or B[k]
//           by a fair coin; with probability mut_rate child[k] += mut_sigma N(0,1).
//           Randomness: sim_rand(seed, generation, c, tag|k) (sim_rng fragment).
// Fuses:    ranking + selection + crossover + mutation + the generation counter advance
//           (thread 0 writes ctl_out = ctl_in + 1) into one dispatch.
// Mapping:  one thread per genome g: it places itself if elite, then builds child g if
//           g >= elites. WG threads per workgroup, ceil(POP / WG) workgroups. The rank scan
//           stops once `elites` better genomes are seen, so non-elites scan little.
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

// NaN-safe fitness (a bit test: compilers may fold x != x away).
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
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let g = gid.x;
    if (g >= POP) {
        return;
    }
    let gen = ctl_in[0];
    let seed = ctl_in[1];
    if (g == 0u) {
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
        for (var k = 0u; k < N_PARAMS; k++) {
            params_out[rank * N_PARAMS + k] = params_in[g * N_PARAMS + k];
        }
    }
    if (g < ga.elites) {
        return;
    }

    let pa = tournament(seed, gen, g, 0u) * N_PARAMS;
    let pb = tournament(seed, gen, g, ga.tournament) * N_PARAMS;
    let out = g * N_PARAMS;
    for (var k = 0u; k < N_PARAMS; k++) {
        let coin = sim_rand(seed, gen, g, sim_j(TAG_CROSSOVER, k)) & 1u;
        var v = select(params_in[pa + k], params_in[pb + k], coin == 1u);
        if (sim_u01(sim_rand(seed, gen, g, sim_j(TAG_MUTATE, k))) < ga.mut_rate) {
            v = v + ga.mut_sigma * sim_normal(seed, gen, g, TAG_NORMAL, k);
        }
        params_out[out + k] = v;
    }
}
