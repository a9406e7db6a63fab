/* wgfuse, wasm32 build: the single-threaded subset of <pthread.h> the C core uses.
 *
 * wasi-libc (Debian bookworm) has no threads. A page runs the core on one thread, so:
 * pthread_once runs the routine once; mutexes and condition variables are no-ops (there is no
 * other thread to exclude or wake); pthread_create fails with EAGAIN, which the callers treat
 * as "use fewer threads" (cpu-ref's pool falls back to the calling thread). Never used by the
 * native build. */
#ifndef WGFW_COMPAT_PTHREAD_H
#define WGFW_COMPAT_PTHREAD_H
#include <errno.h>
#include <string.h>
#include <sys/types.h> /* wasi-libc's pthread_* types (musl's), which nothing here reads */

#define PTHREAD_ONCE_INIT 0

static inline int pthread_once(pthread_once_t *o, void (*fn)(void))
{
    if (!*o) {
        *o = 1;
        fn();
    }
    return 0;
}
static inline int pthread_mutex_init(pthread_mutex_t *m, const void *a) { (void)a, memset(m, 0, sizeof *m); return 0; }
static inline int pthread_mutex_destroy(pthread_mutex_t *m) { (void)m; return 0; }
static inline int pthread_mutex_lock(pthread_mutex_t *m) { (void)m; return 0; }
static inline int pthread_mutex_unlock(pthread_mutex_t *m) { (void)m; return 0; }
static inline int pthread_cond_init(pthread_cond_t *c, const void *a) { (void)a, memset(c, 0, sizeof *c); return 0; }
static inline int pthread_cond_destroy(pthread_cond_t *c) { (void)c; return 0; }
static inline int pthread_cond_signal(pthread_cond_t *c) { (void)c; return 0; }
static inline int pthread_cond_broadcast(pthread_cond_t *c) { (void)c; return 0; }
static inline int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) { (void)c, (void)m; return EDEADLK; }
static inline int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    (void)t, (void)a, (void)fn, (void)arg;
    return EAGAIN;
}
static inline int pthread_join(pthread_t t, void **r) { (void)t, (void)r; return 0; }
#endif
