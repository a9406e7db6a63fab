// lib_rows_q — fragment: lib_rows' matvec loop for quantized weight rows (lib_qblock layout).
//   rows_run(row0, n, lane, li): as lib_rows (the RPG sums of the group's rows, summed over
//       the group). A row is cut into NI items of QIE elements, the piece of the row format
//       whose bits one invocation uses whole: a block of Q4_0..Q8_0 (32), a pair of sub-blocks
//       of Q4_K / Q5_K (64: the low and high nibbles of 32 bytes), a quarter of a Q6_K half
//       (64: 16 bytes of low bits twice and 16 of high bits serve 4 groups of 16 elements).
//       Invocation `lane` takes items lane, lane + TPR, ... (NIT of them); the raw words of all
//       its items and rows are loaded first (the loads are what takes the time; registers
//       hold them), then xprep(li), then for each item the activations are read once through
//       xin(i) and each row's codes are dotted with them: the codes become floats exactly
//       (qf4: the f32 whose mantissa holds the byte, minus 2^23 and the type's offset), the
//       sums are taken per sub-block and scaled once, the minimums apply to the sub-block's
//       sum of activations (d (q - z) x summed = d (sum q x - z sum x)). Q2_K / Q3_K, whose
//       blocks are not chunk aligned, take 32-element units through lib_qblock's qunit.
//   Floating-point order differs from cpu-ref's element loop (scale once per sub-block):
//   the plans' tolerance (1e-4 relative on logits, test_quant_gpu) covers it.
// needs:      lib_reduce_*, lib_qblock; const TPR, RPG, NIT, NI (items per row), QIE, KCS
//             (row stride in chunks), QA, QB, QT, WG; module-scope `w: array<vec4<u32>>`,
//             `x: array<vec4<f32>>`; fn xin(i: u32) -> vec4<f32>, fn xprep(li: u32) (uniform:
//             may hold barriers)
// override WOFF (default 0): the rows start at chunk WOFF of `w` (as lib_rows).
override WOFF: u32 = 0u;

fn wq4(i: u32) -> vec4<u32> {
    return w[i];
}

// chunks of raw codes per item and row held from the load phase to the dot phase
const QIC: u32 = select(select(select(select(1u, 2u, QT == QT_Q8_0), 3u, QT == QT_Q4_K || QT == QT_Q6_K),
                               5u, QT == QT_Q5_K), 1u, QT == QT_Q2_K || QT == QT_Q3_K);
const Q23: bool = QT == QT_Q2_K || QT == QT_Q3_K;
const M4: u32   = 0x0F0F0F0Fu;

// the four bytes of v as f32, each minus z (exact: a byte in the mantissa of 2^23)
fn qf4(v: u32, z: f32) -> vec4<f32> {
    let b = (vec4<u32>(v) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(255u);
    return bitcast<vec4<f32>>(b | vec4<u32>(0x4B000000u)) - vec4<f32>(8388608.0 + z);
}

// bits 0..3 of h, one to bit 4 of each byte (Q5_0 / Q5_1 high bits: no carries, the
// products' bit positions 7 k + i are distinct)
fn qhb4(h: u32) -> u32 {
    return (((h & 15u) * 0x00204081u) & 0x01010101u) << 4u;
}

// word c of item t of the row starting at word rb: the load phase (Q2_K / Q3_K: none)
fn qitem_chunk(rb: u32, t: u32, c: u32) -> vec4<u32> {
    let r4 = rb / 4u;
    if (QT == QT_Q8_0) {
        return wq4(r4 + 2u * t + c);
    } else if (QT == QT_Q4_K) {
        // c 0: the block's header chunk (d, dmin, scales); 1, 2: qs bytes 32 j .. 32 j + 32
        let bc = r4 + 9u * (t / 4u);
        return wq4(select(bc + 1u + 2u * (t % 4u) + c - 1u, bc, c == 0u));
    } else if (QT == QT_Q5_K) {
        // c 0: header; 1, 2: qh (all 32 bytes); 3, 4: qs bytes 32 j .. 32 j + 32
        let bc = r4 + 11u * (t / 4u);
        return wq4(select(select(bc + 3u + 2u * (t % 4u) + c - 3u, bc + c, c < 3u), bc, c == 0u));
    } else if (QT == QT_Q6_K) {
        // item t = 4 b + 2 h + i: l = 16 i .. 16 i + 16 of half h; c 0: ql[l], 1: ql[l + 32],
        // 2: qh[l]
        let bc = r4 + 13u * (t / 4u);
        let h  = (t / 2u) % 2u;
        let i  = t % 2u;
        return wq4(bc + select(select(8u + 2u * h + i, 4u * h + 2u + i, c == 1u), 4u * h + i, c == 0u));
    } else if (Q23) {
        return vec4<u32>(0u);
    }
    return wq4(r4 + t); // Q4_0 .. Q5_1: the block's 16 qs bytes
}

// the words an item needs besides its chunks: scales, minimums, high bits
fn qitem_aux(rb: u32, t: u32) -> vec4<u32> {
    if (QT == QT_Q4_0 || QT == QT_Q8_0) {
        return vec4<u32>(qword(rb + QA + t / 2u), 0u, 0u, 0u);
    } else if (QT == QT_Q4_1) {
        return vec4<u32>(qword(rb + QA + t), 0u, 0u, 0u);
    } else if (QT == QT_Q5_0) {
        return vec4<u32>(qword(rb + QB + t / 2u), qword(rb + QA + t), 0u, 0u);
    } else if (QT == QT_Q5_1) {
        return vec4<u32>(qword(rb + QB + t), qword(rb + QA + t), 0u, 0u);
    } else if (QT == QT_Q6_K) {
        // d; the scale words 2 h and 2 h + 1 of the block's 16 int8 scales
        let sw = rb + 52u * (t / 4u) + 48u + 2u * ((t / 2u) % 2u);
        return vec4<u32>(qword(rb + QA + t / 8u), qword(sw), qword(sw + 1u), 0u);
    }
    return vec4<u32>(0u);
}

// Q4_K / Q5_K: (scale, min) of sub-blocks 2 j and 2 j + 1 from the header chunk h (bytes
// 0..3: d, dmin; 4..15: 12 bytes of 6-bit scales and mins, as ggml packs them)
fn qsm_k4(h: vec4<u32>, j: u32) -> vec4<f32> {
    let k  = 16u * (j % 2u);                      // byte 2 (j % 2) of a word
    let y  = vec2<u32>(h.y >> k, h.y >> (k + 8u)) & vec2<u32>(255u);
    let z  = vec2<u32>(h.z >> k, h.z >> (k + 8u)) & vec2<u32>(255u);
    let ww = vec2<u32>(h.w >> k, h.w >> (k + 8u)) & vec2<u32>(255u);
    var sc = y & vec2<u32>(63u);
    var mn = z & vec2<u32>(63u);
    if (j >= 2u) {
        sc = (ww & vec2<u32>(15u)) | ((y >> vec2<u32>(6u)) << vec2<u32>(4u));
        mn = (ww >> vec2<u32>(4u)) | ((z >> vec2<u32>(6u)) << vec2<u32>(4u));
    }
    return vec4<f32>(vec2<f32>(sc), vec2<f32>(mn));
}

// the raw words of item t of rows row0 .. row0 + RPG (rows past n re-read row n - 1: their sums
// are not stored)
fn qitem_load(row0: u32, n: u32, t: u32, raw: ptr<function, array<vec4<u32>, RPG * QIC>>,
              aux: ptr<function, array<vec4<u32>, RPG>>) {
    for (var j = 0u; j < RPG; j++) {
        let rb = 4u * (WOFF + min(row0 + j, n - 1u) * KCS);
        for (var c = 0u; c < QIC; c++) {
            (*raw)[j * QIC + c] = qitem_chunk(rb, t, c);
        }
        (*aux)[j] = qitem_aux(rb, t);
    }
}

// The arrays are indexed by row and chunk only, never by the item loop's counter: a driver
// that does not unroll that loop (its body is large) would otherwise move them to memory.
// The first item's loads are in flight during xprep; the next item's are issued after the
// current one's dots (other invocations hide that latency).
fn rows_run(row0: u32, n: u32, lane: u32, li: u32) -> vec4<f32> {
    var raw: array<vec4<u32>, RPG * QIC>;
    var aux: array<vec4<u32>, RPG>;
    qitem_load(row0, n, min(lane, NI - 1u), &raw, &aux);
    xprep(li);
    var acc = vec4<f32>(0.0);
    for (var i = 0u; i < NIT; i++) {
        let t = lane + i * TPR;
        if (t < NI) {
            if (i > 0u) {
                qitem_load(row0, n, t, &raw, &aux);
            }
            acc += qitem_dot(row0, n, t, &raw, &aux);
        }
    }
    return rowsum4(acc, li);
}

// the RPG rows' dot products over item t (raw / aux: the load phase's words, slot i)
fn qitem_dot(row0: u32, n: u32, t: u32, raw: ptr<function, array<vec4<u32>, RPG * QIC>>,
             aux: ptr<function, array<vec4<u32>, RPG>>) -> vec4<f32> {
    var acc = vec4<f32>(0.0);
    if (Q23) {
        var xv: array<vec4<f32>, 8>;
        for (var k = 0u; k < 8u; k++) {
            xv[k] = xin(8u * t + k);
        }
        for (var j = 0u; j < RPG; j++) {
            let wv = qunit(4u * (WOFF + min(row0 + j, n - 1u) * KCS), t);
            var s  = 0.0;
            for (var k = 0u; k < 8u; k++) {
                s += dot(wv[k], xv[k]);
            }
            acc[j] = s;
        }
        return acc;
    }
    var ps: array<vec4<f32>, RPG>; // per row: the sub-block sums of q x
    var xs = vec4<f32>(0.0);      // sub-block sums of x (the minimums' factor)
    if (QT == QT_Q8_0) {
        for (var k = 0u; k < 8u; k++) {
            let xa = xin(8u * t + k);
            for (var j = 0u; j < RPG; j++) {
                let v = (*raw)[j * QIC + k / 4u][k % 4u] ^ 0x80808080u;
                ps[j].x += dot(qf4(v, 128.0), xa);
            }
        }
    } else if (QT == QT_Q4_K || QT == QT_Q5_K) {
        let jj = t % 4u;
        for (var k = 0u; k < 8u; k++) {
            let xa = xin(16u * t + k);      // sub-block 2 jj: the low nibbles
            let xb = xin(16u * t + 8u + k); // sub-block 2 jj + 1: the high nibbles
            xs += vec4<f32>(dot(xa, vec4<f32>(1.0)), dot(xb, vec4<f32>(1.0)), 0.0, 0.0);
            for (var j = 0u; j < RPG; j++) {
                let s0 = j * QIC;
                let qc = select(1u, 3u, QT == QT_Q5_K) + k / 4u;
                let v  = (*raw)[s0 + qc][k % 4u];
                var lo = v & M4;
                var hi = (v >> 4u) & M4;
                if (QT == QT_Q5_K) {
                    let hb = (*raw)[s0 + 1u + k / 4u][k % 4u];
                    lo |= ((hb >> (2u * jj)) & 0x01010101u) << 4u;
                    hi |= ((hb >> (2u * jj + 1u)) & 0x01010101u) << 4u;
                }
                ps[j] += vec4<f32>(dot(qf4(lo, 0.0), xa), dot(qf4(hi, 0.0), xb), 0.0, 0.0);
            }
        }
    } else if (QT == QT_Q6_K) {
        let x0 = 64u * (t / 4u) + 32u * ((t / 2u) % 2u) + 4u * (t % 2u);
        for (var k = 0u; k < 4u; k++) {
            let xa = xin(x0 + k);       // y[l], y[l + 32], y[l + 64], y[l + 96]
            let xb = xin(x0 + 8u + k);
            let xc = xin(x0 + 16u + k);
            let xd = xin(x0 + 24u + k);
            for (var j = 0u; j < RPG; j++) {
                let s0 = j * QIC;
                let la = (*raw)[s0][k];
                let lb = (*raw)[s0 + 1u][k];
                let qh = (*raw)[s0 + 2u][k];
                let q1 = (la & M4) | ((qh & 0x03030303u) << 4u);
                let q2 = (lb & M4) | (((qh >> 2u) & 0x03030303u) << 4u);
                let q3 = ((la >> 4u) & M4) | (((qh >> 4u) & 0x03030303u) << 4u);
                let q4 = ((lb >> 4u) & M4) | (((qh >> 6u) & 0x03030303u) << 4u);
                ps[j] += vec4<f32>(dot(qf4(q1, 32.0), xa), dot(qf4(q2, 32.0), xb), dot(qf4(q3, 32.0), xc),
                                   dot(qf4(q4, 32.0), xd));
            }
        }
    } else {
        // Q4_0, Q4_1, Q5_0, Q5_1: byte b holds element b (low nibble) and b + 16 (high)
        let z = select(select(0.0, 8.0, QT == QT_Q4_0), 16.0, QT == QT_Q5_0);
        for (var k = 0u; k < 4u; k++) {
            let xa = xin(8u * t + k);
            let xb = xin(8u * t + 4u + k);
            xs.x += dot(xa + xb, vec4<f32>(1.0));
            for (var j = 0u; j < RPG; j++) {
                let v  = (*raw)[j * QIC][k];
                var lo = v & M4;
                var hi = (v >> 4u) & M4;
                if (QT == QT_Q5_0 || QT == QT_Q5_1) {
                    let qh = (*aux)[j].y;
                    lo |= qhb4(qh >> (4u * k));
                    hi |= qhb4(qh >> (16u + 4u * k));
                }
                ps[j].x += dot(qf4(lo, z), xa) + dot(qf4(hi, z), xb);
            }
        }
    }
    for (var j = 0u; j < RPG; j++) {
        let s = ps[j];
        let a = (*aux)[j];
        if (QT == QT_Q4_0 || QT == QT_Q5_0 || QT == QT_Q8_0) {
            acc[j] = unpack2x16float(a.x)[t % 2u] * s.x;
        } else if (QT == QT_Q4_1 || QT == QT_Q5_1) {
            let dm = unpack2x16float(a.x);
            acc[j] = dm.x * s.x + dm.y * xs.x;
        } else if (QT == QT_Q4_K || QT == QT_Q5_K) {
            let h  = (*raw)[j * QIC];
            let dd = unpack2x16float(h.x);
            let sm = qsm_k4(h, t % 4u);
            acc[j] = dd.x * (sm.x * s.x + sm.y * s.y) - dd.y * (sm.z * xs.x + sm.w * xs.y);
        } else if (QT == QT_Q6_K) {
            // scales sc[8 h + i + 2 g], g = 0..3: bytes i, i + 2 of words 2 h, 2 h + 1
            let b  = 8u * (t % 2u);
            let sc = vec4<f32>(qs4((a.y >> b) & 0x00FF00FFu).xz, qs4((a.z >> b) & 0x00FF00FFu).xz);
            acc[j] = unpack2x16float(a.x)[(t / 4u) % 2u] * dot(s, sc);
        }
    }
    return acc;
}
