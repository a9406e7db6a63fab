/* Fuzz target tokenizer_json: a Hugging Face tokenizer.json (wgf_tokenizer_load_json, which
 * takes paths: the bytes go through a memfd; RELIABILITY.md item 22). Input after a
 * "\n\0\n" separator becomes tokenizer_config.json. An accepted tokenizer encodes and
 * decodes a fixed text. */
#include "fuzz_common.h"
#include "wgfuse/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t            tj_len = size;
    const char       *cfg    = NULL;
    for (size_t i = 0; i + 3 <= size; i++) {
        if (data[i] == '\n' && data[i + 1] == 0 && data[i + 2] == '\n') {
            tj_len = i;
            cfg    = fz_memfd_path(1, data + i + 3, size - i - 3);
            break;
        }
    }
    const char           *path = fz_memfd_path(0, data, tj_len);
    struct wgf_err        err  = {0};
    struct wgf_tokenizer *tok  = NULL;
    enum wgf_status       st   = wgf_tokenizer_load_json(path, cfg, &tok, &err);
    if (st != WGF_OK) {
        fz_check_refusal(st, &err);
        FZ_REQUIRE(tok == NULL, "tokenizer returned with an error");
        return 0;
    }
    static const char text[] = "Hello world, <|im_start|>user\n caf\xC3\xA9 12345 \xFF\x80";
    int32_t          *ids     = NULL;
    size_t            n       = 0;
    st = wgf_tokenizer_encode(tok, text, sizeof text - 1, true, &ids, &n, &err);
    if (st == WGF_OK) {
        char  *out = NULL;
        size_t olen;
        st = wgf_tokenizer_decode(tok, ids, n, true, &out, &olen, &err);
        FZ_REQUIRE(st == WGF_OK, "decode of encoded ids failed: %s", err.msg);
        free(out);
    } else {
        /* a hostile pre-tokenizer regex may hit its match limit: WGF_ERR_LIMIT */
        fz_check_refusal(st, &err);
    }
    free(ids);
    wgf_tokenizer_free(tok);
    return 0;
}
