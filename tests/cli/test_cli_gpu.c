/* CLI, runtime commands: `info`, `report`, adapter selection and the failures a user meets
 * first (no usable adapter, unknown adapter, missing library, unknown command). */
#include <stdio.h>
#include <string.h>

#include "harness.h"

int main(void)
{
    struct wgf_t t = {0};
    static char out[1 << 16];
    char cmd[1024];
    const char *cli = wgf_t_cli();
    int rc;

    snprintf(cmd, sizeof cmd, "%s info", cli);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 0 && strstr(out, "backend vulkan") && strstr(out, "maxStorageBufferBindingSize") &&
                    strstr(out, "Null backend"),
                "info lists adapters with features and limits", "rc=%d", rc);

    snprintf(cmd, sizeof cmd, "%s report --no-bench --no-sim --no-advise", cli);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 0 && strstr(out, "selfcheck_saxpy n=1048576  PASS") && strstr(out, "report: OK"),
                "report: self-check passes", "rc=%d %.300s", rc, out);

    snprintf(cmd, sizeof cmd, "%s --adapter NoSuchGPU report", cli);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 1 && strstr(out, "no WebGPU adapter matches --adapter 'NoSuchGPU'"),
                "unknown adapter: one clear error, exit 1", "rc=%d %.300s", rc, out);

    /* no Vulkan driver at all: Dawn falls back to its Null backend, which must be refused */
    snprintf(cmd, sizeof cmd, "VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json %s report", cli);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 1 && strstr(out, "no usable WebGPU adapter") && strstr(out, "Vulkan driver"),
                "no driver: Null backend refused with a hint", "rc=%d %.400s", rc, out);

    snprintf(cmd, sizeof cmd, "%s --webgpu-lib /nonexistent/libwebgpu.so info", cli);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 1 && strstr(out, "/nonexistent/libwebgpu.so"), "missing --webgpu-lib named", "rc=%d %.300s",
                rc, out);

    snprintf(cmd, sizeof cmd, "WGFUSE_WEBGPU_LIB=/nonexistent/env.so %s info", cli);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 1 && strstr(out, "/nonexistent/env.so"), "WGFUSE_WEBGPU_LIB honoured", "rc=%d %.300s", rc,
                out);

    snprintf(cmd, sizeof cmd, "%s frobnicate", cli);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 2 && strstr(out, "unknown command"), "unknown command: usage error 2", "rc=%d", rc);

    snprintf(cmd, sizeof cmd, "%s --adapter", cli);
    rc = wgf_t_run(cmd, out, sizeof out);
    wgf_t_check(&t, rc == 2 && strstr(out, "needs a value"), "missing flag value: usage error 2", "rc=%d", rc);
    return wgf_t_finish(&t);
}
