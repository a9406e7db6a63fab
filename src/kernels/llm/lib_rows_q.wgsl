// lib_rows_q — fragment: lib_rows' matvec loop for quantized weight rows (lib_qblock).
//   rows_run(row0, n, lane, li): as lib_rows (the RPG sums of the group's rows, summed over
//       the group), with the row in QT's repacked blocks: invocation `lane` takes the 32-element
//       units lane, lane + TPR, ... (NIT of them), reads their 8 x vec4 once through the
//       kernel's xin(i) and dots them with each of its RPG rows' decoded units. (Issuing every
//       unit's loads first, as lib_rows does, measured slower on the H200: RESULTS.md.)
// needs:      lib_reduce_*, lib_qblock; const TPR, RPG, NIT, NU (units per row), KCS (row
//             stride in chunks), WG; module-scope `w: array<vec4<u32>>`, `x: array<vec4<f32>>`;
//             fn xin(i: u32) -> vec4<f32>, fn xprep(li: u32) (uniform: may hold barriers)
// override WOFF (default 0): the rows start at chunk WOFF of `w` (as lib_rows).
override WOFF: u32 = 0u;

fn wq4(i: u32) -> vec4<u32> {
    return w[i];
}

fn rows_run(row0: u32, n: u32, lane: u32, li: u32) -> vec4<f32> {
    xprep(li);
    var acc = vec4<f32>(0.0);
    for (var i = 0u; i < NIT; i++) {
        let u = lane + i * TPR;
        if (u < NU) {
            var xv: array<vec4<f32>, 8>;
            for (var k = 0u; k < 8u; k++) {
                xv[k] = xin(8u * u + k);
            }
            for (var j = 0u; j < RPG; j++) {
                // rows past n re-read row n - 1 (their sums are not stored)
                let wv = qunit(4u * (WOFF + min(row0 + j, n - 1u) * KCS), u);
                var s  = 0.0;
                for (var k = 0u; k < 8u; k++) {
                    s += dot(wv[k], xv[k]);
                }
                acc[j] += s;
            }
        }
    }
    return rowsum4(acc, li);
}
