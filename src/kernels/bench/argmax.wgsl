// argmax — greedy token choice on the device: only 8 bytes come back instead of the logits.
// math:       out[0] = argmax_i logits[i] (lowest index on ties), out[1] = bits of the max
// fuses:      the logits readback + CPU scan of the unfused variant.
// workgroups: one workgroup of WG_SIZE threads; thread t scans i = t, t + WG_SIZE, ...; a tree
//             reduction keeps (value, index), preferring the lower index on equal values (its
//             own: reduce_wg's reduces one f32).
// bindings:   0 out (2) u32 read_write | 1 logits (V) f32 read
// injected:   V (vocabulary size) (override); WG_SIZE (constants.wgsl)
//#include "constants.wgsl"
override V: u32;

@group(0) @binding(0) var<storage, read_write> out:    array<u32>; // (2) u32
@group(0) @binding(1) var<storage, read>       logits: array<f32>; // (V) f32

var<workgroup> bv: array<f32, WG_SIZE>;
var<workgroup> bi: array<u32, WG_SIZE>;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(local_invocation_index) li: u32) {
    var best  = -0x1.fffffep+127f;
    var besti = 0xffffffffu;
    for (var i = li; i < V; i += WG_SIZE) {
        let v = logits[i];
        if (v > best) { // strictly greater: within a thread indices ascend, the first wins
            best  = v;
            besti = i;
        }
    }
    bv[li] = best;
    bi[li] = besti;
    workgroupBarrier();
    for (var h = WG_SIZE / 2u; h > 0u; h >>= 1u) {
        if (li < h) {
            let ov = bv[li + h];
            let oi = bi[li + h];
            if (ov > bv[li] || (ov == bv[li] && oi < bi[li])) {
                bv[li] = ov;
                bi[li] = oi;
            }
        }
        workgroupBarrier();
    }
    if (li == 0u) {
        out[0] = bi[0];
        out[1] = bitcast<u32>(bv[0]);
    }
}
