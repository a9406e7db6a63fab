// lib_qkv_rows — fragment: attn_qkv's work for one part of W_qkv (the rows of one format).
//   qkv_rows(wg, li): workgroup wg of this part: its PPG pairs per row group through rows_run
//   (lib_rows or lib_rows_q), then by lane 0 of each group the bias, RoPE and the stores into
//   q and this layer's KV cache at the step's position (attn_qkv's put).
//   In a dispatch over several parts this text is instanced per part (its names suffixed), so
//   every constant here is that part's.
// needs:      const GPW, TPR, PPG, N_PAIRS, PAIR0, HAS_BIAS, ACT_Q8, N_CTX, HALF, ST_POS,
//             ST_ROPE_LONG; lib_pairs; fn rows_run; the kernel's b, rope, st, put, inv
fn qkv_rows(wg: u32, li: u32) {
    let p0   = (wg * GPW + li / TPR) * PPG; // first local pair of this group (RPG = 2 PPG rows)
    let lane = li % TPR;
    let s = rows_run(2u * p0, 2u * N_PAIRS, lane, li);
    let isc = select(inv, 1.0, ACT_Q8);
    if (lane == 0u) {
        let pos = st[ST_POS];
        for (var j = 0u; j < PPG; j++) {
            let p = p0 + j;
            if (p < N_PAIRS) {
                let gp   = PAIR0 + p;
                let rows = pair_rows(gp);
                var va   = s[2u * j] * isc;
                var vb   = s[2u * j + 1u] * isc;
                if (HAS_BIAS) {
                    va += b[2u * gp];
                    vb += b[2u * gp + 1u];
                }
                if (rows.z != NOROT) {
                    let cs = rope[(st[ST_ROPE_LONG] * N_CTX + pos) * HALF + rows.z];
                    let ra = va * cs.x - vb * cs.y;
                    let rb = va * cs.y + vb * cs.x;
                    va = ra;
                    vb = rb;
                }
                put(rows.x, va, pos);
                put(rows.y, vb, pos);
            }
        }
    }
}
