// matmul — Y = X W^T for a prefill chunk of tokens (every projection of prefill), with the
// bias or the residual add in the epilogue.
// math:       y[t, ROW0 + n] (+)= sum_k W[n, k] x[t, k] (+ b[ROW0 + n]) for t < st[ST_NTOK], n < N
// fuses:      matmul + bias (QKV), matmul + residual add (o_proj, down): 2 -> 1
// split K:    with KSPLIT > 1, workgroup z of the grid's third dimension sums only its share of
//             K (whole BK steps) and writes that partial tile to y = the partials buffer,
//             (KSPLIT, T_MAX, N) f32; matmul_reduce then adds the partials and the bias or the
//             residual. A matrix with few rows (o_proj, down) then still gets several hundred
//             workgroups from a chunk of tokens (gr_mm_shape).
// workgroups: grid (ceil(N / BN), ceil(n_rows / BM), KSPLIT) from the host; 256
//             invocations as TX = BN / 4 along the weight rows by TY = 256 / TX along the
//             tokens, each owning TM tokens x 4 rows of a BM x BN tile (BM = TY * TM). K goes in
//             steps of BK = 16: the x tile and the weight tile (unpacked from f16 or f32
//             chunks) are staged transposed in workgroup memory; the next step's tiles are
//             loaded into registers while the current one is multiplied. Small tiles for the
//             small matrices (more workgroups), large ones where there are rows enough.
// bindings:   0 y (n_rows, YS) f32 read_write | 1 x (n_rows, XS4 * 4) f32 read
//             | 2 w (N, KCS) chunks read | 3 b (ROW0 + N) f32 read | 4 st (ST_LEN) u32 read
//             Quantized rows (QT != QT_F): the weight tile is decoded from global memory
//             (lib_qblock) when it is staged, the first BN invocations one row each.
// fragments:  lib_wchunk, lib_qblock, lib_mm_store
// injected:   WF16, EPC (elements per chunk), KC, KCS (row stride), XS4, YS, N, ROW0, ACCUM,
//             HAS_BIAS, BN, TM, KSPLIT, T_MAX, ST_*, QT, NU, QA, QB
@group(0) @binding(0) var<storage, read_write> y:  array<f32>;       // (rows, YS) f32
@group(0) @binding(1) var<storage, read>       x:  array<vec4<f32>>; // (rows, XS4) vec4
@group(0) @binding(2) var<storage, read>       w:  array<vec4<u32>>; // (N, KCS) chunks
@group(0) @binding(3) var<storage, read>       b:  array<f32>;       // (ROW0 + N) f32
@group(0) @binding(4) var<storage, read>       st: array<u32>;       // (ST_LEN) u32

const BK:  u32 = 16u;              // k per step
const TX:  u32 = BN / 4u;          // invocations along the rows (4 rows each)
const TY:  u32 = 256u / TX;        // invocations along the tokens (TM tokens each)
const BM:  u32 = TY * TM;          // tokens per tile
const CPR: u32 = BK / EPC;         // weight chunks per tile row per step
const XL:  u32 = BM * BK / 4u;     // x tile in vec4
const WL:  u32 = BN * CPR;         // weight tile in chunks
const XPT: u32 = (XL + 255u) / 256u;
const WPT: u32 = (WL + 255u) / 256u;

const KE:  u32 = select(KC * EPC, NU * 32u, QT != QT_F); // k of a row, padded

fn wq4(i: u32) -> vec4<u32> {
    return w[i];
}

var<workgroup> xs: array<array<f32, BM>, BK>;       // [k][token]
var<workgroup> ws: array<array<vec4<f32>, TX>, BK>; // [k][row / 4]

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let n_tok = st[ST_NTOK];
    let n0 = wid.x * BN;
    let t0 = wid.y * BM;
    // this workgroup's share of K, in whole steps (all of it without a split)
    let per = (KE / BK + KSPLIT - 1u) / KSPLIT;
    let kz0 = min(wid.z * per, KE / BK) * BK;
    let kz1 = min((wid.z + 1u) * per, KE / BK) * BK;
    let tx = li % TX;
    let ty = li / TX;
    var acc: array<vec4<f32>, TM>; // [token i] (row j)
    for (var i = 0u; i < TM; i++) {
        acc[i] = vec4<f32>(0.0);
    }
    var xr: array<vec4<f32>, XPT>;
    var wr: array<vec4<u32>, WPT>;
    // the first step's tiles into registers
    for (var i = 0u; i < XPT; i++) {
        let idx = li + i * 256u;
        let t   = t0 + idx / 4u;
        xr[i] = vec4<f32>(0.0);
        if (idx < XL && t < n_tok && kz0 < kz1) {
            xr[i] = x[t * XS4 + kz0 / 4u + idx % 4u];
        }
    }
    for (var i = 0u; i < WPT; i++) {
        let idx = li + i * 256u;
        let n   = n0 + idx / CPR;
        wr[i] = vec4<u32>(0u);
        if (QT == QT_F && idx < WL && n < N && kz0 < kz1) {
            wr[i] = w[n * KCS + kz0 / EPC + idx % CPR];
        }
    }
    for (var k0 = kz0; k0 < kz1; k0 += BK) {
        // registers -> workgroup memory (transposed)
        for (var i = 0u; i < XPT; i++) {
            let idx = li + i * 256u;
            if (idx < XL) {
                let tt = idx / 4u;
                let kb = (idx % 4u) * 4u;
                xs[kb + 0u][tt] = xr[i].x;
                xs[kb + 1u][tt] = xr[i].y;
                xs[kb + 2u][tt] = xr[i].z;
                xs[kb + 3u][tt] = xr[i].w;
            }
        }
        if (QT != QT_F && li < BN) { // row li of the tile: its 16 elements k0 .. k0 + 16
            var v: array<vec4<f32>, 8>;
            if (n0 + li < N) {
                v = qunit(4u * (n0 + li) * KCS, k0 / 32u);
            }
            let o = 4u * ((k0 / 16u) % 2u);
            for (var e = 0u; e < 4u; e++) {
                ws[4u * e + 0u][li / 4u][li % 4u] = v[o + e].x;
                ws[4u * e + 1u][li / 4u][li % 4u] = v[o + e].y;
                ws[4u * e + 2u][li / 4u][li % 4u] = v[o + e].z;
                ws[4u * e + 3u][li / 4u][li % 4u] = v[o + e].w;
            }
        }
        for (var i = 0u; i < WPT; i++) {
            let idx = li + i * 256u;
            if (QT == QT_F && idx < WL) {
                let r  = idx / CPR;
                let kb = (idx % CPR) * EPC;
                let lo = wunpack_lo(wr[i]);
                ws[kb + 0u][r / 4u][r % 4u] = lo.x;
                ws[kb + 1u][r / 4u][r % 4u] = lo.y;
                ws[kb + 2u][r / 4u][r % 4u] = lo.z;
                ws[kb + 3u][r / 4u][r % 4u] = lo.w;
                if (WF16) {
                    let hi = wunpack_hi(wr[i]);
                    ws[kb + 4u][r / 4u][r % 4u] = hi.x;
                    ws[kb + 5u][r / 4u][r % 4u] = hi.y;
                    ws[kb + 6u][r / 4u][r % 4u] = hi.z;
                    ws[kb + 7u][r / 4u][r % 4u] = hi.w;
                }
            }
        }
        workgroupBarrier();
        // the next step's tiles load while this one is multiplied
        let k1 = k0 + BK;
        if (k1 < kz1) {
            for (var i = 0u; i < XPT; i++) {
                let idx = li + i * 256u;
                let t   = t0 + idx / 4u;
                if (idx < XL && t < n_tok) {
                    xr[i] = x[t * XS4 + k1 / 4u + idx % 4u];
                }
            }
            for (var i = 0u; i < WPT; i++) {
                let idx = li + i * 256u;
                let n   = n0 + idx / CPR;
                if (QT == QT_F && idx < WL && n < N) {
                    wr[i] = w[n * KCS + k1 / EPC + idx % CPR];
                }
            }
        }
        for (var kk = 0u; kk < BK; kk++) {
            let bw = ws[kk][tx];
            for (var i = 0u; i < TM; i++) {
                acc[i] += xs[kk][ty * TM + i] * bw;
            }
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < TM; i++) {
        let t = t0 + ty * TM + i;
        if (t < n_tok) {
            for (var j = 0u; j < 4u; j++) {
                let n = n0 + tx * 4u + j;
                if (n < N && KSPLIT > 1u) {
                    y[(wid.z * T_MAX + t) * N + n] = acc[i][j];
                } else if (n < N) {
                    mm_store(t, n, acc[i][j]);
                }
            }
        }
    }
}
