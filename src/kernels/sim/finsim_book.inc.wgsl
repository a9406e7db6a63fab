// finsim_book — what finsim.wgsl (a thread per genome) and finsim_wide.wgsl (a lane per asset)
// share: the market bindings, the constants, the trade rule and the step's accounting (a
// fragment, docs/sim.md "The financial simulation").
//
// Role:     finsim_exposure(out): the new exposure of a trading asset from the policy's
//           outputs; finsim_account(ep, pnl, turnover): the step's growth into the log equity,
//           ruin ends the episode. One definition, so both kernels compute the same bits.
// Math:     e' = lev tanh(o0) sigmoid(o3) / 16, lev = 1 + 2 sigmoid(o1) (1-3x);
//           growth = 1 + pnl - COST turnover; growth <= RUIN: log equity += log(RUIN), done;
//           else log equity += log(growth); the step counter advances.
// Bindings: 4 returns (MAX_STEPS, 16) f32 r   5 signals (MAX_STEPS, 36) f32 r
// Injected: prelude const MAX_STEPS, N_OUT; fragments episode_io (Episode), sim_rng (sim_tanh).

@group(0) @binding(4) var<storage, read>       returns   : array<f32>; // (MAX_STEPS, 16)
@group(0) @binding(5) var<storage, read>       signals   : array<f32>; // (MAX_STEPS, 36)

const ASSETS: u32 = 16u;
const SIGNALS: u32 = 36u;
const COST: f32 = 0.001;  // per unit of traded exposure (10 bp)
const RUIN: f32 = 1e-6;

fn sigmoid(x: f32) -> f32 { return 1.0 / (1.0 + exp(-clamp(x, -30.0, 30.0))); }

fn finsim_exposure(out: ptr<function, array<f32, N_OUT>>) -> f32 {
    let lev = 1.0 + 2.0 * sigmoid((*out)[1]);
    return lev * sim_tanh((*out)[0]) * sigmoid((*out)[3]) / 16.0;
}

fn finsim_account(ep: ptr<function, Episode>, pnl: f32, turnover: f32) {
    let growth = 1.0 + pnl - COST * turnover;
    (*ep).t = (*ep).t + 1u;
    if (growth <= RUIN) {
        (*ep).ret = (*ep).ret + log(RUIN);
        (*ep).done = true;
    } else {
        (*ep).ret = (*ep).ret + log(growth);
    }
}
