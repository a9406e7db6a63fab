// matmul — Y = X W^T for a prefill chunk of tokens (every projection of prefill), with the
// bias or the residual add in the epilogue.
// math:       y[t, ROW0 + n] (+)= sum_k W[n, k] x[t, k] (+ b[ROW0 + n]) for t < st[ST_NTOK], n < N
// fuses:      matmul + bias (QKV), matmul + residual add (o_proj, down): 2 -> 1
// workgroups: grid (ceil(N / 64), ceil(n_rows / 64)) from the indirect arguments; 256
//             invocations as 16 x 16, each owning a 4 x 4 block of a 64-token x 64-row tile;
//             K in steps of 16: the weight tile (64 rows x 16, unpacked from f16 or f32 chunks)
//             and the x tile are staged transposed in workgroup memory, then 16 rank-1 updates.
// bindings:   0 y (n_rows, YS) f32 read_write | 1 x (n_rows, XS4 * 4) f32 read
//             | 2 w (N, KCS) chunks read | 3 b (ROW0 + N) f32 read | 4 st (ST_LEN) u32 read
// injected:   WF16, EPC (elements per chunk), KC, KCS (row stride), XS4, YS, N, ROW0, ACCUM, HAS_BIAS, ST_*
@group(0) @binding(0) var<storage, read_write> y:  array<f32>;       // (rows, YS) f32
@group(0) @binding(1) var<storage, read>       x:  array<vec4<f32>>; // (rows, XS4) vec4
@group(0) @binding(2) var<storage, read>       w:  array<vec4<u32>>; // (N, KCS) chunks
@group(0) @binding(3) var<storage, read>       b:  array<f32>;       // (ROW0 + N) f32
@group(0) @binding(4) var<storage, read>       st: array<u32>;       // (ST_LEN) u32

const BM: u32 = 64u; // tokens per tile
const BN: u32 = 64u; // weight rows per tile
const BK: u32 = 16u; // k per step
const CPR: u32 = BK / EPC; // chunks per tile row per step

var<workgroup> xs: array<array<vec4<f32>, 16>, BK>; // [k][token / 4]
var<workgroup> ws: array<array<vec4<f32>, 16>, BK>; // [k][row / 4]

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let n_tok = st[ST_NTOK];
    let n0 = wid.x * BN;
    let t0 = wid.y * BM;
    let tx = li % 16u; // rows tx*4 .. +4
    let ty = li / 16u; // tokens ty*4 .. +4
    var acc: array<vec4<f32>, 4>; // [token i] (row j)
    for (var i = 0u; i < 4u; i++) {
        acc[i] = vec4<f32>(0.0);
    }
    for (var k0 = 0u; k0 < KC * EPC; k0 += BK) {
        // x tile: 64 tokens x 16 k = 256 vec4, one per invocation
        {
            let tt = li / 4u;
            let k4 = li % 4u;
            let t  = t0 + tt;
            var v  = vec4<f32>(0.0);
            if (t < n_tok) {
                v = x[t * XS4 + k0 / 4u + k4];
            }
            xs[k4 * 4u + 0u][tt / 4u][tt % 4u] = v.x;
            xs[k4 * 4u + 1u][tt / 4u][tt % 4u] = v.y;
            xs[k4 * 4u + 2u][tt / 4u][tt % 4u] = v.z;
            xs[k4 * 4u + 3u][tt / 4u][tt % 4u] = v.w;
        }
        // weight tile: 64 rows x CPR chunks
        if (li < BN * CPR) {
            let r = li / CPR;
            let c = li % CPR;
            let n = n0 + r;
            var wc = vec4<u32>(0u);
            if (n < N) {
                wc = w[n * KCS + k0 / EPC + c];
            }
            let lo = wunpack_lo(wc);
            let kb = c * EPC;
            ws[kb + 0u][r / 4u][r % 4u] = lo.x;
            ws[kb + 1u][r / 4u][r % 4u] = lo.y;
            ws[kb + 2u][r / 4u][r % 4u] = lo.z;
            ws[kb + 3u][r / 4u][r % 4u] = lo.w;
            if (WF16) {
                let hi = wunpack_hi(wc);
                ws[kb + 4u][r / 4u][r % 4u] = hi.x;
                ws[kb + 5u][r / 4u][r % 4u] = hi.y;
                ws[kb + 6u][r / 4u][r % 4u] = hi.z;
                ws[kb + 7u][r / 4u][r % 4u] = hi.w;
            }
        }
        workgroupBarrier();
        for (var kk = 0u; kk < BK; kk++) {
            let a  = xs[kk][ty];
            let bw = ws[kk][tx];
            acc[0] += a.x * bw;
            acc[1] += a.y * bw;
            acc[2] += a.z * bw;
            acc[3] += a.w * bw;
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < 4u; i++) {
        let t = t0 + ty * 4u + i;
        if (t < n_tok) {
            for (var j = 0u; j < 4u; j++) {
                let n = n0 + tx * 4u + j;
                if (n < N) {
                    var v = acc[i][j];
                    if (HAS_BIAS) {
                        v += b[ROW0 + n];
                    }
                    let o = t * YS + ROW0 + n;
                    if (ACCUM) {
                        y[o] += v;
                    } else {
                        y[o] = v;
                    }
                }
            }
        }
    }
}
