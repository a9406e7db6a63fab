/* Fuzz target gguf_vocab: a tokenizer from a GGUF file's tokenizer.ggml.* metadata
 * (wgf_gguf_open_mem -> wgf_gguf_tok_spec -> wgf_tokenizer_from_spec; RELIABILITY.md
 * items 14-16). An accepted vocabulary encodes a fixed text and decodes every id. */
#include "fuzz_common.h"
#include "llm/gguf.h"
#include "wgfuse/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct wgf_gguf *g   = NULL;
    struct wgf_err   err = {0};
    enum wgf_status  st  = wgf_gguf_open_mem(data, size, "fuzz.gguf", &g, &err);
    if (st != WGF_OK) {
        fz_check_refusal(st, &err);
        return 0;
    }
    struct wgf_tok_spec   spec;
    void                 *storage = NULL;
    struct wgf_tokenizer *tok     = NULL;
    wgf_tok_spec_init(&spec);
    st = wgf_gguf_tok_spec(g, &spec, &storage, &err);
    if (st == WGF_OK) st = wgf_tokenizer_from_spec(&spec, &tok, &err);
    free(storage);
    wgf_gguf_close(g);
    if (st != WGF_OK) {
        fz_check_refusal(st, &err);
        FZ_REQUIRE(tok == NULL, "tokenizer returned with an error");
        return 0;
    }
    static const char text[] = "Hello world, <|im_start|>user\n caf\xC3\xA9 12345 \xFF\x80 \xE2\x96\x81x";
    int32_t          *ids    = NULL;
    size_t            n      = 0;
    st = wgf_tokenizer_encode(tok, text, sizeof text - 1, (data[size - 1] & 1) != 0, &ids, &n, &err);
    FZ_REQUIRE(st == WGF_OK, "encode of a fixed text failed: %s", err.msg);
    size_t   nv  = wgf_tokenizer_vocab_size(tok);
    int32_t *all = malloc((nv + 1) * sizeof *all);
    FZ_REQUIRE(all != NULL, "oom");
    for (size_t i = 0; i < nv; i++) all[i] = (int32_t)i;
    char  *out = NULL;
    size_t olen;
    st = wgf_tokenizer_decode(tok, all, nv, true, &out, &olen, &err);
    FZ_REQUIRE(st == WGF_OK, "decode of every id failed: %s", err.msg);
    free(out);
    all[0] = (int32_t)nv; /* one past the vocabulary: a specific error */
    st     = wgf_tokenizer_decode(tok, all, 1, false, &out, &olen, &err);
    FZ_REQUIRE(st == WGF_ERR_ARG, "id == vocab size decoded (%s)", wgf_status_str(st));
    free(all);
    free(ids);
    wgf_tokenizer_free(tok);
    return 0;
}
