// es — OpenAI-style evolution strategies on the GPU (Salimans et al. 2017): antithetic
// sampling, centered ranks, Adam. Three roles of one generation, chosen by MODE.
//
// Role:     MODE 0 sample: params_out[g] = theta + s_g sigma eps_{g/2}, s_g = +1 (even g) / -1.
//           MODE 1 rank:   ranks[g] = rank(f_g) / (POP - 1) - 0.5 (ascending, ties by index).
//           MODE 2 update: grad_k = sum_p (ranks[2p] - ranks[2p+1]) eps_{p,k} / (POP sigma)
//                          - weight_decay theta_k; Adam ascent on theta; thread 0 advances the
//                          generation counter (ctl_out = ctl_in + 1).
// Math:     eps_{p,k} = sim_normal(seed, generation, p, TAG_ES, k), regenerated in MODE 2
//           instead of stored (POP/2 x N_PARAMS floats never touch memory).
// Fuses:    each MODE is one dispatch; sample + episode + rank + update = one generation.
// Mapping:  MODE 0 and 1: one thread per genome; MODE 2: one thread per parameter k.
//           WG threads per workgroup.
// Bindings: 0 params_out (POP, N_PARAMS) f32 rw   1 ranks (POP) f32 rw
//           2 theta (N_PARAMS) f32 rw   3 adam_m (N_PARAMS) f32 rw   4 adam_v (N_PARAMS) f32 rw
//           5 ctl_out (4) u32 rw        6 fitness (POP) f32 r        7 ctl_in (4) u32 r
//           8 es uniform: sigma, lr, beta1, beta2, eps, weight_decay
// Injected: prelude consts POP, N_PARAMS, WG; fragments fitness, sim_rng, generation; override
//           MODE.
//#include "sim/fitness.inc.wgsl"
//#include "sim/sim_rng.inc.wgsl"
//#include "sim/generation.inc.wgsl"

struct Es {
    sigma: f32,
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    weight_decay: f32,
    pad0: f32,
    pad1: f32,
}

@group(0) @binding(0) var<storage, read_write> params_out : array<f32>; // (POP, N_PARAMS)
@group(0) @binding(1) var<storage, read_write> ranks      : array<f32>; // (POP)
@group(0) @binding(2) var<storage, read_write> theta      : array<f32>; // (N_PARAMS)
@group(0) @binding(3) var<storage, read_write> adam_m     : array<f32>; // (N_PARAMS)
@group(0) @binding(4) var<storage, read_write> adam_v     : array<f32>; // (N_PARAMS)
@group(0) @binding(5) var<storage, read_write> ctl_out    : array<u32>; // (4)
@group(0) @binding(6) var<storage, read>       fitness    : array<f32>; // (POP)
@group(0) @binding(7) var<storage, read>       ctl_in     : array<u32>; // (4) generation, seed
@group(0) @binding(8) var<uniform>             es         : Es;

override MODE: u32 = 0u;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let gen = ctl_in[0];
    let seed = ctl_in[1];
    if (MODE == 0u) {
        if (i >= POP) {
            return;
        }
        let pair = i / 2u;
        let sign = select(1.0, -1.0, (i & 1u) == 1u);
        for (var k = 0u; k < N_PARAMS; k++) {
            params_out[i * N_PARAMS + k] = theta[k] + sign * es.sigma * sim_normal(seed, gen, pair, TAG_ES, k);
        }
    } else if (MODE == 1u) {
        if (i >= POP) {
            return;
        }
        let fi = fit(i);
        var rank = 0u;
        for (var j = 0u; j < POP; j++) {
            let fj = fit(j);
            if (fj < fi || (fj == fi && j < i)) {
                rank++;
            }
        }
        ranks[i] = f32(rank) / f32(POP - 1u) - 0.5;
    } else {
        if (i == 0u) {
            generation_advance(gen, seed);
        }
        if (i >= N_PARAMS) {
            return;
        }
        var acc = 0.0;
        for (var p = 0u; p < POP / 2u; p++) {
            acc = acc + (ranks[2u * p] - ranks[2u * p + 1u]) * sim_normal(seed, gen, p, TAG_ES, i);
        }
        let th = theta[i];
        let g = acc / (f32(POP) * es.sigma) - es.weight_decay * th;
        let m = es.beta1 * adam_m[i] + (1.0 - es.beta1) * g;
        let v = es.beta2 * adam_v[i] + (1.0 - es.beta2) * g * g;
        adam_m[i] = m;
        adam_v[i] = v;
        let t = f32(gen + 1u);
        let mhat = m / (1.0 - pow(es.beta1, t));
        let vhat = v / (1.0 - pow(es.beta2, t));
        theta[i] = th + es.lr * mhat / (sqrt(vhat) + es.eps);
    }
}
