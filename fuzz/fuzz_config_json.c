/* Fuzz target config_json: a Hugging Face config.json (wgf__hf_config_parse, then the
 * derived-invariant check the loader runs; RELIABILITY.md items 12 and 23). */
#include "fuzz_common.h"
#include "llm/model_files.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct wgf_llm_config cfg;
    struct wgf_err        err = {0};
    memset(&cfg, 0, sizeof cfg);
    enum wgf_status st = wgf__hf_config_parse("config.json", (const char *)data, size, &cfg, &err);
    if (st == WGF_OK) st = wgf__llm_config_check("config.json", &cfg, &err);
    if (st != WGF_OK) fz_check_refusal(st, &err);
    return 0;
}
