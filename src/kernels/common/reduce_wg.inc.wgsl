// reduce_wg — tree reductions over the WG_SIZE lanes of a workgroup (a fragment, no entry point).
//
// Role:     the reduction every 256-lane kernel had typed out: elementwise (MEAN), rmsnorm,
//           softmax_wg, attention, matvec (32-lane segments), mlp_fused (8-lane segments).
// Math:     wg_sum_seg(li, v, seg): every lane gets the sum of v over its segment of `seg`
//           consecutive lanes (seg a power of two <= WG_SIZE), summed as a tree: lane i adds
//           lane i + h for h = seg/2, seg/4, .., 1. wg_sum = one segment of WG_SIZE lanes;
//           wg_max the same tree with max. The order is fixed, so results are reproducible.
// Fuses:    nothing (functions only).
// Mapping:  li = local_invocation_index. Each call has workgroup barriers: call it from
//           uniform control flow with a constant `seg`. It ends with a barrier, so a second
//           reduction may follow at once (wg_red is reused).
// Bindings: none; one workgroup array wg_red (WG_SIZE) f32.
// Injected: WG_SIZE (constants.wgsl).
//#include "constants.wgsl"

var<workgroup> wg_red: array<f32, WG_SIZE>;

fn wg_sum_seg(li: u32, v: f32, seg: u32) -> f32 {
    wg_red[li] = v;
    workgroupBarrier();
    let lane = li % seg;
    for (var h = seg / 2u; h > 0u; h >>= 1u) {
        if (lane < h) {
            wg_red[li] += wg_red[li + h];
        }
        workgroupBarrier();
    }
    let r = wg_red[li - lane];
    workgroupBarrier();
    return r;
}

fn wg_sum(li: u32, v: f32) -> f32 { return wg_sum_seg(li, v, WG_SIZE); }

fn wg_max(li: u32, v: f32) -> f32 {
    wg_red[li] = v;
    workgroupBarrier();
    for (var h = WG_SIZE / 2u; h > 0u; h >>= 1u) {
        if (li < h) {
            wg_red[li] = max(wg_red[li], wg_red[li + h]);
        }
        workgroupBarrier();
    }
    let r = wg_red[0];
    workgroupBarrier();
    return r;
}
