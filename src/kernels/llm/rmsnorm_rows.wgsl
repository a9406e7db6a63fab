// rmsnorm_rows — RMSNorm of every row of a prefill chunk (the norm before attention, the FFN
// and the output projection; decode folds it into those roles instead).
// math:       y[t] = x[t] * g / sqrt(mean(x[t]^2) + EPS)
// fuses:      square, mean, add eps, rsqrt, scale, weight (6 -> 1)
// workgroups: grid (n_rows); WG invocations over the row's DIMP / 4 vec4
// bindings:   0 y (n_rows, DIMP) f32 read_write | 1 x (n_rows, DIMP) f32 read
//             | 2 g (DIMP) f32 read
// injected:   WG, SGS, TPR (= WG), DIM, DIMP, EPS
@group(0) @binding(0) var<storage, read_write> y: array<vec4<f32>>; // (rows, DIMP) f32
@group(0) @binding(1) var<storage, read>       x: array<vec4<f32>>; // (rows, DIMP) f32
@group(0) @binding(2) var<storage, read>       g: array<vec4<f32>>; // (DIMP) f32

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let o  = wid.x * (DIMP / 4u);
    var ss = 0.0;
    for (var i = li; i < DIMP / 4u; i += WG) {
        let v = x[o + i];
        ss += dot(v, v);
    }
    let inv = inverseSqrt(wgsum(ss, li) / f32(DIM) + EPS);
    for (var i = li; i < DIMP / 4u; i += WG) {
        y[o + i] = g[i] * (x[o + i] * inv);
    }
}
