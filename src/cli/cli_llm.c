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

bool wgf_cli_backend_name_ok(const char *v)
{
    if (!strcmp(v, "cpu-ref") || !strcmp(v, "gpu")) return true;
    wgf_cli_error("--backend: '%s' is not a backend (cpu-ref, gpu)", v);
    return false;
}

bool wgf_cli_backend_open(const char *name, const char *model, const struct wgf_llm_model *m,
                          struct wgf_llm_backend_options *bo, wgf_ctx **ctx, struct wgf_llm_backend *be)
{
    struct wgf_err err = {0};
    *ctx               = NULL;
    bool gpu           = name && !strcmp(name, "gpu");
    if (gpu) {
        struct wgf_gpu_options go = wgf_cli_gpu_options();
        if (wgf_ctx_create(&go, ctx, &err) != WGF_OK) {
            wgf_cli_error("--backend gpu: %s", err.msg);
            return false;
        }
        bo->gpu = *ctx;
    }
    if (wgf_llm_backend_open(be, gpu ? &wgf_llm_backend_gpu : &wgf_llm_backend_ref, m, bo, &err) != WGF_OK) {
        wgf_cli_error("%s: %s", model, err.msg);
        return false;
    }
    return true;
}
