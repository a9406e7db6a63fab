// lib_qblock — fragment: ggml's quantized blocks, decoded in the shader, 32 elements at a time.
//   qunit(rb, u): elements 32 u .. 32 u + 32 of the weight row whose first u32 word is rb, as 8
//                 vec4<f32> in element order, for the row format QT (f32 arithmetic, the
//                 products in the order of cpu-ref's decoders, src/llm/quant.c)
// A quantized row is repacked at load (src/llm/gpu/gr_quant.c) so that every field is u32
// aligned; a row has NB = NU / (QK / 32) blocks and starts on a 16-byte chunk. Layout of one
// row in u32 words (QA, QB: where the second and third regions start; f16 pairs packed two to
// a word, element 2i in the low half):
//   QT        words per row                   regions
//   Q4_0      4 NB + ceil(NB/2)               qs[16 B] per block | d f16 per block (QA)
//   Q4_1      5 NB                            qs | (d, m) per block (QA)
//   Q5_0      5 NB + ceil(NB/2)               qs | qh u32 per block (QA) | d f16 per block (QB)
//   Q5_1      6 NB                            qs | qh (QA) | (d, m) (QB)
//   Q8_0      8 NB + ceil(NB/2)               qs[32 B] per block | d f16 per block (QA)
//   Q2_K      21 NB                           blocks as stored (84 B: scales, qs, d, dmin)
//   Q3_K      27 NB + ceil(NB/2)              blocks without d (108 B: hmask, qs, scales) | d (QA)
//   Q4_K      36 NB                           blocks as stored (144 B)
//   Q5_K      44 NB                           blocks (176 B) with qh regrouped: d dmin scales[12] |
//                                             per item j (sub-blocks 2 j, 2 j + 1) two u32 of
//                                             fifth bits, lo then hi (bit k + 8 b: element
//                                             4 k + b of the low / high sub-block) | qs[128]
//   Q6_K      52 NB + ceil(NB/2)              blocks without d (208 B: ql, qh, scales) | d (QA)
// so the GPU holds the file's bytes plus at most 15 bytes of row padding.
//   qload(rb, u) / qdecode(r, u): the same in two halves, so a matvec issues every unit's
//                 loads before it decodes the first (the loads are what takes the time):
//                 qload reads the unit's chunks and words into a QRaw (registers), qdecode
//                 turns them into the 8 vec4 (Q2_K, Q3_K, whose blocks are not chunk aligned,
//                 load in qdecode: qunit)
// needs:      consts QT, QA, QB and QT_* (gr_kernels.c); fn wq4(i: u32) -> vec4<u32>, chunk i
//             of the binding the weights are read from (the including kernel defines it)

fn qword(i: u32) -> u32 {
    return wq4(i >> 2u)[i & 3u];
}

// f16 number h of a region of packed pairs starting at word a
fn qhalf(a: u32, h: u32) -> f32 {
    let p = unpack2x16float(qword(a + h / 2u));
    return select(p.x, p.y, (h & 1u) == 1u);
}

// the four bytes of v, and their low / high nibbles, as unsigned values
fn qb4(v: u32) -> vec4<u32> {
    return vec4<u32>(v & 255u, (v >> 8u) & 255u, (v >> 16u) & 255u, v >> 24u);
}

fn qlo4(v: u32) -> vec4<u32> {
    return qb4(v) & vec4<u32>(15u);
}

fn qhi4(v: u32) -> vec4<u32> {
    return qb4(v) >> vec4<u32>(4u);
}

// the four int8 of v
fn qs4(v: u32) -> vec4<f32> {
    let s = bitcast<vec4<i32>>(vec4<u32>(v << 24u, v << 16u, v << 8u, v)) >> vec4<u32>(24u);
    return vec4<f32>(s);
}

// bits e .. e + 3 of v, each 0 or 1
fn qbits4(v: u32, e: u32) -> vec4<u32> {
    return (vec4<u32>(v) >> (vec4<u32>(e) + vec4<u32>(0u, 1u, 2u, 3u))) & vec4<u32>(1u);
}

// Q4_K / Q5_K: the 6-bit scale and min of sub-block s from the 12 scale bytes in words
// h.y, h.z, h.w of the block's first chunk
fn qscale_min_k4(h: vec4<u32>, s: u32) -> vec2<f32> {
    let sc = array<u32, 3>(h.y, h.z, h.w);
    let a  = (sc[s / 4u] >> (8u * (s % 4u))) & 255u;          // byte s
    let c  = (sc[(s + 4u) / 4u] >> (8u * (s % 4u))) & 255u;   // byte s + 4
    if (s < 4u) {
        return vec2<f32>(f32(a & 63u), f32(c & 63u));
    }
    let e = (sc[(s - 4u) / 4u] >> (8u * (s % 4u))) & 255u;    // byte s - 4
    return vec2<f32>(f32((c & 15u) | ((e >> 6u) << 4u)), f32((c >> 4u) | ((a >> 6u) << 4u)));
}

// Q2_K and Q3_K (84- and 108-byte blocks: not chunk aligned, read word by word)
fn qunit_23k(rb: u32, u: u32) -> array<vec4<f32>, 8> {
    var o: array<vec4<f32>, 8>;
    let b = u / 8u; // super-block
    let s = u % 8u; // its 32-element sub-block
    if (QT == QT_Q2_K) {
        let bw = rb + 21u * b;
        let dd = unpack2x16float(qword(bw + 20u));
        let sw = qword(bw + s / 2u); // the scale bytes of sub-blocks 2 s, 2 s + 1 (of 16)
        let s0 = (sw >> (16u * (s % 2u))) & 255u;
        let s1 = (sw >> (16u * (s % 2u) + 8u)) & 255u;
        let dl = vec2<f32>(dd.x * f32(s0 & 15u), dd.x * f32(s1 & 15u));
        let ml = vec2<f32>(dd.y * f32(s0 >> 4u), dd.y * f32(s1 >> 4u));
        let qs = bw + 4u + 8u * (s / 4u);
        for (var k = 0u; k < 8u; k++) {
            let q = (qb4(qword(qs + k)) >> vec4<u32>(2u * (s % 4u))) & vec4<u32>(3u);
            o[k] = dl[k / 4u] * vec4<f32>(q) - ml[k / 4u];
        }
        return o;
    }
    // Q3_K: the 6-bit scales of sub-blocks 2 s and 2 s + 1 (of 16), low 4 bits in bytes
    // sub % 8 (nibble sub / 8), high 2 bits in byte 8 + sub % 4 (pair sub / 4)
    let bw  = rb + 27u * b;
    let d   = qhalf(rb + QA, b);
    let h   = s / 4u;
    let j   = s % 4u;
    let sub = 2u * s;
    let lo4 = qword(bw + 24u + (sub % 8u) / 4u) >> (8u * (sub % 4u)); // bytes sub % 8, + 1
    let hi4 = qword(bw + 26u) >> (2u * (sub / 4u));                    // bytes 8..11, pair sub / 4
    let sc0 = ((lo4 >> (4u * (sub / 8u))) & 15u) | ((((hi4 >> (8u * (sub % 4u)))) & 3u) << 4u);
    let sc1 = (((lo4 >> 8u) >> (4u * (sub / 8u))) & 15u) | ((((hi4 >> (8u * (sub % 4u + 1u)))) & 3u) << 4u);
    let dl  = vec2<f32>(d * f32(i32(sc0) - 32), d * f32(i32(sc1) - 32));
    for (var k = 0u; k < 8u; k++) {
        let lo = (qb4(qword(bw + 8u + 8u * h + k)) >> vec4<u32>(2u * j)) & vec4<u32>(3u);
        let hi = (qb4(qword(bw + k)) >> vec4<u32>(4u * h + j)) & vec4<u32>(1u);
        o[k] = dl[k / 4u] * vec4<f32>(vec4<i32>(lo) - vec4<i32>(4u * (1u - hi)));
    }
    return o;
}

fn qunit(rb: u32, u: u32) -> array<vec4<f32>, 8> {
    if (QT == QT_Q2_K || QT == QT_Q3_K) {
        return qunit_23k(rb, u);
    }
    return qdecode(qload(rb, u), rb, u);
}

// the loads of one unit: up to 5 chunks and 2 words
struct QRaw {
    c: array<vec4<u32>, 5>,
    a: vec2<u32>,
}

fn qload(rb: u32, u: u32) -> QRaw {
    var r: QRaw;
    let b = u / 8u;
    let s = u % 8u;
    if (QT == QT_Q8_0) {
        r.c[0] = wq4(rb / 4u + 2u * u);
        r.c[1] = wq4(rb / 4u + 2u * u + 1u);
        r.a.x  = qword(rb + QA + u / 2u);
    } else if (QT == QT_Q4_0 || QT == QT_Q4_1 || QT == QT_Q5_0 || QT == QT_Q5_1) {
        r.c[0] = wq4(rb / 4u + u);
        let f0 = select(QA + u / 2u, QA + u, QT == QT_Q4_1 || QT == QT_Q5_0 || QT == QT_Q5_1);
        r.a.x  = qword(rb + f0);
        if (QT == QT_Q5_0) {
            r.a.y = qword(rb + QB + u / 2u);
        } else if (QT == QT_Q5_1) {
            r.a.y = qword(rb + QB + u);
        }
    } else if (QT == QT_Q4_K || QT == QT_Q5_K) {
        let bc = rb / 4u + b * select(9u, 11u, QT == QT_Q5_K);
        r.c[0] = wq4(bc);
        let qc = bc + select(1u, 3u, QT == QT_Q5_K) + 2u * (s / 2u);
        r.c[1] = wq4(qc);
        r.c[2] = wq4(qc + 1u);
        if (QT == QT_Q5_K) {
            r.c[3] = wq4(bc + 1u + s / 4u); // items 2 (s / 4), 2 (s / 4) + 1: lo, hi, lo, hi
        }
    } else if (QT == QT_Q6_K) {
        let bc = rb / 4u + 13u * b;
        let h  = s / 4u;
        let k4 = s % 4u;
        r.c[0] = wq4(bc + 4u * h + 2u * (k4 % 2u));
        r.c[1] = wq4(bc + 4u * h + 2u * (k4 % 2u) + 1u);
        r.c[2] = wq4(bc + 8u + 2u * h);
        r.c[3] = wq4(bc + 8u + 2u * h + 1u);
        r.c[4] = wq4(bc + 12u);
        r.a.x  = qword(rb + QA + b / 2u);
    }
    return r;
}

fn qdecode(r: QRaw, rb: u32, u: u32) -> array<vec4<f32>, 8> {
    var o: array<vec4<f32>, 8>;
    let b = u / 8u;
    let s = u % 8u;
    if (QT == QT_Q8_0) {
        let d = unpack2x16float(r.a.x)[u % 2u];
        for (var k = 0u; k < 4u; k++) {
            o[k]      = qs4(r.c[0][k]) * d;
            o[k + 4u] = qs4(r.c[1][k]) * d;
        }
        return o;
    }
    if (QT == QT_Q4_0 || QT == QT_Q4_1 || QT == QT_Q5_0 || QT == QT_Q5_1) {
        var lo: array<vec4<u32>, 4>;
        var hi: array<vec4<u32>, 4>;
        for (var k = 0u; k < 4u; k++) {
            lo[k] = qlo4(r.c[0][k]);
            hi[k] = qhi4(r.c[0][k]);
        }
        if (QT == QT_Q5_0 || QT == QT_Q5_1) {
            for (var k = 0u; k < 4u; k++) {
                lo[k] |= qbits4(r.a.x, 4u * k) << vec4<u32>(4u);
                hi[k] |= qbits4(r.a.x, 16u + 4u * k) << vec4<u32>(4u);
            }
        }
        if (QT == QT_Q4_0 || QT == QT_Q5_0) {
            let d = unpack2x16float(select(r.a.x, r.a.y, QT == QT_Q5_0))[u % 2u];
            let z = select(vec4<i32>(8), vec4<i32>(16), QT == QT_Q5_0);
            for (var k = 0u; k < 4u; k++) {
                o[k]      = vec4<f32>(vec4<i32>(lo[k]) - z) * d;
                o[k + 4u] = vec4<f32>(vec4<i32>(hi[k]) - z) * d;
            }
            return o;
        }
        let dm = unpack2x16float(select(r.a.x, r.a.y, QT == QT_Q5_1));
        for (var k = 0u; k < 4u; k++) {
            o[k]      = vec4<f32>(lo[k]) * dm.x + dm.y;
            o[k + 4u] = vec4<f32>(hi[k]) * dm.x + dm.y;
        }
        return o;
    }
    if (QT == QT_Q4_K || QT == QT_Q5_K) {
        let dd = unpack2x16float(r.c[0].x);
        let sm = qscale_min_k4(r.c[0], s);
        let d1 = dd.x * sm.x;
        let m1 = dd.y * sm.y;
        for (var k = 0u; k < 8u; k++) {
            let w = select(r.c[2][k % 4u], r.c[1][k % 4u], k < 4u);
            var q = (qb4(w) >> vec4<u32>(4u * (s % 2u))) & vec4<u32>(15u);
            if (QT == QT_Q5_K) {
                let hw = r.c[3][s % 4u]; // item s / 2's lo (s even) or hi word
                q += ((qb4(hw) >> vec4<u32>(k)) & vec4<u32>(1u)) << vec4<u32>(4u);
            }
            o[k] = d1 * vec4<f32>(q) - m1;
        }
        return o;
    }
    if (QT == QT_Q6_K) {
        let d  = unpack2x16float(r.a.x)[b % 2u];
        let h  = s / 4u;
        let k4 = s % 4u;
        let sc = qs4(r.c[4][(2u * h) + (k4 / 2u)]);
        let d0 = d * sc[2u * (k4 % 2u)];
        let d1 = d * sc[2u * (k4 % 2u) + 1u];
        for (var k = 0u; k < 8u; k++) {
            let lw = select(r.c[1][k % 4u], r.c[0][k % 4u], k < 4u);
            let hw = select(r.c[3][k % 4u], r.c[2][k % 4u], k < 4u);
            let q  = ((qb4(lw) >> vec4<u32>(4u * (k4 / 2u))) & vec4<u32>(15u)) |
                     (((qb4(hw) >> vec4<u32>(2u * k4)) & vec4<u32>(3u)) << vec4<u32>(4u));
            o[k] = select(d1, d0, k < 4u) * vec4<f32>(vec4<i32>(q) - vec4<i32>(32));
        }
        return o;
    }
    return qunit_23k(rb, u); // Q2_K, Q3_K
}
