/* wgfuse sim — CartPole-v1 in plain C (the reference for src/kernels/cartpole.wgsl).
 *
 * Constants and dynamics from Gymnasium, gymnasium/envs/classic_control/cartpole.py
 * (CartPoleEnv: gravity 9.8, masscart 1.0, masspole 0.1, length 0.5 (half the pole),
 * force_mag 10.0, tau 0.02, kinematics_integrator "euler", theta threshold 12 degrees,
 * x threshold 2.4, reset uniform(-0.05, 0.05) on all 4 state variables; reward 1.0 on every
 * step including the terminating one; registered with max_episode_steps = 500).
 * Gymnasium computes in float64; wgfuse runs f32 in the same operation order. */
#include <math.h>

#include "sim/sim_internal.h"

#define CP_GRAVITY         9.8f
#define CP_MASSPOLE        0.1f
#define CP_TOTAL_MASS      1.1f  /* masspole + masscart                                 */
#define CP_LENGTH          0.5f
#define CP_POLEMASS_LENGTH 0.05f /* masspole * length                                   */
#define CP_FORCE_MAG       10.0f
#define CP_TAU             0.02f
#define CP_THETA_THRESHOLD 0.20943951f /* 12 * 2 * pi / 360                              */
#define CP_X_THRESHOLD     2.4f

void wgf__cartpole_reset(uint32_t seed, uint32_t gen, uint32_t genome, float s[4])
{
    for (uint32_t i = 0; i < 4; i++)
        s[i] = -0.05f + 0.1f * wgf_sim_u01(wgf_sim_rand(seed, gen, genome, WGF_SIM_J(WGF_SIM_TAG_RESET, i)));
}

void wgf__cartpole_obs(const float s[4], float *obs)
{
    for (int i = 0; i < 4; i++) obs[i] = s[i];
}

float wgf__cartpole_step(float s[4], int action, bool *terminated)
{
    float x = s[0], x_dot = s[1], theta = s[2], theta_dot = s[3];
    float force    = action == 1 ? CP_FORCE_MAG : -CP_FORCE_MAG;
    float costheta = cosf(theta), sintheta = sinf(theta);
    float temp     = (force + CP_POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / CP_TOTAL_MASS;
    float thetaacc = (CP_GRAVITY * sintheta - costheta * temp) /
                     (CP_LENGTH * (4.0f / 3.0f - CP_MASSPOLE * (costheta * costheta) / CP_TOTAL_MASS));
    float xacc     = temp - CP_POLEMASS_LENGTH * thetaacc * costheta / CP_TOTAL_MASS;
    x         = x + CP_TAU * x_dot;
    x_dot     = x_dot + CP_TAU * xacc;
    theta     = theta + CP_TAU * theta_dot;
    theta_dot = theta_dot + CP_TAU * thetaacc;
    s[0] = x, s[1] = x_dot, s[2] = theta, s[3] = theta_dot;
    *terminated = x < -CP_X_THRESHOLD || x > CP_X_THRESHOLD || theta < -CP_THETA_THRESHOLD ||
                  theta > CP_THETA_THRESHOLD;
    return 1.0f;
}
