// subgroup_probe — how this adapter forms subgroups in a 256-invocation workgroup, so the
// subgroup reductions (lib_reduce_sg) are used only where their assumption holds: subgroups
// of one fixed size S made of consecutive local indices (lane = local index % S).
// math:       out[i] = (subgroup_size, subgroup_invocation_id) of local invocation i
// workgroups: one workgroup of 256
// bindings:   0 out (256) vec2<u32> read_write
enable subgroups;

@group(0) @binding(0) var<storage, read_write> out: array<vec2<u32>>; // (256)

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) li: u32, @builtin(subgroup_size) sgs: u32,
        @builtin(subgroup_invocation_id) lane: u32) {
    out[li] = vec2<u32>(sgs, lane);
}
