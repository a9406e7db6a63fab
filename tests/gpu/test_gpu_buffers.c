/* Runtime: buffer round trips of random data at several sizes (incl. a non-multiple of 4
 * and one above 1 MiB), partial ranges, alignment and range errors, fill. On a CPU adapter
 * (lavapipe in CI) the waits block in wgpuInstanceWaitAny, so every read-back here goes
 * through that path; a short timeout still ends a wait with WGF_ERR_TIMEOUT there
 * (test_gpu_fault_sweep's 1 ms fitness read). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/gpu.h"

int main(void)
{
    struct wgf_t t = {0};
    wgf_ctx *ctx = wgf_t_gpu(&t);
    if (!ctx) return wgf_t_finish(&t);
    bool cpu = !strcmp(wgf_ctx_adapter(ctx)->type, "cpu");
    wgf_t_check(&t, wgf_ctx_waits_block(ctx) == cpu, "waits block on a CPU adapter, poll on a GPU",
                "adapter type %s, waits %s", wgf_ctx_adapter(ctx)->type, wgf_ctx_waits_block(ctx) ? "block" : "poll");
    struct wgf_rng r;
    wgf_rng_seed(&r, 1234);
    const size_t sizes[] = {4, 7, 1001, 65536, (3u << 19) + 3 /* 1.5 MiB + 3 */};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        uint8_t *src = malloc(n), *dst = malloc(n);
        for (size_t i = 0; i < n; i++) src[i] = (uint8_t)wgf_rng_u64(&r);
        memset(dst, 0xAB, n);
        wgf_buffer *b = NULL;
        char name[64];
        snprintf(name, sizeof name, "round trip %zu bytes", n);
        enum wgf_status s = wgf_buffer_create(ctx, "roundtrip", n, WGF_BUF_STORAGE, &b);
        if (wgf_t_check(&t, s == WGF_OK, name, "create: %s", wgf_ctx_last_error(ctx))) {
            s = wgf_buffer_write(ctx, b, 0, src, n);
            if (s == WGF_OK) s = wgf_buffer_read(ctx, b, 0, dst, n);
            wgf_t_check(&t, s == WGF_OK && !memcmp(src, dst, n), name, "%s",
                        s == WGF_OK ? (memcmp(src, dst, n) ? "data differs" : "") : wgf_ctx_last_error(ctx));
            wgf_t_check(&t, wgf_buffer_size(b) == n, "logical size kept", "%llu", (unsigned long long)wgf_buffer_size(b));
            if (n >= 16) { /* an interior aligned range */
                uint8_t part[8];
                s = wgf_buffer_read(ctx, b, 4, part, 8);
                wgf_t_check(&t, s == WGF_OK && !memcmp(part, src + 4, 8), "partial read", NULL);
                s = wgf_buffer_write(ctx, b, 1, src, 4);
                wgf_t_check(&t, s == WGF_ERR_ARG && strstr(wgf_ctx_last_error(ctx), "roundtrip"),
                            "unaligned interior write refused", "%s", wgf_ctx_last_error(ctx));
            }
            s = wgf_buffer_read(ctx, b, 0, dst, n + 4);
            wgf_t_check(&t, s == WGF_ERR_ARG, "read past end refused", "%s", wgf_ctx_last_error(ctx));
        }
        wgf_buffer_free(b);
        free(src);
        free(dst);
    }
    /* fill with a poison pattern */
    wgf_buffer *b = NULL;
    if (wgf_buffer_create(ctx, "poisoned", 4096, WGF_BUF_STORAGE, &b) == WGF_OK) {
        uint32_t got[1024];
        wgf_buffer_fill_u32(ctx, b, 0x7FC00BADu);
        enum wgf_status s = wgf_buffer_read(ctx, b, 0, got, sizeof got);
        bool all = s == WGF_OK;
        for (int i = 0; i < 1024 && all; i++) all = got[i] == 0x7FC00BADu;
        wgf_t_check(&t, all, "fill_u32 pattern", NULL);
    }
    wgf_buffer_free(b);
    /* zero size and missing label are argument errors, not crashes */
    wgf_t_check(&t, wgf_buffer_create(ctx, "empty", 0, WGF_BUF_STORAGE, &b) == WGF_ERR_ARG && !b, "size 0 refused",
                "%s", wgf_ctx_last_error(ctx));
    wgf_t_check(&t, wgf_buffer_create(ctx, NULL, 16, WGF_BUF_STORAGE, &b) == WGF_ERR_ARG, "unlabelled refused", "%s",
                wgf_ctx_last_error(ctx));
    wgf_ctx_free(ctx);
    return wgf_t_finish(&t);
}
