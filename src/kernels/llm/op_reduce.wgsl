// op_reduce — one reduction over the rows of a tensor (RMSNorm's mean, softmax's max and sum)
// in its own dispatch (the ops and fused plans, src/llm/gpu/plan_ops.c).
// math:       y[Y0 + r] = mean | max | sum of a[A0 + r AS + i], i < len (OP: OPR_*, constants.def)
//             len = LEN, or with LEN = 0 the attended positions st[ST_POS] + 1 (score rows)
// fuses:      nothing, by design
// workgroups: grid (ROWS): one workgroup of WG invocations per row, a strided loop then the
//             workgroup reduction (lib_reduce_*)
// bindings:   0 y f32 read_write | 1 a f32 read | 2 st (ST_LEN) u32 read
// injected:   WG, TPR (= WG), SGS, OP, LEN, AS, A0, Y0 (gr_ops.c); ST_* (gr_kernels.c);
//             OPR_* (constants.wgsl)
//#include "constants.wgsl"
@group(0) @binding(0) var<storage, read_write> y:  array<f32>; // (Y0 + ROWS) f32
@group(0) @binding(1) var<storage, read>       a:  array<f32>; // (A0 + ROWS AS) f32
@group(0) @binding(2) var<storage, read>       st: array<u32>; // (ST_LEN) u32

const NEG: f32 = -3.0e38;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let len = select(LEN, st[ST_POS] + 1u, LEN == 0u);
    let o   = A0 + wid.x * AS;
    var acc = select(0.0, NEG, OP == OPR_MAX);
    for (var i = li; i < len; i += WG) {
        let v = a[o + i];
        acc = select(acc + v, max(acc, v), OP == OPR_MAX);
    }
    var r: f32;
    if (OP == OPR_MAX) {
        r = wgmax(acc, li);
    } else {
        r = wgsum(acc, li);
    }
    if (li == 0u) {
        y[Y0 + wid.x] = select(r, r / f32(len), OP == OPR_MEAN);
    }
}
