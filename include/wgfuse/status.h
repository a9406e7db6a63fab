/* wgfuse — status codes, error messages and checked size arithmetic.
 *
 * Every library call returns enum wgf_status (0 = OK, negative = failure). The one-line
 * detail goes into a struct wgf_err the caller owns (the GPU context embeds one and
 * exposes it as wgf_ctx_last_error()). Messages name the file/field/object involved:
 *     "model.gguf: tensor 'blk.0.attn_q.weight': offset 123 past end of data (size 100)"
 * The library never prints and never exits; only src/cli does. */
#ifndef WGFUSE_STATUS_H
#define WGFUSE_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum wgf_status {
    WGF_OK              = 0,
    WGF_ERR_ARG         = -1,  /* bad argument / usage                                  */
    WGF_ERR_IO          = -2,  /* file missing, unreadable, short read                  */
    WGF_ERR_FORMAT      = -3,  /* malformed input file (GGUF, safetensors, JSON, ...)   */
    WGF_ERR_NOMEM       = -4,  /* host allocation failed                                */
    WGF_ERR_UNSUPPORTED = -5,  /* valid but unsupported (dtype, architecture, feature)  */
    WGF_ERR_LIMIT       = -6,  /* exceeds a device or configured limit                  */
    WGF_ERR_LIB         = -7,  /* WebGPU implementation library missing / not loadable  */
    WGF_ERR_NO_ADAPTER  = -8,  /* no usable WebGPU adapter                              */
    WGF_ERR_GPU         = -9,  /* WebGPU validation / internal error                    */
    WGF_ERR_GPU_OOM     = -10, /* GPU out of memory                                     */
    WGF_ERR_SHADER      = -11, /* WGSL compile or pipeline creation failed              */
    WGF_ERR_DEVICE_LOST = -12, /* the device was lost                                   */
    WGF_ERR_TIMEOUT     = -13, /* a wait exceeded its timeout                           */
    WGF_ERR_CONTEXT     = -14, /* prompt/sequence longer than the context               */
    WGF_ERR_INTERNAL    = -15, /* a check inside wgfuse failed (a bug: please report)    */
    WGF_ERR_INTERRUPTED = -16, /* the caller asked to stop (SIGINT/SIGTERM); partial
                                  results are kept and marked incomplete                */
};

const char *wgf_status_str(enum wgf_status s);

#define WGF_ERR_MSG_MAX 1024

/* An error slot: the status and a one-line message of the last failure. */
struct wgf_err {
    enum wgf_status status;
    char            msg[WGF_ERR_MSG_MAX];
};

/* Record a failure in *e (may be NULL) and return `s`. printf-style, one line. */
enum wgf_status wgf_fail(struct wgf_err *e, enum wgf_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Make s one line in place: each newline or carriage return becomes a space (what wgf_fail
 * does to its message; for messages built elsewhere that quote input, e.g. a parser's
 * "near '...'" snippet). */
void wgf_one_line(char *s);

/* Prefix the message already in *e with "<prefix>: " (adds context while unwinding). */
enum wgf_status wgf_err_prefix(struct wgf_err *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

void wgf_err_clear(struct wgf_err *e);

/* ---- checked size arithmetic: every size computed from untrusted input goes through
 * these. They return false on overflow and leave *out unspecified. ---------------------- */
static inline bool wgf_add_u64(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_add_overflow(a, b, out); }
static inline bool wgf_mul_u64(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool wgf_add_size(size_t a, size_t b, size_t *out) { return !__builtin_add_overflow(a, b, out); }
static inline bool wgf_mul_size(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }

/* Programmer-error check: aborts with file:line in every build. Never used on input. */
#define WGF_ASSERT(x)                                                                         \
    do {                                                                                      \
        if (!(x)) wgf__assert_fail(__FILE__, __LINE__, #x);                                   \
    } while (0)
_Noreturn void wgf__assert_fail(const char *file, int line, const char *expr);

#ifdef __cplusplus
}
#endif
#endif
