// tiny_f16 — tiny_f32 with f16 storage and arithmetic (needs shader-f16), to show that the
// per-dispatch cost does not depend on the dtype.
// math:       y[i] = 2 * x[i] + 1, i < N (inputs are multiples of 1/8: exact in f16)
// fuses:      nothing; dispatched N times back to back.
// workgroups: one workgroup of 64 threads; thread i -> element i.
// bindings:   0 y (N) f16 read_write | 1 x (N) f16 read
// injected:   N (override; the bench uses 64)
enable f16;

override N: u32;

@group(0) @binding(0) var<storage, read_write> y: array<f16>; // (N) f16
@group(0) @binding(1) var<storage, read>       x: array<f16>; // (N) f16

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let i = gid.x;
    if (i < N) {
        y[i] = 2.0h * x[i] + 1.0h;
    }
}
