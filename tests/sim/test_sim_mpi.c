/* wgfuse sim under MPI (issue 16): `mpirun -n R wgfuse sim train` splits the population over
 * R processes, gathers the fitness and evolves identically on every rank, so R = 2 and R = 3
 * must end with exactly the one-process run's population (its SipHash, "# population hash");
 * GA with an uneven split (255 genomes over 2 and 3 ranks) and OpenAI-ES. A rank that dies
 * mid-run (WGF_TEST_MPI_DIE=1:1: exit without MPI_Finalize) or stops answering (1:1:hang,
 * the ranks' watchdog, --mpi-timeout 5) must end the job with a non-zero exit and a line
 * naming the cause, within a bound (timeout(1) around every mpirun: a hang fails the test,
 * it does not stall CI).
 * Runs on lavapipe, one adapter shared by every rank (--oversubscribe: 3 ranks on 2 cores).
 * Skips (77) only when this build has no MPI (WGF_MPI_BUILT=OFF: CMake found no Open MPI, or
 * the ASan/TSan builds, which leave MPI out: Open MPI is not sanitizer-clean); a build with
 * MPI and no mpirun fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/gpu.h"

/* mpirun as root needs these; vader's CMA single copy needs ptrace rights containers lack */
#define MPI_ENV                                                                                         \
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none " \
    "OMPI_MCA_rmaps_base_oversubscribe=1"

/* The "# population hash H" of a run's output, "" if none. */
static void hash_of(const char *out, char h[17])
{
    const char *p = strstr(out, "# population hash ");
    h[0]          = 0;
    if (p) sscanf(p + 18, "%16[0-9a-f]", h);
}

int main(void)
{
    struct wgf_t t = {0};
    const char  *cli = getenv("WGF_CLI"), *built = getenv("WGF_MPI_BUILT"), *mpirun = getenv("WGF_MPIRUN");
    static char  out[1 << 16];
    char         cmd[4096], dir[512];
    if (!cli || !getenv("WGF_TEST_TMP")) {
        wgf_t_skip(&t, "sim MPI", "WGF_CLI or WGF_TEST_TMP not set (run under ctest)");
        return wgf_t_finish(&t);
    }
    if (!built || strcmp(built, "ON") != 0) {
        wgf_t_skip(&t, "sim MPI", "this build has no MPI (sanitizer build, or CMake found no Open MPI: scripts/setup.sh installs it)");
        return wgf_t_finish(&t);
    }
    if (!mpirun || !*mpirun) mpirun = "mpirun";
    wgf_t_tmpdir("sim_mpi", dir, sizeof dir);

    struct {
        const char *name, *args;
    } cases[] = {
        {"GA, 255 genomes (uneven slices)", "cartpole --pop 255 --gens 4 --seed 5"},
        {"ES, 256 genomes", "cartpole --algo es --pop 256 --gens 4 --seed 5"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char h1[17], hr[17], name[160];
        /* --target out of reach: every run does exactly --gens generations (exit 1: not solved) */
        snprintf(cmd, sizeof cmd, "timeout 120 '%s' sim train %s --target 1e9 --out '%s/one.policy' 2>&1", cli,
                 cases[k].args, dir);
        int rc = wgf_t_run(cmd, out, sizeof out);
        hash_of(out, h1);
        snprintf(name, sizeof name, "sim MPI %s: one process", cases[k].name);
        if (!wgf_t_check(&t, rc == 1 && h1[0] && strstr(out, "# not solved after 4 generations"), name,
                         "exit %d, hash '%s': %.400s", rc, h1, out))
            continue;
        for (int ranks = 2; ranks <= 3; ranks++) {
            snprintf(cmd, sizeof cmd,
                     "%s timeout 180 '%s' --oversubscribe -n %d '%s' sim train %s --target 1e9 --out '%s/r.policy' 2>&1",
                     MPI_ENV, mpirun, ranks, cli, cases[k].args, dir);
            rc = wgf_t_run(cmd, out, sizeof out);
            hash_of(out, hr);
            char agree[32];
            snprintf(agree, sizeof agree, "(%d ranks agree)", ranks);
            snprintf(name, sizeof name, "sim MPI %s: %d ranks == one process", cases[k].name, ranks);
            wgf_t_check(&t, rc != 124 && hr[0] && !strcmp(h1, hr) && strstr(out, agree) && strstr(out, "# MPI: "),
                        name, "exit %d, hash %s vs one process %s: %.600s", rc, hr[0] ? hr : "(none)", h1, out);
        }
    }

    /* a rank that dies, and one that hangs: the job ends, non-zero, with the cause named */
    struct {
        const char *fault, *name, *needle;
    } faults[] = {
        {"1:1", "rank 1 exits mid-run: the job ends", "exiting at generation 1 without MPI_Finalize"},
        {"1:1:hang", "rank 1 hangs mid-run: the watchdog ends the job", "no answer from the other ranks for 5 s"},
    };
    for (size_t k = 0; k < sizeof faults / sizeof faults[0]; k++) {
        uint64_t t0 = wgf_now_ns();
        snprintf(cmd, sizeof cmd,
                 "%s WGF_TEST_MPI_DIE=%s timeout 120 '%s' --oversubscribe -n 3 '%s' sim train cartpole --pop 255 --gens 6 "
                 "--target 1e9 --mpi-timeout 5 --out '%s/d.policy' 2>&1",
                 MPI_ENV, faults[k].fault, mpirun, cli, dir);
        int    rc   = wgf_t_run(cmd, out, sizeof out);
        double secs = (double)(wgf_now_ns() - t0) / 1e9;
        wgf_t_check(&t, rc != 0 && rc != 124 && strstr(out, faults[k].needle) && !strstr(out, "# population hash"),
                    faults[k].name, "exit %d after %.1f s (124 = the 120 s bound hit: a hang): %.700s", rc, secs, out);
    }
    return wgf_t_finish(&t);
}
