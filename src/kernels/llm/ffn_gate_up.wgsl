// ffn_gate_up — the FFN input of one decode token: RMSNorm, the gate and up projections and
// SiLU(gate) * up.
// math:       h = x * g / sqrt(mean(x^2) + EPS); out[i] = silu(W_gate[i] . h) * (W_up[i] . h)
//             for i < HIDDEN, silu(a) = a / (1 + exp(-a))
// fuses:      rmsnorm, gate matvec, up matvec, silu, mul (unfused plan: 4 dispatches)
// layout:     the gate and up rows are stored interleaved: row 2i is gate i, row 2i + 1 is
//             up i, so a split at an even row keeps each pair whole; this dispatch covers
//             outputs O0 .. O0 + N_OUT.
// workgroups: WG invocations = GPW row groups of TPR; a group owns PPG outputs (2 PPG rows),
//             output (w * GPW + g) * PPG + j; weight loads first, then the x^2 sum, then dots.
// bindings:   0 out (HIDDEN, padded) f32 read_write | 1 x (DIMP) f32 read | 2 g (DIMP) f32 read
//             | 3 w (2 N_OUT, KCS) chunks read
// fragments:  lib_reduce_*, lib_wchunk, lib_rows
// injected:   WG, TPR, GPW, PPG, NIT, SGS, WF16, KC, KCS, DIM, DIMP, N_OUT, O0, EPS
@group(0) @binding(0) var<storage, read_write> out: array<f32>;       // (HIDDEN) f32
@group(0) @binding(1) var<storage, read>       x:   array<vec4<f32>>; // (DIMP) f32
@group(0) @binding(2) var<storage, read>       g:   array<vec4<f32>>; // (DIMP) f32 ffn_norm
@group(0) @binding(3) var<storage, read>       w:   array<vec4<u32>>; // (2 N_OUT, KCS)

var<private> inv: f32; // 1 / rms of x

// with XW the normed input's product x * g is written once per workgroup (xprep) and every
// matvec lane reads it from workgroup memory: one load instead of two and a multiply; vec4 i
// sits at i + i / XWP (a quantized part's lanes read items of XWP vec4 each: the padding
// spreads them over the banks)
var<workgroup> xw: array<vec4<f32>, XWN>;

fn xin(i: u32) -> vec4<f32> {
    if (XW) {
        return xw[i + i / XWP];
    }
    return x[i] * g[i];
}

fn xprep(li: u32) {
    if (XW) {
        for (var i = li; i < DIMP / 4u; i += WG) {
            xw[i + i / XWP] = x[i] * g[i];
        }
    }
    inv = rows_rms(li, 0u); // its barrier orders the xw writes before the reads
}

// ACT_Q8 (quantized rows, --activations q8) rounds the normed input as cpu-ref computes it;
// the sums then carry the 1 / rms already (isc in main)
fn xq_in(i: u32) -> vec4<f32> {
    return g[i] * (x[i] * inv);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let o0   = (wid.x * GPW + li / TPR) * PPG; // first output of this group (RPG = 2 PPG rows)
    let lane = li % TPR;
    let s = rows_run(2u * o0, 2u * N_OUT, lane, li);
    let isc = select(inv, 1.0, ACT_Q8);
    if (lane == 0u) {
        for (var j = 0u; j < PPG; j++) {
            if (o0 + j < N_OUT) {
                let gate = s[2u * j] * isc;
                let up   = s[2u * j + 1u] * isc;
                out[O0 + o0 + j] = gate / (1.0 + exp(-gate)) * up;
            }
        }
    }
}
