// evolve_select — pass 1 of 3 of the GA's evolve (evolve_select -> evolve_rank ->
// evolve_breed; src/sim/evolve.c): parent selection for every child and, per block of
// TOP_WG genomes, the block's best CE genomes in order (candidates for the elite).
//
// Role:     sel[c] = (A, B, stream, 0) for child slot c >= elites: its two tournament winners
//           (parents) and its RNG stream sim_stream(seed, gen, c) for evolve_breed;
//           cand_idx/cand_fit[b*CE + r] = the genome of block-local rank r < CE of block b
//           (and its fitness), 0xFFFFFFFF where block b has fewer than CE genomes.
// Math:     better(a, b) = f_a > f_b or (f_a = f_b and a < b), NaN fitness counts as -3e38:
//           a strict total order, the same as evolve.wgsl's. Tournament: best of
//           `tournament` uniform draws sim_rand(seed, gen, c, TAG_TOURNAMENT | t) % POP, the
//           first parent draws t = 0..T-1, the second t = T..2T-1 (evolve.wgsl's counters,
//           so the same parents). Local rank r = #{j in block : better(j, g)}; CE =
//           min(elites, TOP_WG). Every genome of global rank < elites has local rank < CE,
//           so the global elite is among the candidates (evolve_rank ranks them).
// Fuses:    tournaments + block-local top-CE in one pass (both a thread per genome).
// Mapping:  one thread per genome g, TOP_WG threads per workgroup, NB = ceil(POP / TOP_WG)
//           workgroups; the block's fitness is staged in workgroup memory, so the local
//           rank scan (<= TOP_WG compares, in unrollable chunks of 32) reads broadcast
//           shared values.
// Bindings: 0 sel (POP) vec4<u32> rw   1 cand_idx (NB, CE) u32 rw   2 cand_fit (NB, CE) f32 rw
//           3 fitness (POP) f32 r   4 ctl_in (4) u32 r: generation, seed
//           5 ga uniform: elites, tournament, mut_rate, mut_sigma
// Injected: prelude consts POP, TOP_WG; fragments ga, fitness, sim_rng; override CE.
//#include "sim/ga.inc.wgsl"
//#include "sim/fitness.inc.wgsl"
//#include "sim/sim_rng.inc.wgsl"

@group(0) @binding(0) var<storage, read_write> sel      : array<vec4<u32>>; // (POP)
@group(0) @binding(1) var<storage, read_write> cand_idx : array<u32>; // (NB, CE)
@group(0) @binding(2) var<storage, read_write> cand_fit : array<f32>; // (NB, CE)
@group(0) @binding(3) var<storage, read>       fitness  : array<f32>; // (POP)
@group(0) @binding(4) var<storage, read>       ctl_in   : array<u32>; // (4)
@group(0) @binding(5) var<uniform>             ga       : Ga;

override CE: u32 = 1u; // candidates per block: min(elites, TOP_WG)

const NONE: u32 = 0xFFFFFFFFu;

var<workgroup> sf : array<f32, TOP_WG>;

// Both tournaments of a child, interleaved (two independent load chains in flight); each
// keeps its own draw order t = 0..T-1, so the winners are evolve.wgsl's.
fn tournaments(stream: u32) -> vec2<u32> {
    let T = ga.tournament;
    var ba = sim_draw(stream, sim_j(TAG_TOURNAMENT, 0u)) % POP;
    var bb = sim_draw(stream, sim_j(TAG_TOURNAMENT, T)) % POP;
    var fa = fit(ba);
    var fb = fit(bb);
    for (var t = 1u; t < T; t++) {
        let ja = sim_draw(stream, sim_j(TAG_TOURNAMENT, t)) % POP;
        let jb = sim_draw(stream, sim_j(TAG_TOURNAMENT, T + t)) % POP;
        let fja = fit(ja);
        let fjb = fit(jb);
        if (better(ja, fja, ba, fa)) {
            ba = ja;
            fa = fja;
        }
        if (better(jb, fjb, bb, fb)) {
            bb = jb;
            fb = fjb;
        }
    }
    return vec2<u32>(ba, bb);
}

@compute @workgroup_size(TOP_WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let b = wid.x;
    let base = b * TOP_WG;
    let g = base + t;
    let n_blk = min(TOP_WG, POP - base);
    var fg = -3.0e38;
    if (g < POP) {
        fg = fit(g);
    }
    sf[t] = fg;
    workgroupBarrier();
    if (g >= POP) {
        if (t < CE) {
            cand_idx[b * CE + t] = NONE;
            cand_fit[b * CE + t] = 0.0;
        }
        return;
    }

    // chunks of 32 compares with a fixed trip count (the shared loads pipeline: latency,
    // not work, is the cost on a GPU), stopping between chunks once CE better genomes are
    // seen (most genomes of a block, which are not candidates, stop early)
    var lr = 0u;
    for (var j0 = 0u; j0 < n_blk && lr < CE; j0 += 32u) {
        for (var j = j0; j < j0 + 32u; j++) {
            lr += select(0u, 1u, j < n_blk && better(base + j, sf[j], g, fg));
        }
    }
    if (lr < CE) {
        cand_idx[b * CE + lr] = g;
        cand_fit[b * CE + lr] = fg;
    }

    if (g >= ga.elites) {
        let st = sim_stream(ctl_in[1], ctl_in[0], g);
        sel[g] = vec4<u32>(tournaments(st), st, 0u);
    }
}
