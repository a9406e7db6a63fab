/* wgfuse — building a tokenizer from GGUF's tokenizer.ggml.* arrays (struct wgf_tok_spec).
 * The GGUF reader (gguf.c) owns the file; this file only sees borrowed arrays. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llm/tokenizer_internal.h"

void wgf_tok_spec_init(struct wgf_tok_spec *s)
{
    memset(s, 0, sizeof *s);
    s->bos_id = s->eos_id = s->unk_id = s->pad_id = s->eot_id = -1;
    s->add_bos          = -1;
    s->add_space_prefix = -1;
}

enum wgf_tok_model wgf_tok_model_from_gguf(const char *name)
{
    if (!name) return 0;
    if (strcmp(name, "gpt2") == 0) return WGF_TOK_MODEL_BPE;
    if (strcmp(name, "llama") == 0) return WGF_TOK_MODEL_SPM;
    return 0;
}

/* tokenizer.ggml.pre -> named pre-tokenizer; false if unknown. Only the pre-tokenizers
 * of the supported architectures are accepted: a wrong guess would silently give other
 * token ids than the model was trained on. */
static bool pre_from_name(const char *name, enum wgf_tok_pre *pre, bool *ignore_merges)
{
    *ignore_merges = false;
    if (!name || strcmp(name, "default") == 0 || strcmp(name, "gpt2") == 0 || strcmp(name, "gpt-2") == 0) {
        *pre = WGF_TOK_PRE_GPT2;
        return true;
    }
    if (strcmp(name, "qwen2") == 0) {
        *pre = WGF_TOK_PRE_QWEN2;
        return true;
    }
    if (strcmp(name, "llama-bpe") == 0 || strcmp(name, "llama3") == 0 || strcmp(name, "llama-v3") == 0) {
        *pre           = WGF_TOK_PRE_LLAMA3;
        *ignore_merges = true; /* Llama-3's tokenizer.json sets model.ignore_merges */
        return true;
    }
    return false;
}

/* Phi-3's tokenizer.json gives its added tokens rstrip=true ("<|user|>\n" encodes as
 * "<|user|>"), except <unk>, <s> and <|endoftext|>; GGUF does not store the flag. */
static void phi3_rstrip(struct wgf_tokenizer *t)
{
    static const char *const keep[] = {"<unk>", "<s>", "<|endoftext|>"};
    for (size_t i = 0; i < t->n_vocab; i++) {
        struct wgf__tok_entry *e = &t->ents[i];
        if (e->type != WGF_TOKEN_CONTROL && e->type != WGF_TOKEN_USER_DEFINED) continue;
        bool skip = false;
        for (size_t k = 0; k < 3; k++) skip |= strcmp(e->str, keep[k]) == 0;
        if (!skip) e->strip |= WGF__STRIP_RIGHT;
    }
}

enum wgf_status wgf_tokenizer_from_spec(const struct wgf_tok_spec *spec, struct wgf_tokenizer **out,
                                        struct wgf_err *err)
{
    if (!spec || !out) return wgf_fail(err, WGF_ERR_ARG, "tokenizer_from_spec: NULL argument");
    *out            = NULL;
    const char *src = spec->source ? spec->source : "tokenizer";
    if (spec->model != WGF_TOK_MODEL_BPE && spec->model != WGF_TOK_MODEL_SPM)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: tokenizer model %d not supported (gpt2 BPE or llama SPM)", src,
                        (int)spec->model);
    if (!spec->tokens) return wgf_fail(err, WGF_ERR_FORMAT, "%s: tokenizer.ggml.tokens missing", src);
    if (spec->model == WGF_TOK_MODEL_BPE && spec->n_merges && !spec->merges)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: tokenizer.ggml.merges missing", src);

    enum wgf_tok_pre pre = WGF_TOK_PRE_GPT2;
    bool             ignore_merges = false;
    if (spec->model == WGF_TOK_MODEL_BPE && !pre_from_name(spec->pre, &pre, &ignore_merges))
        return wgf_fail(err, WGF_ERR_UNSUPPORTED,
                        "%s: tokenizer.ggml.pre '%.64s' not supported (known: default, gpt2, qwen2, llama-bpe)", src,
                        spec->pre);

    struct wgf_tokenizer *t;
    enum wgf_status       st = wgf__tok_alloc(spec->model, spec->n_tokens, src, &t, err);
    if (st) return st;
    for (size_t i = 0; i < spec->n_tokens && !st; i++) {
        const char *s = spec->tokens[i];
        if (!s) {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: tokenizer.ggml.tokens[%zu] is NULL", src, i);
            break;
        }
        size_t n = strnlen(s, WGF__TOK_MAX_LEN + 1);
        st       = wgf__tok_set(t, i, s, n, src, err);
        if (st) break;
        t->ents[i].type = spec->types ? spec->types[i] : WGF_TOKEN_NORMAL;
        if (t->ents[i].type < 0 || t->ents[i].type > WGF_TOKEN_BYTE)
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: tokenizer.ggml.token_type[%zu] = %d is not 0..6", src, i,
                          (int)t->ents[i].type);
        float sc = spec->scores ? spec->scores[i] : 0.0f;
        if (isnan(sc)) st = wgf_fail(err, WGF_ERR_FORMAT, "%s: tokenizer.ggml.scores[%zu] is NaN", src, i);
        t->ents[i].score = sc;
    }
    if (!st) st = wgf__tok_index(t, src, err);

    if (!st && spec->model == WGF_TOK_MODEL_BPE) {
        t->ignore_merges = ignore_merges;
        st               = wgf__pretok_add_regex(t, wgf_tok_pre_regex(pre), src, err);
        if (!st) st = wgf__tok_reserve_merges(t, spec->n_merges, src, err);
        for (size_t i = 0; i < spec->n_merges && !st; i++) {
            const char *m = spec->merges[i];
            if (!m) {
                st = wgf_fail(err, WGF_ERR_FORMAT, "%s: tokenizer.ggml.merges[%zu] is NULL", src, i);
                break;
            }
            size_t      n  = strnlen(m, 2 * WGF__TOK_MAX_LEN + 2);
            const char *sp = n > 1 ? memchr(m + 1, ' ', n - 1) : NULL;
            if (!sp || sp + 1 == m + n)
                st = wgf_fail(err, WGF_ERR_FORMAT, "%s: tokenizer.ggml.merges[%zu] '%.64s' is not \"left right\"", src,
                              i, m);
            else
                st = wgf__tok_add_merge(t, m, (size_t)(sp - m), sp + 1, n - (size_t)(sp - m) - 1, i, src,
                                        "tokenizer.ggml.merges", err);
        }
    }
    if (!st) {
        t->bos              = spec->bos_id;
        t->eos              = spec->eos_id;
        t->unk              = spec->unk_id;
        t->pad              = spec->pad_id;
        t->eot              = spec->eot_id;
        t->add_bos          = spec->add_bos < 0 ? spec->model == WGF_TOK_MODEL_SPM : spec->add_bos != 0;
        t->add_space_prefix = spec->model == WGF_TOK_MODEL_SPM && spec->add_space_prefix != 0;
        if (spec->arch && strcmp(spec->arch, "phi3") == 0) phi3_rstrip(t);
        st                  = wgf__tok_finish(t, src, err);
    }
    if (st) {
        wgf_tokenizer_free(t);
        return st;
    }
    *out = t;
    return WGF_OK;
}
