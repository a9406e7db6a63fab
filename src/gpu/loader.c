/* wgfuse runtime — loading a webgpu.h implementation at run time.
 *
 * Nothing links against WebGPU: the library is dlopen()ed and each wgpu* function wgfuse
 * uses is resolved into struct wgf__procs. So a user can point wgfuse at Dawn (default),
 * wgpu-native, or any other implementation of the same header era with --webgpu-lib or
 * $WGFUSE_WEBGPU_LIB. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu/gpu_internal.h"

#ifndef WGF_DEFAULT_WEBGPU_LIB
#define WGF_DEFAULT_WEBGPU_LIB "third_party/dawn/libwebgpu_wrapper.so"
#endif

static bool file_exists(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Order: explicit path, $WGFUSE_WEBGPU_LIB, the build-time default, then
 * <dir of the executable>/../third_party/dawn/ (an installed copy next to the binary).
 * The choice is written into buf (returned). */
const char *wgf__resolve_lib_path(const char *requested, char *buf, size_t cap)
{
    const char *env = getenv("WGFUSE_WEBGPU_LIB");
    if (requested && *requested) snprintf(buf, cap, "%s", requested);
    else if (env && *env) snprintf(buf, cap, "%s", env);
    else {
        snprintf(buf, cap, "%s", WGF_DEFAULT_WEBGPU_LIB);
        char exe[512];
        ssize_t n = file_exists(WGF_DEFAULT_WEBGPU_LIB) ? -1 : readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) {
            exe[n]      = '\0';
            char *slash = strrchr(exe, '/');
            char  near_exe[600];
            if (slash) {
                *slash = '\0';
                snprintf(near_exe, sizeof near_exe, "%s/../third_party/dawn/libwebgpu_wrapper.so", exe);
                if (file_exists(near_exe)) snprintf(buf, cap, "%s", near_exe);
            }
        }
    }
    return buf;
}

const char *wgf_gpu_lib_path(const char *requested, char *buf, size_t cap)
{
    return wgf__resolve_lib_path(requested, buf, cap);
}

enum wgf_status wgf__load_library(const char *path, void **lib, struct wgf__procs *p, char *resolved, size_t cap,
                                  struct wgf_err *err)
{
    const char *use = wgf__resolve_lib_path(path, resolved, cap);
    if (!file_exists(use) && strchr(use, '/'))
        return wgf_fail(err, WGF_ERR_LIB,
                        "WebGPU library '%s' not found (run `make setup`, or pass --webgpu-lib PATH / set "
                        "WGFUSE_WEBGPU_LIB)",
                        use);
    dlerror();
    void *h = dlopen(use, RTLD_NOW | RTLD_LOCAL);
    if (!h) return wgf_fail(err, WGF_ERR_LIB, "cannot load WebGPU library '%s': %s", use, dlerror());
    memset(p, 0, sizeof *p);
    /* dlsym returns void*; converting through a union avoids the ISO C object/function
     * pointer cast warning while doing exactly what POSIX guarantees. */
#define WGF__LOAD_REQ(name, ret, args)                                                                             \
    {                                                                                                          \
        union { void *obj; ret(*fn) args; } u;                                                                 \
        u.obj = dlsym(h, "wgpu" #name);                                                                        \
        if (!u.obj) {                                                                                          \
            dlclose(h);                                                                                        \
            return wgf_fail(err, WGF_ERR_LIB, "WebGPU library '%s' lacks wgpu" #name                           \
                            " (not a webgpu.h implementation of the supported era?)", use);                    \
        }                                                                                                      \
        p->name = u.fn;                                                                                        \
    }
#define WGF__LOAD_OPT(name, ret, args)                                                                             \
    {                                                                                                          \
        union { void *obj; ret(*fn) args; } u;                                                                 \
        u.obj = dlsym(h, "wgpu" #name);                                                                        \
        p->name = u.fn;                                                                                        \
    }
    WGF_WGPU_REQUIRED_PROCS(WGF__LOAD_REQ)
    WGF_WGPU_OPTIONAL_PROCS(WGF__LOAD_OPT)
#undef WGF__LOAD_REQ
#undef WGF__LOAD_OPT
    *lib = h;
    return WGF_OK;
}

void wgf__unload_library(void *lib)
{
    /* Dawn keeps threads and atexit handlers alive; unloading it under them crashes at
     * exit. The handle is intentionally kept: the OS reclaims it with the process. */
    (void)lib;
}
