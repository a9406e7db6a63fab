/* The generation loop on cpu-ref with a tiny in-memory model: greedy determinism and
 * agreement with a hand-written argmax loop, seeded sampling, max tokens, EOS, context
 * limit and context stop, logits rows for --logits-out, stop strings, streamed text always
 * valid UTF-8; and the .npy writer (format, atomic replace, abort keeps the old file). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "test_forward_model.h" /* tm_build; the naive forward is not used here */
#include "wgfuse/llm_run.h"
#include "wgfuse/tokenizer.h"

struct rec {
    int32_t ids[512];
    int     n_ids;
    char    text[8192];
    size_t  n_text;
    float  *rows; /* logits rows received */
    size_t  n_rows, cap_rows;
    uint32_t vocab;
};

static int rec_token(void *u, int32_t id)
{
    struct rec *r = u;
    if (r->n_ids < 512) r->ids[r->n_ids++] = id;
    return 0;
}

static int rec_text(void *u, const char *s, size_t n)
{
    struct rec *r = u;
    if (r->n_text + n < sizeof r->text) memcpy(r->text + r->n_text, s, n), r->n_text += n;
    r->text[r->n_text] = 0;
    return 0;
}

static int rec_logits(void *u, const float *l, uint32_t n, uint32_t V)
{
    struct rec *r = u;
    if (r->n_rows + n > r->cap_rows) {
        r->cap_rows = (r->n_rows + n) * 2;
        r->rows     = realloc(r->rows, r->cap_rows * V * sizeof(float));
        WGF_ASSERT(r->rows);
    }
    memcpy(r->rows + r->n_rows * V, l, (size_t)n * V * sizeof(float));
    r->n_rows += n;
    r->vocab = V;
    return 0;
}

static bool valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t   len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (!len || i + len > n) return false;
        uint32_t cp = len == 1 ? c : c & (0x7F >> len);
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return false;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

static enum wgf_status gen(struct wgf_llm_backend *b, const struct wgf_tokenizer *tok, float temp, uint64_t seed,
                           struct wgf_gen_params *p, const int32_t *prompt, uint32_t n, struct rec *r,
                           struct wgf_gen_stats *st, struct wgf_err *err)
{
    struct wgf_sampler_params sp = wgf_sampler_params_default();
    sp.temperature = temp, sp.seed = seed, sp.top_k = 0, sp.top_p = 1;
    struct wgf_sampler s;
    enum wgf_status    rc = wgf_sampler_init(&s, &sp, b->n_vocab, err);
    if (rc) return rc;
    memset(r->ids, 0, sizeof r->ids);
    r->n_ids = 0, r->n_text = 0, r->n_rows = 0, r->text[0] = 0;
    struct wgf_gen_callbacks cb = {.user = r, .on_token = rec_token, .on_text = rec_text, .on_logits = rec_logits};
    rc = wgf_generate(b, tok, &s, p, prompt, n, &cb, st, err);
    wgf_sampler_free(&s);
    return rc;
}

/* A backend whose fail_at-th forward fails with WGF_ERR_DEVICE_LOST, as a GPU backend's
 * does after a device loss; the others go to cpu-ref. */
struct failing {
    struct wgf_llm_backend *inner;
    int                     calls, fail_at;
};
static enum wgf_status failing_forward(struct wgf_llm_backend *b, const int32_t *tokens, uint32_t n, uint32_t pos,
                                       float *logits, bool all, struct wgf_err *err)
{
    struct failing *f = b->impl;
    if (++f->calls == f->fail_at) return wgf_fail(err, WGF_ERR_DEVICE_LOST, "test: device lost at forward %d", f->calls);
    return f->inner->forward(f->inner, tokens, n, pos, logits, all, err);
}
static void failing_reset(struct wgf_llm_backend *b)
{
    struct failing *f = b->impl;
    f->inner->reset(f->inner);
}

/* A forward error mid-generation (device lost) ends generation with that error, and the
 * text of every token delivered so far is emitted, including text that was being held back
 * for a possible stop string: the same text as a run that stopped there normally. */
static void test_error_flush(struct wgf_t *t, struct wgf_llm_backend *b, const struct wgf_tokenizer *tok,
                             const int32_t *prompt)
{
    struct failing         f  = {.inner = b, .fail_at = 9};
    struct wgf_llm_backend fb = *b;
    fb.name = "failing", fb.impl = &f, fb.forward = failing_forward, fb.reset = failing_reset, fb.free = NULL;
    static struct rec     lost, ref;
    struct wgf_gen_params p = wgf_gen_params_default();
    struct wgf_gen_stats  st;
    struct wgf_err        err = {0};
    p.max_tokens              = 60;
    enum wgf_status s         = gen(&fb, tok, 1.0f, 3, &p, prompt, 8, &lost, &st, &err);
    int             n         = lost.n_ids;
    if (!wgf_t_check(t, s == WGF_ERR_DEVICE_LOST && n >= 2 && strstr(err.msg, "device lost"),
                     "forward error mid-generation: returned, tokens so far delivered", "%s, %d tokens: %s",
                     wgf_status_str(s), n, err.msg))
        return;
    p.max_tokens = (uint32_t)n;
    s            = gen(b, tok, 1.0f, 3, &p, prompt, 8, &ref, &st, &err);
    bool same    = s == WGF_OK && ref.n_ids == n && !memcmp(ref.ids, lost.ids, (size_t)n * sizeof *ref.ids) &&
                ref.n_text == lost.n_text && !memcmp(ref.text, lost.text, ref.n_text);
    wgf_t_check(t, same, "forward error: same ids and text as a run stopped there", "%zu vs %zu bytes", lost.n_text,
                ref.n_text);
    if (ref.n_text == 0) return;
    /* a stop string that begins with the text's last character is pending at the error */
    size_t last = ref.n_text - 1;
    while (last > 0 && ((unsigned char)ref.text[last] & 0xC0) == 0x80) last--;
    char stop[16] = {0};
    snprintf(stop, sizeof stop, "%.*s\x01", (int)(ref.n_text - last), ref.text + last);
    char want[8192];
    memcpy(want, ref.text, ref.n_text + 1);
    size_t want_n = ref.n_text;
    p.stop[0]     = stop;
    p.max_tokens  = 60;
    f.calls       = 0;
    s             = gen(&fb, tok, 1.0f, 3, &p, prompt, 8, &lost, &st, &err);
    wgf_t_check(t, s == WGF_ERR_DEVICE_LOST && lost.n_text == want_n && !memcmp(lost.text, want, want_n),
                "forward error: text held back for a stop string is still emitted", "%s, %zu of %zu bytes",
                wgf_status_str(s), lost.n_text, want_n);
}

static void test_npy(struct wgf_t *t)
{
    char dir[512], path[600];
    wgf_t_tmpdir("generate_npy", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/l.npy", dir);
    float          d[6] = {1, 2, 3, 4, 5, 6.5f};
    struct wgf_err err  = {0};
    bool           ok   = wgf_npy_write_f32(path, d, 2, 3, &err) == WGF_OK;
    FILE          *f    = fopen(path, "rb");
    unsigned char  buf[256];
    size_t         n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    uint16_t hl = (uint16_t)(buf[8] | buf[9] << 8);
    float    back[6];
    memcpy(back, buf + 10 + hl, sizeof back);
    ok = ok && n == 10u + hl + 24 && memcmp(buf, "\x93NUMPY\x01\x00", 8) == 0 && (10 + hl) % 64 == 0 &&
         buf[10 + hl - 1] == '\n' && strstr((char *)buf + 10, "'shape': (2, 3)") && strstr((char *)buf + 10, "'<f4'") &&
         memcmp(back, d, sizeof d) == 0;
    wgf_t_check(t, ok, "npy: header, shape (2, 3), data round trip", "%s", err.msg);
    /* an aborted writer leaves the earlier file and no temp file behind */
    struct wgf_npy_writer w;
    ok = wgf_npy_writer_open(&w, path, 3, &err) == WGF_OK && wgf_npy_writer_append(&w, d, 1, &err) == WGF_OK;
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s", ok && w.tmp ? w.tmp : "");
    wgf_npy_writer_abort(&w);
    struct stat st;
    ok = ok && stat(path, &st) == 0 && st.st_size == (off_t)(10 + hl + 24) && stat(tmp, &st) != 0;
    wgf_t_check(t, ok, "npy: abort keeps the earlier file, removes the temp", "%s", err.msg);
    snprintf(path, sizeof path, "%s/no/such/dir/l.npy", dir);
    wgf_t_check(t, wgf_npy_write_f32(path, d, 2, 3, &err) == WGF_ERR_IO && strstr(err.msg, "no/such/dir"),
                "npy: unwritable path -> i/o error naming it", "%s", err.msg);
}

int main(void)
{
    struct wgf_t   t   = {0};
    struct wgf_err err = {0};
    test_npy(&t);

    struct tm_dims d = {.arch = WGF_ARCH_QWEN2, .dim = 64, .hidden = 96, .layers = 2, .heads = 4, .kv_heads = 2,
                        .head_dim = 16, .vocab = 512, .max_seq = 128, .bias = true, .dtype = WGF_DT_BF16};
    /* untied lm_head at 1/sqrt(dim) scale: logits O(1), so sampling has real choices */
    struct tm     *tm = tm_build(&d, 77);
    struct wgf_llm_backend         b;
    struct wgf_llm_backend_options bo = {.n_ctx = 64, .n_threads = 2};
    if (!wgf_t_check(&t, wgf_llm_backend_open(&b, &wgf_llm_backend_ref, &tm->m, &bo, &err) == WGF_OK, "backend", "%s",
                     err.msg))
        return wgf_t_finish(&t);
    struct rec           r1 = {0}, r2 = {0};
    struct wgf_gen_stats st;
    int32_t              prompt[8] = {5, 17, 300, 42, 9, 100, 250, 3};
    struct wgf_gen_params p = wgf_gen_params_default();
    p.max_tokens            = 20;

    /* greedy: deterministic, and equal to a hand-written argmax loop over the backend */
    bool ok = gen(&b, NULL, 0, 1, &p, prompt, 8, &r1, &st, &err) == WGF_OK && gen(&b, NULL, 0, 2, &p, prompt, 8, &r2, &st, &err) == WGF_OK;
    wgf_t_check(&t, ok && r1.n_ids == 20 && memcmp(r1.ids, r2.ids, sizeof r1.ids) == 0, "greedy: 20 tokens, identical twice (any seed)",
                "%s n=%d", err.msg, r1.n_ids);
    wgf_t_check(&t, st.n_prompt == 8 && st.n_generated == 20 && !strcmp(st.stop_reason, "max tokens") && st.decode_tok_s > 0 &&
                        st.prefill_tok_s > 0 && st.ttft_s > 0,
                "stats: counts, rates, stop reason", "prompt %u gen %u %s", st.n_prompt, st.n_generated, st.stop_reason);
    {
        int32_t seq[64];
        memcpy(seq, prompt, sizeof prompt);
        float *lg  = malloc(d.vocab * sizeof *lg);
        bool   same = true;
        b.reset(&b);
        ok = b.forward(&b, seq, 8, 0, lg, false, &err) == WGF_OK;
        for (int i = 0; ok && i < 20; i++) {
            int best = 0;
            for (int v = 1; v < d.vocab; v++)
                if (lg[v] > lg[best]) best = v;
            same = same && best == r1.ids[i];
            seq[8 + i] = best;
            if (i < 19) ok = b.forward(&b, &seq[8 + i], 1, (uint32_t)(8 + i), lg, false, &err) == WGF_OK;
        }
        wgf_t_check(&t, ok && same, "greedy == hand-written argmax loop", "%s", err.msg);
        /* logits rows: prompt rows + one per decode step == the all-logits prefill of the sequence */
        p.all_logits = true;
        ok           = gen(&b, NULL, 0, 1, &p, prompt, 8, &r1, &st, &err) == WGF_OK;
        float *all   = malloc((size_t)27 * d.vocab * sizeof *all);
        b.reset(&b);
        ok = ok && b.forward(&b, seq, 27, 0, all, true, &err) == WGF_OK;
        wgf_t_check(&t, ok && r1.n_rows == 27 && memcmp(r1.rows, all, (size_t)27 * d.vocab * sizeof *all) == 0,
                    "logits rows: 8 prompt + 19 decode == prefill of the sequence", "%s rows %zu", err.msg, r1.n_rows);
        /* docs/llm.md: positions = prompt + max(generated - 1, 0), so -n 0 and -n 1 give the
         * prompt rows only (the formula without max() said 7 for -n 0) */
        for (uint32_t n = 0; n <= 1; n++) {
            uint32_t keep = p.max_tokens;
            p.max_tokens  = n;
            ok            = gen(&b, NULL, 0, 1, &p, prompt, 8, &r1, &st, &err) == WGF_OK;
            p.max_tokens  = keep;
            char name[96];
            snprintf(name, sizeof name, "logits rows with max_tokens %u: the 8 prompt rows", n);
            wgf_t_check(&t, ok && r1.n_rows == 8 && st.n_generated == n, name, "%s rows %zu, generated %u", err.msg,
                        r1.n_rows, st.n_generated);
        }
        p.all_logits = false;
        free(all);
        free(lg);
    }

    /* seeded sampling */
    ok = gen(&b, NULL, 1.0f, 5, &p, prompt, 8, &r1, &st, &err) == WGF_OK && gen(&b, NULL, 1.0f, 5, &p, prompt, 8, &r2, &st, &err) == WGF_OK;
    wgf_t_check(&t, ok && memcmp(r1.ids, r2.ids, sizeof r1.ids) == 0, "temp 1 seed 5 twice: identical", "%s", err.msg);
    ok = gen(&b, NULL, 1.0f, 6, &p, prompt, 8, &r2, &st, &err) == WGF_OK;
    wgf_t_check(&t, ok && memcmp(r1.ids, r2.ids, sizeof r1.ids) != 0, "seed 5 vs 6: different", NULL);

    /* EOS: make the greedy first token an EOS id */
    gen(&b, NULL, 0, 1, &p, prompt, 8, &r1, &st, &err);
    p.eos_ids[0] = r1.ids[3];
    ok           = gen(&b, NULL, 0, 1, &p, prompt, 8, &r2, &st, &err) == WGF_OK;
    int first = 0;
    while (r1.ids[first] != r1.ids[3]) first++;
    wgf_t_check(&t, ok && st.n_generated == (uint32_t)first + 1 && !strcmp(st.stop_reason, "eos"), "stops at EOS",
                "gen %u expected %d (%s)", st.n_generated, first + 1, st.stop_reason);
    p.ignore_eos = true;
    ok           = gen(&b, NULL, 0, 1, &p, prompt, 8, &r2, &st, &err) == WGF_OK;
    wgf_t_check(&t, ok && st.n_generated == 20, "--ignore-eos runs to max tokens", "gen %u", st.n_generated);
    p.ignore_eos = false, p.eos_ids[0] = -1;

    /* context: prompt longer than ctx is an error; reaching ctx stops */
    int32_t long_prompt[70];
    for (int i = 0; i < 70; i++) long_prompt[i] = i;
    enum wgf_status s = gen(&b, NULL, 0, 1, &p, long_prompt, 65, &r1, &st, &err);
    wgf_t_check(&t, s == WGF_ERR_CONTEXT && strstr(err.msg, "65 tokens > ctx 64"), "prompt 65 > ctx 64 -> error", "%s", err.msg);
    s = gen(&b, NULL, 0, 1, &p, long_prompt, 62, &r1, &st, &err);
    wgf_t_check(&t, s == WGF_OK && st.n_generated == 3 && !strcmp(st.stop_reason, "context"), "generation stops at ctx",
                "gen %u (%s)", st.n_generated, st.stop_reason);
    p.max_tokens = 0;
    s            = gen(&b, NULL, 0, 1, &p, prompt, 8, &r1, &st, &err);
    wgf_t_check(&t, s == WGF_OK && st.n_generated == 0, "-n 0: prompt only", NULL);
    s = gen(&b, NULL, 0, 1, &p, prompt, 0, &r1, &st, &err);
    wgf_t_check(&t, s == WGF_ERR_ARG, "empty prompt -> error", "%s", err.msg);
    p.max_tokens = 20;

    /* text: a real (test) tokenizer; output is valid UTF-8; stop strings cut exactly */
    char dir[512], tj[600];
    wgf_t_tmpdir("generate_tok", dir, sizeof dir);
    snprintf(tj, sizeof tj, "%s/tokenizer.json", dir);
    struct wgf_tokenizer *tok = NULL;
    if (wgf_t_check(&t, wgf_tokenizer_write_test_json(tj, &err) == WGF_OK && wgf_tokenizer_load_json(tj, NULL, &tok, &err) == WGF_OK,
                    "test tokenizer", "%s", err.msg)) {
        bool utf8 = true;
        p.max_tokens = 60;
        for (uint64_t seed = 1; seed <= 8; seed++) {
            ok   = gen(&b, tok, 1.5f, seed, &p, prompt, 8, &r1, &st, &err) == WGF_OK;
            utf8 = utf8 && ok && valid_utf8((unsigned char *)r1.text, r1.n_text);
        }
        wgf_t_check(&t, utf8, "streamed text is valid UTF-8 (8 seeds x 60 tokens at temp 1.5)", "%s", err.msg);
        /* the full text of one run; then stop at a substring of it */
        ok = gen(&b, tok, 1.0f, 3, &p, prompt, 8, &r1, &st, &err) == WGF_OK;
        char full[8192];
        memcpy(full, r1.text, r1.n_text + 1);
        size_t full_n = r1.n_text;
        if (ok && full_n >= 12) {
            char stop[5] = {0};
            size_t at = full_n / 2;
            while (at > 0 && ((unsigned char)full[at] & 0xC0) == 0x80) at--;
            memcpy(stop, full + at, 3);
            while (strlen(stop) && !valid_utf8((unsigned char *)stop, strlen(stop))) stop[strlen(stop) - 1] = 0;
            const char *first_hit = strstr(full, stop);
            p.stop[0] = stop;
            ok = stop[0] && gen(&b, tok, 1.0f, 3, &p, prompt, 8, &r2, &st, &err) == WGF_OK;
            size_t want = (size_t)(first_hit - full);
            wgf_t_check(&t, ok && r2.n_text == want && memcmp(r2.text, full, want) == 0 && !strcmp(st.stop_reason, "stop string"),
                        "stop string: output is the text before its first occurrence", "stop '%s' at %zu, got %zu bytes (%s)",
                        stop, want, r2.n_text, st.stop_reason ? st.stop_reason : "");
            p.stop[0] = NULL;
        } else {
            wgf_t_check(&t, false, "stop string: reference text", "%s (%zu bytes)", err.msg, full_n);
        }
        test_error_flush(&t, &b, tok, prompt);
        wgf_tokenizer_free(tok);
    }
    /* a 100-token prompt with every row kept crosses generate's 64-row chunks and the
     * backend's 32-token micro-batches: rows still equal one all-logits prefill */
    {
        struct wgf_llm_backend         b2;
        struct wgf_llm_backend_options bo2 = {.n_ctx = 128, .n_threads = 2};
        int32_t                        lp[110];
        for (int i = 0; i < 110; i++) lp[i] = (i * 37 + 11) % d.vocab;
        struct wgf_gen_params p2 = wgf_gen_params_default();
        p2.max_tokens = 6, p2.all_logits = true, p2.ignore_eos = true;
        ok = wgf_llm_backend_open(&b2, &wgf_llm_backend_ref, &tm->m, &bo2, &err) == WGF_OK &&
             gen(&b2, NULL, 0, 1, &p2, lp, 100, &r1, &st, &err) == WGF_OK;
        float *all = malloc((size_t)105 * d.vocab * sizeof *all);
        memcpy(lp + 100, r1.ids, 5 * sizeof *lp);
        if (ok) b2.reset(&b2);
        ok = ok && b2.forward(&b2, lp, 105, 0, all, true, &err) == WGF_OK;
        wgf_t_check(&t, ok && r1.n_rows == 105 && memcmp(r1.rows, all, (size_t)105 * d.vocab * sizeof *all) == 0,
                    "logits rows: 100-token prompt (chunked) + 5 decode == one prefill", "%s rows %zu", err.msg, r1.n_rows);
        free(all);
        wgf_llm_backend_close(&b2);
    }
    free(r1.rows);
    free(r2.rows);
    wgf_llm_backend_close(&b);
    tm_free(tm);
    return wgf_t_finish(&t);
}
