// op_binary — one elementwise op of two tensors (bias add, residual add, multiply, softmax's
// sub-exp and div) in its own dispatch (the ops and fused plans, src/llm/gpu/plan_ops.c).
// math:       y[Y0 + r YS + i] = f(a[A0 + r AS + i AE], b[.]) for i < len, r < ROWS, where b[.] is
//             b[B0 + r BS + i BE] (BMODE 0), b[B0 + r] (1: one value per row, broadcast) or
//             b[B0] (2: a scalar); f by OP (constants.def): OPB_ADD a + b | OPB_MUL a b
//             | OPB_SUB_EXP exp(a - b) | OPB_DIV a / b
//             len = LEN, or with LEN = 0 the attended positions st[ST_POS] + 1 (score rows)
// fuses:      nothing, by design
// workgroups: NWG workgroups of WG invocations stride over the ROWS * len elements
// bindings:   0 y f32 read_write | 1 a f32 read | 2 b f32 read | 3 st (ST_LEN) u32 read
// injected:   WG, OP, BMODE, ROWS, LEN, AS, AE, BS, BE, YS, A0, B0, Y0, NWG (gr_ops.c);
//             ST_* (gr_kernels.c); OPB_* (constants.wgsl)
//#include "constants.wgsl"
@group(0) @binding(0) var<storage, read_write> y:  array<f32>; // (Y0 + ROWS YS) f32
@group(0) @binding(1) var<storage, read>       a:  array<f32>; // (A0 + ROWS AS) f32
@group(0) @binding(2) var<storage, read>       b:  array<f32>; // as a, one per row, or one
@group(0) @binding(3) var<storage, read>       st: array<u32>; // (ST_LEN) u32

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let len = select(LEN, st[ST_POS] + 1u, LEN == 0u);
    for (var k = wid.x * WG + li; k < ROWS * len; k += NWG * WG) {
        let r = k / len;
        let i = k % len;
        let u = a[A0 + r * AS + i * AE];
        var bi = B0;
        if (BMODE == 0u) {
            bi = B0 + r * BS + i * BE;
        } else if (BMODE == 1u) {
            bi = B0 + r;
        }
        let v = b[bi];
        var o = u;
        switch OP {
            case OPB_ADD: { o = u + v; }
            case OPB_MUL: { o = u * v; }
            case OPB_SUB_EXP: { o = exp(u - v); }
            case OPB_DIV: { o = u / v; }
            default: { }
        }
        y[Y0 + r * YS + i] = o;
    }
}
