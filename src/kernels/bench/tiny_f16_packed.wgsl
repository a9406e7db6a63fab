// tiny_f16_packed — tiny_f16 for adapters WITHOUT shader-f16 (e.g. the NVIDIA H200 in our
// Dawn build): the same 64 halves, stored two per u32 and unpacked with WGSL's core
// unpack2x16float / pack2x16float, computing in f32. Same bytes in and out as tiny_f16.
// math:       y[i] = 2 * x[i] + 1 on each half, i < N (multiples of 1/8: exact in f16)
// fuses:      nothing; dispatched N times back to back.
// workgroups: one workgroup of 64 threads; thread w -> word w (halves 2w, 2w + 1), w < N / 2.
// bindings:   0 y (N / 2) u32 read_write (packed f16 pairs) | 1 x (N / 2) u32 read
// injected:   N (halves; even) (override; the bench uses 64)
override N: u32;

@group(0) @binding(0) var<storage, read_write> y: array<u32>; // (N / 2) u32 = (N) f16
@group(0) @binding(1) var<storage, read>       x: array<u32>; // (N / 2) u32 = (N) f16

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let w = gid.x;
    if (w < N / 2u) {
        y[w] = pack2x16float(2.0 * unpack2x16float(x[w]) + 1.0);
    }
}
