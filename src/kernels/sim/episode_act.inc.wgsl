// episode_act — what a classic-control episode does with the policy's outputs, shared by
// sim_episode (a thread per genome) and sim_episode_wide (lanes per genome) (a fragment).
//
// Role:     the action and the step: a = argmax out[0..N_ACT) (first index on ties), the
//           fed-back outputs inp[N_OBS + i] = sim_tanh(out[N_ACT + i]), then env_step(s, a).
// Math:     returns env_step's (reward, terminated); the caller adds the reward and counts
//           the step. The argmax tracks the best value so `out` is never indexed by a
//           data-dependent value (that would force it into local memory).
// Injected: prelude consts N_IN, N_OUT, N_OBS, N_ACT, N_FB; fragments sim_rng (sim_tanh) and
//           the env (env_step).

fn episode_act(s: ptr<function, array<f32, 4>>, inp: ptr<function, array<f32, N_IN>>,
               out: ptr<function, array<f32, N_OUT>>) -> vec2<f32> {
    var a = 0u;
    var best = (*out)[0];
    for (var i = 1u; i < N_ACT; i++) {
        if ((*out)[i] > best) {
            a = i;
            best = (*out)[i];
        }
    }
    for (var i = 0u; i < N_FB; i++) {
        (*inp)[N_OBS + i] = sim_tanh((*out)[N_ACT + i]);
    }
    return env_step(s, a);
}
