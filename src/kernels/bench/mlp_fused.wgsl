// mlp_fused — the whole MLP block in ONE dispatch (the "mega-kernel" of the MLP experiment).
// math:       y = x + W_down (silu(W_gate x) * (W_up x))
// fuses:      gate, up, sigmoid, mul, mul, down, residual add (7 dispatches unfused; 3 in
//             the matvec [gate; up] + SILU_MUL + matvec down+residual variant).
// workgroups: ceil(I / MLP_CHUNK) workgroups of WG_SIZE threads. Workgroup g owns the MLP_CHUNK
//             rows c = g*MLP_CHUNK.. of the intermediate vector: 8 lanes per row compute gate
//             and up dot products (x staged through workgroup memory; 8-lane tree sums,
//             reduce_wg), h[c] = silu(gate) * up stays
//             in workgroup memory; then each thread j-strided writes the partial down product
//             partial[g, j] = sum_c W_down[j, c] h[c]. The last workgroup to finish (an atomic
//             counter) sums the partials over g, adds the residual, writes y and re-arms the
//             counter to 0 for the next dispatch. WGSL has no grid barrier: this split-K with
//             a last-block reduction is how one dispatch can hold a dependent matvec chain.
// bindings:   0 y (H) f32 read_write | 1 partial (ceil(I/MLP_CHUNK), H) f32 read_write
//             | 2 counter (1) atomic<u32> read_write (0 between dispatches)
//             | 3 x (H) f32 read | 4 W_gate_up (2I, H) f32 read (gate rows, then up rows)
//             | 5 W_down (H, I) f32 read
// injected:   H (hidden), I (intermediate) (override); WG_SIZE, MLP_CHUNK (constants.wgsl)
//#include "constants.wgsl"
//#include "common/reduce_wg.inc.wgsl"
override H: u32;
override I: u32;

const LANES: u32 = WG_SIZE / MLP_CHUNK; // lanes per intermediate row (8)
const TILE:  u32 = 1024u;               // x elements staged per step

@group(0) @binding(0) var<storage, read_write> y:       array<f32>;         // (H) f32
@group(0) @binding(1) var<storage, read_write> partial: array<f32>;         // (NWG, H) f32
@group(0) @binding(2) var<storage, read_write> counter: atomic<u32>;        // (1) u32
@group(0) @binding(3) var<storage, read>       x:       array<f32>;         // (H) f32
@group(0) @binding(4) var<storage, read>       w_gu:    array<f32>;         // (2I, H) f32
@group(0) @binding(5) var<storage, read>       w_down:  array<f32>;         // (H, I) f32

var<workgroup> xs:      array<f32, TILE>;
var<workgroup> hs:      array<f32, MLP_CHUNK>;
var<workgroup> is_last: u32;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) li: u32) {
    let c0   = wid.x * MLP_CHUNK;
    let c    = c0 + li / LANES;
    let lane = li % LANES;

    // 1. gate and up rows of this chunk
    var g = 0.0;
    var u = 0.0;
    for (var k0 = 0u; k0 < H; k0 += TILE) {
        let kn = min(TILE, H - k0);
        for (var t = li; t < kn; t += WG_SIZE) {
            xs[t] = x[k0 + t];
        }
        workgroupBarrier();
        if (c < I) {
            let bg = c * H + k0;
            let bu = (I + c) * H + k0;
            for (var t = lane; t < kn; t += LANES) {
                g += w_gu[bg + t] * xs[t];
                u += w_gu[bu + t] * xs[t];
            }
        }
        workgroupBarrier();
    }
    let gv = wg_sum_seg(li, g, LANES);
    let uv = wg_sum_seg(li, u, LANES);
    if (lane == 0u) {
        hs[li / LANES] = select(0.0, gv / (1.0 + exp(-gv)) * uv, c < I);
    }
    workgroupBarrier();

    // 2. this chunk's share of the down projection
    let cn = min(MLP_CHUNK, I - c0);
    for (var j = li; j < H; j += WG_SIZE) {
        let base = j * I + c0;
        var s = 0.0;
        for (var t = 0u; t < cn; t++) {
            s += w_down[base + t] * hs[t];
        }
        partial[wid.x * H + j] = s;
    }

    // 3. the last workgroup to arrive reduces the partials
    storageBarrier();
    if (li == 0u) {
        let done = atomicAdd(&counter, 1u);
        is_last = select(0u, 1u, done == nwg.x - 1u);
    }
    let last = workgroupUniformLoad(&is_last);
    if (last == 1u) {
        for (var j = li; j < H; j += WG_SIZE) {
            var s = x[j];
            for (var gi = 0u; gi < nwg.x; gi++) {
                s += partial[gi * H + j];
            }
            y[j] = s;
        }
        if (li == 0u) {
            atomicStore(&counter, 0u);
        }
    }
}
