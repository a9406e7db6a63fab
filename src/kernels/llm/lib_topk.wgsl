// lib_topk — fragment: the k best of n candidates, exactly in the CPU sampler's order
// (value descending, lowest id first among equal values), with non-finite values excluded.
//   fkey(v): an orderable u32 of a finite f32 (larger value -> larger key, -0 == +0); 0 for
//            inf/NaN, which no finite value maps to (0 means "no candidate")
//   topk_select(n, k, li): the min(k, valid) best of the candidates key_at(0..n) into
//            tk[0..), sorted best first, the rest of tk set to (0, 0xffffffff); returns the
//            count (uniform). Candidates must come in ascending id order wherever their keys
//            are equal (so "lowest ids among ties" = "first ties in index order").
// method:     the k-th largest key by a 4-pass radix select (256-bin histograms in workgroup
//             memory); keys above it are all taken, ties at it in index order (each invocation
//             owns a contiguous run; an exclusive scan gives the order); then a bitonic sort of
//             the KMAX slots. Cost ~ 5 reads of every candidate, no host involvement.
// needs:      const WG, KMAX (== WG, a power of two); fn key_at(i: u32) -> vec2<u32> (key, id)
var<workgroup> tk_hist: array<atomic<u32>, 256>;
var<workgroup> tk:      array<vec2<u32>, KMAX>;
var<workgroup> tk_scan: array<u32, WG>;
var<workgroup> tk_sel:  vec4<u32>; // (prefix, need, valid, taken-above)
var<workgroup> tk_n:    atomic<u32>;

fn fkey(v: f32) -> u32 {
    var b = bitcast<u32>(v);
    if ((b & 0x7f800000u) == 0x7f800000u) {
        return 0u;
    }
    if ((b & 0x7fffffffu) == 0u) {
        b = 0u;
    }
    return select(b | 0x80000000u, ~b, (b >> 31u) == 1u);
}

// (a before b) in the sampler's order
fn tk_better(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.x > b.x || (a.x == b.x && a.y < b.y);
}

fn topk_select(n: u32, k: u32, li: u32) -> u32 {
    // valid candidates
    if (li == 0u) {
        atomicStore(&tk_n, 0u);
    }
    workgroupBarrier();
    var nv = 0u;
    for (var i = li; i < n; i += WG) {
        nv += select(0u, 1u, key_at(i).x != 0u);
    }
    atomicAdd(&tk_n, nv);
    workgroupBarrier();
    if (li == 0u) {
        let valid = atomicLoad(&tk_n);
        tk_sel = vec4<u32>(0u, min(min(k, KMAX), valid), valid, 0u);
    }
    workgroupBarrier();
    let want = workgroupUniformLoad(&tk_sel).y;

    // radix select of the want-th largest key: prefix over the digits fixed so far
    var mask = 0u;
    for (var rp = 0u; rp < 4u; rp++) { // radix pass, top digit first
        let shift = 24u - 8u * rp;
        atomicStore(&tk_hist[li % 256u], 0u);
        workgroupBarrier();
        let prefix = tk_sel.x;
        for (var i = li; i < n; i += WG) {
            let kv = key_at(i).x;
            if (kv != 0u && (kv & mask) == prefix) {
                atomicAdd(&tk_hist[(kv >> shift) & 255u], 1u);
            }
        }
        workgroupBarrier();
        if (li == 0u && tk_sel.y > 0u) {
            var need = tk_sel.y;
            var b    = 255u;
            loop {
                let c = atomicLoad(&tk_hist[b]);
                if (c >= need || b == 0u) {
                    break;
                }
                need -= c;
                b -= 1u;
            }
            tk_sel.x = prefix | (b << shift);
            tk_sel.y = need;
        }
        workgroupBarrier();
        mask |= 255u << shift;
    }
    let thr   = tk_sel.x;  // the want-th largest key
    let ties  = tk_sel.y;  // how many candidates equal to it are taken
    let above = want - ties;

    // gather: keys above thr anywhere in tk[0..above), ties in index order after them
    tk[li % KMAX] = vec2<u32>(0u, 0xffffffffu);
    if (li == 0u) {
        atomicStore(&tk_n, 0u);
    }
    workgroupBarrier();
    let run = (n + WG - 1u) / WG;
    let r0  = li * run;
    let r1  = min(r0 + run, n);
    var nt  = 0u;
    for (var i = r0; i < r1; i++) {
        let kv = key_at(i);
        if (want > 0u && kv.x > thr) {
            tk[atomicAdd(&tk_n, 1u)] = kv;
        }
        nt += select(0u, 1u, want > 0u && kv.x == thr);
    }
    tk_scan[li] = nt;
    workgroupBarrier();
    for (var o = 1u; o < WG; o <<= 1u) { // inclusive Hillis-Steele scan
        var v = tk_scan[li];
        if (li >= o) {
            v += tk_scan[li - o];
        }
        workgroupBarrier();
        tk_scan[li] = v;
        workgroupBarrier();
    }
    var slot = tk_scan[li] - nt;
    for (var i = r0; i < r1 && slot < ties; i++) {
        let kv = key_at(i);
        if (want > 0u && kv.x == thr) {
            tk[above + slot] = kv;
            slot++;
        }
    }
    workgroupBarrier();

    // bitonic sort of the KMAX slots, best first
    for (var size = 2u; size <= KMAX; size <<= 1u) {
        for (var stride = size >> 1u; stride > 0u; stride >>= 1u) {
            let j = li ^ stride;
            if (li < KMAX && j > li) {
                let a  = tk[li];
                let b  = tk[j];
                let up = (li & size) == 0u;
                if (tk_better(b, a) == up) {
                    tk[li] = b;
                    tk[j]  = a;
                }
            }
            workgroupBarrier();
        }
    }
    return want;
}
