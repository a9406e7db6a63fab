// calib_subgroup — the cost of one subgroup reduction (subgroupAdd), the step the reductions
// of common/lib_reduce_sg take: one workgroup runs ITER dependent reductions; the advisor times
// two ITER values and divides the difference by the extra reductions.
// math:       v <- subgroupAdd(v) * (1 / 64) + 1 per step; y[lid] = v
// fuses:      nothing (a measurement kernel)
// workgroups: one workgroup of WG invocations
// bindings:   0 y (WG) f32 read_write
// injected:   WG, ITER (const prelude, after `enable subgroups;`)
@group(0) @binding(0) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
    var v = f32(lid);
    for (var k = 0u; k < ITER; k++) {
        v = subgroupAdd(v) * (1.0 / 64.0) + 1.0;
    }
    y[lid] = v;
}
