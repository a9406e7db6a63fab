// tiny_f32 — the smallest useful dispatch, for measuring dispatch overhead.
// math:       y[i] = 2 * x[i] + 1, i < N
// fuses:      nothing; `wgfuse bench dispatch` issues it N times back to back. Every dispatch
//             writes y, so consecutive dispatches are ordered by a barrier, as in a decode step.
// workgroups: one workgroup of 64 threads; thread i -> element i.
// bindings:   0 y (N) f32 read_write | 1 x (N) f32 read
// injected:   N (override; the bench uses 64)
override N: u32;

@group(0) @binding(0) var<storage, read_write> y: array<f32>; // (N) f32
@group(0) @binding(1) var<storage, read>       x: array<f32>; // (N) f32

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let i = gid.x;
    if (i < N) {
        y[i] = 2.0 * x[i] + 1.0;
    }
}
