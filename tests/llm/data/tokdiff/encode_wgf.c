/* Differential check driver (not built by CMake): encodes each JSON string line of a
 * file with wgfuse's tokenizer and prints the ids as JSON arrays, one line each, like
 * encode_hf.js does with transformers.js. See README.md. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wgfuse/tokenizer.h"
int main(int argc, char **argv)
{
    struct wgf_err err = {0};
    struct wgf_tokenizer *tok;
    if (wgf_tokenizer_load_json(argv[1], argv[2], &tok, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    FILE *f = fopen(argv[3], "r");
    char *line = NULL; size_t cap = 0; ssize_t n;  /* freed at exit */
    while ((n = getline(&line, &cap, f)) > 0) {
        json_error_t je; json_t *s = json_loads(line, JSON_DECODE_ANY, &je);
        int32_t *ids; size_t k;
        if (wgf_tokenizer_encode(tok, json_string_value(s), json_string_length(s), true, &ids, &k, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
        printf("[");
        for (size_t i = 0; i < k; i++) printf("%s%d", i ? "," : "", ids[i]);
        printf("]\n");
        char *out; size_t ol;
        wgf_tokenizer_decode(tok, ids, k, true, &out, &ol, &err);
        if (ol != json_string_length(s) || memcmp(out, json_string_value(s), ol)) fprintf(stderr, "roundtrip differs\n");
        free(out); free(ids); json_decref(s);
    }
    fprintf(stderr, "vocab %zu bos %d eos %d wants_bos %d\n", wgf_tokenizer_vocab_size(tok), wgf_tokenizer_bos(tok), wgf_tokenizer_eos(tok), wgf_tokenizer_wants_bos(tok));
    wgf_tokenizer_free(tok);
    return 0;
}
