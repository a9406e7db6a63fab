// rope_rows — the prefill chunk's RoPE and KV-cache store: q and k of every row rotated by
// the row's position, q into the attention input, k and v into this layer's cache.
// math:       for row t (position pos0 + t) and pair (a, b, i) of lib_pairs:
//             (a, b) <- (a c - b s, a s + b c), (c, s) = rope[table, pos0 + t, i];
//             q -> qo[t], k -> kc[pos0 + t], v -> vc[pos0 + t]
// fuses:      rope q, rope k, the k and v cache stores (4 -> 1); the bias was added by the
//             QKV matmul's epilogue
// workgroups: grid (n_rows); WG invocations over the row's N_PAIRS pairs
// bindings:   0 qo (n_rows, Q_DIM) f32 read_write | 1 kc (N_CTX, KV_DIM) f32 read_write
//             | 2 vc (N_CTX, KV_DIM) f32 read_write | 3 qkv (n_rows, QKV_S) f32 read, pair p at
//             columns 2p, 2p + 1 (the stored order of W_qkv, lib_pairs)
//             | 4 rope (tables, N_CTX, HALF) (cos, sin) read | 5 st (ST_LEN) read
// injected:   WG, Q_DIM, KV_DIM, HD, HALF, ROT, N_PAIRS, N_CTX, QKV_S (row stride), ST_*
@group(0) @binding(0) var<storage, read_write> qo:   array<f32>;       // (rows, Q_DIM) f32
@group(0) @binding(1) var<storage, read_write> kc:   array<f32>;       // (N_CTX, KV_DIM) f32
@group(0) @binding(2) var<storage, read_write> vc:   array<f32>;       // (N_CTX, KV_DIM) f32
@group(0) @binding(3) var<storage, read>       qkv:  array<f32>;       // (rows, QKV_S) f32
@group(0) @binding(4) var<storage, read>       rope: array<vec2<f32>>; // (tables, N_CTX, HALF)
@group(0) @binding(5) var<storage, read>       st:   array<u32>;       // (ST_LEN) u32

fn put(r: u32, v: f32, t: u32, pos: u32) {
    if (r < Q_DIM) {
        qo[t * Q_DIM + r] = v;
    } else if (r < Q_DIM + KV_DIM) {
        kc[pos * KV_DIM + r - Q_DIM] = v;
    } else {
        vc[pos * KV_DIM + r - Q_DIM - KV_DIM] = v;
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let t   = wid.x;
    let pos = st[ST_POS] + t;
    let tab = st[ST_ROPE_LONG];
    for (var p = li; p < N_PAIRS; p += WG) {
        let rows = pair_rows(p);
        var va   = qkv[t * QKV_S + 2u * p]; // the matmul's output is in pair order
        var vb   = qkv[t * QKV_S + 2u * p + 1u];
        if (rows.z != NOROT) {
            let cs = rope[(tab * N_CTX + pos) * HALF + rows.z];
            let ra = va * cs.x - vb * cs.y;
            let rb = va * cs.y + vb * cs.x;
            va = ra;
            vb = rb;
        }
        put(rows.x, va, t, pos);
        put(rows.y, vb, t, pos);
    }
}
