/* wgfuse — tokenizer internals shared by tokenizer*.c (not a public header).
 *
 * Layout of a tokenizer: one entry per id holding the vocabulary string (`str`, as the
 * file stores it) and the bytes the token stands for (`dec`: byte-level alphabet decoded
 * for BPE, U+2581 -> ' ' and <0xXX> -> byte for SPM). Two hash maps index them; BPE adds
 * a pair map (left id, right id) -> (rank, merged id). Loaders (JSON, GGUF spec) fill the
 * entries, then call wgf__tok_index, add merges, and call wgf__tok_finish. */
#ifndef WGFUSE_TOKENIZER_INTERNAL_H
#define WGFUSE_TOKENIZER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hash.h"
#include "wgfuse/status.h"
#include "wgfuse/tokenizer.h"

/* Longest token string accepted from a file: real vocabularies stay under 1 KiB; the cap
 * keeps hostile files from making per-token work unbounded. */
#define WGF__TOK_MAX_LEN 4096u
/* Largest vocabulary accepted (Gemma's 256k is the largest in use). */
#define WGF__TOK_MAX_VOCAB (1u << 22)
/* Pre-tokenizer steps applied one after another (HF Sequence of Split / ByteLevel). */
#define WGF__TOK_MAX_PRE 8

struct wgf__tok_entry {
    char    *str;     /* vocabulary string, NUL-terminated (owned)               */
    char    *dec;     /* decoded bytes, NUL-terminated (owned, may contain NUL)  */
    uint32_t str_len; /* bytes of str                                            */
    uint32_t dec_len; /* bytes of dec                                            */
    int32_t  type;    /* enum wgf_tok_type                                       */
    float    score;   /* SPM merge score                                         */
    uint8_t  strip;   /* added token absorbs whitespace: WGF__STRIP_LEFT/RIGHT   */
};

#define WGF__STRIP_LEFT  1u /* HF lstrip: whitespace before the token is dropped */
#define WGF__STRIP_RIGHT 2u /* HF rstrip: whitespace after the token is dropped  */

/* Open-addressing map from a byte string to an id; keys live in the entries. Slots are
 * chosen by SipHash-1-3 under the process's random key (util/hash.h): a vocabulary crafted
 * to collide cannot know where its strings land (an unkeyed FNV-1a once let 100k strings
 * share one probe chain: 40 s to tokenize). */
struct wgf__idmap {
    size_t              mask;   /* capacity - 1 (capacity a power of two)  */
    int32_t            *slot;   /* [capacity] id or -1                     */
    bool                by_dec; /* key is entry.dec (else entry.str)       */
    struct wgf_hash_key hk;     /* the hash key                            */
};

/* Map (left id, right id) -> (merge rank, merged id), keyed like wgf__idmap. */
struct wgf__pairmap {
    size_t              mask;
    size_t              count;
    uint64_t           *key;  /* [capacity] (left << 32 | right), UINT64_MAX empty */
    int32_t            *rank; /* [capacity]                                       */
    int32_t            *id;   /* [capacity]                                       */
    struct wgf_hash_key hk;   /* the hash key                                     */
};

/* Probe statistics of a map (tests: the bound on work under a crafted vocabulary). */
struct wgf__map_stats {
    size_t n;           /* keys stored                                                  */
    size_t probes;      /* slots a successful lookup of every key visits, summed        */
    size_t max_probes;  /* the most one successful lookup visits                        */
};
void wgf__idmap_stats(const struct wgf__idmap *m, const struct wgf__tok_entry *ents, struct wgf__map_stats *s);
void wgf__pairmap_stats(const struct wgf__pairmap *m, struct wgf__map_stats *s);
/* The slot index a pair key starts probing at (tokenizer_bpe.c's lookup). */
static inline size_t wgf__pair_home(const struct wgf__pairmap *m, uint64_t key)
{
    return (size_t)wgf_hash_u64(&m->hk, key) & m->mask;
}

struct pcre2_real_code_8;

/* How a Split pre-tokenizer treats the pieces its pattern matches (HF's
 * SplitDelimiterBehavior): ISOLATED keeps matches and gaps as pieces; REMOVED drops the
 * matches; MERGED_PREV / MERGED_NEXT glue a match onto the gap before / after it;
 * CONTIGUOUS joins runs of matches (and runs of gaps) into one piece. */
enum wgf__split_behavior {
    WGF__SPLIT_ISOLATED,
    WGF__SPLIT_REMOVED,
    WGF__SPLIT_MERGED_PREV,
    WGF__SPLIT_MERGED_NEXT,
    WGF__SPLIT_CONTIGUOUS,
};

/* One pre-tokenizer step: a Split (re set), or ByteLevel's add_prefix_space (re NULL: a
 * space goes in front of every piece that does not start with one). ByteLevel's byte
 * mapping itself is not a step: byte-level BPE works on the bytes. */
struct wgf__pretok_step {
    struct pcre2_real_code_8 *re;
    uint8_t                   behavior; /* enum wgf__split_behavior                         */
    bool                      invert;   /* the pattern names the gaps: flip match / gap     */
    bool                      jit;      /* JIT-compiled (matching needs a JIT stack)        */
};

/* Aho–Corasick automaton over the reversed added-token strings (tokenizer_added.c). Node 0
 * is the root; the children of v are the edges [first[v], first[v+1]), sorted by byte. */
struct wgf__added_ac {
    uint32_t  n_nodes;
    uint32_t  max_len;        /* longest added token, bytes                                 */
    uint32_t *first;          /* [n_nodes + 1]                                              */
    uint8_t  *ebyte;          /* [n_nodes - 1] edge byte                                    */
    uint32_t *eto;            /* [n_nodes - 1] edge target                                  */
    uint32_t *fail;           /* [n_nodes] failure link                                     */
    int32_t  *out_all;        /* [n_nodes] id of the longest token on the failure chain, -1 */
    int32_t  *out_ud;         /* [n_nodes] the same among USER_DEFINED tokens               */
    uint32_t  root_next[256]; /* the root's children (0: none)                              */
};

struct wgf_tokenizer {
    enum wgf_tok_model     model;
    size_t                 n_vocab;
    struct wgf__tok_entry *ents;    /* [n_vocab]                                         */
    struct wgf__idmap      by_str;  /* every token by vocabulary string                  */
    struct wgf__idmap      by_text; /* BPE: NORMAL tokens by dec; SPM: mergeable by str  */
    struct wgf__pairmap    merges;  /* BPE only                                          */
    int32_t                byte_id[256]; /* BPE: single-byte token; SPM: <0xXX> (-1 none) */
    uint32_t               max_text_len; /* SPM: longest mergeable piece in bytes        */

    /* pre-tokenizer: steps applied in order, each to every piece the previous one left
     * (HF Sequence semantics; tokenizer_pretok.c). BPE: on the text, before the byte-level
     * BPE; SentencePiece-style: on the normalized text (spaces already U+2581). */
    size_t                  n_pre;
    struct wgf__pretok_step pre[WGF__TOK_MAX_PRE];
    bool                    ignore_merges; /* whole-word vocab hit skips merging    */
    bool                      nfc;              /* normalizer NFC (Qwen2), via ICU        */

    /* added tokens (CONTROL, USER_DEFINED, UNKNOWN), matched by an automaton over their
     * reversed strings (tokenizer_added.c) */
    size_t               n_added;
    struct wgf__added_ac added;

    char   *chat_template; /* the model's own Jinja template (owned), NULL when none */
    /* the chat template's other inputs (tokenizer.c): named templates ("tool_use"...) and
     * the special-token strings tokenizer_config.json gives (bos_token...), owned */
    size_t n_chat_meta;
    struct wgf__tok_meta {
        char *key; /* "template:<name>" or "token:<bos_token|eos_token|...>" */
        char *val;
    } *chat_meta;
    bool special_from_config; /* tokenizer_config.json was read: only its strings count */
    int32_t bos, eos, unk, pad, eot; /* -1 when absent */
    bool    add_bos;
    bool    add_space_prefix;  /* SPM: "▁" in front of text fragments           */
    bool    prefix_first_only; /* ... only in front of the text's first fragment */
    size_t  n_eog;
    int32_t eog[16];
};

/* ---- utf8 (tokenizer_utf8.c) --------------------------------------------------------- */
/* Length (1..4) of the strictly valid UTF-8 character at s (no overlongs, surrogates or
 * values > U+10FFFF), storing its code point; 0 if s does not start one (n == 0 too). */
size_t wgf__utf8_next(const unsigned char *s, size_t n, uint32_t *cp);
/* Length 1..4 of the UTF-8 encoding of cp (cp ≤ 0x10FFFF), written to out. */
size_t wgf__utf8_put(uint32_t cp, char out[4]);
/* True if s[0..n) (n ≥ 1) is a proper prefix of some valid character, so more bytes
 * could complete it. */
bool wgf__utf8_is_prefix(const unsigned char *s, size_t n);
/* GPT-2 byte-level alphabet: the code point standing for byte b, and the inverse (-1 if
 * cp is not in the alphabet). */
uint32_t wgf__bytelevel_cp(unsigned b);
int      wgf__bytelevel_byte(uint32_t cp);

/* ---- maps (tokenizer_vocab.c) -------------------------------------------------------- */
int32_t wgf__idmap_get(const struct wgf__idmap *m, const struct wgf__tok_entry *ents, const char *key,
                       size_t len);

/* ---- building (tokenizer_vocab.c) ---------------------------------------------------- */
/* Allocate a tokenizer with n_vocab zeroed entries and all ids -1. */
enum wgf_status wgf__tok_alloc(enum wgf_tok_model model, size_t n_vocab, const char *src,
                               struct wgf_tokenizer **out, struct wgf_err *err);
/* Copy a token string into entry id (type/score set by the caller). */
enum wgf_status wgf__tok_set(struct wgf_tokenizer *t, size_t id, const char *s, size_t len, const char *src,
                             struct wgf_err *err);
/* After all entries are set: compute dec bytes and build by_str / by_text maps.
 * Duplicate vocabulary strings keep the lowest id. Fills byte_id. */
enum wgf_status wgf__tok_index(struct wgf_tokenizer *t, const char *src, struct wgf_err *err);
/* Add merge number `rank` given the two vocabulary strings. `what` names the field for
 * errors ("model.merges" / "tokenizer.ggml.merges"). */
enum wgf_status wgf__tok_add_merge(struct wgf_tokenizer *t, const char *a, size_t alen, const char *b,
                                   size_t blen, size_t rank, const char *src, const char *what,
                                   struct wgf_err *err);
/* Size the merge map before adding n merges. */
enum wgf_status wgf__tok_reserve_merges(struct wgf_tokenizer *t, size_t n, const char *src, struct wgf_err *err);
/* Last step: checks ids, builds the added-token index and the end-of-generation set. */
enum wgf_status wgf__tok_finish(struct wgf_tokenizer *t, const char *src, struct wgf_err *err);

/* ---- NFC normalization (tokenizer_nfc.c) --------------------------------------------- */
/* True when ICU could be loaded (NFC applied); false: NFC is skipped. */
bool wgf__nfc_available(void);
/* NFC of text (invalid UTF-8 bytes pass through). *out is NULL when the text is unchanged
 * for sure (ASCII, or no ICU), else a malloc'd copy of *out_len bytes. */
enum wgf_status wgf__nfc(const char *text, size_t len, char **out, size_t *out_len, struct wgf_err *err);

/* ---- pre-tokenizer (tokenizer_pretok.c) ---------------------------------------------- */
/* Append a Split step: pattern is a regex, or (literal) a string matched as is; compiled
 * with UTF + UCP + MATCH_INVALID_UTF, JIT when available. `where` names the field in
 * errors. */
enum wgf_status wgf__pretok_add_split(struct wgf_tokenizer *t, const char *pattern, size_t pattern_len, bool literal,
                                      enum wgf__split_behavior behavior, bool invert, const char *src,
                                      const char *where, struct wgf_err *err);
/* The common case: an Isolated regex Split. */
enum wgf_status wgf__pretok_add_regex(struct wgf_tokenizer *t, const char *pattern, const char *src,
                                      struct wgf_err *err);
/* Append ByteLevel's add_prefix_space step. */
enum wgf_status wgf__pretok_add_prefix_space(struct wgf_tokenizer *t, const char *src, struct wgf_err *err);
void            wgf__pretok_free(struct wgf_tokenizer *t);

/* A piece of text: [off, off+len) of the fragment being encoded. */
struct wgf__span {
    size_t off, len;
};
/* Run every pre-tokenizer step of t on text, in order, each on every piece the previous
 * step left; empty pieces are dropped (as HF does). The pieces index *buf when a step
 * inserted bytes (add_prefix_space: *buf malloc'd, the caller frees it), else text (*buf
 * NULL). *spans is malloc'd (non-NULL on success). */
enum wgf_status wgf__pretok_split(const struct wgf_tokenizer *t, const char *text, size_t len, char **buf,
                                  struct wgf__span **spans, size_t *n_spans, struct wgf_err *err);

/* ---- added tokens (tokenizer_added.c) ------------------------------------------------- */
/* Build t->added from the entries (called by wgf__tok_finish); sets n_added. */
enum wgf_status wgf__added_build(struct wgf_tokenizer *t, const char *src, struct wgf_err *err);
void            wgf__added_free(struct wgf__added_ac *ac);
#define WGF__ADDED_CHUNK 16384u /* positions resolved per right-to-left pass */
/* A left-to-right query over one text: wgf__added_at(sc, i) is the id of the added token to
 * take at byte i (the longest usable one starting there), or -1. Queries must not go
 * backwards. `steps` counts automaton child lookups (at most 5 len + 16384, see
 * tokenizer_added.c), for tests. */
struct wgf__added_scan {
    const struct wgf_tokenizer *t;
    const unsigned char        *text;
    size_t                      len;
    bool                        parse_special;
    const unsigned char        *special_ok;
    size_t                      lo, hi; /* the chunk whose best[] is computed */
    int32_t                    *best;   /* [WGF__ADDED_CHUNK]                  */
    uint64_t                    steps;
};
enum wgf_status wgf__added_scan_init(struct wgf__added_scan *sc, const struct wgf_tokenizer *t, const char *text,
                                     size_t len, bool parse_special, const unsigned char *special_ok,
                                     struct wgf_err *err);
int32_t         wgf__added_at(struct wgf__added_scan *sc, size_t i);
void            wgf__added_scan_free(struct wgf__added_scan *sc);
/* The rule the automaton implements, by brute force (O(n_vocab) per call): the reference
 * that tests and fuzzing compare wgf__added_at with. */
int32_t wgf__added_rule_at(const struct wgf_tokenizer *t, const char *text, size_t len, size_t i, bool parse_special,
                           const unsigned char *special_ok);

/* ---- encoding (tokenizer.c) ---------------------------------------------------------- */
/* wgf_tokenizer_encode_ex where, in addition to WGF_TOK_PARSE_SPECIAL, a control token
 * starting at byte i is recognized when special_ok[i] (special_ok may be NULL): chat
 * templates encode their scaffolding and the user's text in one pass (so tokens across
 * the seams are the same as for the whole string) without parsing the user's specials. */
enum wgf_status wgf__tok_encode_masked(const struct wgf_tokenizer *t, const char *text, size_t len, unsigned flags,
                                       const unsigned char *special_ok, int32_t **ids, size_t *n, struct wgf_err *err);
/* The same, adding the added-token matcher's automaton steps to *steps (tests). */
enum wgf_status wgf__tok_encode_counted(const struct wgf_tokenizer *t, const char *text, size_t len, unsigned flags,
                                        const unsigned char *special_ok, int32_t **ids, size_t *n, uint64_t *steps,
                                        struct wgf_err *err);

/* ---- id output buffer (tokenizer_vocab.c) -------------------------------------------- */
struct wgf__ids {
    int32_t *v;
    size_t   n, cap;
};
enum wgf_status wgf__ids_push(struct wgf__ids *o, int32_t id, struct wgf_err *err);

/* ---- models -------------------------------------------------------------------------- */
/* Byte-level BPE of one pre-tokenized piece (tokenizer_bpe.c). */
enum wgf_status wgf__bpe_word(const struct wgf_tokenizer *t, const unsigned char *s, size_t len,
                              struct wgf__ids *out, struct wgf_err *err);
/* BPE by merge rank over UTF-8 characters with byte fallback: HF's BPE with
 * byte_fallback (Llama-2 / Phi-3 tokenizer.json); spaces already escaped (tokenizer_bpe.c). */
enum wgf_status wgf__bpe_chars(const struct wgf_tokenizer *t, const unsigned char *s, size_t len,
                               struct wgf__ids *out, struct wgf_err *err);
/* SentencePiece score merge of one text fragment; spaces already escaped (tokenizer_spm.c). */
enum wgf_status wgf__spm_fragment(const struct wgf_tokenizer *t, const unsigned char *s, size_t len,
                                  struct wgf__ids *out, struct wgf_err *err);

#endif
