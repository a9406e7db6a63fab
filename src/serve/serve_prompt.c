/* wgfuse serve — a request's prompt as token ids.
 *
 * Completions: the text is encoded as `wgfuse run --no-template -p TEXT` encodes it (BOS when
 * the tokenizer wants one, control tokens in the text stay text), or the ids are taken as
 * given (each checked against the model's vocabulary).
 *
 * Chat: the whole conversation goes through the server's chat template (wgf_chat_encode,
 * opened once at startup and shared by every connection thread), with the generation prompt
 * added: exactly what `wgfuse run --messages FILE` encodes for the same messages. "developer"
 * is OpenAI's newer name for "system" and is given to the template as "system"; any other
 * role goes to the template as it is, and the template decides (its raise_exception, e.g.
 * roles that do not alternate, is a 400 carrying the template's message). Message text never
 * becomes control tokens. Without a template (--no-template, or a model that ships none and
 * fits no built-in one) a chat request must be one user message, encoded as it is. */
#include <stdlib.h>
#include <string.h>

#include "serve/serve_internal.h"
#include "wgfuse/chat.h"
#include "wgfuse/tokenizer.h"

static int chat_encode(const struct serve_prompt_cfg *c, const struct serve_request *r, int32_t **ids, size_t *n,
                       struct serve_error *e)
{
    struct wgf_err  err = {0};
    enum wgf_status st;
    if (!c->chat) {
        if (r->n_msgs != 1 || strcmp(r->msgs[0].role, "user"))
            return serve_error_set(e, 400, "messages",
                                   "this server has no chat template (--no-template, or the model ships none): a chat "
                                   "request must be one user message (/v1/completions takes raw text)");
        st = wgf_tokenizer_encode_ex(c->tok, r->msgs[0].content, r->msgs[0].len, WGF_TOK_ADD_BOS, ids, n, &err);
    } else {
        struct wgf_chat_msg *msgs = malloc(r->n_msgs * sizeof *msgs);
        if (!msgs) return serve_error_set(e, 500, NULL, "out of memory");
        for (size_t i = 0; i < r->n_msgs; i++)
            msgs[i] = (struct wgf_chat_msg){!strcmp(r->msgs[i].role, "developer") ? "system" : r->msgs[i].role,
                                            r->msgs[i].content, r->msgs[i].len};
        st = wgf_chat_encode(c->chat, msgs, r->n_msgs, true, ids, n, &err);
        free(msgs);
    }
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
        rc = chat_encode(c, r, ids, &n, e);
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
