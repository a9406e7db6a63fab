/* wgfuse sim CLI: `sim train cartpole` reaches the solved level with a fixed seed and saves
 * the policy atomically, `sim eval` reloads it, `sim trace` prints the C environment as CSV
 * (checked against a known Gymnasium step), usage errors exit 2.
 * Runs the wgfuse binary named by $WGF_CLI (set by ctest). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"

/* Run a shell command, capture up to cap bytes of stdout+stderr; return the exit code. */
static int run(const char *cmd, char *out, size_t cap)
{
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
    struct wgf_t t = {0};
    const char *cli = getenv("WGF_CLI");
    char dir[512], cmd[2048], policy[600];
    static char out[1 << 16];
    if (!cli || !getenv("WGF_TEST_TMP")) {
        wgf_t_skip(&t, "sim CLI", "WGF_CLI or WGF_TEST_TMP not set (run under ctest)");
        return wgf_t_finish(&t);
    }
    wgf_t_tmpdir("sim_cli", dir, sizeof dir);
    snprintf(policy, sizeof policy, "%s/cartpole.policy", dir);
    remove(policy);

    snprintf(cmd, sizeof cmd, "'%s' sim train cartpole --pop 512 --seed 7 --out '%s' 2>&1", cli, policy);
    int rc = run(cmd, out, sizeof out);
    const char *solved = strstr(out, "# solved:");
    struct stat st;
    char line[256] = "";
    if (solved) sscanf(solved, "%255[^\n]", line);
    wgf_t_check(&t, rc == 0 && solved && stat(policy, &st) == 0 && strstr(out, "gen,best,mean,gen_per_s"),
                "sim train cartpole solves (lavapipe)", "exit %d: %s", rc, solved ? line : out);

    snprintf(cmd, sizeof cmd, "'%s' sim eval '%s' --episodes 100 2>&1", cli, policy);
    rc = run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 0 && strstr(out, "-> solved"), "sim eval reloads the policy", "exit %d: %.300s", rc, out);

    /* Gymnasium CartPole-v1 from (0, 0, 0.1, 0) with action 1, computed by hand from
     * cartpole.py's step: x_dot = 0.02 * xacc = 0.195..., theta = 0.1 (Euler uses the old
     * theta_dot = 0). */
    snprintf(cmd, sizeof cmd, "'%s' sim trace cartpole --state 0,0,0.1,0 --actions 1,1 2>&1", cli);
    rc = run(cmd, out, sizeof out);
    float x, xd, th, thd;
    const char *row1 = strstr(out, "\n1,1,1,0,");
    bool ok = rc == 0 && strncmp(out, "t,action,reward,terminated,x,x_dot,theta,theta_dot", 50) == 0 && row1 &&
              sscanf(row1 + 9, "%f,%f,%f,%f", &x, &xd, &th, &thd) == 4 && x == 0.0f && th == 0.1f && xd > 0.19f &&
              xd < 0.2f && thd < 0.0f;
    wgf_t_check(&t, ok, "sim trace prints CSV", "exit %d: %.200s", rc, out);

    snprintf(cmd, sizeof cmd, "'%s' sim train nosuchenv 2>&1", cli);
    int r1 = run(cmd, out, sizeof out);
    snprintf(cmd, sizeof cmd, "'%s' sim bench --strategy chunked:0 2>&1", cli);
    int r2 = run(cmd, out, sizeof out);
    snprintf(cmd, sizeof cmd, "'%s' sim trace cartpole --actions 0,7 2>&1", cli);
    int r3 = run(cmd, out, sizeof out);
    wgf_t_check(&t, r1 == 2 && r2 == 2 && r3 == 2, "sim usage errors exit 2", "%d %d %d", r1, r2, r3);
    return wgf_t_finish(&t);
}
