// lib_mm_store — fragment: the epilogue of a prefill matmul's output element (matmul without a
// K split, matmul_reduce after one).
//   mm_store(t, n, v): y[t, ROW0 + n] = v (+ b[ROW0 + n]); with ACCUM y[..] += that (the
//       residual add)
// needs:      module-scope `y: array<f32>`, `b: array<f32>`; const YS, ROW0, ACCUM, HAS_BIAS
fn mm_store(t: u32, n: u32, v: f32) {
    var s = v;
    if (HAS_BIAS) {
        s += b[ROW0 + n];
    }
    let o = t * YS + ROW0 + n;
    if (ACCUM) {
        y[o] += s;
    } else {
        y[o] = s;
    }
}
