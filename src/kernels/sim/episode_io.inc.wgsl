// episode_io — the bindings every episode kernel starts with (sim_episode, sim_episode_wide,
// finsim), in the order strategies.c binds them (a fragment).
//
// Role:     the state record ping-pong (state_in -> state_out), the returns, the population,
//           and the record's common end (struct Episode: return, steps, done).
// Bindings: 0 state_out (POP, STRIDE) f32 rw   1 fitness (POP) f32 rw
//           2 state_in  (POP, STRIDE) f32 r    3 params  (POP, N_PARAMS) f32 r
//           (binding 4 and up are each kernel's own: ctl, or finsim's market)
// Injected: prelude consts POP, STRIDE, N_PARAMS, MAX_STEPS.

@group(0) @binding(0) var<storage, read_write> state_out : array<f32>; // (POP, STRIDE)
@group(0) @binding(1) var<storage, read_write> fitness   : array<f32>; // (POP)
@group(0) @binding(2) var<storage, read>       state_in  : array<f32>; // (POP, STRIDE)
@group(0) @binding(3) var<storage, read>       params    : array<f32>; // (POP, N_PARAMS)

// The end of every state record: the running return, the steps taken and the done flag, at
// words at, at + 1, at + 2 (classic control: 8; finsim: 48, its return is the log equity).
struct Episode {
    ret: f32,   // return so far
    t: u32,     // steps taken
    done: bool, // terminated (or ruined)
}

fn episode_load(base: u32, at: u32) -> Episode {
    return Episode(state_in[base + at], u32(state_in[base + at + 1u]), state_in[base + at + 2u] != 0.0);
}

// Still stepping: not terminated and below the episode limit.
fn episode_running(e: Episode) -> bool { return !e.done && e.t < MAX_STEPS; }

// Write the record's end and the genome's fitness (its return so far).
fn episode_store(g: u32, base: u32, at: u32, e: Episode) {
    state_out[base + at] = e.ret;
    state_out[base + at + 1u] = f32(e.t);
    state_out[base + at + 2u] = select(0.0, 1.0, e.done);
    fitness[g] = e.ret;
}
