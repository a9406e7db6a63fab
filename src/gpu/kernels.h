/* wgfuse runtime — the table of WGSL kernels embedded at build time (cmake/embed_wgsl.cmake),
 * indexed by enum wgf_kernel (generated kernels/ids.h): entry k is kernel k. */
#ifndef WGF_GPU_KERNELS_H
#define WGF_GPU_KERNELS_H
#include <stddef.h>

#include "kernels/ids.h"
#include "wgfuse/status.h"

struct wgf_kernel_src {
    const char *name;   /* role: the file stem of src/kernels/<part>/<name>.wgsl        */
    const char *path;   /* "<part>/<name>.wgsl", below src/kernels                        */
    const char *source; /* NUL-terminated WGSL, its //#include fragments appended        */
    size_t      length;
};
extern const struct wgf_kernel_src wgf_kernel_table[];
extern const int                   wgf_kernel_table_count;

struct wgf_ctx;
struct wgf_pipeline;
/* wgf_pipeline_for_kernel by id: the kernel's role as label, entry "main", no prelude. */
enum wgf_status wgf__pipeline_for(struct wgf_ctx *ctx, enum wgf_kernel k, struct wgf_pipeline **out);

#endif
