// lib_rows_rms — fragment: the RMSNorm statistic of a matvec role whose norm is a prologue
// (attn_qkv, ffn_gate_up, lm_head): every workgroup reads the whole input row (a few KiB,
// from cache) instead of a separate rmsnorm dispatch writing a normed copy.
//   rows_rms(li, xo): 1 / sqrt(mean(x[xo .. xo + DIM)^2) + EPS), to every invocation
// needs:      lib_reduce_* (wgsum); const WG, DIM, DIMP, EPS; module-scope `x: array<vec4<f32>>`
fn rows_rms(li: u32, xo: u32) -> f32 {
    var ss = 0.0;
    for (var i = li; i < DIMP / 4u; i += WG) {
        let v = x[xo + i];
        ss += dot(v, v);
    }
    return inverseSqrt(wgsum(ss, li) / f32(DIM) + EPS);
}
