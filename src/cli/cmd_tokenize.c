/* wgfuse tokenize — a model's tokenizer on the command line: text to ids (a JSON array) or
 * ids back to text. The tokenizer is found by wgf_llm_tokenizer_load_path (a model directory,
 * a .gguf file or a tokenizer.json); no weights are loaded. Exit codes: 0 ok, 1 failure, 2
 * usage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/tokenizer.h"

static void tokenize_usage(FILE *f)
{
    fprintf(f, "usage: wgfuse tokenize -m PATH (-p TEXT | --detokenize 1,2,3) [--parse-special] [--no-bos]\n"
               "       wgfuse tokenize -m PATH --messages FILE.json [--no-generation-prompt] [--text]\n"
               "                       [--chat-template FILE] [--chat-template-name NAME] [--parse-special]\n"
               "  prints the ids as a JSON array, or the decoded text (special tokens rendered)\n"
               "  --messages: a conversation [{\"role\": ..., \"content\": ...}] rendered with the model's chat\n"
               "  template (as transformers' apply_chat_template); --text prints the rendered text instead of ids\n"
               "  PATH: a model directory, a .gguf file, or a tokenizer.json\n");
}

int wgf_cmd_tokenize(int argc, char **argv)
{
    const char *model = NULL, *prompt = NULL, *detok = NULL, *messages = NULL, *tmpl_file = NULL, *tmpl_name = NULL;
    bool        parse_special = false, no_bos = false, no_gen = false, as_text = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wgf_cli_is_help(a)) {
            tokenize_usage(stdout);
            return 0;
        } else if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            if (!(model = wgf_cli_flag_value(argc, argv, &i))) return 2;
        } else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) {
            if (!(prompt = wgf_cli_flag_value(argc, argv, &i))) return 2;
        } else if (!strcmp(a, "--detokenize")) {
            if (!(detok = wgf_cli_flag_value(argc, argv, &i))) return 2;
        } else if (!strcmp(a, "--messages")) {
            if (!(messages = wgf_cli_flag_value(argc, argv, &i))) return 2;
        } else if (!strcmp(a, "--chat-template")) {
            if (!(tmpl_file = wgf_cli_flag_value(argc, argv, &i))) return 2;
        } else if (!strcmp(a, "--chat-template-name")) {
            if (!(tmpl_name = wgf_cli_flag_value(argc, argv, &i))) return 2;
        } else if (!strcmp(a, "--no-generation-prompt")) {
            no_gen = true;
        } else if (!strcmp(a, "--text")) {
            as_text = true;
        } else if (!strcmp(a, "--parse-special")) {
            parse_special = true;
        } else if (!strcmp(a, "--no-bos")) {
            no_bos = true;
        } else {
            wgf_cli_error("tokenize: unknown option '%s'", a);
            return 2;
        }
    }
    if (!model || (prompt != NULL) + (detok != NULL) + (messages != NULL) != 1) {
        wgf_cli_error("tokenize: need -m PATH and exactly one of -p TEXT / --detokenize IDS / --messages FILE");
        return 2;
    }
    if (!messages && (no_gen || as_text || tmpl_file || tmpl_name)) {
        wgf_cli_error("tokenize: --no-generation-prompt, --text, --chat-template and --chat-template-name go with --messages");
        return 2;
    }
    if (messages && no_bos) {
        wgf_cli_error("tokenize: --no-bos does not go with --messages (the template writes BOS itself)");
        return 2;
    }
    int32_t *ids = NULL;
    size_t   n   = 0;
    if (detok && !wgf_cli_parse_ids("--detokenize", detok, &ids, &n)) return 2;

    struct wgf_err        err = {0};
    struct wgf_tokenizer *tok = NULL;
    int                   rc  = 1;
    if (wgf_llm_tokenizer_load_path(model, &tok, &err) != WGF_OK) {
        wgf_cli_error("%s", err.msg);
        goto out;
    }
    if (!tok) {
        wgf_cli_error("%s: no tokenizer (tokenizer.json / tokenizer.ggml.*)", model);
        goto out;
    }
    if (messages) {
        struct wgf_cli_chat co = {.messages = messages, .tmpl_file = tmpl_file, .tmpl_name = tmpl_name,
                                  .parse_special = parse_special, .gen_prompt = !no_gen};
        char  *text = NULL;
        size_t len  = 0;
        if (wgf_cli_chat_encode(model, tok, NULL, &co, &ids, &n, as_text ? &text : NULL, &len) != 0) goto out;
        if (as_text) {
            fwrite(text, 1, len, stdout);
            free(text);
        } else {
            putchar('[');
            for (size_t i = 0; i < n; i++) printf("%s%d", i ? ", " : "", (int)ids[i]);
            puts("]");
        }
    } else if (detok) {
        char  *text = NULL;
        size_t len  = 0;
        if (wgf_tokenizer_decode(tok, ids, n, true, &text, &len, &err) != WGF_OK) {
            wgf_cli_error("--detokenize: %s", err.msg);
            rc = 2;
            goto out;
        }
        fwrite(text, 1, len, stdout);
        putchar('\n');
        free(text);
    } else {
        unsigned flags = (parse_special ? WGF_TOK_PARSE_SPECIAL : 0) | (no_bos ? 0 : WGF_TOK_ADD_BOS);
        if (wgf_tokenizer_encode_ex(tok, prompt, strlen(prompt), flags, &ids, &n, &err) != WGF_OK) {
            wgf_cli_error("%s", err.msg);
            goto out;
        }
        putchar('[');
        for (size_t i = 0; i < n; i++) printf("%s%d", i ? ", " : "", (int)ids[i]);
        puts("]");
    }
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
    free(ids);
    wgf_tokenizer_free(tok);
    return rc;
}
