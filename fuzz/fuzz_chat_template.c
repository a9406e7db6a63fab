/* Fuzz target chat_template: a Jinja chat template and a messages list (issue 21).
 * Input: template bytes, a NUL, then JSON variables ({"messages": [...], ...}: strings under
 * "messages" are content); without a NUL or with JSON that does not parse, the template is
 * rendered with a fixed two-message conversation. Small limits (16 KiB of output, 2 MiB of
 * memory, 512 KiB per allocation, 50k steps) keep every input under libFuzzer's
 * -malloc_limit_mb=1 and its time limit. They were 64 KiB / 4 MiB / 200k: the inputs that
 * run into a limit (unbounded loops, doubling strings) dominated the time, and every limit
 * path is reached as well under the smaller numbers, so they are 4x cheaper at no coverage
 * cost (issue 21's 10M executions). Oracle: a refusal is one line with a negative
 * status (fz_check_refusal); a render's mask covers exactly its bytes; no crash, leak or
 * sanitizer report. */
#include <jansson.h>

#include "fuzz_common.h"
#include "llm/jinja/jinja.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *src = (const char *)data;
    const char *nul = memchr(data, 0, size);
    size_t      tl  = nul ? (size_t)(nul - src) : size;
    json_t     *vars = NULL;
    if (nul) vars = json_loadb(nul + 1, size - tl - 1, JSON_ALLOW_NUL, NULL);
    if (!json_is_object(vars)) {
        json_decref(vars);
        vars = json_pack("{s:[{s:s,s:s},{s:s,s:s}],s:b,s:s}", "messages", "role", "system", "content", "Be brief.", "role",
                         "user", "content", "Hi <|im_start|>", "add_generation_prompt", 1, "bos_token", "<s>");
    }
    struct wgf__jinja *t   = NULL;
    struct wgf_err     err = {0};
    enum wgf_status    st  = wgf__jinja_parse(src, tl, &t, &err);
    if (st != WGF_OK) {
        fz_check_refusal(st, &err);
        json_decref(vars);
        return 0;
    }
    struct wgf__jinja_var v[16];
    size_t                n = 0;
    const char           *key;
    json_t               *val;
    json_object_foreach(vars, key, val)
    {
        if (n < 16) v[n].name = key, v[n].value = val, v[n].content = !strcmp(key, "messages"), n++;
    }
    struct wgf__jinja_limits lim = {.max_steps = 50000, .max_output = 16u << 10, .max_mem = 2u << 20,
                                    .max_alloc = 512u << 10, .max_calls = 32};
    struct wgf__jinja_out    out = {0};
    err                          = (struct wgf_err){0};
    st                           = wgf__jinja_render(t, v, n, &lim, 1700000000, &out, &err);
    if (st != WGF_OK) {
        fz_check_refusal(st, &err);
    } else {
        FZ_REQUIRE(out.text && out.mask && out.len <= lim.max_output && out.text[out.len] == '\0', "render output %zu bytes", out.len);
        for (size_t i = 0; i < out.len; i++) FZ_REQUIRE(out.mask[i] <= 1, "mask byte %zu is %u", i, out.mask[i]);
    }
    free(out.text);
    free(out.mask);
    wgf__jinja_free(t);
    json_decref(vars);
    return 0;
}
