/* Fuzz target argv: the command-line parsers (RELIABILITY.md item 29). The input is split
 * on NUL bytes into argv; its first byte picks the parser:
 *   0 `wgfuse run` options (run_parse)            4 --dims SPEC (parse_dims)
 *   1 `wgfuse bench dispatch` options             5 wgf_cli_parse_long
 *   2 `wgfuse bench fusion` options               6 wgf_cli_parse_double
 *   3 --tokens / --detokenize lists (parse_ids)   7 `wgfuse tokenize` (whole command; any
 *                                                   -m value is replaced by a missing path)
 * cmd_run.c and cmd_llm.c are compiled into this file so their static parsers are reachable
 * without a new library API (cmd_tokenize.c, cli_common.c and cli_llm.c are linked beside
 * it); none of them loads a model or writes a file. Invariant: a parser returns
 * 0 (ok), -1 (--help) or 2 (usage error) and never touches argv past argc. Usage text and
 * errors go to stdout/stderr: run with -close_fd_mask=3. */
#include "cli/cmd_llm.c"
#include "cli/cmd_run.c"
#include "fuzz_common.h"

int wgf__fuzz_bench_parse(int argc, char **argv, bool fusion);

enum { MAX_ARGS = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned which = data[0] & 7;
    /* argv strings: each NUL-terminated in its own heap copy so ASan sees overreads */
    char  *copy = malloc(size);
    char  *argv[MAX_ARGS + 1];
    int    argc = 0;
    memcpy(copy, data + 1, size - 1);
    copy[size - 1] = 0;
    argv[argc++]   = which == 1 || which == 2 ? "bench" : which == 7 ? "tokenize" : "run";
    if (which == 1 || which == 2) argv[argc++] = which == 1 ? "dispatch" : "fusion";
    for (size_t i = 0; i < size - 1 && argc < MAX_ARGS;) {
        size_t len = strlen(copy + i);
        argv[argc++] = strdup(copy + i);
        i += len + 1;
    }
    int first = which == 1 || which == 2 ? 2 : 1;
    argv[argc] = NULL;
    switch (which) {
    case 0: {
        struct run_opts o;
        int             rc = run_parse(argc, argv, &o);
        FZ_REQUIRE(rc == 0 || rc == -1 || rc == 2, "run_parse returned %d", rc);
        if (rc == 0) FZ_REQUIRE(o.model && o.n_predict >= 0 && o.top_p > 0 && o.top_p <= 1 && o.temp >= 0, "run_parse accepted bad values");
        break;
    }
    case 1:
    case 2: {
        int rc = wgf__fuzz_bench_parse(argc, argv, which == 2);
        FZ_REQUIRE(rc == 0 || rc == -1 || rc == 2, "bench parse returned %d", rc);
        break;
    }
    case 3:
        for (int i = first; i < argc; i++) {
            int32_t *ids = NULL;
            size_t   n   = 0;
            if (wgf_cli_parse_ids("--tokens", argv[i], &ids, &n))
                for (size_t k = 0; k < n; k++) FZ_REQUIRE(ids[k] >= 0, "negative id accepted");
            free(ids);
        }
        break;
    case 4:
        for (int i = first; i < argc; i++) {
            struct wgf_test_model_spec s;
            memset(&s, 0, sizeof s);
            s.dim = 64, s.hidden_dim = 96, s.n_layers = 2, s.n_heads = 4, s.n_kv_heads = 2, s.vocab_size = 512, s.max_seq_len = 256;
            if (parse_dims(argv[i], &s))
                FZ_REQUIRE(s.dim > 0 && s.n_heads > 0 && s.n_kv_heads > 0 && s.dim % s.n_heads == 0, "parse_dims accepted bad dims");
        }
        break;
    case 5:
        for (int i = first; i < argc; i++) {
            long v = 0;
            if (wgf_cli_parse_long("-n", argv[i], -5, 1L << 40, &v)) FZ_REQUIRE(v >= -5 && v <= 1L << 40, "long out of range");
        }
        break;
    case 6:
        for (int i = first; i < argc; i++) {
            double v = 0;
            if (wgf_cli_parse_double("--temp", argv[i], 0, 1e6, &v)) FZ_REQUIRE(v >= 0 && v <= 1e6, "double out of range");
        }
        break;
    case 7: {
        for (int i = first; i + 1 < argc; i++)
            if (!strcmp(argv[i], "-m") || !strcmp(argv[i], "--model")) {
                free(argv[i + 1]);
                argv[i + 1] = strdup("/nonexistent/wgf-fuzz/model.gguf");
            }
        int rc = wgf_cmd_tokenize(argc, argv);
        FZ_REQUIRE(rc == 0 || rc == 1 || rc == 2, "tokenize returned %d", rc);
        break;
    }
    }
    for (int i = first; i < argc; i++) free(argv[i]);
    free(copy);
    return 0;
}
