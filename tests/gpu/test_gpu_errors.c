/* Runtime: clear errors, never crashes — WGSL syntax error (compiler message with line
 * numbers), over-limit buffer and binding, nonexistent adapter, Null backend refused,
 * missing library, uncaptured validation error surfaced by the next wait. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/gpu.h"

static const char *bad_wgsl =
    "@group(0) @binding(0) var<storage, read_write> y : array<f32>;\n"
    "@compute @workgroup_size(64)\n"
    "fn main(@builtin(global_invocation_id) g : vec3<u32>) {\n"
    "    y[g.x] = 1.0 +;\n" /* line 4: syntax error */
    "}\n";

int main(void)
{
    struct wgf_t t = {0};
    wgf_ctx *ctx = wgf_t_gpu(&t);
    if (!ctx) return wgf_t_finish(&t);
    const char *msg;

    /* WGSL syntax error */
    struct wgf_pipeline_desc d = {"broken_kernel", bad_wgsl, NULL, "main", NULL, 0};
    wgf_pipeline *p = NULL;
    enum wgf_status s = wgf_pipeline_get(ctx, &d, &p);
    msg = wgf_ctx_last_error(ctx);
    wgf_t_check(&t, s == WGF_ERR_SHADER && !p && strstr(msg, "broken_kernel") && strstr(msg, "line 4:"),
                "WGSL syntax error reported with kernel label and line", "%s", msg);
    /* the same error with a prelude still reports the kernel file's line */
    d.prelude = "const A : u32 = 1u;\nconst B : u32 = 2u;";
    s = wgf_pipeline_get(ctx, &d, &p);
    msg = wgf_ctx_last_error(ctx);
    wgf_t_check(&t, s == WGF_ERR_SHADER && strstr(msg, "line 4:"), "line numbers exclude the prelude", "%s", msg);
    /* missing entry point: pipeline creation fails cleanly */
    d.prelude = NULL;
    d.wgsl    = wgf_kernel_source("selfcheck_saxpy");
    d.entry   = "no_such_entry";
    d.label   = "saxpy_bad_entry";
    s = wgf_pipeline_get(ctx, &d, &p);
    wgf_t_check(&t, s == WGF_ERR_SHADER && strstr(wgf_ctx_last_error(ctx), "saxpy_bad_entry"),
                "bad entry point reported", "%s", wgf_ctx_last_error(ctx));
    s = wgf_pipeline_for_kernel(ctx, "no_such_kernel", &p);
    wgf_t_check(&t, s == WGF_ERR_ARG, "unknown kernel role", "%s", wgf_ctx_last_error(ctx));

    /* over-limit buffer: refused before WebGPU sees it, naming the buffer and limit */
    const struct wgf_limits *lim = wgf_ctx_limits(ctx);
    wgf_buffer *b = NULL;
    s = wgf_buffer_create(ctx, "huge_weights", lim->max_buffer_size + 1, WGF_BUF_STORAGE, &b);
    msg = wgf_ctx_last_error(ctx);
    wgf_t_check(&t, s == WGF_ERR_LIMIT && !b && strstr(msg, "huge_weights") && strstr(msg, "maxBufferSize"),
                "buffer above maxBufferSize refused", "%s", msg);
    s = wgf_buffer_create(ctx, "overflow", UINT64_MAX - 1, WGF_BUF_STORAGE, &b);
    wgf_t_check(&t, s == WGF_ERR_LIMIT && !b, "size overflow refused", "%s", wgf_ctx_last_error(ctx));
    /* a binding above maxStorageBufferBindingSize: refused at bind-group creation */
    uint64_t big = lim->max_storage_buffer_binding_size + 256;
    if (big <= lim->max_buffer_size && big <= (512ull << 20)) {
        wgf_pipeline *sp = NULL;
        wgf_buffer *y = NULL, *u = NULL;
        wgf_bind_group *bg = NULL;
        if (wgf_pipeline_for_kernel(ctx, "selfcheck_saxpy", &sp) == WGF_OK &&
            wgf_buffer_create(ctx, "big_tensor", big, WGF_BUF_STORAGE, &b) == WGF_OK &&
            wgf_buffer_create(ctx, "y", 256, WGF_BUF_STORAGE, &y) == WGF_OK &&
            wgf_buffer_create(ctx, "u", 16, WGF_BUF_UNIFORM, &u) == WGF_OK) {
            s = wgf_bind_group_create(ctx, sp, (wgf_buffer *[]){y, b, u}, 3, &bg);
            msg = wgf_ctx_last_error(ctx);
            wgf_t_check(&t, s == WGF_ERR_LIMIT && !bg && strstr(msg, "big_tensor") &&
                            strstr(msg, "maxStorageBufferBindingSize"),
                        "binding above maxStorageBufferBindingSize refused", "%s", msg);
        } else {
            wgf_t_check(&t, false, "binding-limit setup", "%s", wgf_ctx_last_error(ctx));
        }
        wgf_bind_group_free(bg);
        wgf_buffer_free(b);
        wgf_buffer_free(y);
        wgf_buffer_free(u);
    } else {
        wgf_t_skip(&t, "binding limit", "maxStorageBufferBindingSize too large to exceed in a test");
    }

    /* an uncaptured validation error is returned by the next call that waits */
    s = wgf_ctx_inject_validation_error(ctx, "test: injected validation error");
    if (s == WGF_ERR_UNSUPPORTED) {
        wgf_t_skip(&t, "uncaptured error", "library lacks wgpuDeviceInjectError");
    } else {
        s = wgf_ctx_wait(ctx);
        msg = wgf_ctx_last_error(ctx);
        wgf_t_check(&t, s == WGF_ERR_GPU && strstr(msg, "injected validation error"),
                    "uncaptured validation error surfaced", "%s", msg);
        wgf_t_check(&t, wgf_ctx_wait(ctx) == WGF_OK, "context usable after a reported error", "%s",
                    wgf_ctx_last_error(ctx));
        /* an error captured while a read-back is in flight: that read reports it, and the
         * staging buffer is not left mapped (the next read works) */
        wgf_buffer *rb = NULL;
        float v[4] = {1, 2, 3, 4}, got[4] = {0};
        if (wgf_buffer_create(ctx, "readback_probe", sizeof v, WGF_BUF_STORAGE, &rb) == WGF_OK) {
            wgf_buffer_write(ctx, rb, 0, v, sizeof v);
            wgf_buffer_read(ctx, rb, 0, got, sizeof got); /* creates the staging buffer */
            wgf_ctx_inject_validation_error(ctx, "test: error during read-back");
            s = wgf_buffer_read(ctx, rb, 0, got, sizeof got);
            wgf_t_check(&t, s == WGF_ERR_GPU && strstr(wgf_ctx_last_error(ctx), "error during read-back"),
                        "error during a read reported by it", "%s", wgf_ctx_last_error(ctx));
            memset(got, 0, sizeof got);
            s = wgf_buffer_read(ctx, rb, 0, got, sizeof got);
            wgf_t_check(&t, s == WGF_OK && got[3] == 4.0f, "next read works (staging not left mapped)", "%s",
                        s == WGF_OK ? "" : wgf_ctx_last_error(ctx));
            wgf_t_check(&t, wgf_ctx_wait(ctx) == WGF_OK, "next wait works (fence not left mapped)", "%s",
                        wgf_ctx_last_error(ctx));
        }
        wgf_buffer_free(rb);
    }
    wgf_ctx_free(ctx);

    /* adapter selection failures */
    struct wgf_gpu_options o = wgf_gpu_options_default();
    struct wgf_err err = {0};
    wgf_ctx *c2 = NULL;
    o.adapter = "NoSuchGPU-9000";
    s = wgf_ctx_create(&o, &c2, &err);
    wgf_t_check(&t, s == WGF_ERR_NO_ADAPTER && !c2 && strstr(err.msg, "NoSuchGPU-9000") && strstr(err.msg, "available"),
                "nonexistent adapter fails cleanly", "%s", err.msg);
    /* RELIABILITY.md #31: requestDevice itself fails (a limit above the adapter's) */
    o.adapter                   = NULL;
    o.fault.fail_request_device = true;
    s = wgf_ctx_create(&o, &c2, &err);
    wgf_t_check(&t, s == WGF_ERR_NO_ADAPTER && !c2 && strstr(err.msg, "requestDevice on '") && strstr(err.msg, "failed: ") &&
                    strlen(strstr(err.msg, "failed: ")) > strlen("failed: ") + 4,
                "requestDevice failure is a clear error with the implementation's reason", "%s", err.msg);
    o.fault.fail_request_device = false;
    s = wgf_ctx_create(&o, &c2, &err);
    wgf_t_check(&t, s == WGF_OK && c2, "a device is created after a refused requestDevice", "%s", err.msg);
    wgf_ctx_free(c2);
    c2 = NULL;
    o.adapter = "57";
    s = wgf_ctx_create(&o, &c2, &err);
    wgf_t_check(&t, s == WGF_ERR_NO_ADAPTER && !c2, "adapter index out of range", "%s", err.msg);
    o.adapter = "null";
    s = wgf_ctx_create(&o, &c2, &err);
    wgf_t_check(&t, s == WGF_ERR_NO_ADAPTER && !c2 && strstr(err.msg, "no usable WebGPU adapter") &&
                    strstr(err.msg, "Null backend") && strstr(err.msg, "Vulkan driver"),
                "Null backend refused with a hint", "%s", err.msg);
    o.adapter = "cpu";
    s = wgf_ctx_create(&o, &c2, &err);
    wgf_t_check(&t, s == WGF_OK && c2 && strcmp(wgf_ctx_adapter(c2)->backend, "null") != 0,
                "--adapter cpu picks a real CPU adapter", "%s", s == WGF_OK ? wgf_ctx_adapter(c2)->name : err.msg);
    wgf_ctx_free(c2);
    c2 = NULL;
    o.adapter  = NULL;
    o.lib_path = "/nonexistent/libwebgpu.so";
    s = wgf_ctx_create(&o, &c2, &err);
    wgf_t_check(&t, s == WGF_ERR_LIB && !c2 && strstr(err.msg, "/nonexistent/libwebgpu.so"),
                "missing WebGPU library reported", "%s", err.msg);
    o.lib_path = "libc.so.6"; /* loads, but is no webgpu.h implementation */
    s = wgf_ctx_create(&o, &c2, &err);
    wgf_t_check(&t, s == WGF_ERR_LIB && !c2 && strstr(err.msg, "lacks wgpu"), "non-WebGPU library reported", "%s",
                err.msg);
    return wgf_t_finish(&t);
}
