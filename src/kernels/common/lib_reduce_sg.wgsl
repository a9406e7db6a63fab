// lib_reduce_sg — fragment: sums and maxima across invocations, with subgroup operations.
// Prepended to a role's source when the adapter has `subgroups` and the probe found
// subgroups of SGS consecutive local indices (llm/gpu/prelude.c); lib_reduce_wg is the
// same interface without subgroups.
//   rowsum4(v, li): sum of v over the TPR consecutive invocations of row group li / TPR,
//                   returned to every invocation of the group
//   wgsum(v, li), wgmax(v, li): over the whole workgroup (WG invocations), to every one
// Every call is made in uniform control flow (it may contain a workgroup barrier).
// needs:      const WG, TPR (powers of two, TPR <= WG), SGS; `enable subgroups;`
var<workgroup> red_sg4: array<vec4<f32>, 64>; // one slot per subgroup (WG / SGS <= 64)
var<workgroup> red_sg1: array<f32, 64>;

fn rowsum4(v: vec4<f32>, li: u32) -> vec4<f32> {
    var s = v;
    if (TPR <= SGS) {
        // butterfly inside the subgroup; row groups are aligned blocks of TPR lanes
        for (var o = TPR >> 1u; o > 0u; o >>= 1u) {
            s += subgroupShuffleXor(s, o);
        }
        return s;
    } else {
        s = subgroupAdd(s);
        if (li % SGS == 0u) {
            red_sg4[li / SGS] = s;
        }
        workgroupBarrier();
        let n     = TPR / SGS;
        let first = (li / TPR) * n;
        var t     = vec4<f32>(0.0);
        for (var i = 0u; i < n; i++) {
            t += red_sg4[first + i];
        }
        workgroupBarrier();
        return t;
    }
}

fn wgsum(v: f32, li: u32) -> f32 {
    let s = subgroupAdd(v);
    if (li % SGS == 0u) {
        red_sg1[li / SGS] = s;
    }
    workgroupBarrier();
    var t = 0.0;
    for (var i = 0u; i < WG / SGS; i++) {
        t += red_sg1[i];
    }
    workgroupBarrier();
    return t;
}

fn wgmax(v: f32, li: u32) -> f32 {
    let s = subgroupMax(v);
    if (li % SGS == 0u) {
        red_sg1[li / SGS] = s;
    }
    workgroupBarrier();
    var t = red_sg1[0];
    for (var i = 1u; i < WG / SGS; i++) {
        t = max(t, red_sg1[i]);
    }
    workgroupBarrier();
    return t;
}
