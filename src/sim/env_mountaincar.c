/* wgfuse sim — MountainCar-v0 in plain C (the reference for src/kernels/mountaincar.wgsl).
 *
 * Constants and dynamics from Gymnasium, gymnasium/envs/classic_control/mountain_car.py
 * (MountainCarEnv: min_position -1.2, max_position 0.6, max_speed 0.07, goal_position 0.5,
 * goal_velocity 0, force 0.001, gravity 0.0025; velocity += (action - 1) force
 * + cos(3 position)(-gravity), clipped; position += velocity, clipped; velocity = 0 when
 * the car sits at the left wall moving left; terminated when position >= 0.5 and
 * velocity >= 0; reward -1 per step; reset position uniform(-0.6, -0.4), velocity 0;
 * registered with max_episode_steps = 200). f32 in Gymnasium's operation order. */
#include <math.h>

#include "sim/sim_internal.h"

#define MC_MIN_POSITION -1.2f
#define MC_MAX_POSITION 0.6f
#define MC_MAX_SPEED    0.07f
#define MC_GOAL_POSITION 0.5f
#define MC_GOAL_VELOCITY 0.0f
#define MC_FORCE        0.001f
#define MC_GRAVITY      0.0025f

void wgf__mountaincar_reset(uint32_t seed, uint32_t gen, uint32_t genome, float s[4])
{
    s[0] = -0.6f + 0.2f * wgf_sim_u01(wgf_sim_rand(seed, gen, genome, WGF_SIM_J(WGF_SIM_TAG_RESET, 0)));
    s[1] = 0.0f;
    s[2] = s[3] = 0.0f;
}

void wgf__mountaincar_obs(const float s[4], float *obs) { obs[0] = s[0], obs[1] = s[1]; }

float wgf__mountaincar_step(float s[4], int action, bool *terminated)
{
    float position = s[0], velocity = s[1];
    velocity = velocity + (float)(action - 1) * MC_FORCE + cosf(3.0f * position) * (-MC_GRAVITY);
    velocity = fminf(fmaxf(velocity, -MC_MAX_SPEED), MC_MAX_SPEED);
    position = position + velocity;
    position = fminf(fmaxf(position, MC_MIN_POSITION), MC_MAX_POSITION);
    if (position == MC_MIN_POSITION && velocity < 0.0f) velocity = 0.0f;
    s[0] = position, s[1] = velocity;
    *terminated = position >= MC_GOAL_POSITION && velocity >= MC_GOAL_VELOCITY;
    return -1.0f;
}
