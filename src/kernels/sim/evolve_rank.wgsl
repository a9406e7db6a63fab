// evolve_rank — pass 2 of 3 of the GA's evolve: the global elite from evolve_select's
// per-block candidate lists (skipped when there is one block: its list is the elite).
//
// Role:     elite[r] = the genome of global rank r, r < elites (best first).
// Math:     each block's list holds its best CE genomes sorted by the order `better`
//           (evolve_select), so the number of list b's genomes better than candidate x is the
//           length of the list's leading run of better entries: a binary search. rank(x) =
//           its own position + that count over the other lists. Counting among candidates
//           only is exact for rank < elites (every genome better than an elite is an elite,
//           hence a candidate) and gives >= elites otherwise (the elite are candidates), so
//           elite[] matches evolve.wgsl's rank over the whole population.
// Fuses:    nothing (a tiny pass: NB * CE candidates, NB binary searches of log2(CE) steps each).
// Mapping:  LPC lanes per candidate (LPC = the power of two >= NB, at most TOP_WG; chosen by
//           src/sim/evolve.c), TOP_WG / LPC candidates per workgroup: lane l searches lists
//           l, l + LPC, ... and adds its count into the candidate's workgroup counter; after a
//           barrier lane 0 writes elite[rank]. The dependent chain per thread is one or a few
//           binary searches (log2(CE) + 1 loads), not NB of them in series (the first version,
//           a thread per candidate, walked 15 x 7 dependent loads at 4,096 x 64 elites).
//           Workgroups on a 2D grid past 65,535 (wid.x + wid.y * nwg.x).
// Bindings: 0 elite (elites) u32 rw   1 cand_idx (NB, CE) u32 r   2 cand_fit (NB, CE) f32 r
//           3 ga uniform: elites, tournament, mut_rate, mut_sigma
// Injected: prelude const TOP_WG; fragment ga; overrides CE, NB, LPC.
//#include "sim/ga.inc.wgsl"

@group(0) @binding(0) var<storage, read_write> elite    : array<u32>; // (elites)
@group(0) @binding(1) var<storage, read>       cand_idx : array<u32>; // (NB, CE)
@group(0) @binding(2) var<storage, read>       cand_fit : array<f32>; // (NB, CE)
@group(0) @binding(3) var<uniform>             ga       : Ga;

override CE: u32 = 1u;  // candidates per block
override NB: u32 = 1u;  // blocks (lists)
override LPC: u32 = 1u; // lanes per candidate, a power of two <= TOP_WG

const NONE: u32 = 0xFFFFFFFFu;

var<workgroup> cnt: array<atomic<u32>, TOP_WG>; // per candidate slot of this workgroup

@compute @workgroup_size(TOP_WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let slot = lid / LPC;
    let lane = lid % LPC;
    let i = (wid.x + wid.y * nwg.x) * (TOP_WG / LPC) + slot; // candidate slot
    atomicStore(&cnt[slot], 0u);
    workgroupBarrier();
    var g = NONE;
    var fg = 0.0;
    if (i < NB * CE) {
        g = cand_idx[i];
        fg = cand_fit[i];
    }
    let own = i / CE;
    if (g != NONE) {
        var count = 0u;
        for (var b = lane; b < NB; b += LPC) {
            if (b == own) {
                continue;
            }
            // entries [0, lo) of list b are better than g, entries [hi, CE) are not
            var lo = 0u;
            var hi = CE;
            while (lo < hi) {
                let m = (lo + hi) / 2u;
                let x = cand_idx[b * CE + m];
                if (x != NONE && better(x, cand_fit[b * CE + m], g, fg)) {
                    lo = m + 1u;
                } else {
                    hi = m;
                }
            }
            count += lo;
        }
        if (count > 0u) {
            atomicAdd(&cnt[slot], count);
        }
    }
    workgroupBarrier();
    if (g != NONE && lane == 0u) {
        let rank = i % CE + atomicLoad(&cnt[slot]);
        if (rank < ga.elites) {
            elite[rank] = g;
        }
    }
}
