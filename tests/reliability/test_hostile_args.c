/* Lists, flags and files a careless user gives the CLI ($WGF_CLI) (issue 11, "Reliability
 * II"): every comma-separated flag goes through one splitter (wgf_cli_split_list), so an
 * empty list, an empty item or a 17th item is a usage error (exit 2, one line naming the
 * flag) instead of an empty table with exit 0 or an item dropped unvalidated; sim eval /
 * sim train's evaluation populations (and ES populations) are never refused with GA settings
 * they do not use; a flag of the other algorithm, --autotune without --strategy auto, or a sim
 * trace --state that overflows the environment into nan rows, or an Acrobot angle too large to
 * wrap (the step looped forever), is a usage error;
 * a policy file whose header names a workload it does not fit is refused (under ASan this
 * once read 8,000 bytes past the loaded parameters). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "harness.h"

static char        dir[512];

static void run(struct cli_out *o, const char *args) { cli_run(o, dir, args); }

static long stdout_bytes(void) { return cli_stdout_bytes(dir); }

/* Exit `rc`, one line on stderr containing `want`. */
static void expect(struct wgf_t *t, const char *args, int rc, const char *want)
{
    struct cli_out o;
    run(&o, args);
    char name[300];
    snprintf(name, sizeof name, "%.200s -> exit %d, one line", args, rc);
    wgf_t_check(t, o.rc == rc && cli_lines(o.se) == 1 && strstr(o.se, want), name, "rc %d: %s", o.rc, o.se);
}

static void lists(struct wgf_t *t)
{
    static const struct {
        const char *args, *want;
    } usage[] = {
        {"sim bench --pop ,", "--pop: empty item in ','"},
        {"sim bench --workload ,", "--workload: empty item in ','"},
        {"sim bench --strategy ,,", "--strategy: empty item in ',,'"},
        {"sim bench --steps 10,", "--steps: empty item in '10,'"},
        {"sim bench --pop ''", "--pop: empty list"},
        {"sim bench --pop 2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18", "--pop: more than 16 items"},
        {"sim bench --workload cartpole,cartpole,cartpole,cartpole,cartpole,cartpole,cartpole,cartpole,cartpole,"
         "cartpole,cartpole,cartpole,cartpole,cartpole,cartpole,cartpole,nosuch",
         "--workload: more than 16 items"},
        {"bench fusion --exp ,", "--exp: empty item in ','"},
        {"llm make-test-model --arch qwen2 --dims , -o x", "--dims: empty item in ','"},
        {"llm make-test-model --arch qwen2 --dims dim=64,,vocab=512 -o x", "--dims: empty item"},
        {"sim trace cartpole --actions ,", "--actions: empty item in ','"},
        {"sim trace cartpole --actions 0 --state 1,2,,3", "--state: empty item"},
    };
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) expect(t, usage[i].args, 2, usage[i].want);
    /* every action is checked before the first CSV line */
    expect(t, "sim trace cartpole --actions 0,1,7", 2, "--actions: '7' is not an integer in [0, 1]");
    wgf_t_check(t, stdout_bytes() == 0, "sim trace with a bad action prints no CSV", "%ld bytes on stdout", stdout_bytes());
    /* help is answered everywhere (issue 10 fixed these two; kept here as regressions) */
    struct cli_out o;
    run(&o, "llm bench --help");
    wgf_t_check(t, o.rc == 0 && stdout_bytes() > 0 && !o.se[0], "llm bench --help: usage on stdout, exit 0", "rc %d: %s",
                o.rc, o.se);
    run(&o, "llm make-test-model --help");
    wgf_t_check(t, o.rc == 0 && stdout_bytes() > 0 && !o.se[0], "llm make-test-model --help: usage on stdout, exit 0",
                "rc %d: %s", o.rc, o.se);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) fputs(text, f), fclose(f);
}

static void sim_flags(struct wgf_t *t)
{
    char p[600], a[1400];
    /* the ASan finding: a rastrigin header with 8 parameters (sim eval read 8,000 bytes past
     * them, and the release build printed "mean return nan") */
    snprintf(p, sizeof p, "%s/rastrigin.policy", dir);
    write_file(p, "wgfuse-sim-policy 1\nworkload rastrigin\nshape 0 8 0 0\nparams 8\n1\n2\n3\n4\n5\n6\n7\n8\n");
    snprintf(a, sizeof a, "sim eval '%s'", p);
    expect(t, a, 1, "workload 'rastrigin' has no policy file");

    /* a small valid policy, evaluated on 4 episodes: not refused with "GA settings: elites" */
    snprintf(p, sizeof p, "%s/tiny.policy", dir);
    write_file(p, "wgfuse-sim-policy 1\nworkload cartpole\nshape 4 1 2 0\nparams 9\n0 0 0 0 0 0 0 0 0\n");
    snprintf(a, sizeof a, "sim eval '%s' --episodes 4", p);
    struct cli_out o;
    run(&o, a);
    wgf_t_check(t, o.rc == 0, "sim eval --episodes 4: runs (no GA settings apply to an evaluation)", "rc %d: %s", o.rc, o.se);

    /* sim train's evaluation population of 2 episodes, and a population smaller than the
     * default 16 elites */
    snprintf(p, sizeof p, "%s/t.policy", dir);
    snprintf(a, sizeof a, "sim train cartpole --pop 8 --gens 1 --eval-episodes 2 --target -1000000 --out '%s'", p);
    run(&o, a);
    wgf_t_check(t, o.rc == 0 && access(p, F_OK) == 0, "sim train --pop 8 --eval-episodes 2: trains and saves", "rc %d: %s",
                o.rc, o.se);
    expect(t, "sim train cartpole --pop 8 --elites 16", 2, "--elites 16 must be less than --pop 8");

    /* ES with a population below the GA's default 16 elites: trains (was refused with "sim: GA
     * settings: elites 16", settings ES does not use) */
    snprintf(p, sizeof p, "%s/es.policy", dir);
    snprintf(a, sizeof a, "sim train cartpole --algo es --pop 8 --gens 1 --eval-episodes 2 --target -1000000 --out '%s'", p);
    run(&o, a);
    wgf_t_check(t, o.rc == 0 && access(p, F_OK) == 0, "sim train --algo es --pop 8: trains and saves", "rc %d: %s", o.rc,
                o.se);
    /* one algorithm's settings given to the other, and --autotune without auto: refused, not ignored */
    expect(t, "sim train cartpole --algo es --elites 3", 2, "--elites applies to --algo ga");
    expect(t, "sim train cartpole --mut-sigma 0.5 --algo es", 2, "--mut-sigma applies to --algo ga");
    expect(t, "sim train cartpole --lr 0.1", 2, "--lr applies to --algo es");
    expect(t, "sim bench --strategy fused --autotune", 2, "--autotune applies to --strategy auto");
    /* a --state that overflows the environment (CartPole's theta_dot^2): no nan rows */
    expect(t, "sim trace cartpole --actions 0,1 --state 0,0,0,1e30", 2, "--state 0,0,0,1e30: the cartpole state is not finite");
    wgf_t_check(t, stdout_bytes() == 0, "sim trace with an overflowing --state prints no CSV", "%ld bytes on stdout",
                stdout_bytes());
    expect(t, "sim trace acrobot --actions 0 --state 0,0,1e30,1e30", 2, "the acrobot state is not finite after step 1");
    /* an angle whose wrap into [-pi, pi] never ended (x - 2 pi == x in float): refused, not a hang */
    expect(t, "sim trace acrobot --actions 0 --state 0,1e9,0,0", 2, "acrobot's theta2 1e+09 is outside [-1000, 1000]");
}

int main(void)
{
    struct wgf_t t = {0};
    wgf_t_tmpdir("hostile_args", dir, sizeof dir);
    lists(&t);
    sim_flags(&t);
    return wgf_t_finish(&t);
}
