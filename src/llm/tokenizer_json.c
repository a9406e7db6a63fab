/* wgfuse — Hugging Face tokenizer.json (+ tokenizer_config.json) loading, and a writer of a
 * small byte-level BPE tokenizer.json for tests.
 *
 * Supported: model.type "BPE" with a ByteLevel pre-tokenizer (alone, or after Split steps
 * in a Sequence: Regex or String patterns, every behavior, invert), merges as "a b" strings
 * or ["a", "b"] arrays, added_tokens (with lstrip / rstrip), an NFC or absent normalizer;
 * and SentencePiece-style BPE (Llama-2 / Phi-3 / Gemma: byte_fallback, spaces as U+2581
 * through a Prepend+Replace normalizer or Metaspace, optionally Split steps on the
 * normalized text). Anything else is refused with a one-line error naming the file and
 * the field, never guessed: a wrong guess would silently give the model foreign token ids.
 * JSON is parsed by jansson with JSON_REJECT_DUPLICATES (iterative, no recursion limit
 * issue: jansson caps nesting depth at 2048). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm/tokenizer_internal.h"
#include "util/file.h"

/* ======================================================================================
 * loading
 * ====================================================================================== */

/* Real tokenizer.json files are 2-35 MB (Gemma's 256k vocabulary is the largest in use);
 * tokenizer_config.json files stay under 2 MB. Past these a file is refused before it is
 * read (util/file.h's rule: regular, sized, named). */
#define TOKENIZER_JSON_MAX   (512ull << 20)
#define TOKENIZER_CONFIG_MAX (64ull << 20)

static enum wgf_status load_json(const char *path, uint64_t max_bytes, unsigned flags, json_t **out,
                                 struct wgf_err *err)
{
    *out = NULL;
    char           *text;
    size_t          len;
    enum wgf_status st = wgf_file_read(path, max_bytes, "a tokenizer JSON file", &text, &len, err);
    if (st) return st;
    json_error_t je;
    *out = json_loadb(text, len, JSON_REJECT_DUPLICATES | flags, &je);
    free(text);
    if (*out) return WGF_OK;
    return wgf_fail(err, WGF_ERR_FORMAT, "%s:%d:%d: %s", path, je.line, je.column, je.text);
}

/* Collected from the pre_tokenizer tree: the steps in order (tokenizer_pretok.c). */
struct pre_step {
    const char *pattern; /* NULL: ByteLevel's add_prefix_space */
    size_t      len;
    bool        literal; /* {"String": ...} rather than {"Regex": ...} */
    uint8_t     behavior;
    bool        invert;
    char        where[64];
};
struct pre_cfg {
    struct pre_step step[WGF__TOK_MAX_PRE];
    size_t          n;
    bool            byte_level;
};

static enum wgf_status pre_push(const char *path, const char *where, struct pre_cfg *c, struct pre_step s,
                                struct wgf_err *err)
{
    if (c->n >= WGF__TOK_MAX_PRE)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: %s: more than %d pre-tokenizer steps", path, where, WGF__TOK_MAX_PRE);
    snprintf(s.where, sizeof s.where, "%s", where);
    c->step[c->n++] = s;
    return WGF_OK;
}

static enum wgf_status pre_one(const char *path, json_t *p, const char *where, struct pre_cfg *c, struct wgf_err *err)
{
    static const char *const behaviors[] = {"Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    const char *type = json_string_value(json_object_get(p, "type"));
    if (!type) return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s: no \"type\"", path, where);
    if (strcmp(type, "ByteLevel") == 0) {
        if (c->byte_level) return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: %s: two ByteLevel pre-tokenizers", path, where);
        c->byte_level      = true;
        json_t         *ur = json_object_get(p, "use_regex");
        enum wgf_status st = WGF_OK;
        if (json_is_true(json_object_get(p, "add_prefix_space")))
            st = pre_push(path, where, c, (struct pre_step){.pattern = NULL}, err);
        if (!st && (!ur || json_is_true(ur))) {
            const char *re = wgf_tok_pre_regex(WGF_TOK_PRE_GPT2);
            st             = pre_push(path, where, c, (struct pre_step){.pattern = re, .len = strlen(re)}, err);
        }
        return st;
    }
    if (strcmp(type, "Split") == 0) {
        /* After ByteLevel a Split would see the byte-level alphabet, not the text. */
        if (c->byte_level)
            return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: %s: Split after ByteLevel not supported", path, where);
        json_t *pat = json_object_get(p, "pattern");
        json_t *re = json_object_get(pat, "Regex"), *str = json_object_get(pat, "String");
        if (!json_is_object(pat) || json_object_size(pat) != 1 || !(json_is_string(re) || json_is_string(str)))
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s.pattern must be {\"Regex\": \"...\"} or {\"String\": \"...\"}", path,
                            where);
        const char *beh = json_string_value(json_object_get(p, "behavior"));
        size_t      b   = 0;
        while (beh && b < 5 && strcmp(beh, behaviors[b]) != 0) b++;
        if (!beh || b == 5)
            return wgf_fail(err, WGF_ERR_FORMAT,
                            "%s: %s.behavior '%.40s' is not one of Isolated, Removed, MergedWithPrevious, MergedWithNext, "
                            "Contiguous",
                            path, where, beh ? beh : "(missing)");
        json_t *inv = json_object_get(p, "invert");
        if (inv && !json_is_boolean(inv)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s.invert is not a boolean", path, where);
        json_t *v = re ? re : str;
        return pre_push(path, where, c,
                        (struct pre_step){.pattern  = json_string_value(v),
                                          .len      = json_string_length(v),
                                          .literal  = re == NULL,
                                          .behavior = (uint8_t)b,
                                          .invert   = json_is_true(inv)},
                        err);
    }
    return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: %s: pre-tokenizer type '%s' not supported", path, where, type);
}

/* The pre_tokenizer tree: one step, or a Sequence of them (not nested). */
static enum wgf_status parse_pre_tree(const char *path, json_t *p, struct pre_cfg *c, struct wgf_err *err)
{
    memset(c, 0, sizeof *c);
    if (!json_is_object(p)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: pre_tokenizer is not an object", path);
    const char *type = json_string_value(json_object_get(p, "type"));
    if (!type || strcmp(type, "Sequence") != 0) return pre_one(path, p, "pre_tokenizer", c, err);
    json_t *arr = json_object_get(p, "pretokenizers");
    if (!json_is_array(arr)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: pre_tokenizer.pretokenizers is not an array", path);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        char where[64];
        snprintf(where, sizeof where, "pre_tokenizer.pretokenizers[%zu]", i);
        json_t *e = json_array_get(arr, i);
        if (!json_is_object(e)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s is not an object", path, where);
        enum wgf_status st = pre_one(path, e, where, c, err);
        if (st) return st;
    }
    return WGF_OK;
}

static enum wgf_status parse_pre(const char *path, json_t *root, struct pre_cfg *c, struct wgf_err *err)
{
    memset(c, 0, sizeof *c);
    json_t *p = json_object_get(root, "pre_tokenizer");
    if (!p || json_is_null(p))
        return wgf_fail(err, WGF_ERR_UNSUPPORTED,
                        "%s: no pre_tokenizer: only byte-level BPE tokenizer.json is supported (use the GGUF file for "
                        "SentencePiece models)",
                        path);
    enum wgf_status st = parse_pre_tree(path, p, c, err);
    if (st) return st;
    if (!c->byte_level)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: pre_tokenizer has no ByteLevel step (not byte-level BPE)", path);
    return WGF_OK;
}

static enum wgf_status check_normalizer(const char *path, json_t *root, bool *nfc, struct wgf_err *err)
{
    *nfc      = false;
    json_t *n = json_object_get(root, "normalizer");
    if (!n || json_is_null(n)) return WGF_OK;
    const char *type = json_string_value(json_object_get(n, "type"));
    /* NFC goes through ICU when it can be loaded (tokenizer_nfc.c); without ICU it is
     * skipped, which only matters for text that is not NFC already. */
    if (type && strcmp(type, "NFC") == 0) {
        *nfc = true;
        return WGF_OK;
    }
    json_t *list = type && strcmp(type, "Sequence") == 0 ? json_object_get(n, "normalizers") : NULL;
    if (json_is_array(list)) { /* a Sequence of NFC steps only (some exports wrap it) */
        bool only_nfc = true;
        for (size_t i = 0; i < json_array_size(list); i++) {
            const char *et = json_string_value(json_object_get(json_array_get(list, i), "type"));
            only_nfc       = only_nfc && et && strcmp(et, "NFC") == 0;
        }
        if (only_nfc) {
            *nfc = json_array_size(list) > 0;
            return WGF_OK;
        }
    }
    return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: normalizer '%s' not supported", path, type ? type : "(no type)");
}

/* SentencePiece-style tokenizer.json (Llama-2, Phi-3): BPE over characters with spaces as
 * U+2581, written either as normalizer Sequence[Prepend("▁"), Replace(" ", "▁")] (legacy)
 * or as a Metaspace pre-tokenizer that does not split. Sets *prefix (a ▁ goes in front of
 * text) and *first_only (only in front of the first text fragment). */
static bool is_spm_style(json_t *root)
{
    json_t     *model = json_object_get(root, "model");
    json_t     *pre   = json_object_get(root, "pre_tokenizer");
    json_t     *norm  = json_object_get(root, "normalizer");
    const char *pt    = json_string_value(json_object_get(pre, "type"));
    const char *nt    = json_string_value(json_object_get(norm, "type"));
    return json_is_true(json_object_get(model, "byte_fallback")) || (pt && strcmp(pt, "Metaspace") == 0) ||
           (nt && (strcmp(nt, "Sequence") == 0 || strcmp(nt, "Prepend") == 0) && (!pre || json_is_null(pre)));
}

static enum wgf_status parse_spm_style(const char *path, json_t *root, bool *prefix, bool *first_only,
                                       struct pre_cfg *split, struct wgf_err *err)
{
    *prefix = *first_only = false;
    memset(split, 0, sizeof *split);
    bool    replace       = false;
    json_t *norm          = json_object_get(root, "normalizer");
    json_t *pre           = json_object_get(root, "pre_tokenizer");
    if (norm && !json_is_null(norm)) {
        const char *nt   = json_string_value(json_object_get(norm, "type"));
        json_t     *list = nt && strcmp(nt, "Sequence") == 0 ? json_object_get(norm, "normalizers") : NULL;
        size_t      n    = list ? json_array_size(list) : 1;
        for (size_t i = 0; i < n; i++) {
            json_t     *e  = list ? json_array_get(list, i) : norm;
            const char *et = json_string_value(json_object_get(e, "type"));
            const char *pp = json_string_value(json_object_get(e, "prepend"));
            const char *rs = json_string_value(json_object_get(json_object_get(e, "pattern"), "String"));
            const char *rc = json_string_value(json_object_get(e, "content"));
            if (et && strcmp(et, "Prepend") == 0 && pp && strcmp(pp, "\xE2\x96\x81") == 0)
                *prefix = true;
            else if (et && strcmp(et, "Replace") == 0 && rs && rc && strcmp(rs, " ") == 0 &&
                     strcmp(rc, "\xE2\x96\x81") == 0)
                replace = true;
            else
                return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: normalizer step '%s' not supported", path,
                                et ? et : "(no type)");
        }
    }
    const char *pt = json_string_value(json_object_get(pre, "type"));
    if (pre && !json_is_null(pre) && !(pt && strcmp(pt, "Metaspace") == 0)) {
        /* Split steps on the normalized text (Gemma: Split(" ", MergedWithPrevious) after
         * the normalizer turned every space into U+2581) */
        enum wgf_status st = parse_pre_tree(path, pre, split, err);
        if (st) return st;
        if (split->byte_level)
            return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: ByteLevel pre-tokenizer with a SentencePiece-style model", path);
    } else if (pre && !json_is_null(pre)) {
        const char *rp = json_string_value(json_object_get(pre, "replacement"));
        const char *ps = json_string_value(json_object_get(pre, "prepend_scheme"));
        if (!rp || strcmp(rp, "\xE2\x96\x81") != 0)
            return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: Metaspace replacement must be U+2581", path);
        if (json_is_true(json_object_get(pre, "split")))
            return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: Metaspace with split=true not supported", path);
        replace = true;
        if (ps ? strcmp(ps, "never") != 0 : !json_is_false(json_object_get(pre, "add_prefix_space"))) *prefix = true;
        *first_only = ps && strcmp(ps, "first") == 0;
    }
    if (!replace)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: SentencePiece-style model without the space -> U+2581 step", path);
    return WGF_OK;
}

/* A token named by tokenizer_config.json: a string or {"content": "..."}; NULL if absent. */
static const char *config_token(json_t *cfg, const char *key)
{
    json_t *v = json_object_get(cfg, key);
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_object(v)) return json_string_value(json_object_get(v, "content"));
    return NULL;
}

/* post_processor TemplateProcessing whose "single" starts with a special token: that
 * token is BOS and is added (Llama-3). Looks one Sequence level deep. */
static const char *template_bos(json_t *pp)
{
    if (!json_is_object(pp)) return NULL;
    const char *type = json_string_value(json_object_get(pp, "type"));
    if (type && strcmp(type, "Sequence") == 0) {
        json_t *arr = json_object_get(pp, "processors");
        for (size_t i = 0; i < json_array_size(arr); i++) {
            json_t     *e  = json_array_get(arr, i);
            const char *et = json_string_value(json_object_get(e, "type"));
            if (et && strcmp(et, "TemplateProcessing") == 0) return template_bos(e);
        }
        return NULL;
    }
    if (!type || strcmp(type, "TemplateProcessing") != 0) return NULL;
    json_t *first = json_array_get(json_object_get(pp, "single"), 0);
    return json_string_value(json_object_get(json_object_get(first, "SpecialToken"), "id"));
}

static enum wgf_status lookup_named(struct wgf_tokenizer *t, const char *path, const char *what, const char *s,
                                    int32_t *id, struct wgf_err *err)
{
    if (!s) return WGF_OK;
    int32_t v = wgf__idmap_get(&t->by_str, t->ents, s, strlen(s));
    if (v < 0) return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s '%.64s' is not in the vocabulary", path, what, s);
    *id = v;
    return WGF_OK;
}

/* "<0x41>" style byte token? */
static bool is_byte_token(const char *s)
{
    static const char hex[] = "0123456789ABCDEFabcdef";
    return strlen(s) == 6 && memcmp(s, "<0x", 3) == 0 && s[5] == '>' && strchr(hex, s[3]) && strchr(hex, s[4]);
}

static enum wgf_status load_vocab(const char *path, enum wgf_tok_model kind, json_t *model, json_t *added,
                                  struct wgf_tokenizer **out, struct wgf_err *err)
{
    json_t *vocab = json_object_get(model, "vocab");
    if (!json_is_object(vocab)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: model.vocab is not an object", path);
    if (added && !json_is_array(added)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: added_tokens is not an array", path);

    size_t      n_entries = json_object_size(vocab) + json_array_size(added);
    json_int_t  max_id    = -1;
    const char *key;
    json_t     *val;
    json_object_foreach(vocab, key, val)
    {
        if (!json_is_integer(val) || json_integer_value(val) < 0)
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: model.vocab['%.64s'] is not a non-negative integer", path, key);
        if (json_integer_value(val) > max_id) max_id = json_integer_value(val);
    }
    for (size_t i = 0; i < json_array_size(added); i++) {
        json_t *a  = json_array_get(added, i);
        json_t *id = json_object_get(a, "id");
        if (!json_is_integer(id) || json_integer_value(id) < 0 || !json_is_string(json_object_get(a, "content")))
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: added_tokens[%zu]: needs an integer id and a string content", path, i);
        if (json_integer_value(id) > max_id) max_id = json_integer_value(id);
    }
    if (max_id < 0) return wgf_fail(err, WGF_ERR_FORMAT, "%s: model.vocab is empty", path);
    /* Ids may skip a few numbers, never far: that bounds the table a hostile file asks for. */
    if ((uint64_t)max_id >= (uint64_t)n_entries + 4096)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: token id %lld far beyond the %zu tokens defined", path,
                        (long long)max_id, n_entries);

    struct wgf_tokenizer *t;
    enum wgf_status       st = wgf__tok_alloc(kind, (size_t)max_id + 1, path, &t, err);
    bool        byte_fallback = json_is_true(json_object_get(model, "byte_fallback"));
    const char *unk           = json_string_value(json_object_get(model, "unk_token"));
    if (st) return st;
    json_object_foreach(vocab, key, val)
    {
        size_t id = (size_t)json_integer_value(val);
        if (t->ents[id].str) {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: model.vocab: id %zu used twice ('%.64s')", path, id, key);
            break;
        }
        st = wgf__tok_set(t, id, key, strlen(key), path, err);
        if (st) break;
        t->ents[id].type = WGF_TOKEN_NORMAL;
        if (kind == WGF_TOK_MODEL_SPM && byte_fallback && is_byte_token(key)) t->ents[id].type = WGF_TOKEN_BYTE;
        if (unk && strcmp(key, unk) == 0) {
            t->ents[id].type = WGF_TOKEN_UNKNOWN;
            t->unk           = (int32_t)id;
        }
    }
    for (size_t i = 0; !st && i < json_array_size(added); i++) {
        json_t *a = json_array_get(added, i);
        size_t  id = (size_t)json_integer_value(json_object_get(a, "id"));
        json_t *c  = json_object_get(a, "content");
        if (json_string_length(c) == 0) {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: added_tokens[%zu]: empty content", path, i);
            break;
        }
        st = wgf__tok_set(t, id, json_string_value(c), json_string_length(c), path, err);
        if (st) break;
        if ((int32_t)id == t->unk) continue; /* <unk> listed as added: stays UNKNOWN */
        t->ents[id].type  = json_is_true(json_object_get(a, "special")) ? WGF_TOKEN_CONTROL : WGF_TOKEN_USER_DEFINED;
        t->ents[id].strip = (uint8_t)((json_is_true(json_object_get(a, "lstrip")) ? WGF__STRIP_LEFT : 0) |
                                      (json_is_true(json_object_get(a, "rstrip")) ? WGF__STRIP_RIGHT : 0));
    }
    if (st) {
        wgf_tokenizer_free(t);
        return st;
    }
    *out = t;
    return WGF_OK;
}

static enum wgf_status load_merges(const char *path, json_t *model, struct wgf_tokenizer *t, struct wgf_err *err)
{
    json_t *merges = json_object_get(model, "merges");
    if (!merges || json_is_null(merges)) merges = NULL;
    if (merges && !json_is_array(merges)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: model.merges is not an array", path);
    size_t          n  = json_array_size(merges);
    enum wgf_status st = wgf__tok_reserve_merges(t, n, path, err);
    for (size_t i = 0; i < n && !st; i++) {
        json_t *m = json_array_get(merges, i);
        if (json_is_string(m)) {
            const char *s  = json_string_value(m);
            size_t      l  = json_string_length(m);
            const char *sp = l > 1 ? memchr(s + 1, ' ', l - 1) : NULL;
            if (!sp || sp + 1 == s + l || memchr(sp + 1, ' ', (size_t)(s + l - sp - 1)))
                return wgf_fail(err, WGF_ERR_FORMAT, "%s: model.merges[%zu]: '%.64s' is not \"left right\"", path, i, s);
            st = wgf__tok_add_merge(t, s, (size_t)(sp - s), sp + 1, (size_t)(s + l - sp - 1), i, path, "model.merges",
                                    err);
        } else if (json_is_array(m) && json_array_size(m) == 2 && json_is_string(json_array_get(m, 0)) &&
                   json_is_string(json_array_get(m, 1))) {
            json_t *a = json_array_get(m, 0), *b = json_array_get(m, 1);
            st = wgf__tok_add_merge(t, json_string_value(a), json_string_length(a), json_string_value(b),
                                    json_string_length(b), i, path, "model.merges", err);
        } else {
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: model.merges[%zu] is neither \"a b\" nor [\"a\", \"b\"]", path, i);
        }
    }
    return st;
}

/* tokenizer_config.json's "chat_template": a string, or a list of {"name", "template"}
 * (every entry kept by name; "default" is the chat template). A list without "default":
 * "" (declared, not chosen: --chat-template-name picks one). Also the special-token
 * strings transformers hands to the template. */
static enum wgf_status config_chat_template(const char *cfg_path, json_t *cfg, struct wgf_tokenizer *t,
                                           struct wgf_err *err)
{
    static const char *const keys[] = {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token",
                                       "mask_token"};
    enum wgf_status          st     = WGF_OK;
    for (size_t i = 0; !st && i < sizeof keys / sizeof keys[0]; i++)
        st = wgf_tokenizer_set_special_text(t, keys[i], config_token(cfg, keys[i]), err);
    json_t *ct = json_object_get(cfg, "chat_template");
    if (st || !ct || json_is_null(ct)) return st;
    if (!json_is_string(ct) && !json_is_array(ct)) /* was read as "the model ships none" */
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: chat_template is %s, expected a string or a list of {\"name\": ..., \"template\": \"...\"}",
                        cfg_path, json_is_object(ct) ? "an object" : json_is_boolean(ct) ? "a boolean" : "a number");
    json_t *dflt = json_is_string(ct) ? ct : NULL;
    for (size_t i = 0; !st && json_is_array(ct) && i < json_array_size(ct); i++) {
        json_t     *e    = json_array_get(ct, i);
        const char *name = json_string_value(json_object_get(e, "name"));
        json_t     *tx   = json_object_get(e, "template");
        if (!name || !json_is_string(tx))
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: chat_template[%zu] is not {\"name\": ..., \"template\": \"...\"}", cfg_path, i);
        if (!strcmp(name, "default")) dflt = tx;
        st = wgf_tokenizer_add_chat_template(t, name, json_string_value(tx), json_string_length(tx), err);
    }
    if (!st) st = dflt ? wgf_tokenizer_set_chat_template(t, json_string_value(dflt), json_string_length(dflt), err)
                       : wgf_tokenizer_set_chat_template(t, "", 0, err);
    return st ? wgf_err_prefix(err, "%s: chat_template", cfg_path), st : WGF_OK;
}

static enum wgf_status apply_config(const char *path, const char *cfg_path, json_t *root, struct wgf_tokenizer *t,
                                    struct wgf_err *err)
{
    enum wgf_status st;
    const char     *tbos = template_bos(json_object_get(root, "post_processor"));
    if (tbos) {
        if ((st = lookup_named(t, path, "post_processor BOS", tbos, &t->bos, err))) return st;
        t->add_bos = true;
    }
    if (cfg_path) {
        json_t *cfg;
        /* Llama-3's config has "model_max_length": 1000000000000000019884624838656, too
         * big for json_int_t: integers are read as reals here (none is used). */
        if ((st = load_json(cfg_path, TOKENIZER_CONFIG_MAX, JSON_DECODE_INT_AS_REAL, &cfg, err))) return st;
        if (!json_is_object(cfg)) {
            json_decref(cfg);
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: not a JSON object", cfg_path);
        }
        st = lookup_named(t, cfg_path, "bos_token", config_token(cfg, "bos_token"), &t->bos, err);
        if (!st) st = lookup_named(t, cfg_path, "eos_token", config_token(cfg, "eos_token"), &t->eos, err);
        if (!st) st = lookup_named(t, cfg_path, "unk_token", config_token(cfg, "unk_token"), &t->unk, err);
        if (!st) st = lookup_named(t, cfg_path, "pad_token", config_token(cfg, "pad_token"), &t->pad, err);
        json_t *ab = json_object_get(cfg, "add_bos_token");
        if (!st && ab && !json_is_boolean(ab))
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: add_bos_token is not a boolean", cfg_path);
        if (!st && ab) t->add_bos = json_is_true(ab);
        if (!st) st = config_chat_template(cfg_path, cfg, t, err);
        json_decref(cfg);
        if (st) return st;
    }
    if (t->eos < 0) {
        /* No config: the conventional end-of-text token, if the vocabulary has one. */
        static const char *const names[] = {"<|endoftext|>", "<|end_of_text|>", "</s>"};
        for (size_t i = 0; i < 3 && t->eos < 0; i++) t->eos = wgf__idmap_get(&t->by_str, t->ents, names[i], strlen(names[i]));
    }
    return WGF_OK;
}

enum wgf_status wgf_tokenizer_load_json(const char *path, const char *cfg_path, struct wgf_tokenizer **out,
                                        struct wgf_err *err)
{
    if (!path || !out) return wgf_fail(err, WGF_ERR_ARG, "tokenizer_load_json: NULL argument");
    *out = NULL;
    json_t         *root;
    enum wgf_status st = load_json(path, TOKENIZER_JSON_MAX, 0, &root, err);
    if (st) return st;
    struct wgf_tokenizer *t = NULL;
    json_t               *model = json_object_get(root, "model");
    const char           *type  = json_string_value(json_object_get(model, "type"));
    struct pre_cfg        pre;
    bool                  nfc = false;
    if (!json_is_object(root)) {
        st = wgf_fail(err, WGF_ERR_FORMAT, "%s: not a JSON object", path);
    } else if (!json_is_object(model)) {
        st = wgf_fail(err, WGF_ERR_FORMAT, "%s: no \"model\" object", path);
    } else if (type && strcmp(type, "BPE") != 0) {
        st = wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: model.type '%.32s' not supported (only BPE)", path, type);
    } else if (!type && !json_object_get(model, "merges")) {
        st = wgf_fail(err, WGF_ERR_FORMAT, "%s: model has no \"type\" and no merges", path);
    } else {
        const char *cp = json_string_value(json_object_get(model, "continuing_subword_prefix"));
        const char *ew = json_string_value(json_object_get(model, "end_of_word_suffix"));
        if ((cp && *cp) || (ew && *ew))
            st = wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: model.continuing_subword_prefix/end_of_word_suffix not supported",
                          path);
    }
    bool spm = !st && is_spm_style(root), prefix = false, first_only = false;
    memset(&pre, 0, sizeof pre);
    if (!st && spm) st = parse_spm_style(path, root, &prefix, &first_only, &pre, err);
    if (!st && !spm) st = check_normalizer(path, root, &nfc, err);
    if (!st && !spm) st = parse_pre(path, root, &pre, err);
    if (!st)
        st = load_vocab(path, spm ? WGF_TOK_MODEL_SPM : WGF_TOK_MODEL_BPE, model, json_object_get(root, "added_tokens"),
                        &t, err);
    if (!st) st = wgf__tok_index(t, path, err);
    if (!st) st = load_merges(path, model, t, err);
    for (size_t i = 0; !st && i < pre.n; i++) {
        const struct pre_step *ps = &pre.step[i];
        st = ps->pattern ? wgf__pretok_add_split(t, ps->pattern, ps->len, ps->literal, ps->behavior, ps->invert, path,
                                                 ps->where, err)
                         : wgf__pretok_add_prefix_space(t, path, err);
    }
    if (!st) {
        t->add_space_prefix = prefix;
        t->prefix_first_only = first_only;
        t->ignore_merges    = json_is_true(json_object_get(model, "ignore_merges"));
        t->nfc              = nfc;
        st                  = apply_config(path, cfg_path, root, t, err);
    }
    if (!st) st = wgf__tok_finish(t, path, err);
    json_decref(root);
    if (st) {
        wgf_tokenizer_free(t);
        return st;
    }
    *out = t;
    return WGF_OK;
}

/* ======================================================================================
 * test tokenizer writer
 * ====================================================================================== */

/* Words whose left-to-right merges make the test vocabulary, in the byte-level alphabet
 * (Ġ = space, Ċ = newline, Ã© = "é"). Order sets the ranks: "Ġ t" (from "Ġthe") ranks
 * before "t h" (from "the"), which the known-answer tests rely on. */
static const char *const test_words[] = {
    "Ġthe", "the", "Ġa", "Ġand", "Ġof", "Ġto", "Ġin", "Ġis", "Ġit", "Ġthat", "Ġfor", "Ġyou", "Ġwith", "Ġon",
    "Ġas", "Ġare", "Ġthis", "Ġbe", "Ġat", "Ġhave", "Ġnot", "ing", "er", "ed", "es", "re", "on", "an", "Ġhello",
    "Ġworld", "Hello", "Ġquick", "Ġbrown", "Ġfox", "Ġjumps", "Ġover", "Ġlazy", "Ġdog", "ĠĠ", "ĠĠĠĠ", "ĊĊ",
    "Ġ=", "()", "Ġreturn", "Ġint", "Ġuser", "Ġsystem", "user", "assistant", "system", "Ġhelpful", "You",
    ".Ċ", "Ġcafe", "ĠcafÃ©", "Ġ{Ċ", "ĠĠĠ",
};

static const char *const test_specials[] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};

struct test_vocab {
    char  *tok[WGF_TOK_TEST_VOCAB_MAX];
    size_t n;
    char  *merge_a[WGF_TOK_TEST_VOCAB_MAX], *merge_b[WGF_TOK_TEST_VOCAB_MAX];
    size_t n_merges;
};

static int tv_find(const struct test_vocab *v, const char *s)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->tok[i], s) == 0) return (int)i;
    return -1;
}

static void tv_free(struct test_vocab *v)
{
    for (size_t i = 0; i < v->n; i++) free(v->tok[i]);
    for (size_t i = 0; i < v->n_merges; i++) free(v->merge_a[i]), free(v->merge_b[i]);
}

static char *cat2(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char  *s  = malloc(la + lb + 1);
    if (!s) return NULL;
    memcpy(s, a, la);
    memcpy(s + la, b, lb + 1);
    return s;
}

/* Build 256 byte tokens and the merges of test_words (small, fixed sizes: no overflow). */
static enum wgf_status build_test_vocab(struct test_vocab *v, struct wgf_err *err)
{
    memset(v, 0, sizeof *v);
    for (unsigned b = 0; b < 256; b++) {
        char   s[5];
        size_t n = wgf__utf8_put(wgf__bytelevel_cp(b), s);
        s[n]     = '\0';
        if (!(v->tok[v->n++] = cat2(s, ""))) return wgf_fail(err, WGF_ERR_NOMEM, "test tokenizer: out of memory");
    }
    size_t max_tokens = WGF_TOK_TEST_VOCAB_MAX - sizeof test_specials / sizeof test_specials[0];
    for (size_t w = 0; w < sizeof test_words / sizeof test_words[0]; w++) {
        const unsigned char *s = (const unsigned char *)test_words[w];
        size_t               n = strlen(test_words[w]);
        uint32_t             cp;
        size_t               k   = wgf__utf8_next(s, n, &cp);
        char                *cur = malloc(k + 1);
        if (!cur) return wgf_fail(err, WGF_ERR_NOMEM, "test tokenizer: out of memory");
        memcpy(cur, s, k);
        cur[k] = '\0';
        for (size_t i = k; i < n; i += k) {
            k = wgf__utf8_next(s + i, n - i, &cp);
            char ch[5];
            memcpy(ch, s + i, k);
            ch[k]      = '\0';
            char *next = cat2(cur, ch);
            if (!next) return free(cur), wgf_fail(err, WGF_ERR_NOMEM, "test tokenizer: out of memory");
            if (tv_find(v, next) < 0) {
                if (v->n >= max_tokens) return free(cur), free(next), wgf_fail(err, WGF_ERR_INTERNAL, "test tokenizer: too many merges");
                v->merge_a[v->n_merges] = cur;
                v->merge_b[v->n_merges] = cat2(ch, "");
                if (!v->merge_b[v->n_merges]) return free(next), wgf_fail(err, WGF_ERR_NOMEM, "out of memory");
                v->n_merges++;
                v->tok[v->n++] = cat2(next, "");
                if (!v->tok[v->n - 1]) return free(next), wgf_fail(err, WGF_ERR_NOMEM, "out of memory");
            } else {
                free(cur);
            }
            cur = next;
        }
        free(cur);
    }
    return WGF_OK;
}

/* json_object_set_new et al. return -1 on allocation failure; collect into one flag. */
#define JSET(ok, obj, key, val) ((ok) = (ok) && json_object_set_new((obj), (key), (val)) == 0)
#define JAPP(ok, arr, val) ((ok) = (ok) && json_array_append_new((arr), (val)) == 0)

static json_t *test_json(const struct test_vocab *v)
{
    bool    ok   = true;
    json_t *root = json_object(), *added = json_array(), *vocab = json_object(), *merges = json_array();
    json_t *model = json_object(), *pre = json_object(), *seq = json_array(), *split = json_object(),
           *pat = json_object(), *bl = json_object(), *dec = json_object(), *post = json_object();
    ok = root && added && vocab && merges && model && pre && seq && split && pat && bl && dec && post;
    if (!ok) {
        json_t *all[] = {root, added, vocab, merges, model, pre, seq, split, pat, bl, dec, post};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) json_decref(all[i]);
        return NULL;
    }
    JSET(ok, root, "version", json_string("1.0"));
    JSET(ok, root, "truncation", json_null());
    JSET(ok, root, "padding", json_null());
    /* ChatML specials right after the merges, then control fillers up to exactly
     * WGF_TOK_TEST_VOCAB ids, so every id a random vocab-512 model emits decodes. */
    size_t n_spec = sizeof test_specials / sizeof test_specials[0];
    for (size_t i = 0; v->n + i < WGF_TOK_TEST_VOCAB; i++) {
        json_t *a = json_object();
        if (!a) {
            ok = false;
            break;
        }
        char extra[32];
        snprintf(extra, sizeof extra, "<|extra_%zu|>", i - (i < n_spec ? 0 : n_spec));
        JSET(ok, a, "id", json_integer((json_int_t)(v->n + i)));
        JSET(ok, a, "content", json_string(i < n_spec ? test_specials[i] : extra));
        JSET(ok, a, "single_word", json_false());
        JSET(ok, a, "lstrip", json_false());
        JSET(ok, a, "rstrip", json_false());
        JSET(ok, a, "normalized", json_false());
        JSET(ok, a, "special", json_true());
        JAPP(ok, added, a);
    }
    JSET(ok, root, "added_tokens", added);
    JSET(ok, root, "normalizer", json_null());
    JSET(ok, pat, "Regex", json_string(wgf_tok_pre_regex(WGF_TOK_PRE_QWEN2)));
    JSET(ok, split, "type", json_string("Split"));
    JSET(ok, split, "pattern", pat);
    JSET(ok, split, "behavior", json_string("Isolated"));
    JSET(ok, split, "invert", json_false());
    JSET(ok, bl, "type", json_string("ByteLevel"));
    JSET(ok, bl, "add_prefix_space", json_false());
    JSET(ok, bl, "trim_offsets", json_false());
    JSET(ok, bl, "use_regex", json_false());
    JAPP(ok, seq, split);
    JAPP(ok, seq, bl);
    JSET(ok, pre, "type", json_string("Sequence"));
    JSET(ok, pre, "pretokenizers", seq);
    JSET(ok, root, "pre_tokenizer", pre);
    JSET(ok, post, "type", json_string("ByteLevel"));
    JSET(ok, post, "add_prefix_space", json_false());
    JSET(ok, post, "trim_offsets", json_false());
    JSET(ok, post, "use_regex", json_false());
    JSET(ok, root, "post_processor", post);
    JSET(ok, dec, "type", json_string("ByteLevel"));
    JSET(ok, dec, "add_prefix_space", json_false());
    JSET(ok, dec, "trim_offsets", json_false());
    JSET(ok, dec, "use_regex", json_false());
    JSET(ok, root, "decoder", dec);
    for (size_t i = 0; i < v->n; i++) JSET(ok, vocab, v->tok[i], json_integer((json_int_t)i));
    for (size_t i = 0; i < v->n_merges; i++) {
        json_t *m = json_pack("[ss]", v->merge_a[i], v->merge_b[i]);
        if (!m) ok = false;
        JAPP(ok, merges, m);
    }
    JSET(ok, model, "type", json_string("BPE"));
    JSET(ok, model, "dropout", json_null());
    JSET(ok, model, "unk_token", json_null());
    JSET(ok, model, "continuing_subword_prefix", json_string(""));
    JSET(ok, model, "end_of_word_suffix", json_string(""));
    JSET(ok, model, "fuse_unk", json_false());
    JSET(ok, model, "byte_fallback", json_false());
    JSET(ok, model, "ignore_merges", json_false());
    JSET(ok, model, "vocab", vocab);
    JSET(ok, model, "merges", merges);
    JSET(ok, root, "model", model);
    if (!ok) {
        json_decref(root);
        return NULL;
    }
    return root;
}

enum wgf_status wgf_tokenizer_write_test_json(const char *path, struct wgf_err *err)
{
    if (!path) return wgf_fail(err, WGF_ERR_ARG, "tokenizer_write_test_json: NULL path");
    struct test_vocab v;
    enum wgf_status   st = build_test_vocab(&v, err);
    json_t           *root = st ? NULL : test_json(&v);
    if (!st && !root) st = wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory building the test tokenizer", path);
    tv_free(&v);
    if (st) return st;

    /* util/file.h: temp + rename, so a killed writer never leaves a truncated tokenizer.json */
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_ENSURE_ASCII);
    json_decref(root);
    if (!text) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", path);
    st = wgf_file_write_atomic(path, text, strlen(text), err);
    free(text);
    return st;
}
