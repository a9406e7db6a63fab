/* wgfuse — a bounded Jinja engine for chat templates (private to src/llm/).
 *
 * What it renders: the subset of Jinja2 that Hugging Face chat templates use, with the
 * environment transformers builds for them (ImmutableSandboxedEnvironment, trim_blocks,
 * lstrip_blocks, the loopcontrols extension, its own tojson / raise_exception /
 * strftime_now, and the {% generation %} tag rendering its body). docs/chat_templates.md
 * lists the constructs.
 *
 * Bounds: parsing refuses nesting deeper than WGF__JINJA_MAX_DEPTH; one render stops with
 * an error past the limits below (steps, output bytes, memory, macro call depth), so no
 * template and no message list can loop or allocate without limit.
 *
 * Content tracking: every string value carries, when any of its bytes came from a variable
 * marked `content` (the chat messages), a per-byte mask; the mask follows the bytes through
 * concatenation, slicing, stripping and splitting, and any other operation on such a string
 * marks its whole result. The rendered output's mask tells the tokenizer which bytes may
 * not form special tokens. */
#ifndef WGFUSE_LLM_JINJA_H
#define WGFUSE_LLM_JINJA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wgfuse/status.h"

/* Nesting of blocks and expressions a template may have (the parser and the evaluator
 * recurse on it; the bound keeps the C stack small). */
#define WGF__JINJA_MAX_DEPTH 200u

struct wgf__jinja_limits {
    uint64_t max_steps;  /* evaluation steps: nodes, loop iterations, units of copying     */
    size_t   max_output; /* bytes of rendered text; also the longest string value           */
    size_t   max_mem;    /* bytes allocated during one render (values, strings, the output) */
    size_t   max_alloc;  /* largest single allocation                                      */
    uint32_t max_calls;  /* macro calls nested inside each other                           */
};

/* The defaults for a render whose variables hold `input_bytes` bytes of strings: 20M steps,
 * 4 MiB + 4x the input of output, 64 MiB + 16x the input of memory, 64 nested calls. */
void wgf__jinja_limits_default(struct wgf__jinja_limits *l, size_t input_bytes);

struct wgf__jinja; /* a parsed template: immutable, shareable between threads */

/* Parse len bytes of template source. Errors (WGF_ERR_FORMAT) say "line L, column C: what".
 * *out is owned by the caller (wgf__jinja_free). */
enum wgf_status wgf__jinja_parse(const char *src, size_t len, struct wgf__jinja **out, struct wgf_err *err);
void            wgf__jinja_free(struct wgf__jinja *t);

/* One variable of a render. value is borrowed. content: every string inside came from the
 * user (message text), so its bytes are marked in the output mask. */
struct wgf__jinja_var {
    const char *name;
    json_t     *value;
    bool        content;
};

/* The result of a render: text (NUL-terminated, len bytes, may contain NULs) and mask[len]
 * (1 = the byte came from a content variable). Both malloc'd, owned by the caller. */
struct wgf__jinja_out {
    char          *text;
    unsigned char *mask;
    size_t         len;
};

/* Render t with the variables. `now` is the time strftime_now formats (seconds since the
 * epoch, local time zone); < 0 = the host clock at the call. Errors: WGF_ERR_ARG for what
 * the template or its input caused (raise_exception's message, an undefined value used, a
 * type error, a limit reached), each "line L, column C: what"; WGF_ERR_NOMEM. */
enum wgf_status wgf__jinja_render(const struct wgf__jinja *t, const struct wgf__jinja_var *vars, size_t n_vars,
                                  const struct wgf__jinja_limits *limits, int64_t now, struct wgf__jinja_out *out,
                                  struct wgf_err *err);

#endif
