// fitness — the NaN-safe fitness read every GA and ES kernel ranks by (a fragment).
//
// Role:     fit(i) = fitness[i], with a NaN counted as -3e38 so it ranks below everything and
//           the order stays total (evolve, evolve_wide, evolve_select, es).
// Math:     a bit test (compilers may fold x != x away): |bits| > 0x7f800000 is a NaN.
// Bindings: uses `fitness` (POP) f32, a binding of the including kernel.
// Injected: nothing.

fn fit(i: u32) -> f32 {
    let f = fitness[i];
    if ((bitcast<u32>(f) & 0x7fffffffu) > 0x7f800000u) {
        return -3.0e38;
    }
    return f;
}
