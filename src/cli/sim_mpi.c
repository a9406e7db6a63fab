/* wgfuse CLI — the MPI seam of `wgfuse sim` (see sim_mpi.h). The only file that includes
 * <mpi.h> (scripts/check_structure.py enforces it); compiled with WGF_HAVE_MPI when CMake found
 * MPI (option WGF_MPI), else the one-process versions below the #else.
 *
 * Why here, in the CLI: MPI is how processes are launched and talk to each other, a concern
 * of the program, not of the library. libwgfuse's sim part offers what a multi-process
 * driver needs (evaluate a slice, read a fitness range, write the whole vector, evolve) and
 * links no MPI, so an embedding program and the static carried binary stay free of it. */
#include "cli/sim_mpi.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

#ifdef WGF_HAVE_MPI
#include <mpi.h>
#endif

/* The launcher's word on the job size and our local rank (Open MPI; PMI_SIZE / PMIX for
 * others). 1 / 0 when not launched. */
static int env_int(const char *a, const char *b, int dflt)
{
    const char *v = getenv(a);
    if (!v && b) v = getenv(b);
    if (!v || !*v) return dflt;
    char *end = NULL;
    long  x   = strtol(v, &end, 10);
    return end && !*end && x >= 0 && x < 1000000 ? (int)x : dflt;
}

void wgf_mpi_slice(int pop, int size, int r, int *first, int *count)
{
    int base = pop / size, extra = pop % size;
    *count   = base + (r < extra ? 1 : 0);
    *first   = r * base + (r < extra ? r : extra);
}

void wgf_mpi_test_fault(const struct wgf_mpi *m, long gen)
{
    const char *v = getenv("WGF_TEST_MPI_DIE");
    int         r;
    long        g;
    char        how[8] = "";
    if (v && sscanf(v, "%d:%ld:%7s", &r, &g, how) >= 2 && r == m->rank && g == gen) {
        if (!strcmp(how, "hang")) { /* alive but silent: the others' watchdog must end the job */
            fprintf(stderr, "wgfuse: rank %d: WGF_TEST_MPI_DIE: hanging at generation %ld\n", m->rank, gen);
            fflush(stderr);
            for (;;) pause();
        }
        fprintf(stderr, "wgfuse: rank %d: WGF_TEST_MPI_DIE: exiting at generation %ld without MPI_Finalize\n", m->rank, gen);
        fflush(stderr);
        _exit(3);
    }
}

#ifdef WGF_HAVE_MPI

/* The watchdog: armed around each collective with the rank in a static (a signal handler
 * can read nothing else); prints one line with write(2) and _exits. */
static char watchdog_msg[160];
static void on_alarm(int sig)
{
    (void)sig;
    ssize_t n = write(2, watchdog_msg, strlen(watchdog_msg));
    (void)n;
    _exit(1);
}

static void arm(const struct wgf_mpi *m, const char *what)
{
    snprintf(watchdog_msg, sizeof watchdog_msg,
             "wgfuse: rank %d of %d: no answer from the other ranks for %d s in %s (a rank died or hung); exiting\n",
             m->rank, m->size, m->timeout_s, what);
    alarm((unsigned)m->timeout_s);
}
static void disarm(void) { alarm(0); }

static int mpi_fail(const struct wgf_mpi *m, int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int  len                       = 0;
    MPI_Error_string(rc, msg, &len);
    wgf_cli_error("rank %d of %d: %s failed: %s (another rank died?)", m->rank, m->size, what, msg);
    return 1;
}

bool wgf_mpi_built(void) { return true; }

int wgf_mpi_start(struct wgf_mpi *m, int timeout_s)
{
    memset(m, 0, sizeof *m);
    m->size       = env_int("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", 1);
    m->local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", 0);
    m->timeout_s  = timeout_s;
    if (m->size <= 1) {
        m->size = 1;
        return 0;
    }
    int rc = MPI_Init(NULL, NULL);
    if (rc != MPI_SUCCESS) return wgf_cli_error("MPI_Init failed (code %d)", rc), 2;
    m->active = true;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    return 0;
}

void wgf_mpi_finish(struct wgf_mpi *m)
{
    if (m->active) MPI_Finalize();
    m->active = false;
}

void wgf_mpi_abort(struct wgf_mpi *m, int code)
{
    if (m->active) MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

int wgf_mpi_allgather_fitness(struct wgf_mpi *m, int pop, const float *mine, float *all)
{
    int first, count;
    wgf_mpi_slice(pop, m->size, m->rank, &first, &count);
    if (!m->active) {
        if (all + first != mine) memmove(all + first, mine, (size_t)count * sizeof *all);
        return 0;
    }
    int *counts = malloc((size_t)m->size * 2 * sizeof *counts);
    if (!counts) return wgf_cli_error("rank %d: out of memory", m->rank), 1;
    int *displs = counts + m->size;
    for (int r = 0; r < m->size; r++) wgf_mpi_slice(pop, m->size, r, &displs[r], &counts[r]);
    arm(m, "the fitness gather");
    /* this rank's slice already in place in all[]: MPI forbids aliased send/receive buffers */
    const void *send = mine == all + first ? MPI_IN_PLACE : mine;
    int rc = MPI_Allgatherv(send, count, MPI_FLOAT, all, counts, displs, MPI_FLOAT, MPI_COMM_WORLD);
    disarm();
    free(counts);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(m, rc, "MPI_Allgatherv (fitness)");
}

int wgf_mpi_allgather_u64(struct wgf_mpi *m, uint64_t mine, uint64_t *all)
{
    if (!m->active) return all[0] = mine, 0;
    arm(m, "a hash gather");
    int rc = MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    disarm();
    return rc == MPI_SUCCESS ? 0 : mpi_fail(m, rc, "MPI_Allgather (hash)");
}

int wgf_mpi_max_double(struct wgf_mpi *m, double mine, double *out)
{
    if (!m->active) return *out = mine, 0;
    arm(m, "a time reduction");
    int rc = MPI_Allreduce(&mine, out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    disarm();
    return rc == MPI_SUCCESS ? 0 : mpi_fail(m, rc, "MPI_Allreduce (time)");
}

#else /* a build without MPI: a one-process job */

bool wgf_mpi_built(void) { return false; }

int wgf_mpi_start(struct wgf_mpi *m, int timeout_s)
{
    memset(m, 0, sizeof *m);
    m->timeout_s = timeout_s;
    int size     = env_int("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", 1);
    m->size      = 1;
    if (size > 1) {
        wgf_cli_error("this wgfuse was built without MPI (CMake found no Open MPI, or WGF_MPI=OFF): it cannot be one "
                      "of %d ranks; run it alone, or rebuild with libopenmpi-dev installed", size);
        return 2;
    }
    return 0;
}

void wgf_mpi_finish(struct wgf_mpi *m) { (void)m; }
void wgf_mpi_abort(struct wgf_mpi *m, int code)
{
    (void)m;
    exit(code);
}

int wgf_mpi_allgather_fitness(struct wgf_mpi *m, int pop, const float *mine, float *all)
{
    (void)m;
    if (all != mine) memmove(all, mine, (size_t)pop * sizeof *all);
    return 0;
}

int wgf_mpi_allgather_u64(struct wgf_mpi *m, uint64_t mine, uint64_t *all)
{
    (void)m;
    all[0] = mine;
    return 0;
}

int wgf_mpi_max_double(struct wgf_mpi *m, double mine, double *out)
{
    (void)m;
    *out = mine;
    return 0;
}

#endif
