/* wgfuse --version — what a result file needs to name the binary that produced it.
 *
 * Everything but the WebGPU line is compiled in (the generated build_info.c, written by
 * cmake/build_info.cmake at every build), so a binary carried to another machine, without
 * its source tree, still names its commit. The WebGPU line is the library this invocation
 * would load (--webgpu-lib, then $WGFUSE_WEBGPU_LIB, then the built-in default), resolved
 * but not loaded: --version needs no GPU and never fails for the lack of one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/sim_mpi.h"

#ifndef WGF_VERSION
#define WGF_VERSION "unknown"
#endif

/* generated build_info.c */
extern const char wgf_build_commit[], wgf_build_type[], wgf_build_deps[], wgf_build_compiler[],
    wgf_build_webgpu_lib[];

/* Where the library path came from, in the order the loader tries them. */
static const char *lib_source(const char *resolved)
{
    const char *env = getenv("WGFUSE_WEBGPU_LIB");
    if (wgf_cli.webgpu_lib && *wgf_cli.webgpu_lib) return "--webgpu-lib";
    if (env && *env) return "$WGFUSE_WEBGPU_LIB";
    if (!strcmp(resolved, wgf_build_webgpu_lib)) return "built-in default";
    return "next to the executable";
}

int wgf_cmd_version(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (wgf_cli_is_help(argv[i])) {
            printf("usage: wgfuse --version   (or: wgfuse version)\n"
                   "  Prints the version, the git commit and build type compiled into this binary, whether\n"
                   "  jansson/PCRE2/ICU are linked statically, the compiler, and the WebGPU library this\n"
                   "  invocation would load (honours --webgpu-lib and $WGFUSE_WEBGPU_LIB; not loaded).\n");
            return 0;
        }
        wgf_cli_error("version: unknown flag '%s'", argv[i]);
        return 2;
    }
    char        lib[1024];
    const char *path = wgf_gpu_lib_path(wgf_cli.webgpu_lib, lib, sizeof lib);
    struct stat st;
    bool        present = stat(path, &st) == 0 && S_ISREG(st.st_mode);
    printf("wgfuse %s\n", WGF_VERSION);
    printf("commit: %s\n", wgf_build_commit);
    printf("build: %s, %s\n", wgf_build_type, wgf_build_compiler);
    printf("dependencies: %s\n", wgf_build_deps);
    printf("mpi: %s\n", wgf_mpi_built() ? "yes (mpirun -n R wgfuse sim train|bench)" : "no (one process)");
    /* a bare name ("libwebgpu.so") is searched by the dynamic loader, so "not found" only
     * applies to a path */
    printf("webgpu library: %s (%s%s)\n", path, lib_source(path),
           present ? "" : strchr(path, '/') ? ", NOT FOUND" : ", searched by the dynamic loader");
    return 0;
}
