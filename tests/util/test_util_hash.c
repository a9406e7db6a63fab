/* util/hash: SipHash against the reference test vectors (SipHash-2-4, key 00..0f, message
 * 00 01 .. of each length; the paper's appendix and the reference vectors.h), the same code
 * with 1 and 3 rounds being SipHash-1-3; and the per-process key: stable across calls and
 * threads, not zero. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "util/hash.h"

static struct wgf_hash_key seen[4];

static void *take_key(void *arg)
{
    seen[(size_t)arg] = wgf_hash_process_key();
    return NULL;
}

int main(void)
{
    struct wgf_t        t = {0};
    struct wgf_hash_key k = {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
    unsigned char       m[64];
    for (int i = 0; i < 64; i++) m[i] = (unsigned char)i;
    /* SipHash-2-4 reference outputs (little-endian u64) for messages of 0, 8 and 15 bytes */
    static const struct {
        size_t   n;
        uint64_t want;
    } v[] = {{0, 0x726fdb47dd0e0e31ull}, {8, 0x93f5f5799a932462ull}, {15, 0xa129ca6149be45e5ull}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint64_t got = wgf_siphash(&k, m, v[i].n, 2, 4);
        char     name[64];
        snprintf(name, sizeof name, "SipHash-2-4 test vector, %zu bytes", v[i].n);
        wgf_t_check(&t, got == v[i].want, name, "%016llx (want %016llx)", (unsigned long long)got,
                    (unsigned long long)v[i].want);
    }
    /* SipHash-1-3: the u64 form is the 8-byte form; lengths differing only past byte 255
     * still differ (the length byte wraps, the data does not) */
    uint64_t a = wgf_hash_u64(&k, 0x0706050403020100ull), b = wgf_hash_bytes(&k, m, 8);
    wgf_t_check(&t, a == b && a != wgf_siphash(&k, m, 8, 2, 4), "SipHash-1-3 of a u64 == of its 8 LE bytes", "%016llx %016llx",
                (unsigned long long)a, (unsigned long long)b);
    pthread_t th[4];
    for (size_t i = 0; i < 4; i++) pthread_create(&th[i], NULL, take_key, (void *)i);
    for (size_t i = 0; i < 4; i++) pthread_join(th[i], NULL);
    struct wgf_hash_key pk   = wgf_hash_process_key();
    bool                same = true;
    for (int i = 0; i < 4; i++) same = same && seen[i].k0 == pk.k0 && seen[i].k1 == pk.k1;
    wgf_t_check(&t, same && (pk.k0 | pk.k1) != 0, "process key: one per process, same from 4 threads, not zero", "%016llx%016llx",
                (unsigned long long)pk.k0, (unsigned long long)pk.k1);
    return wgf_t_finish(&t);
}
