// softmax_wg — row softmax with a whole workgroup per row (the parallel variant).
// math:       y[r, i] = exp(x[r, i] - max_r) / sum_j exp(x[r, j] - max_r)
// fuses:      max, exp-sum and normalise in one dispatch (as softmax_thread); what differs
//             is the parallelism: 256 threads per row instead of 1.
// workgroups: one workgroup of WG_SIZE threads per row (grid R); a tree reduction for the
//             max, another for the sum (reduce_wg).
// bindings:   0 y (R, L) f32 read_write | 1 x (R, L) f32 read
// injected:   R (rows = heads), L (row length = context) (override); WG_SIZE (constants.wgsl)
//#include "common/reduce_wg.inc.wgsl"
override R: u32;
override L: u32;

@group(0) @binding(0) var<storage, read_write> y: array<f32>; // (R, L) f32
@group(0) @binding(1) var<storage, read>       x: array<f32>; // (R, L) f32

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let base = wid.x * L;
    var m = -0x1.fffffep+127f;
    for (var i = li; i < L; i += WG_SIZE) {
        m = max(m, x[base + i]);
    }
    let rmax = wg_max(li, m);
    var s = 0.0;
    for (var i = li; i < L; i += WG_SIZE) {
        s += exp(x[base + i] - rmax);
    }
    let inv = 1.0 / wg_sum(li, s);
    for (var i = li; i < L; i += WG_SIZE) {
        y[base + i] = exp(x[base + i] - rmax) * inv;
    }
}
