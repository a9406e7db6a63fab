// lib_rows — fragment: the matvec loop every projection role shares (gemv, attn_qkv,
// ffn_gate_up, lm_head): a row group of TPR invocations dots RPG weight rows with one
// activation vector.
//   rows_run(row0, n, lane, li): invocation `lane` of the group loads the NIT 16-byte chunks
//       lane, lane + TPR, ... of rows row0 .. row0 + RPG, all issued before any is used (the
//       loads are what takes the time), dots them with the input read through the kernel's
//       xin(i) (the i-th vec4: x itself, or x * g for a norm prologue), and sums over the group
//   (lib_rows_rms has the RMSNorm statistic of the roles whose norm is a prologue)
// needs:      lib_reduce_*, lib_wchunk; const TPR, RPG, NIT, KC, KCS, WF16, WG; module-scope
//             `w: array<vec4<u32>>` (rows of KCS chunks), `x: array<vec4<f32>>`;
//             fn xin(i: u32) -> vec4<f32>, fn xprep(li: u32) (uniform: may hold barriers)
// rows_run(row0, n, lane, li): the RPG sums of the group's rows; between issuing the loads
// and using them it calls the kernel's xprep(li) (the RMSNorm statistic of the norm roles,
// which has workgroup barriers: every invocation calls rows_run), so the loads are in flight
// meanwhile. The weight chunks stay in a function-local array (registers).
// override WOFF (default 0): the rows start at chunk WOFF of `w`, so a plan reads a few rows of
// a stored matrix (k of W_qkv) without a binding offset; constant-folded at pipeline creation.
override WOFF: u32 = 0u;

fn rows_run(row0: u32, n: u32, lane: u32, li: u32) -> vec4<f32> {
    var wv: array<vec4<u32>, NIT * RPG>;
    for (var i = 0u; i < NIT; i++) {
        let c = min(lane + i * TPR, KC - 1u);
        for (var j = 0u; j < RPG; j++) {
            // rows past n re-read row n - 1 (their sums are not stored)
            wv[i * RPG + j] = w[WOFF + min(row0 + j, n - 1u) * KCS + c];
        }
    }
    xprep(li);
    var acc = vec4<f32>(0.0);
    for (var i = 0u; i < NIT; i++) {
        let c = lane + i * TPR;
        if (c < KC) {
            var xa: vec4<f32>;
            var xb: vec4<f32>;
            if (WF16) {
                xa = xin(2u * c);
                xb = xin(2u * c + 1u);
            } else {
                xa = xin(c);
                xb = xa;
            }
            for (var j = 0u; j < RPG; j++) {
                acc[j] += wdot(wv[i * RPG + j], xa, xb);
            }
        }
    }
    return rowsum4(acc, li);
}
