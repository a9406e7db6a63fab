/* wgfuse — the LLM backends by name (the CLI, the server and the examples look them up here
 * instead of naming the structs). */
#include <string.h>

#include "wgfuse/llm_run.h"

struct entry {
    const char                   *name, *plan;
    const struct wgf_llm_backend *proto;
};
static const struct entry backends[] = {
    {"cpu-ref", NULL, &wgf_llm_backend_ref},
    {"gpu", "roles", &wgf_llm_backend_gpu_roles}, /* the first plan of a name is its default */
    {"gpu", "ops", &wgf_llm_backend_gpu_ops},     /* the fusion dial (docs/fusion.md)       */
    {"gpu", "fused", &wgf_llm_backend_gpu_fused},
    {"gpu", "mega", &wgf_llm_backend_gpu_mega},
    {"gpu", "unfused", &wgf_llm_backend_gpu},
};

const struct wgf_llm_backend *wgf_llm_backend_find(const char *name, const char *plan)
{
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
        const struct entry *e = &backends[i];
        if (!name || strcmp(e->name, name)) continue;
        if (!plan || !*plan || (e->plan && !strcmp(e->plan, plan))) return e->proto;
    }
    return NULL;
}

const char *wgf_llm_backend_names(void) { return "cpu-ref, gpu"; }
const char *wgf_llm_plan_names(void) { return "roles, ops, fused, mega, unfused"; }
