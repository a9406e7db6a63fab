// rastrigin — evaluate the Rastrigin function for every genome (no time steps).
//
// Role:     fitness[g] = -(10 DIM + sum_i (x_i^2 - 10 cos(2 pi x_i))), x = genome g.
// Math:     lane l sums i = l, l + WG, ... in order; then a halving tree over the WG lanes
//           (the order wgf_sim_rastrigin_ref in src/sim/rastrigin.c reproduces).
// Fuses:    the whole evaluation: one dispatch per generation.
// Mapping:  one workgroup of WG threads per genome (strided, coalesced reads), POP
//           workgroups (POP <= 65535).
// Bindings: 0 fitness (POP) f32 rw   1 params (POP, N_PARAMS = DIM) f32 r
// Injected: prelude consts POP, G0, GN, N_PARAMS (= DIM), WG.

@group(0) @binding(0) var<storage, read_write> fitness : array<f32>; // (POP)
@group(0) @binding(1) var<storage, read>       params  : array<f32>; // (POP, N_PARAMS)

var<workgroup> part: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    let g = G0 + wid.x; // one workgroup per genome of the evaluated range G0 .. G0 + GN - 1
    let base = g * N_PARAMS;
    var acc = 0.0;
    for (var i = l; i < N_PARAMS; i += WG) {
        let x = params[base + i];
        acc = acc + (x * x - 10.0 * cos(6.28318531 * x));
    }
    part[l] = acc;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if (l < s) {
            part[l] = part[l] + part[l + s];
        }
        workgroupBarrier();
    }
    if (l == 0u && wid.x < GN) {
        fitness[g] = -(10.0 * f32(N_PARAMS) + part[0]);
    }
}
