// calib_read — the read bandwidth a matvec sees: every invocation sums a strided share of a
// large f32 vec4 array and writes one float, so the traffic is reads (the writes are 4 bytes
// per invocation against N4 * 16 read). The advisor runs it over a full grid (the device's
// read bandwidth) and over one workgroup (what a single-workgroup dispatch can pull).
// math:       y[j] = sum over i = j, j + G*WG, ... < N4 of (x[i].x + x[i].y + x[i].z + x[i].w)
// fuses:      nothing (a measurement kernel)
// workgroups: WG invocations, grid G (any); grid-stride over N4
// bindings:   0 y (G * WG) f32 read_write | 1 x (N4) vec4<f32> read
// injected:   WG, N4 (const prelude)
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@group(0) @binding(1) var<storage, read>       x: array<vec4<f32>>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
    let stride = nwg.x * WG;
    var s = vec4<f32>(0.0);
    for (var i = gid.x; i < N4; i += stride) {
        s += x[i];
    }
    y[gid.x] = (s.x + s.y) + (s.z + s.w);
}
