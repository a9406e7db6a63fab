// matmul_reduce — the second half of a split-K prefill matmul: the sum of its KSPLIT partial
// tiles, plus the bias or the residual add, into the output.
// math:       y[t, ROW0 + n] (+)= sum_z part[z, t, n] (+ b[ROW0 + n]) for the chunk's rows t, n < N
// fuses:      the partials' sum and the matmul's own epilogue (bias or residual add)
// workgroups: grid (n_rows) from the host, one token row each; WG invocations over its N columns
// bindings:   0 y (n_rows, YS) f32 read_write | 1 part (KSPLIT, T_MAX, N) f32 read
//             | 2 b (ROW0 + N) f32 read   (the rows are the grid's: no step state)
// fragments:  lib_mm_store
// injected:   WG, N, ROW0, YS, KSPLIT, T_MAX, ACCUM, HAS_BIAS
@group(0) @binding(0) var<storage, read_write> y:    array<f32>; // (rows, YS) f32
@group(0) @binding(1) var<storage, read>       part: array<f32>; // (KSPLIT, T_MAX, N) f32
@group(0) @binding(2) var<storage, read>       b:    array<f32>; // (ROW0 + N) f32

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let t = wid.x;
    for (var n = li; n < N; n += WG) {
        var v = 0.0;
        for (var z = 0u; z < KSPLIT; z++) {
            v += part[(z * T_MAX + t) * N + n];
        }
        mm_store(t, n, v);
    }
}
