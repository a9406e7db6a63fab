// qround_rows — the input of a prefill matmul over quantized rows, rounded to int8 values
// (--activations q8): what lib_rows_q's qx_round gives a decode step, as floats.
// math:       per 32-element block of each row: d = max|x| / 127, y = d round(x / d) (0 for a
//             zero block; a block with a NaN or an infinity all NaN), as cpu-ref's
//             wgf__quant_round_q8
// fuses:      nothing (one extra dispatch per quantized prefill matmul in this mode)
// workgroups: grid (n_rows); WG invocations, one 32-element block at a time
// bindings:   0 y (n_rows, XS4) vec4 read_write | 1 x (n_rows, XS4) vec4 read
// injected:   WG, NB (blocks per row), XS4 (row stride in vec4)
@group(0) @binding(0) var<storage, read_write> y: array<vec4<f32>>; // (rows, XS4)
@group(0) @binding(1) var<storage, read>       x: array<vec4<f32>>; // (rows, XS4)

fn absbits(v: vec4<f32>) -> u32 {
    let b = bitcast<vec4<u32>>(v) & vec4<u32>(0x7FFFFFFFu);
    return max(max(b.x, b.y), max(b.z, b.w));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let r = wid.x * XS4;
    for (var u = li; u < NB; u += WG) {
        let o = r + 8u * u;
        var m = 0u;
        for (var k = 0u; k < 8u; k++) {
            m = max(m, absbits(x[o + k]));
        }
        let nf = m >= 0x7F800000u; // a NaN or an infinity: the block all NaN
        let d  = bitcast<f32>(m) / 127.0;
        let id = select(select(0.0, 1.0 / d, d > 0.0), 0.0, nf);
        for (var k = 0u; k < 8u; k++) {
            let v = d * clamp(round(x[o + k] * id), vec4<f32>(-127.0), vec4<f32>(127.0));
            y[o + k] = select(v, vec4<f32>(bitcast<f32>(m | 0x00400000u)), nf);
        }
    }
}
