/* wgfuse — safetensors reader.
 *
 * Layout: u64 little-endian N, then N bytes of UTF-8 JSON header, then the data section.
 * The header maps tensor name -> {dtype, shape, data_offsets: [begin, end)} (offsets
 * relative to the data section), plus an optional "__metadata__" string->string map.
 * Validated here (RELIABILITY.md 17-21): file shorter than 8 bytes, N > 100 MB, N larger
 * than the file, header not UTF-8 / not an object / duplicate names, non-string metadata,
 * unknown dtype, negative or >= 2^48 dims, overflowing shapes, partial-byte tensors,
 * END < BEGIN, size != shape, overlaps, holes and trailing bytes. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "llm/model_files.h"

#define ST_MAX_HEADER (100u * 1000u * 1000u) /* the safetensors spec's own 100 MB limit */
#define ST_MAX_DIM    (1ll << 48)

/* Element size in bits of every dtype the safetensors spec names; 0 = unknown. */
static int st_dtype_bits(const char *s, bool *supported, enum wgf_dtype *dt)
{
    static const struct {
        const char *name;
        int         bits;
        int         wgf; /* -1: known but not loadable */
    } tab[] = {
        {"F32", 32, WGF_DT_F32}, {"F16", 16, WGF_DT_F16}, {"BF16", 16, WGF_DT_BF16},
        {"F64", 64, -1},         {"I64", 64, -1},         {"U64", 64, -1},
        {"I32", 32, -1},         {"U32", 32, -1},         {"I16", 16, -1},
        {"U16", 16, -1},         {"I8", 8, -1},           {"U8", 8, -1},
        {"BOOL", 8, -1},         {"F8_E4M3", 8, -1},      {"F8_E5M2", 8, -1},
        {"F8_E8M0", 8, -1},      {"F4", 4, -1},           {"F6_E2M3", 6, -1},
        {"F6_E3M2", 6, -1},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strcmp(s, tab[i].name) == 0) {
            *supported = tab[i].wgf >= 0;
            *dt        = tab[i].wgf >= 0 ? (enum wgf_dtype)tab[i].wgf : WGF_DT_F32;
            return tab[i].bits;
        }
    return 0;
}

/* Strict UTF-8 (no overlongs, no surrogates, <= U+10FFFF). Returns the offset of the
 * first bad byte, or len when valid. */
static size_t utf8_check(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        int      n;
        uint32_t cp, min;
        if ((c & 0xe0) == 0xc0) n = 1, cp = c & 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0) n = 2, cp = c & 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0) n = 3, cp = c & 0x07, min = 0x10000;
        else return i;
        if (len - i <= (size_t)n) return i;
        for (int k = 1; k <= n; k++) {
            if ((s[i + (size_t)k] & 0xc0) != 0x80) return i;
            cp = (cp << 6) | (s[i + (size_t)k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
        i += (size_t)n + 1;
    }
    return len;
}

static int cmp_by_begin(const void *a, const void *b)
{
    const struct wgf__st_tensor *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end; /* zero-size first at equal begin */
}

static int cmp_by_name(const void *a, const void *b)
{
    return strcmp(((const struct wgf__st_tensor *)a)->name, ((const struct wgf__st_tensor *)b)->name);
}

/* Read a JSON integer in [lo, hi]. Real numbers (1e309, 3.5) are rejected. */
static bool json_int_in(const json_t *v, json_int_t lo, json_int_t hi, json_int_t *out)
{
    if (!json_is_integer(v)) return false;
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi) return false;
    *out = x;
    return true;
}

static enum wgf_status parse_tensor(const char *path, const char *name, const json_t *o,
                                    uint64_t data_size, struct wgf__st_tensor *t, struct wgf_err *err)
{
    if (!json_is_object(o)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': entry is not an object", path, name);
    const json_t *jd = json_object_get(o, "dtype"), *js = json_object_get(o, "shape"),
                 *jo = json_object_get(o, "data_offsets");
    if (!json_is_string(jd)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': missing or non-string 'dtype'", path, name);
    const char *ds   = json_string_value(jd);
    int         bits = st_dtype_bits(ds, &t->supported, &t->dtype);
    if (bits == 0) return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': unknown dtype '%.16s'", path, name, ds);
    snprintf(t->dtype_str, sizeof t->dtype_str, "%s", ds);
    if (!json_is_array(js)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': missing or non-array 'shape'", path, name);
    size_t rank = json_array_size(js);
    if (rank > WGF_TENSOR_MAX_DIMS)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: tensor '%s': rank %zu > %d not supported", path, name, rank, WGF_TENSOR_MAX_DIMS);
    t->n_dims     = (int)rank;
    uint64_t nel  = 1;
    for (int i = 0; i < WGF_TENSOR_MAX_DIMS; i++) t->shape[i] = 1;
    for (size_t i = 0; i < rank; i++) {
        json_int_t d;
        if (!json_int_in(json_array_get(js, i), 0, ST_MAX_DIM - 1, &d))
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': shape[%zu] is not an integer in [0, 2^48)", path, name, i);
        t->shape[i] = (int64_t)d;
        if (!wgf_mul_u64(nel, (uint64_t)d, &nel))
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': shape product overflows 64 bits", path, name);
    }
    uint64_t nbits;
    if (!wgf_mul_u64(nel, (uint64_t)bits, &nbits))
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': byte size overflows 64 bits", path, name);
    if (nbits % 8) return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': %s tensor of %llu elements is not a whole number of bytes", path, name, ds, (unsigned long long)nel);
    if (!json_is_array(jo) || json_array_size(jo) != 2)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': 'data_offsets' is not a [begin, end] array", path, name);
    json_int_t b, e;
    if (!json_int_in(json_array_get(jo, 0), 0, INT64_MAX, &b) || !json_int_in(json_array_get(jo, 1), 0, INT64_MAX, &e))
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': data_offsets are not non-negative integers", path, name);
    if (e < b) return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': data_offsets end %lld < begin %lld", path, name, (long long)e, (long long)b);
    if ((uint64_t)e > data_size)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': data_offsets end %lld past the end of the data (%llu bytes; truncated file?)", path, name, (long long)e, (unsigned long long)data_size);
    if ((uint64_t)(e - b) != nbits / 8)
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': data_offsets span %lld bytes but dtype %s x shape needs %llu", path, name, (long long)(e - b), ds, (unsigned long long)(nbits / 8));
    t->begin = (uint64_t)b;
    t->end   = (uint64_t)e;
    return WGF_OK;
}

void wgf__st_close(struct wgf__st_file *f)
{
    if (!f) return;
    if (f->borrowed) f->map.data = NULL; /* not ours to unmap */
    wgf_mapfile_close(&f->map);
    free(f->tensors);
    free(f->name_pool);
    free(f->path);
    memset(f, 0, sizeof *f);
}

static enum wgf_status st_parse(struct wgf__st_file *f, struct wgf_err *err)
{
    const char    *path = f->path;
    const uint8_t *p    = f->map.data;
    uint64_t       size = f->map.size;
    if (size < 8) return wgf_fail(err, WGF_ERR_FORMAT, "%s: file is %llu bytes, shorter than the 8-byte header length", path, (unsigned long long)size);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | p[i];
    if (n > UINT64_MAX - 8) return wgf_fail(err, WGF_ERR_FORMAT, "%s: header length %llu overflows the file offset", path, (unsigned long long)n);
    if (n > ST_MAX_HEADER) return wgf_fail(err, WGF_ERR_FORMAT, "%s: header length %llu exceeds the 100 MB limit", path, (unsigned long long)n);
    if (n > size - 8) return wgf_fail(err, WGF_ERR_FORMAT, "%s: header length %llu larger than the file (%llu bytes; truncated?)", path, (unsigned long long)n, (unsigned long long)size);
    if (n < 2 || p[8] != '{') return wgf_fail(err, WGF_ERR_FORMAT, "%s: header does not start with '{'", path);
    size_t bad = utf8_check(p + 8, (size_t)n);
    if (bad != n) return wgf_fail(err, WGF_ERR_FORMAT, "%s: header is not valid UTF-8 (byte %zu)", path, bad);
    f->data_off        = 8 + n;
    uint64_t data_size = size - f->data_off;

    size_t bad_at;
    if (!wgf__json_bounded((const char *)p + 8, (size_t)n, &bad_at))
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: header JSON near byte %zu: more array/object members than the header size allows", path, bad_at);
    json_error_t je;
    json_t      *root = json_loadb((const char *)p + 8, (size_t)n, JSON_REJECT_DUPLICATES, &je);
    if (!root) return wgf_fail(err, WGF_ERR_FORMAT, "%s: header JSON: %s (line %d col %d)", path, je.text, je.line, je.column);
    enum wgf_status st = WGF_OK;
    if (!json_is_object(root)) {
        st = wgf_fail(err, WGF_ERR_FORMAT, "%s: header is not a JSON object", path);
        goto out;
    }
    size_t      count = json_object_size(root), pool = 0;
    const char *key;
    json_t     *val;
    json_object_foreach(root, key, val)
    {
        if (strcmp(key, "__metadata__") == 0) {
            if (!json_is_object(val)) {
                st = wgf_fail(err, WGF_ERR_FORMAT, "%s: '__metadata__' is not an object", path);
                goto out;
            }
            const char *mk;
            json_t     *mv;
            json_object_foreach(val, mk, mv) if (!json_is_string(mv))
            {
                st = wgf_fail(err, WGF_ERR_FORMAT, "%s: '__metadata__' value of '%.64s' is not a string", path, mk);
                goto out;
            }
            count--;
            continue;
        }
        /* validate before allocating: a valid entry takes >= ~49 header bytes, so the
         * table below (88 bytes per entry) stays under 2x the header */
        struct wgf__st_tensor tmp;
        if ((st = parse_tensor(path, key, val, data_size, &tmp, err)) != WGF_OK) goto out;
        pool += strlen(key) + 1; /* bounded by the header size */
    }
    f->tensors   = calloc(count ? count : 1, sizeof *f->tensors);
    f->name_pool = malloc(pool ? pool : 1);
    if (!f->tensors || !f->name_pool) {
        st = wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory for %zu tensor entries", path, count);
        goto out;
    }
    size_t i = 0, po = 0;
    json_object_foreach(root, key, val)
    {
        if (strcmp(key, "__metadata__") == 0) continue;
        struct wgf__st_tensor *t = &f->tensors[i];
        size_t                 kl = strlen(key) + 1;
        t->name                  = memcpy(f->name_pool + po, key, kl);
        po += kl;
        if ((st = parse_tensor(path, key, val, data_size, t, err)) != WGF_OK) goto out;
        t->data = p + f->data_off + t->begin;
        i++;
    }
    f->n_tensors = (int64_t)count;
    /* The data section must be exactly covered: no overlap, no hole, no trailing bytes. */
    qsort(f->tensors, count, sizeof *f->tensors, cmp_by_begin);
    uint64_t pos = 0;
    for (i = 0; i < count; i++) {
        struct wgf__st_tensor *t = &f->tensors[i];
        if (t->begin < pos) {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': bytes [%llu, %llu) overlap the previous tensor (ends at %llu)", path, t->name, (unsigned long long)t->begin, (unsigned long long)t->end, (unsigned long long)pos);
            goto out;
        }
        if (t->begin > pos) {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': hole of %llu bytes before it in the data section", path, t->name, (unsigned long long)(t->begin - pos));
            goto out;
        }
        pos = t->end;
    }
    if (pos != data_size) {
        st = wgf_fail(err, WGF_ERR_FORMAT, "%s: %llu trailing bytes after the last tensor", path, (unsigned long long)(data_size - pos));
        goto out;
    }
    qsort(f->tensors, count, sizeof *f->tensors, cmp_by_name);
out:
    json_decref(root);
    return st;
}

enum wgf_status wgf__st_open(const char *path, struct wgf__st_file *f, struct wgf_err *err)
{
    memset(f, 0, sizeof *f);
    f->path = strdup(path);
    if (!f->path) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", path);
    enum wgf_status st = wgf_mapfile_open(path, &f->map, err);
    if (st == WGF_OK) st = st_parse(f, err);
    if (st != WGF_OK) wgf__st_close(f);
    return st;
}

enum wgf_status wgf__st_open_mem(const void *data, size_t size, const char *name, struct wgf__st_file *f, struct wgf_err *err)
{
    memset(f, 0, sizeof *f);
    f->path = strdup(name);
    if (!f->path) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", name);
    f->borrowed = true;
    f->map.data = data;
    f->map.size = size;
    enum wgf_status st = st_parse(f, err);
    if (st != WGF_OK) wgf__st_close(f);
    return st;
}

const struct wgf__st_tensor *wgf__st_find(const struct wgf__st_file *f, const char *name)
{
    struct wgf__st_tensor key = {.name = (char *)name};
    if (!f->n_tensors) return NULL;
    return bsearch(&key, f->tensors, (size_t)f->n_tensors, sizeof key, cmp_by_name);
}
