// rmsnorm — RMSNorm of one row in one dispatch: the norm role of the LLM plans, and the fused
// side of `wgfuse bench fusion`'s RMSNorm experiment (6 elementwise dispatches vs this one).
// math:       y = x * w / sqrt(mean(x^2) + EPS)
// fuses:      the 6 elementwise steps SQUARE, MEAN, ADD_EPS, RSQRT, MUL_SCALAR, MUL.
// workgroups: one workgroup of WG_SIZE threads per row (batch 1 decode: one row); each thread
//             sums x^2 over a strided slice, a tree reduction (reduce_wg) gives the mean, then
//             each thread scales its slice.
// bindings:   0 y (H) f32 read_write | 1 x (H) f32 read | 2 w (H) f32 read
// injected:   H (hidden size), EPS (rms_norm_eps) (override); WG_SIZE (constants.wgsl)
//#include "common/reduce_wg.inc.wgsl"
override H:   u32;
override EPS: f32;

@group(0) @binding(0) var<storage, read_write> y: array<f32>; // (H) f32
@group(0) @binding(1) var<storage, read>       x: array<f32>; // (H) f32
@group(0) @binding(2) var<storage, read>       w: array<f32>; // (H) f32, the norm's weight

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(local_invocation_index) li: u32) {
    var s = 0.0;
    for (var i = li; i < H; i += WG_SIZE) {
        let v = x[i];
        s += v * v;
    }
    let scale = inverseSqrt(wg_sum(li, s) / f32(H) + EPS);
    for (var i = li; i < H; i += WG_SIZE) {
        y[i] = x[i] * scale * w[i];
    }
}
