// lib_reduce_wg — fragment: sums and maxima across invocations through workgroup memory
// (tree reductions), for adapters without subgroups and as the tested fallback. Same
// interface as lib_reduce_sg:
//   rowsum4(v, li): sum over the TPR consecutive invocations of row group li / TPR
//   wgsum(v, li), wgmax(v, li): over the whole workgroup
// Every call is made in uniform control flow (it contains workgroup barriers).
// needs:      const WG, TPR (TPR a power of two dividing WG; WG a multiple of TPR, not
//             necessarily a power of two: the whole-workgroup trees start at the largest power
//             of two below WG and skip partners past it)
const WGH: u32 = select(1u << (31u - countLeadingZeros(max(WG - 1u, 1u))), 0u, WG == 1u); // largest power of two < WG
var<workgroup> red_wg4: array<vec4<f32>, WG>;
var<workgroup> red_wg1: array<f32, WG>;

fn rowsum4(v: vec4<f32>, li: u32) -> vec4<f32> {
    red_wg4[li] = v;
    workgroupBarrier();
    let lane = li % TPR;
    for (var h = TPR >> 1u; h > 0u; h >>= 1u) {
        if (lane < h) {
            red_wg4[li] += red_wg4[li + h];
        }
        workgroupBarrier();
    }
    let r = red_wg4[li - lane];
    workgroupBarrier();
    return r;
}

fn wgsum(v: f32, li: u32) -> f32 {
    red_wg1[li] = v;
    workgroupBarrier();
    for (var h = WGH; h > 0u; h >>= 1u) {
        if (li < h && li + h < WG) {
            red_wg1[li] += red_wg1[li + h];
        }
        workgroupBarrier();
    }
    let r = red_wg1[0];
    workgroupBarrier();
    return r;
}

fn wgmax(v: f32, li: u32) -> f32 {
    red_wg1[li] = v;
    workgroupBarrier();
    for (var h = WGH; h > 0u; h >>= 1u) {
        if (li < h && li + h < WG) {
            red_wg1[li] = max(red_wg1[li], red_wg1[li + h]);
        }
        workgroupBarrier();
    }
    let r = red_wg1[0];
    workgroupBarrier();
    return r;
}
