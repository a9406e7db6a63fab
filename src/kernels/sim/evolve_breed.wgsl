// evolve_breed — pass 3 of 3 of the GA's evolve: writes the next generation, row by row.
//
// Role:     params_out slot c < elites = params_in row elite[c] (unchanged, best first);
//           slot c >= elites = child of parents A = sel[c].x, B = sel[c].y: child[k] = A[k]
//           or B[k] by a fair coin; with probability mut_rate child[k] += mut_sigma N(0,1).
//           Thread 0 advances the generation counter: ctl_out = (gen + 1, seed, 0, 0).
// Math:     exactly evolve.wgsl's: coin = sim_rand(seed, gen, c, TAG_CROSSOVER | k) & 1,
//           gate u01(sim_rand(.., TAG_MUTATE | k)) < mut_rate, normal sim_normal(seed, gen,
//           c, TAG_NORMAL, k), the same expression v + mut_sigma * n, so the same bits. The
//           (seed, gen, c) hash prefix comes from evolve_select (sel[c].z = sim_stream).
// Fuses:    elitism copy + crossover + mutation + the generation counter advance.
// Mapping:  one workgroup of WG lanes per child slot c; lane l handles parameters
//           k = l, l + WG, ...: a warp reads 32 consecutive floats of one parent row (the
//           coin picks which row to load: one load per parameter) and writes 32 consecutive
//           floats of the child row. Workgroups on a 2D grid (x <= 65535, c = x + y * nx).
// Bindings: 0 params_out (POP, N_PARAMS) f32 rw   1 ctl_out (4) u32 rw
//           2 params_in (POP, N_PARAMS) f32 r     3 sel (POP) vec4<u32> r: A, B, stream
//           4 elite (elites) u32 r                5 ctl_in (4) u32 r: generation, seed
//           6 ga uniform: elites, tournament, mut_rate, mut_sigma
// Injected: prelude consts POP, N_PARAMS, WG; fragments ga, sim_rng, generation.
//#include "sim/ga.inc.wgsl"
//#include "sim/sim_rng.inc.wgsl"
//#include "sim/generation.inc.wgsl"

@group(0) @binding(0) var<storage, read_write> params_out : array<f32>; // (POP, N_PARAMS)
@group(0) @binding(1) var<storage, read_write> ctl_out    : array<u32>; // (4)
@group(0) @binding(2) var<storage, read>       params_in  : array<f32>; // (POP, N_PARAMS)
@group(0) @binding(3) var<storage, read>       sel        : array<vec4<u32>>; // (POP)
@group(0) @binding(4) var<storage, read>       elite      : array<u32>; // (elites)
@group(0) @binding(5) var<storage, read>       ctl_in     : array<u32>; // (4)
@group(0) @binding(6) var<uniform>             ga         : Ga;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) l: u32) {
    let c = wid.x + wid.y * nwg.x;
    if (c >= POP) {
        return;
    }
    let gen = ctl_in[0];
    let seed = ctl_in[1];
    if (c == 0u && l == 0u) {
        generation_advance(gen, seed);
    }
    let out = c * N_PARAMS;
    if (c < ga.elites) {
        let src = elite[c] * N_PARAMS;
        for (var k = l; k < N_PARAMS; k += WG) {
            params_out[out + k] = params_in[src + k];
        }
        return;
    }

    let sc = sel[c];
    let pa = sc.x * N_PARAMS;
    let pb = sc.y * N_PARAMS;
    let st = sc.z;
    for (var k = l; k < N_PARAMS; k += WG) {
        let coin = sim_draw(st, sim_j(TAG_CROSSOVER, k)) & 1u;
        var v = params_in[select(pa, pb, coin == 1u) + k];
        if (sim_u01(sim_draw(st, sim_j(TAG_MUTATE, k))) < ga.mut_rate) {
            v = v + ga.mut_sigma * sim_normal_s(st, TAG_NORMAL, k);
        }
        params_out[out + k] = v;
    }
}
