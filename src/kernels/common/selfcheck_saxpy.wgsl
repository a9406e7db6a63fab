// selfcheck_saxpy — the runtime's self-check kernel: y = a * x + y, elementwise.
//
// math:      y[i] = a * x[i] + y[i]            (one FMA-shaped op per element, f32)
// fuses:     nothing (it is the unit every test and `wgfuse report` checks against C)
// mapping:   one invocation per element; 64 invocations per workgroup, workgroups along x
//            then y (so n may exceed 65535 * 64): i = (wg.y * num_wg.x + wg.x) * 64 + lid
// bindings:  0 y      (n) f32   read_write
//            1 x      (n) f32   read
//            2 params uniform { a: f32, n: u32 }
// constants: none

struct Params {
    a : f32,
    n : u32,
}

@group(0) @binding(0) var<storage, read_write> y      : array<f32>; // (n) f32
@group(0) @binding(1) var<storage, read>       x      : array<f32>; // (n) f32
@group(0) @binding(2) var<uniform>             params : Params;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg : vec3<u32>,
        @builtin(num_workgroups) nwg : vec3<u32>,
        @builtin(local_invocation_index) lid : u32) {
    let i = (wg.y * nwg.x + wg.x) * 64u + lid;
    if (i >= params.n) {
        return;
    }
    y[i] = params.a * x[i] + y[i];
}
