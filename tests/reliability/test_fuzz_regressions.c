/* Fuzz regressions: every file under fuzz/regressions/<target>/ (minimized crashes, kept
 * forever) and fuzz/corpus/<target>/ (the seeds: valid files plus one reproducer per
 * RELIABILITY.md checklist item) goes through the same entry point the libFuzzer target
 * uses (fuzz/fuzz_<target>.c, linked in here under another name). Run in the normal and
 * the sanitizer build by `make test`: a crash, a sanitizer report or a broken fuzz
 * invariant (abort) fails this test. Each input is copied to a buffer of exactly its size
 * so ASan sees any read past the end. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "harness.h"
#include "wgfuse/llm.h"

#define DECL(t)                                                                                                        \
    int wgf_fuzz_##t(const uint8_t *data, size_t size);
DECL(gguf_parse)
DECL(gguf_vocab)
DECL(safetensors_parse)
DECL(tokenizer_json)
DECL(tokenize)
DECL(config_json)
DECL(argv)
DECL(policy_load)
DECL(added_tokens)
int wgf_fuzz_tokenize_init(int *argc, char ***argv);

static const struct {
    const char *name;
    int (*run)(const uint8_t *, size_t);
} targets[] = {
    {"gguf_parse", wgf_fuzz_gguf_parse},   {"gguf_vocab", wgf_fuzz_gguf_vocab},   {"safetensors_parse", wgf_fuzz_safetensors_parse},
    {"tokenizer_json", wgf_fuzz_tokenizer_json}, {"tokenize", wgf_fuzz_tokenize}, {"config_json", wgf_fuzz_config_json},
    {"argv", wgf_fuzz_argv}, {"policy_load", wgf_fuzz_policy_load}, {"added_tokens", wgf_fuzz_added_tokens},
};

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Feed every file of dir; returns the count (-1 when the directory is missing). */
static int replay_files(const char *dir, int (*run)(const uint8_t *, size_t))
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    char         *names[4096];
    int           n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 4096)
        if (e->d_name[0] != '.') names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp);
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        if (f) {
            fseek(f, 0, SEEK_END);
            long     len = ftell(f);
            uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
            fseek(f, 0, SEEK_SET);
            size_t got = len > 0 ? fread(buf, 1, (size_t)len, f) : 0;
            fclose(f);
            fprintf(stderr, "  %s\n", path); /* the last line before a crash names the input */
            run(buf, got);
            free(buf);
        }
        free(names[i]);
    }
    return n;
}

/* The argv target prints `wgfuse run --help` to stdout: keep the check lines clean. */
static int replay(const char *dir, int (*run)(const uint8_t *, size_t))
{
    fflush(stdout);
    int saved = dup(1), null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    int n = replay_files(dir, run);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    close(null);
    return n;
}

int main(void)
{
    struct wgf_t t   = {0};
    const char  *src = getenv("WGF_SOURCE_DIR");
    if (!wgf_t_check(&t, src != NULL, "WGF_SOURCE_DIR", "%s", src ? src : "not set")) return wgf_t_finish(&t);
    int argc = 0;
    wgf_fuzz_tokenize_init(&argc, NULL);
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        char dir[4096], name[128];
        snprintf(dir, sizeof dir, "%s/fuzz/corpus/%s", src, targets[i].name);
        int seeds = replay(dir, targets[i].run);
        snprintf(name, sizeof name, "fuzz seeds %s", targets[i].name);
        wgf_t_check(&t, seeds > 0, name, "%d files in %s", seeds, dir);
        snprintf(dir, sizeof dir, "%s/fuzz/regressions/%s", src, targets[i].name);
        int regs = replay(dir, targets[i].run);
        snprintf(name, sizeof name, "fuzz regressions %s", targets[i].name);
        wgf_t_check(&t, true, name, "%d files", regs < 0 ? 0 : regs);
    }

    /* Findings with a specific expected error (the allocation bound itself is checked by
     * `make fuzz-smoke`, which replays fuzz/regressions under -malloc_limit_mb=1). */
    char path[4096];
    snprintf(path, sizeof path, "%s/fuzz/regressions/gguf_parse/oom_block_count_layer_table", src);
    struct wgf_llm_model *m = NULL;
    struct wgf_err        e = {0};
    enum wgf_status       s = wgf_llm_model_load(path, &m, &e);
    wgf_t_check(&t, s == WGF_ERR_FORMAT && !m && strstr(e.msg, "missing tensor 'blk.1023.attn_norm.weight'"),
                "block_count 1024 in a 1-layer file: missing tensor before the layer table is allocated", "[%s] %s",
                wgf_status_str(s), e.msg);
    wgf_llm_model_free(m);
    return wgf_t_finish(&t);
}
