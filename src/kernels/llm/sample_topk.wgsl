// sample_topk — first stage of seeded sampling on the GPU: the top-k candidates of one slice
// of the vocabulary (lib_topk), so the second stage (sample_pick) looks at NCAND * KMAX
// candidates instead of the whole vocabulary.
// math:       cand[w] = the min(k, valid) best (logit desc, id asc) of logits[w*SLICE ..
//             min((w+1)*SLICE, VOCAB)), sorted, padded with (0, 0xffffffff)
// fuses:      the selection a CPU sampler does after copying every logit to the host
// workgroups: grid (NCAND); WG invocations per slice
// bindings:   0 cand (NCAND, KMAX) (key, id) read_write | 1 logits (VOCAB) f32 read
//             | 2 sp (SP_LEN) sampler parameters read
// injected:   WG, KMAX, VOCAB, SLICE, NCAND, SP_*
@group(0) @binding(0) var<storage, read_write> cand:   array<vec2<u32>>; // (NCAND, KMAX)
@group(0) @binding(1) var<storage, read>       logits: array<f32>;       // (VOCAB) f32
@group(0) @binding(2) var<storage, read>       sp:     array<u32>;       // (SP_LEN)

var<private> lo: u32;

fn key_at(i: u32) -> vec2<u32> {
    return vec2<u32>(fkey(logits[lo + i]), lo + i);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    lo = wid.x * SLICE;
    let n = min(SLICE, VOCAB - min(lo, VOCAB));
    topk_select(n, max(sp[SP_TOP_K], 1u), li);
    cand[wid.x * KMAX + li] = tk[li];
}
