// sim_episode_wide — run a classic-control episode for every genome, LANES threads per genome.
//
// Role:     MODE 1 of sim_episode.wgsl (reset stays there) with the hidden layer spread over
//           the lanes of a genome: lane h computes hidden unit h; every lane then reads all
//           hidden units from workgroup memory and computes the outputs, the argmax and the
//           environment step itself (redundantly, identically), so no other value is shared.
// Math:     exactly sim_episode.wgsl's: each hidden unit and each output is accumulated by one
//           thread in index order, so returns are bitwise those of `fused` (tested).
// Fuses:    policy forward + environment step + reward accumulation for CHUNK steps.
// Why:      one thread per genome leaves a big GPU latency-bound (4,096 genomes = 128 warps for
//           132 SMs, 16 serial tanh per step); this gives LANES x the threads and 1 tanh per
//           lane per step, for 3 workgroup barriers per step.
// Mapping:  workgroup = GPW genomes x LANES lanes (GPW * LANES = WG); genome g = wid.x * GPW +
//           lid / LANES (+ G0), lane = lid % LANES; ceil(GN / GPW) workgroups (on a 2D grid past
//           65,535: wid.x + wid.y * nwg.x stands for wid.x). The step loop runs
//           while any genome of the workgroup is alive (a uniform flag: barriers stay in
//           uniform control flow).
// Bindings: 0 state_out (POP, STRIDE) f32 rw   1 fitness (POP) f32 rw
//           2 state_in  (POP, STRIDE) f32 r    3 params  (POP, N_PARAMS) f32 r
//           4 ctl       (4) u32 r (unused here; bound for the shared layout)
// Injected: prelude consts POP G0 GN N_PARAMS N_IN N_HID N_OUT N_OBS N_ACT N_FB MAX_STEPS STRIDE WG
//           LANES GPW + the run-time fragment of the env (sim_policy is not used); fragments
//           episode_io, episode_act, sim_rng; override CHUNK.
//#include "sim/episode_io.inc.wgsl"
//#include "sim/episode_act.inc.wgsl"
//#include "sim/sim_rng.inc.wgsl"

@group(0) @binding(4) var<storage, read>       ctl       : array<u32>; // (4)

override CHUNK: u32 = 1u;

var<workgroup> hid: array<f32, WG>;       // (GPW, LANES) hidden units of this step
var<workgroup> live: array<u32, GPW>;     // per genome: still running after this step
var<workgroup> any_live: u32;             // OR of live, written by thread 0

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    _ = ctl[0];
    let slot = lid / LANES;
    let lane = lid % LANES;
    let gi = (wid.x + wid.y * nwg.x) * GPW + slot; // index in the evaluated range
    let valid = gi < GN;
    let g = G0 + gi;
    let gs = G0 + min(gi, GN - 1u); // a padding slot mirrors the last genome and writes nothing
    let base = gs * STRIDE;

    var s: array<f32, 4>;
    for (var i = 0u; i < 4u; i++) {
        s[i] = state_in[base + i];
    }
    var inp: array<f32, N_IN>;
    for (var i = 0u; i < N_FB; i++) {
        inp[N_OBS + i] = state_in[base + 4u + i];
    }
    var ep = episode_load(base, 8u);
    ep.done = ep.done || !valid;

    // this lane's hidden row (W1 row + b1) and every output row (W2, b2)
    let pbase = gs * N_PARAMS;
    let h = min(lane, N_HID - 1u);
    var w1: array<f32, N_IN>;
    for (var i = 0u; i < N_IN; i++) {
        w1[i] = params[pbase + h * N_IN + i];
    }
    let b1 = params[pbase + N_HID * N_IN + h];
    let o2 = N_HID * N_IN + N_HID;
    var w2: array<f32, N_OUT * N_HID + N_OUT>;
    for (var k = 0u; k < N_OUT * N_HID + N_OUT; k++) {
        w2[k] = params[pbase + o2 + k];
    }

    if (lid == 0u) {
        any_live = 1u;
    }
    for (var k = 0u; k < CHUNK; k++) {
        if (workgroupUniformLoad(&any_live) == 0u) {
            break;
        }
        let alive = episode_running(ep);
        if (alive) {
            env_obs(&s, &inp);
            if (lane < N_HID) {
                var acc = b1;
                for (var i = 0u; i < N_IN; i++) {
                    acc = acc + w1[i] * inp[i];
                }
                hid[slot * LANES + lane] = sim_tanh(acc);
            }
        }
        workgroupBarrier();
        if (alive) {
            var out: array<f32, N_OUT>;
            for (var o = 0u; o < N_OUT; o++) {
                var acc = w2[N_OUT * N_HID + o];
                for (var j = 0u; j < N_HID; j++) {
                    acc = acc + w2[o * N_HID + j] * hid[slot * LANES + j];
                }
                out[o] = acc;
            }
            let r = episode_act(&s, &inp, &out); // argmax, feedback, env_step
            ep.ret = ep.ret + r.x;
            ep.t = ep.t + 1u;
            ep.done = r.y != 0.0;
        }
        if (lane == 0u) {
            live[slot] = select(0u, 1u, episode_running(ep));
        }
        workgroupBarrier();
        if (lid == 0u) {
            var any = 0u;
            for (var j = 0u; j < GPW; j++) {
                any = any | live[j];
            }
            any_live = any;
        }
    }

    if (valid && lane == 0u) {
        for (var i = 0u; i < 4u; i++) {
            state_out[base + i] = s[i];
        }
        for (var i = 0u; i < 4u; i++) {
            state_out[base + 4u + i] = select(0.0, inp[min(N_OBS + i, N_IN - 1u)], i < N_FB);
        }
        episode_store(g, base, 8u, ep);
    }
}
