/* Fuzz target policy_load: arbitrary bytes as a `sim eval` policy file through
 * wgf_sim_policy_load (issue 11: a policy whose header named rastrigin with 8 parameters made
 * sim eval read 8,000 bytes past them).
 * Invariants on every accepted file:
 *   - the workload has a policy file (an environment state) and the shape is exactly the
 *     one wgf_sim_policy_for gives for its hidden width and fed-back outputs, within
 *     wgf_sim_create's limits (hidden 1..64, 0..4 fed back);
 *   - every parameter is finite, and the vector has wgf_sim_policy_n_params floats: a
 *     3-step reference episode reads all of them (ASan sees any read past the end);
 *   - save then load gives the same workload, shape and bits.
 * A refusal is a negative status with a one-line message. */
#include <math.h>

#include "fuzz_common.h"
#include "wgfuse/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum wgf_sim_workload w;
    struct wgf_sim_policy p;
    float                *params = NULL;
    struct wgf_err        err    = {0};
    enum wgf_status       st     = wgf_sim_policy_load((const char *)data, size, &w, &p, &params, &err);
    if (st != WGF_OK) {
        fz_check_refusal(st, &err);
        FZ_REQUIRE(params == NULL, "params set on a refusal");
        return 0;
    }
    const struct wgf_sim_workload_info *wi = wgf_sim_workload_info(w);
    FZ_REQUIRE(wi && wi->n_state > 0, "workload %d has no policy file", (int)w);
    struct wgf_sim_policy want = wgf_sim_policy_for(w, p.n_hidden, p.n_feedback);
    FZ_REQUIRE(p.n_hidden >= 1 && p.n_hidden <= 64 && p.n_feedback >= 0 && p.n_feedback <= 4, "hidden %d feedback %d",
               p.n_hidden, p.n_feedback);
    FZ_REQUIRE(want.n_in == p.n_in && want.n_out == p.n_out, "shape %d-%d-%d", p.n_in, p.n_hidden, p.n_out);
    int n = wgf_sim_policy_n_params(&p);
    for (int i = 0; i < n; i++) FZ_REQUIRE(isfinite(params[i]), "parameter %d not finite", i);
    int steps = 0;
    wgf_sim_ref_episode(w, &p, params, 3, 1, 0, 0, &steps);
    FZ_REQUIRE(steps >= 1 && steps <= 3, "%d steps", steps);

    char  *text = NULL;
    size_t len  = 0;
    FZ_REQUIRE(wgf_sim_policy_save(w, &p, params, &text, &len, &err) == WGF_OK, "save: %s", err.msg);
    enum wgf_sim_workload w2;
    struct wgf_sim_policy p2;
    float                *back = NULL;
    FZ_REQUIRE(wgf_sim_policy_load(text, len, &w2, &p2, &back, &err) == WGF_OK, "reload: %s", err.msg);
    FZ_REQUIRE(w2 == w && !memcmp(&p2, &p, sizeof p) && !memcmp(back, params, (size_t)n * sizeof *back),
               "round trip differs");
    free(back);
    free(text);
    free(params);
    return 0;
}
