// finsim_wide — run the 16-asset trading episode for every genome, a lane per asset.
//
// Role:     MODE 1 of finsim.wgsl (its reset stays there) with a genome's 16 assets spread
//           over 16 lanes: lane a runs asset a's policy evaluation (8 -> 16 tanh -> 6, in one
//           thread, in finsim's order) and its exposure / feedback update; the step's book
//           (pnl, turnover, growth, log equity) is then summed by every lane of the genome
//           from workgroup memory in asset order, redundantly and identically, so all lanes
//           agree on ruin without another barrier.
// Math:     exactly finsim.wgsl's: each asset's outputs by one thread in index order;
//           turnover += |e' - e_a| for a traded asset (+ 0 for one that did not trade: the
//           same value, turnover >= +0); pnl += e_a * R[t][a] in asset order, the same
//           expression; fitness = sum_t log(growth_t). Returns are bitwise finsim's (tested:
//           tests/sim/test_sim_strategies.c).
// Fuses:    16 policy evaluations + portfolio accounting per step, CHUNK steps per dispatch.
// Why:      one thread per genome runs 16 policy evaluations (~4,000 dependent FMAs and 340
//           transcendentals) per step in series, with 10,000 genomes = 313 warps for 132 SMs:
//           latency-bound. A lane per asset gives 16x the threads and 1/16 of the chain.
// Mapping:  workgroup = FGPW genomes x 16 lanes (WG threads); genome g = (wid.x + wid.y *
//           nwg.x) * FGPW + lid / 16 (+ G0: the evaluated range), asset a = lid % 16. The genomes' weights are staged in
//           workgroup memory once (every lane of a genome reads the same word: a broadcast),
//           the per-step exchange is double-buffered by step parity: one barrier per step.
//           The step loop runs CHUNK times for every lane (barriers in uniform control flow);
//           a finished genome's lanes only wait.
// Bindings: 0 state_out (POP, STRIDE) f32 rw   1 fitness (POP) f32 rw
//           2 state_in  (POP, STRIDE) f32 r    3 params  (POP, N_PARAMS) f32 r
//           4 returns   (MAX_STEPS, 16) f32 r  5 signals (MAX_STEPS, 36) f32 r
// Record:   finsim.wgsl's: [0,16) exposures | [16,48) feedback (asset, 2) | 48 log eq | 49 t | 50 done.
// Injected: prelude consts POP G0 GN N_PARAMS N_IN N_HID N_OUT MAX_STEPS STRIDE WG; fragments
//           episode_io, sim_rng, finsim_book; override CHUNK.
//#include "sim/episode_io.inc.wgsl"
//#include "sim/sim_rng.inc.wgsl"
//#include "sim/finsim_book.inc.wgsl"

override CHUNK: u32 = 1u;

const FGPW: u32 = WG / ASSETS; // genomes per workgroup

var<workgroup> wsh: array<f32, FGPW * N_PARAMS>; // the workgroup's genomes' weights
var<workgroup> xe: array<f32, 2u * WG>;          // [parity][lane]: exposure after the step
var<workgroup> xt: array<f32, 2u * WG>;          // [parity][lane]: |e' - e| if traded, else 0
var<workgroup> xr: array<f32, 2u * WG>;          // [parity][lane]: the asset's return R[t][a]

// sim_policy.wgsl's policy_forward, the weights read from workgroup memory at wb.
fn policy_forward_ws(wb: u32, inp: ptr<function, array<f32, N_IN>>, out: ptr<function, array<f32, N_OUT>>) {
    let b1 = wb + N_HID * N_IN;
    let w2 = b1 + N_HID;
    let b2 = w2 + N_OUT * N_HID;
    var hid: array<f32, N_HID>;
    for (var h = 0u; h < N_HID; h++) {
        var acc = wsh[b1 + h];
        for (var i = 0u; i < N_IN; i++) {
            acc = acc + wsh[wb + h * N_IN + i] * (*inp)[i];
        }
        hid[h] = sim_tanh(acc);
    }
    for (var o = 0u; o < N_OUT; o++) {
        var acc = wsh[b2 + o];
        for (var h = 0u; h < N_HID; h++) {
            acc = acc + wsh[w2 + o * N_HID + h] * hid[h];
        }
        (*out)[o] = acc;
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let blk = wid.x + wid.y * nwg.x;
    let slot = lid / ASSETS;
    let a = lid % ASSETS;
    let gi = blk * FGPW + slot; // index in the evaluated range G0 .. G0 + GN - 1
    let valid = gi < GN;
    let g = G0 + gi;
    let gs = G0 + min(gi, GN - 1u); // a padding slot mirrors the last genome and writes nothing
    let base = gs * STRIDE;

    // stage the workgroup's genomes' weights (coalesced; slots past POP copy the last genome)
    for (var k = lid; k < FGPW * N_PARAMS; k += WG) {
        let gk = G0 + min(blk * FGPW + k / N_PARAMS, GN - 1u);
        wsh[k] = params[gk * N_PARAMS + k % N_PARAMS];
    }
    var e = state_in[base + a];
    var fb0 = state_in[base + 16u + 2u * a];
    var fb1 = state_in[base + 16u + 2u * a + 1u];
    var ep = episode_load(base, 48u);
    ep.done = ep.done || !valid;
    workgroupBarrier();

    let wb = slot * N_PARAMS;
    let mine = slot * ASSETS; // this genome's 16 entries of an exchange buffer
    for (var k = 0u; k < CHUNK; k++) {
        let p = (k & 1u) * WG;
        let running = episode_running(ep);
        if (running) {
            let sg = ep.t * SIGNALS;
            var inp: array<f32, N_IN>;
            inp[0] = signals[sg + 2u * a];
            inp[1] = signals[sg + 2u * a + 1u];
            inp[2] = signals[sg + 32u];
            inp[3] = signals[sg + 33u];
            inp[4] = signals[sg + 34u];
            inp[5] = signals[sg + 35u];
            inp[6] = fb0;
            inp[7] = fb1;
            var out: array<f32, N_OUT>;
            policy_forward_ws(wb, &inp, &out);
            var traded = 0.0;
            if (out[2] > 0.0) {
                let ne = finsim_exposure(&out);
                traded = abs(ne - e);
                e = ne;
            }
            fb0 = sim_tanh(out[4]);
            fb1 = sim_tanh(out[5]);
            xe[p + lid] = e;
            xt[p + lid] = traded;
            xr[p + lid] = returns[ep.t * ASSETS + a];
        }
        workgroupBarrier();
        if (running) {
            var pnl = 0.0;
            var turnover = 0.0;
            for (var j = 0u; j < ASSETS; j++) {
                turnover = turnover + xt[p + mine + j];
                pnl = pnl + xe[p + mine + j] * xr[p + mine + j];
            }
            finsim_account(&ep, pnl, turnover);
        }
    }

    if (valid) {
        state_out[base + a] = e;
        state_out[base + 16u + 2u * a] = fb0;
        state_out[base + 16u + 2u * a + 1u] = fb1;
        if (a == 0u) {
            episode_store(g, base, 48u, ep);
        }
    }
}
