/* Fuzz regressions: every file under fuzz/regressions/<target>/ (minimized crashes, kept
 * forever) and fuzz/corpus/<target>/ (the seeds: valid files plus one reproducer per
 * RELIABILITY.md checklist item) goes through the same entry point the libFuzzer target
 * uses (fuzz/fuzz_<target>.c, linked in here under another name). Run in the normal and
 * the sanitizer build by `make test`: a crash, a sanitizer report or a broken fuzz
 * invariant (abort) fails this test, and so does an input that cannot be read or an entry
 * point returning what libFuzzer refuses (not 0 or -1). A target without regressions is a
 * SKIP line. Each input is copied to a buffer of exactly its size so ASan sees any read past
 * the end. Mutation caught (tried): fuzz_config_json.c returning 1 fails "fuzz seeds config_json". */
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
DECL(chat_template)
#ifdef WGF_HAVE_SERVE
DECL(serve_request)
#endif
int wgf_fuzz_tokenize_init(int *argc, char ***argv);

static const struct {
    const char *name;
    int (*run)(const uint8_t *, size_t);
} targets[] = {
    {"gguf_parse", wgf_fuzz_gguf_parse},   {"gguf_vocab", wgf_fuzz_gguf_vocab},   {"safetensors_parse", wgf_fuzz_safetensors_parse},
    {"tokenizer_json", wgf_fuzz_tokenizer_json}, {"tokenize", wgf_fuzz_tokenize}, {"config_json", wgf_fuzz_config_json},
    {"argv", wgf_fuzz_argv}, {"policy_load", wgf_fuzz_policy_load}, {"added_tokens", wgf_fuzz_added_tokens},
    {"chat_template", wgf_fuzz_chat_template},
#ifdef WGF_HAVE_SERVE
    {"serve_request", wgf_fuzz_serve_request},
#endif
};

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Feed every file of dir; returns the count (-1 when the directory is missing). *bad counts
 * the inputs that could not be read whole and the runs whose return value libFuzzer would
 * refuse (an entry point returns 0, or -1 for "do not add to the corpus"); *first_bad names
 * the first of them. */
static int replay_files(const char *dir, int (*run)(const uint8_t *, size_t), int *bad, char *first_bad, size_t cap)
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
        FILE *f  = fopen(path, "rb");
        long len = -1;
        if (f && fseek(f, 0, SEEK_END) == 0) len = ftell(f);
        uint8_t *buf = len >= 0 ? malloc(len > 0 ? (size_t)len : 1) : NULL;
        size_t   got = 0;
        if (buf && fseek(f, 0, SEEK_SET) == 0) got = fread(buf, 1, (size_t)len, f);
        if (f) fclose(f);
        int rc = 0;
        if (buf && got == (size_t)len) {
            fprintf(stderr, "  %s\n", path); /* the last line before a crash names the input */
            rc = run(buf, got);
        }
        if (!buf || got != (size_t)len || (rc != 0 && rc != -1)) {
            if ((*bad)++ == 0) snprintf(first_bad, cap, "%s (%s)", path, !buf || got != (size_t)len ? "unreadable" : "returned neither 0 nor -1");
        }
        free(buf);
        free(names[i]);
    }
    return n;
}

/* The argv target prints `wgfuse run --help` to stdout: keep the check lines clean. */
static int replay(const char *dir, int (*run)(const uint8_t *, size_t), int *bad, char *first_bad, size_t cap)
{
    fflush(stdout);
    int saved = dup(1), null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    int n = replay_files(dir, run, bad, first_bad, cap);
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
        char bad_name[4200] = "";
        int  bad            = 0;
        snprintf(dir, sizeof dir, "%s/fuzz/corpus/%s", src, targets[i].name);
        int seeds = replay(dir, targets[i].run, &bad, bad_name, sizeof bad_name);
        snprintf(name, sizeof name, "fuzz seeds %s", targets[i].name);
        wgf_t_check(&t, seeds > 0 && bad == 0, name, "%d files in %s, %d bad%s%s", seeds, dir, bad, bad ? ": " : "",
                    bad_name);
        /* A folder with no minimized crash has nothing to replay: a SKIP, never a PASS
         * (issue 19: six empty folders used to print PASS through check(true)). */
        bad = 0;
        snprintf(dir, sizeof dir, "%s/fuzz/regressions/%s", src, targets[i].name);
        int regs = replay(dir, targets[i].run, &bad, bad_name, sizeof bad_name);
        snprintf(name, sizeof name, "fuzz regressions %s", targets[i].name);
        if (regs <= 0) wgf_t_skip(&t, name, "no minimized crash recorded for this target");
        else wgf_t_check(&t, bad == 0, name, "%d files, %d bad%s%s", regs, bad, bad ? ": " : "", bad_name);
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
