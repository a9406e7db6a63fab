// lib_rows_q — fragment: lib_rows' matvec loop for quantized weight rows (lib_qblock layout).
//   rows_run(row0, n, lane, li): as lib_rows (the RPG sums of the group's rows, summed over
//       the group). A row is read as a stream of NW words of codes (the qs / ql arrays of its
//       blocks, in order: WPB words per block), and invocation `lane` takes the words lane,
//       lane + TPR, ... (NIT of them): consecutive invocations read consecutive words and
//       the activations of consecutive elements, so every load of a subgroup is one
//       contiguous run (a block's scales: one address the subgroup shares). All the words
//       of its rows, with the few each needs from the other regions (high bits, f16 scales
//       of the legacy types), are loaded first (the loads are what takes the time), then
//       xprep(li), then each word's codes become floats exactly (qf4: the f32 whose mantissa
//       holds the byte, minus 2^23 and the type's offset), are dotted with their activations
//       (read once, shared by the RPG rows), and scaled once per word. The K types' block
//       headers (scales, minimums; Q6_K's scale words) are read in the dot phase: they sit
//       beside the codes just loaded. Minimums apply to the sum of the activations: d (q - z)
//       x summed = d (sum q x - z sum x). Q2_K / Q3_K, whose blocks are not chunk aligned,
//       take one 32-element unit per word through lib_qblock's qunit.
//   Floating-point order differs from cpu-ref's element loop: the plans' tolerance (1e-4
//   relative on logits, test_quant_gpu) covers it.
//   word q of a row, per type (elements of the word: 4 low nibbles + 4 high, or 4 bytes):
//   Q4_0..Q5_1  block q / 4, qs word q % 4: elements 4 (q % 4) .. + 4 and 16 + 4 (q % 4) ..
//   Q8_0        block q / 8, qs word q % 8: elements 4 (q % 8) .. + 4
//   Q4_K, Q5_K  block q / 32, p = q % 32: sub-blocks 2 (p / 8) (low) and + 1 (high), elements
//               4 (p % 8) .. + 4 of each; Q5_K's fifth bits: qh word p % 8, bits 2 (p / 8), + 1
//   Q6_K        block q / 32, p = q % 32, half h = p / 16, pp = p % 16: ql word p holds
//               elements 128 h + 4 pp .. (low) and + 64 (high); qh word 8 h + pp % 8, shifted
//               by 2 (pp / 8) (low) and + 4 (high); scales 8 h + pp / 4 and + 4
// needs:      lib_reduce_*, lib_qblock; const TPR, RPG, NIT, NW (words per row), KCS (row
//             stride in chunks), QA, QB, QT, WG; module-scope `w: array<vec4<u32>>`,
//             `x: array<vec4<f32>>`; fn xin(i: u32) -> vec4<f32>, fn xprep(li: u32) (uniform:
//             may hold barriers)
// override WOFF (default 0): the rows start at chunk WOFF of `w` (as lib_rows).
override WOFF: u32 = 0u;

fn wq4(i: u32) -> vec4<u32> {
    return w[i];
}

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

// 32 activations (8 vec4), read once per item and shared by its rows. Named fields, not an
// array: every access below is static, whether or not the driver unrolls a loop.
struct QX8 {
    a: vec4<f32>, b: vec4<f32>, c: vec4<f32>, d: vec4<f32>,
    e: vec4<f32>, f: vec4<f32>, g: vec4<f32>, h: vec4<f32>,
}

// vec4 i .. i + 8 of the kernel's input (xin: x itself, or x * g for a norm prologue)
fn qx8(i: u32) -> QX8 {
    return QX8(xin(i), xin(i + 1u), xin(i + 2u), xin(i + 3u), xin(i + 4u), xin(i + 5u), xin(i + 6u), xin(i + 7u));
}

fn qx8sum(x: QX8) -> f32 {
    return dot(x.a + x.b + x.c + x.d + x.e + x.f + x.g + x.h, vec4<f32>(1.0));
}

// the loads of word q of the row at word rb: (code word, and per type: the block's d or (d, m)
// word, its qh word)
fn qw_load(rb: u32, q: u32) -> vec4<u32> {
    if (QT == QT_Q4_0) {
        return vec4<u32>(qword(rb + q), qword(rb + QA + q / 8u), 0u, 0u);
    } else if (QT == QT_Q4_1) {
        return vec4<u32>(qword(rb + q), qword(rb + QA + q / 4u), 0u, 0u);
    } else if (QT == QT_Q5_0) {
        return vec4<u32>(qword(rb + q), qword(rb + QB + q / 8u), qword(rb + QA + q / 4u), 0u);
    } else if (QT == QT_Q5_1) {
        return vec4<u32>(qword(rb + q), qword(rb + QB + q / 4u), qword(rb + QA + q / 4u), 0u);
    } else if (QT == QT_Q8_0) {
        return vec4<u32>(qword(rb + q), qword(rb + QA + q / 16u), 0u, 0u);
    } else if (QT == QT_Q4_K) {
        return vec4<u32>(qword(rb + 36u * (q / 32u) + 4u + q % 32u), 0u, 0u, 0u);
    } else if (QT == QT_Q5_K) {
        let bw = rb + 44u * (q / 32u);
        return vec4<u32>(qword(bw + 12u + q % 32u), qword(bw + 4u + q % 8u), 0u, 0u);
    } else if (QT == QT_Q6_K) {
        let bw = rb + 52u * (q / 32u);
        let p  = q % 32u;
        return vec4<u32>(qword(bw + p), qword(bw + 32u + 8u * (p / 16u) + p % 8u), 0u, 0u);
    }
    return vec4<u32>(0u); // Q2_K, Q3_K: qunit loads
}

// the first activation vec4 of word q's low elements, and of its high ones
fn qw_xi(q: u32) -> vec2<u32> {
    if (QT == QT_Q8_0) {
        return vec2<u32>(q, q);
    } else if (QT == QT_Q4_K || QT == QT_Q5_K) {
        let p = q % 32u;
        let a = 64u * (q / 32u) + 16u * (p / 8u) + p % 8u;
        return vec2<u32>(a, a + 8u);
    } else if (QT == QT_Q6_K) {
        let p = q % 32u;
        let a = 64u * (q / 32u) + 32u * (p / 16u) + p % 16u;
        return vec2<u32>(a, a + 16u);
    }
    let a = 8u * (q / 4u) + q % 4u; // Q4_0 .. Q5_1
    return vec2<u32>(a, a + 4u);
}

// one row's sum over word q: v its loads, rb its first word, xa / xb the activations
fn qw_dot(v: vec4<u32>, rb: u32, q: u32, xa: vec4<f32>, xb: vec4<f32>) -> f32 {
    if (QT == QT_Q8_0) {
        let d = unpack2x16float(v.y);
        return select(d.x, d.y, (q / 8u) % 2u == 1u) * dot(qf4(v.x ^ 0x80808080u, 128.0), xa);
    } else if (QT == QT_Q4_K || QT == QT_Q5_K) {
        let p  = q % 32u;
        var lo = v.x & M4;
        var hi = (v.x >> 4u) & M4;
        if (QT == QT_Q5_K) {
            lo |= ((v.y >> (2u * (p / 8u))) & 0x01010101u) << 4u;
            hi |= ((v.y >> (2u * (p / 8u) + 1u)) & 0x01010101u) << 4u;
        }
        let hd = wq4(rb / 4u + select(9u, 11u, QT == QT_Q5_K) * (q / 32u));
        let dd = unpack2x16float(hd.x);
        let sm = qsm_k4(hd, p / 8u);
        let s  = vec2<f32>(dot(qf4(lo, 0.0), xa), dot(qf4(hi, 0.0), xb));
        let xs = vec2<f32>(dot(xa, vec4<f32>(1.0)), dot(xb, vec4<f32>(1.0)));
        return dd.x * dot(sm.xy, s) - dd.y * dot(sm.zw, xs);
    } else if (QT == QT_Q6_K) {
        let p  = q % 32u;
        let h  = p / 16u;
        let sh = 2u * ((p % 16u) / 8u);
        let lo = (v.x & M4) | (((v.y >> sh) & 0x03030303u) << 4u);
        let hi = ((v.x >> 4u) & M4) | (((v.y >> (sh + 4u)) & 0x03030303u) << 4u);
        let bw = rb + 52u * (q / 32u);
        let sb = 8u * ((p % 16u) / 4u);
        let sl = bitcast<i32>(qword(bw + 48u + 2u * h) << (24u - sb)) >> 24u;
        let sc = bitcast<i32>(qword(bw + 49u + 2u * h) << (24u - sb)) >> 24u;
        let d  = qhalf(rb + QA, q / 32u);
        return d * (f32(sl) * dot(qf4(lo, 32.0), xa) + f32(sc) * dot(qf4(hi, 32.0), xb));
    }
    // Q4_0 .. Q5_1
    let b  = q / 4u;
    var lo = v.x & M4;
    var hi = (v.x >> 4u) & M4;
    if (QT == QT_Q5_0 || QT == QT_Q5_1) {
        lo |= qhb4(v.z >> (4u * (q % 4u)));
        hi |= qhb4(v.z >> (16u + 4u * (q % 4u)));
    }
    let z = select(select(0.0, 8.0, QT == QT_Q4_0), 16.0, QT == QT_Q5_0);
    let s = dot(qf4(lo, z), xa) + dot(qf4(hi, z), xb);
    let d = unpack2x16float(v.y);
    if (QT == QT_Q4_1 || QT == QT_Q5_1) {
        return d.x * s + d.y * dot(xa + xb, vec4<f32>(1.0));
    }
    return select(d.x, d.y, b % 2u == 1u) * s;
}

fn rows_run(row0: u32, n: u32, lane: u32, li: u32) -> vec4<f32> {
    var v: array<vec4<u32>, NIT * RPG>;
    if (!Q23) {
        for (var i = 0u; i < NIT; i++) {
            let q = min(lane + i * TPR, NW - 1u);
            for (var j = 0u; j < RPG; j++) {
                // rows past n re-read row n - 1 (their sums are not stored)
                v[i * RPG + j] = qw_load(4u * (WOFF + min(row0 + j, n - 1u) * KCS), q);
            }
        }
    }
    xprep(li);
    var acc = vec4<f32>(0.0);
    for (var i = 0u; i < NIT; i++) {
        let q = lane + i * TPR;
        if (q < NW) {
            if (Q23) {
                let xv = qx8(8u * q);
                for (var j = 0u; j < RPG; j++) {
                    let wv = qunit(4u * (WOFF + min(row0 + j, n - 1u) * KCS), q);
                    acc[j] += dot(wv[0], xv.a) + dot(wv[1], xv.b) + dot(wv[2], xv.c) + dot(wv[3], xv.d) +
                              dot(wv[4], xv.e) + dot(wv[5], xv.f) + dot(wv[6], xv.g) + dot(wv[7], xv.h);
                }
            } else {
                let xi = qw_xi(q);
                let xa = xin(xi.x);
                let xb = xin(xi.y);
                for (var j = 0u; j < RPG; j++) {
                    acc[j] += qw_dot(v[i * RPG + j], 4u * (WOFF + min(row0 + j, n - 1u) * KCS), q, xa, xb);
                }
            }
        }
    }
    return rowsum4(acc, li);
}
