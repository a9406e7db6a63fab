/* Silent wrong answers (issue 11, "Reliability II"): each case now ends in a clear error or
 * a one-line warning saying what was done, through the CLI ($WGF_CLI) on test models:
 *  - a prompt file with a NUL byte is encoded whole (it was cut at the NUL by the chat
 *    template: 77 tokens instead of 2,402), with a warning;
 *  - a tokenizer with more ids than the model: a prompt id past the model's vocabulary is
 *    reported as a tokenizer/model mismatch, not as a --tokens error;
 *  - a tokenizer with fewer ids than the model: a generated id past its end is reported
 *    once instead of printing nothing;
 *  - the chat template a prompt is formatted with is the model's own, whatever family it
 *    is (issue 21; it used to be a built-in one with a warning); a model without one gets
 *    the built-in template and a note naming it;
 *  - NaN weights: an error naming the position, exit 1, no .npy written (an all-NaN
 *    --logits-out used to exit 0).
 * (config.json's layer count against the weights: tests/llm/test_llm_files_neg.c.) */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "harness.h"

static char        dir[512];

static void run(struct cli_out *o, const char *args) { cli_run(o, dir, args); }

static void path_in(char *buf, size_t cap, const char *name) { snprintf(buf, cap, "%s/%s", dir, name); }

static bool write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    bool  ok = f && fwrite(p, 1, n, f) == n;
    if (f && fclose(f) != 0) ok = false;
    return ok;
}

/* A shell command (printf-style); true when it exits 0. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static bool sh(const char *fmt, ...)
{
    char    cmd[4096], out[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return wgf_t_run(cmd, out, sizeof out) == 0;
}

/* "prompt N tokens" from the stats line, or -1. */
static long prompt_tokens(const char *se)
{
    const char *p = strstr(se, "wgfuse: prompt ");
    return p ? strtol(p + 15, NULL, 10) : -1;
}

static void nul_prompt(struct wgf_t *t, const char *model)
{
    char a[2048], f1[600], f2[600];
    path_in(f1, sizeof f1, "short.txt");
    path_in(f2, sizeof f2, "nul.txt");
    static const char text[] = "hello there\0and the rest of the prompt after the NUL";
    write_file(f1, text, 11);
    write_file(f2, text, sizeof text - 1);
    struct cli_out o1, o2;
    snprintf(a, sizeof a, "run -m '%s' -f '%s' -n 0", model, f1);
    run(&o1, a);
    snprintf(a, sizeof a, "run -m '%s' -f '%s' -n 0", model, f2);
    run(&o2, a);
    long n1 = prompt_tokens(o1.se), n2 = prompt_tokens(o2.se);
    /* the 41 bytes after the NUL are at least 10 more tokens with this small vocabulary */
    wgf_t_check(t, o1.rc == 0 && o2.rc == 0 && n1 > 0 && n2 >= n1 + 10 && strstr(o2.se, "1 NUL byte") &&
                       !strstr(o1.se, "NUL"),
                "prompt file with a NUL: encoded whole through the chat template, one warning",
                "%ld tokens without the tail, %ld with it: %s", n1, n2, o2.se);
}

static void vocab_mismatch(struct wgf_t *t, const char *model)
{
    char a[2048], small[600], big[600];
    struct cli_out o;
    /* a 400-id model with the 512-id test tokenizer: <|im_end|> (id 400) is outside it */
    path_in(small, sizeof small, "v400");
    snprintf(a, sizeof a, "llm make-test-model --arch qwen2 --dims vocab=400 --no-tokenizer -o '%s'", small);
    run(&o, a);
    if (!wgf_t_check(t, o.rc == 0 && sh("cp '%s/tokenizer.json' '%s/'", model, small),
                     "400-id model with a 512-id tokenizer", "rc %d: %s", o.rc, o.se))
        return;
    snprintf(a, sizeof a, "run -m '%s' -p hi -n 1", small);
    run(&o, a);
    wgf_t_check(t, o.rc == 1 && !strstr(o.se, "--tokens") && strstr(o.se, "from the tokenizer, outside the model's vocabulary [0, 400)"),
                "tokenizer id past the model's vocabulary: a mismatch error, not a --tokens error", "rc %d: %s", o.rc, o.se);
    snprintf(a, sizeof a, "run -m '%s' --tokens 1,450 -n 1", small);
    run(&o, a);
    wgf_t_check(t, o.rc == 2 && strstr(o.se, "--tokens: id 450"), "--tokens id past the vocabulary: still a usage error",
                "rc %d: %s", o.rc, o.se);

    /* a 1000-id model with the 512-id tokenizer: sampling (near uniform) reaches ids >= 512 */
    path_in(big, sizeof big, "v1000");
    snprintf(a, sizeof a, "llm make-test-model --arch qwen2 --dims vocab=1000 -o '%s'", big);
    run(&o, a);
    if (!wgf_t_check(t, o.rc == 0, "1000-id model with the 512-id tokenizer", "rc %d: %s", o.rc, o.se)) return;
    snprintf(a, sizeof a, "run -m '%s' -p hi -n 48 --temp 50 --top-k 0 --top-p 1 --seed 3 --ignore-eos", big);
    run(&o, a);
    const char *w = strstr(o.se, "warning: generated id ");
    wgf_t_check(t, o.rc == 0 && w && strstr(w, "past the tokenizer's 512 ids (the model has 1000)") && !strstr(w + 1, "warning: generated id"),
                "generated id past the tokenizer: reported once, not silently dropped", "rc %d: %s", o.rc, o.se);
}

/* What the last command printed on stdout (cli_run writes it to dir/stdout). */
static const char *last_stdout(void)
{
    static char buf[4096];
    char        p[700];
    path_in(p, sizeof p, "stdout");
    FILE  *f = fopen(p, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    return buf;
}

static void chat_template(struct wgf_t *t, const char *model)
{
    char a[2048], d[600], cfg[700], msgs[700];
    struct cli_out o;
    path_in(d, sizeof d, "m_tmpl");
    if (!wgf_t_check(t, sh("rm -rf '%s' && cp -r '%s' '%s'", d, model, d), "model copy", "%s", d)) return;
    snprintf(cfg, sizeof cfg, "%s/tokenizer_config.json", d);
    path_in(msgs, sizeof msgs, "hi.json");
    static const char hi[] = "[{\"role\": \"user\", \"content\": \"hi\"}]";
    write_file(msgs, hi, sizeof hi - 1);
    /* no template in the model: the built-in one for its special tokens, said in one note */
    unlink(cfg);
    snprintf(a, sizeof a, "run -m '%s' -p hi -n 1", d);
    run(&o, a);
    wgf_t_check(t, o.rc == 0 && strstr(o.se, "note: ") && strstr(o.se, "built-in 'qwen2' chat template (the model ships none)") &&
                       !strstr(o.se, "warning"),
                "no chat_template: a note naming the built-in template", "rc %d: %s", o.rc, o.se);
    /* a Mistral-style template: none of the built-in families, rendered as it is */
    static const char mistral[] = "{\"chat_template\": \"{{ bos_token }}{% for m in messages %}[INST] {{ m['content'] }} [/INST]{% endfor %}\"}";
    write_file(cfg, mistral, sizeof mistral - 1);
    run(&o, a);
    wgf_t_check(t, o.rc == 0 && !strstr(o.se, "warning") && !strstr(o.se, "note"),
                "Mistral-style chat_template: used, no warning", "rc %d: %s", o.rc, o.se);
    snprintf(a, sizeof a, "tokenize -m '%s' --messages '%s' --text", d, msgs);
    run(&o, a);
    wgf_t_check(t, o.rc == 0 && !strcmp(last_stdout(), "[INST] hi [/INST]"), "Mistral-style chat_template renders as written",
                "rc %d: [%s] %s", o.rc, last_stdout(), o.se);
    snprintf(a, sizeof a, "run -m '%s' -p hi -n 1 --no-template", d);
    run(&o, a);
    wgf_t_check(t, o.rc == 0 && !strstr(o.se, "warning"), "chat_template with --no-template: no warning", "rc %d: %s",
                o.rc, o.se);
    /* the template in chat_template.jinja (newer repositories): a Llama-3 one over this
     * ChatML vocabulary is what the model asks for */
    unlink(cfg);
    char jinja[700];
    snprintf(jinja, sizeof jinja, "%s/chat_template.jinja", d);
    static const char llama3[] = "{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n{{ m.content }}"
                                 "<|eot_id|>{% endfor %}";
    write_file(jinja, llama3, sizeof llama3 - 1);
    snprintf(a, sizeof a, "tokenize -m '%s' --messages '%s' --text", d, msgs);
    run(&o, a);
    wgf_t_check(t, o.rc == 0 && !strcmp(last_stdout(), "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"),
                "chat_template.jinja is used", "rc %d: [%s] %s", o.rc, last_stdout(), o.se);
}

static void nan_weights(struct wgf_t *t)
{
    char a[2048], d[600], st[700], npy[700];
    struct cli_out o;
    path_in(d, sizeof d, "m_nan");
    snprintf(a, sizeof a, "llm make-test-model --arch llama -o '%s'", d);
    run(&o, a);
    if (!wgf_t_check(t, o.rc == 0, "make-test-model llama", "rc %d: %s", o.rc, o.se)) return;
    /* every weight byte after the safetensors header becomes 0xFF: f32 NaN */
    snprintf(st, sizeof st, "%s/model.safetensors", d);
    FILE *f = fopen(st, "r+b");
    unsigned char h[8];
    bool ok = f && fread(h, 1, 8, f) == 8;
    uint64_t hl = 0;
    for (int i = 0; i < 8; i++) hl |= (uint64_t)h[i] << (8 * i);
    struct stat sb;
    ok = ok && stat(st, &sb) == 0 && fseek(f, (long)(8 + hl), SEEK_SET) == 0;
    for (long i = (long)(8 + hl); ok && i < (long)sb.st_size; i++) ok = fputc(0xFF, f) != EOF;
    if (f) fclose(f);
    if (!wgf_t_check(t, ok, "weights set to NaN", "header %llu bytes", (unsigned long long)hl)) return;
    path_in(npy, sizeof npy, "nan.npy");
    unlink(npy);
    snprintf(a, sizeof a, "run -m '%s' --tokens 1,2 -n 0 --logits-out '%s'", d, npy);
    run(&o, a);
    wgf_t_check(t, o.rc == 1 && strstr(o.se, "logits at position 0:") && strstr(o.se, "not finite") && access(npy, F_OK) != 0,
                "NaN weights with --logits-out: error naming the position, exit 1, no .npy", "rc %d: %s", o.rc, o.se);
    snprintf(a, sizeof a, "run -m '%s' --tokens 1,2 -n 4", d);
    run(&o, a);
    wgf_t_check(t, o.rc == 1 && strstr(o.se, "not finite"), "NaN weights while generating: error, exit 1", "rc %d: %s", o.rc,
                o.se);
}

int main(void)
{
    struct wgf_t t = {0};
    wgf_t_tmpdir("silent_answers", dir, sizeof dir);
    char       model[600], a[1024];
    struct cli_out o;
    path_in(model, sizeof model, "m");
    snprintf(a, sizeof a, "llm make-test-model --arch qwen2 -o '%s'", model);
    run(&o, a);
    if (!wgf_t_check(&t, o.rc == 0, "make-test-model", "rc %d: %s", o.rc, o.se)) return wgf_t_finish(&t);
    nul_prompt(&t, model);
    vocab_mismatch(&t, model);
    chat_template(&t, model);
    nan_weights(&t);
    return wgf_t_finish(&t);
}
