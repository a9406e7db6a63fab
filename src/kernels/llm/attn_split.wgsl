// attn_split — causal softmax attention of query rows over the KV cache, split over the
// sequence (flash-decoding): each workgroup reduces one slice of positions to a partial
// (running max m, sum of exponentials l, unnormalised weighted sum of values), which
// attn_combine merges; with DIRECT (one slice covers every position) it writes the final
// output itself and no combine runs.
// math:       for query row t (position qp = pos0 + t, attending positions lo..qp: lo = 0, or
//             qp + 1 - WINDOW in a layer with a sliding window) and head h (kv head
//             h / (N_HEADS / N_KV_HEADS)), slice s = [max(s * SPLIT, lo), min((s+1) SPLIT, qp+1)):
//             sc[p] = q . k[p] * SCALE; m = max sc; l = sum exp(sc - m); acc = sum exp(sc - m) v[p]
//             (a slice wholly before lo is empty: m = -3e38, l = 0, acc = 0, weighed 0 by attn_combine)
//             DIRECT: out[t, h] = acc / l
// fuses:      scores, max, exp, sum, weighted sum of values (5 elementwise/reduction
//             dispatches of an eager graph, plus the scale and the mask)
// workgroups: grid (N_HEADS, n_slices, n_rows); WG invocations (prefill 256; decode gr_att_wg:
//             256, or up to 1024 where HD / 4 leaves few position groups). Positions go in blocks of WG,
//             one per invocation for the scores (a HD-long dot of vec4 loads), with an online
//             max/sum across blocks; for the values, invocation i takes dims 4 (i % D4)..+4 of
//             every PGW-th position (PGW = WG / D4), summed across groups at the end.
// bindings:   0 out (n_rows, Q_DIM) f32 read_write (DIRECT) | 1 part (n_rows, N_HEADS,
//             N_SPLIT, 1 + D4) vec4 read_write: (m, l, 0, 0) then acc | 2 q (n_rows, Q_DIM)
//             f32 read | 3 kc (N_CTX, KV_DIM) f32 read | 4 vc (N_CTX, KV_DIM) f32 read
//             | 5 st (ST_LEN) u32 read: ST_POS = pos0
// injected:   WG, SGS, TPR (= WG), N_HEADS, N_KV_HEADS, HD, D4 (= HD / 4), Q_DIM, KV_DIM,
//             N_CTX, SPLIT, N_SPLIT, SCALE (1/sqrt(HD) rounded to f32 as cpu-ref), DIRECT,
//             WINDOW (the layer's sliding window, 0: none), ST_*
@group(0) @binding(0) var<storage, read_write> out:  array<vec4<f32>>; // (rows, Q_DIM) f32
@group(0) @binding(1) var<storage, read_write> part: array<vec4<f32>>; // partials
@group(0) @binding(2) var<storage, read>       q:    array<vec4<f32>>; // (rows, Q_DIM) f32
@group(0) @binding(3) var<storage, read>       kc:   array<vec4<f32>>; // (N_CTX, KV_DIM) f32
@group(0) @binding(4) var<storage, read>       vc:   array<vec4<f32>>; // (N_CTX, KV_DIM) f32
@group(0) @binding(5) var<storage, read>       st:   array<u32>;       // (ST_LEN) u32

const NEG: f32 = -3.0e38; // "minus infinity": WGSL does not promise infinities
const PGW: u32 = WG / D4; // position groups of the values (WG may differ from the model's PG)
const NVB: u32 = (WG + PGW - 1u) / PGW; // positions of a block one invocation sums (rounded to 4 below)

var<workgroup> qs:  array<vec4<f32>, D4>;
var<workgroup> ex:  array<f32, WG>;
var<workgroup> acc4: array<vec4<f32>, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let h     = wid.x;
    let s     = wid.y;
    let t     = wid.z;
    let n_pos = st[ST_POS] + t + 1u;
    let lo    = select(0u, n_pos - WINDOW, WINDOW > 0u && n_pos > WINDOW);
    let p0    = max(s * SPLIT, lo);
    let p1    = min(s * SPLIT + SPLIT, n_pos);
    let kvo   = (h / (N_HEADS / N_KV_HEADS)) * D4; // this head's kv slice, in vec4
    let qo    = (t * Q_DIM + h * HD) / 4u;
    if (li < D4) {
        qs[li] = q[qo + li];
    }
    workgroupBarrier();

    let d4 = li % D4;
    let pg = li / D4;
    var m  = NEG;
    var l  = 0.0;
    var a  = vec4<f32>(0.0);
    for (var blk = p0; blk < p1; blk += WG) { // uniform: every invocation runs every block
        let p  = blk + li;
        var sc = NEG;
        if (p < p1) {
            var d = 0.0;
            for (var j = 0u; j < D4; j++) {
                d += dot(qs[j], kc[p * (KV_DIM / 4u) + kvo + j]);
            }
            sc = d * SCALE;
        }
        let m_new = max(m, wgmax(sc, li));
        let e     = select(0.0, exp(sc - m_new), p < p1);
        ex[li]    = e;
        let corr  = exp(m - m_new);
        l         = l * corr + wgsum(e, li); // wgsum's barrier also publishes ex
        a        *= corr;
        if (pg < PGW) {
            // a fixed trip count with a guard, four independent sums: the value loads of a
            // block are all issued before the first is used (a data-dependent loop bound made
            // this a chain of dependent cache round trips)
            let nb = min(WG, p1 - blk);
            var s0 = vec4<f32>(0.0);
            var s1 = vec4<f32>(0.0);
            var s2 = vec4<f32>(0.0);
            var s3 = vec4<f32>(0.0);
            for (var k = 0u; k < NVB; k += 4u) {
                let j0 = pg + k * PGW;
                let j1 = j0 + PGW;
                let j2 = j1 + PGW;
                let j3 = j2 + PGW;
                let base = blk * (KV_DIM / 4u) + kvo + d4;
                if (j0 < nb) { s0 += ex[j0] * vc[base + j0 * (KV_DIM / 4u)]; }
                if (j1 < nb) { s1 += ex[j1] * vc[base + j1 * (KV_DIM / 4u)]; }
                if (j2 < nb) { s2 += ex[j2] * vc[base + j2 * (KV_DIM / 4u)]; }
                if (j3 < nb) { s3 += ex[j3] * vc[base + j3 * (KV_DIM / 4u)]; }
            }
            a += (s0 + s1) + (s2 + s3);
        }
        m = m_new;
        workgroupBarrier(); // ex is rewritten by the next block
    }
    // sum the PGW groups' value partials
    acc4[li] = a;
    workgroupBarrier();
    if (li < D4) {
        var r = vec4<f32>(0.0);
        for (var j = 0u; j < PGW; j++) {
            r += acc4[j * D4 + li];
        }
        if (DIRECT) {
            out[qo + li] = r / l;
        } else {
            let base = ((t * N_HEADS + h) * N_SPLIT + s) * (1u + D4);
            if (li == 0u) {
                part[base] = vec4<f32>(m, l, 0.0, 0.0);
            }
            part[base + 1u + li] = r;
        }
    }
}
