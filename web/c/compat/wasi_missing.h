/* wgfuse, wasm32 build: POSIX calls the core names that wasi-libc lacks, force-included into
 * every core source (web/CMakeLists.txt); defined in web/c/wasi_compat.c. A page has one user
 * and no other processes: getuid() is 0 and kill() fails with ENOSYS; madvise() is only a
 * hint (wasi-libc's mmap emulation copies the file into memory): it succeeds. */
#ifndef WGFW_COMPAT_WASI_MISSING_H
#define WGFW_COMPAT_WASI_MISSING_H
#include <stddef.h>
#include <sys/types.h>
uid_t getuid(void);
int   kill(pid_t pid, int sig);
int   madvise(void *addr, size_t len, int advice);
#endif
