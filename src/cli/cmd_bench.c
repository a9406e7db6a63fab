/* Placeholder until the bench lands (owned by the bench work; replace wholesale). */
#include "cli/cli.h"
int wgf_cmd_bench(int argc, char **argv) { (void)argc; (void)argv; wgf_cli_error("bench: not built yet"); return 1; }
int wgf_report_bench_section(FILE *out, wgf_ctx *ctx) { (void)out; (void)ctx; return 0; }
