// generation — the generation counter the evolve and ES kernels advance on the GPU (a fragment).
//
// Role:     generation_advance(gen, seed): ctl_out = (gen + 1, seed, 0, 0), so generations
//           chain without host writes (the next dispatch reads it as its ctl_in). Call it
//           from one thread of the dispatch.
// Bindings: uses ctl_out (4) u32 rw, a binding of the including kernel.
// Injected: nothing.

fn generation_advance(gen: u32, seed: u32) {
    ctl_out[0] = gen + 1u;
    ctl_out[1] = seed;
    ctl_out[2] = 0u;
    ctl_out[3] = 0u;
}
