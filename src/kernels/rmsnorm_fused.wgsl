// rmsnorm_fused — RMSNorm of one row in a single dispatch.
// math:       y = x * w / sqrt(mean(x^2) + EPS)
// fuses:      the 6 elementwise dispatches SQUARE, MEAN, ADD_EPS, RSQRT, MUL_SCALAR, MUL.
// workgroups: one workgroup of 256 threads per row (batch 1 decode: one row); each thread
//             sums x^2 over a strided slice, a tree reduction gives the mean, then each
//             thread scales its slice.
// bindings:   0 y (H) f32 read_write | 1 x (H) f32 read | 2 w (H) f32 read
// injected:   H (hidden size), EPS (rms_norm_eps) (override)
override H:   u32;
override EPS: f32;

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read_write> y: array<f32>; // (H) f32
@group(0) @binding(1) var<storage, read>       x: array<f32>; // (H) f32
@group(0) @binding(2) var<storage, read>       w: array<f32>; // (H) f32, the norm's weight

var<workgroup> part: array<f32, WG>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) li: u32) {
    var s = 0.0;
    for (var i = li; i < H; i += WG) {
        let v = x[i];
        s += v * v;
    }
    part[li] = s;
    workgroupBarrier();
    for (var h = WG / 2u; h > 0u; h >>= 1u) {
        if (li < h) {
            part[li] += part[li + h];
        }
        workgroupBarrier();
    }
    let scale = inverseSqrt(part[0] / f32(H) + EPS);
    for (var i = li; i < H; i += WG) {
        y[i] = x[i] * scale * w[i];
    }
}
