// embed — the token's embedding row into the residual stream (the host chose the token:
// prefill rows and host-sampled decode; the on-GPU samplers embed the token they pick).
// math:       x[t] = tok_embd[seq[pos0 + t]] for each row t of the chunk
// fuses:      nothing (a gather)
// workgroups: grid (n_rows); WG invocations over the row's KC chunks
// bindings:   0 x (n_rows, DIMP) f32 read_write | 1 seq (N_CTX + 1) u32 read
//             | 2 st (ST_LEN) u32 read | 3..7 emb0..emb4 tok_embd row chunks read
// injected:   WG, WF16, KC, DIMP, EMB_ROWS, ST_*
@group(0) @binding(0) var<storage, read_write> x:    array<vec4<f32>>; // (rows, DIMP) f32
@group(0) @binding(1) var<storage, read>       seq:  array<u32>;       // (N_CTX + 1) token ids
@group(0) @binding(2) var<storage, read>       st:   array<u32>;       // (ST_LEN) u32
@group(0) @binding(3) var<storage, read>       emb0: array<vec4<u32>>; // (EMB_ROWS, KC)
@group(0) @binding(4) var<storage, read>       emb1: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read>       emb2: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read>       emb3: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read>       emb4: array<vec4<u32>>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let t = wid.x;
    embed_row(seq[st[ST_POS] + t], t * (DIMP / 4u), li);
}
