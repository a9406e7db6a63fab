/* wgfuse, wasm32 build: wasi-libc has getentropy() but no getrandom(); this adds the latter
 * (the flags do not matter: WASI's random_get never blocks). Never used by the native build. */
#ifndef WGFW_COMPAT_SYS_RANDOM_H
#define WGFW_COMPAT_SYS_RANDOM_H
#include_next <sys/random.h>
#include <sys/types.h>
#include <unistd.h>
#ifndef GRND_NONBLOCK
#define GRND_NONBLOCK 1
#endif
static inline ssize_t wgfw_getrandom(void *buf, size_t n, unsigned flags)
{
    (void)flags;
    if (n > 256) n = 256;
    return getentropy(buf, n) == 0 ? (ssize_t)n : -1;
}
#define getrandom wgfw_getrandom
#endif
