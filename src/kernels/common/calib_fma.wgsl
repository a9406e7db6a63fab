// calib_fma — arithmetic that keeps a compute unit busy: eight independent FMA chains per
// invocation (enough to hide FMA latency), ITER steps each. Two measurements use it: the f32
// rate the advisor's cost model divides FLOPs by (src/bench/calibrate.c), and the runtime's
// count of compute units (src/gpu/compute_units.c: a grid of n workgroups takes one
// workgroup's time while n is at most the units, about twice that past them).
// math:       a_k <- fma(a_k, m, c) ITER times for k < 8 (m, c from the invocation index, so
//             nothing folds); y[i] = sum_k a_k keeps every chain alive.
//             FLOPs per invocation: ITER * 8 * 2.
// fuses:      nothing (a measurement kernel)
// workgroups: WG invocations, a 1-D grid of any size; invocation i writes y[i]
// bindings:   0 y (grid * WG) f32 read_write
// injected:   WG, ITER (const prelude)
@group(0) @binding(0) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let i = gid.x;
    let m = 0.999999 + f32(i & 7u) * 1e-8;
    let c = f32(i & 15u) * 1e-7;
    var a0 = f32(i) * 1e-6;
    var a1 = a0 + 0.1;
    var a2 = a0 + 0.2;
    var a3 = a0 + 0.3;
    var a4 = a0 + 0.4;
    var a5 = a0 + 0.5;
    var a6 = a0 + 0.6;
    var a7 = a0 + 0.7;
    for (var k = 0u; k < ITER; k++) {
        a0 = fma(a0, m, c);
        a1 = fma(a1, m, c);
        a2 = fma(a2, m, c);
        a3 = fma(a3, m, c);
        a4 = fma(a4, m, c);
        a5 = fma(a5, m, c);
        a6 = fma(a6, m, c);
        a7 = fma(a7, m, c);
    }
    y[i] = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
}
