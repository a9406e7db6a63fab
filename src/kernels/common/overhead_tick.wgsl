// overhead_tick — the smallest dependent kernel, for measuring per-dispatch cost.
//
// math:      counter[i] += 1.0 for i in 0..63     (64 adds per dispatch)
// fuses:     nothing; N dispatches in a row form a dependency chain (each reads what the
//            previous wrote), like a model's layers, so the final value N checks that
//            every dispatch ran
// mapping:   one workgroup of 64 invocations, invocation i owns counter[i]
// bindings:  0 counter (64) f32 read_write
// constants: none

@group(0) @binding(0) var<storage, read_write> counter : array<f32>; // (64) f32

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i : u32) {
    counter[i] = counter[i] + 1.0;
}
