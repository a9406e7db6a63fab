// sim_policy — the per-genome MLP of wgfuse sim (a fragment, no entry point).
//
// Role:     out = W2 tanh(W1 in + b1) + b2 for one genome, weights in private memory.
// Math:     hid[h] = tanh(b1[h] + sum_i W1[h][i] in[i]); out[o] = b2[o] + sum_h W2[o][h] hid[h]
//           (accumulated in index order, as wgf_sim_policy_forward in src/sim/policy.c).
// Fuses:    the policy into the episode kernels (sim_episode, finsim).
// Mapping:  one thread = one genome; policy_load copies its N_PARAMS floats from the
//           params buffer (POP, N_PARAMS) into private memory once per dispatch.
// Bindings: uses `params` (binding 3 of the including kernel).
// Injected: N_IN, N_HID, N_OUT, N_PARAMS from the prelude (src/sim/prelude.c); composed into
//           finsim's prelude at run time (classic control uses a straight-line copy, policy.c).
// Layout:   W1 (N_HID, N_IN) | b1 (N_HID) | W2 (N_OUT, N_HID) | b2 (N_OUT).

var<private> w: array<f32, N_PARAMS>;

fn policy_load(g: u32) {
    let base = g * N_PARAMS;
    for (var k = 0u; k < N_PARAMS; k++) {
        w[k] = params[base + k];
    }
}

fn policy_forward(inp: ptr<function, array<f32, N_IN>>, out: ptr<function, array<f32, N_OUT>>) {
    let b1 = N_HID * N_IN;
    let w2 = b1 + N_HID;
    let b2 = w2 + N_OUT * N_HID;
    var hid: array<f32, N_HID>;
    for (var h = 0u; h < N_HID; h++) {
        var acc = w[b1 + h];
        for (var i = 0u; i < N_IN; i++) {
            acc = acc + w[h * N_IN + i] * (*inp)[i];
        }
        hid[h] = sim_tanh(acc);
    }
    for (var o = 0u; o < N_OUT; o++) {
        var acc = w[b2 + o];
        for (var h = 0u; h < N_HID; h++) {
            acc = acc + w[w2 + o * N_HID + h] * hid[h];
        }
        (*out)[o] = acc;
    }
}
