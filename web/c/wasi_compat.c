/* wgfuse, wasm32 build: the POSIX calls wasi-libc lacks (compat/wasi_missing.h). */
#include <errno.h>

#include "wasi_missing.h"

uid_t getuid(void) { return 0; }

int kill(pid_t pid, int sig)
{
    (void)pid, (void)sig;
    errno = ENOSYS;
    return -1;
}

int madvise(void *addr, size_t len, int advice)
{
    (void)addr, (void)len, (void)advice;
    return 0;
}
