// sample_pick — second stage of sampling on the GPU: the global top-k of the slices'
// candidates, then temperature, softmax, top-p and one draw of the seeded stream, exactly
// the CPU sampler's chain (src/llm/sampling.c) in f32 with compensated sums where it uses
// double; then lib_advance. Temperature 0 (greedy under a repetition penalty) takes the best.
// math:       c = top-k; p_i = exp((l_i - l_0) / T); keep the shortest prefix with
//             sum >= top_p * total (all if rounding falls short); u = draw * kept sum;
//             tok = first i with u < cumsum_i (the last kept one if none)
// fuses:      the CPU sampler's whole chain after top-k, and the host round trip
// workgroups: one workgroup of WG invocations: lib_topk over NCAND * KMAX candidates; the
//             exponentials in parallel; the sums and the draw on invocation 0 (k <= KMAX)
// bindings:   0 x (DIMP) f32 read_write | 1 st (ST_LEN) u32 read_write (ST_RNG: xoshiro256**
//             state, 4 x (lo, hi)) | 2 seq (N_CTX + 1) u32 read_write | 3 cand (NCAND, KMAX)
//             read | 4 sp (SP_LEN) read | 5..9 emb0..emb4 read
// injected:   WG, KMAX, NCAND, WF16, KC, DIMP, EMB_ROWS, ROPE_ORIG, ST_*, SP_*
@group(0) @binding(0) var<storage, read_write> x:    array<vec4<f32>>; // (DIMP) f32
@group(0) @binding(1) var<storage, read_write> st:   array<u32>;       // (ST_LEN) u32
@group(0) @binding(2) var<storage, read_write> seq:  array<u32>;       // (N_CTX + 1) ids
@group(0) @binding(3) var<storage, read>       cand: array<vec2<u32>>; // (NCAND, KMAX)
@group(0) @binding(4) var<storage, read>       sp:   array<u32>;       // (SP_LEN)
@group(0) @binding(5) var<storage, read>       emb0: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read>       emb1: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read>       emb2: array<vec4<u32>>;
@group(0) @binding(8) var<storage, read>       emb3: array<vec4<u32>>;
@group(0) @binding(9) var<storage, read>       emb4: array<vec4<u32>>;

var<workgroup> pr:  array<f32, KMAX>;
var<workgroup> tok: u32;

fn key_at(i: u32) -> vec2<u32> {
    return cand[i];
}

// the f32 value of an fkey
fn kval(k: u32) -> f32 {
    return bitcast<f32>(select(~k, k & 0x7fffffffu, (k >> 31u) == 1u));
}

// ---- xoshiro256** on (lo, hi) pairs: the stream of src/util/rng.h ----
fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
fn shl64(a: vec2<u32>, k: u32) -> vec2<u32> { // 0 < k < 32
    return vec2<u32>(a.x << k, (a.y << k) | (a.x >> (32u - k)));
}
fn rotl64(a: vec2<u32>, k: u32) -> vec2<u32> { // 0 < k < 64, k != 32
    var v = a;
    var r = k;
    if (r > 32u) {
        v = v.yx;
        r -= 32u;
    }
    return vec2<u32>((v.x << r) | (v.y >> (32u - r)), (v.y << r) | (v.x >> (32u - r)));
}
fn rng_next() -> vec2<u32> {
    var s0 = vec2<u32>(st[ST_RNG + 0u], st[ST_RNG + 1u]);
    var s1 = vec2<u32>(st[ST_RNG + 2u], st[ST_RNG + 3u]);
    var s2 = vec2<u32>(st[ST_RNG + 4u], st[ST_RNG + 5u]);
    var s3 = vec2<u32>(st[ST_RNG + 6u], st[ST_RNG + 7u]);
    let m5 = add64(s1, shl64(s1, 2u));      // s1 * 5
    let r7 = rotl64(m5, 7u);
    let res = add64(r7, shl64(r7, 3u));     // * 9
    let t = shl64(s1, 17u);
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = rotl64(s3, 45u);
    st[ST_RNG + 0u] = s0.x; st[ST_RNG + 1u] = s0.y;
    st[ST_RNG + 2u] = s1.x; st[ST_RNG + 3u] = s1.y;
    st[ST_RNG + 4u] = s2.x; st[ST_RNG + 5u] = s2.y;
    st[ST_RNG + 6u] = s3.x; st[ST_RNG + 7u] = s3.y;
    return res;
}

// (s, c) += v with the rounding error kept in c (Kahan-Babuska / Neumaier)
fn ksum(sc: vec2<f32>, v: f32) -> vec2<f32> {
    let t = sc.x + v;
    var c = sc.y;
    if (abs(sc.x) >= abs(v)) {
        c += (sc.x - t) + v;
    } else {
        c += (v - t) + sc.x;
    }
    return vec2<f32>(t, c);
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32) {
    let pos = st[ST_POS];
    let k   = topk_select(NCAND * KMAX, max(sp[SP_TOP_K], 1u), li);
    let temp = bitcast<f32>(sp[SP_TEMP]);
    if (temp > 0.0 && li < k) {
        pr[li] = exp((kval(tk[li].x) - kval(tk[0].x)) * (1.0 / temp));
    }
    workgroupBarrier();
    if (li == 0u) {
        if (k == 0u) {
            tok = 0xffffffffu;
        } else if (temp == 0.0) {
            tok = tk[0].y;
        } else {
            var sum = vec2<f32>(0.0);
            for (var i = 0u; i < k; i++) {
                sum = ksum(sum, pr[i]);
            }
            var n     = k;
            var total = sum.x + sum.y;
            let top_p = bitcast<f32>(sp[SP_TOP_P]);
            if (top_p < 1.0) {
                let want_mass = top_p * total;
                var acc    = vec2<f32>(0.0);
                for (var i = 0u; i < k; i++) {
                    acc = ksum(acc, pr[i]);
                    if (acc.x + acc.y >= want_mass) {
                        n     = i + 1u;
                        total = acc.x + acc.y;
                        break;
                    }
                }
            }
            let r = rng_next();
            // the 53-bit draw (r >> 11) * 2^-53 of wgf_rng_f64, to f32
            let u   = (f32(r.y >> 8u) + f32(((r.y & 0xffu) << 16u) | (r.x >> 16u)) * 0x1p-24f) * 0x1p-24f;
            let tgt = u * total;
            var pick = tk[n - 1u].y;
            var acc  = vec2<f32>(0.0);
            for (var i = 0u; i < n; i++) {
                acc = ksum(acc, pr[i]);
                if (tgt < acc.x + acc.y) {
                    pick = tk[i].y;
                    break;
                }
            }
            tok = pick;
        }
    }
    workgroupBarrier();
    advance(tok, pos, li);
}
