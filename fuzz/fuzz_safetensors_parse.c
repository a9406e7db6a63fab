/* Fuzz target safetensors_parse: the 8-byte length, the JSON header and every tensor
 * entry (wgf__st_open_mem; RELIABILITY.md items 17-21). Accepted tensors are touched at
 * both ends of their byte range. */
#include "fuzz_common.h"
#include "llm/model_files.h"

static volatile uint8_t g_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct wgf__st_file f;
    struct wgf_err      err = {0};
    memset(&f, 0, sizeof f);
    enum wgf_status st = wgf__st_open_mem(data, size, "fuzz.safetensors", &f, &err);
    if (st != WGF_OK) {
        fz_check_refusal(st, &err);
        wgf__st_close(&f); /* must be safe after a failed open */
        return 0;
    }
    for (int64_t i = 0; i < f.n_tensors; i++) {
        const struct wgf__st_tensor *t = &f.tensors[i];
        FZ_REQUIRE(t->begin <= t->end, "begin %llu > end %llu", (unsigned long long)t->begin, (unsigned long long)t->end);
        FZ_REQUIRE(f.data_off + t->end <= size, "tensor past the end");
        if (t->end > t->begin) g_sink ^= data[f.data_off + t->begin] ^ data[f.data_off + t->end - 1];
        FZ_REQUIRE(wgf__st_find(&f, t->name) == t, "tensor '%s' not found by name", t->name);
    }
    wgf__st_close(&f);
    return 0;
}
