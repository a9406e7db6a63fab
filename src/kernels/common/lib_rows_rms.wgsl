// lib_rows_rms — fragment: the RMSNorm statistic of a matvec role whose norm is a prologue
// (attn_qkv, ffn_gate_up, lm_head): every workgroup reads the whole input row (a few KiB,
// from cache) instead of a separate rmsnorm dispatch writing a normed copy.
//   rows_rms(li, xo): 1 / sqrt(mean(x[xo .. xo + DIM)^2) + EPS), to every invocation
//   The first RMS_LANES (<= 256) invocations sum the squares, the rest add zeros: a workgroup
//   grown past 256 invocations (the LLM plans' cfg_spread) sums in the same order as one of 256,
//   so the spread layouts give the same bits.
// needs:      lib_reduce_* (wgsum); const WG, DIM, DIMP, EPS; module-scope `x: array<vec4<f32>>`
const RMS_LANES: u32 = min(WG, 256u);

fn rows_rms(li: u32, xo: u32) -> f32 {
    var ss = 0.0;
    if (li < RMS_LANES) {
        for (var i = li; i < DIMP / 4u; i += RMS_LANES) {
            let v = x[xo + i];
            ss += dot(v, v);
        }
    }
    return inverseSqrt(wgsum(ss, li) / f32(DIM) + EPS);
}
