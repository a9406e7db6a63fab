/* run_prompt — generate text for one prompt with wgfuse, using only its public API.
 *
 *   run_prompt MODEL PROMPT [N]
 *
 * MODEL is a Hugging Face directory (config.json + safetensors) or a .gguf file. The prompt
 * goes through the model's chat template, then N (default 64) tokens are generated greedily
 * on the plain-C reference backend and printed as they come. The output is the same as
 *   wgfuse run -m MODEL -p PROMPT -n N --temp 0
 * (tests/install/ checks it). Build against an installed wgfuse:
 *   cc -std=c11 run_prompt.c $(pkg-config --cflags --libs wgfuse) -o run_prompt
 * or with CMake: find_package(wgfuse) and link wgfuse::wgfuse (examples/CMakeLists.txt). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wgfuse/chat_template.h>
#include <wgfuse/llm.h>
#include <wgfuse/llm_run.h>
#include <wgfuse/tokenizer.h>

static int print_text(void *user, const char *text, size_t len)
{
    (void)user;
    fwrite(text, 1, len, stdout);
    fflush(stdout);
    return 0; /* 0: go on */
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: run_prompt MODEL PROMPT [N]\n");
        return 2;
    }
    const char *path = argv[1], *prompt = argv[2];
    uint32_t    n    = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 64;

    struct wgf_err         err = {0};
    struct wgf_llm_model  *m   = NULL; /* owned: wgf_llm_model_free                      */
    struct wgf_tokenizer  *tok = NULL; /* owned: wgf_tokenizer_free                      */
    struct wgf_llm_backend be  = {0};  /* owns its state: wgf_llm_backend_close          */
    struct wgf_sampler     smp = {0};  /* owns its buffers: wgf_sampler_free             */
    int32_t               *ids = NULL; /* malloc'd by the encoder: free                  */
    size_t                 n_ids = 0;
    int                    rc    = 1;

    if (wgf_llm_model_load(path, &m, &err) != WGF_OK || wgf_llm_tokenizer_load(m, &tok, &err) != WGF_OK) goto out;
    if (!tok) {
        wgf_fail(&err, WGF_ERR_UNSUPPORTED, "%s: no tokenizer", path);
        goto out;
    }
    /* the model's chat template around the prompt, BOS when the tokenizer wants one */
    enum wgf_chat_template kind = wgf_chat_template_detect(tok, wgf_arch_str(m->cfg.arch));
    if (wgf_chat_template_encode(tok, kind, NULL, prompt, WGF_TOK_ADD_BOS, &ids, &n_ids, &err) != WGF_OK) goto out;

    /* the KV cache as `wgfuse run` sizes it: the model's context, at most 4096 positions */
    uint32_t n_ctx = m->cfg.max_seq_len > 0 && m->cfg.max_seq_len < 4096 ? (uint32_t)m->cfg.max_seq_len : 4096;
    struct wgf_llm_backend_options bo = {.n_ctx = n_ctx};
    if (wgf_llm_backend_open(&be, &wgf_llm_backend_ref, m, &bo, &err) != WGF_OK) goto out;

    struct wgf_sampler_params sp = wgf_sampler_params_default();
    sp.temperature               = 0; /* greedy */
    if (wgf_sampler_init(&smp, &sp, be.n_vocab, &err) != WGF_OK) goto out;

    struct wgf_gen_params gp = wgf_gen_params_default();
    gp.max_tokens            = n;
    for (int i = 0; i < m->cfg.n_eos && i < WGF_GEN_MAX_EOS; i++) gp.eos_ids[i] = m->cfg.eos_ids[i];
    struct wgf_gen_callbacks cb = {.on_text = print_text};
    struct wgf_gen_stats     stats;
    if (wgf_generate(&be, tok, &smp, &gp, ids, (uint32_t)n_ids, &cb, &stats, &err) != WGF_OK) goto out;
    printf("\n");
    fprintf(stderr, "run_prompt: %u prompt tokens, %u generated, stop: %s\n", stats.n_prompt, stats.n_generated,
            stats.stop_reason ? stats.stop_reason : "-");
    rc = 0;
out:
    if (rc) fprintf(stderr, "run_prompt: %s (%s)\n", err.msg, wgf_status_str(err.status));
    free(ids);
    wgf_sampler_free(&smp);
    wgf_llm_backend_close(&be);
    wgf_tokenizer_free(tok);
    wgf_llm_model_free(m);
    return rc;
}
