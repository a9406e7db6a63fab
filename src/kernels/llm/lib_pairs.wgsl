// lib_pairs — fragment: the row pairs of a fused [q; k; v] projection, so that one row
// group computes the two rows RoPE rotates together.
//   pair_rows(p) -> (a, b, i): pair p < N_PAIRS of the Q_DIM + 2 KV_DIM rows. Over the q and
//   k heads (HD rows each): (base + i, base + i + HALF) for i < HALF, rotated by angle index
//   i; the dims past ROT (= 2 HALF, partial rotary) in adjacent pairs, i = NOROT; then the v
//   rows in adjacent pairs, i = NOROT. Needs HD, ROT, KV_DIM even (checked at init).
// needs:      const Q_DIM, KV_DIM, HD, HALF, ROT
const NOROT: u32 = 0xffffffffu;

fn pair_rows(p: u32) -> vec3<u32> {
    let qk_pairs = (Q_DIM + KV_DIM) / 2u;
    if (p < qk_pairs) {
        let head = p / (HD / 2u);
        let i    = p % (HD / 2u);
        let base = head * HD;
        if (i < HALF) {
            return vec3<u32>(base + i, base + i + HALF, i);
        }
        let j = i - HALF;
        return vec3<u32>(base + ROT + 2u * j, base + ROT + 2u * j + 1u, NOROT);
    }
    let j = p - qk_pairs;
    return vec3<u32>(Q_DIM + KV_DIM + 2u * j, Q_DIM + KV_DIM + 2u * j + 1u, NOROT);
}
