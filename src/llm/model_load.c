/* wgfuse — model loading: HF directory or GGUF file -> config + weight views.
 *
 * The two formats meet in one table of roles (the per-arch tensor list below); each role
 * is looked up by its name in the file, checked against the shape the config implies,
 * and turned into a view (see llm.h for what is copied and why). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "llm/gguf.h"
#include "llm/model_files.h"
#include "util/file.h"

/* config.json is a few KB and an index a few hundred KB in real models; past these a file
 * is refused before it is read */
#define HF_CONFIG_MAX (16ull << 20)
#define HF_INDEX_MAX  (64ull << 20)

struct wgf__llm_model_priv {
    struct wgf__st_file *shards; /* HF: one per safetensors file                          */
    int                  n_shards;
    struct wgf_gguf     *gguf;   /* GGUF: the open file                                   */
    void               **owned;  /* buffers made at load (f32 norms, permuted, realigned)  */
    size_t               n_owned, cap_owned;
    int                  mat_dtype; /* dtype of the matrices as stored; -1 none yet, -2 mixed */
};

/* A tensor as found in a file, before conversion. */
struct raw {
    const char    *file; /* path of the file holding it, for messages                    */
    const char    *name;
    enum wgf_dtype dtype;
    int            n_dims;
    int64_t        shape[WGF_TENSOR_MAX_DIMS];
    const void    *data;
    uint64_t       nbytes;
    const struct wgf_mapfile *map; /* the mapping `data` points into                     */
};

static void *own(struct wgf_llm_model *m, size_t n)
{
    struct wgf__llm_model_priv *p = m->priv;
    if (p->n_owned == p->cap_owned) {
        size_t c  = p->cap_owned ? p->cap_owned * 2 : 64;
        void **no = realloc(p->owned, c * sizeof *no);
        if (!no) return NULL;
        p->owned     = no;
        p->cap_owned = c;
    }
    void *b = malloc(n ? n : 1);
    if (b) p->owned[p->n_owned++] = b;
    return b;
}

struct wgf_llm_model *wgf__llm_model_new(void)
{
    struct wgf_llm_model *m = calloc(1, sizeof *m);
    if (m && !(m->priv = calloc(1, sizeof *m->priv))) {
        free(m);
        return NULL;
    }
    if (m) m->priv->mat_dtype = -1;
    return m;
}

void *wgf__llm_model_own(struct wgf_llm_model *m, size_t n) { return own(m, n); }

void wgf_llm_model_free(struct wgf_llm_model *m)
{
    if (!m) return;
    struct wgf__llm_model_priv *p = m->priv;
    if (p) {
        for (int i = 0; i < p->n_shards; i++) wgf__st_close(&p->shards[i]);
        free(p->shards);
        wgf_gguf_close(p->gguf);
        for (size_t i = 0; i < p->n_owned; i++) free(p->owned[i]);
        free(p->owned);
        free(p);
    }
    free(m->weights.layers);
    free(m);
}

const struct wgf_gguf *wgf_llm_model_gguf(const struct wgf_llm_model *m) { return m && m->priv ? m->priv->gguf : NULL; }

/* ---- lookup ------------------------------------------------------------------------------- */

static bool find_raw(struct wgf_llm_model *m, const char *name, struct raw *r)
{
    struct wgf__llm_model_priv *p = m->priv;
    memset(r, 0, sizeof *r);
    if (p->gguf) {
        int64_t i = wgf_gguf_find_tensor(p->gguf, name);
        if (i < 0) return false;
        struct wgf_gguf_tensor_info ti;
        wgf_gguf_tensor(p->gguf, i, &ti);
        r->file   = wgf_gguf_path(p->gguf);
        r->dtype  = ti.dtype;
        r->n_dims = ti.n_dims;
        memcpy(r->shape, ti.shape, sizeof r->shape);
        r->data   = ti.data;
        r->nbytes = ti.nbytes;
        r->map    = wgf__gguf_mapfile(p->gguf);
    } else {
        const struct wgf__st_tensor *t = NULL;
        int                          s = 0;
        for (; s < p->n_shards && !t; s++) t = wgf__st_find(&p->shards[s], name);
        if (!t) return false;
        r->file = p->shards[s - 1].path;
        if (!t->supported) {
            r->dtype  = (enum wgf_dtype)-1;
            r->n_dims = -1;
            r->name   = t->dtype_str; /* smuggle the dtype string to the caller's message */
            return true;
        }
        r->dtype  = t->dtype;
        r->n_dims = t->n_dims;
        memcpy(r->shape, t->shape, sizeof r->shape);
        r->data   = t->data;
        r->nbytes = t->end - t->begin;
        r->map    = &p->shards[s - 1].map;
    }
    r->name = name;
    return true;
}

static const char *model_file(const struct wgf_llm_model *m)
{
    if (m->priv->gguf) return wgf_gguf_path(m->priv->gguf);
    return m->priv->n_shards == 1 ? m->priv->shards[0].path : m->path;
}

static void fmt_shape(char *buf, size_t cap, int n, const int64_t *s)
{
    size_t o = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < n && o < cap; i++) o += (size_t)snprintf(buf + o, cap - o, "%s%lld", i ? ", " : "", (long long)s[i]);
    if (o < cap) snprintf(buf + o, cap - o, "]");
}

enum conv {
    CONV_VIEW,    /* matrix: view into the file (copy only when misaligned or quantized)  */
    CONV_F32,     /* 1-D: always an owned f32 copy                                         */
    CONV_PERMUTE, /* GGUF Llama q/k: undo llama.cpp's rotary row permutation               */
};

/* Find `name`, check it is (rows, cols) — cols == 0 means 1-D of `rows` — and make the
 * view in *out. Missing: WGF_ERR_FORMAT unless optional (then out->data stays NULL). */
static enum wgf_status get_tensor(struct wgf_llm_model *m, const char *name, int64_t rows, int64_t cols, enum conv conv,
                                  bool optional, struct wgf_tensor *out, struct wgf_err *err)
{
    memset(out, 0, sizeof *out);
    struct raw r;
    if (!find_raw(m, name, &r)) {
        if (optional) return WGF_OK;
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: missing tensor '%s'", model_file(m), name);
    }
    if (r.n_dims < 0)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: tensor '%s': dtype %s not supported (F32, F16, BF16 are)", r.file, name, r.name);
    int     want_dims = cols ? 2 : 1;
    int64_t want[2]   = {rows, cols};
    if (r.n_dims != want_dims || r.shape[0] != rows || (cols && r.shape[1] != cols)) {
        char got[96], exp[64];
        fmt_shape(got, sizeof got, r.n_dims, r.shape);
        fmt_shape(exp, sizeof exp, want_dims, want);
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': shape %s does not match the config (expected %s)", r.file, name, got, exp);
    }
    snprintf(out->name, sizeof out->name, "%s", name);
    if (cols) { /* matrices decide the model's source dtype ("mixed" when they differ) */
        int *md = &m->priv->mat_dtype;
        *md     = *md == -1 ? (int)r.dtype : *md == (int)r.dtype ? *md : -2;
    }
    out->n_dims = want_dims;
    for (int i = 0; i < WGF_TENSOR_MAX_DIMS; i++) out->shape[i] = i < want_dims ? want[i] : 1;
    uint64_t nel = (uint64_t)rows * (uint64_t)(cols ? cols : 1); /* both <= 2^24 (config limits) */
    int      esz = wgf_dtype_block_bytes(r.dtype) / wgf_dtype_block_elems(r.dtype);
    bool     quant = wgf_dtype_block_elems(r.dtype) > 1;
    /* blocks are read bytewise (quant.c), so any address will do for them */
    bool aligned = quant || (esz > 0 && (uintptr_t)r.data % (uintptr_t)esz == 0);
    if (conv == CONV_VIEW && aligned) {
        out->dtype  = r.dtype;
        out->data   = r.data;
        out->nbytes = r.nbytes;
        return WGF_OK;
    }
    size_t ncols = (size_t)(cols ? cols : rows), nrows = cols ? (size_t)rows : 1;
    /* Copies: 1-D -> f32; unaligned or permuted -> same dtype (whole blocks), aligned. */
    enum wgf_dtype od  = conv == CONV_F32 ? WGF_DT_F32 : r.dtype;
    uint64_t       inb = 0, onb = 0;
    if (!wgf__dtype_nbytes(r.dtype, nel, (uint64_t)ncols, &inb) || inb != r.nbytes || !wgf__dtype_nbytes(od, nel, (uint64_t)ncols, &onb))
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s': %llu bytes do not hold %llu %s elements", r.file, name,
                        (unsigned long long)r.nbytes, (unsigned long long)nel, wgf_dtype_str(r.dtype));
    uint8_t *buf = own(m, (size_t)onb);
    if (!buf) return wgf_fail(err, WGF_ERR_NOMEM, "%s: tensor '%s': out of memory for %llu bytes", r.file, name, (unsigned long long)onb);
    uint64_t irb = r.nbytes / nrows, orb = onb / nrows; /* row bytes in and out */
    for (size_t row = 0; row < nrows; row++) {
        size_t         src_row = conv == CONV_PERMUTE ? (size_t)wgf__llama_perm_row((int64_t)row, m->cfg.head_dim) : row;
        const uint8_t *src     = (const uint8_t *)r.data + src_row * irb;
        if (od == r.dtype) memcpy(buf + row * orb, src, (size_t)orb);
        else wgf__dtype_decode(r.dtype, src, ncols, (float *)(void *)(buf + row * orb));
    }
    /* The source pages were only read for this copy: drop them from the resident set so
     * peak RSS stays near the file size (measured: GGUF f16 Llama 1.10x -> see RESULTS.md). */
    if (r.map) wgf_mapfile_release(r.map, (uint64_t)((const uint8_t *)r.data - r.map->data), r.nbytes);
    out->dtype  = od;
    out->data   = buf;
    out->nbytes = onb;
    return WGF_OK;
}

struct wgf_tensor wgf__tensor_slice_rows(const struct wgf_tensor *t, int64_t r0, int64_t n, const char *tag)
{
    struct wgf_tensor s = *t;
    uint64_t          rb = t->nbytes / (uint64_t)t->shape[0];
    s.shape[0]           = n;
    s.data               = (const uint8_t *)t->data + (uint64_t)r0 * rb;
    s.nbytes             = (uint64_t)n * rb;
    char nm[WGF_TENSOR_NAME_MAX];
    snprintf(nm, sizeof nm, "%.80s[%s]", t->name, tag);
    memcpy(s.name, nm, sizeof nm);
    return s;
}

/* ---- weights, one table for both formats -------------------------------------------------- */

/* Digits a layer number may have: far above any layer count the configs allow (4096). */
#define LAYER_DIGITS_MAX 7

/* The layer index of a per-layer tensor name ("blk.N." / "model.layers.N."): -1 when the name
 * has no such prefix, LAYER_NOT_CANONICAL when it has one but N is not the decimal the loader
 * prints to look a layer up ("blk.%d."): digits only, no sign, no leading zero but "0"
 * itself, at most LAYER_DIGITS_MAX digits, then a '.'. No layer reads "blk.00.", "blk.-1."
 * or "blk.12345678.", so those passed the layer-count check unseen. */
#define LAYER_NOT_CANONICAL (-2)
static long layer_of(const char *name, size_t len, bool gguf)
{
    const char *pre = gguf ? "blk." : "model.layers.";
    size_t      pl  = strlen(pre), i = pl;
    if (len < pl || memcmp(name, pre, pl) != 0) return -1;
    long v = 0;
    for (; i < len && i <= pl + LAYER_DIGITS_MAX && name[i] >= '0' && name[i] <= '9'; i++) v = v * 10 + (name[i] - '0');
    size_t digits = i - pl;
    if (digits == 0 || digits > LAYER_DIGITS_MAX || (digits > 1 && name[pl] == '0') || i == len || name[i] != '.')
        return LAYER_NOT_CANONICAL;
    return v;
}

/* The refusal of a name layer_of() finds not canonical, naming the file and the tensor. */
static enum wgf_status refuse_layer_name(const char *file, const char *name, size_t nlen, bool gguf, struct wgf_err *err)
{
    return wgf_fail(err, WGF_ERR_FORMAT,
                    "%s: tensor '%.*s': the layer number after '%s' is not a plain decimal (digits only, no sign or leading "
                    "zero, at most %d digits), so no layer would read it",
                    file, (int)(nlen > 96 ? 96 : nlen), name, gguf ? "blk." : "model.layers.", LAYER_DIGITS_MAX);
}

/* A file holding layers past the config's count would silently run fewer layers than it was
 * trained with (config.json saying 1 layer over 2 layers of weights ran 1 layer, no
 * word): refused, naming the first such tensor and the config key. So is a per-layer name
 * whose layer number is not canonical (layer_of). */
static enum wgf_status check_extra_layers(const struct wgf_llm_model *m, struct wgf_err *err)
{
    const struct wgf__llm_model_priv *p    = m->priv;
    const bool                        gguf = p->gguf != NULL;
    const char *file = NULL, *name = NULL;
    size_t      nlen = 0;
    long        top  = -1;
    if (gguf) {
        for (int64_t i = 0; i < wgf_gguf_n_tensors(p->gguf); i++) {
            struct wgf_gguf_tensor_info ti;
            wgf_gguf_tensor(p->gguf, i, &ti);
            long l = layer_of(ti.name, ti.name_len, true);
            if (l == LAYER_NOT_CANONICAL) return refuse_layer_name(wgf_gguf_path(p->gguf), ti.name, ti.name_len, true, err);
            if (l > top) top = l, name = ti.name, nlen = ti.name_len, file = wgf_gguf_path(p->gguf);
        }
    } else {
        for (int s = 0; s < p->n_shards; s++)
            for (int64_t i = 0; i < p->shards[s].n_tensors; i++) {
                const char *tn = p->shards[s].tensors[i].name;
                long        l  = layer_of(tn, strlen(tn), false);
                if (l == LAYER_NOT_CANONICAL) return refuse_layer_name(p->shards[s].path, tn, strlen(tn), false, err);
                if (l > top) top = l, name = tn, nlen = strlen(tn), file = p->shards[s].path;
            }
    }
    if (top < m->cfg.n_layers) return WGF_OK;
    char key[sizeof m->path + 64];
    if (gguf) snprintf(key, sizeof key, "%s.block_count", wgf_arch_str(m->cfg.arch));
    else snprintf(key, sizeof key, "num_hidden_layers in %s/config.json", m->path);
    return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%.*s' belongs to layer %ld, but %s is %d: the weights hold more layers than the config",
                    file, (int)(nlen > 96 ? 96 : nlen), name, top, key, m->cfg.n_layers);
}

static enum wgf_status load_weights(struct wgf_llm_model *m, struct wgf_err *err)
{
    const struct wgf_llm_config *c    = &m->cfg;
    const bool                   gguf = m->format == WGF_LLM_FORMAT_GGUF;
    struct wgf_llm_weights      *w    = &m->weights;
    const int64_t                D = c->dim, H = c->hidden_dim, V = c->vocab_size;
    const int64_t                Q = (int64_t)c->n_heads * c->head_dim, KV = (int64_t)c->n_kv_heads * c->head_dim;
    enum wgf_status              st;
    char                         nm[128];

    /* A block_count beyond the file's layers fails before the layer table is allocated:
     * 4096 layers x ~450 B from a 30 KB file broke the "2x input + 1 MiB" bound (fuzzing). */
    struct raw last;
    snprintf(nm, sizeof nm, gguf ? "blk.%d.attn_norm.weight" : "model.layers.%d.input_layernorm.weight", c->n_layers - 1);
    if (!find_raw(m, nm, &last)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: missing tensor '%s'", model_file(m), nm);
    w->layers = calloc((size_t)c->n_layers, sizeof *w->layers);
    if (!w->layers) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory for %d layers", m->path, c->n_layers);
    if ((st = get_tensor(m, gguf ? "token_embd.weight" : "model.embed_tokens.weight", V, D, CONV_VIEW, false, &w->tok_embd, err)) ||
        (st = get_tensor(m, gguf ? "output_norm.weight" : "model.norm.weight", D, 0, CONV_F32, false, &w->out_norm, err)) ||
        (st = get_tensor(m, gguf ? "output.weight" : "lm_head.weight", V, D, CONV_VIEW, true, &w->lm_head, err)))
        return st;
    if (gguf) m->cfg.tie_embeddings = w->lm_head.data == NULL; /* GGUF omits output.weight when tied */
    if (m->cfg.tie_embeddings) w->lm_head = w->tok_embd;
    else if (!w->lm_head.data) return wgf_fail(err, WGF_ERR_FORMAT, "%s: missing tensor 'lm_head.weight' (tie_word_embeddings is false)", model_file(m));

    const enum conv qk = (gguf && c->arch == WGF_ARCH_LLAMA) ? CONV_PERMUTE : CONV_VIEW;
#define T(gname, hname, rows, cols, conv, opt, dst)                                                            \
    do {                                                                                                       \
        if (gguf) snprintf(nm, sizeof nm, "blk.%d." gname, l);                                               \
        else snprintf(nm, sizeof nm, "model.layers.%d." hname, l);                                           \
        if ((st = get_tensor(m, nm, rows, cols, conv, opt, dst, err))) return st;                           \
    } while (0)
    for (int l = 0; l < c->n_layers; l++) {
        struct wgf_layer_weights *L = &w->layers[l];
        T("attn_norm.weight", "input_layernorm.weight", D, 0, CONV_F32, false, &L->attn_norm);
        T("ffn_norm.weight", "post_attention_layernorm.weight", D, 0, CONV_F32, false, &L->ffn_norm);
        T("attn_output.weight", "self_attn.o_proj.weight", D, Q, CONV_VIEW, false, &L->wo);
        T("ffn_down.weight", "mlp.down_proj.weight", D, H, CONV_VIEW, false, &L->w_down);
        if (c->arch == WGF_ARCH_PHI3) {
            struct wgf_tensor qkv, gu;
            T("attn_qkv.weight", "self_attn.qkv_proj.weight", Q + 2 * KV, D, CONV_VIEW, false, &qkv);
            T("ffn_up.weight", "mlp.gate_up_proj.weight", 2 * H, D, CONV_VIEW, false, &gu);
            L->wq     = wgf__tensor_slice_rows(&qkv, 0, Q, "q");
            L->wk     = wgf__tensor_slice_rows(&qkv, Q, KV, "k");
            L->wv     = wgf__tensor_slice_rows(&qkv, Q + KV, KV, "v");
            L->w_gate = wgf__tensor_slice_rows(&gu, 0, H, "gate"); /* Phi3MLP: gate is the first half */
            L->w_up   = wgf__tensor_slice_rows(&gu, H, H, "up");
            continue;
        }
        T("attn_q.weight", "self_attn.q_proj.weight", Q, D, qk, false, &L->wq);
        T("attn_k.weight", "self_attn.k_proj.weight", KV, D, qk, false, &L->wk);
        T("attn_v.weight", "self_attn.v_proj.weight", KV, D, CONV_VIEW, false, &L->wv);
        T("ffn_gate.weight", "mlp.gate_proj.weight", H, D, CONV_VIEW, false, &L->w_gate);
        T("ffn_up.weight", "mlp.up_proj.weight", H, D, CONV_VIEW, false, &L->w_up);
        if (c->attn_bias) {
            T("attn_q.bias", "self_attn.q_proj.bias", Q, 0, CONV_F32, false, &L->bq);
            T("attn_k.bias", "self_attn.k_proj.bias", KV, 0, CONV_F32, false, &L->bk);
            T("attn_v.bias", "self_attn.v_proj.bias", KV, 0, CONV_F32, false, &L->bv);
        }
    }
#undef T
    if ((st = check_extra_layers(m, err))) return st;
    /* source dtype: the matrices' common dtype as stored in the file */
    int md = m->priv->mat_dtype;
    snprintf(m->cfg.source_dtype, sizeof m->cfg.source_dtype, "%s", md >= 0 ? wgf_dtype_str((enum wgf_dtype)md) : "mixed");
    return WGF_OK;
}

/* ---- HF directory ------------------------------------------------------------------------- */

static enum wgf_status join(char *buf, size_t cap, const char *dir, const char *file, struct wgf_err *err)
{
    int n = snprintf(buf, cap, "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= cap) return wgf_fail(err, WGF_ERR_ARG, "%s: path too long", dir);
    return WGF_OK;
}

static enum wgf_status add_shard(struct wgf_llm_model *m, const char *path, struct wgf_err *err)
{
    struct wgf__llm_model_priv *p  = m->priv;
    struct wgf__st_file        *ns = realloc(p->shards, (size_t)(p->n_shards + 1) * sizeof *ns);
    if (!ns) return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", path);
    p->shards          = ns;
    enum wgf_status st = wgf__st_open(path, &p->shards[p->n_shards], err);
    if (st == WGF_OK) p->n_shards++;
    return st;
}

static enum wgf_status load_index(struct wgf_llm_model *m, const char *ipath, struct wgf_err *err)
{
    char           *text;
    size_t          len;
    enum wgf_status st = wgf_file_read(ipath, HF_INDEX_MAX, "a safetensors index", &text, &len, err);
    if (st) return st;
    size_t bad_at;
    if (!wgf__json_bounded(text, len, &bad_at)) {
        free(text);
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: JSON near byte %zu: more array/object members than the file size allows", ipath, bad_at);
    }
    json_error_t je;
    json_t      *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!root) return wgf_fail(err, WGF_ERR_FORMAT, "%s: not valid JSON: %s (line %d col %d)", ipath, je.text, je.line, je.column);
    const json_t *wm = json_object_get(root, "weight_map");
    if (!json_is_object(wm) || json_object_size(wm) == 0) {
        json_decref(root);
        return wgf_fail(err, WGF_ERR_FORMAT, "%s: missing or empty object 'weight_map'", ipath);
    }
    /* the distinct shard files named by weight_map, in order of first appearance */
    const char *key;
    json_t     *val;
    json_object_foreach((json_t *)wm, key, val)
    {
        const char *f = json_is_string(val) ? json_string_value(val) : NULL;
        if (!f || !*f || f[0] == '.' || strchr(f, '/') || strlen(f) > 255) {
            st = wgf_fail(err, WGF_ERR_FORMAT, "%s: weight_map['%.64s'] is not a plain file name in the directory", ipath, key);
            break;
        }
        bool seen = false;
        for (int i = 0; i < m->priv->n_shards && !seen; i++) {
            const char *b = strrchr(m->priv->shards[i].path, '/');
            seen          = strcmp(b ? b + 1 : m->priv->shards[i].path, f) == 0;
        }
        if (seen) continue;
        char sp[4096 + 256];
        if ((st = join(sp, sizeof sp, m->path, f, err)) || (st = add_shard(m, sp, err))) break;
    }
    /* every mapped tensor must be in its shard */
    if (st == WGF_OK) json_object_foreach((json_t *)wm, key, val)
        {
            const char *f = json_string_value(val);
            bool        ok = false;
            for (int i = 0; i < m->priv->n_shards && !ok; i++) {
                const char *b = strrchr(m->priv->shards[i].path, '/');
                if (strcmp(b + 1, f) == 0) ok = wgf__st_find(&m->priv->shards[i], key) != NULL;
            }
            if (!ok) {
                st = wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%.80s' is not in shard '%s'", ipath, key, f);
                break;
            }
        }
    json_decref(root);
    return st;
}

static enum wgf_status load_hf(struct wgf_llm_model *m, struct wgf_err *err)
{
    char            p[4096 + 64];
    enum wgf_status st;
    if ((st = join(p, sizeof p, m->path, "config.json", err))) return st;
    char  *text;
    size_t len;
    if ((st = wgf_file_read(p, HF_CONFIG_MAX, "a config.json", &text, &len, err))) return st;
    st = wgf__hf_config_parse(p, text, len, &m->cfg, err);
    free(text);
    if (st) return st;
    /* present, not "exists": a FIFO, directory or symlink loop under either name is an
     * error naming it (util/file.h), not "no model.safetensors" */
    if ((st = join(p, sizeof p, m->path, "model.safetensors.index.json", err))) return st;
    if (wgf_file_present(p)) st = load_index(m, p, err);
    else {
        if ((st = join(p, sizeof p, m->path, "model.safetensors", err))) return st;
        if (!wgf_file_present(p)) return wgf_fail(err, WGF_ERR_IO, "%s: no model.safetensors or model.safetensors.index.json", m->path);
        st = add_shard(m, p, err);
    }
    if (st) return st;
    /* a tensor name in two shards would be ambiguous */
    struct wgf__llm_model_priv *pv = m->priv;
    for (int i = 0; i < pv->n_shards; i++)
        for (int64_t t = 0; t < pv->shards[i].n_tensors; t++)
            for (int j = i + 1; j < pv->n_shards; j++)
                if (wgf__st_find(&pv->shards[j], pv->shards[i].tensors[t].name))
                    return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s' also appears in %s", pv->shards[i].path, pv->shards[i].tensors[t].name, pv->shards[j].path);
    return load_weights(m, err);
}

/* ---- GGUF --------------------------------------------------------------------------------- */

static enum wgf_status gguf_rope_factors(struct wgf_llm_model *m, const char *name, float *out, bool *found, struct wgf_err *err)
{
    struct wgf_tensor t;
    int64_t           half = m->cfg.rope_dim / 2;
    enum wgf_status   st   = get_tensor(m, name, half, 0, CONV_F32, true, &t, err);
    if (st) return st;
    *found = t.data != NULL;
    if (!*found) return WGF_OK;
    memcpy(out, t.data, (size_t)half * sizeof(float));
    /* divisors of the rotary frequencies: as config.json's longrope lists, positive and finite
     * (a zero made every logit NaN, a negative one turned the rotation silently) */
    for (int64_t i = 0; i < half; i++)
        if (!(out[i] > 0 && out[i] < 1e6f))
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor '%s'[%lld] = %g is not a positive factor", m->path, name, (long long)i, (double)out[i]);
    m->cfg.rope_scaling.n_factors = (int)half;
    return WGF_OK;
}

static enum wgf_status load_gguf(struct wgf_llm_model *m, struct wgf_err *err)
{
    enum wgf_status st = m->priv->gguf ? WGF_OK : wgf_gguf_open(m->path, &m->priv->gguf, err);
    if (st) return st;
    const struct wgf_gguf *g    = m->priv->gguf;
    const char            *path = m->path;
    const char            *as;
    size_t                 al;
    if ((st = wgf_gguf_get_str(g, "general.architecture", &as, &al, err))) return st;
    struct wgf_llm_config *c = &m->cfg;
    memset(c, 0, sizeof *c);
    char a[16];
    if (al == 5 && !memcmp(as, "llama", 5)) c->arch = WGF_ARCH_LLAMA;
    else if (al == 5 && !memcmp(as, "qwen2", 5)) c->arch = WGF_ARCH_QWEN2;
    else if (al == 4 && !memcmp(as, "phi3", 4)) c->arch = WGF_ARCH_PHI3;
    else return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: general.architecture '%.*s' not supported (llama, qwen2, phi3 are)", path, (int)(al > 32 ? 32 : al), as);
    snprintf(a, sizeof a, "%s", wgf_arch_str(c->arch));
    char    k[128];
    int64_t v;
#define GET_INT(field, suffix, lo, hi, opt, dflt)                                                              \
    do {                                                                                                       \
        snprintf(k, sizeof k, "%s." suffix, a);                                                               \
        v = dflt;                                                                                              \
        if ((st = (opt ? wgf_gguf_get_i64_opt : wgf_gguf_get_i64)(g, k, lo, hi, &v, err))) return st;          \
        c->field = (int)v;                                                                                     \
    } while (0)
    GET_INT(max_seq_len, "context_length", 1, 1 << 24, false, 0);
    GET_INT(dim, "embedding_length", 1, 1 << 20, false, 0);
    GET_INT(n_layers, "block_count", 1, 4096, false, 0);
    GET_INT(hidden_dim, "feed_forward_length", 1, 1 << 20, false, 0);
    GET_INT(n_heads, "attention.head_count", 1, 4096, false, 0);
    GET_INT(n_kv_heads, "attention.head_count_kv", 1, 4096, true, c->n_heads);
    /* a window, as llama.cpp reads it: its Phi-3 ignores the key (llama.cpp#13676: "Phi SWA
     * is currently disabled"), its Qwen2 and Llama have none. Kept as unapplied, for the
     * note and for llm quantize; only a window below the context would mask anything. */
    GET_INT(sliding_window_unapplied, "attention.sliding_window", 0, INT32_MAX, true, 0);
    if (c->arch == WGF_ARCH_LLAMA || c->sliding_window_unapplied >= c->max_seq_len) c->sliding_window_unapplied = 0;
    c->sliding_window = c->swa_first_layer = 0;
    GET_INT(head_dim, "attention.key_length", 1, 1 << 20, true, c->dim % c->n_heads == 0 ? c->dim / c->n_heads : 0);
    GET_INT(rope_dim, "rope.dimension_count", 1, 1 << 20, true, c->head_dim);
    GET_INT(vocab_size, "vocab_size", 1, 1 << 24, true, 0);
#undef GET_INT
    if (!c->head_dim) return wgf_fail(err, WGF_ERR_FORMAT, "%s: embedding_length %d not divisible by head_count %d", path, c->dim, c->n_heads);
    snprintf(k, sizeof k, "%s.attention.layer_norm_rms_epsilon", a);
    if ((st = wgf_gguf_get_f32(g, k, &c->norm_eps, err))) return st;
    c->rope_theta = 10000.0f;
    snprintf(k, sizeof k, "%s.rope.freq_base", a);
    if ((st = wgf_gguf_get_f32_opt(g, k, &c->rope_theta, err))) return st;
    if (!c->vocab_size) { /* older files: the tokenizer's length, else the embedding rows */
        int64_t  kv;
        uint64_t n;
        struct wgf_err e2;
        if (wgf_gguf_get_arr(g, "tokenizer.ggml.tokens", WGF_GGUF_STRING, &kv, &n, &e2) == WGF_OK && n > 0 && n <= (1u << 24)) c->vocab_size = (int)n;
        else {
            int64_t ti = wgf_gguf_find_tensor(g, "token_embd.weight");
            if (ti < 0) return wgf_fail(err, WGF_ERR_FORMAT, "%s: missing tensor 'token_embd.weight'", path);
            struct wgf_gguf_tensor_info info;
            wgf_gguf_tensor(g, ti, &info);
            if (info.n_dims != 2 || info.shape[0] > (1 << 24)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: tensor 'token_embd.weight' is not (vocab, dim)", path);
            c->vocab_size = (int)info.shape[0];
        }
    }
    /* special tokens */
    c->bos_id = -1;
    v         = -1;
    if ((st = wgf_gguf_get_i64_opt(g, "tokenizer.ggml.bos_token_id", 0, c->vocab_size - 1, &v, err))) return st;
    c->bos_id = (int)v;
    static const char *const eos_keys[] = {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"};
    for (int i = 0; i < 2; i++) {
        v = -1;
        if ((st = wgf_gguf_get_i64_opt(g, eos_keys[i], 0, c->vocab_size - 1, &v, err))) return st;
        if (v >= 0 && !(c->n_eos == 1 && c->eos_ids[0] == v)) c->eos_ids[c->n_eos++] = (int)v;
    }
    /* rope scaling */
    struct wgf_rope_scaling *s = &c->rope_scaling;
    snprintf(k, sizeof k, "%s.rope.scaling.type", a);
    if (wgf_gguf_find(g, k) >= 0) {
        const char *ty;
        size_t      tl;
        if ((st = wgf_gguf_get_str(g, k, &ty, &tl, err))) return st;
        if (tl == 6 && !memcmp(ty, "linear", 6)) s->type = WGF_ROPE_SCALING_LINEAR;
        else if (!(tl == 4 && !memcmp(ty, "none", 4)))
            return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: %s '%.*s' not supported", path, k, (int)(tl > 32 ? 32 : tl), ty);
        snprintf(k, sizeof k, "%s.rope.scaling.factor", a);
        if (s->type == WGF_ROPE_SCALING_LINEAR && ((st = wgf_gguf_get_f32(g, k, &s->factor, err)))) return st;
        if (s->type == WGF_ROPE_SCALING_LINEAR && !(s->factor > 0)) return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s must be positive", path, k);
    }
    snprintf(k, sizeof k, "%s.rope.scaling.original_context_length", a);
    v = 0;
    if ((st = wgf_gguf_get_i64_opt(g, k, 1, 1 << 24, &v, err))) return st;
    s->original_max_pos = (int)v;
    if ((st = wgf__llm_config_check(path, c, err))) return st;
    /* per-frequency factors are tensors: rope_freqs (Llama-3 scaling), rope_factors_* (Phi-3) */
    bool f1 = false, f2 = false;
    if ((st = gguf_rope_factors(m, "rope_freqs.weight", s->short_factor, &f1, err))) return st;
    if (f1) s->type = WGF_ROPE_SCALING_LLAMA3;
    if ((st = gguf_rope_factors(m, "rope_factors_short.weight", s->short_factor, &f1, err)) ||
        (st = gguf_rope_factors(m, "rope_factors_long.weight", s->long_factor, &f2, err)))
        return st;
    if (f1 != f2) return wgf_fail(err, WGF_ERR_FORMAT, "%s: only one of rope_factors_short/long.weight present", path);
    if (f1) {
        s->type = WGF_ROPE_SCALING_LONGROPE;
        if (!s->original_max_pos) return wgf_fail(err, WGF_ERR_FORMAT, "%s: longrope factors without %s.rope.scaling.original_context_length", path, a);
        s->factor = (float)c->max_seq_len / (float)s->original_max_pos;
        /* the attention factor divides by log(original): 1 would make every logit NaN */
        if (s->factor > 1.0f && s->original_max_pos < 2)
            return wgf_fail(err, WGF_ERR_FORMAT, "%s: %s.rope.scaling.original_context_length = %d: longrope needs at least 2", path, a, s->original_max_pos);
        snprintf(k, sizeof k, "%s.rope.scaling.attn_factor", a);
        s->attn_factor = 0;
        if ((st = wgf_gguf_get_f32_opt(g, k, &s->attn_factor, err))) return st;
        if (s->attn_factor <= 0) s->attn_factor = s->factor <= 1.0f ? 1.0f : sqrtf(1.0f + logf(s->factor) / logf((float)s->original_max_pos));
    }
    c->attn_bias = wgf_gguf_find_tensor(g, "blk.0.attn_q.bias") >= 0;
    /* only Qwen2 has q/k/v biases (for Llama they would also need llama.cpp's row permutation) */
    if (c->attn_bias && c->arch != WGF_ARCH_QWEN2)
        return wgf_fail(err, WGF_ERR_UNSUPPORTED, "%s: tensor 'blk.0.attn_q.bias': attention bias not supported for %s", path, a);
    return load_weights(m, err);
}

/* ---- entry -------------------------------------------------------------------------------- */

enum wgf_status wgf_llm_model_load(const char *path, struct wgf_llm_model **out, struct wgf_err *err)
{
    *out = NULL;
    if (!path || !*path) return wgf_fail(err, WGF_ERR_ARG, "model path is empty");
    if (strlen(path) >= sizeof((struct wgf_llm_model *)0)->path) return wgf_fail(err, WGF_ERR_ARG, "%.64s...: model path too long", path);
    struct stat     sb;
    enum wgf_status sst = wgf_file_stat(path, &sb, err);
    if (sst) return sst;
    struct wgf_llm_model *m = calloc(1, sizeof *m);
    if (!m || !(m->priv = calloc(1, sizeof *m->priv))) {
        free(m);
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", path);
    }
    m->priv->mat_dtype = -1;
    snprintf(m->path, sizeof m->path, "%s", path);
    struct wgf_err  local;
    struct wgf_err *e = err ? err : &local;
    enum wgf_status st;
    if (S_ISDIR(sb.st_mode)) {
        m->format = WGF_LLM_FORMAT_HF;
        st        = load_hf(m, e);
    } else {
        m->format = WGF_LLM_FORMAT_GGUF;
        st        = load_gguf(m, e); /* mapfile rejects FIFOs/devices/empty; gguf checks the magic */
        if (st == WGF_ERR_FORMAT && strstr(e->msg, "bad magic") && strlen(path) > 12 && !strcmp(path + strlen(path) - 12, ".safetensors"))
            st = wgf_fail(e, WGF_ERR_ARG, "%s: a safetensors file: pass its directory (with config.json) instead", path);
    }
    if (st != WGF_OK) {
        wgf_llm_model_free(m);
        return st;
    }
    *out = m;
    return WGF_OK;
}

enum wgf_status wgf__llm_model_load_gguf_mem(const void *data, size_t size, const char *name, struct wgf_llm_model **out,
                                             struct wgf_err *err)
{
    *out                    = NULL;
    struct wgf_llm_model *m = calloc(1, sizeof *m);
    if (!m || !(m->priv = calloc(1, sizeof *m->priv))) {
        free(m);
        return wgf_fail(err, WGF_ERR_NOMEM, "%s: out of memory", name);
    }
    m->priv->mat_dtype = -1;
    snprintf(m->path, sizeof m->path, "%s", name);
    m->format          = WGF_LLM_FORMAT_GGUF;
    struct wgf_err  local;
    struct wgf_err *e  = err ? err : &local;
    enum wgf_status st = wgf_gguf_open_mem(data, size, m->path, &m->priv->gguf, e);
    if (st == WGF_OK) st = load_gguf(m, e);
    if (st != WGF_OK) {
        wgf_llm_model_free(m);
        return st;
    }
    *out = m;
    return WGF_OK;
}

uint64_t wgf_llm_model_touch(const struct wgf_llm_model *m)
{
    /* one read per 4 KiB page (plus the last byte) is enough to fault every page in */
    uint64_t                  sum = 0;
    const struct wgf_tensor  *ts[3 + 12];
    const struct wgf_llm_weights *w = &m->weights;
    for (int l = -1; l < m->cfg.n_layers; l++) {
        int n = 0;
        if (l < 0) {
            ts[n++] = &w->tok_embd, ts[n++] = &w->out_norm, ts[n++] = &w->lm_head;
        } else {
            const struct wgf_layer_weights *L = &w->layers[l];
            const struct wgf_tensor *lt[] = {&L->attn_norm, &L->wq, &L->wk, &L->wv, &L->bq, &L->bk, &L->bv, &L->wo, &L->ffn_norm, &L->w_gate, &L->w_up, &L->w_down};
            for (size_t i = 0; i < sizeof lt / sizeof lt[0]; i++) ts[n++] = lt[i];
        }
        for (int i = 0; i < n; i++) {
            const volatile uint8_t *p = ts[i]->data;
            if (!p || !ts[i]->nbytes) continue;
            for (uint64_t o = 0; o < ts[i]->nbytes; o += 4096) sum += p[o];
            sum += p[ts[i]->nbytes - 1];
        }
    }
    return sum;
}

uint64_t wgf_llm_model_weight_bytes(const struct wgf_llm_model *m)
{
    const struct wgf_llm_weights *w = &m->weights;
    uint64_t n = w->tok_embd.nbytes + w->out_norm.nbytes + (m->cfg.tie_embeddings ? 0 : w->lm_head.nbytes);
    for (int l = 0; l < m->cfg.n_layers; l++) {
        const struct wgf_layer_weights *L = &w->layers[l];
        n += L->attn_norm.nbytes + L->wq.nbytes + L->wk.nbytes + L->wv.nbytes + L->bq.nbytes + L->bk.nbytes + L->bv.nbytes +
             L->wo.nbytes + L->ffn_norm.nbytes + L->w_gate.nbytes + L->w_up.nbytes + L->w_down.nbytes;
    }
    return n;
}
