/* wgfuse llm quantize IN OUT --type T [--pure] [--no-tokenizer]: a model (HF directory or
 * GGUF) to a quantized GGUF llama.cpp loads, with llama.cpp's mixtures (docs/llm.md).
 * Exit codes: 0 ok, 1 failure (one line naming the file and tensor), 2 usage error. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "wgfuse/llm.h"

static void quantize_usage(FILE *f)
{
    fprintf(f,
            "usage: wgfuse llm quantize IN OUT --type TYPE [--pure] [--no-tokenizer]\n"
            "  IN: a Hugging Face directory or a GGUF file; OUT: the GGUF to write.\n"
            "  TYPE: %s.\n"
            "  The _S/_M/_L recipes and the output matrix follow llama-quantize's rules; --pure puts every\n"
            "  matrix in TYPE's base type. Rows that are not whole blocks fall back as llama.cpp does\n"
            "  (Q2_K, Q3_K->Q4_0, Q4_K->Q5_0, Q5_K->Q5_1, Q6_K->Q8_0, else F16). F16, BF16, F32: every matrix in\n"
            "  that type, no quantization (an HF model converted to GGUF). A GGUF input's metadata (tokenizer, chat\n"
            "  template) is copied; an HF input's tokenizer.json is converted (--no-tokenizer: weights only).\n",
            wgf_llm_quantize_types());
}

int wgf__cmd_llm_quantize(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *type = NULL;
    bool        pure = false, no_tok = false;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (wgf_cli_is_help(a)) {
            quantize_usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--pure")) pure = true;
        else if (!strcmp(a, "--no-tokenizer")) no_tok = true;
        else if (!strcmp(a, "--type")) {
            if (!(v = wgf_cli_flag_value(argc, argv, &i))) return 2;
            type = v;
        } else if (a[0] == '-' && a[1]) {
            wgf_cli_error("llm quantize: unknown flag '%s'", a);
            return 2;
        } else if (!in) in = a;
        else if (!out) out = a;
        else {
            wgf_cli_error("llm quantize: unexpected argument '%s' (IN and OUT are given)", a);
            return 2;
        }
    }
    if (!in || !out || !type) {
        wgf_cli_error("llm quantize: %s is required", !in ? "IN" : !out ? "OUT" : "--type");
        quantize_usage(stderr);
        return 2;
    }
    struct wgf_llm_quantize_stats st;
    struct wgf_err                err = {0};
    enum wgf_status               s   = wgf_llm_quantize(in, out, type, pure, no_tok, &st, &err);
    if (s) {
        wgf_cli_error("%s", err.msg);
        return s == WGF_ERR_ARG ? 2 : 1;
    }
    printf("%s: %s, %.1f MB of weights -> %.1f MB file; matrices:", out, type, (double)st.in_weight_bytes / 1e6,
           (double)st.out_file_bytes / 1e6);
    for (int t = 0; t < WGF_DT_COUNT; t++)
        if (st.n_tensors[t]) printf(" %d %s", st.n_tensors[t], wgf_dtype_str((enum wgf_dtype)t));
    printf("\n");
    return 0;
}
