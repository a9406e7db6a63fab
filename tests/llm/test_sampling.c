/* Sampling on hand-made distributions: greedy and its tie rule, top-k / top-p sets,
 * temperature, repetition penalty, seed reproducibility, draw frequencies, bad params.
 * Frequency checks use 20000 draws and a 5-sigma band (binomial), so a correct sampler
 * fails them with probability < 1e-5 per check (and the seed is fixed anyway). */
#include <math.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/llm_run.h"

static struct wgf_sampler mk(struct wgf_t *t, float temp, uint32_t k, float p, float pen, uint64_t seed, uint32_t V)
{
    struct wgf_sampler_params sp = wgf_sampler_params_default();
    sp.temperature = temp, sp.top_k = k, sp.top_p = p, sp.repeat_penalty = pen, sp.seed = seed;
    struct wgf_sampler s;
    struct wgf_err     err = {0};
    if (wgf_sampler_init(&s, &sp, V, &err) != WGF_OK) wgf_t_check(t, false, "sampler init", "%s", err.msg);
    return s;
}

static int32_t draw(struct wgf_sampler *s, const float *logits, uint32_t V)
{
    float   l[64];
    int32_t id = -1;
    memcpy(l, logits, V * sizeof *l);
    struct wgf_err err = {0};
    if (wgf_sampler_sample(s, l, NULL, 0, &id, &err) != WGF_OK) return -1;
    return id;
}

/* counts over n draws */
static void histogram(struct wgf_sampler *s, const float *logits, uint32_t V, int n, int *cnt)
{
    memset(cnt, 0, V * sizeof *cnt);
    for (int i = 0; i < n; i++) {
        int32_t id = draw(s, logits, V);
        if (id >= 0 && (uint32_t)id < V) cnt[id]++;
    }
}

static bool freq_ok(const int *cnt, const double *p, uint32_t V, int n, char *why, size_t cap)
{
    for (uint32_t i = 0; i < V; i++) {
        double e = n * p[i], sd = sqrt(n * p[i] * (1 - p[i]));
        if (fabs(cnt[i] - e) > 5 * sd + 1e-9) {
            snprintf(why, cap, "id %u: %d draws, expected %.1f +- %.1f", i, cnt[i], e, 5 * sd);
            return false;
        }
    }
    snprintf(why, cap, "ok");
    return true;
}

int main(void)
{
    struct wgf_t   t = {0};
    struct wgf_err err = {0};
    enum { N = 20000 };
    /* probabilities 0.5, 0.3, 0.15, 0.05 as logits */
    const float lp[4] = {logf(0.5f), logf(0.3f), logf(0.15f), logf(0.05f)};
    int         cnt[8];
    char        why[200];

    /* greedy */
    struct wgf_sampler s = mk(&t, 0, 0, 1, 1, 0, 4);
    wgf_t_check(&t, draw(&s, lp, 4) == 0, "greedy picks the argmax", NULL);
    const float tie[4] = {1, 3, 3, 2};
    wgf_t_check(&t, draw(&s, tie, 4) == 1, "greedy tie -> lowest id", NULL);
    const float nanl[4] = {NAN, 1, INFINITY, 0.5f};
    wgf_t_check(&t, draw(&s, nanl, 4) == 1, "greedy ignores NaN and +inf", NULL);
    float   dead[4] = {-INFINITY, NAN, -INFINITY, NAN};
    int32_t id;
    wgf_t_check(&t, wgf_sampler_sample(&s, dead, NULL, 0, &id, &err) == WGF_ERR_FORMAT, "all -inf/NaN -> error", "%s",
                err.msg);
    wgf_sampler_free(&s);
    wgf_sampler_free(&s); /* double free is a no-op */

    /* temperature 1, no filters: frequencies follow softmax */
    s = mk(&t, 1, 0, 1, 1, 42, 4);
    histogram(&s, lp, 4, N, cnt);
    double p_all[4] = {0.5, 0.3, 0.15, 0.05};
    wgf_t_check(&t, freq_ok(cnt, p_all, 4, N, why, sizeof why), "temp 1: frequencies match softmax", "%s", why);
    wgf_sampler_free(&s);

    /* temperature 0.5: p ~ p^2 */
    s = mk(&t, 0.5f, 0, 1, 1, 43, 4);
    histogram(&s, lp, 4, N, cnt);
    double z = 0.25 + 0.09 + 0.0225 + 0.0025, p_t[4] = {0.25 / z, 0.09 / z, 0.0225 / z, 0.0025 / z};
    wgf_t_check(&t, freq_ok(cnt, p_t, 4, N, why, sizeof why), "temp 0.5: frequencies match p^2 renormalised", "%s", why);
    wgf_sampler_free(&s);

    /* top-k 2: only ids 0 and 1, renormalised 0.625 / 0.375 */
    s = mk(&t, 1, 2, 1, 1, 44, 4);
    histogram(&s, lp, 4, N, cnt);
    double p_k[4] = {0.625, 0.375, 0, 0};
    wgf_t_check(&t, cnt[2] == 0 && cnt[3] == 0 && freq_ok(cnt, p_k, 4, N, why, sizeof why), "top-k 2: set and frequencies",
                "%d %d %d %d", cnt[0], cnt[1], cnt[2], cnt[3]);
    wgf_sampler_free(&s);
    s = mk(&t, 5, 1, 1, 1, 45, 4);
    histogram(&s, lp, 4, 1000, cnt);
    wgf_t_check(&t, cnt[0] == 1000, "top-k 1 at temp 5 == greedy", "%d", cnt[0]);
    wgf_sampler_free(&s);

    /* top-p: 0.75 keeps {0,1} (0.5 < 0.75 <= 0.8); 0.85 keeps {0,1,2}; 0.4 keeps {0} */
    s = mk(&t, 1, 0, 0.75f, 1, 46, 4);
    histogram(&s, lp, 4, N, cnt);
    wgf_t_check(&t, cnt[2] == 0 && cnt[3] == 0 && freq_ok(cnt, p_k, 4, N, why, sizeof why), "top-p 0.75 keeps the top 2",
                "%d %d %d %d", cnt[0], cnt[1], cnt[2], cnt[3]);
    wgf_sampler_free(&s);
    s = mk(&t, 1, 0, 0.85f, 1, 47, 4);
    histogram(&s, lp, 4, N, cnt);
    double p_p3[4] = {0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0};
    wgf_t_check(&t, cnt[3] == 0 && freq_ok(cnt, p_p3, 4, N, why, sizeof why), "top-p 0.85 keeps the top 3", "%d %d %d %d",
                cnt[0], cnt[1], cnt[2], cnt[3]);
    wgf_sampler_free(&s);
    s = mk(&t, 1, 0, 0.4f, 1, 48, 4);
    histogram(&s, lp, 4, 1000, cnt);
    wgf_t_check(&t, cnt[0] == 1000, "top-p 0.4 keeps only the top token", "%d", cnt[0]);
    wgf_sampler_free(&s);
    /* top-k then top-p: k=3 renormalises to 0.526/0.316/0.158; p=0.8 then keeps {0,1} */
    s = mk(&t, 1, 3, 0.8f, 1, 49, 4);
    histogram(&s, lp, 4, N, cnt);
    wgf_t_check(&t, cnt[2] == 0 && cnt[3] == 0 && freq_ok(cnt, p_k, 4, N, why, sizeof why), "top-k 3 + top-p 0.8",
                "%d %d %d %d", cnt[0], cnt[1], cnt[2], cnt[3]);
    wgf_sampler_free(&s);

    /* the top-k heap on a large vocabulary picks exactly the k largest */
    {
        enum { V = 5000 };
        static float big[V];
        struct wgf_rng r;
        wgf_rng_seed(&r, 9);
        for (int i = 0; i < V; i++) big[i] = wgf_rng_uniform(&r, -5, 5);
        big[17] = big[4000] = big[2500] = 50; /* three clear winners */
        struct wgf_sampler_params sp = wgf_sampler_params_default();
        sp.temperature = 1, sp.top_k = 3, sp.top_p = 1, sp.seed = 1;
        struct wgf_sampler sb;
        bool               ok = wgf_sampler_init(&sb, &sp, V, &err) == WGF_OK, only = true;
        int                seen[3] = {0};
        for (int i = 0; ok && i < 3000; i++) {
            static float l[V];
            memcpy(l, big, sizeof l);
            ok = wgf_sampler_sample(&sb, l, NULL, 0, &id, &err) == WGF_OK;
            if (id == 17) seen[0]++;
            else if (id == 2500) seen[1]++;
            else if (id == 4000) seen[2]++;
            else only = false;
        }
        wgf_t_check(&t, ok && only && seen[0] > 800 && seen[1] > 800 && seen[2] > 800, "top-k 3 of 5000 with ties at the top",
                    "%d %d %d", seen[0], seen[1], seen[2]);
        wgf_sampler_free(&sb);
    }

    /* repetition penalty: llama.cpp's rule, each distinct recent token once */
    {
        struct wgf_sampler sr = mk(&t, 0, 0, 1, 1.5f, 0, 4);
        float              l[4] = {2.0f, 1.9f, -1.0f, 0.5f};
        int32_t            hist[3] = {0, 0, 2};
        enum wgf_status st = wgf_sampler_sample(&sr, l, hist, 3, &id, &err);
        wgf_t_check(&t, st == WGF_OK && id == 1, "repeat penalty 1.5 demotes a repeated argmax", "id %d", id);
        wgf_t_check(&t, fabsf(l[0] - 2.0f / 1.5f) < 1e-6f && l[2] == -1.5f && l[1] == 1.9f,
                    "penalty: positive /= p once, negative *= p, others untouched", "%g %g %g", l[0], l[1], l[2]);
        int32_t junk[2] = {-5, 99}; /* out-of-range history ids are ignored */
        float   l2[4]   = {2.0f, 1.9f, -1.0f, 0.5f};
        st = wgf_sampler_sample(&sr, l2, junk, 2, &id, &err);
        wgf_t_check(&t, st == WGF_OK && id == 0, "penalty ignores out-of-range history", "id %d", id);
        wgf_sampler_free(&sr);
        /* repeat_last_n limits the window */
        struct wgf_sampler_params sp = wgf_sampler_params_default();
        sp.temperature = 0, sp.repeat_penalty = 1.5f, sp.repeat_last_n = 1;
        wgf_sampler_init(&sr, &sp, 4, &err);
        float   l3[4]    = {2.0f, 1.9f, -1.0f, 0.5f};
        int32_t hist2[2] = {0, 3};
        st = wgf_sampler_sample(&sr, l3, hist2, 2, &id, &err);
        wgf_t_check(&t, st == WGF_OK && id == 0 && l3[0] == 2.0f, "repeat_last_n 1 looks only at the last token", "id %d",
                    id);
        wgf_sampler_free(&sr);
    }

    /* seeds: same seed same stream, different seed different stream */
    {
        int32_t a[64], b[64], c[64];
        float   flat[16];
        for (int i = 0; i < 16; i++) flat[i] = (float)(i % 5) * 0.1f;
        struct wgf_sampler s1 = mk(&t, 1, 0, 1, 1, 777, 16), s2 = mk(&t, 1, 0, 1, 1, 777, 16), s3 = mk(&t, 1, 0, 1, 1, 778, 16);
        for (int i = 0; i < 64; i++) a[i] = draw(&s1, flat, 16), b[i] = draw(&s2, flat, 16), c[i] = draw(&s3, flat, 16);
        wgf_t_check(&t, memcmp(a, b, sizeof a) == 0, "seed 777 twice: identical 64-token streams", NULL);
        wgf_t_check(&t, memcmp(a, c, sizeof a) != 0, "seed 777 vs 778: streams differ", NULL);
        /* a fixed expectation, so a change to the sampler or the RNG shows up here */
        printf("INFO seed 777 stream starts %d %d %d %d %d %d %d %d\n", a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
        wgf_sampler_free(&s1), wgf_sampler_free(&s2), wgf_sampler_free(&s3);
    }

    /* parameter validation */
    {
        struct wgf_sampler_params bad[6];
        for (int i = 0; i < 6; i++) bad[i] = wgf_sampler_params_default();
        bad[0].temperature = NAN, bad[1].temperature = -1, bad[2].top_p = 0, bad[3].top_p = 1.5f,
        bad[4].repeat_penalty = 0, bad[5].top_p = NAN;
        const char *what[6] = {"temp NaN", "temp -1", "top_p 0", "top_p 1.5", "penalty 0", "top_p NaN"};
        for (int i = 0; i < 6; i++) {
            struct wgf_sampler sx;
            char               nm[64];
            snprintf(nm, sizeof nm, "sampler refuses %s", what[i]);
            wgf_t_check(&t, wgf_sampler_init(&sx, &bad[i], 4, &err) == WGF_ERR_ARG, nm, "%s", err.msg);
            wgf_sampler_free(&sx);
        }
    }
    return wgf_t_finish(&t);
}
