// calib_chain — the latency of a dependent chain of f32 operations in one invocation: the
// advisor's chain term. A simulation's thread-per-genome episode is one long chain per
// invocation (observation -> policy -> action -> environment step -> next observation), whose
// time on a GPU is set by the latency of each operation, not by the device's FMA throughput
// (H200, CartPole 4,096 x 500: 1.5 us per step for ~430 operations per genome).
// math:       a <- fma(a, m, c) ITER times (each depends on the last); y[i] = a
//             FLOPs per invocation: ITER * 2, all in one chain
// fuses:      nothing (a measurement kernel)
// workgroups: WG invocations, one workgroup (the advisor: WG 64, the simulation's)
// bindings:   0 y (WG) f32 read_write
// injected:   WG, ITER (const prelude)
@group(0) @binding(0) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let i = gid.x;
    let m = 0.999999 + f32(i & 7u) * 1e-8;
    let c = f32(i & 15u) * 1e-7;
    var a = f32(i) * 1e-6;
    for (var k = 0u; k < ITER; k++) {
        a = fma(a, m, c);
    }
    y[i] = a;
}
