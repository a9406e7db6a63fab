// attn_qkv — the attention input of one decode token: RMSNorm, the Q/K/V projections with
// their bias, RoPE on q and k, and the store of k and v into this layer's KV cache.
// math:       h = x * g / sqrt(mean(x^2) + EPS); [q; k; v] = W_qkv h + b;
//             q, k rotated by position pos (rotate-half: pair (i, i + HALF) of each head, angle
//             index i < HALF, cos/sin from the rope table); kc[pos] = k, vc[pos] = v
// fuses:      rmsnorm, q/k/v matvecs, 3 bias adds, rope q, rope k, 2 cache stores
//             (unfused plan: 9 dispatches; one here)
// layout:     W_qkv and b are stored by PAIR (lib_pairs): rows 2p and 2p + 1 of the stored
//             matrix are the two rows pair p rotates together, so a matrix split by rows at an
//             even row keeps every pair whole; this dispatch covers pairs PAIR0 .. +N_PAIRS.
// workgroups: WG invocations = GPW row groups of TPR; a group computes PPG pairs (2 PPG rows),
//             pair (w * GPW + g) * PPG + j. Weight loads first (NIT per row), then the x^2 sum
//             (every workgroup reads all of x: DIM floats, cached), then the dots.
// bindings:   0 q  (Q_DIM) f32 read_write | 1 kc (N_CTX, KV_DIM) f32 read_write
//             | 2 vc (N_CTX, KV_DIM) f32 read_write | 3 x (DIMP) f32 read | 4 g (DIMP) f32 read
//             | 5 w  (2 N_PAIRS, KCS) chunks read | 6 b (2 ALL_PAIRS) f32 read (pair order)
//             | 7 rope (tables, N_CTX, HALF) (cos, sin) f32 read | 8 st (ST_LEN) u32 read
// parts:      the rows of W_qkv in one format each (llm/gpu/gr_weights.c); a dispatch covers one
//             part, or several quantized ones (Q4_K q/k with Q6_K v): each part's constants and
//             fragments are then a module instance of their own (wgf_prelude_instance: names
//             suffixed _1, _2, ...), bound through one range of their arena (WOFF per part), and
//             qkv_dispatch sends each workgroup to its part's qkv_rows.
// fragments:  lib_reduce_*, lib_wchunk, lib_rows or lib_rows_q + lib_qblock, lib_rows_rms,
//             lib_pairs, lib_qkv_rows (per part)
// injected:   WG, TPR, GPW, PPG, NIT, SGS, WF16, KC, KCS, DIM, DIMP, Q_DIM, KV_DIM, HD, HALF,
//             ROT, N_PAIRS, PAIR0, N_CTX, EPS, HAS_BIAS, ST_*, fn qkv_dispatch (llm/gpu/gr_kernels.c)
@group(0) @binding(0) var<storage, read_write> q:    array<f32>;       // (Q_DIM) f32
@group(0) @binding(1) var<storage, read_write> kc:   array<f32>;       // (N_CTX, KV_DIM) f32
@group(0) @binding(2) var<storage, read_write> vc:   array<f32>;       // (N_CTX, KV_DIM) f32
@group(0) @binding(3) var<storage, read>       x:    array<vec4<f32>>; // (DIMP) f32
@group(0) @binding(4) var<storage, read>       g:    array<vec4<f32>>; // (DIMP) f32 attn_norm
@group(0) @binding(5) var<storage, read>       w:    array<vec4<u32>>; // (2 N_PAIRS, KCS)
@group(0) @binding(6) var<storage, read>       b:    array<f32>;       // (2 ALL_PAIRS) f32
@group(0) @binding(7) var<storage, read>       rope: array<vec2<f32>>; // (tables, N_CTX, HALF)
@group(0) @binding(8) var<storage, read>       st:   array<u32>;       // (ST_LEN) u32

fn put(r: u32, v: f32, pos: u32) {
    if (r < Q_DIM) {
        q[r] = v;
    } else if (r < Q_DIM + KV_DIM) {
        kc[pos * KV_DIM + r - Q_DIM] = v;
    } else {
        vc[pos * KV_DIM + r - Q_DIM - KV_DIM] = v;
    }
}

var<private> inv: f32; // 1 / rms of x

// with XW the normed input's product x * g is written once per workgroup (xprep) and every
// matvec lane reads it from workgroup memory: one load instead of two and a multiply; vec4 i
// sits at i + i / XWP (a quantized part's lanes read items of XWP vec4 each: the padding
// spreads them over the banks)
var<workgroup> xw: array<vec4<f32>, XWN>;

fn xin(i: u32) -> vec4<f32> {
    if (XW) {
        return xw[i + i / XWP];
    }
    return x[i] * g[i];
}

fn xprep(li: u32) {
    if (XW) {
        for (var i = li; i < DIMP / 4u; i += WG) {
            xw[i + i / XWP] = x[i] * g[i];
        }
    }
    inv = rows_rms(li, 0u); // its barrier orders the xw writes before the reads
}

// ACT_Q8 (quantized rows, --activations q8) rounds the normed input as cpu-ref computes it;
// the sums then carry the 1 / rms already (isc in lib_qkv_rows)
fn xq_in(i: u32) -> vec4<f32> {
    return g[i] * (x[i] * inv);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    qkv_dispatch(wid.x, li); // the emitter's: qkv_rows of the part that workgroup wid.x belongs to
}
