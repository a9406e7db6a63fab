// acrobot — Acrobot-v1 environment functions (a fragment composed into sim_episode).
//
// Role:     env_reset / env_obs / env_step for one genome, f32, in the operation order of
//           the C reference src/sim/env_acrobot.c.
// Math:     one classic RK4 step over [0, dt] of the two-link dynamics ("book" variant of
//           _dsdt), angles wrapped into [-pi, pi], velocities clipped; terminal when
//           -cos t1 - cos(t1 + t2) > 1; reward -1, 0 on the terminal step.
// Source:   Gymnasium gymnasium/envs/classic_control/acrobot.py (AcrobotEnv, rk4, wrap,
//           bound): dt 0.2, link lengths 1, masses 1, COM 0.5, MOI 1, g 9.8, MAX_VEL_1 4 pi,
//           MAX_VEL_2 9 pi, torques {-1, 0, +1}, torque_noise_max 0, book_or_nips "book",
//           reset U(-0.1, 0.1)^4, obs (cos t1, sin t1, cos t2, sin t2, t1', t2');
//           max_episode_steps 500 (registration).
// Fuses:    nothing by itself. Mapping: the including kernel's (one thread per genome).
// Bindings: none. Injected: nothing (constants below are Gymnasium's).

const AB_DT: f32 = 0.2;
const AB_L1: f32 = 1.0;
const AB_M1: f32 = 1.0;
const AB_M2: f32 = 1.0;
const AB_LC1: f32 = 0.5;
const AB_LC2: f32 = 0.5;
const AB_I1: f32 = 1.0;
const AB_I2: f32 = 1.0;
const AB_G: f32 = 9.8;
const AB_PI: f32 = 3.14159265;
const AB_HALFPI: f32 = 1.57079633;
const AB_MAX_V1: f32 = 12.5663706; // 4 pi
const AB_MAX_V2: f32 = 28.2743339; // 9 pi

fn env_reset(s: ptr<function, array<f32, 4>>, seed: u32, gen: u32, g: u32) {
    for (var i = 0u; i < 4u; i++) {
        (*s)[i] = -0.1 + 0.2 * sim_u01(sim_rand(seed, gen, g, sim_j(TAG_RESET, i)));
    }
}

fn env_obs(s: ptr<function, array<f32, 4>>, o: ptr<function, array<f32, N_IN>>) {
    (*o)[0] = cos((*s)[0]);
    (*o)[1] = sin((*s)[0]);
    (*o)[2] = cos((*s)[1]);
    (*o)[3] = sin((*s)[1]);
    (*o)[4] = (*s)[2];
    (*o)[5] = (*s)[3];
}

// Gymnasium's _dsdt, book variant.
fn acrobot_dsdt(y: vec4<f32>, a: f32) -> vec4<f32> {
    let theta1 = y.x;
    let theta2 = y.y;
    let dtheta1 = y.z;
    let dtheta2 = y.w;
    let d1 = AB_M1 * (AB_LC1 * AB_LC1) + AB_M2 * (AB_L1 * AB_L1 + AB_LC2 * AB_LC2 + 2.0 * AB_L1 * AB_LC2 * cos(theta2)) +
             AB_I1 + AB_I2;
    let d2 = AB_M2 * (AB_LC2 * AB_LC2 + AB_L1 * AB_LC2 * cos(theta2)) + AB_I2;
    let phi2 = AB_M2 * AB_LC2 * AB_G * cos(theta1 + theta2 - AB_HALFPI);
    let phi1 = -AB_M2 * AB_L1 * AB_LC2 * (dtheta2 * dtheta2) * sin(theta2) -
               2.0 * AB_M2 * AB_L1 * AB_LC2 * dtheta2 * dtheta1 * sin(theta2) +
               (AB_M1 * AB_LC1 + AB_M2 * AB_L1) * AB_G * cos(theta1 - AB_HALFPI) + phi2;
    let ddtheta2 = (a + d2 / d1 * phi1 - AB_M2 * AB_L1 * AB_LC2 * (dtheta1 * dtheta1) * sin(theta2) - phi2) /
                   (AB_M2 * (AB_LC2 * AB_LC2) + AB_I2 - (d2 * d2) / d1);
    let ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    return vec4<f32>(dtheta1, dtheta2, ddtheta1, ddtheta2);
}

fn acrobot_wrap(v: f32) -> f32 {
    let diff = AB_PI - -AB_PI;
    var x = v;
    while (x > AB_PI) {
        x = x - diff;
    }
    while (x < -AB_PI) {
        x = x + diff;
    }
    return x;
}

fn env_step(s: ptr<function, array<f32, 4>>, act: u32) -> vec2<f32> {
    let dt2 = AB_DT / 2.0;
    let dt6 = AB_DT / 6.0;
    let a = f32(i32(act) - 1); // AVAIL_TORQUE = [-1, 0, +1]
    let y0 = vec4<f32>((*s)[0], (*s)[1], (*s)[2], (*s)[3]);
    let k1 = acrobot_dsdt(y0, a);
    let k2 = acrobot_dsdt(y0 + dt2 * k1, a);
    let k3 = acrobot_dsdt(y0 + dt2 * k2, a);
    let k4 = acrobot_dsdt(y0 + AB_DT * k3, a);
    let y = y0 + dt6 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
    (*s)[0] = acrobot_wrap(y.x);
    (*s)[1] = acrobot_wrap(y.y);
    (*s)[2] = clamp(y.z, -AB_MAX_V1, AB_MAX_V1);
    (*s)[3] = clamp(y.w, -AB_MAX_V2, AB_MAX_V2);
    let terminated = -cos((*s)[0]) - cos((*s)[1] + (*s)[0]) > 1.0;
    return vec2<f32>(select(-1.0, 0.0, terminated), select(0.0, 1.0, terminated));
}
