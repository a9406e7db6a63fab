# experiment-only: calib_fma.wgsl variants timing the decode of one u32 code word (8 nibbles)
# into 8 weights dotted with 8 activations, 4 independent chains per invocation.
# gflops reported by `advise --calibrate` = grid*WG*ITER*16/ns -> weights/s = gflops/16*32 = 2*gflops
import os
HEAD='''@group(0) @binding(0) var<storage, read_write> y: array<f32>;
const M4: u32 = 0x0F0F0F0Fu;
fn qf4m(v: u32, z: f32) -> vec4<f32> {
    let b = (vec4<u32>(v) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(255u);
    return bitcast<vec4<f32>>(b | vec4<u32>(0x4B000000u)) - vec4<f32>(8388608.0 + z);
}
fn qf4h(v: u32, z: f32) -> vec4<f32> {
    let e = unpack2x16float((v & 0x00FF00FFu) | 0x64006400u);
    let o = unpack2x16float(((v >> 8u) & 0x00FF00FFu) | 0x64006400u);
    return vec4<f32>(e.x, o.x, e.y, o.y) - vec4<f32>(1024.0 + z);
}
// nibbles 0,2,4,6 (lo of each byte) as 1 + n/16, and 1,3,5,7 (hi)
fn qlo_s(v: u32) -> vec4<f32> {
    return bitcast<vec4<f32>>((((vec4<u32>(v) << vec4<u32>(19u, 11u, 3u, 0u)) >> vec4<u32>(0u, 0u, 0u, 5u)) & vec4<u32>(0x00780000u)) | vec4<u32>(0x3F800000u));
}
fn qhi_s(v: u32) -> vec4<f32> {
    return bitcast<vec4<f32>>((((vec4<u32>(v) << vec4<u32>(15u, 7u, 0u, 0u)) >> vec4<u32>(0u, 0u, 1u, 9u)) & vec4<u32>(0x00780000u)) | vec4<u32>(0x3F800000u));
}
fn qh2(v: u32) -> vec4<f32> { // f16 pairs 1 + n/16 (nibble at bits 6..9 of each half)
    let a = unpack2x16float(((v << 6u) & 0x03C003C0u) | 0x3C003C00u);
    let b = unpack2x16float(((v >> 2u) & 0x03C003C0u) | 0x3C003C00u);
    return vec4<f32>(a.x, b.x, a.y, b.y);
}
fn qh2h(v: u32) -> vec4<f32> {
    let a = unpack2x16float(((v << 2u) & 0x03C003C0u) | 0x3C003C00u);
    let b = unpack2x16float(((v >> 6u) & 0x03C003C0u) | 0x3C003C00u);
    return vec4<f32>(a.x, b.x, a.y, b.y);
}
fn emu_dot(a: u32, b: u32) -> i32 {
    let x = bitcast<vec4<i32>>(vec4<u32>(a << 24u, a << 16u, a << 8u, a)) >> vec4<u32>(24u);
    let w = bitcast<vec4<i32>>(vec4<u32>(b << 24u, b << 16u, b << 8u, b)) >> vec4<u32>(24u);
    return dot(x, w);
}
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let i = gid.x;
    let xa = vec4<f32>(f32(i & 7u), 0.5, 0.25, 0.125) * 1e-3;
    let xb = vec4<f32>(0.3, f32(i & 3u), 0.2, 0.1) * 1e-3;
    let xq0 = i * 0x01030507u;
    let xq1 = i * 0x07050301u;
    var v0 = i * 2654435761u;
    var v1 = v0 ^ 0x55555555u;
    var v2 = v0 ^ 0x33333333u;
    var v3 = v0 ^ 0x0F0F0F0Fu;
    var a0 = 0.0; var a1 = 0.0; var a2 = 0.0; var a3 = 0.0;
    var n0 = 0; var n1 = 0; var n2 = 0; var n3 = 0;
    for (var k = 0u; k < ITER; k++) {
        v0 += 0x9E3779B9u; v1 += 0x7F4A7C15u; v2 += 0x2545F491u; v3 += 0x6C078965u;
BODY
    }
    y[i] = ((a0 + a1) + (a2 + a3)) + f32((n0 + n1) + (n2 + n3));
}
'''
B={
 'raw':   'a{c} += dot(bitcast<vec4<f32>>(vec4<u32>(v{c}) & vec4<u32>(0x3F7FFFFFu)), xa) + dot(bitcast<vec4<f32>>(vec4<u32>(v{c}) & vec4<u32>(0x3E7FFFFFu)), xb);',
 'magic': 'a{c} += dot(qf4m(v{c} & M4, 8.0), xa) + dot(qf4m((v{c} >> 4u) & M4, 8.0), xb);',
 'f16p':  'a{c} += dot(qf4h(v{c} & M4, 8.0), xa) + dot(qf4h((v{c} >> 4u) & M4, 8.0), xb);',
 'fold':  'a{c} += dot(qlo_s(v{c}), xa) + dot(qhi_s(v{c}), xb);',
 'f16f':  'a{c} += dot(qh2(v{c}), xa) + dot(qh2h(v{c}), xb);',
 'i2f':   'a{c} += dot(vec4<f32>((vec4<u32>(v{c} & M4) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(255u)) - 8.0, xa) + dot(vec4<f32>((vec4<u32>((v{c} >> 4u) & M4) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(255u)) - 8.0, xb);',
 'dp4a':  'n{c} += dot4I8Packed(v{c} & M4, xq0) + dot4I8Packed((v{c} >> 4u) & M4, xq1);',
 'dp4u':  'n{c} += i32(dot4U8Packed(v{c} & M4, xq0) + dot4U8Packed((v{c} >> 4u) & M4, xq1));',
 'emu':   'n{c} += emu_dot(v{c} & M4, xq0) + emu_dot((v{c} >> 4u) & M4, xq1);',
}
for name, b in B.items():
    os.makedirs(name, exist_ok=True)
    body='\n'.join('        '+b.format(c=c) for c in range(4))
    open(f'{name}/calib_fma.wgsl','w').write(HEAD.replace('BODY', body))
print(' '.join(B))
