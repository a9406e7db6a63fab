// sample_argmax — greedy sampling on the GPU: the token with the largest logit (lowest id
// among equal ones, non-finite logits ignored: the CPU sampler's rule), then lib_advance
// (token into seq, its embedding into x, position + 1).
// math:       tok = argmax over best[0..NBEST) of (value desc, id asc); advance(tok)
// fuses:      argmax second stage, embedding gather, position/rope/step bookkeeping
//             (the host round trip of an unfused decode loop: read logits, argmax, write token)
// workgroups: one workgroup of WG invocations: strided scan of the lm_head partials, then a
//             tree reduction in workgroup memory
// bindings:   0 x (DIMP) f32 read_write | 1 st (ST_LEN) u32 read_write | 2 seq (N_CTX + 1) u32
//             read_write | 3 best (NBEST) (f32 bits, id) read | 4..8 emb0..emb4 read
// injected:   WG, WF16, KC, DIMP, EMB_ROWS, NBEST, ROPE_ORIG, ST_*
@group(0) @binding(0) var<storage, read_write> x:    array<vec4<f32>>; // (DIMP) f32
@group(0) @binding(1) var<storage, read_write> st:   array<u32>;       // (ST_LEN) u32
@group(0) @binding(2) var<storage, read_write> seq:  array<u32>;       // (N_CTX + 1) ids
@group(0) @binding(3) var<storage, read>       best: array<vec2<u32>>; // (NBEST)
@group(0) @binding(4) var<storage, read>       emb0: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read>       emb1: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read>       emb2: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read>       emb3: array<vec4<u32>>;
@group(0) @binding(8) var<storage, read>       emb4: array<vec4<u32>>;

var<workgroup> tv: array<f32, WG>;
var<workgroup> ti: array<u32, WG>;

fn better(v: f32, i: u32, bv: f32, bi: u32) -> bool {
    return i != 0xffffffffu && (bi == 0xffffffffu || v > bv || (v == bv && i < bi));
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32) {
    let pos = st[ST_POS];
    var bx  = 0.0;
    var bi  = 0xffffffffu;
    for (var j = li; j < NBEST; j += WG) {
        let e = best[j];
        let v = bitcast<f32>(e.x);
        if (better(v, e.y, bx, bi)) {
            bx = v;
            bi = e.y;
        }
    }
    tv[li] = bx;
    ti[li] = bi;
    workgroupBarrier();
    for (var h = WG >> 1u; h > 0u; h >>= 1u) {
        if (li < h && better(tv[li + h], ti[li + h], tv[li], ti[li])) {
            tv[li] = tv[li + h];
            ti[li] = ti[li + h];
        }
        workgroupBarrier();
    }
    advance(ti[0], pos, li);
}
