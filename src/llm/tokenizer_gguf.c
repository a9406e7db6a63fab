/* wgfuse — the tokenizer that belongs to a loaded model or a path, and tokenizer.json -> GGUF keys.
 *
 * A Hugging Face directory carries tokenizer.json (+ tokenizer_config.json for BOS/EOS and
 * add_bos_token); a GGUF file carries tokenizer.ggml.* arrays, which gguf_vocab.c turns into
 * a wgf_tok_spec for the tokenizer builder. A model without either is still runnable with
 * token ids (stories260k ships without its tokenizer).
 *
 * The converter writes the GGUF form of a byte-level BPE tokenizer.json (what llama.cpp's
 * convert_hf_to_gguf.py produces for Qwen2: model "gpt2", tokens by id, token_type,
 * merges "a b", pre) so test models in both formats share one vocabulary. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "llm/gguf.h"
#include "util/file.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/tokenizer.h"

/* GGUF's tokenizer.chat_template, when the file has one ("" when it holds a NUL byte), and
 * the named ones llama.cpp's converter writes as tokenizer.chat_template.<name>. A key of
 * another type than STRING is refused naming its type, as the tokenizer.ggml.* keys are: it
 * was read as "the model ships none" and a built-in template used in its place. */
static enum wgf_status gguf_chat_template(const struct wgf_gguf *g, struct wgf_tokenizer *tok, struct wgf_err *err)
{
    const char     *s;
    size_t          n;
    enum wgf_status st = WGF_OK;
    static const char prefix[] = "tokenizer.chat_template.";
    for (int64_t kv = 0; tok && !st && kv < wgf_gguf_n_kv(g); kv++) {
        size_t         kl;
        const char    *key = wgf_gguf_kv_key(g, kv, &kl);
        char           name[256];
        if (!key || kl <= sizeof prefix - 1 || kl >= sizeof name || strncmp(key, prefix, sizeof prefix - 1) || memchr(key, 0, kl))
            continue;
        memcpy(name, key, kl), name[kl] = '\0'; /* keys are not NUL-terminated in the file */
        if ((st = wgf_gguf_get_str(g, name, &s, &n, err)) || memchr(s, 0, n)) continue;
        st = wgf_tokenizer_add_chat_template(tok, name + sizeof prefix - 1, s, n, err);
    }
    if (st || !tok || wgf_gguf_find(g, "tokenizer.chat_template") < 0) return st;
    if ((st = wgf_gguf_get_str(g, "tokenizer.chat_template", &s, &n, err))) return st;
    if (memchr(s, 0, n)) s = "", n = 0;
    return wgf_tokenizer_set_chat_template(tok, s, n, err);
}

/* A model directory's chat_template.jinja (newer Hugging Face repositories keep the template
 * there instead of in tokenizer_config.json), when the tokenizer has none yet. */
static enum wgf_status hf_chat_template(const char *dir, struct wgf_tokenizer *tok, struct wgf_err *err)
{
    if (!tok || wgf_tokenizer_chat_template(tok)) return WGF_OK;
    size_t n = strlen(dir) + 32;
    char  *p = malloc(n), *text = NULL;
    if (!p) return wgf_fail(err, WGF_ERR_NOMEM, "%s: path", dir);
    snprintf(p, n, "%s/chat_template.jinja", dir);
    size_t          len;
    enum wgf_status s = WGF_OK;
    if (wgf_file_present(p) && (s = wgf_file_read(p, 1u << 20, "a chat template", &text, &len, err)) == WGF_OK)
        s = wgf_tokenizer_set_chat_template(tok, text, len, err);
    free(text);
    free(p);
    return s;
}

enum wgf_status wgf_llm_tokenizer_load(const struct wgf_llm_model *m, struct wgf_tokenizer **out, struct wgf_err *err)
{
    *out = NULL;
    if (m->format == WGF_LLM_FORMAT_GGUF) {
        const struct wgf_gguf *g = wgf_llm_model_gguf(m);
        if (!g || wgf_gguf_find(g, "tokenizer.ggml.tokens") < 0) return WGF_OK; /* ids only */
        struct wgf_tok_spec spec;
        void               *storage = NULL;
        wgf_tok_spec_init(&spec);
        enum wgf_status s = wgf_gguf_tok_spec(g, &spec, &storage, err);
        if (!s) s = wgf_tokenizer_from_spec(&spec, out, err);
        if (!s) s = gguf_chat_template(g, *out, err);
        free(storage);
        if (s) wgf_tokenizer_free(*out), *out = NULL; /* a refused chat template: no tokenizer */
        return s;
    }
    size_t n   = strlen(m->path) + 32;
    char  *tj  = malloc(n), *tc = malloc(n);
    if (!tj || !tc) {
        free(tj), free(tc);
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: tokenizer path", m->path);
    }
    snprintf(tj, n, "%s/tokenizer.json", m->path);
    snprintf(tc, n, "%s/tokenizer_config.json", m->path);
    enum wgf_status s = WGF_OK;
    /* present, not "regular": a FIFO or a symlink loop named tokenizer.json is an error
     * naming it (util/file.h), never a silent "no tokenizer" */
    if (wgf_file_present(tj)) s = wgf_tokenizer_load_json(tj, wgf_file_present(tc) ? tc : NULL, out, err);
    if (!s) s = hf_chat_template(m->path, *out, err);
    free(tj);
    free(tc);
    return s;
}

enum wgf_status wgf_llm_tokenizer_load_path(const char *path, struct wgf_tokenizer **tok, struct wgf_err *err)
{
    *tok = NULL;
    struct stat     st;
    enum wgf_status s = wgf_file_stat(path, &st, err);
    if (s) return s;
    size_t n  = strlen(path) + 32;
    char  *tj = malloc(n), *tc = malloc(n);
    if (!tj || !tc) {
        free(tj), free(tc);
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: path", path);
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(tj, n, "%s/tokenizer.json", path);
        snprintf(tc, n, "%s/tokenizer_config.json", path);
        if (wgf_file_present(tj)) s = wgf_tokenizer_load_json(tj, wgf_file_present(tc) ? tc : NULL, tok, err);
        if (!s) s = hf_chat_template(path, *tok, err);
    } else {
        size_t pl = strlen(path);
        if (pl >= 5 && strcmp(path + pl - 5, ".json") == 0) {
            s = wgf_tokenizer_load_json(path, NULL, tok, err);
        } else {
            struct wgf_gguf *g = NULL;
            if ((s = wgf_gguf_open(path, &g, err)) == WGF_OK && wgf_gguf_find(g, "tokenizer.ggml.tokens") >= 0) {
                struct wgf_tok_spec spec;
                void               *storage = NULL;
                wgf_tok_spec_init(&spec);
                if ((s = wgf_gguf_tok_spec(g, &spec, &storage, err)) == WGF_OK) s = wgf_tokenizer_from_spec(&spec, tok, err);
                if (!s) s = gguf_chat_template(g, *tok, err);
                free(storage);
                if (s) wgf_tokenizer_free(*tok), *tok = NULL;
            }
            wgf_gguf_close(g);
        }
    }
    free(tj);
    free(tc);
    return s;
}

/* ---- tokenizer.json -> tokenizer.ggml.* ---------------------------------------------------- */

/* The first Split regex of the pre-tokenizer, or NULL. */
static const char *split_regex(json_t *root)
{
    json_t *pre = json_object_get(root, "pre_tokenizer");
    json_t *seq = json_object_get(pre, "pretokenizers");
    size_t  n   = json_is_array(seq) ? json_array_size(seq) : 0;
    json_t *one[1] = {pre};
    for (size_t i = 0; i < (n ? n : 1); i++) {
        json_t *p = n ? json_array_get(seq, i) : one[0];
        if (!json_is_string(json_object_get(p, "type")) || strcmp(json_string_value(json_object_get(p, "type")), "Split"))
            continue;
        const char *re = json_string_value(json_object_get(json_object_get(p, "pattern"), "Regex"));
        if (re) return re;
    }
    return NULL;
}

enum wgf_status wgf_llm_gguf_add_tokenizer_json(struct wgf_gguf_writer *w, const char *path, int64_t n_vocab, int32_t bos_id,
                                                int32_t eos_id, struct wgf_err *err)
{
    json_error_t    je;
    char           *text;
    size_t          len;
    enum wgf_status st = wgf_file_read(path, 512ull << 20, "a tokenizer.json", &text, &len, err);
    if (st) return st;
    json_t  *root   = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    char   **tokens = NULL, **merges = NULL;
    int32_t *types  = NULL;
    size_t   n_tok = 0, n_merges = 0;
    free(text);
    if (!root) return wgf_fail(err, WGF_ERR_FORMAT, "%s: line %d: %s", path, je.line, je.text);
    json_t *model = json_object_get(root, "model"), *vocab = json_object_get(model, "vocab");
    json_t *mj = json_object_get(model, "merges"), *added = json_object_get(root, "added_tokens");
    if (!json_is_string(json_object_get(model, "type")) || strcmp(json_string_value(json_object_get(model, "type")), "BPE") ||
        !json_is_object(vocab) || !json_is_array(mj)) {
        st = wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: only BPE tokenizer.json (model.vocab + model.merges) converts to GGUF", path);
        goto done;
    }
    /* vocabulary size: largest id + 1 over vocab and added tokens */
    const char *key;
    json_t     *val;
    json_object_foreach(vocab, key, val)
    {
        json_int_t id = json_integer_value(val);
        if (!json_is_integer(val) || id < 0 || id >= (1 << 24)) {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: model.vocab['%s']: bad id", path, key);
            goto done;
        }
        if ((size_t)id + 1 > n_tok) n_tok = (size_t)id + 1;
    }
    size_t i;
    json_array_foreach(added, i, val)
    {
        json_int_t id = json_integer_value(json_object_get(val, "id"));
        if (!json_is_string(json_object_get(val, "content")) || id < 0 || id >= (1 << 24)) {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: added_tokens[%zu]: bad id or content", path, i);
            goto done;
        }
        if ((size_t)id + 1 > n_tok) n_tok = (size_t)id + 1;
    }
    /* the model's embedding rows: llama.cpp requires one token per row, and
     * convert_hf_to_gguf.py pads with "[PAD<id>]" tokens (UNUSED), holes included */
    if (n_vocab > 0 && n_tok > (size_t)n_vocab) {
        st = wgf_fail(err, WGF_ERR_FORMAT, "%s: token id %zu is past the model's vocabulary (%lld rows)", path, n_tok - 1,
                      (long long)n_vocab);
        goto done;
    }
    if (n_vocab > 0) n_tok = (size_t)n_vocab;
    tokens = calloc(n_tok ? n_tok : 1, sizeof *tokens);
    types  = calloc(n_tok ? n_tok : 1, sizeof *types);
    merges = calloc(json_array_size(mj) + 1, sizeof *merges);
    if (!tokens || !types || !merges) {
        st = wgf_fail(err, WGF_ERR_NOMEM, "%s: %zu tokens", path, n_tok);
        goto done;
    }
    json_object_foreach(vocab, key, val)
    {
        size_t id = (size_t)json_integer_value(val);
        if (tokens[id]) continue; /* an added token may repeat a vocab entry: first wins */
        tokens[id] = strdup(key);
        types[id]  = WGF_TOKEN_NORMAL;
        if (!tokens[id]) st = wgf_fail(err, WGF_ERR_NOMEM, "%s: token copy", path);
    }
    json_array_foreach(added, i, val)
    {
        size_t id = (size_t)json_integer_value(json_object_get(val, "id"));
        free(tokens[id]);
        tokens[id] = strdup(json_string_value(json_object_get(val, "content")));
        types[id]  = json_is_true(json_object_get(val, "special")) ? WGF_TOKEN_CONTROL : WGF_TOKEN_USER_DEFINED;
        if (!tokens[id]) st = wgf_fail(err, WGF_ERR_NOMEM, "%s: token copy", path);
    }
    if (st) goto done;
    for (size_t k = 0; k < n_tok; k++)
        if (!tokens[k]) {
            char pad[32];
            snprintf(pad, sizeof pad, "[PAD%zu]", k);
            types[k] = WGF_TOKEN_UNUSED;
            if (!(tokens[k] = strdup(pad))) {
                st = wgf_fail(err, WGF_ERR_NOMEM, "%s: token copy", path);
                goto done;
            }
        }
    json_array_foreach(mj, i, val)
    {
        const char *a = NULL, *b = NULL;
        if (json_is_string(val)) {
            merges[n_merges] = strdup(json_string_value(val));
        } else if (json_is_array(val) && json_array_size(val) == 2 && (a = json_string_value(json_array_get(val, 0))) &&
                   (b = json_string_value(json_array_get(val, 1)))) {
            size_t n = strlen(a) + strlen(b) + 2;
            if ((merges[n_merges] = malloc(n))) snprintf(merges[n_merges], n, "%s %s", a, b);
        } else {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: model.merges[%zu]: neither \"a b\" nor [a, b]", path, i);
            goto done;
        }
        if (!merges[n_merges++]) {
            st = wgf_fail(err, WGF_ERR_NOMEM, "%s: merge copy", path);
            goto done;
        }
    }
    const char *re = split_regex(root), *pre = "gpt2";
    if (re && strcmp(re, wgf_tok_pre_regex(WGF_TOK_PRE_QWEN2)) == 0) pre = "qwen2";
    else if (re && strcmp(re, wgf_tok_pre_regex(WGF_TOK_PRE_LLAMA3)) == 0) pre = "llama-bpe";
    else if (re) {
        st = wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: pre-tokenizer regex has no GGUF name", path);
        goto done;
    }
    wgf_gguf_writer_add_str(w, "tokenizer.ggml.model", "gpt2");
    wgf_gguf_writer_add_str(w, "tokenizer.ggml.pre", pre);
    wgf_gguf_writer_add_arr_str(w, "tokenizer.ggml.tokens", (const char *const *)tokens, n_tok);
    wgf_gguf_writer_add_arr_i32(w, "tokenizer.ggml.token_type", types, n_tok);
    wgf_gguf_writer_add_arr_str(w, "tokenizer.ggml.merges", (const char *const *)merges, n_merges);
    if (bos_id >= 0) wgf_gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)bos_id);
    if (eos_id >= 0) wgf_gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)eos_id);
    wgf_gguf_writer_add_bool(w, "tokenizer.ggml.add_bos_token", false);
    /* the writer's adds are sticky on OOM: wgf_gguf_writer_write reports it */

done:
    for (size_t k = 0; tokens && k < n_tok; k++) free(tokens[k]);
    for (size_t k = 0; merges && k < n_merges; k++) free(merges[k]);
    free(tokens);
    free(types);
    free(merges);
    json_decref(root);
    return st;
}
