// elementwise — one elementary step per dispatch: the building blocks of `wgfuse bench fusion`'s
// UNFUSED RMSNorm (6 dispatches) and MLP (7 dispatches) baselines, and the residual ADD and
// SILU_MUL roles of the LLM's unfused plan.
// math (OP, codes EW_* in constants.def):
//             EW_SQUARE     y[i] = a[i] * a[i]
//             EW_MEAN       y[0] = sum(a[0..N)) / N
//             EW_ADD_EPS    y[0] = a[0] + EPS
//             EW_RSQRT      y[0] = 1 / sqrt(a[0])
//             EW_MUL_SCALAR y[i] = a[i] * b[0]
//             EW_MUL        y[i] = a[i] * b[i]
//             EW_SIGMOID    y[i] = 1 / (1 + exp(-a[i]))
//             EW_ADD        y[i] = a[i] + b[i]
//             EW_SILU_MUL   y[i] = silu(a[i]) * a[N + i]   (a = [gate; up], 2N long)
// fuses:      nothing, by design (SILU_MUL is the elementwise half of the 3-dispatch MLP).
// workgroups: WG_SIZE threads; elementwise ops: thread i -> element i, grid ceil(N / WG_SIZE);
//             MEAN, ADD_EPS, RSQRT: one workgroup (MEAN: a strided loop + reduce_wg's tree).
// bindings:   0 y (N, or 1) f32 read_write | 1 a (N, or 1) f32 read | 2 b (N, or 1) f32 read
//             (ops that read no b still declare it: bind any buffer)
// injected:   OP, N, EPS (override); WG_SIZE, EW_* (constants.wgsl)
//#include "constants.wgsl"
//#include "common/reduce_wg.inc.wgsl"
override OP:  u32;
override N:   u32;
override EPS: f32 = 0.0;

@group(0) @binding(0) var<storage, read_write> y: array<f32>; // (N) f32, or a scalar
@group(0) @binding(1) var<storage, read>       a: array<f32>; // (N) f32, or a scalar
@group(0) @binding(2) var<storage, read>       b: array<f32>; // (N) f32, or a scalar

// MEAN: the barriers stay in uniform control flow (OP is an override constant).
fn mean_op(li: u32) {
    var s = 0.0;
    for (var i = li; i < N; i += WG_SIZE) {
        s += a[i];
    }
    let total = wg_sum(li, s);
    if (li == 0u) {
        y[0] = total / f32(N);
    }
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(local_invocation_index) li: u32) {
    if (OP == EW_MEAN) {
        mean_op(li);
        return;
    }
    let i = gid.x;
    switch OP {
        case EW_ADD_EPS: { if (i == 0u) { y[0] = a[0] + EPS; } }
        case EW_RSQRT: { if (i == 0u) { y[0] = inverseSqrt(a[0]); } }
        default: {
            if (i >= N) {
                return;
            }
            let v = a[i];
            switch OP {
                case EW_SQUARE: { y[i] = v * v; }
                case EW_MUL_SCALAR: { y[i] = v * b[0]; }
                case EW_MUL: { y[i] = v * b[i]; }
                case EW_SIGMOID: { y[i] = 1.0 / (1.0 + exp(-v)); }
                case EW_ADD: { y[i] = v + b[i]; }
                case EW_SILU_MUL: { y[i] = v / (1.0 + exp(-v)) * a[N + i]; }
                default: { y[i] = v; }
            }
        }
    }
}
