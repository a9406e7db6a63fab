/* wgfuse — GGUF v3 reader and writer (see gguf.h for the contract).
 *
 * File layout (GGUF spec, little-endian):
 *   u32 magic "GGUF" | u32 version | u64 n_tensors | u64 n_kv
 *   n_kv x { string key | u32 type | value }        string = u64 len + bytes (no NUL)
 *       value: scalar, string, or array = u32 elem_type + u64 count + elements
 *   n_tensors x { string name | u32 n_dims | u64 ne[n_dims] | u32 ggml_type | u64 offset }
 *   padding to general.alignment (default 32) | tensor data (each offset aligned)
 * ne[0] is the contiguous (column) dimension: the reverse of PyTorch's shape.
 *
 * Every count and length is checked against the bytes remaining before it is used, and
 * every allocation is bounded by the file size (RELIABILITY.md items 1-11). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/gguf.h"
#include "util/file.h"
#include "llm/model_files.h"

#define GGUF_MAGIC_LE   0x46554747u /* "GGUF" read as little-endian u32 */
#define GGUF_MAX_ALIGN  65536u
#define GGUF_MAX_NAME   (WGF_TENSOR_NAME_MAX - 1)

/* Compact per-entry records (24 and 56 bytes for entries that take >= 14 and >= 33 bytes
 * of file): parser memory stays below 2x the file size even for a hostile file made of
 * minimal entries. */
struct gguf_kv {
    uint64_t key_off;  /* offset of the key bytes in the map                              */
    uint64_t val_off;  /* scalar/string/array data offset; string arrays: index into str_offs */
    uint32_t key_len;  /* (array counts are re-read from the file: see kv_arr_n)            */
    uint8_t  type;     /* enum wgf_gguf_type                                              */
    uint8_t  arr_type;
};

struct gguf_tensor {
    uint64_t name_off;
    uint64_t offset;   /* relative to the data section                                    */
    int64_t  shape[WGF_TENSOR_MAX_DIMS]; /* row-major                                      */
    uint32_t name_len;
    uint8_t  dtype;    /* enum wgf_dtype                                                  */
    uint8_t  n_dims;
};

struct wgf_gguf {
    char               *path;
    struct wgf_mapfile  map;
    uint32_t            version, alignment;
    uint64_t            data_off;
    int64_t             n_kv, n_tensors;
    struct gguf_kv     *kv;
    struct gguf_tensor *t;
    uint64_t           *str_offs; /* offsets of every string-array element's length field */
    uint64_t            n_str;
    int64_t            *by_name;  /* tensor indices sorted by name (binary search)        */
    bool                borrowed; /* map.data belongs to the caller (wgf_gguf_open_mem)   */
};

/* ---- bounded reader ----------------------------------------------------------------------- */

struct rd {
    const uint8_t  *p;
    uint64_t        size, pos;
    const char     *path;
    struct wgf_err *err;
};

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* An array's count sits after its key, the u32 value type and the u32 element type. */
static uint64_t kv_arr_n(const struct wgf_gguf *g, int64_t kv)
{
    return le(g->map.data + g->kv[kv].key_off + g->kv[kv].key_len + 8, 8);
}

static bool rd_need(struct rd *r, uint64_t n, const char *what)
{
    if (n > r->size - r->pos) {
        wgf_fail(r->err, WGF_ERR_FORMAT, "%s: truncated: %s needs %llu bytes at offset %llu, %llu left", r->path, what,
                 (unsigned long long)n, (unsigned long long)r->pos, (unsigned long long)(r->size - r->pos));
        return false;
    }
    return true;
}

static bool rd_u32(struct rd *r, uint32_t *v, const char *what)
{
    if (!rd_need(r, 4, what)) return false;
    *v = (uint32_t)le(r->p + r->pos, 4);
    r->pos += 4;
    return true;
}

static bool rd_u64(struct rd *r, uint64_t *v, const char *what)
{
    if (!rd_need(r, 8, what)) return false;
    *v = le(r->p + r->pos, 8);
    r->pos += 8;
    return true;
}

/* A string: u64 length then bytes. The length is checked against the bytes left. */
static bool rd_str(struct rd *r, uint64_t *off, uint64_t *len, const char *what)
{
    if (!rd_u64(r, len, what)) return false;
    if (*len > r->size - r->pos) {
        wgf_fail(r->err, WGF_ERR_FORMAT, "%s: %s length %llu at offset %llu runs past the end of the file", r->path, what,
                 (unsigned long long)*len, (unsigned long long)(r->pos - 8));
        return false;
    }
    *off = r->pos;
    r->pos += *len;
    return true;
}

static int scalar_size(uint32_t type)
{
    switch (type) {
    case WGF_GGUF_UINT8:
    case WGF_GGUF_INT8:
    case WGF_GGUF_BOOL: return 1;
    case WGF_GGUF_UINT16:
    case WGF_GGUF_INT16: return 2;
    case WGF_GGUF_UINT32:
    case WGF_GGUF_INT32:
    case WGF_GGUF_FLOAT32: return 4;
    case WGF_GGUF_UINT64:
    case WGF_GGUF_INT64:
    case WGF_GGUF_FLOAT64: return 8;
    }
    return 0;
}

/* ggml type ids (ggml.h numbering) and our dtypes, both ways */
static const struct {
    uint32_t       ggml;
    enum wgf_dtype dt;
} type_map[] = {
    {WGF_GGML_F32, WGF_DT_F32},   {WGF_GGML_F16, WGF_DT_F16},   {WGF_GGML_BF16, WGF_DT_BF16}, {WGF_GGML_Q4_0, WGF_DT_Q4_0},
    {WGF_GGML_Q4_1, WGF_DT_Q4_1}, {WGF_GGML_Q5_0, WGF_DT_Q5_0}, {WGF_GGML_Q5_1, WGF_DT_Q5_1}, {WGF_GGML_Q8_0, WGF_DT_Q8_0},
    {WGF_GGML_Q2_K, WGF_DT_Q2_K}, {WGF_GGML_Q3_K, WGF_DT_Q3_K}, {WGF_GGML_Q4_K, WGF_DT_Q4_K}, {WGF_GGML_Q5_K, WGF_DT_Q5_K},
    {WGF_GGML_Q6_K, WGF_DT_Q6_K},
};

/* ggml type id -> our dtype; 1 = known but unsupported, 2 = unknown id. */
static int ggml_type_map(uint32_t id, enum wgf_dtype *dt)
{
    for (size_t i = 0; i < sizeof type_map / sizeof type_map[0]; i++)
        if (type_map[i].ggml == id) {
            *dt = type_map[i].dt;
            return 0;
        }
    /* Q8_1, Q8_K, IQ*, I8..F64, TQ*, MXFP4: real types we cannot load */
    if (id == 9 || (id >= 15 && id <= 29) || id == 34 || id == 35 || id == 39) return 1;
    return 2;
}

/* Names of the ggml types we can name but not load (ggml.h numbering). */
static const char *ggml_type_name(uint32_t id)
{
    static const char *const names[] = {
        [9] = "Q8_1",     [15] = "Q8_K",   [16] = "IQ2_XXS", [17] = "IQ2_XS", [18] = "IQ3_XXS", [19] = "IQ1_S",
        [20] = "IQ4_NL",  [21] = "IQ3_S",  [22] = "IQ2_S",   [23] = "IQ4_XS", [24] = "I8",      [25] = "I16",
        [26] = "I32",     [27] = "I64",    [28] = "F64",     [29] = "IQ1_M",  [34] = "TQ1_0",   [35] = "TQ2_0",
        [39] = "MXFP4",
    };
    return id < sizeof names / sizeof names[0] && names[id] ? names[id] : "?";
}

static int dtype_to_ggml(enum wgf_dtype t)
{
    for (size_t i = 0; i < sizeof type_map / sizeof type_map[0]; i++)
        if (type_map[i].dt == t) return (int)type_map[i].ggml;
    return -1;
}

/* ---- sorting helpers (qsort needs the file as context: use a file-scope pointer set
 * only for the duration of one qsort call from the parsing thread) ------------------------- */
static _Thread_local const struct wgf_gguf *sort_g;

static int cmp_kv_key(const void *a, const void *b)
{
    const struct gguf_kv *x = &sort_g->kv[*(const int64_t *)a], *y = &sort_g->kv[*(const int64_t *)b];
    uint32_t              n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int                   c = memcmp(sort_g->map.data + x->key_off, sort_g->map.data + y->key_off, n);
    return c ? c : (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

static int cmp_t_name(const void *a, const void *b)
{
    const struct gguf_tensor *x = &sort_g->t[*(const int64_t *)a], *y = &sort_g->t[*(const int64_t *)b];
    uint32_t                  n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int                       c = memcmp(sort_g->map.data + x->name_off, sort_g->map.data + y->name_off, n);
    return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

static int cmp_t_off(const void *a, const void *b)
{
    const struct gguf_tensor *x = &sort_g->t[*(const int64_t *)a], *y = &sort_g->t[*(const int64_t *)b];
    return (x->offset > y->offset) - (x->offset < y->offset);
}

static uint64_t tensor_nbytes(const struct gguf_tensor *t)
{
    uint64_t n = 1, nb = 0;
    for (int i = 0; i < t->n_dims; i++) n *= (uint64_t)t->shape[i]; /* checked at parse */
    wgf__dtype_nbytes((enum wgf_dtype)t->dtype, n, (uint64_t)t->shape[t->n_dims - 1], &nb);
    return nb;
}

/* ---- parsing ------------------------------------------------------------------------------ */

static enum wgf_status parse_kv(struct wgf_gguf *g, struct rd *r, int64_t i)
{
    struct gguf_kv *kv = &g->kv[i];
    uint64_t        koff, klen;
    if (!rd_str(r, &koff, &klen, "metadata key")) return r->err->status;
    if (klen == 0) return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: metadata key %lld is empty", r->path, (long long)i);
    if (klen > 65535) return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: metadata key %lld is %llu bytes long (max 65535)", r->path, (long long)i, (unsigned long long)klen);
    kv->key_off = koff;
    kv->key_len = (uint32_t)klen;
    const int   kl = (int)(klen > 80 ? 80 : klen);
    const char *k  = (const char *)r->p + koff;
    uint32_t    type;
    if (!rd_u32(r, &type, "metadata value type")) return r->err->status;
    if (type > WGF_GGUF_FLOAT64) return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: key '%.*s': unknown value type %u", r->path, kl, k, type);
    kv->type = (uint8_t)type;
    char what[128];
    if (type == WGF_GGUF_STRING) {
        uint64_t so, sl;
        snprintf(what, sizeof what, "key '%.*s': string value", kl, k);
        if (!rd_str(r, &so, &sl, what)) return r->err->status;
        kv->val_off = so - 8; /* points at the length field */
        return WGF_OK;
    }
    if (type != WGF_GGUF_ARRAY) {
        int sz = scalar_size(type);
        if (!rd_need(r, (uint64_t)sz, "scalar value")) return r->err->status;
        kv->val_off = r->pos;
        r->pos += (uint64_t)sz;
        return WGF_OK;
    }
    uint32_t et;
    uint64_t n;
    if (!rd_u32(r, &et, "array type") || !rd_u64(r, &n, "array count")) return r->err->status;
    if (et == WGF_GGUF_ARRAY) return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: key '%.*s': nested arrays are not supported", r->path, kl, k);
    if (et > WGF_GGUF_FLOAT64) return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: key '%.*s': unknown array element type %u", r->path, kl, k, et);
    kv->arr_type = (uint8_t)et;
    uint64_t left = r->size - r->pos;
    if (et != WGF_GGUF_STRING) {
        uint64_t bytes;
        if (!wgf_mul_u64(n, (uint64_t)scalar_size(et), &bytes) || bytes > left)
            return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: key '%.*s': array of %llu elements runs past the end of the file", r->path, kl, k, (unsigned long long)n);
        kv->val_off = r->pos;
        r->pos += bytes;
        return WGF_OK;
    }
    if (n > left / 8) return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: key '%.*s': array of %llu strings runs past the end of the file", r->path, kl, k, (unsigned long long)n);
    /* Each string costs >= 8 bytes of input, so this table is at most the file size. */
    uint64_t total = g->n_str + n;
    size_t    nb;
    uint64_t *ns   = wgf_mul_size((size_t)(total ? total : 1), sizeof *ns, &nb) ? realloc(g->str_offs, nb) : NULL;
    if (!ns) return wgf_fail(r->err, WGF_ERR_NOMEM, "%s: key '%.*s': out of memory for %llu strings", r->path, kl, k, (unsigned long long)n);
    g->str_offs = ns;
    kv->val_off = g->n_str;
    for (uint64_t j = 0; j < n; j++) {
        uint64_t so, sl;
        ns[g->n_str + j] = r->pos;
        if (!rd_str(r, &so, &sl, "string element")) { /* say which key and element */
            snprintf(what, sizeof what, "key '%.*s': string element %llu", kl, k, (unsigned long long)j);
            return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: %s: length or bytes run past the end of the file", r->path, what);
        }
    }
    g->n_str = total;
    return WGF_OK;
}

static enum wgf_status parse_tensor_info(struct wgf_gguf *g, struct rd *r, int64_t i)
{
    struct gguf_tensor *t = &g->t[i];
    uint64_t            no, nl;
    if (!rd_str(r, &no, &nl, "tensor name")) return r->err->status;
    if (nl == 0) return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: tensor %lld has an empty name", r->path, (long long)i);
    const char *nm = (const char *)r->p + no;
    if (nl > GGUF_MAX_NAME) return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: tensor %lld: name of %llu bytes is longer than %d", r->path, (long long)i, (unsigned long long)nl, GGUF_MAX_NAME);
    for (uint64_t j = 0; j < nl; j++)
        if (nm[j] == '\0') return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: tensor %lld: name contains a NUL byte", r->path, (long long)i);
    const int nli = (int)nl;
    t->name_off   = no;
    t->name_len   = (uint32_t)nl;
    uint32_t nd;
    if (!rd_u32(r, &nd, "tensor n_dims")) return r->err->status;
    if (nd < 1 || nd > WGF_TENSOR_MAX_DIMS) return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: tensor '%.*s': n_dims %u not in [1, 4]", r->path, nli, nm, nd);
    t->n_dims   = (uint8_t)nd;
    uint64_t ne[WGF_TENSOR_MAX_DIMS], nel = 1;
    for (uint32_t d = 0; d < nd; d++) {
        if (!rd_u64(r, &ne[d], "tensor dim")) return r->err->status;
        if (ne[d] == 0 || ne[d] > (uint64_t)INT64_MAX)
            return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: tensor '%.*s': dim %u is %lld (must be positive)", r->path, nli, nm, d, (long long)ne[d]);
        if (!wgf_mul_u64(nel, ne[d], &nel) || nel > (uint64_t)INT64_MAX)
            return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: tensor '%.*s': element count overflows 64 bits", r->path, nli, nm);
    }
    for (int d = 0; d < WGF_TENSOR_MAX_DIMS; d++) t->shape[d] = 1;
    for (uint32_t d = 0; d < nd; d++) t->shape[nd - 1 - d] = (int64_t)ne[d]; /* ne[0] = cols */
    uint32_t ty;
    if (!rd_u32(r, &ty, "tensor type")) return r->err->status;
    enum wgf_dtype dt = WGF_DT_F32;
    int            m  = ggml_type_map(ty, &dt);
    if (m == 2) return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: tensor '%.*s': unknown tensor type %u", r->path, nli, nm, ty);
    if (m == 1)
        return wgf_fail(r->err, WGF_ERR_UNSUPPORTED,
                        "%s: tensor '%.*s': ggml type %u (%s) not supported (F32, F16, BF16, Q4_0, Q4_1, Q5_0, "
                        "Q5_1, Q8_0, Q2_K..Q6_K are)",
                        r->path, nli, nm, ty, ggml_type_name(ty));
    t->dtype = (uint8_t)dt;
    uint64_t nb;
    if (ne[0] % (uint64_t)wgf_dtype_block_elems(dt) != 0)
        return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: tensor '%.*s': row length %llu is not a multiple of the %s block size %d", r->path, nli, nm, (unsigned long long)ne[0], wgf_dtype_str(dt), wgf_dtype_block_elems(dt));
    if (!wgf__dtype_nbytes(dt, nel, ne[0], &nb) || nb > (uint64_t)INT64_MAX)
        return wgf_fail(r->err, WGF_ERR_FORMAT, "%s: tensor '%.*s': byte size overflows 64 bits", r->path, nli, nm);
    if (!rd_u64(r, &t->offset, "tensor offset")) return r->err->status;
    return WGF_OK;
}

static enum wgf_status gguf_parse(struct wgf_gguf *g, struct wgf_err *err)
{
    struct rd r = {.p = g->map.data, .size = g->map.size, .pos = 0, .path = g->path, .err = err};
    uint32_t  magic;
    if (!rd_u32(&r, &magic, "magic")) return err->status;
    if (magic != GGUF_MAGIC_LE) return wgf_fail(err, WGF_ERR_FORMAT, "%s: not a GGUF file (bad magic 0x%08x)", g->path, magic);
    if (!rd_u32(&r, &g->version, "version")) return err->status;
    if (g->version != 2 && g->version != 3) {
        if ((g->version & 0xffffu) == 0 && g->version != 0)
            return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: byte-swapped GGUF header (big-endian files are not supported)", g->path);
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: unsupported GGUF version %u (2 and 3 are supported)", g->path, g->version);
    }
    uint64_t nt, nkv;
    if (!rd_u64(&r, &nt, "tensor count") || !rd_u64(&r, &nkv, "metadata count")) return err->status;
    /* Smallest possible entries: kv = 8+1+4+1 bytes, tensor info = 8+1+4+8+4+8 bytes. */
    uint64_t left = r.size - r.pos;
    if (nkv > left / 14) return wgf_fail(err, WGF_ERR_FORMAT, "%s: metadata count %llu cannot fit in the %llu bytes left", g->path, (unsigned long long)nkv, (unsigned long long)left);
    if (nt > left / 33) return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor count %llu cannot fit in the %llu bytes left", g->path, (unsigned long long)nt, (unsigned long long)left);
    g->kv = calloc(nkv ? (size_t)nkv : 1, sizeof *g->kv);
    g->t  = calloc(nt ? (size_t)nt : 1, sizeof *g->t);
    uint64_t nidx = nkv > nt ? nkv : nt;
    int64_t *idx  = calloc(nidx ? (size_t)nidx : 1, sizeof *idx); /* calloc: overflow-checked */
    if (!g->kv || !g->t || !idx) {
        free(idx);
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory for %llu keys / %llu tensors", g->path, (unsigned long long)nkv, (unsigned long long)nt);
    }
    enum wgf_status st = WGF_OK;
    g->alignment       = 32;
    for (uint64_t i = 0; i < nkv; i++) {
        if ((st = parse_kv(g, &r, (int64_t)i)) != WGF_OK) goto out;
        g->n_kv = (int64_t)i + 1;
    }
    /* duplicate keys */
    sort_g = g;
    for (int64_t i = 0; i < g->n_kv; i++) idx[i] = i;
    qsort(idx, (size_t)g->n_kv, sizeof *idx, cmp_kv_key);
    for (int64_t i = 1; i < g->n_kv; i++)
        if (cmp_kv_key(&idx[i - 1], &idx[i]) == 0) {
            const struct gguf_kv *kv = &g->kv[idx[i]];
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: duplicate metadata key '%.*s'", g->path, (int)(kv->key_len > 80 ? 80 : kv->key_len), (const char *)g->map.data + kv->key_off);
            goto out;
        }
    int64_t ai = wgf_gguf_find(g, "general.alignment");
    if (ai >= 0) {
        if (g->kv[ai].type != WGF_GGUF_UINT32) {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: general.alignment has type %u, expected UINT32", g->path, g->kv[ai].type);
            goto out;
        }
        uint32_t a = (uint32_t)le(g->map.data + g->kv[ai].val_off, 4);
        if (a < 8 || a > GGUF_MAX_ALIGN || (a & (a - 1))) {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: general.alignment %u is not a power of two in [8, %u]", g->path, a, GGUF_MAX_ALIGN);
            goto out;
        }
        g->alignment = a;
    }
    for (uint64_t i = 0; i < nt; i++) {
        if ((st = parse_tensor_info(g, &r, (int64_t)i)) != WGF_OK) goto out;
        g->n_tensors = (int64_t)i + 1;
    }
    for (int64_t i = 0; i < g->n_tensors; i++) idx[i] = i;
    qsort(idx, (size_t)g->n_tensors, sizeof *idx, cmp_t_name);
    for (int64_t i = 1; i < g->n_tensors; i++)
        if (cmp_t_name(&idx[i - 1], &idx[i]) == 0) {
            const struct gguf_tensor *t = &g->t[idx[i]];
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: duplicate tensor name '%.*s'", g->path, (int)t->name_len, (const char *)g->map.data + t->name_off);
            goto out;
        }
    g->by_name = calloc(g->n_tensors ? (size_t)g->n_tensors : 1, sizeof *g->by_name);
    if (!g->by_name) {
        st = wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory for %lld tensors", g->path, (long long)g->n_tensors);
        goto out;
    }
    memcpy(g->by_name, idx, (size_t)g->n_tensors * sizeof *idx);
    /* data section: starts at the next multiple of the alignment */
    uint64_t a = g->alignment, pad = (a - r.pos % a) % a;
    if (g->n_tensors == 0 && pad > r.size - r.pos) pad = r.size - r.pos; /* vocab-only files may end unpadded */
    if (pad > r.size - r.pos) {
        st = wgf_fail(err, WGF_ERR_FORMAT, "%s: truncated: file ends before the tensor data section", g->path);
        goto out;
    }
    g->data_off        = r.pos + pad;
    uint64_t data_size = r.size - g->data_off;
    /* tensors must tile the data section in offset order: aligned, inside, no overlap, no hole */
    qsort(idx, (size_t)g->n_tensors, sizeof *idx, cmp_t_off);
    uint64_t expect = 0;
    for (int64_t i = 0; i < g->n_tensors; i++) {
        const struct gguf_tensor *t  = &g->t[idx[i]];
        const int                 nl = (int)t->name_len;
        const char               *nm = (const char *)g->map.data + t->name_off;
        uint64_t                  nb = tensor_nbytes(t), end;
        if (t->offset % a) {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%.*s': offset %llu is not a multiple of the alignment %llu", g->path, nl, nm, (unsigned long long)t->offset, (unsigned long long)a);
            goto out;
        }
        if (!wgf_add_u64(t->offset, nb, &end) || end > data_size) {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%.*s': data [%llu, +%llu) past the end of the file's data section (%llu bytes; truncated download?)", g->path, nl, nm,
                          (unsigned long long)t->offset, (unsigned long long)nb, (unsigned long long)data_size);
            goto out;
        }
        if (t->offset < expect) {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%.*s': data at offset %llu overlaps the previous tensor", g->path, nl, nm, (unsigned long long)t->offset);
            goto out;
        }
        if (t->offset > expect) {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%.*s': gap of %llu bytes before its data", g->path, nl, nm, (unsigned long long)(t->offset - expect));
            goto out;
        }
        /* end <= data_size <= 2^63, so aligning up cannot overflow */
        expect = (end + a - 1) / a * a;
    }
    if (data_size > expect) {
        st = wgf_fail(err, WGF_ERR_FORMAT, "%s: %llu trailing bytes after the last tensor", g->path, (unsigned long long)(data_size - expect));
        goto out;
    }
out:
    free(idx);
    return st;
}

enum wgf_status wgf_gguf_open(const char *path, struct wgf_gguf **out, struct wgf_err *err)
{
    *out              = NULL;
    struct wgf_gguf *g = calloc(1, sizeof *g);
    if (!g || !(g->path = strdup(path))) {
        free(g);
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", path);
    }
    struct wgf_err  local;
    struct wgf_err *e  = err ? err : &local;
    enum wgf_status st = wgf_mapfile_open(path, &g->map, e);
    if (st == WGF_OK) st = gguf_parse(g, e);
    if (st != WGF_OK) {
        wgf_gguf_close(g);
        return st;
    }
    *out = g;
    return WGF_OK;
}

enum wgf_status wgf_gguf_open_mem(const void *data, size_t size, const char *name, struct wgf_gguf **out, struct wgf_err *err)
{
    *out               = NULL;
    struct wgf_gguf *g = calloc(1, sizeof *g);
    if (!g || !(g->path = strdup(name))) {
        free(g);
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", name);
    }
    g->borrowed = true;
    g->map.data = data;
    g->map.size = size;
    struct wgf_err  local;
    struct wgf_err *e  = err ? err : &local;
    enum wgf_status st = size ? gguf_parse(g, e) : wgf_fail(e, WGF_ERR_FORMAT, "%s: file is empty", name);
    if (st != WGF_OK) {
        wgf_gguf_close(g);
        return st;
    }
    *out = g;
    return WGF_OK;
}

void wgf_gguf_close(struct wgf_gguf *g)
{
    if (!g) return;
    if (g->borrowed) g->map.data = NULL; /* not ours to unmap */
    wgf_mapfile_close(&g->map);
    free(g->kv);
    free(g->t);
    free(g->str_offs);
    free(g->by_name);
    free(g->path);
    free(g);
}

const char *wgf_gguf_path(const struct wgf_gguf *g) { return g->path; }
const struct wgf_mapfile *wgf__gguf_mapfile(const struct wgf_gguf *g) { return &g->map; }
uint32_t    wgf_gguf_version(const struct wgf_gguf *g) { return g->version; }
uint32_t    wgf_gguf_alignment(const struct wgf_gguf *g) { return g->alignment; }

/* ---- metadata accessors ------------------------------------------------------------------- */

int64_t wgf_gguf_n_kv(const struct wgf_gguf *g) { return g->n_kv; }

int64_t wgf_gguf_find(const struct wgf_gguf *g, const char *key)
{
    size_t n = strlen(key);
    for (int64_t i = 0; i < g->n_kv; i++)
        if (g->kv[i].key_len == n && memcmp(g->map.data + g->kv[i].key_off, key, n) == 0) return i;
    return -1;
}

const char *wgf_gguf_kv_key(const struct wgf_gguf *g, int64_t kv, size_t *len)
{
    WGF_ASSERT(kv >= 0 && kv < g->n_kv);
    *len = g->kv[kv].key_len;
    return (const char *)g->map.data + g->kv[kv].key_off;
}

enum wgf_gguf_type wgf_gguf_kv_type(const struct wgf_gguf *g, int64_t kv)
{
    WGF_ASSERT(kv >= 0 && kv < g->n_kv);
    return (enum wgf_gguf_type)g->kv[kv].type;
}

enum wgf_gguf_type wgf_gguf_arr_type(const struct wgf_gguf *g, int64_t kv)
{
    WGF_ASSERT(kv >= 0 && kv < g->n_kv);
    return (enum wgf_gguf_type)g->kv[kv].arr_type;
}

uint64_t wgf_gguf_arr_n(const struct wgf_gguf *g, int64_t kv)
{
    WGF_ASSERT(kv >= 0 && kv < g->n_kv);
    return g->kv[kv].type == WGF_GGUF_ARRAY ? kv_arr_n(g, kv) : 0;
}

/* The spec's name of a value type ("?" past FLOAT64). */
static const char *type_name(uint32_t type)
{
    static const char *const names[] = {"UINT8", "INT8",  "UINT16", "INT16",  "UINT32", "INT32",  "FLOAT32",
                                        "BOOL",  "STRING", "ARRAY", "UINT64", "INT64", "FLOAT64"};
    return type < sizeof names / sizeof names[0] ? names[type] : "?";
}

/* A wrong-typed value in a message: "type 9 (ARRAY of STRING)" (format "type %u (%s%s%s)"). */
#define KV_TYPE_ARGS(kv)                                                                                   \
    (kv)->type, type_name((kv)->type), (kv)->type == WGF_GGUF_ARRAY ? " of " : "",                         \
        (kv)->type == WGF_GGUF_ARRAY ? type_name((kv)->arr_type) : ""

static bool is_int_type(uint32_t t) { return t <= WGF_GGUF_INT32 || t == WGF_GGUF_UINT64 || t == WGF_GGUF_INT64; }

/* Read an integer of GGUF type `t` at `p`; *neg_big set when a UINT64 exceeds INT64_MAX. */
static int64_t read_int(const uint8_t *p, uint32_t t, bool *too_big)
{
    *too_big = false;
    switch (t) {
    case WGF_GGUF_UINT8: return p[0];
    case WGF_GGUF_INT8: return (int8_t)p[0];
    case WGF_GGUF_UINT16: return (int64_t)le(p, 2);
    case WGF_GGUF_INT16: return (int16_t)(uint16_t)le(p, 2);
    case WGF_GGUF_UINT32: return (int64_t)le(p, 4);
    case WGF_GGUF_INT32: return (int32_t)(uint32_t)le(p, 4);
    case WGF_GGUF_UINT64: {
        uint64_t v = le(p, 8);
        if (v > (uint64_t)INT64_MAX) *too_big = true;
        return (int64_t)(v & (uint64_t)INT64_MAX);
    }
    case WGF_GGUF_INT64: return (int64_t)le(p, 8);
    }
    return 0;
}

static double read_float(const uint8_t *p, uint32_t t)
{
    if (t == WGF_GGUF_FLOAT32) {
        uint32_t u = (uint32_t)le(p, 4);
        float    f;
        memcpy(&f, &u, 4);
        return f;
    }
    uint64_t u = le(p, 8);
    double   d;
    memcpy(&d, &u, 8);
    return d;
}

static enum wgf_status get_i64(const struct wgf_gguf *g, const char *key, int64_t lo, int64_t hi, int64_t *out,
                               bool opt, struct wgf_err *err)
{
    int64_t i = wgf_gguf_find(g, key);
    if (i < 0) return opt ? WGF_OK : wgf_fail(err, WGF_ERR_FORMAT, "%s: missing key '%s'", g->path, key);
    const struct gguf_kv *kv = &g->kv[i];
    if (!is_int_type(kv->type)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: key '%s' has type %u (%s%s%s), expected an integer", g->path, key, KV_TYPE_ARGS(kv));
    bool    big;
    int64_t v = read_int(g->map.data + kv->val_off, kv->type, &big);
    if (big) /* a UINT64 past INT64_MAX: its own value, not the low 63 bits */
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: key '%s' = %llu out of range [%lld, %lld]", g->path, key,
                        (unsigned long long)le(g->map.data + kv->val_off, 8), (long long)lo, (long long)hi);
    if (v < lo || v > hi)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: key '%s' = %lld out of range [%lld, %lld]", g->path, key, (long long)v, (long long)lo, (long long)hi);
    *out = v;
    return WGF_OK;
}

enum wgf_status wgf_gguf_get_i64(const struct wgf_gguf *g, const char *key, int64_t lo, int64_t hi, int64_t *out, struct wgf_err *err)
{
    return get_i64(g, key, lo, hi, out, false, err);
}

enum wgf_status wgf_gguf_get_i64_opt(const struct wgf_gguf *g, const char *key, int64_t lo, int64_t hi, int64_t *out, struct wgf_err *err)
{
    return get_i64(g, key, lo, hi, out, true, err);
}

static enum wgf_status get_f32(const struct wgf_gguf *g, const char *key, float *out, bool opt, struct wgf_err *err)
{
    int64_t i = wgf_gguf_find(g, key);
    if (i < 0) return opt ? WGF_OK : wgf_fail(err, WGF_ERR_FORMAT, "%s: missing key '%s'", g->path, key);
    const struct gguf_kv *kv = &g->kv[i];
    if (kv->type != WGF_GGUF_FLOAT32 && kv->type != WGF_GGUF_FLOAT64)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: key '%s' has type %u (%s%s%s), expected a float", g->path, key, KV_TYPE_ARGS(kv));
    double v = read_float(g->map.data + kv->val_off, kv->type);
    if (!(v > -3.4e38 && v < 3.4e38)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: key '%s' is not a finite float", g->path, key);
    *out = (float)v;
    return WGF_OK;
}

enum wgf_status wgf_gguf_get_f32(const struct wgf_gguf *g, const char *key, float *out, struct wgf_err *err)
{
    return get_f32(g, key, out, false, err);
}

enum wgf_status wgf_gguf_get_f32_opt(const struct wgf_gguf *g, const char *key, float *out, struct wgf_err *err)
{
    return get_f32(g, key, out, true, err);
}

enum wgf_status wgf_gguf_get_bool_opt(const struct wgf_gguf *g, const char *key, bool *out, struct wgf_err *err)
{
    int64_t i = wgf_gguf_find(g, key);
    if (i < 0) return WGF_OK;
    if (g->kv[i].type != WGF_GGUF_BOOL) return wgf_fail(err, WGF_ERR_FORMAT, "%s: key '%s' has type %u (%s%s%s), expected BOOL", g->path, key, KV_TYPE_ARGS(&g->kv[i]));
    uint8_t b = g->map.data[g->kv[i].val_off];
    if (b > 1) return wgf_fail(err, WGF_ERR_FORMAT, "%s: key '%s' has bool value %u", g->path, key, b);
    *out = b != 0;
    return WGF_OK;
}

enum wgf_status wgf_gguf_get_str(const struct wgf_gguf *g, const char *key, const char **s, size_t *len, struct wgf_err *err)
{
    int64_t i = wgf_gguf_find(g, key);
    if (i < 0) return wgf_fail(err, WGF_ERR_FORMAT, "%s: missing key '%s'", g->path, key);
    if (g->kv[i].type != WGF_GGUF_STRING) return wgf_fail(err, WGF_ERR_FORMAT, "%s: key '%s' has type %u (%s%s%s), expected STRING", g->path, key, KV_TYPE_ARGS(&g->kv[i]));
    *len = (size_t)le(g->map.data + g->kv[i].val_off, 8);
    *s   = (const char *)g->map.data + g->kv[i].val_off + 8;
    return WGF_OK;
}

enum wgf_status wgf_gguf_get_arr(const struct wgf_gguf *g, const char *key, enum wgf_gguf_type elem, int64_t *kv, uint64_t *n, struct wgf_err *err)
{
    int64_t i = wgf_gguf_find(g, key);
    if (i < 0) return wgf_fail(err, WGF_ERR_FORMAT, "%s: missing key '%s'", g->path, key);
    if (g->kv[i].type != WGF_GGUF_ARRAY) return wgf_fail(err, WGF_ERR_FORMAT, "%s: key '%s' has type %u (%s%s%s), expected ARRAY", g->path, key, KV_TYPE_ARGS(&g->kv[i]));
    uint32_t et = g->kv[i].arr_type;
    bool     ok = et == (uint32_t)elem || (elem == WGF_GGUF_INT32 && is_int_type(et)) ||
              (elem == WGF_GGUF_FLOAT32 && et == WGF_GGUF_FLOAT64);
    if (!ok) return wgf_fail(err, WGF_ERR_FORMAT, "%s: key '%s' is an array of type %u, expected %u", g->path, key, et, (unsigned)elem);
    *kv = i;
    *n  = kv_arr_n(g, i);
    return WGF_OK;
}

void wgf_gguf_arr_str(const struct wgf_gguf *g, int64_t kv, uint64_t i, const char **s, size_t *len)
{
    WGF_ASSERT(kv >= 0 && kv < g->n_kv && g->kv[kv].type == WGF_GGUF_ARRAY && g->kv[kv].arr_type == WGF_GGUF_STRING && i < kv_arr_n(g, kv));
    uint64_t off = g->str_offs[g->kv[kv].val_off + i];
    *len         = (size_t)le(g->map.data + off, 8);
    *s           = (const char *)g->map.data + off + 8;
}

int64_t wgf_gguf_arr_int(const struct wgf_gguf *g, int64_t kv, uint64_t i)
{
    WGF_ASSERT(kv >= 0 && kv < g->n_kv && g->kv[kv].type == WGF_GGUF_ARRAY && is_int_type(g->kv[kv].arr_type) && i < kv_arr_n(g, kv));
    bool big;
    uint32_t t = g->kv[kv].arr_type;
    int64_t v = read_int(g->map.data + g->kv[kv].val_off + i * (uint64_t)scalar_size(t), t, &big);
    return big ? INT64_MAX : v; /* a UINT64 past INT64_MAX saturates: it fails any range check */
}

double wgf_gguf_arr_float(const struct wgf_gguf *g, int64_t kv, uint64_t i)
{
    uint32_t t = kv >= 0 && kv < g->n_kv ? g->kv[kv].arr_type : 0;
    WGF_ASSERT(kv >= 0 && kv < g->n_kv && g->kv[kv].type == WGF_GGUF_ARRAY && (t == WGF_GGUF_FLOAT32 || t == WGF_GGUF_FLOAT64) && i < kv_arr_n(g, kv));
    return read_float(g->map.data + g->kv[kv].val_off + i * (uint64_t)scalar_size(t), t);
}

/* ---- tensors ------------------------------------------------------------------------------ */

int64_t wgf_gguf_n_tensors(const struct wgf_gguf *g) { return g->n_tensors; }

void wgf_gguf_tensor(const struct wgf_gguf *g, int64_t i, struct wgf_gguf_tensor_info *out)
{
    WGF_ASSERT(i >= 0 && i < g->n_tensors);
    const struct gguf_tensor *t = &g->t[i];
    memset(out, 0, sizeof *out);
    out->name     = (const char *)g->map.data + t->name_off;
    out->name_len = t->name_len;
    out->dtype    = (enum wgf_dtype)t->dtype;
    out->n_dims   = t->n_dims;
    memcpy(out->shape, t->shape, sizeof out->shape);
    out->offset = t->offset;
    out->nbytes = tensor_nbytes(t);
    out->data   = g->map.data + g->data_off + t->offset;
}

int64_t wgf_gguf_find_tensor(const struct wgf_gguf *g, const char *name)
{
    /* binary search over the names (a model looks up ~12 tensors per layer) */
    size_t  n  = strlen(name);
    int64_t lo = 0, hi = g->n_tensors - 1;
    while (lo <= hi) {
        int64_t                   mid = lo + (hi - lo) / 2;
        const struct gguf_tensor *t   = &g->t[g->by_name[mid]];
        size_t                    m   = t->name_len < n ? t->name_len : n;
        int                       c   = memcmp(g->map.data + t->name_off, name, m);
        if (c == 0) c = (t->name_len > n) - (t->name_len < n);
        if (c == 0) return g->by_name[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* ---- writer ------------------------------------------------------------------------------- */

struct wtensor {
    char           name[WGF_TENSOR_NAME_MAX];
    enum wgf_dtype dtype;
    int            n_dims;
    int64_t        shape[WGF_TENSOR_MAX_DIMS];
    void          *data;
    uint64_t       nbytes;
};

struct wgf_gguf_writer {
    uint8_t        *kv;     /* serialized metadata                                         */
    size_t          kv_len, kv_cap;
    uint64_t        n_kv;
    struct wtensor *t;
    size_t          n_t, cap_t;
    bool            oom;
};

struct wgf_gguf_writer *wgf_gguf_writer_new(void) { return calloc(1, sizeof(struct wgf_gguf_writer)); }

void wgf_gguf_writer_free(struct wgf_gguf_writer *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->n_t; i++) free(w->t[i].data);
    free(w->t);
    free(w->kv);
    free(w);
}

static void put(struct wgf_gguf_writer *w, const void *p, size_t n)
{
    if (w->oom) return;
    if (w->kv_len + n > w->kv_cap) {
        size_t   c  = (w->kv_cap ? w->kv_cap * 2 : 4096) + n;
        uint8_t *nk = realloc(w->kv, c);
        if (!nk) {
            w->oom = true;
            return;
        }
        w->kv     = nk;
        w->kv_cap = c;
    }
    memcpy(w->kv + w->kv_len, p, n);
    w->kv_len += n;
}

static void put_u32(struct wgf_gguf_writer *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(w, b, 4);
}

static void put_u64(struct wgf_gguf_writer *w, uint64_t v)
{
    put_u32(w, (uint32_t)v);
    put_u32(w, (uint32_t)(v >> 32));
}

static void put_str(struct wgf_gguf_writer *w, const char *s)
{
    size_t n = strlen(s);
    put_u64(w, n);
    put(w, s, n);
}

static enum wgf_status key(struct wgf_gguf_writer *w, const char *k, uint32_t type)
{
    put_str(w, k);
    put_u32(w, type);
    w->n_kv++;
    return w->oom ? WGF_ERR_NOMEM : WGF_OK;
}

static enum wgf_status done(struct wgf_gguf_writer *w) { return w->oom ? WGF_ERR_NOMEM : WGF_OK; }

enum wgf_status wgf_gguf_writer_add_u32(struct wgf_gguf_writer *w, const char *k, uint32_t v)
{
    key(w, k, WGF_GGUF_UINT32);
    put_u32(w, v);
    return done(w);
}

enum wgf_status wgf_gguf_writer_add_i32(struct wgf_gguf_writer *w, const char *k, int32_t v)
{
    key(w, k, WGF_GGUF_INT32);
    put_u32(w, (uint32_t)v);
    return done(w);
}

enum wgf_status wgf_gguf_writer_add_f32(struct wgf_gguf_writer *w, const char *k, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    key(w, k, WGF_GGUF_FLOAT32);
    put_u32(w, u);
    return done(w);
}

enum wgf_status wgf_gguf_writer_add_bool(struct wgf_gguf_writer *w, const char *k, bool v)
{
    uint8_t b = v;
    key(w, k, WGF_GGUF_BOOL);
    put(w, &b, 1);
    return done(w);
}

enum wgf_status wgf_gguf_writer_add_str(struct wgf_gguf_writer *w, const char *k, const char *v)
{
    key(w, k, WGF_GGUF_STRING);
    put_str(w, v);
    return done(w);
}

enum wgf_status wgf_gguf_writer_add_arr_str(struct wgf_gguf_writer *w, const char *k, const char *const *v, size_t n)
{
    key(w, k, WGF_GGUF_ARRAY);
    put_u32(w, WGF_GGUF_STRING);
    put_u64(w, n);
    for (size_t i = 0; i < n; i++) put_str(w, v[i]);
    return done(w);
}

enum wgf_status wgf_gguf_writer_add_arr_i32(struct wgf_gguf_writer *w, const char *k, const int32_t *v, size_t n)
{
    key(w, k, WGF_GGUF_ARRAY);
    put_u32(w, WGF_GGUF_INT32);
    put_u64(w, n);
    for (size_t i = 0; i < n; i++) put_u32(w, (uint32_t)v[i]);
    return done(w);
}

enum wgf_status wgf_gguf_writer_add_arr_f32(struct wgf_gguf_writer *w, const char *k, const float *v, size_t n)
{
    key(w, k, WGF_GGUF_ARRAY);
    put_u32(w, WGF_GGUF_FLOAT32);
    put_u64(w, n);
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        put_u32(w, u);
    }
    return done(w);
}

/* The bytes of kv's value as stored after its u32 type (validated at parse: in bounds). */
static uint64_t kv_value_bytes(const struct wgf_gguf *g, int64_t kv, uint64_t *start)
{
    const struct gguf_kv *e = &g->kv[kv];
    uint64_t              v = e->key_off + e->key_len + 4; /* after key and type */
    *start                  = v;
    if (e->type == WGF_GGUF_STRING) return 8 + le(g->map.data + v, 8);
    if (e->type != WGF_GGUF_ARRAY) return (uint64_t)scalar_size(e->type);
    uint64_t n = le(g->map.data + v + 4, 8), end = v + 12;
    if (e->arr_type != WGF_GGUF_STRING) return 12 + n * (uint64_t)scalar_size(e->arr_type);
    for (uint64_t i = 0; i < n; i++) end += 8 + le(g->map.data + end, 8);
    return end - v;
}

enum wgf_status wgf_gguf_writer_copy_kv(struct wgf_gguf_writer *w, const struct wgf_gguf *g, int64_t kv)
{
    WGF_ASSERT(kv >= 0 && kv < g->n_kv);
    const struct gguf_kv *e = &g->kv[kv];
    uint64_t              start, n = kv_value_bytes(g, kv, &start);
    put_u64(w, e->key_len);
    put(w, g->map.data + e->key_off, e->key_len);
    put_u32(w, e->type);
    put(w, g->map.data + start, (size_t)n);
    w->n_kv++;
    return done(w);
}

enum wgf_status wgf_gguf_writer_add_tensor(struct wgf_gguf_writer *w, const char *name, enum wgf_dtype dtype, int n_dims,
                                           const int64_t *shape, const void *data, uint64_t nbytes)
{
    WGF_ASSERT(n_dims >= 1 && n_dims <= WGF_TENSOR_MAX_DIMS && strlen(name) < WGF_TENSOR_NAME_MAX);
    if (w->oom) return WGF_ERR_NOMEM;
    if (w->n_t == w->cap_t) {
        size_t          c  = w->cap_t ? w->cap_t * 2 : 64;
        struct wtensor *nt = realloc(w->t, c * sizeof *nt);
        if (!nt) return (w->oom = true), WGF_ERR_NOMEM;
        w->t     = nt;
        w->cap_t = c;
    }
    struct wtensor *t = &w->t[w->n_t];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->dtype  = dtype;
    t->n_dims = n_dims;
    memcpy(t->shape, shape, (size_t)n_dims * sizeof *shape);
    t->nbytes = nbytes;
    t->data   = malloc(nbytes ? (size_t)nbytes : 1);
    if (!t->data) return (w->oom = true), WGF_ERR_NOMEM;
    memcpy(t->data, data, (size_t)nbytes);
    w->n_t++;
    return WGF_OK;
}

static bool fwrite_all(FILE *f, const void *p, size_t n) { return n == 0 || fwrite(p, 1, n, f) == n; }

enum wgf_status wgf_gguf_writer_write(struct wgf_gguf_writer *w, const char *path, struct wgf_err *err)
{
    if (w->oom) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory while building GGUF", path);
    const uint64_t align = 32;
    /* header + kv, then tensor infos (serialized into a second writer buffer) */
    struct wgf_gguf_writer hdr = {0};
    put_u32(&hdr, GGUF_MAGIC_LE);
    put_u32(&hdr, 3);
    put_u64(&hdr, w->n_t);
    put_u64(&hdr, w->n_kv);
    put(&hdr, w->kv, w->kv_len);
    uint64_t off = 0;
    for (size_t i = 0; i < w->n_t; i++) {
        const struct wtensor *t = &w->t[i];
        put_str(&hdr, t->name);
        put_u32(&hdr, (uint32_t)t->n_dims);
        for (int d = t->n_dims - 1; d >= 0; d--) put_u64(&hdr, (uint64_t)t->shape[d]); /* ne[0] = cols */
        put_u32(&hdr, (uint32_t)dtype_to_ggml(t->dtype));
        put_u64(&hdr, off);
        off = (off + t->nbytes + align - 1) / align * align;
    }
    if (hdr.oom) {
        free(hdr.kv);
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory while building GGUF", path);
    }
    static const uint8_t zeros[64] = {0};
    struct wgf_out       o; /* util/file.h: temp + rename, or through a device; never over one */
    enum wgf_status      st = wgf_out_open(&o, path, 0, err);
    if (st) {
        free(hdr.kv);
        return st;
    }
    bool ok = fwrite_all(o.f, hdr.kv, hdr.kv_len);
    ok      = ok && fwrite_all(o.f, zeros, (size_t)((align - hdr.kv_len % align) % align));
    for (size_t i = 0; ok && i < w->n_t; i++) {
        ok = fwrite_all(o.f, w->t[i].data, (size_t)w->t[i].nbytes);
        ok = ok && fwrite_all(o.f, zeros, (size_t)((align - w->t[i].nbytes % align) % align));
    }
    free(hdr.kv);
    if (!ok) {
        wgf_out_abort(&o);
        return wgf_fail(err, WGF_ERR_IO, "%s: write failed", path);
    }
    return wgf_out_commit(&o, err);
}
