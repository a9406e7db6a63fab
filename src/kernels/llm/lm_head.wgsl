// lm_head — the logits of one token: the final RMSNorm and the output projection over one
// row chunk of the vocabulary, plus (ARGMAX) each workgroup's best logit for greedy decoding.
// math:       h = x[XR] * g / sqrt(mean(x[XR]^2) + EPS); logits[ROW0 + r] = W[r] . h for r < N;
//             best[BEST0 + w] = (max over the workgroup's rows, lowest id among equal values),
//             non-finite logits counting as -infinity (as the CPU sampler's clean())
// fuses:      final norm, lm_head matvec, the first stage of argmax (3 -> 1)
// workgroups: as gemv: GPW row groups of TPR invocations, RPG rows per group; then the
//             workgroup's GPW * RPG logits are reduced to one (value, id) pair in workgroup memory.
//             XR = 0 (decode x), or with XROW_ST the last row of a prefill chunk (st[ST_NTOK] - 1)
// bindings:   0 logits (ROW0 + N) f32 read_write | 1 best (BEST0 + grid) (f32 bits, id) u32
//             read_write | 2 x (rows, DIMP) f32 read | 3 g (DIMP) f32 read | 4 w (N, KC) chunks
//             read | 5 st (ST_LEN) u32 read
// fragments:  lib_reduce_*, lib_wchunk, lib_rows
// injected:   WG, TPR, GPW, RPG, NIT, SGS, WF16, KC, KCS, DIM, DIMP, N, ROW0, BEST0, EPS, ARGMAX, XROW_ST
@group(0) @binding(0) var<storage, read_write> logits: array<f32>;       // (vocab) f32
@group(0) @binding(1) var<storage, read_write> best:   array<vec2<u32>>; // (workgroups)
@group(0) @binding(2) var<storage, read>       x:      array<vec4<f32>>; // (rows, DIMP) f32
@group(0) @binding(3) var<storage, read>       g:      array<vec4<f32>>; // (DIMP) f32 output_norm
@group(0) @binding(4) var<storage, read>       w:      array<vec4<u32>>; // (N, KCS) chunks
@group(0) @binding(5) var<storage, read>       st:     array<u32>;       // (ST_LEN) u32

const NEG: f32 = -3.4e38;

var<workgroup> bv: array<f32, GPW * RPG>;
var<private>   xo:  u32; // first vec4 of the input row
var<private>   inv: f32; // 1 / rms of it

// with XW the normed input's product x * g is written once per workgroup (xprep) and every
// matvec lane reads it from workgroup memory: one load instead of two and a multiply; vec4 i
// sits at i + i / XWP (a quantized part's lanes read items of XWP vec4 each: the padding
// spreads them over the banks)
var<workgroup> xw: array<vec4<f32>, XWN>;

fn xin(i: u32) -> vec4<f32> {
    if (XW) {
        return xw[i + i / XWP];
    }
    return x[xo + i] * g[i];
}

fn xprep(li: u32) {
    if (XW) {
        for (var i = li; i < DIMP / 4u; i += WG) {
            xw[i + i / XWP] = x[xo + i] * g[i];
        }
    }
    inv = rows_rms(li, xo); // its barrier orders the xw writes before the reads
}

// ACT_Q8 (quantized rows, --activations q8) rounds the normed input as cpu-ref computes it;
// the sums then carry the 1 / rms already
fn xq_in(i: u32) -> vec4<f32> {
    return g[i] * (x[xo + i] * inv);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let grp  = li / TPR;
    let row0 = (wid.x * GPW + grp) * RPG;
    let lane = li % TPR;
    xo = 0u;
    if (XROW_ST) {
        xo = (st[ST_NTOK] - 1u) * (DIMP / 4u);
    }
    let v = rows_run(row0, N, lane, li) * select(inv, 1.0, ACT_Q8);
    if (lane == 0u) {
        for (var j = 0u; j < RPG; j++) {
            let r = row0 + j;
            if (r < N) {
                logits[ROW0 + r] = v[j];
            }
            // finite values only, tested on the bits (a compiler may assume floats are finite)
            let ok = r < N && (bitcast<u32>(v[j]) & 0x7f800000u) != 0x7f800000u;
            bv[grp * RPG + j] = select(NEG, v[j], ok);
        }
    }
    if (ARGMAX) {
        workgroupBarrier();
        if (li == 0u) {
            var bi = 0xffffffffu;
            var bx = NEG;
            for (var j = 0u; j < GPW * RPG; j++) {
                let r = wid.x * GPW * RPG + j;
                if (r < N && bv[j] > bx) {
                    bx = bv[j];
                    bi = ROW0 + r;
                }
            }
            best[BEST0 + wid.x] = vec2<u32>(bitcast<u32>(bx), bi);
        }
    }
}
