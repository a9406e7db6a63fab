// op_kv_store — the KV-cache update of an eager framework (index_copy / cat of the new key or
// value into the cache) in its own dispatch (the ops and fused plans).
// math:       cache[pos, :] = t, t in the stored pair order of W_qkv (lib_pairs): for pair j of
//             this tensor (global pair PAIR0 + j, rows (ra, rb)), cache[pos, ra - BASE] = t[2j],
//             cache[pos, rb - BASE] = t[2j + 1]; BASE = Q_DIM (k) or Q_DIM + KV_DIM (v)
// fuses:      nothing, by design
// workgroups: NWG workgroups of WG invocations stride over the KV_DIM / 2 pairs
// bindings:   0 cache (N_CTX, KV_DIM) f32 read_write | 1 t f32 read | 2 st (ST_LEN) u32 read
// fragments:  lib_pairs
// injected:   WG, PAIR0, BASE, A0, NWG (gr_ops.c); Q_DIM, KV_DIM, HD, HALF, ROT, ST_* (gr_kernels.c)
@group(0) @binding(0) var<storage, read_write> cache: array<f32>; // (N_CTX, KV_DIM) f32
@group(0) @binding(1) var<storage, read>       t:     array<f32>; // (A0 + KV_DIM) f32
@group(0) @binding(2) var<storage, read>       st:    array<u32>; // (ST_LEN) u32

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let o = st[ST_POS] * KV_DIM;
    for (var j = wid.x * WG + li; j < KV_DIM / 2u; j += NWG * WG) {
        let rows = pair_rows(PAIR0 + j);
        cache[o + rows.x - BASE] = t[A0 + 2u * j];
        cache[o + rows.y - BASE] = t[A0 + 2u * j + 1u];
    }
}
