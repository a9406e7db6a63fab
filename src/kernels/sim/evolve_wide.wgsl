// evolve_wide — one GA generation, one workgroup per genome: the variant of evolve.wgsl for
// long genomes (Rastrigin's 2,000 dimensions), where one thread per genome reads and writes
// its 8 KB rows with a 8 KB stride between neighbouring threads.
//
// Role:     params_out = next generation of params_in, given fitness (higher is better).
// Math:     exactly evolve.wgsl's: the same evolve_genome (evolve_one.inc.wgsl) over lanes, the
//           same ranks, tournaments, coins and normals from the same sim_rand counters, so both
//           variants give bitwise-identical populations.
// Fuses:    ranking + selection + crossover + mutation + the generation counter advance.
// Mapping:  workgroup g (WG lanes) owns genome g: every lane computes the same rank and the
//           same two tournaments (uniform loads, broadcast), then lane l handles parameters
//           k = l, l + WG, ... so each warp's reads and writes of a row are coalesced.
//           POP workgroups (POP <= 65535).
// Bindings: 0 params_out (POP, N_PARAMS) f32 rw   1 ctl_out (4) u32 rw
//           2 params_in  (POP, N_PARAMS) f32 r    3 fitness (POP) f32 r
//           4 ctl_in     (4) u32 r: generation, seed
//           5 ga         uniform: elites, tournament, mut_rate, mut_sigma
// Injected: prelude consts POP, N_PARAMS, WG; fragments evolve_one (+ ga, fitness, sim_rng,
//           generation).
//#include "sim/evolve_one.inc.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    let g = wid.x;
    if (g >= POP) {
        return;
    }
    evolve_genome(g, l, WG);
}
