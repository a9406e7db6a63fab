// lib_wchunk — fragment: weights stored as 16-byte chunks, and their dot products.
// A weight row of K elements is KC = ceil(K / 16) * 16 / EPC chunks of `vec4<u32>`: with
// WF16 each chunk holds 8 f16 (element 2i in the low half of word i: what WGSL's
// unpack2x16float returns as .x), else 4 f32 (bitcast). The padding past K is zero, and so
// is every activation vector's padding, so a kernel may sum whole chunks.
//   wdot(w, xa, xb): dot of chunk w with its elements of x: xa = x[8c..8c+4), xb =
//                    x[8c+4..8c+8) for f16; xa = x[4c..4c+4) for f32 (xb ignored)
//   wunpack_lo/hi(w): the chunk's first / second 4 elements as f32 (hi: f16 only)
// needs:      const WF16 (bool)
fn wunpack_lo(w: vec4<u32>) -> vec4<f32> {
    if (WF16) {
        return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));
    }
    return bitcast<vec4<f32>>(w);
}

fn wunpack_hi(w: vec4<u32>) -> vec4<f32> {
    return vec4<f32>(unpack2x16float(w.z), unpack2x16float(w.w));
}

fn wdot(w: vec4<u32>, xa: vec4<f32>, xb: vec4<f32>) -> f32 {
    if (WF16) {
        return dot(wunpack_lo(w), xa) + dot(wunpack_hi(w), xb);
    }
    return dot(bitcast<vec4<f32>>(w), xa);
}
