/* wgfuse CLI — what the LLM commands (run, llm bench) share: the thread default and the
 * forward backend chosen by --backend. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/file.h"
#include "wgfuse/chat.h"
#include "wgfuse/llm_run.h"
#include "wgfuse/tokenizer.h"

uint32_t wgf_cli_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > 16) n = 16;
    return (uint32_t)n;
}

int wgf_cli_backend_flag(struct wgf_cli_backend *b, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--no-subgroups")) {
        b->no_subgroups = true;
        return 1;
    }
    if (!strcmp(a, "--autotune")) {
        b->autotune = true;
        return 1;
    }
    if (strcmp(a, "--backend") && strcmp(a, "--plan") && strcmp(a, "--weights") && strcmp(a, "--activations")) return 0;
    if (*i + 1 >= argc) {
        wgf_cli_error("%s needs a value", a);
        return 2;
    }
    const char *v = argv[++*i];
    if (!strcmp(a, "--activations")) {
        if (strcmp(v, "f32") && strcmp(v, "i8x3") && strcmp(v, "q8")) {
            wgf_cli_error("--activations: '%s' is not f32, i8x3 or q8", v);
            return 2;
        }
        b->act_q8   = !strcmp(v, "q8");
        b->act_i8x3 = !strcmp(v, "i8x3");
    } else if (!strcmp(a, "--backend")) {
        if (strcmp(v, "cpu-ref") && strcmp(v, "gpu")) {
            wgf_cli_error("--backend: '%s' is not a backend (%s)", v, wgf_llm_backend_names());
            return 2;
        }
        b->name = v;
    } else if (!strcmp(a, "--plan")) {
        if (strcmp(v, "auto") && !wgf_llm_backend_find("gpu", v)) {
            wgf_cli_error("--plan: '%s' is not a GPU plan (%s, or auto)", v, wgf_llm_plan_names());
            return 2;
        }
        b->plan = v;
    } else if (!strcasecmp(v, "f16") || !strcasecmp(v, "f32")) { /* the GPU's weight format */
        b->weights_f32 = !strcasecmp(v, "f32");
    } else if (!strcasecmp(v, "bf16")) { /* a quantize type, but it would only round to f16 again */
        wgf_cli_error("--weights: bf16 is not a weight format here (f16 or f32 on the GPU, or a quantization type)");
        return 2;
    } else if (wgf_llm_quantize_known(v)) {
        b->quant = v;
    } else {
        wgf_cli_error("--weights: '%s' is not f16, f32 or a quantization type (%s)", v, wgf_llm_quantize_types());
        return 2;
    }
    return 1;
}

int wgf_cli_llm_model(const char *path, const char *shape, const struct wgf_cli_backend *b, struct wgf_llm_model **m)
{
    struct wgf_err err = {0};
    *m                 = NULL;
    if (!path) {
        enum wgf_status s = b->quant ? wgf_llm_model_synth_weights(shape, b->quant, 1, m, &err)
                                     : wgf_llm_model_synth(shape, WGF_DT_F16, 1, m, &err);
        if (s) wgf_cli_error("%s", err.msg);
        return s ? 2 : 0;
    }
    wgf_cli_note_mapped(path);
    if (!b->quant) {
        if (wgf_llm_model_load(path, m, &err) == WGF_OK) return 0;
        wgf_cli_error("%s", err.msg);
        return 1;
    }
    const char *td = getenv("TMPDIR");
    char        tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/wgfuse-weights-XXXXXX", td && *td ? td : "/tmp");
    int fd = mkstemp(tmp);
    if (fd < 0) {
        wgf_cli_error("--weights %s: cannot create a temporary file in %s: %s (set TMPDIR)", b->quant,
                      td && *td ? td : "/tmp", strerror(errno));
        return 1;
    }
    close(fd);
    enum wgf_status s = wgf_llm_quantize(path, tmp, b->quant, false, true, NULL, &err);
    if (!s) s = wgf_llm_model_load(tmp, m, &err);
    unlink(tmp);
    if (s) {
        wgf_cli_error("--weights %s: %s", b->quant, err.msg);
        return 1;
    }
    fprintf(stderr, "note: %s quantized to %s at load (llama.cpp's mixture rules, docs/llm.md)\n", path, b->quant);
    return 0;
}

void wgf_cli_backend_usage(FILE *f)
{
    fprintf(f, "  --backend B            cpu-ref (default: the plain-C reference) or gpu (WebGPU; the global\n"
               "                         --adapter / --webgpu-lib pick the device)\n"
               "  --plan P               gpu: roles (default: ~5 fused kernel roles per layer, sampling on the\n"
               "                         GPU), the other points of the fusion dial on the same weights and\n"
               "                         kernels: ops (one dispatch per eager-framework op), fused (ops + the\n"
               "                         paper's 3 fusions), mega (every layer in one dispatch of one\n"
               "                         workgroup); or unfused (the first GPU plan, one role per dispatch, f32);\n"
               "                         auto: the plan `wgfuse advise` predicts fastest on this device\n"
               "  --autotune             with --plan auto: time the two plans predicted fastest once each\n"
               "                         (4 decode steps) and take the faster\n"
               "  --weights f16|f32      gpu roles/ops/fused/mega: weight format on the GPU (default f16, two\n"
               "                         per 32-bit word)\n"
               "  --weights TYPE         quantize at load (Q8_0, Q4_0, Q4_K_M, Q5_K_M, Q6_K, ...: `wgfuse llm\n"
               "                         quantize`'s types); every backend then reads the blocks as they are\n"
               "  --activations f32|i8x3|q8\n"
               "                         how quantized weight rows meet the activations. f32 (default): the\n"
               "                         codes decoded to floats against exact activations. i8x3: on the\n"
               "                         GPU's decode rows each activation is three int8 digits of its\n"
               "                         32-block's scale (within ~1.2e-7 of the block's largest, f32-level)\n"
               "                         and the dots are integer (slower than f32 on K-quants); elsewhere\n"
               "                         f32. q8: activations rounded to int8 per 32 (llama.cpp's q8\n"
               "                         activations; not exact) on every backend but the unfused GPU\n"
               "                         plan. Float weight rows are unaffected\n"
               "  --no-subgroups         gpu roles/ops/fused/mega: reductions through workgroup memory\n");
}

bool wgf_cli_backend_open(const struct wgf_cli_backend *b, const char *model, const struct wgf_llm_model *m,
                          struct wgf_llm_backend_options *bo, wgf_ctx **ctx, struct wgf_llm_backend *be)
{
    struct wgf_err err = {0};
    *ctx               = NULL;
    /* --plan / --weights / --no-subgroups alone imply --backend gpu */
    bool gpu = b->name ? !strcmp(b->name, "gpu") : (b->plan || b->weights_f32 || b->no_subgroups);
    if (!gpu && (b->plan || b->weights_f32 || b->no_subgroups)) {
        wgf_cli_error("--plan, --weights and --no-subgroups apply to --backend gpu, not %s", b->name);
        return false;
    }
    bool                          autop = b->plan && !strcmp(b->plan, "auto");
    if (b->autotune && !autop) {
        wgf_cli_error("--autotune applies to --plan auto");
        return false;
    }
    const struct wgf_llm_backend *proto = wgf_llm_backend_find(gpu ? "gpu" : "cpu-ref", autop ? NULL : b->plan);
    if (gpu && proto == &wgf_llm_backend_gpu && (b->weights_f32 || b->no_subgroups)) {
        wgf_cli_error("--weights and --no-subgroups apply to the plans roles, ops, fused and mega");
        return false;
    }
    if (gpu) {
        struct wgf_gpu_options go = wgf_cli_gpu_options();
        if (wgf_ctx_create(&go, ctx, &err) != WGF_OK) {
            wgf_cli_error("--backend gpu: %s", err.msg);
            return false;
        }
        bo->gpu = *ctx;
    }
    bo->weights_f32  = b->weights_f32;
    bo->no_subgroups = b->no_subgroups;
    bo->act_q8       = b->act_q8;
    bo->act_i8x3     = b->act_i8x3;
    if (autop) { /* the cost model's choice (cmd_advise.c) */
        if (!(proto = wgf_cli_plan_auto(*ctx, m, bo, b->autotune))) return false;
    }
    if (wgf_llm_backend_open(be, proto, m, bo, &err) != WGF_OK) {
        wgf_cli_error("%s: %s", model, err.msg);
        return false;
    }
    return true;
}

/* ---- conversations ----------------------------------------------------------------------- */
enum wgf_status wgf_cli_chat_open(const char *model, const struct wgf_tokenizer *tok, const char *arch,
                                  const char *tmpl_file, const char *tmpl_name, bool parse_special,
                                  struct wgf_chat **chat, struct wgf_err *err)
{
    char           *tmpl     = NULL;
    size_t          tmpl_len = 0;
    enum wgf_status st;
    *chat = NULL;
    if (tmpl_file) {
        if ((st = wgf_file_read(tmpl_file, 1u << 20, "a chat template", &tmpl, &tmpl_len, err)) != WGF_OK) return st;
        if (memchr(tmpl, 0, tmpl_len)) {
            free(tmpl);
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: the chat template contains a NUL byte", tmpl_file);
        }
    }
    struct wgf_chat_opts co = {.template_text = tmpl, .template_name = tmpl_name, .parse_special = parse_special};
    st                      = wgf_chat_open(tok, arch, &co, chat, err);
    free(tmpl);
    if (st) {
        if (tmpl_file && st == WGF_ERR_FORMAT) wgf_err_prefix(err, "%s", tmpl_file);
        return st;
    }
    if (wgf_chat_is_builtin(*chat)) fprintf(stderr, "wgfuse: note: %s: using %s\n", model, wgf_chat_source(*chat));
    return WGF_OK;
}

int wgf_cli_chat_encode(const char *model, const struct wgf_tokenizer *tok, const char *arch,
                        const struct wgf_cli_chat *o, int32_t **ids, size_t *n_ids, char **text, size_t *text_len)
{
    struct wgf_err       err = {0};
    unsigned             raw_flags = WGF_TOK_ADD_BOS | (o->parse_special ? WGF_TOK_PARSE_SPECIAL : 0);
    struct wgf_chat     *chat = NULL;
    struct wgf_chat_msg *msgs = NULL, pair[2];
    void                *storage = NULL;
    size_t               n = 0;
    int                  rc = 1;
    enum wgf_status      st = WGF_OK;
    if (o->no_template) goto raw;
    st = wgf_cli_chat_open(model, tok, arch, o->tmpl_file, o->tmpl_name, o->parse_special, &chat, &err);
    if (st == WGF_ERR_UNSUPPORTED && !o->messages) {
        fprintf(stderr, "wgfuse: warning: %s: the model ships no chat template and none of the built-in ones fits its "
                        "special tokens; the prompt is sent without a template\n", model);
        goto raw;
    }
    if (st) goto fail;
    if (o->messages) {
        if (wgf_chat_msgs_load(o->messages, &msgs, &n, &storage, &err) != WGF_OK) goto fail;
    } else {
        if (o->system) pair[n++] = (struct wgf_chat_msg){"system", o->system, strlen(o->system)};
        pair[n++] = (struct wgf_chat_msg){"user", o->user, o->user_len};
    }
    st = text ? wgf_chat_render(chat, msgs ? msgs : pair, n, o->gen_prompt, text, text_len, &err)
              : wgf_chat_encode(chat, msgs ? msgs : pair, n, o->gen_prompt, ids, n_ids, &err);
    if (st) goto fail;
    rc = 0;
    goto done;
raw:
    if (o->messages) {
        wgf_cli_error("--messages needs a chat template (not --no-template)");
        goto done;
    }
    if (text) {
        *text = malloc(o->user_len + 1);
        if (!*text) goto done;
        memcpy(*text, o->user, o->user_len);
        (*text)[o->user_len] = '\0';
        *text_len            = o->user_len;
        rc                   = 0;
        goto done;
    }
    if (wgf_tokenizer_encode_ex(tok, o->user, o->user_len, raw_flags, ids, n_ids, &err) == WGF_OK) {
        rc = 0;
        goto done;
    }
fail:
    wgf_cli_error("%s", err.msg);
done:
    wgf_chat_msgs_free(msgs, storage);
    wgf_chat_close(chat);
    return rc;
}

uint32_t wgf_cli_default_ctx(const struct wgf_llm_config *c)
{
    return c->max_seq_len > 0 && c->max_seq_len < 4096 ? (uint32_t)c->max_seq_len : 4096;
}

void wgf_cli_note_ctx(const struct wgf_llm_model *m, const char *what, uint64_t n_ctx)
{
    const struct wgf_llm_config *c = &m->cfg;
    if (c->max_seq_len <= 0 || n_ctx <= (uint64_t)c->max_seq_len) return;
    char where[sizeof m->path + 64];
    if (m->format == WGF_LLM_FORMAT_GGUF) snprintf(where, sizeof where, "%s.context_length in %s", wgf_arch_str(c->arch), m->path);
    else if (!strncmp(m->path, "synthetic:", 10)) snprintf(where, sizeof where, "max_position_embeddings of the %s shape", m->path + 10);
    else snprintf(where, sizeof where, "max_position_embeddings in %s/config.json", m->path);
    fprintf(stderr, "note: %s %llu is above the model's trained context %d (%s); quality past %d is not what it was trained for\n",
            what, (unsigned long long)n_ctx, c->max_seq_len, where, c->max_seq_len);
}

void wgf_cli_note_window(const char *path, const struct wgf_llm_config *c, uint64_t positions)
{
    int w = c->sliding_window_unapplied;
    if (w > 0 && positions > (uint64_t)w)
        fprintf(stderr,
                "note: %s: the GGUF's attention.sliding_window of %d positions is not applied, as in llama.cpp: past it every "
                "position attends to all earlier ones (docs/llm.md)\n",
                path ? path : "model", w);
}
