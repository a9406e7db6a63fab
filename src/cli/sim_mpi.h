/* wgfuse CLI — the MPI seam of `wgfuse sim train|bench` (src/cli/sim_mpi.c, the only file that
 * includes <mpi.h>; docs/sim.md "Beyond one GPU").
 *
 * `mpirun -n R wgfuse sim train|bench ...` runs R processes. Each holds the whole population
 * on its own adapter, evaluates its slice of the genomes, and the fitness slices are gathered
 * (Allgatherv) so that every process evolves the same population with the same kernels from
 * the same seed: an R-rank run computes exactly the 1-rank result. This file is the only
 * place that knows MPI; without it (a build with WGF_MPI=OFF or no Open MPI found) the same
 * functions run a one-process job, and a launch of more than one rank is refused.
 *
 * Every collective is bounded: a watchdog (SIGALRM) ends a process that waits more than the
 * timeout for the others (a rank that died or hung) with one line naming its rank, and Open
 * MPI's mpirun ends the job when a process exits without MPI_Finalize. */
#ifndef WGF_CLI_SIM_MPI_H
#define WGF_CLI_SIM_MPI_H
#include <stdbool.h>
#include <stdint.h>

struct wgf_mpi {
    int  rank, size;   /* this process and the job's processes (1, 0 without a launch)   */
    int  local_rank;   /* on this host (OMPI_COMM_WORLD_LOCAL_RANK): picks the adapter     */
    bool active;       /* MPI_Init ran (size > 1)                                        */
    int  timeout_s;    /* watchdog around every collective                               */
};

/* True when this wgfuse was built with MPI (WGF_MPI). */
bool wgf_mpi_built(void);
/* The job this process belongs to, from the launcher's environment; initialises MPI when the
 * job has more than one process. 0 ok; 2 after printing the reason (a multi-rank launch of a
 * build without MPI, an MPI_Init failure). */
int  wgf_mpi_start(struct wgf_mpi *m, int timeout_s);
/* MPI_Finalize (no-op for a one-process job). */
void wgf_mpi_finish(struct wgf_mpi *m);
/* End the whole job now (MPI_Abort; exit for a one-process job). */
void wgf_mpi_abort(struct wgf_mpi *m, int code);

/* The slice of `pop` genomes rank r of `size` evaluates: contiguous, sizes differ by <= 1. */
void wgf_mpi_slice(int pop, int size, int r, int *first, int *count);

/* all[] = every rank's slice of the fitness vector (rank r's `count` values at its `first`,
 * as wgf_mpi_slice gives them), from this rank's `mine`. 0 ok; 1 after printing the error. */
int wgf_mpi_allgather_fitness(struct wgf_mpi *m, int pop, const float *mine, float *all);
/* Every rank's 64-bit value into all[size]; 0 ok; 1 after printing. */
int wgf_mpi_allgather_u64(struct wgf_mpi *m, uint64_t mine, uint64_t *all);
/* Every rank's double; the maximum into *out (e.g. the slowest rank's time). */
int wgf_mpi_max_double(struct wgf_mpi *m, double mine, double *out);

/* Test-only fault (tests/sim/test_sim_mpi.c): WGF_TEST_MPI_DIE="RANK:GEN" makes that rank
 * exit(3) at the start of generation GEN, without MPI_Finalize, as a crashed process would;
 * "RANK:GEN:hang" makes it stop answering instead (the watchdog's case). */
void wgf_mpi_test_fault(const struct wgf_mpi *m, long gen);

#endif
