/* LLM model files, structured negatives: every malformed safetensors / GGUF / config.json /
 * path case of RELIABILITY.md items 1-23 and 30 that the model-file readers own is
 * generated here and must end in the *specific* status with a one-line message naming the
 * file (and, where it matters, the key or tensor). Run under ASan/UBSan (WGF_SANITIZE=ON)
 * this is also the no-crash check; the seeded byte-flip and every-prefix loops at the end
 * look for crashes only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "llm/gguf.h"
#include "llm/model_files.h"
#include "util/rng.h"
#include "wgfuse/llm.h"
#include "wgfuse/llm_test_model.h"

static char g_dir[512];

/* ---- byte builder ---------------------------------------------------------------------- */
struct buf {
    uint8_t *p;
    size_t   n, cap;
};
static void put(struct buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->cap + n) * 2;
        b->p   = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}
static void put32(struct buf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, x, 4);
}
static void put64(struct buf *b, uint64_t v)
{
    put32(b, (uint32_t)v);
    put32(b, (uint32_t)(v >> 32));
}
static void putstr(struct buf *b, const char *s)
{
    put64(b, strlen(s));
    put(b, s, strlen(s));
}
static void pad_to(struct buf *b, size_t a)
{
    static const uint8_t z[64] = {0};
    put(b, z, (a - b->n % a) % a);
}
static void zeros(struct buf *b, size_t n)
{
    uint8_t z[256] = {0};
    while (n) {
        size_t k = n < sizeof z ? n : sizeof z;
        put(b, z, k);
        n -= k;
    }
}

static void write_buf(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (n) fwrite(p, 1, n, f);
    fclose(f);
}

static uint8_t *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(*n ? *n : 1);
    if (fread(p, 1, *n, f) != *n) *n = 0;
    fclose(f);
    return p;
}

/* Replace the first occurrence of `from` by `to` (same length) in the file. */
static bool patch(const char *path, const char *from, const char *to)
{
    size_t   n;
    uint8_t *p = read_all(path, &n);
    uint8_t *h = p ? memmem(p, n, from, strlen(from)) : NULL;
    if (h) {
        memcpy(h, to, strlen(to));
        write_buf(path, p, n);
    }
    free(p);
    return h != NULL;
}

/* Rename GGUF tensor `from` to `to` (same length) in the file: its name as stored, after
 * its u64 length, so that "output.weight" is not found inside "blk.0.attn_output.weight". */
static bool rename_tensor(const char *path, const char *from, const char *to)
{
    size_t   n, fl = strlen(from);
    uint8_t  key[128];
    uint8_t *p = read_all(path, &n), *h = NULL;
    if (p && fl == strlen(to) && fl + 8 <= sizeof key) {
        for (int i = 0; i < 8; i++) key[i] = (uint8_t)((uint64_t)fl >> (8 * i));
        memcpy(key + 8, from, fl);
        if ((h = memmem(p, n, key, fl + 8))) {
            memcpy(h + 8, to, fl);
            write_buf(path, p, n);
        }
    }
    free(p);
    return h != NULL;
}

/* Set the u32 value of GGUF key `key` in the file (the key is followed by its u32 type). */
static bool patch_gguf_u32(const char *path, const char *key, uint32_t v)
{
    size_t   n;
    uint8_t *p = read_all(path, &n);
    uint8_t *h = p ? memmem(p, n, key, strlen(key)) : NULL;
    if (h) {
        uint8_t *val = h + strlen(key) + 4;
        for (int i = 0; i < 4; i++) val[i] = (uint8_t)(v >> (8 * i));
        write_buf(path, p, n);
    }
    free(p);
    return h != NULL;
}

/* The check: status `want`, a message naming `path`, and containing `needle`. */
static void expect(struct wgf_t *t, const char *name, enum wgf_status got, enum wgf_status want, const struct wgf_err *e,
                   const char *path, const char *needle)
{
    bool ok = got == want && strstr(e->msg, path) && (!needle || strstr(e->msg, needle)) && !strchr(e->msg, '\n');
    wgf_t_check(t, ok, name, "status %s (want %s): %s", wgf_status_str(got), wgf_status_str(want), e->msg);
}

static enum wgf_status load(const char *path, struct wgf_err *e)
{
    struct wgf_llm_model *m = NULL;
    wgf_err_clear(e);
    enum wgf_status st = wgf_llm_model_load(path, &m, e);
    wgf_llm_model_free(m);
    return st;
}

/* The outcome of one mutant: loaded (OK), or a refusal as RELIABILITY.md wants it: a negative
 * status other than WGF_ERR_INTERNAL (a refusal of input is never "our bug") with a
 * non-empty one-line message. Counts into tally[0] loaded, [1] refused, [2] bad refusals; the
 * first bad one is described in first_bad. (issue 19: these loops asserted nothing but "no
 * crash"; a refusal with an empty message or the wrong status passed.) */
struct mutant_tally {
    int  loaded, refused, bad;
    char first_bad[300];
};
static void tally(struct mutant_tally *m, enum wgf_status st, const struct wgf_err *e, int it)
{
    if (st == WGF_OK) {
        m->loaded++;
        return;
    }
    m->refused++;
    if (st < 0 && st != WGF_ERR_INTERNAL && e->msg[0] && !strchr(e->msg, '\n')) return;
    if (m->bad++ == 0)
        snprintf(m->first_bad, sizeof m->first_bad, "mutant %d: status %d (%s), message '%.200s'", it, (int)st,
                 wgf_status_str(st), e->msg);
}

/* ---- safetensors ------------------------------------------------------------------------ */

static enum wgf_status st_try(const char *path, const void *p, size_t n, struct wgf_err *e)
{
    write_buf(path, p, n);
    struct wgf__st_file f;
    wgf_err_clear(e);
    enum wgf_status st = wgf__st_open(path, &f, e);
    if (st == WGF_OK) wgf__st_close(&f);
    return st;
}

/* header text + `data` bytes of zeros */
static enum wgf_status st_hdr(const char *path, const char *hdr, size_t data, struct wgf_err *e)
{
    struct buf b = {0};
    put64(&b, strlen(hdr));
    put(&b, hdr, strlen(hdr));
    zeros(&b, data);
    enum wgf_status st = st_try(path, b.p, b.n, e);
    free(b.p);
    return st;
}

static void test_safetensors(struct wgf_t *t)
{
    char p[700];
    snprintf(p, sizeof p, "%s/bad.safetensors", g_dir);
    struct wgf_err e;
    const enum wgf_status F = WGF_ERR_FORMAT;
    uint8_t               raw[16];

    expect(t, "st: 5-byte file", st_try(p, "abcde", 5, &e), F, &e, p, "shorter than the 8-byte");
    struct buf b = {0};
    put64(&b, 200u * 1000u * 1000u);
    put(&b, "{}", 2);
    expect(t, "st: N > 100 MB", st_try(p, b.p, b.n, &e), F, &e, p, "100 MB");
    b.n = 0;
    put64(&b, 1000);
    put(&b, "{}", 2);
    expect(t, "st: N+8 > file", st_try(p, b.p, b.n, &e), F, &e, p, "larger than the file");
    b.n = 0;
    put64(&b, UINT64_MAX);
    put(&b, "{}", 2);
    expect(t, "st: N = UINT64_MAX", st_try(p, b.p, b.n, &e), F, &e, p, "overflows");
    free(b.p);
    memset(raw, 0, sizeof raw);
    raw[0] = 8;
    memcpy(raw + 8, "[       ", 8);
    expect(t, "st: no leading {", st_try(p, raw, 16, &e), F, &e, p, "'{'");
    expect(t, "st: not UTF-8", st_hdr(p, "{\"a\xff\":1}", 0, &e), F, &e, p, "UTF-8");
    expect(t, "st: overlong UTF-8", st_hdr(p, "{\"a\xc0\xaf\":1}", 0, &e), F, &e, p, "UTF-8");
    expect(t, "st: truncated JSON", st_hdr(p, "{\"a\":{\"dtype\":\"F32\"", 0, &e), F, &e, p, "JSON");
    {
        size_t depth = 1000000;
        char  *deep  = malloc(depth + 8);
        memcpy(deep, "{\"a\":", 5);
        memset(deep + 5, '[', depth);
        deep[depth + 5] = 0;
        expect(t, "st: nested 10^6 deep", st_hdr(p, deep, 0, &e), F, &e, p, "JSON");
        free(deep);
    }
    {
        /* one container with more members than the header size allows (jansson would make
         * one table of several times the input): {"a":[0,0,...]} and {"k0":0,"k1":0,...} */
        size_t cnt = 200000;
        char  *big = malloc(cnt * 14 + 16), *q = big;
        q += sprintf(q, "{\"a\":[0");
        for (size_t i = 1; i < cnt; i++) q += sprintf(q, ",0");
        sprintf(q, "]}");
        expect(t, "st: 200k-element array", st_hdr(p, big, 0, &e), F, &e, p, "members");
        q = big + sprintf(big, "{");
        for (size_t i = 0; i < cnt; i++) q += sprintf(q, "%s\"%zx\":0", i ? "," : "", i);
        sprintf(q, "}");
        expect(t, "st: 200k keys", st_hdr(p, big, 0, &e), F, &e, p, "members");
        q = big + sprintf(big, "{");
        for (size_t i = 0; i < 20000; i++) q += sprintf(q, "%s\"%020zx\":{}", i ? "," : "", i);
        sprintf(q, "}");
        expect(t, "st: 20k empty entries", st_hdr(p, big, 0, &e), F, &e, p, "missing or non-string 'dtype'");
        free(big);
    }
    const char *T = "\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":";
    char        h[1024];
    snprintf(h, sizeof h, "{\"a\":{%s[0,8]},\"a\":{%s[8,16]}}", T, T);
    expect(t, "st: duplicate name", st_hdr(p, h, 16, &e), F, &e, p, "duplicate");
    snprintf(h, sizeof h, "{\"__metadata__\":{\"x\":1},\"a\":{%s[0,8]}}", T);
    expect(t, "st: non-string metadata", st_hdr(p, h, 8, &e), F, &e, p, "__metadata__");
    expect(t, "st: unknown dtype", st_hdr(p, "{\"a\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, &e), F, &e, p, "unknown dtype");
    expect(t, "st: dim >= 2^48", st_hdr(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[281474976710656],\"data_offsets\":[0,8]}}", 8, &e), F, &e, p, "shape[0]");
    expect(t, "st: negative dim", st_hdr(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, &e), F, &e, p, "shape[0]");
    expect(t, "st: shape overflow",
           st_hdr(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[140737488355328,140737488355328],\"data_offsets\":[0,8]}}", 8, &e), F, &e, p, "overflow");
    expect(t, "st: size mismatch", st_hdr(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, &e), F, &e, p, "needs 12");
    expect(t, "st: end < begin", st_hdr(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,0]}}", 8, &e), F, &e, p, "< begin");
    snprintf(h, sizeof h, "{\"a\":{%s[0,8]},\"b\":{%s[4,12]}}", T, T);
    expect(t, "st: overlap", st_hdr(p, h, 12, &e), F, &e, p, "overlap");
    snprintf(h, sizeof h, "{\"a\":{%s[0,8]},\"b\":{%s[12,20]}}", T, T);
    expect(t, "st: hole", st_hdr(p, h, 20, &e), F, &e, p, "hole");
    snprintf(h, sizeof h, "{\"a\":{%s[0,8]}}", T);
    expect(t, "st: trailing bytes", st_hdr(p, h, 12, &e), F, &e, p, "trailing");
    expect(t, "st: past end (truncated)", st_hdr(p, h, 4, &e), F, &e, p, "past the end");
    expect(t, "st: partial-byte F4", st_hdr(p, "{\"a\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}", 2, &e), F, &e, p, "whole number of bytes");
    expect(t, "st: offsets not ints", st_hdr(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8.5]}}", 8, &e), F, &e, p, "data_offsets");
    /* allowed: odd offsets, zero-size, rank-0, F4 with whole bytes */
    enum wgf_status ok = st_hdr(p,
                                "{\"z\":{\"dtype\":\"F16\",\"shape\":[0,4],\"data_offsets\":[0,0]},"
                                "\"s\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1]},"
                                "\"o\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[1,9]},"
                                "\"q\":{\"dtype\":\"F4\",\"shape\":[4],\"data_offsets\":[9,11]}}",
                                11, &e);
    wgf_t_check(t, ok == WGF_OK, "st: odd offset, zero-size, rank-0 load", "%s", e.msg);
}

/* ---- GGUF (hand-built) -------------------------------------------------------------------- */

struct gt {
    const char *name;
    uint32_t    n_dims;
    uint64_t    ne[5];
    uint32_t    type;
    uint64_t    offset;
};

/* magic/version/counts, `kv` bytes (n_kv entries), tensors, pad, `data` bytes. Counts of
 * UINT64_MAX-style are passed via nt/nkv overriding the real ones. */
static void gguf_build(struct buf *b, uint32_t magic, uint32_t version, uint64_t nt, uint64_t nkv, const struct buf *kv,
                       const struct gt *ts, int n_ts, uint64_t data, size_t align)
{
    b->n = 0;
    put32(b, magic);
    put32(b, version);
    put64(b, nt);
    put64(b, nkv);
    if (kv) put(b, kv->p, kv->n);
    for (int i = 0; i < n_ts; i++) {
        putstr(b, ts[i].name);
        put32(b, ts[i].n_dims);
        for (uint32_t d = 0; d < ts[i].n_dims && d < 5; d++) put64(b, ts[i].ne[d]);
        put32(b, ts[i].type);
        put64(b, ts[i].offset);
    }
    pad_to(b, align);
    zeros(b, (size_t)data);
}

static enum wgf_status gguf_try(const char *path, const struct buf *b, struct wgf_err *e)
{
    write_buf(path, b->p, b->n);
    struct wgf_gguf *g = NULL;
    wgf_err_clear(e);
    enum wgf_status st = wgf_gguf_open(path, &g, e);
    wgf_gguf_close(g);
    return st;
}

static void kv_str(struct buf *b, const char *k, const char *v)
{
    putstr(b, k);
    put32(b, WGF_GGUF_STRING);
    putstr(b, v);
}
static void kv_u32(struct buf *b, const char *k, uint32_t type, uint32_t v)
{
    putstr(b, k);
    put32(b, type);
    put32(b, v);
}

static void test_gguf_parse(struct wgf_t *t)
{
    char p[700];
    snprintf(p, sizeof p, "%s/bad.gguf", g_dir);
    struct wgf_err        e;
    const enum wgf_status F = WGF_ERR_FORMAT, U = WGF_ERR_UNSUPPORTED;
    const uint32_t        M = 0x46554747u;
    struct buf            b = {0}, kv = {0};
    kv_str(&kv, "general.architecture", "llama");
    /* two f32 tensors: a [32] at 0 (128 bytes), b [8] at 128 (32 bytes) */
    struct gt ts[2] = {{"a", 1, {32}, 0, 0}, {"b", 1, {8}, 0, 128}};

    gguf_build(&b, M, 3, 2, 1, &kv, ts, 2, 160, 32);
    wgf_t_check(t, gguf_try(p, &b, &e) == WGF_OK, "gguf: base file is valid", "%s", e.msg);

    gguf_build(&b, M, 3, 0, 1, &kv, NULL, 0, 0, 1); /* vocab-only files: no tensors, no padding */
    wgf_t_check(t, gguf_try(p, &b, &e) == WGF_OK, "gguf: metadata-only file without padding is valid", "%s", e.msg);
    gguf_build(&b, M, 3, 0, 1, &kv, NULL, 0, 32, 32);
    expect(t, "gguf: metadata-only file with trailing bytes", gguf_try(p, &b, &e), F, &e, p, "trailing");

    { /* a UINT64 value past INT64_MAX: refused with its own value, not its low 63 bits */
        struct buf k64 = {0};
        kv_str(&k64, "general.architecture", "llama");
        putstr(&k64, "llama.context_length");
        put32(&k64, WGF_GGUF_UINT64);
        put64(&k64, (1ull << 63) + 5);
        gguf_build(&b, M, 3, 0, 2, &k64, NULL, 0, 0, 1);
        write_buf(p, b.p, b.n);
        struct wgf_gguf *g = NULL;
        int64_t          v = 0;
        enum wgf_status  o = wgf_gguf_open(p, &g, &e), got = o ? o : wgf_gguf_get_i64(g, "llama.context_length", 1, 1 << 24, &v, &e);
        wgf_t_check(t, got == F && strstr(e.msg, "9223372036854775813") && !strstr(e.msg, "= >"), "gguf: UINT64 past INT64_MAX named exactly",
                    "status %d: %s", (int)got, e.msg);
        wgf_gguf_close(g);
        free(k64.p);
    }
    gguf_build(&b, 0x46554746u, 3, 2, 1, &kv, ts, 2, 160, 32);
    expect(t, "gguf: bad magic", gguf_try(p, &b, &e), F, &e, p, "magic");
    uint32_t bad_versions[] = {0, 1, 4, 0x03000000u};
    for (int i = 0; i < 4; i++) {
        gguf_build(&b, M, bad_versions[i], 2, 1, &kv, ts, 2, 160, 32);
        expect(t, "gguf: version 0/1/4/byte-swapped", gguf_try(p, &b, &e), U, &e, p, i == 3 ? "byte-swapped" : "version");
    }
    gguf_build(&b, M, 3, UINT64_MAX, 1, &kv, ts, 2, 160, 32);
    expect(t, "gguf: n_tensors = UINT64_MAX", gguf_try(p, &b, &e), F, &e, p, "tensor count");
    gguf_build(&b, M, 3, 2, UINT64_MAX, &kv, ts, 2, 160, 32);
    expect(t, "gguf: n_kv = UINT64_MAX", gguf_try(p, &b, &e), F, &e, p, "metadata count");

    struct buf k2 = {0};
    put64(&k2, UINT64_MAX);
    zeros(&k2, 32); /* enough bytes left for the count check: the length itself must fail */
    gguf_build(&b, M, 3, 0, 1, &k2, NULL, 0, 0, 1);
    expect(t, "gguf: key length UINT64_MAX", gguf_try(p, &b, &e), F, &e, p, "past the end");
    k2.n = 0;
    putstr(&k2, "k");
    put32(&k2, WGF_GGUF_STRING);
    put64(&k2, 1000);
    put(&k2, "abc", 3);
    gguf_build(&b, M, 3, 0, 1, &k2, NULL, 0, 0, 1);
    expect(t, "gguf: string past the end", gguf_try(p, &b, &e), F, &e, p, "key 'k': string value length 1000");
    k2.n = 0;
    putstr(&k2, "arr");
    put32(&k2, WGF_GGUF_ARRAY);
    put32(&k2, WGF_GGUF_UINT32);
    put64(&k2, 1ull << 62);
    gguf_build(&b, M, 3, 0, 1, &k2, NULL, 0, 0, 1);
    expect(t, "gguf: array count 2^62", gguf_try(p, &b, &e), F, &e, p, "'arr'");
    k2.n = 0;
    putstr(&k2, "arr");
    put32(&k2, WGF_GGUF_ARRAY);
    put32(&k2, WGF_GGUF_STRING);
    put64(&k2, 1ull << 62);
    gguf_build(&b, M, 3, 0, 1, &k2, NULL, 0, 0, 1);
    expect(t, "gguf: string array count 2^62", gguf_try(p, &b, &e), F, &e, p, "'arr'");
    k2.n = 0;
    putstr(&k2, "toks");
    put32(&k2, WGF_GGUF_ARRAY);
    put32(&k2, WGF_GGUF_STRING);
    put64(&k2, 2);
    putstr(&k2, "ok");
    put64(&k2, 1u << 30);
    zeros(&k2, 16);
    gguf_build(&b, M, 3, 0, 1, &k2, NULL, 0, 0, 1);
    expect(t, "gguf: string element past the end", gguf_try(p, &b, &e), F, &e, p, "key 'toks': string element 1");
    k2.n = 0;
    putstr(&k2, "arr");
    put32(&k2, WGF_GGUF_ARRAY);
    put32(&k2, WGF_GGUF_ARRAY);
    put64(&k2, 1);
    gguf_build(&b, M, 3, 0, 1, &k2, NULL, 0, 0, 1);
    expect(t, "gguf: nested array", gguf_try(p, &b, &e), F, &e, p, "nested");
    uint32_t bad_types[] = {13, 0xffffffffu};
    for (int i = 0; i < 2; i++) {
        k2.n = 0;
        putstr(&k2, "v");
        put32(&k2, bad_types[i]);
        put32(&k2, 0);
        gguf_build(&b, M, 3, 0, 1, &k2, NULL, 0, 0, 1);
        expect(t, "gguf: value type 13 / -1", gguf_try(p, &b, &e), F, &e, p, "unknown value type");
    }
    k2.n = 0;
    kv_str(&k2, "", "x");
    gguf_build(&b, M, 3, 0, 1, &k2, NULL, 0, 0, 1);
    expect(t, "gguf: empty key", gguf_try(p, &b, &e), F, &e, p, "empty");
    k2.n = 0;
    kv_str(&k2, "dup", "x");
    kv_str(&k2, "dup", "y");
    gguf_build(&b, M, 3, 0, 2, &k2, NULL, 0, 0, 1);
    expect(t, "gguf: duplicate key", gguf_try(p, &b, &e), F, &e, p, "duplicate metadata key 'dup'");
    struct gt dupt[2] = {{"a", 1, {32}, 0, 0}, {"a", 1, {8}, 0, 128}};
    gguf_build(&b, M, 3, 2, 1, &kv, dupt, 2, 160, 32);
    expect(t, "gguf: duplicate tensor", gguf_try(p, &b, &e), F, &e, p, "duplicate tensor name 'a'");
    uint32_t aligns[] = {0, 3, 1u << 31};
    for (int i = 0; i < 3; i++) {
        k2.n = 0;
        kv_u32(&k2, "general.alignment", WGF_GGUF_UINT32, aligns[i]);
        gguf_build(&b, M, 3, 0, 1, &k2, NULL, 0, 0, 1);
        expect(t, "gguf: alignment 0/3/2^31", gguf_try(p, &b, &e), F, &e, p, "general.alignment");
    }
    k2.n = 0;
    kv_u32(&k2, "general.alignment", WGF_GGUF_INT32, 32);
    gguf_build(&b, M, 3, 0, 1, &k2, NULL, 0, 0, 1);
    expect(t, "gguf: alignment typed INT32", gguf_try(p, &b, &e), F, &e, p, "UINT32");

    struct gt one[1] = {{"t", 5, {32, 1, 1, 1, 1}, 0, 0}};
    gguf_build(&b, M, 3, 1, 1, &kv, one, 1, 128, 32);
    expect(t, "gguf: n_dims 5", gguf_try(p, &b, &e), F, &e, p, "n_dims 5");
    one[0] = (struct gt){"t", 0xffffffffu, {32}, 0, 0};
    gguf_build(&b, M, 3, 1, 1, &kv, one, 1, 128, 32);
    expect(t, "gguf: n_dims 2^32-1", gguf_try(p, &b, &e), F, &e, p, "n_dims");
    one[0] = (struct gt){"t", 2, {32, 0}, 0, 0};
    gguf_build(&b, M, 3, 1, 1, &kv, one, 1, 128, 32);
    expect(t, "gguf: zero dim", gguf_try(p, &b, &e), F, &e, p, "must be positive");
    one[0] = (struct gt){"t", 2, {32, (uint64_t)-5}, 0, 0};
    gguf_build(&b, M, 3, 1, 1, &kv, one, 1, 128, 32);
    expect(t, "gguf: negative dim", gguf_try(p, &b, &e), F, &e, p, "must be positive");
    one[0] = (struct gt){"t", 2, {(1ull << 42), (1ull << 42) + 1}, 0, 0};
    gguf_build(&b, M, 3, 1, 1, &kv, one, 1, 128, 32);
    expect(t, "gguf: dim product overflow", gguf_try(p, &b, &e), F, &e, p, "overflow");
    one[0] = (struct gt){"t", 1, {32}, 99, 0};
    gguf_build(&b, M, 3, 1, 1, &kv, one, 1, 128, 32);
    expect(t, "gguf: unknown tensor type", gguf_try(p, &b, &e), F, &e, p, "unknown tensor type 99");
    one[0] = (struct gt){"t", 1, {256}, 16, 0};
    gguf_build(&b, M, 3, 1, 1, &kv, one, 1, 66, 32);
    expect(t, "gguf: unsupported type IQ2_XXS", gguf_try(p, &b, &e), U, &e, p, "tensor 't': ggml type 16 (IQ2_XXS) not supported");
    /* every block type: a row that is not whole blocks, and blocks cut short by the file's end
     * (block bytes per type from ggml-common.h, restated here independently of dtype.c) */
    static const struct {
        uint32_t id, elems, bytes;
        const char *name;
    } qt[] = {{WGF_GGML_Q4_0, 32, 18, "q4_0"}, {WGF_GGML_Q4_1, 32, 20, "q4_1"}, {WGF_GGML_Q5_0, 32, 22, "q5_0"},
              {WGF_GGML_Q5_1, 32, 24, "q5_1"}, {WGF_GGML_Q8_0, 32, 34, "q8_0"}, {WGF_GGML_Q2_K, 256, 84, "q2_k"},
              {WGF_GGML_Q3_K, 256, 110, "q3_k"}, {WGF_GGML_Q4_K, 256, 144, "q4_k"}, {WGF_GGML_Q5_K, 256, 176, "q5_k"},
              {WGF_GGML_Q6_K, 256, 210, "q6_k"}};
    for (size_t q = 0; q < sizeof qt / sizeof qt[0]; q++) {
        char nm[96], msg[96];
        /* two rows of two blocks: exactly 4 blocks fit, one byte less is truncated */
        uint64_t nb = 4ull * qt[q].bytes, padded = (nb + 31) / 32 * 32;
        one[0] = (struct gt){"t", 2, {2ull * qt[q].elems, 2}, qt[q].id, 0};
        gguf_build(&b, M, 3, 1, 1, &kv, one, 1, padded, 32);
        snprintf(nm, sizeof nm, "gguf: %s 2x2 blocks load", qt[q].name);
        enum wgf_status ok = gguf_try(p, &b, &e);
        wgf_t_check(t, ok == WGF_OK, nm, "status %s: %s", wgf_status_str(ok), e.msg);
        gguf_build(&b, M, 3, 1, 1, &kv, one, 1, nb - 1, 32);
        snprintf(nm, sizeof nm, "gguf: %s last block truncated", qt[q].name);
        expect(t, nm, gguf_try(p, &b, &e), F, &e, p, "past the end");
        one[0] = (struct gt){"t", 2, {qt[q].elems + 16, 2}, qt[q].id, 0};
        gguf_build(&b, M, 3, 1, 1, &kv, one, 1, padded, 32);
        snprintf(nm, sizeof nm, "gguf: %s row of %u elements", qt[q].name, qt[q].elems + 16);
        snprintf(msg, sizeof msg, "not a multiple of the %s block size %u", qt[q].name, qt[q].elems);
        expect(t, nm, gguf_try(p, &b, &e), F, &e, p, msg);
    }
    one[0] = (struct gt){"t", 1, {33}, WGF_GGML_Q8_0, 0};
    gguf_build(&b, M, 3, 1, 1, &kv, one, 1, 68, 32);
    expect(t, "gguf: row not a multiple of the block", gguf_try(p, &b, &e), F, &e, p, "block size");
    struct gt two[2] = {{"a", 1, {32}, 0, 0}, {"b", 1, {8}, 0, 130}};
    gguf_build(&b, M, 3, 2, 1, &kv, two, 2, 192, 32);
    expect(t, "gguf: misaligned offset", gguf_try(p, &b, &e), F, &e, p, "alignment");
    two[1].offset = 96;
    gguf_build(&b, M, 3, 2, 1, &kv, two, 2, 160, 32);
    expect(t, "gguf: overlapping", gguf_try(p, &b, &e), F, &e, p, "overlaps");
    two[1].offset = 192;
    gguf_build(&b, M, 3, 2, 1, &kv, two, 2, 224, 32);
    expect(t, "gguf: gap", gguf_try(p, &b, &e), F, &e, p, "gap");
    two[1].offset = 128;
    gguf_build(&b, M, 3, 2, 1, &kv, two, 2, 140, 32);
    expect(t, "gguf: past end (truncated download)", gguf_try(p, &b, &e), F, &e, p, "past the end");
    gguf_build(&b, M, 3, 2, 1, &kv, two, 2, 160 + 64, 32);
    expect(t, "gguf: trailing bytes", gguf_try(p, &b, &e), F, &e, p, "trailing");
    /* 0x7FFFFFFFFFFFFFC0 bytes each = 0x1FFFFFFFFFFFFFF0 f32 elements */
    struct gt huge[2] = {{"h1", 2, {0x1FFFFFFFFFFFFFF0ull / 16, 16}, 0, 0}, {"h2", 2, {0x1FFFFFFFFFFFFFF0ull / 16, 16}, 0, 0x7FFFFFFFFFFFFFC0ull}};
    gguf_build(&b, M, 3, 2, 1, &kv, huge, 2, 64, 32);
    expect(t, "gguf: two 0x7FFFFFFFFFFFFFC0-byte tensors", gguf_try(p, &b, &e), F, &e, p, "past the end");
    free(b.p);
    free(kv.p);
    free(k2.p);
}

/* ---- model-level: GGUF hyperparameters / tensors, HF config / tensors, paths ------------- */

static void make(const char *path, enum wgf_arch arch, enum wgf_test_model_format f, enum wgf_dtype dt)
{
    struct wgf_test_model_spec s;
    wgf_test_model_spec_default(&s, arch);
    struct wgf_test_model_opts o = {.format = f, .dtype = dt, .n_shards = 1};
    struct wgf_err             e;
    if (wgf_test_model_write(&s, &o, path, &e) != WGF_OK) fprintf(stderr, "write %s: %s\n", path, e.msg);
}

static void test_gguf_model(struct wgf_t *t)
{
    char p[700];
    snprintf(p, sizeof p, "%s/m.gguf", g_dir);
    struct wgf_err        e;
    const enum wgf_status F = WGF_ERR_FORMAT;
    make(p, WGF_ARCH_LLAMA, WGF_TEST_MODEL_GGUF, WGF_DT_F32);
    wgf_t_check(t, load(p, &e) == WGF_OK, "gguf model: base loads", "%s", e.msg);

    patch_gguf_u32(p, "llama.attention.head_count", 0);
    expect(t, "gguf model: n_head = 0", load(p, &e), F, &e, p, "llama.attention.head_count");
    make(p, WGF_ARCH_LLAMA, WGF_TEST_MODEL_GGUF, WGF_DT_F32);
    patch_gguf_u32(p, "llama.block_count", 100000);
    expect(t, "gguf model: block_count too large", load(p, &e), F, &e, p, "llama.block_count");
    make(p, WGF_ARCH_LLAMA, WGF_TEST_MODEL_GGUF, WGF_DT_F32);
    patch_gguf_u32(p, "llama.block_count", 1); /* the file holds 2 layers */
    expect(t, "gguf model: block_count 1 over 2 layers of weights", load(p, &e), F, &e, p,
           "tensor 'blk.1.attn_norm.weight' belongs to layer 1, but llama.block_count is 1");
    { /* a per-layer name whose number is not the canonical decimal the loader looks names up
       * by ("blk.%d."): no layer reads it, so it slipped past the layer-count check. The
       * untied lm_head (output.weight, 13 bytes) renamed in place; the model then ties. */
        static const char *const bad_names[] = {"blk.00.weight", "blk.-1.weight", "blk.+1.weight", "blk.12345678.",
                                                "blk.1x.weight", "blk.0.weightX"};
        for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
            char nm[96], needle[96];
            make(p, WGF_ARCH_LLAMA, WGF_TEST_MODEL_GGUF, WGF_DT_F32);
            snprintf(nm, sizeof nm, "gguf model: output.weight renamed '%s'", bad_names[i]);
            if (!wgf_t_check(t, rename_tensor(p, "output.weight", bad_names[i]), nm, "in %s", p)) continue;
            snprintf(nm, sizeof nm, "gguf model: tensor '%s'", bad_names[i]);
            if (!strcmp(bad_names[i], "blk.0.weightX")) { /* canonical: layer 0 exists; an unused tensor as before */
                wgf_t_check(t, load(p, &e) == WGF_OK, "gguf model: canonical 'blk.0.weightX' still loads", "%s", e.msg);
                continue;
            }
            snprintf(needle, sizeof needle, "tensor '%s': the layer number", bad_names[i]);
            expect(t, nm, load(p, &e), F, &e, p, needle);
        }
        make(p, WGF_ARCH_LLAMA, WGF_TEST_MODEL_GGUF, WGF_DT_F32);
        rename_tensor(p, "output.weight", "blk.2.weight.");
        expect(t, "gguf model: canonical 'blk.2.' past 2 layers", load(p, &e), F, &e, p,
               "tensor 'blk.2.weight.' belongs to layer 2, but llama.block_count is 2");
    }
    make(p, WGF_ARCH_LLAMA, WGF_TEST_MODEL_GGUF, WGF_DT_F32);
    patch(p, "llama.embedding_length", "llama.embedding_lengtX");
    expect(t, "gguf model: missing hyperparameter", load(p, &e), F, &e, p, "missing key 'llama.embedding_length'");
    make(p, WGF_ARCH_LLAMA, WGF_TEST_MODEL_GGUF, WGF_DT_F32);
    patch_gguf_u32(p, "llama.feed_forward_length", 100);
    expect(t, "gguf model: shape vs hyperparameters", load(p, &e), F, &e, p, "does not match the config");
    make(p, WGF_ARCH_LLAMA, WGF_TEST_MODEL_GGUF, WGF_DT_F32);
    patch_gguf_u32(p, "tokenizer.ggml.bos_token_id", 100000);
    expect(t, "gguf model: BOS >= vocab", load(p, &e), F, &e, p, "bos_token_id");
    make(p, WGF_ARCH_LLAMA, WGF_TEST_MODEL_GGUF, WGF_DT_F32);
    patch(p, "blk.1.ffn_gate.weight", "blk.1.ffn_gatX.weight");
    expect(t, "gguf model: missing tensor", load(p, &e), F, &e, p, "missing tensor 'blk.1.ffn_gate.weight'");
    { /* a Phi-3 longrope file: its attention factor divides by log(original) */
        struct wgf_test_model_spec s;
        wgf_test_model_spec_default(&s, WGF_ARCH_PHI3);
        s.rope_scaling.type             = WGF_ROPE_SCALING_LONGROPE;
        s.rope_scaling.original_max_pos = 16;
        struct wgf_test_model_opts o    = {.format = WGF_TEST_MODEL_GGUF, .dtype = WGF_DT_F32, .n_shards = 1};
        if (wgf_test_model_write(&s, &o, p, &e) != WGF_OK) fprintf(stderr, "write %s: %s\n", p, e.msg);
        wgf_t_check(t, load(p, &e) == WGF_OK, "gguf model: phi3 longrope loads", "%s", e.msg);
        /* a frequency divisor of 0 or below: refused, naming the tensor */
        static const float bad[] = {0.0f, -2.0f};
        for (int b = 0; b < 2; b++) {
            if (wgf_test_model_write(&s, &o, p, &e) != WGF_OK) fprintf(stderr, "write %s: %s\n", p, e.msg);
            size_t           n   = 0;
            uint8_t         *img = read_all(p, &n);
            struct wgf_gguf *g   = NULL;
            bool             hit = false;
            if (img && wgf_gguf_open_mem(img, n, p, &g, &e) == WGF_OK) {
                int64_t                     i = wgf_gguf_find_tensor(g, "rope_factors_long.weight");
                struct wgf_gguf_tensor_info ti;
                if (i >= 0 && (wgf_gguf_tensor(g, i, &ti), ti.dtype == WGF_DT_F32)) {
                    memcpy((uint8_t *)(uintptr_t)ti.data + 4 * 3, &bad[b], 4);
                    hit = true;
                }
                wgf_gguf_close(g);
                write_buf(p, img, n);
            }
            free(img);
            wgf_t_check(t, hit, "gguf model: rope_factors_long.weight is f32", "not found");
            expect(t, b ? "gguf model: negative longrope factor" : "gguf model: zero longrope factor", load(p, &e), F, &e, p,
                   "rope_factors_long.weight'[3]");
        }
        if (wgf_test_model_write(&s, &o, p, &e) != WGF_OK) fprintf(stderr, "write %s: %s\n", p, e.msg);
    }
    wgf_t_check(t, patch_gguf_u32(p, "phi3.rope.scaling.original_context_length", 1), "gguf model: phi3 has longrope", "key missing");
    expect(t, "gguf model: longrope original 1", load(p, &e), F, &e, p, "original_context_length = 1");
    make(p, WGF_ARCH_LLAMA, WGF_TEST_MODEL_GGUF, WGF_DT_F32);
    patch(p, "llama", "gpt2x"); /* the first "llama" is general.architecture's value */
    expect(t, "gguf model: unknown architecture", load(p, &e), WGF_ERR_UNSUPPORTED, &e, p, "gpt2x");
}

static void write_text(const char *path, const char *s) { write_buf(path, s, strlen(s)); }

/* Add a 1-element F32 tensor `name` to a safetensors file: a header entry, 4 bytes of data. */
static bool st_add_tensor(const char *path, const char *name)
{
    size_t   n;
    uint8_t *p  = read_all(path, &n);
    uint64_t hl = 0;
    for (int i = 7; p && n >= 8 && i >= 0; i--) hl = (hl << 8) | p[i];
    char *close = NULL;
    for (uint64_t i = hl; p && hl <= n - 8 && i > 0 && !close; i--)
        if (p[8 + i - 1] == '}') close = (char *)p + 8 + i - 1; /* the header's last '}' */
    if (!close) {
        free(p);
        return false;
    }
    uint64_t   data = n - 8 - hl;
    char       entry[256];
    int        el = snprintf(entry, sizeof entry, ",\"%s\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[%llu,%llu]}", name,
                             (unsigned long long)data, (unsigned long long)data + 4);
    struct buf b  = {0};
    put64(&b, hl + (uint64_t)el);
    put(&b, p + 8, (size_t)((uint8_t *)close - p - 8));
    put(&b, entry, (size_t)el);
    put(&b, close, n - (size_t)((uint8_t *)close - p));
    zeros(&b, 4);
    write_buf(path, b.p, b.n);
    free(b.p);
    free(p);
    return true;
}

static void test_hf_model(struct wgf_t *t)
{
    char d[600], cfg[700], st[700];
    snprintf(d, sizeof d, "%s/hf", g_dir);
    snprintf(cfg, sizeof cfg, "%s/config.json", d);
    snprintf(st, sizeof st, "%s/model.safetensors", d);
    struct wgf_err        e;
    const enum wgf_status F = WGF_ERR_FORMAT;
    make(d, WGF_ARCH_QWEN2, WGF_TEST_MODEL_HF, WGF_DT_F16);
    wgf_t_check(t, load(d, &e) == WGF_OK, "hf model: base loads", "%s", e.msg);
    size_t   n;
    uint8_t *good = read_all(cfg, &n);
    char    *text = malloc(n + 1);
    memcpy(text, good, n);
    text[n] = 0;
    free(good);

    static const struct {
        const char *from, *to, *needle, *name;
    } cfg_cases[] = {
        {"\"hidden_size\": 64", "\"hidden_size\": \"64\"", "'hidden_size' is not an integer", "config: wrong type"},
        {"\"rms_norm_eps\": 9.99999975e-6", "\"rms_norm_eps\": 1e309", "JSON", "config: 1e309"},
        {"\"max_position_embeddings\": 256", "\"max_position_embeddings\": -256", "max_position_embeddings", "config: negative context"},
        {"\"vocab_size\": 128,", "\"vocab_size\": 128, \"vocab_size\": 128,", "duplicate", "config: duplicate key"},
        {"\"num_hidden_layers\": 2,", "", "missing field 'num_hidden_layers'", "config: missing field"},
        {"\"num_hidden_layers\": 2,", "\"num_hidden_layers\": 1,", "belongs to layer 1, but num_hidden_layers in",
         "config: 1 layer over 2 layers of weights"},
        {"\"intermediate_size\": 96", "\"intermediate_size\": 3.5", "'intermediate_size' is not an integer", "config: real for int"},
        {"\"eos_token_id\": 2", "\"eos_token_id\": 1000", "eos_token_id", "config: EOS >= vocab"},
        {"\"model_type\": \"qwen2\"", "\"model_type\": \"gpt2\"", "gpt2", "config: unknown model_type"},
        {"\"torch_dtype\": \"float16\"", "\"torch_dtype\": \"float8\"", "dtype", "config: unknown torch_dtype"},
    };
    for (size_t i = 0; i < sizeof cfg_cases / sizeof cfg_cases[0]; i++) {
        char *hit = strstr(text, cfg_cases[i].from);
        if (!wgf_t_check(t, hit != NULL, cfg_cases[i].name, "pattern '%s' %s config.json", cfg_cases[i].from, hit ? "found in" : "missing from")) continue;
        size_t pre = (size_t)(hit - text), fl = strlen(cfg_cases[i].from), tl = strlen(cfg_cases[i].to);
        char  *mod = malloc(n + tl + 1);
        memcpy(mod, text, pre);
        memcpy(mod + pre, cfg_cases[i].to, tl);
        strcpy(mod + pre + tl, hit + fl);
        write_text(cfg, mod);
        free(mod);
        enum wgf_status want = strstr(cfg_cases[i].name, "model_type") ? WGF_ERR_UNSUPPORTED : F;
        expect(t, cfg_cases[i].name, load(d, &e), want, &e, cfg, cfg_cases[i].needle);
    }
    {
        size_t cnt = 100000;
        char  *big = malloc(cnt * 4 + 64), *q = big;
        q += sprintf(q, "{\"model_type\":[1");
        for (size_t i = 1; i < cnt; i++) q += sprintf(q, ",1");
        sprintf(q, "]}");
        write_text(cfg, big);
        free(big);
        expect(t, "config: 100k-element array", load(d, &e), F, &e, cfg, "members");
    }
    write_text(cfg, "this is not json");
    expect(t, "config: not JSON", load(d, &e), F, &e, cfg, "not valid JSON");
    write_text(cfg, "[1,2,3]");
    expect(t, "config: not an object", load(d, &e), F, &e, cfg, "not a JSON object");
    /* shape mismatch with the config */
    char *mod = strdup(text);
    memcpy(strstr(mod, "\"intermediate_size\": 96"), "\"intermediate_size\": 64", 23);
    write_text(cfg, mod);
    free(mod);
    expect(t, "hf: shape vs config", load(d, &e), F, &e, st, "model.layers.0.mlp.down_proj.weight");
    write_text(cfg, text);
    /* tensors */
    patch(st, "model.layers.1.mlp.up_proj.weight", "model.layers.1.mlp.up_prXj.weight");
    expect(t, "hf: missing tensor", load(d, &e), F, &e, st, "missing tensor 'model.layers.1.mlp.up_proj.weight'");
    /* a per-layer name whose number is not canonical (as "blk.00." in GGUF above) */
    static const char *const bad_layers[] = {"model.layers.01.mlp.extra.weight", "model.layers.-1.mlp.extra.weight",
                                             "model.layers.1.mlp.extra.weight"};
    for (int i = 0; i < 3; i++) {
        make(d, WGF_ARCH_QWEN2, WGF_TEST_MODEL_HF, WGF_DT_F16);
        char nm[128], needle[128];
        snprintf(nm, sizeof nm, "hf: tensor '%s' added", bad_layers[i]);
        if (!wgf_t_check(t, st_add_tensor(st, bad_layers[i]), nm, "in %s", st)) continue;
        snprintf(nm, sizeof nm, "hf: tensor '%s'", bad_layers[i]);
        if (i == 2) { /* canonical: an unused tensor of layer 1, as before */
            wgf_t_check(t, load(d, &e) == WGF_OK, nm, "loads: %s", e.msg);
            continue;
        }
        snprintf(needle, sizeof needle, "tensor '%s': the layer number after 'model.layers.'", bad_layers[i]);
        expect(t, nm, load(d, &e), F, &e, st, needle);
    }
    make(d, WGF_ARCH_QWEN2, WGF_TEST_MODEL_HF, WGF_DT_F16);
    patch(st, "\"dtype\":\"F16\"", "\"dtype\":\"F17\"");
    expect(t, "hf: unknown dtype", load(d, &e), F, &e, st, "unknown dtype 'F17'");
    make(d, WGF_ARCH_QWEN2, WGF_TEST_MODEL_HF, WGF_DT_F16);
    patch(st, "\"dtype\":\"F16\"", "\"dtype\":\"I16\"");
    expect(t, "hf: unsupported dtype", load(d, &e), WGF_ERR_UNSUPPORTED, &e, st, "I16");
    make(d, WGF_ARCH_QWEN2, WGF_TEST_MODEL_HF, WGF_DT_F16);
    uint8_t *all = read_all(st, &n);
    write_buf(st, all, n - 1);
    expect(t, "hf: truncated safetensors", load(d, &e), F, &e, st, "truncated");
    write_buf(st, all, 20);
    expect(t, "hf: header length > file", load(d, &e), F, &e, st, "larger than the file");
    free(all);
    free(text);
    remove(st);
    remove(cfg);
    expect(t, "hf: directory without config.json", load(d, &e), WGF_ERR_IO, &e, cfg, "no such file");

    /* sharded: a weight_map naming a missing shard, and one escaping the directory */
    make(d, WGF_ARCH_QWEN2, WGF_TEST_MODEL_HF, WGF_DT_F16);
    char idx[700];
    snprintf(idx, sizeof idx, "%s/model.safetensors.index.json", d);
    write_text(idx, "{\"weight_map\":{\"model.norm.weight\":\"model-00009-of-00009.safetensors\"}}");
    expect(t, "hf: index names a missing shard", load(d, &e), WGF_ERR_IO, &e, "model-00009-of-00009.safetensors", "no such file");
    write_text(idx, "{\"weight_map\":{\"model.norm.weight\":\"../../etc/passwd\"}}");
    expect(t, "hf: index escapes the directory", load(d, &e), F, &e, idx, "plain file name");
    write_text(idx, "{\"weight_map\":{\"model.norm.weightX\":\"model.safetensors\"}}");
    expect(t, "hf: index tensor not in shard", load(d, &e), F, &e, idx, "not in shard");
    remove(idx);
}

static void test_paths(struct wgf_t *t)
{
    char p[700];
    struct wgf_err e;
    snprintf(p, sizeof p, "%s/does-not-exist.gguf", g_dir);
    expect(t, "path: missing", load(p, &e), WGF_ERR_IO, &e, p, "no such file");
    snprintf(p, sizeof p, "%s/fifo", g_dir);
    remove(p);
    if (mkfifo(p, 0600) == 0) expect(t, "path: FIFO", load(p, &e), WGF_ERR_IO, &e, p, "not a regular file");
    snprintf(p, sizeof p, "%s/empty.gguf", g_dir);
    write_buf(p, "", 0);
    expect(t, "path: empty", load(p, &e), WGF_ERR_FORMAT, &e, p, "empty");
    snprintf(p, sizeof p, "%s/unreadable.gguf", g_dir);
    write_buf(p, "GGUF", 4);
    chmod(p, 0);
    if (geteuid() == 0) wgf_t_skip(t, "path: unreadable", "running as root: permissions do not apply");
    else expect(t, "path: unreadable", load(p, &e), WGF_ERR_IO, &e, p, "cannot open");
    chmod(p, 0600);
    snprintf(p, sizeof p, "%s/short.gguf", g_dir);
    write_buf(p, "GGUF\x03\0\0", 7);
    expect(t, "path: truncated header", load(p, &e), WGF_ERR_FORMAT, &e, p, "truncated");
    snprintf(p, sizeof p, "%s/x.safetensors", g_dir);
    write_buf(p, "\x02\0\0\0\0\0\0\0{}", 10);
    expect(t, "path: safetensors file instead of dir", load(p, &e), WGF_ERR_ARG, &e, p, "directory");
}

/* Every prefix (sampled) and seeded byte flips of a valid GGUF and safetensors: any status,
 * no crash (ASan/UBSan make "no crash" strict). */
static void test_mutations(struct wgf_t *t)
{
    char src[700], p[800], d[700];
    snprintf(src, sizeof src, "%s/mut_src.gguf", g_dir);
    snprintf(p, sizeof p, "%s/mut.gguf", g_dir);
    struct wgf_test_model_spec s;
    wgf_test_model_spec_default(&s, WGF_ARCH_QWEN2);
    s.n_layers = 1, s.dim = 32, s.hidden_dim = 32, s.vocab_size = 32, s.n_heads = 2, s.n_kv_heads = 1;
    struct wgf_test_model_opts o = {.format = WGF_TEST_MODEL_GGUF, .dtype = WGF_DT_Q8_0};
    struct wgf_err             e;
    wgf_test_model_write(&s, &o, src, &e);
    size_t   n;
    uint8_t *orig = read_all(src, &n);
    int      fails = 0, runs = 0;
    for (size_t len = 0; len < n; len += len < 1200 ? 1 : 61) {
        struct wgf_llm_model *mm = NULL;
        runs++;
        /* in memory (same parser and loader as the mapped file, no disk I/O per case) */
        if (wgf__llm_model_load_gguf_mem(orig, len, "prefix.gguf", &mm, &e) == WGF_OK) fails++; /* every strict prefix is truncated */
        wgf_llm_model_free(mm);
        if (len % 613 == 0) { /* and a few through the file path */
            write_buf(p, orig, len);
            if (load(p, &e) == WGF_OK) fails++;
        }
    }
    wgf_t_check(t, fails == 0, "gguf: every prefix rejected", "%d of %d prefixes loaded", fails, runs);
    struct wgf_rng r;
    wgf_rng_seed(&r, 42);
    uint8_t            *m  = malloc(n);
    struct mutant_tally mt = {0};
    for (int it = 0; it < 3000; it++) {
        memcpy(m, orig, n);
        int flips = 1 + (int)wgf_rng_below(&r, 4);
        for (int k = 0; k < flips; k++) {
            /* mostly the header, where the parser lives */
            size_t at = wgf_rng_below(&r, 4) ? wgf_rng_below(&r, (uint32_t)(n < 1500 ? n : 1500)) : wgf_rng_below(&r, (uint32_t)n);
            m[at] ^= (uint8_t)(1u << wgf_rng_below(&r, 8));
        }
        struct wgf_llm_model *mm = NULL;
        wgf_err_clear(&e);
        tally(&mt, wgf__llm_model_load_gguf_mem(m, n, "mutant.gguf", &mm, &e), &e, it);
        wgf_llm_model_free(mm);
    }
    /* Mutation caught (tried): a gguf.c refusal with an empty message fails this check. */
    wgf_t_check(t, mt.bad == 0 && mt.refused > 0, "gguf: 3000 byte-flip mutants: loaded, or refused with a status and a one-line message",
                "%d loaded (weight bytes), %d refused, %d bad refusals %s", mt.loaded, mt.refused, mt.bad, mt.first_bad);
    /* in-memory parser (the fuzzing entry point): many more mutants, header-focused */
    struct mutant_tally mp = {0};
    for (int it = 0; it < 10000; it++) {
        memcpy(m, orig, n);
        int flips = 1 + (int)wgf_rng_below(&r, 3);
        for (int k = 0; k < flips; k++) m[wgf_rng_below(&r, (uint32_t)(n < 1200 ? n : 1200))] = (uint8_t)wgf_rng_below(&r, 256);
        struct wgf_gguf *g = NULL;
        wgf_err_clear(&e);
        enum wgf_status  gs = wgf_gguf_open_mem(m, n, "mem.gguf", &g, &e);
        tally(&mp, gs, &e, it);
        if (gs == WGF_OK) {
            /* walk every accessor on whatever parsed */
            for (int64_t i = 0; i < wgf_gguf_n_kv(g); i++) {
                size_t      kl;
                const char *str;
                wgf_gguf_kv_key(g, i, &kl);
                if (wgf_gguf_kv_type(g, i) == WGF_GGUF_ARRAY && wgf_gguf_arr_type(g, i) == WGF_GGUF_STRING)
                    for (uint64_t j = 0; j < wgf_gguf_arr_n(g, i); j++) wgf_gguf_arr_str(g, i, j, &str, &kl);
            }
            for (int64_t i = 0; i < wgf_gguf_n_tensors(g); i++) {
                struct wgf_gguf_tensor_info ti;
                wgf_gguf_tensor(g, i, &ti);
                (void)wgf_gguf_find_tensor(g, "token_embd.weight");
            }
        }
        wgf_gguf_close(g);
    }
    wgf_t_check(t, mp.bad == 0 && mp.refused > 0, "gguf: 10000 in-memory mutants: parsed, or refused with a status and a one-line message",
                "%d parsed, %d refused, %d bad refusals %s", mp.loaded, mp.refused, mp.bad, mp.first_bad);
    free(m);
    free(orig);

    snprintf(d, sizeof d, "%s/mut_hf", g_dir);
    struct wgf_test_model_opts oh = {.format = WGF_TEST_MODEL_HF, .dtype = WGF_DT_BF16};
    wgf_test_model_write(&s, &oh, d, &e);
    snprintf(p, sizeof p, "%s/model.safetensors", d);
    orig = read_all(p, &n);
    m    = malloc(n);
    fails = 0;
    runs  = 0;
    for (size_t len = 0; len < n; len += len < 1500 ? 7 : 211) {
        write_buf(p, orig, len);
        runs++;
        if (load(d, &e) == WGF_OK) fails++;
    }
    wgf_t_check(t, fails == 0, "safetensors: every prefix rejected", "%d of %d prefixes loaded", fails, runs);
    struct mutant_tally ms = {0};
    for (int it = 0; it < 300; it++) {
        memcpy(m, orig, n);
        size_t at = wgf_rng_below(&r, (uint32_t)(n < 1500 ? n : 1500));
        m[at]     = (uint8_t)wgf_rng_below(&r, 256);
        write_buf(p, m, n);
        tally(&ms, load(d, &e), &e, it);
    }
    wgf_t_check(t, ms.bad == 0 && ms.refused > 0, "safetensors: 300 header mutants through the model loader: loaded, or refused with a status and a one-line message",
                "%d loaded, %d refused, %d bad refusals %s", ms.loaded, ms.refused, ms.bad, ms.first_bad);
    struct mutant_tally mo = {0};
    for (int it = 0; it < 10000; it++) {
        memcpy(m, orig, n);
        m[wgf_rng_below(&r, (uint32_t)(n < 1500 ? n : 1500))] = (uint8_t)wgf_rng_below(&r, 256);
        struct wgf__st_file f;
        wgf_err_clear(&e);
        enum wgf_status     fs = wgf__st_open_mem(m, n, "mem.safetensors", &f, &e);
        tally(&mo, fs, &e, it);
        if (fs == WGF_OK) wgf__st_close(&f);
    }
    wgf_t_check(t, mo.bad == 0 && mo.refused > 0, "safetensors: 10000 in-memory mutants: opened, or refused with a status and a one-line message",
                "%d opened, %d refused, %d bad refusals %s", mo.loaded, mo.refused, mo.bad, mo.first_bad);
    write_buf(p, orig, n);
    free(m);
    free(orig);
}

int main(void)
{
    struct wgf_t t = {0};
    wgf_t_tmpdir("llm_files_neg", g_dir, sizeof g_dir);
    test_safetensors(&t);
    test_gguf_parse(&t);
    test_gguf_model(&t);
    test_hf_model(&t);
    test_paths(&t);
    test_mutations(&t);
    return wgf_t_finish(&t);
}
