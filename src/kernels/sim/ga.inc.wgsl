// ga — the GA's settings and its order, shared by every evolve kernel (a fragment).
//
// Role:     struct Ga (the `ga` uniform: elites, tournament, mut_rate, mut_sigma; layout of
//           struct ga_uniform in src/sim/evolve.c) and better(a, b): genome a ranks above b.
// Math:     better(a, b) = f_a > f_b or (f_a = f_b and a < b): a strict total order (with
//           fit()'s NaN rule), so every evolve variant ranks identically.
// Bindings: none (the kernels bind `ga` themselves, at different indices).
// Injected: nothing.

struct Ga {
    elites: u32,
    tournament: u32,
    mut_rate: f32,
    mut_sigma: f32,
}

fn better(a: u32, fa: f32, b: u32, fb: f32) -> bool {
    return fa > fb || (fa == fb && a < b);
}
