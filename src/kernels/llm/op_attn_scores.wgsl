// op_attn_scores — the score matmul of attention, q k^T over the KV cache, as an eager
// framework's batched matmul (one dispatch; scale, mask and softmax follow as their own ops).
// math:       s[h, p] = sum_d q[h, d] k[p, h / (N_HEADS / N_KV_HEADS), d] for p <= pos; q is in
//             the stored pair order of W_qkv (plan_ops.c's rotated q): element d of head h is
//             read at pair_slot(h HD + d)
// fuses:      nothing, by design
// workgroups: grid (N_HEADS, NWG): workgroup (h, w) stages q_h in workgroup memory, then
//             invocation li takes positions w WG + li, + NWG WG, ... (a HD-long dot of vec4 loads)
// bindings:   0 s (N_HEADS, N_CTX) f32 read_write | 1 q (Q_DIM) f32 read, pair order
//             | 2 kc (N_CTX, KV_DIM) f32 read | 3 st (ST_LEN) u32 read
// injected:   WG, NWG (gr_ops.c); N_HEADS, N_KV_HEADS, HD, D4, HALF, ROT, KV_DIM, N_CTX, ST_*
//             (gr_kernels.c)
@group(0) @binding(0) var<storage, read_write> s:  array<f32>;       // (N_HEADS, N_CTX) f32
@group(0) @binding(1) var<storage, read>       q:  array<f32>;       // (Q_DIM) f32 pair order
@group(0) @binding(2) var<storage, read>       kc: array<vec4<f32>>; // (N_CTX, KV_DIM) f32
@group(0) @binding(3) var<storage, read>       st: array<u32>;       // (ST_LEN) u32

var<workgroup> qs: array<vec4<f32>, D4>;

// where natural row r of [q; k] (head r / HD, element r % HD) sits in the pair order
// (the inverse of lib_pairs' pair_rows over the q and k heads)
fn pair_slot(r: u32) -> u32 {
    let i    = r % HD;
    let base = (r / HD) * (HD / 2u);
    if (i < HALF) {
        return 2u * (base + i);
    }
    if (i < 2u * HALF) {
        return 2u * (base + i - HALF) + 1u;
    }
    let j = i - ROT;
    return 2u * (base + HALF + j / 2u) + j % 2u;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let h = wid.x;
    if (li < D4) {
        let r = h * HD + 4u * li;
        qs[li] = vec4<f32>(q[pair_slot(r)], q[pair_slot(r + 1u)], q[pair_slot(r + 2u)], q[pair_slot(r + 3u)]);
    }
    workgroupBarrier();
    let n_pos = st[ST_POS] + 1u;
    let kvo   = (h / (N_HEADS / N_KV_HEADS)) * D4;
    for (var p = wid.y * WG + li; p < n_pos; p += NWG * WG) {
        var d = 0.0;
        for (var j = 0u; j < D4; j++) {
            d += dot(qs[j], kc[p * (KV_DIM / 4u) + kvo + j]);
        }
        s[h * N_CTX + p] = d;
    }
}
