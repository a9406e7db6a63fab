// softmax_thread — row softmax with ONE thread per row (the serial variant the parallel
// softmax_wg is measured against).
// math:       y[r, i] = exp(x[r, i] - max_r) / sum_j exp(x[r, j] - max_r)
// fuses:      max, exp-sum and normalise in one dispatch.
// workgroups: SOFTMAX_THREAD_WG threads per workgroup, thread r -> row r; grid
//             ceil(R / SOFTMAX_THREAD_WG). Each thread makes three passes over its row.
// bindings:   0 y (R, L) f32 read_write | 1 x (R, L) f32 read
// injected:   R (rows = heads), L (row length = context) (override); SOFTMAX_THREAD_WG
//             (constants.wgsl)
//#include "constants.wgsl"
override R: u32;
override L: u32;

@group(0) @binding(0) var<storage, read_write> y: array<f32>; // (R, L) f32
@group(0) @binding(1) var<storage, read>       x: array<f32>; // (R, L) f32

@compute @workgroup_size(SOFTMAX_THREAD_WG)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let r = gid.x;
    if (r >= R) {
        return;
    }
    let base = r * L;
    var m = -0x1.fffffep+127f;
    for (var i = 0u; i < L; i++) {
        m = max(m, x[base + i]);
    }
    var s = 0.0;
    for (var i = 0u; i < L; i++) {
        s += exp(x[base + i] - m);
    }
    let inv = 1.0 / s;
    for (var i = 0u; i < L; i++) {
        y[base + i] = exp(x[base + i] - m) * inv;
    }
}
