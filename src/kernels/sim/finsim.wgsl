// finsim — reset or run the 16-asset trading episode for every genome (docs/sim.md).
//
// Role:     MODE 0: flat book, zero feedback, log equity 0. MODE 1: up to CHUNK steps: per
//           asset the recurrent policy (8 -> 16 tanh -> 6, 2 outputs fed back) sees the
//           asset's 2 signals, the 4 market signals and its feedback, sets the exposure
//           lev * tanh(o0) * sigmoid(o3) / 16 (lev = 1 + 2 sigmoid(o1), 1-3x) when o2 > 0;
//           the book earns sum e_a R[t][a] - COST * turnover; log equity accumulates.
// Math:     fitness = sum_t log(1 + pnl_t - COST turnover_t); growth <= RUIN ends it.
// Fuses:    16 policy evaluations + portfolio accounting per step, CHUNK steps per dispatch
//           (fused: the whole 1,500-step episode in one dispatch).
// Mapping:  one thread per genome (weights in private memory), WG per workgroup; every
//           thread reads the same market row at step t (broadcast through the cache).
// Bindings: 0 state_out (POP, STRIDE) f32 rw   1 fitness (POP) f32 rw
//           2 state_in  (POP, STRIDE) f32 r    3 params  (POP, N_PARAMS) f32 r
//           4 returns   (MAX_STEPS, 16) f32 r  5 signals (MAX_STEPS, 36) f32 r
// Record:   [0,16) exposures | [16,48) feedback (asset, 2) | 48 log equity | 49 t | 50 done.
// Injected: prelude consts POP G0 GN N_PARAMS N_IN N_HID N_OUT MAX_STEPS STRIDE WG + the run-time
//           fragment sim_policy; fragments episode_io, sim_rng, finsim_book; overrides MODE, CHUNK.
//#include "sim/episode_io.inc.wgsl"
//#include "sim/sim_rng.inc.wgsl"
//#include "sim/finsim_book.inc.wgsl"

override MODE: u32 = 1u;
override CHUNK: u32 = 1u;


@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= GN) {
        return;
    }
    let g = G0 + gid.x; // the evaluated range G0 .. G0 + GN - 1 (all POP unless MPI splits it)
    let base = g * STRIDE;
    if (MODE == 0u) {
        for (var i = 0u; i < STRIDE; i++) {
            state_out[base + i] = 0.0;
        }
        fitness[g] = 0.0;
        return;
    }
    var e: array<f32, 16>;
    var fb: array<f32, 32>;
    for (var a = 0u; a < ASSETS; a++) {
        e[a] = state_in[base + a];
    }
    for (var i = 0u; i < 32u; i++) {
        fb[i] = state_in[base + 16u + i];
    }
    var ep = episode_load(base, 48u); // ep.ret: log equity

    if (episode_running(ep)) {
        policy_load(g);
        for (var k = 0u; k < CHUNK; k++) {
            if (!episode_running(ep)) {
                break;
            }
            let sg = ep.t * SIGNALS;
            var pnl = 0.0;
            var turnover = 0.0;
            var inp: array<f32, N_IN>;
            inp[2] = signals[sg + 32u];
            inp[3] = signals[sg + 33u];
            inp[4] = signals[sg + 34u];
            inp[5] = signals[sg + 35u];
            for (var a = 0u; a < ASSETS; a++) {
                inp[0] = signals[sg + 2u * a];
                inp[1] = signals[sg + 2u * a + 1u];
                inp[6] = fb[2u * a];
                inp[7] = fb[2u * a + 1u];
                var out: array<f32, N_OUT>;
                policy_forward(&inp, &out);
                if (out[2] > 0.0) {
                    let ne = finsim_exposure(&out);
                    turnover = turnover + abs(ne - e[a]);
                    e[a] = ne;
                }
                fb[2u * a] = sim_tanh(out[4]);
                fb[2u * a + 1u] = sim_tanh(out[5]);
                pnl = pnl + e[a] * returns[ep.t * ASSETS + a];
            }
            finsim_account(&ep, pnl, turnover);
        }
    }
    for (var a = 0u; a < ASSETS; a++) {
        state_out[base + a] = e[a];
    }
    for (var i = 0u; i < 32u; i++) {
        state_out[base + 16u + i] = fb[i];
    }
    episode_store(g, base, 48u, ep);
}
