// matvec — y = W x (+ r): every projection of `wgfuse bench fusion` (gate, up, down, K, V, and
// the fused [gate; up] and [K; V] projections, which are this kernel over more rows) and of
// the LLM's unfused plan (q, k, v, o, gate, up, down, lm_head, in row chunks when split).
// math:       y[ROW0 + row] = sum_k W[row, k] * x[k] (+ r[ROW0 + row] when RESIDUAL = 1), row < N
// fuses:      with RESIDUAL = 1 the residual (or bias) add; over concatenated weights, 2
//             projections.
// workgroups: WG_SIZE threads = MATVEC_ROWS rows x MATVEC_LANES lanes; grid
//             ceil(N / MATVEC_ROWS). x is staged through workgroup memory in tiles of 1024;
//             lane l sums k = l, l + MATVEC_LANES, ... (adjacent lanes read adjacent weights),
//             then a MATVEC_LANES-wide tree reduction per row (reduce_wg).
// bindings:   0 y (ROW0 + N) f32 read_write | 1 x (K) f32 read | 2 W (N, K) f32 read row-major
//             | 3 r (ROW0 + N) f32 read (residual or bias; bind any buffer when RESIDUAL = 0)
// injected:   N (rows), K (columns), RESIDUAL (0/1), ROW0 (first output row, default 0: a
//             row chunk of a matrix split to fit the binding limit writes y[ROW0 + row])
//             (override); WG_SIZE, MATVEC_LANES, MATVEC_ROWS (constants.wgsl)
//#include "constants.wgsl"
//#include "common/reduce_wg.inc.wgsl"
override N:        u32;
override K:        u32;
override RESIDUAL: u32 = 0u;
override ROW0:     u32 = 0u;

const TILE: u32 = 1024u; // x elements staged per step (4 KiB)

@group(0) @binding(0) var<storage, read_write> y: array<f32>; // (ROW0 + N) f32
@group(0) @binding(1) var<storage, read>       x: array<f32>; // (K) f32
@group(0) @binding(2) var<storage, read>       w: array<f32>; // (N, K) f32
@group(0) @binding(3) var<storage, read>       r: array<f32>; // (ROW0 + N) f32

var<workgroup> xs: array<f32, TILE>;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let row  = wid.x * MATVEC_ROWS + li / MATVEC_LANES;
    let lane = li % MATVEC_LANES;
    var acc  = 0.0;
    for (var k0 = 0u; k0 < K; k0 += TILE) {
        let kn = min(TILE, K - k0);
        for (var t = li; t < kn; t += WG_SIZE) {
            xs[t] = x[k0 + t];
        }
        workgroupBarrier();
        if (row < N) {
            let base = row * K + k0;
            for (var t = lane; t < kn; t += MATVEC_LANES) {
                acc += w[base + t] * xs[t];
            }
        }
        workgroupBarrier();
    }
    let total = wg_sum_seg(li, acc, MATVEC_LANES);
    if (lane == 0u && row < N) {
        var v = total;
        if (RESIDUAL != 0u) {
            v += r[ROW0 + row];
        }
        y[ROW0 + row] = v;
    }
}
