// matvec — y = W x (+ r): every projection of the fusion benchmarks (gate, up, down, K, V,
// and the fused [gate; up] and [K; V] projections, which are this kernel over more rows).
// math:       y[row] = sum_k W[row, k] * x[k] (+ r[row] when RESIDUAL = 1), row < N
// fuses:      with RESIDUAL = 1 the residual add; over concatenated weights, 2 projections.
// workgroups: 256 threads = 8 rows x 32 lanes; grid ceil(N / 8). x is staged through
//             workgroup memory in tiles of 1024; lane l sums k = l, l + 32, ... (adjacent
//             lanes read adjacent weights), then a 32-wide tree reduction per row.
// bindings:   0 y (ROW0 + N) f32 read_write | 1 x (K) f32 read | 2 W (N, K) f32 read row-major
//             | 3 r (ROW0 + N) f32 read (residual or bias; bind any buffer when RESIDUAL = 0)
// injected:   N (rows), K (columns), RESIDUAL (0/1), ROW0 (first output row, default 0: a
//             row chunk of a matrix split to fit the binding limit writes y[ROW0 + row])
//             (override)
override N:        u32;
override K:        u32;
override RESIDUAL: u32 = 0u;
override ROW0:     u32 = 0u;

const WG:    u32 = 256u;
const LANES: u32 = 32u;
const ROWS:  u32 = 8u;    // WG / LANES
const TILE:  u32 = 1024u; // x elements staged per step (4 KiB)

@group(0) @binding(0) var<storage, read_write> y: array<f32>; // (ROW0 + N) f32
@group(0) @binding(1) var<storage, read>       x: array<f32>; // (K) f32
@group(0) @binding(2) var<storage, read>       w: array<f32>; // (N, K) f32
@group(0) @binding(3) var<storage, read>       r: array<f32>; // (ROW0 + N) f32

var<workgroup> xs:   array<f32, TILE>;
var<workgroup> part: array<f32, WG>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let row  = wid.x * ROWS + li / LANES;
    let lane = li % LANES;
    var acc  = 0.0;
    for (var k0 = 0u; k0 < K; k0 += TILE) {
        let kn = min(TILE, K - k0);
        for (var t = li; t < kn; t += WG) {
            xs[t] = x[k0 + t];
        }
        workgroupBarrier();
        if (row < N) {
            let base = row * K + k0;
            for (var t = lane; t < kn; t += LANES) {
                acc += w[base + t] * xs[t];
            }
        }
        workgroupBarrier();
    }
    part[li] = acc;
    workgroupBarrier();
    for (var h = LANES / 2u; h > 0u; h >>= 1u) {
        if (lane < h) {
            part[li] += part[li + h];
        }
        workgroupBarrier();
    }
    if (lane == 0u && row < N) {
        var v = part[li];
        if (RESIDUAL != 0u) {
            v += r[ROW0 + row];
        }
        y[ROW0 + row] = v;
    }
}
