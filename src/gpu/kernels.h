/* wgfuse — the table of WGSL kernels embedded at build time (see cmake/embed_wgsl.cmake). */
#ifndef WGF_GPU_KERNELS_H
#define WGF_GPU_KERNELS_H
#include <stddef.h>

struct wgf_kernel_src {
    const char *name;   /* file stem of src/kernels/<name>.wgsl */
    const char *source; /* NUL-terminated WGSL                  */
    size_t      length;
};
extern const struct wgf_kernel_src wgf_kernel_table[];
extern const int                   wgf_kernel_table_count;

#endif
