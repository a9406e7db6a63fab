// attention — causal softmax attention of one token's query over the KV cache (decode),
// grouped-query: query head h reads kv head h / (N_HEADS / N_KV_HEADS).
// math:       a[p] = softmax_p(q_h . k[p, kvh] * SCALE) over p0 <= p < n_pos;
//             out[h] = sum_p a[p] * v[p, kvh]   (n_pos = step[0] = pos + 1; p0 = 0, or
//             n_pos - WINDOW for a layer with a sliding window that n_pos passes)
// fuses:      scores, softmax and the weighted sum of one head (the three steps share the
//             scores through `att`; splitting them would only add dispatches over the same
//             data, which the unfused plan keeps for the matvecs/elementwise roles).
// workgroups: one workgroup of WG_SIZE threads per query head (grid N_HEADS). Scores: thread
//             t takes positions t, t + WG_SIZE, ... (one head_dim dot each) into att; max and
//             sum by tree reductions (reduce_wg); output: thread t < HEAD_DIM sums over every
//             position for dim t (HEAD_DIM <= ATT_MAX_HEAD_DIM = WG_SIZE).
// bindings:   0 out (N_HEADS, HEAD_DIM) f32 read_write | 1 att (N_HEADS, N_CTX) f32 read_write
//             scratch scores | 2 q (N_HEADS, HEAD_DIM) f32 read | 3 kc (N_CTX, KV_DIM) f32
//             read | 4 vc (N_CTX, KV_DIM) f32 read | 5 step (1) u32 read: n_pos
// injected:   N_HEADS, N_KV_HEADS, HEAD_DIM, N_CTX (cache positions), SCALE (1/sqrt(head_dim),
//             rounded to f32 on the host as cpu-ref does), WINDOW (the layer's sliding window,
//             0: none) (override); WG_SIZE (constants.wgsl)
//#include "constants.wgsl"
//#include "common/reduce_wg.inc.wgsl"
override N_HEADS:    u32;
override N_KV_HEADS: u32;
override HEAD_DIM:   u32;
override N_CTX:      u32;
override SCALE:      f32;
override WINDOW:     u32;

@group(0) @binding(0) var<storage, read_write> out:  array<f32>; // (N_HEADS, HEAD_DIM) f32
@group(0) @binding(1) var<storage, read_write> att:  array<f32>; // (N_HEADS, N_CTX) f32
@group(0) @binding(2) var<storage, read>       q:    array<f32>; // (N_HEADS, HEAD_DIM) f32
@group(0) @binding(3) var<storage, read>       kc:   array<f32>; // (N_CTX, N_KV_HEADS * HEAD_DIM) f32
@group(0) @binding(4) var<storage, read>       vc:   array<f32>; // (N_CTX, N_KV_HEADS * HEAD_DIM) f32
@group(0) @binding(5) var<storage, read>       step: array<u32>; // (1) u32: positions to attend

const_assert ATT_MAX_HEAD_DIM <= WG_SIZE;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let h      = wid.x;
    let kv_dim = N_KV_HEADS * HEAD_DIM;
    let kvo    = (h / (N_HEADS / N_KV_HEADS)) * HEAD_DIM; // this head's kv slice
    let qo     = h * HEAD_DIM;
    let ao     = h * N_CTX;
    let n_pos  = min(step[0], N_CTX);
    let p0     = select(0u, n_pos - WINDOW, WINDOW > 0u && n_pos > WINDOW);

    // scores and their max
    var mx = -0x1.fffffep+127f;
    for (var p = p0 + li; p < n_pos; p += WG_SIZE) {
        var d = 0.0;
        for (var i = 0u; i < HEAD_DIM; i++) {
            d += q[qo + i] * kc[p * kv_dim + kvo + i];
        }
        let sc = d * SCALE;
        att[ao + p] = sc;
        mx = max(mx, sc);
    }
    mx = wg_max(li, mx);

    // exp and their sum (each thread rewrites only the scores it wrote)
    var s = 0.0;
    for (var p = p0 + li; p < n_pos; p += WG_SIZE) {
        let e = exp(att[ao + p] - mx);
        att[ao + p] = e;
        s += e;
    }
    let inv = 1.0 / wg_sum(li, s);
    storageBarrier(); // every thread's att writes visible before any thread reads them all

    // weighted sum of values, one output dim per thread
    if (li < HEAD_DIM) {
        var acc = 0.0;
        for (var p = p0; p < n_pos; p++) {
            acc += att[ao + p] * inv * vc[p * kv_dim + kvo + li];
        }
        out[qo + li] = acc;
    }
}
