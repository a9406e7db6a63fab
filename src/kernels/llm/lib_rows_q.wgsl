// lib_rows_q — fragment: lib_rows' matvec loop for quantized weight rows (lib_qblock layout).
//   rows_run(row0, n, lane, li): as lib_rows (the RPG sums of the group's rows, summed over
//       the group). A row is cut into NI items of 32 or 64 elements, the piece of the row
//       format whose bits one invocation uses whole: a block of Q4_0..Q8_0 (32), a pair of
//       sub-blocks of Q4_K / Q5_K (64: the low and high nibbles of 32 bytes), a quarter of a
//       Q6_K half (64: 16 bytes of low bits twice and 16 of high bits serve 4 groups of 16).
//       Invocation `lane` takes items lane, lane + TPR, ... (NIT of them; q_cfg picks 1 to 3
//       with f32 activations, up to 8 with int8):
//       the raw words of the first item's RPG rows are loaded, then xprep(li), then per item
//       the activations are read once (xin, into named fields: every index is static whether
//       or not the driver unrolls) and each row's codes are dotted with them: the codes become
//       floats exactly (qf4: the f32 whose mantissa holds the byte, minus 2^23 and the type's
//       offset, an add where a convert would be a quarter-rate instruction), the sums are
//       taken per sub-block and scaled once, the minimums apply to the sub-block's sum of
//       activations (d (q - z) x summed = d (sum q x - z sum x)). Q4_K, Q5_K and Q6_K stream
//       their items one code word at a time instead, the codes as f16 pairs (qfold_fma; the
//       section at the end of this file).
//       Q2_K / Q3_K, whose blocks are not chunk aligned, take 32-element units through
//       lib_qblock's qunit.
//   Floating-point order differs from cpu-ref's element loop (scale once per sub-block):
//   the plans' tolerance (1e-4 relative on logits, test_quant_gpu) covers it.
//   With ACT_Q8 (--activations q8, opt-in) the input is first rounded to int8 per 32-element
//   block, as cpu-ref does then (wgf__quant_round_q8): x^ = d q, d = max|x| / 127, q =
//   round(x / d), a non-finite block all NaN. Each workgroup rounds it once into workgroup
//   memory (xq: 4 codes per word; xd: d; xs: the codes' sum), and the dots are integer:
//   dot4I8Packed of 4 weight codes with 4 activation codes, the block's offset or minimum
//   through xs, the scales applied once per block (llama.cpp's q8_1 activations). Q2_K / Q3_K
//   read x^ as floats.
//   ACT_X3 (--activations i8x3, opt-in) carries the f32 input to the same integer dots as
//   three int8 digits per element, x = d (q1 + q2 / 254 + q3 / 254^2) with d = max|x| / 127
//   per 32: |x - that| <= d / 2 / 254^2 plus the f32 rounding of x / d, ~1.2e-7 max|x| of the
//   block, below the rounding of the dots' f32 sums. Each code word takes three dot4I8Packed
//   and no decode to floats; every workgroup rounds the whole input, three digits each. On
//   the H100 that lost 20-28% on Qwen2.5-0.5B's small matrices (bench/RESULTS.md, "Sixteenth
//   cut"); Phi-3-mini's is not measured yet. Q2_K / Q3_K keep floats.
// needs:      lib_reduce_*, lib_qblock; const TPR, RPG, NIT, NI (items per row), NU, KCS
//             (row stride in chunks), QA, QB, QT, ACT_Q8, WG; module-scope `w: array<vec4<u32>>`,
//             `x: array<vec4<f32>>`; fn xin(i: u32) -> vec4<f32>, fn xprep(li: u32) (uniform:
//             may hold barriers); fn xq_in(i: u32) -> vec4<f32>: what ACT_Q8 rounds, read after
//             xprep (the normed input itself, in cpu-ref's order, where xin leaves the norm's
//             1 / rms to the caller: such a kernel then does not scale the sums)
// override WOFF (default 0): the rows start at chunk WOFF of `w` (as lib_rows).
override WOFF: u32 = 0u;

fn wq4(i: u32) -> vec4<u32> {
    return w[i];
}

// chunks of raw codes per item and row held from the load phase to the dot phase
const QIC: u32 = select(select(select(select(1u, 2u, QT == QT_Q8_0), 3u, QT == QT_Q4_K || QT == QT_Q6_K),
                               4u, QT == QT_Q5_K), 1u, QT == QT_Q2_K || QT == QT_Q3_K);
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
        // c 0: header; 1: the fifth-bit chunk of items 2 (j / 2), + 1 (lo, hi, lo, hi: gr_quant.c);
        // 2, 3: qs bytes 32 j .. 32 j + 32
        let bc = r4 + 11u * (t / 4u);
        let j  = t % 4u;
        return wq4(select(select(bc + 3u + 2u * j + c - 2u, bc + 1u + j / 2u, c == 1u), bc, c == 0u));
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
        // d; the scale words 2 h and 2 h + 1 of the block's 16 int8 scales, both from the
        // block's last chunk in one load (as two qword reads they were two)
        let sc = wq4(rb / 4u + 13u * (t / 4u) + 12u);
        let sp = select(sc.xy, sc.zw, (t / 2u) % 2u == 1u);
        return vec4<u32>(qword(rb + QA + t / 8u), sp.x, sp.y, 0u);
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
    // 6-bit values as floats exactly without a convert: in the mantissa of 2^23
    return bitcast<vec4<f32>>(vec4<u32>(sc, mn) | vec4<u32>(0x4B000000u)) - vec4<f32>(8388608.0);
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
    if (ACT_Q8) {
        qx_round(li);
    }
    var acc = vec4<f32>(0.0);
    for (var i = 0u; i < NIT; i++) {
        let t = lane + i * TPR;
        if (t < NI) {
            if (i > 0u) {
                qitem_load(row0, n, t, &raw, &aux);
            }
            if (ACT_Q8 && !Q23) {
                acc += qitem_dot8(t, &raw, &aux);
            } else {
                acc += qitem_dot(row0, n, t, &raw, &aux);
            }
        }
    }
    return rowsum4(acc, li);
}

// ---- ACT_Q8: int8 activations ----------------------------------------------------------------
const QXN: u32 = select(1u, 2u * NU, ACT_Q8);
const QXB: u32 = select(1u, NU, ACT_Q8);
// ACT_X3: three digits an activation, x = d (q1 + q2 / 254 + q3 / 254^2) (APC words of codes
// for every word of q1's; vec4 i of digit k at xq[APC i + k]). Without it q2 = q3 = 0.
const APC: u32 = select(1u, 3u, ACT_X3);
const R1: f32  = 1.0 / 254.0;
const R2: f32  = 1.0 / 64516.0;

// an integer dot's three digit sums as the dot with x / d
fn qcv(s: vec3<i32>) -> f32 {
    if (ACT_X3) {
        return f32(s.x) + f32(s.y) * R1 + f32(s.z) * R2;
    }
    return f32(s.x);
}
// vec4 i: codes of elements 16 i .. 16 i + 16, 4 per word (element 4 k low): every read below
// takes 16 codes in one workgroup load
var<workgroup> xq: array<vec4<u32>, QXN * APC>;
var<workgroup> xd: array<f32, QXB>; // block u: d
var<workgroup> xs: array<f32, QXB>; // block u: the sum of its 32 codes (digits: qcv)

// |v| as bits: the integer order of these is the float order, and a NaN is above every
// finite value and infinity, so the block's maximum carries it (cpu-ref takes the same)
fn qabsbits(v: vec4<f32>) -> u32 {
    let b = bitcast<vec4<u32>>(v) & vec4<u32>(0x7FFFFFFFu);
    return max(max(b.x, b.y), max(b.z, b.w));
}

// the codes of v (ACT_X3: its three digits; else b, c are 0). y - q1 is exact (|y - q1| <= 1/2
// and q1 = 0 or within a factor 2 of y), so each digit takes the previous one's remainder
// whole; the clamps only bound the block's largest element's rounding (|y| <= 127 then).
struct QD3 {
    a: vec4<i32>, b: vec4<i32>, c: vec4<i32>,
}

fn qcodes(v: vec4<f32>, id: f32) -> QD3 {
    let y  = v * id;
    let lo = vec4<f32>(-127.0);
    let hi = vec4<f32>(127.0);
    let q1 = clamp(round(y), lo, hi);
    if (!ACT_X3) {
        return QD3(vec4<i32>(q1), vec4<i32>(0), vec4<i32>(0));
    }
    let y2 = (y - q1) * 254.0;
    let q2 = clamp(round(y2), lo, hi);
    let q3 = clamp(round((y2 - q2) * 254.0), lo, hi);
    return QD3(vec4<i32>(q1), vec4<i32>(q2), vec4<i32>(q3));
}

// every block of the input, one per invocation at a time; the barrier orders the writes
// before every invocation's dots (uniform: rows_run is)
fn qx_round(li: u32) {
    for (var u = li; u < NU; u += WG) {
        let v = QX8(xq_in(8u * u), xq_in(8u * u + 1u), xq_in(8u * u + 2u), xq_in(8u * u + 3u), xq_in(8u * u + 4u),
                    xq_in(8u * u + 5u), xq_in(8u * u + 6u), xq_in(8u * u + 7u));
        let m  = max(max(max(qabsbits(v.a), qabsbits(v.b)), max(qabsbits(v.c), qabsbits(v.d))),
                     max(max(qabsbits(v.e), qabsbits(v.f)), max(qabsbits(v.g), qabsbits(v.h))));
        // a NaN or an infinity in the block: d NaN and the codes 0, so its products are NaN
        let nf = m >= 0x7F800000u;
        let d  = select(bitcast<f32>(m) / 127.0, bitcast<f32>(m | 0x00400000u), nf); // a quiet NaN
        let id = select(select(0.0, 1.0 / d, d > 0.0), 0.0, nf);
        let qa = qcodes(v.a, id);
        let qb = qcodes(v.b, id);
        let qc = qcodes(v.c, id);
        let qd = qcodes(v.d, id);
        let qe = qcodes(v.e, id);
        let qf = qcodes(v.f, id);
        let qg = qcodes(v.g, id);
        let qh = qcodes(v.h, id);
        let b = 2u * APC * u;
        xq[b]       = vec4<u32>(pack4xI8(qa.a), pack4xI8(qb.a), pack4xI8(qc.a), pack4xI8(qd.a));
        xq[b + APC] = vec4<u32>(pack4xI8(qe.a), pack4xI8(qf.a), pack4xI8(qg.a), pack4xI8(qh.a));
        if (ACT_X3) {
            xq[b + 1u] = vec4<u32>(pack4xI8(qa.b), pack4xI8(qb.b), pack4xI8(qc.b), pack4xI8(qd.b));
            xq[b + 2u] = vec4<u32>(pack4xI8(qa.c), pack4xI8(qb.c), pack4xI8(qc.c), pack4xI8(qd.c));
            xq[b + 4u] = vec4<u32>(pack4xI8(qe.b), pack4xI8(qf.b), pack4xI8(qg.b), pack4xI8(qh.b));
            xq[b + 5u] = vec4<u32>(pack4xI8(qe.c), pack4xI8(qf.c), pack4xI8(qg.c), pack4xI8(qh.c));
        }
        let t1 = qa.a + qb.a + qc.a + qd.a + qe.a + qf.a + qg.a + qh.a;
        let t2 = qa.b + qb.b + qc.b + qd.b + qe.b + qf.b + qg.b + qh.b;
        let t3 = qa.c + qb.c + qc.c + qd.c + qe.c + qf.c + qg.c + qh.c;
        let o  = vec4<i32>(1);
        xd[u] = d;
        xs[u] = qcv(vec3<i32>(dot(t1, o), dot(t2, o), dot(t3, o)));
    }
    workgroupBarrier();
}

// x^ as floats: vec4 i (Q2_K / Q3_K, which decode to floats)
fn qxhat(i: u32) -> vec4<f32> {
    let b = APC * (i / 4u);
    var v = vec4<f32>(unpack4xI8(xq[b][i % 4u]));
    if (ACT_X3) {
        v += vec4<f32>(unpack4xI8(xq[b + 1u][i % 4u])) * R1 + vec4<f32>(unpack4xI8(xq[b + 2u][i % 4u])) * R2;
    }
    return v * xd[i / 8u];
}

// the sum of the 16 codes of activation words a .. a + 4 (a a multiple of 4), over d (qcv)
fn qsum16(a: u32) -> f32 {
    return qcv(q_dot4w(vec4<u32>(0x01010101u), a));
}

// Q4_0 .. Q5_1: the integer dot of block t's 32 codes (4 words of nibbles, the 5th bits from
// qh) with its activation codes (words 8 t .. 8 t + 8)
fn q4_dot8(c: vec4<u32>, qh: u32, t: u32) -> vec3<i32> {
    let b  = 8u * t;
    var lo = vec4<u32>(c & vec4<u32>(M4));
    var hi = vec4<u32>((c >> vec4<u32>(4u)) & vec4<u32>(M4));
    if (QT == QT_Q5_0 || QT == QT_Q5_1) {
        lo |= vec4<u32>(qhb4(qh), qhb4(qh >> 4u), qhb4(qh >> 8u), qhb4(qh >> 12u));
        hi |= vec4<u32>(qhb4(qh >> 16u), qhb4(qh >> 20u), qhb4(qh >> 24u), qhb4(qh >> 28u));
    }
    return q_dot4w(lo, b) + q_dot4w(hi, b + 4u);
}

// 4 code words (one per activation word a .. a + 4, a a multiple of 4): the integer dot with
// each digit's codes (ACT_X3; else y, z are 0), to be weighted by qcv
fn q_dot4w(c: vec4<u32>, a: u32) -> vec3<i32> {
    let b = APC * (a / 4u);
    let v = xq[b];
    var s = vec3<i32>(dot4I8Packed(c.x, v.x) + dot4I8Packed(c.y, v.y) + dot4I8Packed(c.z, v.z) + dot4I8Packed(c.w, v.w),
                      0, 0);
    if (ACT_X3) {
        let u = xq[b + 1u];
        let w = xq[b + 2u];
        s.y = dot4I8Packed(c.x, u.x) + dot4I8Packed(c.y, u.y) + dot4I8Packed(c.z, u.z) + dot4I8Packed(c.w, u.w);
        s.z = dot4I8Packed(c.x, w.x) + dot4I8Packed(c.y, w.y) + dot4I8Packed(c.z, w.z) + dot4I8Packed(c.w, w.w);
    }
    return s;
}

// the RPG rows' dot products over item t with the int8 activations (every type but Q2_K, Q3_K)
fn qitem_dot8(t: u32, raw: ptr<function, array<vec4<u32>, RPG * QIC>>, aux: ptr<function, array<vec4<u32>, RPG>>)
    -> vec4<f32> {
    var acc = vec4<f32>(0.0);
    if (QT == QT_Q8_0) {
        let dx = xd[t];
        for (var j = 0u; j < RPG; j++) {
            let d = unpack2x16float((*aux)[j].x);
            let s = q_dot4w((*raw)[j * QIC], 8u * t) + q_dot4w((*raw)[j * QIC + 1u], 8u * t + 4u);
            acc[j] = select(d.x, d.y, t % 2u == 1u) * dx * qcv(s);
        }
    } else if (QT == QT_Q4_K || QT == QT_Q5_K) {
        // sub-blocks 2 jj (low nibbles: activation block 2 t) and 2 jj + 1 (high: 2 t + 1)
        let jj = t % 4u;
        let dx = vec2<f32>(xd[2u * t], xd[2u * t + 1u]);
        let sx = vec2<f32>(xs[2u * t], xs[2u * t + 1u]);
        for (var j = 0u; j < RPG; j++) {
            let hd = (*raw)[j * QIC];
            var q0: vec4<u32>;
            var q1: vec4<u32>;
            if (QT == QT_Q5_K) {
                q0 = (*raw)[j * QIC + 2u];
                q1 = (*raw)[j * QIC + 3u];
            } else {
                q0 = (*raw)[j * QIC + 1u];
                q1 = (*raw)[j * QIC + 2u];
            }
            var l0 = q0 & vec4<u32>(M4);
            var l1 = q1 & vec4<u32>(M4);
            var h0 = (q0 >> vec4<u32>(4u)) & vec4<u32>(M4);
            var h1 = (q1 >> vec4<u32>(4u)) & vec4<u32>(M4);
            if (QT == QT_Q5_K) {
                // the item's fifth bits: word k's four at bit k of each byte (gr_quant.c)
                let fb = (*raw)[j * QIC + 1u];
                let hl = vec4<u32>(fb[2u * (jj % 2u)]);
                let hh = vec4<u32>(fb[2u * (jj % 2u) + 1u]);
                let k0 = vec4<u32>(0u, 1u, 2u, 3u);
                let k1 = vec4<u32>(4u, 5u, 6u, 7u);
                let m1 = vec4<u32>(0x01010101u);
                l0 |= ((hl >> k0) & m1) << vec4<u32>(4u);
                l1 |= ((hl >> k1) & m1) << vec4<u32>(4u);
                h0 |= ((hh >> k0) & m1) << vec4<u32>(4u);
                h1 |= ((hh >> k1) & m1) << vec4<u32>(4u);
            }
            let s  = vec2<f32>(qcv(q_dot4w(l0, 16u * t) + q_dot4w(l1, 16u * t + 4u)),
                               qcv(q_dot4w(h0, 16u * t + 8u) + q_dot4w(h1, 16u * t + 12u)));
            let dd = unpack2x16float(hd.x);
            let sm = qsm_k4(hd, jj);
            acc[j] = dd.x * dot(sm.xy * dx, s) - dd.y * dot(sm.zw * dx, sx);
        }
    } else if (QT == QT_Q6_K) {
        // groups g = 0..3 of 16 elements: activation words x0 + 8 g .. + 4, in block (x0 + 8 g) / 8
        let x0 = 64u * (t / 4u) + 32u * ((t / 2u) % 2u) + 4u * (t % 2u);
        let dx = vec4<f32>(xd[x0 / 8u], xd[x0 / 8u + 1u], xd[x0 / 8u + 2u], xd[x0 / 8u + 3u]);
        let sx = vec4<f32>(qsum16(x0), qsum16(x0 + 8u), qsum16(x0 + 16u), qsum16(x0 + 24u));
        let b = 8u * (t % 2u);
        for (var j = 0u; j < RPG; j++) {
            let a  = (*aux)[j];
            let sc = vec4<f32>(qs4((a.y >> b) & 0x00FF00FFu).xz, qs4((a.z >> b) & 0x00FF00FFu).xz);
            let d  = unpack2x16float(a.x);
            let la = (*raw)[j * QIC];
            let lb = (*raw)[j * QIC + 1u];
            let qh = (*raw)[j * QIC + 2u];
            let g  = q6_codes(la, lb, qh); // 0..63, minus 32 below
            let s  = vec4<f32>(qcv(q_dot4w(g.a, x0)), qcv(q_dot4w(g.b, x0 + 8u)), qcv(q_dot4w(g.c, x0 + 16u)),
                               qcv(q_dot4w(g.d, x0 + 24u))) - 32.0 * sx;
            acc[j] = select(d.x, d.y, (t / 4u) % 2u == 1u) * dot(sc * dx, vec4<f32>(s));
        }
    } else {
        // Q4_0, Q4_1, Q5_0, Q5_1: d (q - z) or d q + m over block t
        let dx = xd[t];
        let sx = xs[t];
        let z  = select(select(0.0, 8.0, QT == QT_Q4_0), 16.0, QT == QT_Q5_0);
        for (var j = 0u; j < RPG; j++) {
            let a = (*aux)[j];
            let s = qcv(q4_dot8((*raw)[j * QIC], a.y, t));
            let d = unpack2x16float(a.x);
            if (QT == QT_Q4_1 || QT == QT_Q5_1) {
                acc[j] = dx * (d.x * s + d.y * sx);
            } else {
                acc[j] = select(d.x, d.y, t % 2u == 1u) * dx * (s - z * sx);
            }
        }
    }
    return acc;
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

// Q8_0: 32 int8 codes in two chunks
fn q8_row(c0: vec4<u32>, c1: vec4<u32>, x: QX8) -> f32 {
    let m = 0x80808080u;
    return dot(qf4(c0.x ^ m, 128.0), x.a) + dot(qf4(c0.y ^ m, 128.0), x.b) + dot(qf4(c0.z ^ m, 128.0), x.c) +
           dot(qf4(c0.w ^ m, 128.0), x.d) + dot(qf4(c1.x ^ m, 128.0), x.e) + dot(qf4(c1.y ^ m, 128.0), x.f) +
           dot(qf4(c1.z ^ m, 128.0), x.g) + dot(qf4(c1.w ^ m, 128.0), x.h);
}

// Q4_0 .. Q5_1: word k of the 16 qs bytes holds elements 4k .. 4k + 4 (low nibbles, with
// the 5th bits qh >> 4k) and 16 + 4k .. (high nibbles, qh >> 16 + 4k), each minus z
fn q4_word(v: u32, qh: u32, z: f32, xa: vec4<f32>, xb: vec4<f32>) -> f32 {
    var lo = v & M4;
    var hi = (v >> 4u) & M4;
    if (QT == QT_Q5_0 || QT == QT_Q5_1) {
        lo |= qhb4(qh);
        hi |= qhb4(qh >> 16u);
    }
    return dot(qf4(lo, z), xa) + dot(qf4(hi, z), xb);
}

fn q4_row(c: vec4<u32>, qh: u32, z: f32, x: QX8) -> f32 {
    return q4_word(c.x, qh, z, x.a, x.e) + q4_word(c.y, qh >> 4u, z, x.b, x.f) +
           q4_word(c.z, qh >> 8u, z, x.c, x.g) + q4_word(c.w, qh >> 12u, z, x.d, x.h);
}

// Q6_K: four words each of ql[l..], ql[l + 32..], qh[l..]: the 6-bit codes (0..63, one per
// byte) of the item's 4 groups of 16 (y[l], y[l + 32], y[l + 64], y[l + 96]) in a .. d
struct Q6C {
    a: vec4<u32>, b: vec4<u32>, c: vec4<u32>, d: vec4<u32>,
}

fn q6_codes(la: vec4<u32>, lb: vec4<u32>, qh: vec4<u32>) -> Q6C {
    let m = vec4<u32>(M4);
    let h = vec4<u32>(0x03030303u);
    return Q6C((la & m) | ((qh & h) << vec4<u32>(4u)), (lb & m) | (((qh >> vec4<u32>(2u)) & h) << vec4<u32>(4u)),
               ((la >> vec4<u32>(4u)) & m) | (((qh >> vec4<u32>(4u)) & h) << vec4<u32>(4u)),
               ((lb >> vec4<u32>(4u)) & m) | (((qh >> vec4<u32>(6u)) & h) << vec4<u32>(4u)));
}

// as q6_codes, for qfold_fma only: bits 6, 7 of each byte are left as they fall (qfold_fma
// reads bits 0..5), so each group is one bit-select of two words
fn q6_codes6(la: vec4<u32>, lb: vec4<u32>, qh: vec4<u32>) -> Q6C {
    let m = vec4<u32>(M4);
    let n = vec4<u32>(~M4);
    return Q6C((la & m) | ((qh << vec4<u32>(4u)) & n), (lb & m) | ((qh << vec4<u32>(2u)) & n),
               ((la >> vec4<u32>(4u)) & m) | (qh & n), ((lb >> vec4<u32>(4u)) & m) | ((qh >> vec4<u32>(2u)) & n));
}

// the RPG rows' dot products over item t (raw / aux: its words, loaded by qitem_load)
fn qitem_dot(row0: u32, n: u32, t: u32, raw: ptr<function, array<vec4<u32>, RPG * QIC>>,
             aux: ptr<function, array<vec4<u32>, RPG>>) -> vec4<f32> {
    var acc = vec4<f32>(0.0);
    if (Q23) {
        var xv = qx8(8u * t);
        if (ACT_Q8) {
            let i = 8u * t;
            xv = QX8(qxhat(i), qxhat(i + 1u), qxhat(i + 2u), qxhat(i + 3u), qxhat(i + 4u), qxhat(i + 5u), qxhat(i + 6u),
                     qxhat(i + 7u));
        }
        for (var j = 0u; j < RPG; j++) {
            let wv = qunit(4u * (WOFF + min(row0 + j, n - 1u) * KCS), t);
            acc[j] = dot(wv[0], xv.a) + dot(wv[1], xv.b) + dot(wv[2], xv.c) + dot(wv[3], xv.d) +
                     dot(wv[4], xv.e) + dot(wv[5], xv.f) + dot(wv[6], xv.g) + dot(wv[7], xv.h);
        }
        return acc;
    }
    if (QT == QT_Q8_0) {
        let xv = qx8(8u * t);
        for (var j = 0u; j < RPG; j++) {
            let d = unpack2x16float((*aux)[j].x);
            acc[j] = select(d.x, d.y, t % 2u == 1u) * q8_row((*raw)[j * QIC], (*raw)[j * QIC + 1u], xv);
        }
    } else if (QT == QT_Q4_K || QT == QT_Q5_K) {
        return qk_dot(t, raw);
    } else if (QT == QT_Q6_K) {
        return q6_dot(t, raw, aux);
    } else {
        // Q4_0, Q4_1, Q5_0, Q5_1
        let xv = qx8(8u * t);
        let z  = select(select(0.0, 8.0, QT == QT_Q4_0), 16.0, QT == QT_Q5_0);
        for (var j = 0u; j < RPG; j++) {
            let a = (*aux)[j];
            let s = q4_row((*raw)[j * QIC], a.y, z, xv);
            let d = unpack2x16float(a.x);
            if (QT == QT_Q4_1 || QT == QT_Q5_1) {
                acc[j] = d.x * s + d.y * qx8sum(xv);
            } else {
                acc[j] = select(d.x, d.y, t % 2u == 1u) * s;
            }
        }
    }
    return acc;
}

// ---- Q4_K / Q5_K / Q6_K: streamed dots -------------------------------------------------------
// The K types' items are 64 elements (16 activation vec4) with RPG rows of 3 chunks each
// (Q5_K: 4). Held all at once (two QX8 of activations beside the rows' words, as the other
// types do) that is more registers than the device can give many invocations, so these dots
// take the item one code word at a time: word k's activation vec4 are read, dotted with
// word k of every row, and dropped. On the H200 this took Phi-3-mini Q4_K_M from 314 to 344
// tok/s, and it made three items per invocation pay (q_cfg: 382); the codes as f16
// 1 + c / 2^n (qfold_dot, half the instructions of qf4 per code) then 395 -> 411
// (bench/RESULTS.md, "Eighth cut"); accumulated by fused multiply-add chains (qfold_fma) since
// the twelfth cut, +1-2% on Phi-3-mini Q4_K_M / Q5_K_M and Llama-3.2-1B Q4_K_M. Q5_K (Phi-3's
// fused attn_qkv under older llama.cpp's Q4_K_M) streams the same way since the ninth cut: +4% on
// Phi-3-mini Q4_K_M, +12% on Q5_K_M; since the tenth its
// fifth bits come regrouped per item (gr_quant.c: one chunk an item, word k's bits one shift
// away), +9% on Phi-3-mini and Llama-3.2-1B Q5_K_M.
// Measured and kept out (ninth cut): multiply-add chains with a per-workgroup table of the
// activations' sums per 16 (no gain), the codes in f32 mantissas (a shift and a mask-or per
// code, no unpack: 4-5% slower), Q4_K's nibbles with two shifts a word (low ones as
// 1 + c / 256: equal on Phi-3-mini, 16x the cancellation), and the legacy types streamed this
// way (Phi-3-mini Q4_0 / Q8_0 3-4% slower).

// component c of chunk w of every row's item (rows past RPG: 0)
fn qrows_word(raw: ptr<function, array<vec4<u32>, RPG * QIC>>, w: u32, c: u32) -> vec4<u32> {
    var v = vec4<u32>(0u);
    for (var j = 0u; j < RPG; j++) {
        v[j] = (*raw)[j * QIC + w][c];
    }
    return v;
}

// The n-bit codes c in the low bits of v's four bytes (n = 4..6; bits above them ignored), each
// as the f16 1 + c / 2^n (exact: c in the top bits of 1.0's mantissa), dotted with x and added
// to acc: two unpack2x16float (bytes 0, 2 and 1, 3), then one chain of four fused multiply-adds
// (the kernels are bound by the instructions they issue, bench/RESULTS.md "Twelfth cut": as
// dot + dot + acc this was two multiplies, two fmas and two adds), no convert or add per code.
// Sums of these are sum x + sum c x / 2^n: the caller takes sum x off.
fn qfold_fma(v: u32, n: u32, x: vec4<f32>, acc: f32) -> f32 {
    let h = ((1u << n) - 1u) << (10u - n); // the code's bits in an f16, both halves below
    let m = h | (h << 16u);
    let a = unpack2x16float(((v << (10u - n)) & m) | 0x3C003C00u);
    let b = unpack2x16float(((v >> (n - 2u)) & m) | 0x3C003C00u);
    return fma(b.y, x.w, fma(a.y, x.z, fma(b.x, x.y, fma(a.x, x.x, acc))));
}

// Q4_K / Q5_K word k of the item at activation vec4 b (qs word: chunk w, component c of every
// row; Q5_K's qs chunks follow its fifth-bit chunk): low nibbles (sub-block 2 jj) with x[b + k],
// high (2 jj + 1) with x[b + 8 + k], into the rows' sub-block sums sl, sh; Q5_K's fifth bits
// for word k are bit k of each byte of the rows' item words hl (low) and hh (high), as
// gr_quant.c regroups them. xl, xh sum the activations for the minimums.
const Q5K: bool = QT == QT_Q5_K;
const QKN: u32  = select(4u, 5u, Q5K); // code bits

fn qk_word(raw: ptr<function, array<vec4<u32>, RPG * QIC>>, b: u32, k: u32, w: u32, c: u32, hl: vec4<u32>,
           hh: vec4<u32>, sl: ptr<function, vec4<f32>>, sh: ptr<function, vec4<f32>>, xl: ptr<function, vec4<f32>>,
           xh: ptr<function, vec4<f32>>) {
    let xa = xin(b + k);
    let xb = xin(b + 8u + k);
    *xl += xa;
    *xh += xb;
    let v = qrows_word(raw, select(w, w + 1u, Q5K), c);
    for (var j = 0u; j < RPG; j++) {
        var lo = v[j];
        var hi = v[j] >> 4u;
        if (Q5K) {
            lo = (lo & M4) | (((hl[j] >> k) & 0x01010101u) << 4u);
            hi = (hi & M4) | (((hh[j] >> k) & 0x01010101u) << 4u);
        }
        (*sl)[j] = qfold_fma(lo, QKN, xa, (*sl)[j]);
        (*sh)[j] = qfold_fma(hi, QKN, xb, (*sh)[j]);
    }
}

// Q4_K / Q5_K item t (sub-blocks 2 jj, 2 jj + 1 of block t / 4, jj = t % 4): qs words 0..3 in
// chunk 1, 4..7 in chunk 2 (Q5_K: 2, 3; its fifth bits in 1, the item's lo and hi words at
// components 2 (jj % 2), + 1); word k holds elements 4 k .. 4 k + 4 of both sub-blocks.
// Written out word by word: a loop over k would index raw by its counter (see rows_run).
fn qk_dot(t: u32, raw: ptr<function, array<vec4<u32>, RPG * QIC>>) -> vec4<f32> {
    let b  = 16u * t;
    let jj = t % 4u;
    var sl = vec4<f32>(0.0);
    var sh = vec4<f32>(0.0);
    var xl = vec4<f32>(0.0);
    var xh = vec4<f32>(0.0);
    var hl = vec4<u32>(0u);
    var hh = vec4<u32>(0u);
    if (Q5K) {
        let lc = 2u * (jj % 2u);
        hl = select(qrows_word(raw, 1u, 0u), qrows_word(raw, 1u, 2u), lc == 2u);
        hh = select(qrows_word(raw, 1u, 1u), qrows_word(raw, 1u, 3u), lc == 2u);
    }
    qk_word(raw, b, 0u, 1u, 0u, hl, hh, &sl, &sh, &xl, &xh);
    qk_word(raw, b, 1u, 1u, 1u, hl, hh, &sl, &sh, &xl, &xh);
    qk_word(raw, b, 2u, 1u, 2u, hl, hh, &sl, &sh, &xl, &xh);
    qk_word(raw, b, 3u, 1u, 3u, hl, hh, &sl, &sh, &xl, &xh);
    qk_word(raw, b, 4u, 2u, 0u, hl, hh, &sl, &sh, &xl, &xh);
    qk_word(raw, b, 5u, 2u, 1u, hl, hh, &sl, &sh, &xl, &xh);
    qk_word(raw, b, 6u, 2u, 2u, hl, hh, &sl, &sh, &xl, &xh);
    qk_word(raw, b, 7u, 2u, 3u, hl, hh, &sl, &sh, &xl, &xh);
    let sx = vec2<f32>(dot(xl, vec4<f32>(1.0)), dot(xh, vec4<f32>(1.0)));
    let k  = f32(1u << QKN);
    var acc = vec4<f32>(0.0);
    for (var j = 0u; j < RPG; j++) {
        let hd = (*raw)[j * QIC];
        let dd = unpack2x16float(hd.x);
        let sm = qsm_k4(hd, jj);
        // sl, sh are sums of (1 + c / 2^n) x: sum c x = 2^n (sl - sum x)
        acc[j] = dd.x * k * (sm.x * (sl[j] - sx.x) + sm.y * (sh[j] - sx.y)) - dd.y * dot(sm.zw, sx);
    }
    return acc;
}

// Q6_K word k of every row (ql[l..], ql[l + 32..], qh[l..]: chunks 0, 1, 2, component k):
// elements 4 k .. of the item's 4 groups of 16, group g's at activation vec4 x0 + k + 8 g, into
// the rows' group sums
fn q6_words(raw: ptr<function, array<vec4<u32>, RPG * QIC>>, x0: u32, k: u32, s: ptr<function, array<vec4<f32>, 4>>,
            xs: ptr<function, vec4<f32>>) {
    let xa = xin(x0 + k);
    let xb = xin(x0 + 8u + k);
    let xc = xin(x0 + 16u + k);
    let xd = xin(x0 + 24u + k);
    let g  = q6_codes6(qrows_word(raw, 0u, k), qrows_word(raw, 1u, k), qrows_word(raw, 2u, k)); // a row each
    let o  = vec4<f32>(1.0);
    *xs += vec4<f32>(dot(xa, o), dot(xb, o), dot(xc, o), dot(xd, o));
    for (var j = 0u; j < RPG; j++) {
        let sj = (*s)[j];
        (*s)[j] = vec4<f32>(qfold_fma(g.a[j], 6u, xa, sj.x), qfold_fma(g.b[j], 6u, xb, sj.y),
                            qfold_fma(g.c[j], 6u, xc, sj.z), qfold_fma(g.d[j], 6u, xd, sj.w));
    }
}

// Q6_K item t, word by word as qk_dot
fn q6_dot(t: u32, raw: ptr<function, array<vec4<u32>, RPG * QIC>>, aux: ptr<function, array<vec4<u32>, RPG>>)
    -> vec4<f32> {
    let x0 = 64u * (t / 4u) + 32u * ((t / 2u) % 2u) + 4u * (t % 2u);
    var s: array<vec4<f32>, 4>;
    var xs = vec4<f32>(0.0); // the groups' activations, summed
    q6_words(raw, x0, 0u, &s, &xs);
    q6_words(raw, x0, 1u, &s, &xs);
    q6_words(raw, x0, 2u, &s, &xs);
    q6_words(raw, x0, 3u, &s, &xs);
    let b = 8u * (t % 2u);
    var acc = vec4<f32>(0.0);
    for (var j = 0u; j < RPG; j++) {
        // scales sc[8 h + i + 2 g], g = 0..3: bytes i, i + 2 of words 2 h, 2 h + 1
        let a  = (*aux)[j];
        // the int8 scales as floats without a convert: (byte ^ 128) in the mantissa of 2^23
        let w0 = (a.y >> b) & 0x00FF00FFu;
        let w1 = (a.z >> b) & 0x00FF00FFu;
        let sb = vec4<u32>(w0 & 255u, w0 >> 16u, w1 & 255u, w1 >> 16u);
        let sc = bitcast<vec4<f32>>((sb ^ vec4<u32>(0x80u)) | vec4<u32>(0x4B000000u)) - vec4<f32>(8388608.0 + 128.0);
        let d  = unpack2x16float(a.x);
        // s sums (1 + q / 64) x: sum (q - 32) x = 64 s - 96 sum x
        acc[j] = select(d.x, d.y, (t / 4u) % 2u == 1u) * dot(64.0 * s[j] - 96.0 * xs, sc);
    }
    return acc;
}
