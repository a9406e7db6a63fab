// op_attn_values — the value matmul of attention, probabilities times the cached values, as an
// eager framework's batched matmul (one dispatch).
// math:       out[h, d] = sum_{p <= pos} pr[h, p] v[p, h / (N_HEADS / N_KV_HEADS), d]
// fuses:      nothing, by design
// workgroups: grid (N_HEADS): invocation li takes dims 4 (li % D4) .. + 4 of positions li / D4,
//             + PG, ... (PG = WG / D4 position groups), summed across groups at the end
// bindings:   0 out (Q_DIM) f32 read_write | 1 pr (N_HEADS, N_CTX) f32 read
//             | 2 vc (N_CTX, KV_DIM) f32 read | 3 st (ST_LEN) u32 read
// injected:   WG (gr_ops.c); N_HEADS, N_KV_HEADS, HD, D4, PG, KV_DIM, N_CTX, ST_* (gr_kernels.c)
@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>; // (Q_DIM) f32
@group(0) @binding(1) var<storage, read>       pr:  array<f32>;       // (N_HEADS, N_CTX) f32
@group(0) @binding(2) var<storage, read>       vc:  array<vec4<f32>>; // (N_CTX, KV_DIM) f32
@group(0) @binding(3) var<storage, read>       st:  array<u32>;       // (ST_LEN) u32

var<workgroup> acc4: array<vec4<f32>, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let h     = wid.x;
    let n_pos = st[ST_POS] + 1u;
    let kvo   = (h / (N_HEADS / N_KV_HEADS)) * D4;
    let d4    = li % D4;
    var a     = vec4<f32>(0.0);
    if (li / D4 < PG) {
        for (var p = li / D4; p < n_pos; p += PG) {
            a += pr[h * N_CTX + p] * vc[p * (KV_DIM / 4u) + kvo + d4];
        }
    }
    acc4[li] = a;
    workgroupBarrier();
    if (li < D4) {
        var r = vec4<f32>(0.0);
        for (var j = 0u; j < PG; j++) {
            r += acc4[j * D4 + li];
        }
        out[h * D4 + li] = r;
    }
}
