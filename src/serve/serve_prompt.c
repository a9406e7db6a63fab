/* wgfuse serve — a request's prompt as token ids.
 *
 * Completions: the text is encoded as `wgfuse run --no-template -p TEXT` encodes it (BOS when
 * the tokenizer wants one, control tokens in the text stay text), or the ids are taken as
 * given (each checked against the model's vocabulary).
 *
 * Chat: messages -> the model's chat template. chat_render() below is the one place that
 * decides how; it uses the built-in template families of chat_template.h, which render one
 * system and one user turn: the first message when it is a system (or developer) message,
 * and the last message, which must be the user's. Earlier turns are not rendered until the
 * Jinja chat-template engine (include/wgfuse/chat.h) replaces this function. With the same
 * system text and user text this is exactly what `wgfuse run --system S -p U` encodes. */
#include <stdlib.h>
#include <string.h>

#include "serve/serve_internal.h"
#include "wgfuse/tokenizer.h"

static int chat_render(const struct serve_prompt_cfg *c, const struct serve_request *r, int32_t **ids, size_t *n,
                       struct serve_error *e)
{
    const struct serve_msg *last = &r->msgs[r->n_msgs - 1];
    if (strcmp(last->role, "user"))
        return serve_error_set(e, 400, "messages", "the last message must be the user's (role \"user\"), not \"%s\"",
                               last->role);
    char *system = NULL;
    if (r->n_msgs > 1 && (!strcmp(r->msgs[0].role, "system") || !strcmp(r->msgs[0].role, "developer"))) {
        system = malloc(r->msgs[0].len + 1);
        if (!system) return serve_error_set(e, 500, NULL, "out of memory");
        memcpy(system, r->msgs[0].content, r->msgs[0].len);
        system[r->msgs[0].len] = 0;
    }
    struct wgf_err  err = {0};
    enum wgf_status st;
    if (c->chat_template != WGF_CHAT_NONE)
        st = wgf_chat_template_encode_n(c->tok, c->chat_template, system, last->content, last->len, WGF_TOK_ADD_BOS,
                                        ids, n, &err);
    else
        st = wgf_tokenizer_encode_ex(c->tok, last->content, last->len, WGF_TOK_ADD_BOS, ids, n, &err);
    free(system);
    if (st == WGF_ERR_NOMEM || st == WGF_ERR_INTERNAL) return serve_error_set(e, 500, NULL, "chat template: %s", err.msg);
    if (st) return serve_error_set(e, 400, "messages", "chat template: %s", err.msg);
    return 0;
}

int serve_prompt_ids(const struct serve_prompt_cfg *c, const struct serve_request *r, int32_t **ids, uint32_t *n_out,
                     struct serve_error *e)
{
    *ids       = NULL;
    size_t n   = 0;
    int    rc  = 0;
    if (r->kind == SERVE_CHAT) {
        rc = chat_render(c, r, ids, &n, e);
    } else if (r->ids) {
        for (size_t i = 0; i < r->n_ids; i++)
            if ((uint32_t)r->ids[i] >= c->n_vocab)
                return serve_error_set(e, 400, "prompt", "'prompt[%zu]': token id %d is outside the vocabulary [0, %u)", i,
                                       (int)r->ids[i], c->n_vocab);
        *ids = malloc((r->n_ids ? r->n_ids : 1) * sizeof **ids);
        if (!*ids) return serve_error_set(e, 500, NULL, "out of memory");
        memcpy(*ids, r->ids, r->n_ids * sizeof **ids);
        n = r->n_ids;
    } else {
        struct wgf_err  err = {0};
        enum wgf_status st  = wgf_tokenizer_encode_ex(c->tok, r->prompt, r->prompt_len, WGF_TOK_ADD_BOS, ids, &n, &err);
        if (st) rc = serve_error_set(e, st == WGF_ERR_NOMEM ? 500 : 400, "prompt", "prompt: %s", err.msg);
    }
    if (!rc && n == 0) rc = serve_error_set(e, 400, r->kind == SERVE_CHAT ? "messages" : "prompt", "the prompt is empty (no tokens)");
    if (!rc && n > c->max_prompt)
        rc = serve_error_set(e, 422, r->kind == SERVE_CHAT ? "messages" : "prompt",
                             "the prompt is %zu tokens, more than this server's limit of %u (the context)", n, c->max_prompt);
    if (!rc)
        for (size_t i = 0; i < n; i++)
            if ((uint32_t)(*ids)[i] >= c->n_vocab)
                rc = serve_error_set(e, 500, NULL, "the tokenizer gave id %d, outside the model's vocabulary [0, %u)",
                                     (int)(*ids)[i], c->n_vocab);
    if (rc) {
        free(*ids);
        *ids = NULL;
        return rc;
    }
    *n_out = (uint32_t)n;
    return 0;
}
