// copy_vec4 — y = x, 16 bytes per invocation per step: the device's copy bandwidth through a
// compute kernel (read + write), the ceiling every bandwidth figure of `wgfuse bench` is a
// percentage of.
// math:       y[i] = x[i] for i < N4
// workgroups: grid-stride: WG invocations per workgroup, grid G; invocation j of the grid
//             copies j, j + G * WG, ...
// bindings:   0 y (N4) vec4 read_write | 1 x (N4) vec4 read
// injected:   WG, N4 (const prelude)
@group(0) @binding(0) var<storage, read_write> y: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read>       x: array<vec4<u32>>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
    let stride = nwg.x * WG;
    for (var i = gid.x; i < N4; i += stride) {
        y[i] = x[i];
    }
}
