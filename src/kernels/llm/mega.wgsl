// mega — every decode layer of one token in ONE dispatch of ONE workgroup: the far end of the
// fusion dial (plan mega, src/llm/gpu/plan_mega.c; docs/fusion.md).
// math:       for each layer l, as the roles plan and cpu-ref compute it:
//             xn = rmsnorm(x) * attn_norm; [q; k; v] = W_qkv xn + b; RoPE on q, k; k, v into
//             the cache at pos; att = softmax(q k^T * SCALE) v over positions 0..pos (GQA;
//             from pos + 1 - WINDOW in the layers l >= SWA_FIRST of a sliding window);
//             x += Wo att; xn = rmsnorm(x) * ffn_norm; h = silu(W_gate xn) * (W_up xn);
//             x += W_down h
// fuses:      the whole layer stack: 5 dispatches a layer in the roles plan, 46 in ops, here 1
// workgroups: ONE workgroup of WG invocations (1024 where the device allows it and the
//             reductions fit). Not a grid of workgroups with a barrier between phases: WGSL has
//             no barrier across workgroups, and WebGPU promises no forward progress to a
//             workgroup spinning on another one's flag (a spin barrier can hang), and the
//             last-workgroup-done chain (bench's mlp_fused) serialises each phase's reduction on
//             one workgroup anyway. So the phases are separated by storageBarrier(), and the
//             token runs on one compute unit: one SM's share of the memory bandwidth. Expected
//             to lose; docs/fusion.md measures by how much.
//             matvec phases: GPW groups of TPR invocations; a group takes 4 consecutive rows of a
//             weight part at a time, each invocation loading U chunks of each row (all loads
//             issued before the first is used, as gemv), the group's sums meet in rowsum4; the
//             raw dot products go to the scratch Y, an epilogue pass applies bias / RoPE /
//             SiLU / the residual. Attention: head by head, the whole workgroup over the
//             positions in blocks of WG (online max and sum, as attn_split with one slice).
// bindings:   0 x (DIMP) f32 read_write (residual stream) | 1 sc scratch f32 read_write:
//             XN | Q | ATT | H | Y (offsets SC_*) | 2 kv (N_LAYERS, 2, N_CTX, KV_DIM) f32
//             read_write | 3 vecs f32 read (norms, biases) | 4 rope (tables, N_CTX, HALF)
//             (cos, sin) read | 5 st (ST_LEN) u32 read | 6 tab u32 read: (N_LAYERS, N_HEADS,
//             4, 0), then per layer (LT words) attn_norm, ffn_norm, bias offsets (f32
//             elements), has_bias, then for W_qkv, Wo, W_gate_up, W_down MP parts of (arena,
//             chunk offset, first row, rows)
//             | 7..9 w0..w2 weight arenas (16-byte chunks, lib_wchunk; NA of them)
// loops:      the layer, matvec and head loops read their bounds from tab, not from
//             constants, and each phase's code appears once: on lavapipe every barrier is a
//             coroutine suspend point, and unrolled loops or inlined copies multiplied them until
//             LLVM's coroutine split (at the first dispatch) ran for minutes
// fragments:  lib_reduce_*, lib_wchunk, lib_pairs
// injected:   WG, TPR, GPW, SGS, WF16, U, N_LAYERS, WINDOW, SWA_FIRST, w1, w2, wld (by NA), MP,
//             LT, KC_D, KC_Q, KC_H, MPG, SC_XN, SC_Q,
//             SC_ATT, SC_H, SC_Y (plan_mega.c); DIM, DIMP, Q_DIM, KV_DIM, N_HEADS, N_KV_HEADS,
//             HD, D4, HALF, ROT, ALL_PAIRS, HIDDEN, N_CTX, EPS, SCALE, ST_* (gr_kernels.c)
@group(0) @binding(0) var<storage, read_write> x:    array<vec4<f32>>; // (DIMP) f32
@group(0) @binding(1) var<storage, read_write> sc:   array<f32>;       // scratch f32
@group(0) @binding(2) var<storage, read_write> kv:   array<f32>;       // (L, 2, N_CTX, KV_DIM) f32
@group(0) @binding(3) var<storage, read>       vecs: array<vec4<f32>>; // norms, biases f32
@group(0) @binding(4) var<storage, read>       rope: array<vec2<f32>>; // (tables, N_CTX, HALF)
@group(0) @binding(5) var<storage, read>       st:   array<u32>;       // (ST_LEN) u32
@group(0) @binding(6) var<storage, read>       tab:  array<u32>;       // (N_LAYERS, LT) u32
@group(0) @binding(7) var<storage, read>       w0:   array<vec4<u32>>; // weight arena 0
// w1, w2 (bindings 8, 9) and wld(a, i), chunk i of arena a: in the prelude, declared only when
// the layers' weights reach them (a binding the kernel names is in its layout, used or not)

const NEG: f32 = -3.0e38;
const TAB0: u32 = 4u; // the first layer's words in tab
const NVB: u32 = (WG + MPG - 1u) / MPG; // positions of a block one invocation sums

var<workgroup> qs:   array<vec4<f32>, D4>;
var<workgroup> ex:   array<f32, WG>;
var<workgroup> acc4: array<vec4<f32>, WG>;

// 4 scratch floats from i (a multiple of 4): the scratch and the cache are scalar arrays,
// written a float at a time
fn sc4(i: u32) -> vec4<f32> {
    return vec4<f32>(sc[i], sc[i + 1u], sc[i + 2u], sc[i + 3u]);
}

fn sc4_put(i: u32, v: vec4<f32>) {
    sc[i]      = v.x;
    sc[i + 1u] = v.y;
    sc[i + 2u] = v.z;
    sc[i + 3u] = v.w;
}

// the dot products of 4 rows starting at chunk `off` of arena `a` (rows past nr repeat the
// last valid one) with x = sc from xo, summed over the group: every invocation calls it
fn dot4(a: u32, off: u32, kc: u32, nr: u32, xo: u32, lane: u32, li: u32) -> vec4<f32> {
    var acc = vec4<f32>(0.0);
    for (var c0 = 0u; c0 < kc; c0 += TPR * U) {
        var wv: array<vec4<u32>, U * 4u>;
        for (var u = 0u; u < U; u++) {
            let c = min(c0 + u * TPR + lane, kc - 1u);
            for (var j = 0u; j < 4u; j++) {
                wv[u * 4u + j] = wld(a, off + min(j, nr - 1u) * kc + c);
            }
        }
        for (var u = 0u; u < U; u++) {
            let c = c0 + u * TPR + lane;
            if (c < kc) {
                var xa: vec4<f32>;
                var xb: vec4<f32>;
                if (WF16) {
                    xa = sc4(xo + 8u * c);
                    xb = sc4(xo + 8u * c + 4u);
                } else {
                    xa = sc4(xo + 4u * c);
                    xb = xa;
                }
                for (var j = 0u; j < 4u; j++) {
                    acc[j] += wdot(wv[u * 4u + j], xa, xb);
                }
            }
        }
    }
    return rowsum4(acc, li);
}

// Y[first row of the part + r] = W_m[r] . sc[xo ..] for every row of matrix m of layer l
fn matvec(l: u32, m: u32, kc: u32, xo: u32, li: u32) {
    let lane = li % TPR;
    let grp  = li / TPR;
    for (var pi = 0u; pi < MP; pi++) {
        let t    = TAB0 + l * LT + 4u + (m * MP + pi) * 4u;
        let a    = tab[t];
        let off  = tab[t + 1u];
        let row0 = tab[t + 2u];
        let rows = tab[t + 3u];
        for (var b = 0u; b < rows; b += GPW * 4u) {
            let r  = b + grp * 4u;
            let ok = r < rows;
            let nr = select(1u, min(4u, rows - r), ok);
            let s  = dot4(a, off + select(rows - 1u, r, ok) * kc, kc, nr, xo, lane, li);
            if (lane == 0u && ok) {
                for (var j = 0u; j < nr; j++) {
                    sc[SC_Y + row0 + r + j] = s[j];
                }
            }
        }
    }
}

// sc.XN = rmsnorm(x) * g, g at vec4 offset g4 of vecs
fn norm(g4: u32, li: u32) {
    var ss = 0.0;
    for (var i = li; i < DIMP / 4u; i += WG) {
        let v = x[i];
        ss += dot(v, v);
    }
    let inv = inverseSqrt(wgsum(ss, li) / f32(DIM) + EPS);
    for (var i = li; i < DIMP / 4u; i += WG) {
        sc4_put(SC_XN + 4u * i, x[i] * inv * vecs[g4 + i]);
    }
}

// [q; k; v] from Y (pair order, lib_pairs), a pair per invocation: bias, RoPE, then q into
// sc.Q and k, v into the cache at pos (as attn_qkv)
fn qkv_epilogue(l: u32, li: u32) {
    let pos  = st[ST_POS];
    let tb   = st[ST_ROPE_LONG];
    let b0   = tab[TAB0 + l * LT + 2u];
    let bias = tab[TAB0 + l * LT + 3u] != 0u;
    for (var p = li; p < ALL_PAIRS; p += WG) {
        let rows = pair_rows(p);
        var va   = sc[SC_Y + 2u * p];
        var vb   = sc[SC_Y + 2u * p + 1u];
        if (bias) {
            va += vecs[(b0 + 2u * p) / 4u][(b0 + 2u * p) % 4u];
            vb += vecs[(b0 + 2u * p + 1u) / 4u][(b0 + 2u * p + 1u) % 4u];
        }
        if (rows.z != NOROT) {
            let cs = rope[(tb * N_CTX + pos) * HALF + rows.z];
            let ra = va * cs.x - vb * cs.y;
            let rb = va * cs.y + vb * cs.x;
            va = ra;
            vb = rb;
        }
        put(l, rows.x, va, pos);
        put(l, rows.y, vb, pos);
    }
}

// row r of [q; k; v] to its place: q into sc.Q, k and v into layer l's cache at pos
fn put(l: u32, r: u32, v: f32, pos: u32) {
    if (r < Q_DIM) {
        sc[SC_Q + r] = v;
    } else if (r < Q_DIM + KV_DIM) {
        kv[((l * 2u) * N_CTX + pos) * KV_DIM + r - Q_DIM] = v;
    } else {
        kv[((l * 2u + 1u) * N_CTX + pos) * KV_DIM + r - Q_DIM - KV_DIM] = v;
    }
}

fn kv4(i: u32) -> vec4<f32> {
    return vec4<f32>(kv[i], kv[i + 1u], kv[i + 2u], kv[i + 3u]);
}

// sc.ATT = softmax(q k^T * SCALE) v over positions 0..pos (within the layer's window), head by
// head (GQA)
fn attention(l: u32, li: u32) {
    let n_pos = st[ST_POS] + 1u;
    let win   = select(0u, WINDOW, l >= SWA_FIRST);
    let p0    = select(0u, n_pos - win, win > 0u && n_pos > win);
    let kb    = l * 2u * N_CTX * KV_DIM; // this layer's k, then v (f32 elements)
    let vb    = kb + N_CTX * KV_DIM;
    let d4    = li % D4;
    let pg    = li / D4;
    for (var h = 0u; h < tab[1]; h++) { // N_HEADS
        if (li < D4) {
            qs[li] = sc4(SC_Q + h * HD + 4u * li);
        }
        workgroupBarrier();
        let kvo = (h / (N_HEADS / N_KV_HEADS)) * HD;
        var m   = NEG;
        var s   = 0.0;
        var a   = vec4<f32>(0.0);
        for (var blk = p0; blk < n_pos; blk += WG) {
            let p  = blk + li;
            var sv = NEG;
            if (p < n_pos) {
                var d = 0.0;
                for (var j = 0u; j < D4; j++) {
                    d += dot(qs[j], kv4(kb + p * KV_DIM + kvo + 4u * j));
                }
                sv = d * SCALE;
            }
            let m_new = max(m, wgmax(sv, li));
            let e     = select(0.0, exp(sv - m_new), p < n_pos);
            ex[li]    = e;
            let corr  = exp(m - m_new);
            s         = s * corr + wgsum(e, li); // wgsum's barrier also publishes ex
            a        *= corr;
            if (pg < MPG) {
                // a fixed trip count with a guard (as attn_split): the loads are issued together
                let nb   = min(WG, n_pos - blk);
                let base = vb + blk * KV_DIM + kvo + 4u * d4;
                for (var k = 0u; k < NVB; k++) {
                    let j = pg + k * MPG;
                    if (j < nb) {
                        a += ex[j] * kv4(base + j * KV_DIM);
                    }
                }
            }
            m = m_new;
            workgroupBarrier(); // ex is rewritten by the next block
        }
        acc4[li] = a;
        workgroupBarrier();
        if (li < D4) {
            var r = vec4<f32>(0.0);
            for (var j = 0u; j < MPG; j++) {
                r += acc4[j * D4 + li];
            }
            sc4_put(SC_ATT + h * HD + 4u * li, r / s);
        }
        workgroupBarrier();
    }
}

// x += Y (the output projection's rows: the residual add)
fn residual(li: u32) {
    for (var i = li; i < DIMP / 4u; i += WG) {
        let y = sc4(SC_Y + 4u * i);
        let e = vec4<u32>(4u * i) + vec4<u32>(0u, 1u, 2u, 3u);
        x[i] += select(vec4<f32>(0.0), y, e < vec4<u32>(DIM)); // past DIM: other matvecs' rows
    }
}

// h = silu(gate) * up from Y (the interleaved gate/up rows)
fn silu_mul(li: u32) {
    for (var i = li; i < HIDDEN; i += WG) {
        let gt = sc[SC_Y + 2u * i];
        sc[SC_H + i] = gt / (1.0 + exp(-gt)) * sc[SC_Y + 2u * i + 1u];
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32) {
    for (var l = 0u; l < tab[0]; l++) { // N_LAYERS
        // the layer's four matvecs, each phase's code written once (a loop, not four copies):
        // k = 0 W_qkv, 1 Wo, 2 W_gate_up, 3 W_down
        for (var k = 0u; k < tab[2]; k++) { // 4
            if (k % 2u == 0u) { // xn = rmsnorm(x) * attn_norm (k = 0) or ffn_norm (k = 2)
                norm(tab[TAB0 + l * LT + k / 2u] / 4u, li);
                storageBarrier();
            }
            let kc = select(select(KC_Q, KC_H, k == 3u), KC_D, k % 2u == 0u);
            let xo = select(select(SC_ATT, SC_H, k == 3u), SC_XN, k % 2u == 0u);
            matvec(l, k, kc, xo, li);
            storageBarrier();
            if (k == 0u) { // bias, RoPE, the cache; then attention
                qkv_epilogue(l, li);
                storageBarrier();
                attention(l, li);
            } else if (k == 2u) {
                silu_mul(li);
            } else { // o_proj, down: the residual add
                residual(li);
            }
            storageBarrier();
        }
    }
}
