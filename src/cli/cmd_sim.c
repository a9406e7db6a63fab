/* Placeholder until the simulation lands (owned by the sim work; replace wholesale). */
#include "cli/cli.h"
int wgf_cmd_sim(int argc, char **argv) { (void)argc; (void)argv; wgf_cli_error("sim: not built yet"); return 1; }
int wgf_report_sim_section(FILE *out, wgf_ctx *ctx) { (void)out; (void)ctx; return 0; }
