/* util/status: an error message is one line, as src/util/status.c documents (issue 19 found
 * its comment promising " | " where the code writes a space; the comment now says a space).
 *   - wgf_fail: every '\n' and '\r' of the formatted message (Dawn's reports span lines)
 *     becomes one space, in place; the status is stored and returned;
 *   - wgf_err_prefix: "<prefix>: <old message>", also one line, the stored status returned;
 *   - NULL error slot: wgf_fail returns the status, wgf_err_prefix WGF_ERR_INTERNAL.
 * Mutation caught (tried): removing one_line() from wgf_fail or wgf_err_prefix. */
#include <string.h>

#include "harness.h"

int main(void)
{
    struct wgf_t   t = {0};
    struct wgf_err e = {0};
    enum wgf_status s = wgf_fail(&e, WGF_ERR_GPU, "shader '%s':\nline 4: bad\r\nline 5: worse\n", "rmsnorm");
    wgf_t_check(&t, s == WGF_ERR_GPU && e.status == WGF_ERR_GPU, "wgf_fail returns and stores the status", "%d %d", s,
                e.status);
    wgf_t_check(&t, !strcmp(e.msg, "shader 'rmsnorm': line 4: bad  line 5: worse "),
                "wgf_fail: each newline and carriage return becomes a space", "'%s'", e.msg);

    s = wgf_err_prefix(&e, "load '%s'\n(retry)", "m.gguf");
    wgf_t_check(&t, s == WGF_ERR_GPU && !strcmp(e.msg, "load 'm.gguf' (retry): shader 'rmsnorm': line 4: bad  line 5: worse "),
                "wgf_err_prefix: prefix, colon, old message, one line", "%d '%s'", s, e.msg);

    wgf_t_check(&t, wgf_fail(NULL, WGF_ERR_ARG, "x\n") == WGF_ERR_ARG, "wgf_fail(NULL) returns the status", NULL);
    wgf_t_check(&t, wgf_err_prefix(NULL, "p") == WGF_ERR_INTERNAL, "wgf_err_prefix(NULL) is WGF_ERR_INTERNAL", NULL);
    wgf_err_clear(&e);
    wgf_t_check(&t, e.status == WGF_OK && e.msg[0] == 0, "wgf_err_clear empties the slot", "'%s'", e.msg);
    return wgf_t_finish(&t);
}
