// evolve — one GA generation on the GPU: elitism, tournament selection, uniform crossover,
// gaussian mutation. The population never leaves the GPU.
//
// Role:     params_out = next generation of params_in, given fitness (higher is better).
// Math:     rank(g) = #{j : f_j > f_g or (f_j = f_g and j < g)} (NaN counts as -3e38);
//           genome with rank r < elites -> slot r unchanged; every slot c >= elites:
//           parents A, B = best of `tournament` uniform draws each; child[k] = A[k] or B[k]
//           by a fair coin; with probability mut_rate child[k] += mut_sigma N(0,1).
//           Randomness: sim_rand(seed, generation, c, tag|k) (sim_rng fragment). The step
//           itself is evolve_one.inc.wgsl's evolve_genome, shared with evolve_wide.
// Fuses:    ranking + selection + crossover + mutation + the generation counter advance
//           (thread 0 writes ctl_out = ctl_in + 1) into one dispatch.
// Mapping:  one thread per genome g: it places itself if elite, then builds child g if
//           g >= elites. WG threads per workgroup, ceil(POP / WG) workgroups. The rank scan
//           stops once `elites` better genomes are seen, so non-elites scan little.
// Bindings: 0 params_out (POP, N_PARAMS) f32 rw   1 ctl_out (4) u32 rw
//           2 params_in  (POP, N_PARAMS) f32 r    3 fitness (POP) f32 r
//           4 ctl_in     (4) u32 r: generation, seed
//           5 ga         uniform: elites, tournament, mut_rate, mut_sigma
// Injected: prelude consts POP, N_PARAMS, WG; fragments evolve_one (+ ga, fitness, sim_rng,
//           generation).
//#include "sim/evolve_one.inc.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let g = gid.x;
    if (g >= POP) {
        return;
    }
    evolve_genome(g, 0u, 1u);
}
