// sim_episode — reset or run a classic-control episode for every genome.
//
// Role:     MODE 0: write each genome's initial state (env_reset). MODE 1: run up to CHUNK
//           steps of each genome's episode: obs -> MLP policy -> argmax action (+ fed-back
//           outputs) -> env_step, accumulating the return, until terminated or MAX_STEPS.
// Math:     return = sum of Gymnasium rewards over the episode (see the env fragment).
// Fuses:    policy forward + environment step + reward accumulation for CHUNK steps:
//           fused = CHUNK >= MAX_STEPS (one dispatch per episode), chunked K = CHUNK K,
//           per-step = CHUNK 1. The state record ping-pongs state_in -> state_out.
// Mapping:  one thread per genome of the evaluated range G0 .. G0 + GN - 1 (all POP unless
//           MPI ranks split the population), WG threads per workgroup, ceil(GN / WG) workgroups.
// Bindings: 0 state_out (POP, STRIDE) f32 rw   1 fitness (POP) f32 rw
//           2 state_in  (POP, STRIDE) f32 r    3 params  (POP, N_PARAMS) f32 r
//           4 ctl       (4) u32 r: generation, seed
// Record:   [0,4) env state | [4,8) fed-back outputs | 8 return | 9 t | 10 done (f32).
// Injected: prelude consts POP G0 GN N_PARAMS N_IN N_HID N_OUT N_OBS N_ACT N_FB FB_CAP MAX_STEPS
//           STRIDE WG + the run-time fragments sim_policy_gen (sim_policy.wgsl generated
//           straight-line for the shape, src/sim/policy.c) and the env (cartpole, acrobot,
//           mountaincar); fragments episode_io, episode_act, sim_rng; overrides MODE, CHUNK.
//#include "sim/episode_io.inc.wgsl"
//#include "sim/episode_act.inc.wgsl"
//#include "sim/sim_rng.inc.wgsl"

@group(0) @binding(4) var<storage, read>       ctl       : array<u32>; // (4) generation, seed

override MODE: u32 = 1u;
override CHUNK: u32 = 1u;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= GN) {
        return;
    }
    let g = G0 + gid.x;
    let base = g * STRIDE;
    if (MODE == 0u) {
        var s0: array<f32, 4>;
        env_reset(&s0, ctl[1], ctl[0], g);
        for (var i = 0u; i < 4u; i++) {
            state_out[base + i] = s0[i];
        }
        for (var i = 4u; i < STRIDE; i++) {
            state_out[base + i] = 0.0;
        }
        fitness[g] = 0.0;
        return;
    }

    // literal indices into the private arrays throughout (registers on a GPU, whether or
    // not its compiler unrolls a loop)
    var s: array<f32, 4>;
    s[0] = state_in[base + 0u];
    s[1] = state_in[base + 1u];
    s[2] = state_in[base + 2u];
    s[3] = state_in[base + 3u];
    var inp: array<f32, N_IN>;
    for (var i = 0u; i < N_FB; i++) {
        inp[N_OBS + i] = state_in[base + 4u + i];
    }
    var ep = episode_load(base, 8u);

    if (episode_running(ep)) {
        policy_load(g);
        for (var k = 0u; k < CHUNK; k++) {
            if (!episode_running(ep)) {
                break;
            }
            env_obs(&s, &inp);
            var out: array<f32, N_OUT>;
            policy_forward(&inp, &out);
            let r = episode_act(&s, &inp, &out); // argmax, feedback, env_step
            ep.ret = ep.ret + r.x;
            ep.t = ep.t + 1u;
            ep.done = r.y != 0.0;
        }
    }

    state_out[base + 0u] = s[0];
    state_out[base + 1u] = s[1];
    state_out[base + 2u] = s[2];
    state_out[base + 3u] = s[3];
    state_out[base + 4u] = select(0.0, inp[min(N_OBS + 0u, N_IN - 1u)], 0u < N_FB);
    state_out[base + 5u] = select(0.0, inp[min(N_OBS + 1u, N_IN - 1u)], 1u < N_FB);
    state_out[base + 6u] = select(0.0, inp[min(N_OBS + 2u, N_IN - 1u)], 2u < N_FB);
    state_out[base + 7u] = select(0.0, inp[min(N_OBS + 3u, N_IN - 1u)], 3u < N_FB);
    episode_store(g, base, 8u, ep);
}
