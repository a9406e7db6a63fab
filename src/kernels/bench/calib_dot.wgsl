// calib_dot — the rate one workgroup reaches streaming a matvec row loop from device memory:
// the advisor's serial term. Each invocation issues 4 vec4 weight loads, then 16 FMAs against
// a small cached vector x (as the GPU plans' row loops do: several loads in flight per
// invocation, the index arithmetic, the accumulation). One workgroup of a kernel that streams
// a model's weights through one compute unit (the mega plan) is bound by this per-element
// rate, not by the pure-FMA rate (calib_fma, no loads) nor by the bytes alone (the H200's
// mega took the same time with f16 and f32 weights).
// math:       y[j] = sum over the invocation's vec4s i of dot(w[i], w[i & 255]) (the second
//             read is the cached "x"); FLOPs: 2 per f32 element
// fuses:      nothing (a measurement kernel)
// workgroups: WG invocations, grid G (the advisor: 1); grid-stride over N4 in groups of 4
// bindings:   0 y (G * WG) f32 read_write | 1 w (N4) vec4<f32> read
// injected:   WG, N4 (const prelude; N4 a multiple of 4 * G * WG)
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@group(0) @binding(1) var<storage, read>       w: array<vec4<f32>>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
    let stride = nwg.x * WG;
    var acc = vec4<f32>(0.0);
    for (var i = gid.x; i + 3u * stride < N4; i += 4u * stride) {
        let a = w[i];
        let b = w[i + stride];
        let c = w[i + 2u * stride];
        let d = w[i + 3u * stride];
        acc = fma(a, w[i & 255u], acc);
        acc = fma(b, w[(i + stride) & 255u], acc);
        acc = fma(c, w[(i + 2u * stride) & 255u], acc);
        acc = fma(d, w[(i + 3u * stride) & 255u], acc);
    }
    y[gid.x] = (acc.x + acc.y) + (acc.z + acc.w);
}
