/* fuzz_argv helper: cmd_bench.c compiled into its own translation unit so its static
 * option parser can be called without running a benchmark. */
#include "cli/cmd_bench.c"

int wgf__fuzz_bench_parse(int argc, char **argv, bool fusion);
int wgf__fuzz_bench_parse(int argc, char **argv, bool fusion)
{
    struct wgf__bench_args a;
    return wgf__bench_parse(argc, argv, fusion, &a);
}
