// calib_barrier — the cost of one workgroupBarrier: one workgroup passes a value around a
// ring in workgroup memory ITER times, a barrier after each write and after each read; the
// advisor times two ITER values and divides the difference by the extra barriers.
// math:       v <- sh[(lid + 1) % WG] + 1 per step; y[lid] = v
// fuses:      nothing (a measurement kernel)
// workgroups: one workgroup of WG invocations; 2 * ITER barriers
// bindings:   0 y (WG) f32 read_write
// injected:   WG, ITER (const prelude)
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
var<workgroup> sh: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
    var v = f32(lid);
    for (var k = 0u; k < ITER; k++) {
        sh[lid] = v;
        workgroupBarrier();
        v = sh[(lid + 1u) % WG] + 1.0;
        workgroupBarrier();
    }
    y[lid] = v;
}
