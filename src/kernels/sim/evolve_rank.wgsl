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
//           elite[] matches evolve.wgsl's rank over the whole population. The sum stops once
//           it reaches elites.
// Fuses:    nothing (a tiny pass: NB * CE threads, NB binary searches of log2(CE) steps each).
// Mapping:  one thread per candidate slot i < NB * CE, TOP_WG threads per workgroup.
// Bindings: 0 elite (elites) u32 rw   1 cand_idx (NB, CE) u32 r   2 cand_fit (NB, CE) f32 r
//           3 ga uniform: elites, tournament, mut_rate, mut_sigma
// Injected: prelude const TOP_WG; fragment ga; overrides CE, NB.
//#include "sim/ga.inc.wgsl"

@group(0) @binding(0) var<storage, read_write> elite    : array<u32>; // (elites)
@group(0) @binding(1) var<storage, read>       cand_idx : array<u32>; // (NB, CE)
@group(0) @binding(2) var<storage, read>       cand_fit : array<f32>; // (NB, CE)
@group(0) @binding(3) var<uniform>             ga       : Ga;

override CE: u32 = 1u; // candidates per block
override NB: u32 = 1u; // blocks (lists)

const NONE: u32 = 0xFFFFFFFFu;

@compute @workgroup_size(TOP_WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= NB * CE) {
        return;
    }
    let g = cand_idx[i];
    if (g == NONE) {
        return;
    }
    let fg = cand_fit[i];
    let own = i / CE;
    var rank = i % CE;
    for (var b = 0u; b < NB && rank < ga.elites; b++) {
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
        rank += lo;
    }
    if (rank < ga.elites) {
        elite[rank] = g;
    }
}
