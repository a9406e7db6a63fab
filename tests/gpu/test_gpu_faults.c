/* Runtime fault injection: the Nth buffer / shader / pipeline / map fails through the real
 * error path; partial work is freed; device loss makes every call fail fast and a new
 * context works afterwards. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "wgfuse/gpu.h"

static wgf_ctx *ctx_with(struct wgf_t *t, struct wgf_fault_plan f)
{
    struct wgf_gpu_options o = wgf_gpu_options_default();
    o.fault = f;
    wgf_ctx *c = NULL;
    struct wgf_err e = {0};
    if (wgf_ctx_create(&o, &c, &e) != WGF_OK) wgf_t_check(t, false, "context", "%s", e.msg);
    return c;
}

int main(void)
{
    struct wgf_t t = {0};
    /* 3rd buffer creation fails with out-of-memory; the 4th works again */
    wgf_ctx *c = ctx_with(&t, (struct wgf_fault_plan){.fail_buffer_create = 3});
    if (!c) return wgf_t_finish(&t);
    wgf_buffer *b[4] = {0};
    enum wgf_status s[4];
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "layer%d.weight", i);
        s[i] = wgf_buffer_create(c, name, 1 << 16, WGF_BUF_STORAGE, &b[i]);
    }
    wgf_t_check(&t, s[0] == WGF_OK && s[1] == WGF_OK && s[3] == WGF_OK, "other buffers fine", NULL);
    wgf_t_check(&t, s[2] == WGF_ERR_GPU_OOM && !b[2], "injected OOM on 3rd buffer", "status %d", s[2]);
    for (int i = 0; i < 4; i++) wgf_buffer_free(b[i]);
    wgf_t_check(&t, wgf_ctx_wait(c) == WGF_OK, "context survives the OOM", "%s", wgf_ctx_last_error(c));
    wgf_ctx_free(c);

    /* shader and pipeline creation faults */
    c = ctx_with(&t, (struct wgf_fault_plan){.fail_shader = 1});
    if (c) {
        wgf_pipeline *p = NULL;
        enum wgf_status st = wgf_pipeline_for_kernel(c, "selfcheck_saxpy", &p);
        wgf_t_check(&t, st == WGF_ERR_SHADER && !p && strstr(wgf_ctx_last_error(c), "selfcheck_saxpy"),
                    "injected shader failure", "%s", wgf_ctx_last_error(c));
        st = wgf_pipeline_for_kernel(c, "selfcheck_saxpy", &p);
        wgf_t_check(&t, st == WGF_OK && p, "retry after shader failure builds", "%s", wgf_ctx_last_error(c));
        wgf_ctx_free(c);
    }
    c = ctx_with(&t, (struct wgf_fault_plan){.fail_pipeline = 1});
    if (c) {
        wgf_pipeline *p = NULL;
        enum wgf_status st = wgf_pipeline_for_kernel(c, "selfcheck_saxpy", &p);
        wgf_t_check(&t, st == WGF_ERR_SHADER && !p && strstr(wgf_ctx_last_error(c), "pipeline creation"),
                    "injected pipeline failure", "%s", wgf_ctx_last_error(c));
        wgf_ctx_free(c);
    }
    /* map failure on read-back */
    c = ctx_with(&t, (struct wgf_fault_plan){.fail_map = 1});
    if (c) {
        wgf_buffer *x = NULL;
        float v[4] = {1, 2, 3, 4}, got[4];
        wgf_buffer_create(c, "logits", sizeof v, WGF_BUF_STORAGE, &x);
        wgf_buffer_write(c, x, 0, v, sizeof v);
        enum wgf_status st = wgf_buffer_read(c, x, 0, got, sizeof got);
        wgf_t_check(&t, st == WGF_ERR_GPU && strstr(wgf_ctx_last_error(c), "mapAsync failed") &&
                        strstr(wgf_ctx_last_error(c), "logits"),
                    "injected map failure", "%s", wgf_ctx_last_error(c));
        st = wgf_buffer_read(c, x, 0, got, sizeof got);
        wgf_t_check(&t, st == WGF_OK && got[3] == 4, "next read works", "%s", wgf_ctx_last_error(c));
        wgf_buffer_free(x);
        wgf_ctx_free(c);
    }
    /* device loss: stop fast, clear message, new device works. A recorder and a pipeline made
     * before the loss: every later recording call fails at once too (docs/runtime.md), not
     * only the next wait. Mutation caught: dropping check_lost() from wgf_recorder_dispatch
     * (or _copy, or wgf__check from wgf_timer_create) fails the matching check below. */
    c = ctx_with(&t, (struct wgf_fault_plan){0});
    if (c) {
        wgf_buffer *x = NULL, *u = NULL;
        wgf_pipeline *p = NULL;
        wgf_bind_group *bg = NULL;
        wgf_recorder *r = NULL;
        wgf_buffer_create(c, "state", 64, WGF_BUF_STORAGE, &x);
        wgf_buffer_create(c, "params", 16, WGF_BUF_UNIFORM, &u);
        bool rig = wgf_pipeline_for_kernel(c, "selfcheck_saxpy", &p) == WGF_OK &&
                   wgf_bind_group_create(c, p, (wgf_buffer *[]){x, x, u}, 3, &bg) == WGF_OK &&
                   wgf_recorder_begin(c, "before_loss", NULL, &r) == WGF_OK;
        wgf_t_check(&t, rig, "device loss: recorder made before the loss", "%s", wgf_ctx_last_error(c));
        enum wgf_status st = wgf_ctx_force_loss(c, "test: forced device loss");
        if (st == WGF_ERR_UNSUPPORTED) {
            wgf_t_skip(&t, "device loss", "library lacks wgpuDeviceForceLoss");
        } else {
            if (rig) {
                st = wgf_recorder_dispatch(r, p, bg, 1, 1, 1);
                wgf_t_check(&t, st == WGF_ERR_DEVICE_LOST && strstr(wgf_ctx_last_error(c), "before_loss"),
                            "dispatch after loss fails at once, naming the recorder", "%d %s", st,
                            wgf_ctx_last_error(c));
                st = wgf_recorder_copy(r, x, 0, x, 32, 16);
                wgf_t_check(&t, st == WGF_ERR_DEVICE_LOST, "copy after loss fails at once", "%d %s", st,
                            wgf_ctx_last_error(c));
                wgf_recorder_abandon(r);
            }
            wgf_timer *tm = NULL;
            st = wgf_timer_create(c, "after_loss", 4, &tm);
            wgf_t_check(&t, st == WGF_ERR_DEVICE_LOST && !tm, "timer create after loss fails at once", "%d %s", st,
                        wgf_ctx_last_error(c));
            wgf_timer_free(tm);
            uint64_t t0 = wgf_now_ns();
            float got[16];
            st = wgf_buffer_read(c, x, 0, got, sizeof got);
            double ms = (double)(wgf_now_ns() - t0) * 1e-6;
            wgf_t_check(&t, st == WGF_ERR_DEVICE_LOST && wgf_ctx_lost(c) && strstr(wgf_ctx_last_error(c), "device lost"),
                        "read after loss reports device lost", "%s (%.1f ms)", wgf_ctx_last_error(c), ms);
            wgf_buffer *y = NULL;
            st = wgf_buffer_create(c, "after_loss", 64, WGF_BUF_STORAGE, &y);
            wgf_t_check(&t, st == WGF_ERR_DEVICE_LOST && !y, "create after loss fails fast", "%s", wgf_ctx_last_error(c));
        }
        if (st == WGF_ERR_UNSUPPORTED) wgf_recorder_abandon(r);
        wgf_bind_group_free(bg);
        wgf_buffer_free(u);
        wgf_buffer_free(x);
        wgf_ctx_free(c);
        c = ctx_with(&t, (struct wgf_fault_plan){0});
        double e = 1;
        wgf_t_check(&t, c && wgf_gpu_selfcheck(c, 256, 5, &e) == WGF_OK, "a new device works after loss", "%s",
                    c ? wgf_ctx_last_error(c) : "");
        wgf_ctx_free(c);
    }
    return wgf_t_finish(&t);
}
