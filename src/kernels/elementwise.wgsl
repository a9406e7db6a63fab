// elementwise — one elementary step per dispatch: the building blocks of the UNFUSED
// RMSNorm (6 dispatches) and MLP (7 dispatches) baselines of `wgfuse bench fusion`.
// math (OP):  0 SQUARE     y[i] = a[i] * a[i]
//             1 MEAN       y[0] = sum(a[0..N)) / N
//             2 ADD_EPS    y[0] = a[0] + EPS
//             3 RSQRT      y[0] = 1 / sqrt(a[0])
//             4 MUL_SCALAR y[i] = a[i] * b[0]
//             5 MUL        y[i] = a[i] * b[i]
//             6 SIGMOID    y[i] = 1 / (1 + exp(-a[i]))
//             7 ADD        y[i] = a[i] + b[i]
//             8 SILU_MUL   y[i] = silu(a[i]) * a[N + i]   (a = [gate; up], 2N long)
// fuses:      nothing, by design (SILU_MUL is the elementwise half of the 3-dispatch MLP).
// workgroups: 256 threads; elementwise ops: thread i -> element i, grid ceil(N / 256);
//             MEAN, ADD_EPS, RSQRT: one workgroup (MEAN reduces with a strided loop + tree).
// bindings:   0 y (N, or 1) f32 read_write | 1 a (N, or 1) f32 read | 2 b (N, or 1) f32 read
//             (ops that read no b still declare it: bind any buffer)
// injected:   OP, N, EPS (override)
override OP:  u32;
override N:   u32;
override EPS: f32 = 0.0;

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read_write> y: array<f32>; // (N) f32, or a scalar
@group(0) @binding(1) var<storage, read>       a: array<f32>; // (N) f32, or a scalar
@group(0) @binding(2) var<storage, read>       b: array<f32>; // (N) f32, or a scalar

var<workgroup> part: array<f32, WG>;

// MEAN: barriers here stay in uniform control flow (OP is an override constant).
fn mean_op(li: u32) {
    var s = 0.0;
    for (var i = li; i < N; i += WG) {
        s += a[i];
    }
    part[li] = s;
    workgroupBarrier();
    for (var h = WG / 2u; h > 0u; h >>= 1u) {
        if (li < h) {
            part[li] += part[li + h];
        }
        workgroupBarrier();
    }
    if (li == 0u) {
        y[0] = part[0] / f32(N);
    }
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(local_invocation_index) li: u32) {
    if (OP == 1u) {
        mean_op(li);
        return;
    }
    let i = gid.x;
    switch OP {
        case 2u: { if (i == 0u) { y[0] = a[0] + EPS; } }
        case 3u: { if (i == 0u) { y[0] = inverseSqrt(a[0]); } }
        default: {
            if (i >= N) {
                return;
            }
            let v = a[i];
            switch OP {
                case 0u: { y[i] = v * v; }
                case 4u: { y[i] = v * b[0]; }
                case 5u: { y[i] = v * b[i]; }
                case 6u: { y[i] = 1.0 / (1.0 + exp(-v)); }
                case 7u: { y[i] = v + b[i]; }
                case 8u: { y[i] = v / (1.0 + exp(-v)) * a[N + i]; }
                default: { y[i] = v; }
            }
        }
    }
}
