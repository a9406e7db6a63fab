/* wgfuse CLI — what the LLM commands (run, llm bench) share: the thread default and the
 * forward backend chosen by --backend. */
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "wgfuse/llm_run.h"

uint32_t wgf_cli_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > 16) n = 16;
    return (uint32_t)n;
}

int wgf_cli_backend_flag(struct wgf_cli_backend *b, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--no-subgroups")) {
        b->no_subgroups = true;
        return 1;
    }
    if (strcmp(a, "--backend") && strcmp(a, "--plan") && strcmp(a, "--weights")) return 0;
    if (*i + 1 >= argc) {
        wgf_cli_error("%s needs a value", a);
        return 2;
    }
    const char *v = argv[++*i];
    if (!strcmp(a, "--backend")) {
        if (strcmp(v, "cpu-ref") && strcmp(v, "gpu")) {
            wgf_cli_error("--backend: '%s' is not a backend (%s)", v, wgf_llm_backend_names());
            return 2;
        }
        b->name = v;
    } else if (!strcmp(a, "--plan")) {
        if (!wgf_llm_backend_find("gpu", v)) {
            wgf_cli_error("--plan: '%s' is not a GPU plan (%s)", v, wgf_llm_plan_names());
            return 2;
        }
        b->plan = v;
    } else {
        if (strcmp(v, "f16") && strcmp(v, "f32")) {
            wgf_cli_error("--weights: '%s' is not f16 or f32", v);
            return 2;
        }
        b->weights_f32 = !strcmp(v, "f32");
    }
    return 1;
}

void wgf_cli_backend_usage(FILE *f)
{
    fprintf(f, "  --backend B            cpu-ref (default: the plain-C reference) or gpu (WebGPU; the global\n"
               "                         --adapter / --webgpu-lib pick the device)\n"
               "  --plan P               gpu: roles (default: ~5 fused kernel roles per layer, sampling on the\n"
               "                         GPU), the other points of the fusion dial on the same weights and\n"
               "                         kernels: ops (one dispatch per eager-framework op), fused (ops + the\n"
               "                         paper's 3 fusions), mega (every layer in one dispatch of one\n"
               "                         workgroup); or unfused (the first GPU plan, one role per dispatch, f32)\n"
               "  --weights f16|f32      gpu roles/ops/fused/mega: weight format on the GPU (default f16, two\n"
               "                         per 32-bit word)\n"
               "  --no-subgroups         gpu roles/ops/fused/mega: reductions through workgroup memory\n");
}

bool wgf_cli_backend_open(const struct wgf_cli_backend *b, const char *model, const struct wgf_llm_model *m,
                          struct wgf_llm_backend_options *bo, wgf_ctx **ctx, struct wgf_llm_backend *be)
{
    struct wgf_err err = {0};
    *ctx               = NULL;
    /* --plan / --weights / --no-subgroups alone imply --backend gpu */
    bool gpu = b->name ? !strcmp(b->name, "gpu") : (b->plan || b->weights_f32 || b->no_subgroups);
    if (!gpu && (b->plan || b->weights_f32 || b->no_subgroups)) {
        wgf_cli_error("--plan, --weights and --no-subgroups apply to --backend gpu, not %s", b->name);
        return false;
    }
    const struct wgf_llm_backend *proto = wgf_llm_backend_find(gpu ? "gpu" : "cpu-ref", b->plan);
    if (gpu && proto == &wgf_llm_backend_gpu && (b->weights_f32 || b->no_subgroups)) {
        wgf_cli_error("--weights and --no-subgroups apply to the plans roles, ops, fused and mega");
        return false;
    }
    if (gpu) {
        struct wgf_gpu_options go = wgf_cli_gpu_options();
        if (wgf_ctx_create(&go, ctx, &err) != WGF_OK) {
            wgf_cli_error("--backend gpu: %s", err.msg);
            return false;
        }
        bo->gpu = *ctx;
    }
    bo->weights_f32  = b->weights_f32;
    bo->no_subgroups = b->no_subgroups;
    if (wgf_llm_backend_open(be, proto, m, bo, &err) != WGF_OK) {
        wgf_cli_error("%s: %s", model, err.msg);
        return false;
    }
    return true;
}

/* The model's own chat template is not the family the prompt is formatted with: say what
 * is done instead of formatting silently. */
void wgf_cli_warn_template(const char *model, const struct wgf_tokenizer *tok, enum wgf_chat_template kind)
{
    if (wgf_chat_template_fits(tok, kind)) return;
    if (kind == WGF_CHAT_NONE)
        fprintf(stderr, "wgfuse: warning: %s: the model's chat_template is none of the built-in families (chatml, "
                        "llama3, phi3); the prompt is sent without a template\n", model);
    else
        fprintf(stderr, "wgfuse: warning: %s: the model's chat_template is not the built-in '%s' family; the prompt is "
                        "formatted with the built-in '%s' template anyway (--no-template sends the text as is)\n",
                model, wgf_chat_template_name(kind == WGF_CHAT_QWEN2 ? WGF_CHAT_CHATML : kind), wgf_chat_template_name(kind));
}
