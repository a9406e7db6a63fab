// silu_mul_rows — the FFN activation of a prefill chunk: SiLU(gate) * up.
// math:       h[t, i] = silu(gu[t, 2i]) * gu[t, 2i + 1], silu(a) = a / (1 + exp(-a)) (gate and
//             up rows are stored interleaved, so the matmul's output is too)
// fuses:      sigmoid, mul, mul (3 -> 1)
// workgroups: grid (n_rows); WG invocations over the row's HIDDEN outputs
// bindings:   0 h (n_rows, HIDP) f32 read_write | 1 gu (n_rows, GU_S) f32 read
// injected:   WG, HIDDEN, HIDP, GU_S (gate/up row stride)
@group(0) @binding(0) var<storage, read_write> h:  array<f32>; // (rows, HIDP) f32
@group(0) @binding(1) var<storage, read>       gu: array<f32>; // (rows, GU_S) f32

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let t = wid.x;
    for (var i = li; i < HIDDEN; i += WG) {
        let a = gu[t * GU_S + 2u * i];
        h[t * HIDP + i] = a / (1.0 + exp(-a)) * gu[t * GU_S + 2u * i + 1u];
    }
}
