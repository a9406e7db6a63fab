// sample_penalty — the repetition penalty on the GPU, before selection: every distinct id of
// the last SP_LAST_N tokens (prompt and generated, seq[0..pos]) has its logit divided by the
// penalty when positive, multiplied when not (llama.cpp's rule, src/llm/sampling.c).
// math:       for each distinct t in seq[max(0, pos + 1 - n) .. pos + 1):
//             logits[t] = logits[t] > 0 ? logits[t] / p : logits[t] * p
// fuses:      nothing; it runs only when the penalty is not 1
// workgroups: one workgroup; invocation i takes window entries i, i + WG, ...; an entry acts
//             only if its id does not occur earlier in the window (so each id once): O(n^2 / WG)
//             compares for a window of n (64 by default: 16 per invocation)
// bindings:   0 logits (VOCAB) f32 read_write | 1 seq (N_CTX + 1) u32 read | 2 st read | 3 sp read
// injected:   WG, VOCAB, ST_*, SP_*
@group(0) @binding(0) var<storage, read_write> logits: array<f32>; // (VOCAB) f32
@group(0) @binding(1) var<storage, read>       seq:    array<u32>; // (N_CTX + 1) ids
@group(0) @binding(2) var<storage, read>       st:     array<u32>; // (ST_LEN)
@group(0) @binding(3) var<storage, read>       sp:     array<u32>; // (SP_LEN)

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32) {
    let n_hist = st[ST_POS] + 1u;
    let first  = n_hist - min(sp[SP_LAST_N], n_hist);
    let p      = bitcast<f32>(sp[SP_PENALTY]);
    for (var j = first + li; j < n_hist; j += WG) {
        let t     = seq[j];
        var fresh = t < VOCAB;
        for (var i = first; i < j && fresh; i++) {
            fresh = seq[i] != t;
        }
        if (fresh) {
            let l = logits[t];
            logits[t] = select(l * p, l / p, l > 0.0);
        }
    }
}
