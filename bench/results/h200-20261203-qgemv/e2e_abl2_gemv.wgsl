// gemv — y = W x or y += W x: one projection at batch 1 (a decode step), the building block
// every projection role of the LLM plans shares, and what `wgfuse bench matvec` measures
// (the family is called matvec in C: wgf_matvec_cfg).
// math:       y[ROW0 + r] (+)= sum_k W[r, k] x[k] for r < N
// fuses:      with ACCUM the residual add in place (o_proj + add, down_proj + add: 2 -> 1)
// workgroups: WG invocations = GPW row groups of TPR; group g of workgroup w owns the RPG
//             rows (w * GPW + g) * RPG + j, j < RPG. Invocation `lane` of a group loads, for
//             each of its rows, the chunks lane, lane + TPR, ... (NIT per row, 16 bytes each:
//             8 f16 or 4 f32, coalesced across the group), all issued before the first is
//             used; each x chunk (read from global memory, cached) serves the RPG rows; the
//             group's RPG partial sums meet in one rowsum4.
// bindings:   0 y  (ROW0 + N) f32 read_write | 1 x (KC * EPC) f32 read, zero padded
//             | 2 w  (N, KCS) 16-byte weight chunks read (KCS >= KC: row stride)
// fragments:  lib_reduce_*, lib_wchunk, lib_rows
// injected:   WG, TPR, GPW, RPG (<= 4), NIT, SGS, WF16, KC, KCS, N, ROW0, ACCUM (const prelude:
//             wgf_matvec_prelude + the caller); overrides WOFF (lib_rows; default 0: rows start
//             at chunk WOFF of the binding, so a plan reads a few rows of a stored matrix, e.g.
//             k of W_qkv, without a binding offset) and SILU_EVEN (default false: y = silu(W x)
//             on even rows, the gate rows of the interleaved gate/up matrix: the fused plan's
//             gate + up + SiLU in one dispatch). Both are constant-folded at pipeline creation.
@group(0) @binding(0) var<storage, read_write> y: array<f32>;       // (ROW0 + N) f32
@group(0) @binding(1) var<storage, read>       x: array<vec4<f32>>; // (KC * EPC / 4) f32
@group(0) @binding(2) var<storage, read>       w: array<vec4<u32>>; // (N, KCS) chunks

override SILU_EVEN: bool = false;

fn xin(i: u32) -> vec4<f32> {
    return x[i & 63u]; // ABLATION: every lane reads the first KiB (wrong values)
}

fn xprep(li: u32) {}

fn xq_in(i: u32) -> vec4<f32> {
    return x[i & 63u]; // ABLATION: every lane reads the first KiB (wrong values)
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
    let row0 = (wid.x * GPW + li / TPR) * RPG;
    let lane = li % TPR;
    let s = rows_run(row0, N, lane, li);
    if (lane == 0u) {
        for (var j = 0u; j < RPG; j++) {
            let r = row0 + j;
            if (r < N) {
                var v = s[j];
                if (SILU_EVEN && r % 2u == 0u) {
                    v = v / (1.0 + exp(-v));
                }
                if (ACCUM) {
                    y[ROW0 + r] += v;
                } else {
                    y[ROW0 + r] = v;
                }
            }
        }
    }
}
