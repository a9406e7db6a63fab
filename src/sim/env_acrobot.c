/* wgfuse sim — Acrobot-v1 in plain C (the reference for src/kernels/acrobot.wgsl).
 *
 * Constants and dynamics from Gymnasium, gymnasium/envs/classic_control/acrobot.py
 * (AcrobotEnv: dt 0.2, link lengths 1, masses 1, centres of mass 0.5, moments of inertia 1,
 * g 9.8, MAX_VEL_1 4 pi, MAX_VEL_2 9 pi, torques {-1, 0, +1}, no torque noise,
 * book_or_nips = "book"; one step = one classic RK4 step over [0, dt] as its rk4() does,
 * then wrap both angles into [-pi, pi] and clip both velocities; terminal when
 * -cos(t1) - cos(t1 + t2) > 1; reward -1, 0 on the terminal step; reset uniform(-0.1, 0.1);
 * registered with max_episode_steps = 500). f32 throughout, Gymnasium's operation order. */
#include <math.h>

#include "sim/sim_internal.h"

#define AB_DT     0.2f
#define AB_L1     1.0f
#define AB_M1     1.0f
#define AB_M2     1.0f
#define AB_LC1    0.5f
#define AB_LC2    0.5f
#define AB_I1     1.0f
#define AB_I2     1.0f
#define AB_G      9.8f
#define AB_PI     3.14159265f
#define AB_HALFPI 1.57079633f
#define AB_MAX_V1 12.5663706f /* 4 pi */
#define AB_MAX_V2 28.2743339f /* 9 pi */

void wgf__acrobot_reset(uint32_t seed, uint32_t gen, uint32_t genome, float s[4])
{
    for (uint32_t i = 0; i < 4; i++)
        s[i] = -0.1f + 0.2f * wgf_sim_u01(wgf_sim_rand(seed, gen, genome, WGF_SIM_J(WGF_SIM_TAG_RESET, i)));
}

void wgf__acrobot_obs(const float s[4], float *obs)
{
    obs[0] = cosf(s[0]), obs[1] = sinf(s[0]), obs[2] = cosf(s[1]), obs[3] = sinf(s[1]);
    obs[4] = s[2], obs[5] = s[3];
}

/* Gymnasium's _dsdt, book variant: (dtheta1, dtheta2, ddtheta1, ddtheta2) for torque a. */
static void acrobot_dsdt(const float y[4], float a, float d[4])
{
    float theta1 = y[0], theta2 = y[1], dtheta1 = y[2], dtheta2 = y[3];
    float d1 = AB_M1 * (AB_LC1 * AB_LC1) + AB_M2 * (AB_L1 * AB_L1 + AB_LC2 * AB_LC2 + 2.0f * AB_L1 * AB_LC2 * cosf(theta2)) +
               AB_I1 + AB_I2;
    float d2   = AB_M2 * (AB_LC2 * AB_LC2 + AB_L1 * AB_LC2 * cosf(theta2)) + AB_I2;
    float phi2 = AB_M2 * AB_LC2 * AB_G * cosf(theta1 + theta2 - AB_HALFPI);
    float phi1 = -AB_M2 * AB_L1 * AB_LC2 * (dtheta2 * dtheta2) * sinf(theta2) -
                 2.0f * AB_M2 * AB_L1 * AB_LC2 * dtheta2 * dtheta1 * sinf(theta2) +
                 (AB_M1 * AB_LC1 + AB_M2 * AB_L1) * AB_G * cosf(theta1 - AB_HALFPI) + phi2;
    float ddtheta2 = (a + d2 / d1 * phi1 - AB_M2 * AB_L1 * AB_LC2 * (dtheta1 * dtheta1) * sinf(theta2) - phi2) /
                     (AB_M2 * (AB_LC2 * AB_LC2) + AB_I2 - (d2 * d2) / d1);
    float ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    d[0] = dtheta1, d[1] = dtheta2, d[2] = ddtheta1, d[3] = ddtheta2;
}

static float acrobot_wrap(float x)
{
    const float diff = AB_PI - -AB_PI;
    while (x > AB_PI) x = x - diff;
    while (x < -AB_PI) x = x + diff;
    return x;
}

static float acrobot_bound(float x, float m) { return fminf(fmaxf(x, -m), m); }

float wgf__acrobot_step(float s[4], int action, bool *terminated)
{
    const float dt2 = AB_DT / 2.0f, dt6 = AB_DT / 6.0f;
    float a = (float)(action - 1); /* AVAIL_TORQUE = [-1, 0, +1] */
    float k1[4], k2[4], k3[4], k4[4], y[4];
    acrobot_dsdt(s, a, k1);
    for (int i = 0; i < 4; i++) y[i] = s[i] + dt2 * k1[i];
    acrobot_dsdt(y, a, k2);
    for (int i = 0; i < 4; i++) y[i] = s[i] + dt2 * k2[i];
    acrobot_dsdt(y, a, k3);
    for (int i = 0; i < 4; i++) y[i] = s[i] + AB_DT * k3[i];
    acrobot_dsdt(y, a, k4);
    for (int i = 0; i < 4; i++) y[i] = s[i] + dt6 * (k1[i] + 2.0f * k2[i] + 2.0f * k3[i] + k4[i]);
    s[0] = acrobot_wrap(y[0]);
    s[1] = acrobot_wrap(y[1]);
    s[2] = acrobot_bound(y[2], AB_MAX_V1);
    s[3] = acrobot_bound(y[3], AB_MAX_V2);
    *terminated = -cosf(s[0]) - cosf(s[1] + s[0]) > 1.0f;
    return *terminated ? 0.0f : -1.0f;
}
