/* Placeholder until LLM engine I lands (owned by the llm work; replace wholesale). */
#include "cli/cli.h"
int wgf_cmd_run(int argc, char **argv) { (void)argc; (void)argv; wgf_cli_error("run: LLM engine not built yet"); return 1; }
int wgf_cmd_tokenize(int argc, char **argv) { (void)argc; (void)argv; wgf_cli_error("tokenize: LLM engine not built yet"); return 1; }
int wgf_cmd_llm(int argc, char **argv) { (void)argc; (void)argv; wgf_cli_error("llm: LLM engine not built yet"); return 1; }
