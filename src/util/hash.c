/* wgfuse — SipHash and the per-process key (see hash.h). Written from the SipHash paper
 * (Aumasson, Bernstein: "SipHash: a fast short-input PRF", 2012), section 2. */
#include "util/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/wraps.h"

WGF_WRAPS static inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

struct sip {
    uint64_t v0, v1, v2, v3;
};

WGF_WRAPS static inline void sip_round(struct sip *s)
{
    s->v0 += s->v1;
    s->v1 = rotl(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = rotl(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = rotl(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = rotl(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = rotl(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = rotl(s->v2, 32);
}

static inline void sip_compress(struct sip *s, uint64_t m, int c)
{
    s->v3 ^= m;
    for (int i = 0; i < c; i++) sip_round(s);
    s->v0 ^= m;
}

static inline uint64_t load_le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

WGF_WRAPS uint64_t wgf_siphash(const struct wgf_hash_key *k, const void *data, size_t n, int c, int d)
{
    const unsigned char *p = data;
    struct sip           s = {k->k0 ^ 0x736f6d6570736575ull, k->k1 ^ 0x646f72616e646f6dull,
                              k->k0 ^ 0x6c7967656e657261ull, k->k1 ^ 0x7465646279746573ull};
    size_t               full = n & ~(size_t)7;
    for (size_t i = 0; i < full; i += 8) sip_compress(&s, load_le(p + i, 8), c);
    /* the last block: the remaining bytes and the length modulo 256 in the top byte */
    sip_compress(&s, load_le(p + full, n - full) | ((uint64_t)n << 56), c);
    s.v2 ^= 0xff;
    for (int i = 0; i < d; i++) sip_round(&s);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

/* wgf_siphash(k, the 8 LE bytes of x, 8, 1, 3) unrolled: the BPE pair map calls it for
 * every candidate pair */
WGF_WRAPS uint64_t wgf_hash_u64(const struct wgf_hash_key *k, uint64_t x)
{
    struct sip s = {k->k0 ^ 0x736f6d6570736575ull, k->k1 ^ 0x646f72616e646f6dull, k->k0 ^ 0x6c7967656e657261ull,
                    k->k1 ^ 0x7465646279746573ull};
    sip_compress(&s, x, 1);
    sip_compress(&s, (uint64_t)8 << 56, 1);
    s.v2 ^= 0xff;
    sip_round(&s), sip_round(&s), sip_round(&s);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

static struct wgf_hash_key process_key;
static pthread_once_t      process_key_once = PTHREAD_ONCE_INIT;

static void draw_process_key(void)
{
    unsigned char b[16];
    size_t        got = 0;
    while (got < sizeof b) {
        ssize_t r = getrandom(b + got, sizeof b - got, GRND_NONBLOCK);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    if (got < sizeof b) { /* no getrandom (old kernel, seccomp): /dev/urandom */
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        while (fd >= 0 && got < sizeof b) {
            ssize_t r = read(fd, b + got, sizeof b - got);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
        if (fd >= 0) close(fd);
    }
    struct wgf_hash_key k = {load_le(b, 8), load_le(b + 8, 8)};
    if (got < sizeof b) { /* last resort: unpredictable enough to a file's author offline */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        k.k0 = wgf__mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)(uintptr_t)&k);
        k.k1 = wgf__mix64(k.k0 ^ (uint64_t)getpid());
    }
    process_key = k;
}

struct wgf_hash_key wgf_hash_process_key(void)
{
    pthread_once(&process_key_once, draw_process_key);
    return process_key;
}
