// mountaincar — MountainCar-v0 environment functions (a fragment composed into sim_episode).
//
// Role:     env_reset / env_obs / env_step for one genome, f32, in the operation order of
//           the C reference src/sim/env_mountaincar.c.
// Math:     v += (a - 1) force + cos(3 p)(-gravity), clipped to +-max_speed; p += v, clipped
//           to [min, max]; v = 0 at the left wall moving left; terminated when p >= goal and
//           v >= goal_velocity; reward -1 per step.
// Source:   Gymnasium gymnasium/envs/classic_control/mountain_car.py (MountainCarEnv):
//           min_position -1.2, max_position 0.6, max_speed 0.07, goal_position 0.5,
//           goal_velocity 0, force 0.001, gravity 0.0025, reset p ~ U(-0.6, -0.4), v = 0;
//           max_episode_steps 200 (registration).
// Fuses:    nothing by itself. Mapping: the including kernel's (one thread per genome).
// Bindings: none. Injected: nothing (constants below are Gymnasium's).

const MC_MIN_POSITION: f32 = -1.2;
const MC_MAX_POSITION: f32 = 0.6;
const MC_MAX_SPEED: f32 = 0.07;
const MC_GOAL_POSITION: f32 = 0.5;
const MC_GOAL_VELOCITY: f32 = 0.0;
const MC_FORCE: f32 = 0.001;
const MC_GRAVITY: f32 = 0.0025;

fn env_reset(s: ptr<function, array<f32, 4>>, seed: u32, gen: u32, g: u32) {
    (*s)[0] = -0.6 + 0.2 * sim_u01(sim_rand(seed, gen, g, sim_j(TAG_RESET, 0u)));
    (*s)[1] = 0.0;
    (*s)[2] = 0.0;
    (*s)[3] = 0.0;
}

fn env_obs(s: ptr<function, array<f32, 4>>, o: ptr<function, array<f32, N_IN>>) {
    (*o)[0] = (*s)[0];
    (*o)[1] = (*s)[1];
}

fn env_step(s: ptr<function, array<f32, 4>>, a: u32) -> vec2<f32> {
    var position = (*s)[0];
    var velocity = (*s)[1];
    velocity = velocity + f32(i32(a) - 1) * MC_FORCE + cos(3.0 * position) * (-MC_GRAVITY);
    velocity = clamp(velocity, -MC_MAX_SPEED, MC_MAX_SPEED);
    position = position + velocity;
    position = clamp(position, MC_MIN_POSITION, MC_MAX_POSITION);
    if (position == MC_MIN_POSITION && velocity < 0.0) {
        velocity = 0.0;
    }
    (*s)[0] = position;
    (*s)[1] = velocity;
    let terminated = position >= MC_GOAL_POSITION && velocity >= MC_GOAL_VELOCITY;
    return vec2<f32>(-1.0, select(0.0, 1.0, terminated));
}
