/* wgfuse — command-line entry point: global flags, then one subcommand. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/sanitize_pin.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: wgfuse [--webgpu-lib PATH] [--adapter INDEX|NAME|TYPE] [--robust-shaders] [--backend-labels] [--quiet]\n"
            "              COMMAND [ARGS]\n"
            "       wgfuse --version\n"
            "\n"
            "commands:\n"
            "  info                 list WebGPU adapters: name, backend, type, driver, features, limits\n"
            "  report               the main job: device, self-check, dispatch-overhead, sim and LLM-dial summaries\n"
            "  bench dispatch|fusion  per-dispatch overhead and fusion experiments (see --help)\n"
            "  sim train|eval|bench|trace  fused sequential simulation and evolution\n"
            "  run -m MODEL -p PROMPT  generate text with an LLM (HF directory or GGUF)\n"
            "  tokenize -m MODEL -p TEXT  print token ids as JSON\n"
            "  serve -m MODEL       an OpenAI-compatible HTTP server (chat/completions, completions, models)\n"
            "  llm make-test-model|load-check|bench  LLM utilities\n"
            "  advise --calibrate|--llm M|--shape S  measured cost model: predicts every plan, picks one\n"
            "  version              version, git commit, build type, dependencies, WebGPU library\n"
            "\n"
            "global flags (before or after COMMAND):\n"
            "  --webgpu-lib PATH    webgpu.h implementation to load (default: $WGFUSE_WEBGPU_LIB, then the\n"
            "                       Dawn library installed by `make setup`)\n"
            "  --adapter SEL        adapter index, type (discrete|integrated|cpu) or name substring\n"
            "  --robust-shaders     keep WebGPU's bounds clamps in every shader (off by default: wgfuse's\n"
            "                       own kernels, indices from validated shapes; docs/runtime.md)\n"
            "  --backend-labels     Dawn names each Vulkan object after its wgfuse label, for driver tools\n"
            "                       (bench/vkstats: registers per kernel role; docs/runtime.md)\n"
            "  --quiet              no progress output on stderr\n");
}

static const struct {
    const char *name;
    int (*fn)(int, char **);
} commands[] = {
    {"info", wgf_cmd_info},   {"report", wgf_cmd_report}, {"run", wgf_cmd_run},     {"tokenize", wgf_cmd_tokenize},
    {"serve", wgf_cmd_serve},
    {"llm", wgf_cmd_llm},     {"sim", wgf_cmd_sim},       {"bench", wgf_cmd_bench},   {"version", wgf_cmd_version},
    {"--version", wgf_cmd_version}, {"advise", wgf_cmd_advise},
};

/* A mapped model file that shrinks under us (truncated download finishing, file replaced,
 * disk error) turns the next access into SIGBUS. Nothing can continue from there, but the
 * user gets one line naming the file and exit code 1 instead of a crash. Only
 * async-signal-safe calls here. */
static void on_sigbus(int sig)
{
    (void)sig;
    static const char a[] = "wgfuse: error: ", b[] = ": the memory-mapped file was truncated or became "
                                                     "unreadable while in use (SIGBUS); stopping\n";
    const char *path = wgf_cli.mapped_path[0] ? wgf_cli.mapped_path : "an input file";
    ssize_t r = write(2, a, sizeof a - 1);
    r = write(2, path, strlen(path));
    r = write(2, b, sizeof b - 1);
    (void)r;
    _exit(1);
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigbus;
    sigaction(SIGBUS, &sa, NULL);
    /* pull the global flags out wherever they are; the rest goes to the subcommand */
    wgf_sanitize_pin_drivers();
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    if (!rest) return 1;
    int nrest = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--webgpu-lib") || !strcmp(a, "--adapter")) {
            if (i + 1 >= argc) {
                wgf_cli_error("%s needs a value", a);
                free(rest);
                return 2;
            }
            if (!strcmp(a, "--webgpu-lib")) wgf_cli.webgpu_lib = argv[++i];
            else wgf_cli.adapter = argv[++i];
        } else if (!strncmp(a, "--webgpu-lib=", 13)) {
            wgf_cli.webgpu_lib = a + 13;
        } else if (!strncmp(a, "--adapter=", 10)) {
            wgf_cli.adapter = a + 10;
        } else if (!strcmp(a, "--quiet")) {
            wgf_cli.quiet = true;
        } else if (!strcmp(a, "--robust-shaders")) {
            wgf_cli.robust_shaders = true;
        } else if (!strcmp(a, "--backend-labels")) {
            wgf_cli.backend_labels = true;
        } else {
            rest[nrest++] = argv[i];
        }
    }
    int rc = 2;
    if (nrest == 0) {
        usage(stderr);
    } else if (!strcmp(rest[0], "--help") || !strcmp(rest[0], "-h") || !strcmp(rest[0], "help")) {
        usage(stdout);
        rc = 0;
    } else {
        size_t i;
        for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (!strcmp(rest[0], commands[i].name)) break;
        if (i == sizeof commands / sizeof commands[0]) {
            wgf_cli_error("unknown command '%s' (try `wgfuse --help`)", rest[0]);
        } else {
            fflush(stdout);
            rc = commands[i].fn(nrest, rest);
        }
    }
    free(rest);
    return rc;
}
