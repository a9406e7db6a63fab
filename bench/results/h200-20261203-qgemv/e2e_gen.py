# experiment-only: the end-to-end kernel variants (e2e_fold, e2e_abl) from the committed lib_rows_q.wgsl
import os
s=open('../../src/kernels/llm/lib_rows_q.wgsl').read()
def rep(a,b):
    global s
    assert s.count(a)==1, a[:60]
    s=s.replace(a,b)
rep('''// bits 0..3 of h, one to bit 4''','''// Codes as floats without an add: a code c of k bits placed in the top k bits of the mantissa
// of 1.0 is f = 1 + c / 2^k exactly, so sum x c = 2^k (sum x f) - 2^k sum x: a shift and an
// and-or per code, the dot's fma, and one subtraction per sub-block with the activations' sum
// (which the minimums use already). f is in [1, 2): the products keep 22 - k bits beyond the
// code's, the subtraction cancels at most 2 bits.
// the four bytes of v as 1 + b / 256
fn qfb4(v: u32) -> vec4<f32> {
    let b = ((vec4<u32>(v) << vec4<u32>(15u, 7u, 0u, 0u)) >> vec4<u32>(0u, 0u, 1u, 9u)) & vec4<u32>(0x007F8000u);
    return bitcast<vec4<f32>>(b | vec4<u32>(0x3F800000u));
}

// the low nibbles of v's four bytes as 1 + n / 16
fn qfl4(v: u32) -> vec4<f32> {
    let b = ((vec4<u32>(v) << vec4<u32>(19u, 11u, 3u, 0u)) >> vec4<u32>(0u, 0u, 0u, 5u)) & vec4<u32>(0x00780000u);
    return bitcast<vec4<f32>>(b | vec4<u32>(0x3F800000u));
}

// the high nibbles of v's four bytes as 1 + n / 16
fn qfh4(v: u32) -> vec4<f32> {
    let b = ((vec4<u32>(v) << vec4<u32>(15u, 7u, 0u, 0u)) >> vec4<u32>(0u, 0u, 1u, 9u)) & vec4<u32>(0x00780000u);
    return bitcast<vec4<f32>>(b | vec4<u32>(0x3F800000u));
}

// bits 0..3 of h, one to bit 4''')
rep('''fn q8_row(c0: vec4<u32>, c1: vec4<u32>, x: QX8) -> f32 {
    let m = 0x80808080u;
    return dot(qf4(c0.x ^ m, 128.0), x.a) + dot(qf4(c0.y ^ m, 128.0), x.b) + dot(qf4(c0.z ^ m, 128.0), x.c) +
           dot(qf4(c0.w ^ m, 128.0), x.d) + dot(qf4(c1.x ^ m, 128.0), x.e) + dot(qf4(c1.y ^ m, 128.0), x.f) +
           dot(qf4(c1.z ^ m, 128.0), x.g) + dot(qf4(c1.w ^ m, 128.0), x.h);
}''','''fn q8_row(c0: vec4<u32>, c1: vec4<u32>, x: QX8, xs: f32) -> f32 {
    let m = 0x80808080u; // code + 128 = the byte with its top bit flipped: code = 256 f - 384
    let s = dot(qfb4(c0.x ^ m), x.a) + dot(qfb4(c0.y ^ m), x.b) + dot(qfb4(c0.z ^ m), x.c) +
            dot(qfb4(c0.w ^ m), x.d) + dot(qfb4(c1.x ^ m), x.e) + dot(qfb4(c1.y ^ m), x.f) +
            dot(qfb4(c1.z ^ m), x.g) + dot(qfb4(c1.w ^ m), x.h);
    return 256.0 * s - 384.0 * xs;
}''')
rep('''fn q4_word(v: u32, qh: u32, z: f32, xa: vec4<f32>, xb: vec4<f32>) -> f32 {
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
}''','''// (sums of x f: Q4_* codes 1 + n / 16, Q5_* codes 1 + b / 256 of the 5-bit bytes; Q4_K below)
const Q5B: bool = QT == QT_Q5_0 || QT == QT_Q5_1;
const QK5: f32  = select(16.0, 256.0, Q5B);
fn q4_word(v: u32, qh: u32, xa: vec4<f32>, xb: vec4<f32>) -> f32 {
    if (Q5B) {
        let lo = (v & M4) | qhb4(qh);
        let hi = ((v >> 4u) & M4) | qhb4(qh >> 16u);
        return dot(qfb4(lo), xa) + dot(qfb4(hi), xb);
    }
    return dot(qfl4(v), xa) + dot(qfh4(v), xb);
}

// sum x (code - z) over the block, xs = sum x
fn q4_row(c: vec4<u32>, qh: u32, z: f32, x: QX8, xs: f32) -> f32 {
    let s = q4_word(c.x, qh, x.a, x.e) + q4_word(c.y, qh >> 4u, x.b, x.f) +
            q4_word(c.z, qh >> 8u, x.c, x.g) + q4_word(c.w, qh >> 12u, x.d, x.h);
    return QK5 * s - (QK5 + z) * xs;
}''')
rep('''fn qk_word(v: u32, hb: u32, jj: u32, xa: vec4<f32>, xb: vec4<f32>) -> vec2<f32> {
    var lo = v & M4;
    var hi = (v >> 4u) & M4;
    if (QT == QT_Q5_K) {
        lo |= ((hb >> (2u * jj)) & 0x01010101u) << 4u;
        hi |= ((hb >> (2u * jj + 1u)) & 0x01010101u) << 4u;
    }
    return vec2<f32>(dot(qf4(lo, 0.0), xa), dot(qf4(hi, 0.0), xb));
}''','''fn qk_word(v: u32, hb: u32, jj: u32, xa: vec4<f32>, xb: vec4<f32>) -> vec2<f32> {
    if (QT == QT_Q5_K) {
        let lo = (v & M4) | (((hb >> (2u * jj)) & 0x01010101u) << 4u);
        let hi = ((v >> 4u) & M4) | (((hb >> (2u * jj + 1u)) & 0x01010101u) << 4u);
        return vec2<f32>(dot(qfb4(lo), xa), dot(qfb4(hi), xb));
    }
    return vec2<f32>(dot(qfl4(v), xa), dot(qfh4(v), xb));
}''')
rep('''    return vec4<f32>(dot(qf4(q1, 32.0), x0), dot(qf4(q2, 32.0), x1), dot(qf4(q3, 32.0), x2), dot(qf4(q4, 32.0), x3));''',
'''    return vec4<f32>(dot(qfb4(q1), x0), dot(qfb4(q2), x1), dot(qfb4(q3), x2), dot(qfb4(q4), x3));''')
rep('''        let xv = qx8(8u * t);
        for (var j = 0u; j < RPG; j++) {
            let d = unpack2x16float((*aux)[j].x);
            acc[j] = select(d.x, d.y, t % 2u == 1u) * q8_row((*raw)[j * QIC], (*raw)[j * QIC + 1u], xv);''','''        let xv = qx8(8u * t);
        let xs = qx8sum(xv);
        for (var j = 0u; j < RPG; j++) {
            let d = unpack2x16float((*aux)[j].x);
            acc[j] = select(d.x, d.y, t % 2u == 1u) * q8_row((*raw)[j * QIC], (*raw)[j * QIC + 1u], xv, xs);''')
rep('''            let dd = unpack2x16float(hd.x);
            let sm = qsm_k4(hd, jj);
            acc[j] = dd.x * dot(sm.xy, s) - dd.y * dot(sm.zw, xs);''','''            let dd = unpack2x16float(hd.x);
            let sm = qsm_k4(hd, jj);
            let k  = select(16.0, 256.0, QT == QT_Q5_K);
            acc[j] = dd.x * dot(sm.xy, k * s - k * xs) - dd.y * dot(sm.zw, xs);''')
rep('''        let b = 8u * (t % 2u);
        for (var j = 0u; j < RPG; j++) {
            let a = (*aux)[j];
            // scales''','''        let b = 8u * (t % 2u);
        let xg = vec4<f32>(dot(xl.a + xl.b + xl.c + xl.d, vec4<f32>(1.0)), dot(xl.e + xl.f + xl.g + xl.h, vec4<f32>(1.0)),
                           dot(xh.a + xh.b + xh.c + xh.d, vec4<f32>(1.0)), dot(xh.e + xh.f + xh.g + xh.h, vec4<f32>(1.0)));
        for (var j = 0u; j < RPG; j++) {
            let a = (*aux)[j];
            // scales''')
rep('''            let s  = q6_row((*raw)[j * QIC], (*raw)[j * QIC + 1u], (*raw)[j * QIC + 2u], xl, xh);
            acc[j] = select(d.x, d.y, (t / 4u) % 2u == 1u) * dot(s, sc);''','''            let s  = q6_row((*raw)[j * QIC], (*raw)[j * QIC + 1u], (*raw)[j * QIC + 2u], xl, xh);
            acc[j] = select(d.x, d.y, (t / 4u) % 2u == 1u) * dot(256.0 * s - 288.0 * xg, sc);''')
rep('''        let xv = qx8(8u * t);
        let z  = select(select(0.0, 8.0, QT == QT_Q4_0), 16.0, QT == QT_Q5_0);
        for (var j = 0u; j < RPG; j++) {
            let a = (*aux)[j];
            let s = q4_row((*raw)[j * QIC], a.y, z, xv);
            let d = unpack2x16float(a.x);
            if (QT == QT_Q4_1 || QT == QT_Q5_1) {
                acc[j] = d.x * s + d.y * qx8sum(xv);''','''        let xv = qx8(8u * t);
        let xs = qx8sum(xv);
        let z  = select(select(0.0, 8.0, QT == QT_Q4_0), 16.0, QT == QT_Q5_0);
        for (var j = 0u; j < RPG; j++) {
            let a = (*aux)[j];
            let s = q4_row((*raw)[j * QIC], a.y, z, xv, xs);
            let d = unpack2x16float(a.x);
            if (QT == QT_Q4_1 || QT == QT_Q5_1) {
                acc[j] = d.x * s + d.y * xs;''')
os.makedirs('e2e_fold',exist_ok=True); open('e2e_fold/lib_rows_q.wgsl','w').write(s)
for fn,mask in [('qfb4','0x007F8000u'),('qfl4','0x00780000u'),('qfh4','0x00780000u')]:
    i=s.index('fn %s(v: u32) -> vec4<f32> {'%fn); j=s.index('}\n',i)+2
    s=s[:i]+'''fn %s(v: u32) -> vec4<f32> { // ABLATION: one and-or per code, no shifts (wrong values)
    return bitcast<vec4<f32>>((vec4<u32>(v) & vec4<u32>(%s)) | vec4<u32>(0x3F800000u));
}
'''%(fn,mask)+s[j:]
os.makedirs('e2e_abl',exist_ok=True); open('e2e_abl/lib_rows_q.wgsl','w').write(s)
