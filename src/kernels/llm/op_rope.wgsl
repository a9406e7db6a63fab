// op_rope — one piece of RoPE as an eager framework runs it, q_embed = q cos + rotate_half(q) sin
// with rotate_half(x) = cat(-x2, x1), in its own dispatch (the ops and fused plans). The
// vectors are in the stored pair order of W_qkv (lib_pairs: pair p = the two elements RoPE
// rotates together, x1 then x2), so each piece is elementwise on pairs.
// math:       pair p < N_PAIRS (global pair PAIR0 + p), angle index i, (c, s) = rope[table, pos, i]:
//             ROPE_MUL_COS y[2p..] = x[2p..] c | ROPE_NEG y[p] = -x[2p + 1]
//             | ROPE_CAT y[2p] = n[p], y[2p + 1] = x[2p] | ROPE_MUL_SIN y[2p..] = x[2p..] s
//             an unrotated pair (dims past rope_dim, or v) has c = 1, s = 0, rotate_half = 0
// fuses:      nothing, by design (the final q cos + rotate_half(q) sin is op_binary's add)
// workgroups: NWG workgroups of WG invocations stride over the pairs
// bindings:   0 y f32 read_write | 1 x f32 read (pair order) | 2 n f32 read (ROPE_CAT: the
//             ROPE_NEG output; else any) | 3 rope (tables, N_CTX, HALF) (cos, sin) read
//             | 4 st (ST_LEN) u32 read
// fragments:  lib_pairs
// injected:   WG, OP, N_PAIRS, PAIR0, NWG (gr_ops.c); Q_DIM, KV_DIM, HD, HALF, ROT, N_CTX, ST_*
//             (gr_kernels.c); ROPE_* (constants.wgsl)
//#include "constants.wgsl"
@group(0) @binding(0) var<storage, read_write> y:    array<f32>;       // (2 N_PAIRS) f32
@group(0) @binding(1) var<storage, read>       x:    array<f32>;       // (2 N_PAIRS) f32
@group(0) @binding(2) var<storage, read>       n:    array<f32>;       // (N_PAIRS) f32
@group(0) @binding(3) var<storage, read>       rope: array<vec2<f32>>; // (tables, N_CTX, HALF)
@group(0) @binding(4) var<storage, read>       st:   array<u32>;       // (ST_LEN) u32

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let pos = st[ST_POS];
    let tab = st[ST_ROPE_LONG];
    for (var p = wid.x * WG + li; p < N_PAIRS; p += NWG * WG) {
        let i   = pair_rows(PAIR0 + p).z;
        let rot = i != NOROT;
        var cs  = vec2<f32>(1.0, 0.0);
        if (rot) {
            cs = rope[(tab * N_CTX + pos) * HALF + i];
        }
        switch OP {
            case ROPE_MUL_COS: {
                y[2u * p]      = x[2u * p] * cs.x;
                y[2u * p + 1u] = x[2u * p + 1u] * cs.x;
            }
            case ROPE_NEG: {
                y[p] = select(0.0, -x[2u * p + 1u], rot);
            }
            case ROPE_CAT: {
                y[2u * p]      = select(0.0, n[p], rot);
                y[2u * p + 1u] = select(0.0, x[2u * p], rot);
            }
            case ROPE_MUL_SIN: {
                y[2u * p]      = x[2u * p] * cs.y;
                y[2u * p + 1u] = x[2u * p + 1u] * cs.y;
            }
            default: { }
        }
    }
}
