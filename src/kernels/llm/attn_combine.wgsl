// attn_combine — merges the per-slice partials of `attn_split` into the attention output.
// math:       for row t, head h over the n slices that hold positions (n = ceil(n_pos / SPLIT)):
//             M = max_s m_s; L = sum_s l_s exp(m_s - M); out[t, h] = sum_s acc_s exp(m_s - M) / L
// fuses:      the rescale, the sum and the normalisation of split attention (3 -> 1)
// workgroups: grid (n_rows); WG invocations, one vec4 of the row's Q_DIM outputs each
//             (looping when Q_DIM / 4 > WG); each reads its head's n partials.
// bindings:   0 out (n_rows, Q_DIM) f32 read_write | 1 part (n_rows, N_HEADS, N_SPLIT, 1 + D4)
//             vec4 read | 2 st (ST_LEN) u32 read: ST_POS = pos0
// injected:   WG, N_HEADS, HD, D4, Q_DIM, SPLIT, N_SPLIT, ST_*
@group(0) @binding(0) var<storage, read_write> out:  array<vec4<f32>>; // (rows, Q_DIM) f32
@group(0) @binding(1) var<storage, read>       part: array<vec4<f32>>; // partials
@group(0) @binding(2) var<storage, read>       st:   array<u32>;       // (ST_LEN) u32

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let t     = wid.x;
    let n_pos = st[ST_POS] + t + 1u;
    let n     = min((n_pos + SPLIT - 1u) / SPLIT, N_SPLIT);
    for (var i = li; i < Q_DIM / 4u; i += WG) {
        let h    = i / D4;
        let d4   = i % D4;
        let base = (t * N_HEADS + h) * N_SPLIT * (1u + D4);
        var mx   = part[base].x;
        for (var s = 1u; s < n; s++) {
            mx = max(mx, part[base + s * (1u + D4)].x);
        }
        var ll = 0.0;
        var r  = vec4<f32>(0.0);
        for (var s = 0u; s < n; s++) {
            let ml = part[base + s * (1u + D4)];
            let f  = exp(ml.x - mx);
            ll += ml.y * f;
            r += part[base + s * (1u + D4) + 1u + d4] * f;
        }
        out[t * (Q_DIM / 4u) + i] = r / ll;
    }
}
