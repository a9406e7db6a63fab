/* wgfuse — keyed hashing for tables whose keys come from untrusted files.
 *
 * A hash table keyed by an unkeyed function (FNV-1a, fmix64) can be flooded: a
 * tokenizer.json whose 100k vocabulary strings all land in one bucket made every lookup
 * walk the whole probe chain (`tokenize` took 40 s instead of 0.4 s). SipHash-1-3 (Aumasson
 * and Bernstein's keyed PRF, 1 compression and 3 finalization rounds, as Rust's HashMap
 * uses) with a key drawn at random once per process makes the bucket of a string
 * unpredictable to whoever wrote the file, so probe chains stay at their expected length
 * (~1.5 probes per successful lookup at load factor 1/2) whatever the keys are.
 *
 * Nothing a table returns depends on the key (lookups are exact), so outputs stay
 * deterministic; only the layout and the timing of a table change between processes. */
#ifndef WGF_UTIL_HASH_H
#define WGF_UTIL_HASH_H
#include <stddef.h>
#include <stdint.h>

struct wgf_hash_key {
    uint64_t k0, k1;
};

/* The process's key: 16 bytes from getrandom() (or /dev/urandom, or at worst a mix of the
 * clock, the pid and an address) drawn on the first call, the same for every later call
 * from any thread. */
struct wgf_hash_key wgf_hash_process_key(void);

/* SipHash with c compression and d finalization rounds over n bytes; SipHash-1-3 is
 * wgf_siphash(k, p, n, 1, 3) (the reference SipHash-2-4 is (2, 4): tests/util checks it
 * against the paper's test vectors). */
uint64_t wgf_siphash(const struct wgf_hash_key *k, const void *p, size_t n, int c, int d);

static inline uint64_t wgf_hash_bytes(const struct wgf_hash_key *k, const void *p, size_t n)
{
    return wgf_siphash(k, p, n, 1, 3);
}

/* SipHash-1-3 of the 8 little-endian bytes of x. */
uint64_t wgf_hash_u64(const struct wgf_hash_key *k, uint64_t x);

#endif
