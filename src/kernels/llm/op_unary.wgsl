// op_unary — one elementwise op of an eager framework's graph in its own dispatch (the ops and
// fused plans, src/llm/gpu/plan_ops.c).
// math:       y[Y0 + r YS + i] = f(a[A0 + r AS + i]) for i < len, r < ROWS; f by OP
//             (constants.def): OPU_SQUARE a a | OPU_ADD_C a + C | OPU_RSQRT 1 / sqrt(a)
//             | OPU_SILU a / (1 + exp(-a)) | OPU_MUL_C a C | OPU_MASK a + (i <= pos and, with a sliding
//             window WIN > 0, pos - i < WIN ? 0 : NEG)
//             len = LEN, or with LEN = 0 the attended positions st[ST_POS] + 1 (score rows)
// fuses:      nothing, by design
// workgroups: NWG workgroups of WG invocations stride over the ROWS * len elements
// bindings:   0 y f32 read_write | 1 a f32 read | 2 st (ST_LEN) u32 read
// injected:   WG, OP, ROWS, LEN, AS, YS, A0, Y0, C, WIN, NWG (gr_ops.c); ST_* (gr_kernels.c);
//             OPU_* (constants.wgsl)
//#include "constants.wgsl"
@group(0) @binding(0) var<storage, read_write> y:  array<f32>; // (Y0 + ROWS YS) f32
@group(0) @binding(1) var<storage, read>       a:  array<f32>; // (A0 + ROWS AS) f32
@group(0) @binding(2) var<storage, read>       st: array<u32>; // (ST_LEN) u32

const NEG: f32 = -3.0e38; // "minus infinity": WGSL does not promise infinities

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let pos = st[ST_POS];
    let len = select(LEN, pos + 1u, LEN == 0u);
    for (var k = wid.x * WG + li; k < ROWS * len; k += NWG * WG) {
        let r = k / len;
        let i = k % len;
        let v = a[A0 + r * AS + i];
        var o = v;
        switch OP {
            case OPU_SQUARE: { o = v * v; }
            case OPU_ADD_C: { o = v + C; }
            case OPU_RSQRT: { o = inverseSqrt(v); }
            case OPU_SILU: { o = v / (1.0 + exp(-v)); }
            case OPU_MUL_C: { o = v * C; }
            case OPU_MASK: { o = v + select(NEG, 0.0, i <= pos && (WIN == 0u || pos - i < WIN)); }
            default: { }
        }
        y[Y0 + r * YS + i] = o;
    }
}
