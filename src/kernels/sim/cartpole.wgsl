// cartpole — CartPole-v1 environment functions (a fragment composed into sim_episode).
//
// Role:     env_reset / env_obs / env_step for one genome, f32, in the operation order of
//           the C reference src/sim/env_cartpole.c.
// Math:     Euler step of the cart-pole ODE (Barto, Sutton & Anderson 1983):
//           temp = (F + ml th'^2 sin th) / M; th'' = (g sin th - cos th temp) /
//           (l (4/3 - m cos^2 th / M)); x'' = temp - ml th'' cos th / M; x += tau x', ...
// Source:   Gymnasium gymnasium/envs/classic_control/cartpole.py (CartPoleEnv): gravity 9.8,
//           masscart 1.0, masspole 0.1, length 0.5, force_mag 10.0, tau 0.02, euler,
//           theta threshold 12 deg, x threshold 2.4, reset U(-0.05, 0.05)^4, reward 1 per
//           step incl. the terminating one; max_episode_steps 500 (registration).
// Fuses:    nothing by itself. Mapping: the including kernel's (one thread per genome).
// Bindings: none. Injected: nothing (constants below are Gymnasium's).

const CP_GRAVITY: f32 = 9.8;
const CP_MASSPOLE: f32 = 0.1;
const CP_TOTAL_MASS: f32 = 1.1;        // masspole + masscart
const CP_LENGTH: f32 = 0.5;            // half the pole's length
const CP_POLEMASS_LENGTH: f32 = 0.05;  // masspole * length
const CP_FORCE_MAG: f32 = 10.0;
const CP_TAU: f32 = 0.02;
const CP_FOUR_THIRDS: f32 = 4.0 / 3.0;
const CP_THETA_THRESHOLD: f32 = 0.20943951; // 12 * 2 * pi / 360
const CP_X_THRESHOLD: f32 = 2.4;

fn env_reset(s: ptr<function, array<f32, 4>>, seed: u32, gen: u32, g: u32) {
    for (var i = 0u; i < 4u; i++) {
        (*s)[i] = -0.05 + 0.1 * sim_u01(sim_rand(seed, gen, g, sim_j(TAG_RESET, i)));
    }
}

fn env_obs(s: ptr<function, array<f32, 4>>, o: ptr<function, array<f32, N_IN>>) {
    (*o)[0] = (*s)[0];
    (*o)[1] = (*s)[1];
    (*o)[2] = (*s)[2];
    (*o)[3] = (*s)[3];
}

// Returns (reward, terminated as 0/1).
fn env_step(s: ptr<function, array<f32, 4>>, a: u32) -> vec2<f32> {
    var x = (*s)[0];
    var x_dot = (*s)[1];
    var theta = (*s)[2];
    var theta_dot = (*s)[3];
    let force = select(-CP_FORCE_MAG, CP_FORCE_MAG, a == 1u);
    let costheta = cos(theta);
    let sintheta = sin(theta);
    let temp = (force + CP_POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / CP_TOTAL_MASS;
    let thetaacc = (CP_GRAVITY * sintheta - costheta * temp) /
                   (CP_LENGTH * (CP_FOUR_THIRDS - CP_MASSPOLE * (costheta * costheta) / CP_TOTAL_MASS));
    let xacc = temp - CP_POLEMASS_LENGTH * thetaacc * costheta / CP_TOTAL_MASS;
    x = x + CP_TAU * x_dot;
    x_dot = x_dot + CP_TAU * xacc;
    theta = theta + CP_TAU * theta_dot;
    theta_dot = theta_dot + CP_TAU * thetaacc;
    (*s)[0] = x;
    (*s)[1] = x_dot;
    (*s)[2] = theta;
    (*s)[3] = theta_dot;
    let terminated = x < -CP_X_THRESHOLD || x > CP_X_THRESHOLD || theta < -CP_THETA_THRESHOLD ||
                     theta > CP_THETA_THRESHOLD;
    return vec2<f32>(1.0, select(0.0, 1.0, terminated));
}
