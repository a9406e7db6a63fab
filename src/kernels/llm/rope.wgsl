// rope — rotary position embedding, rotate-half (HF / NEOX), in place on q or k of one token.
// math:       for each head h and i < HALF: (x0, x1) = (v[h, i], v[h, i + HALF]);
//             v[h, i] = x0 * c[i] - x1 * s[i]; v[h, i + HALF] = x0 * s[i] + x1 * c[i]
//             where c[i] = cos(pos * inv_freq[i]) * scale and s[i] likewise (computed on the
//             host with the same f32 formula as cpu-ref, so only the rotation runs here).
// fuses:      nothing (the unfused plan: one dispatch for q, one for k).
// workgroups: ROPE_WG threads; thread t -> pair (h = t / HALF, i = t % HALF); grid
//             ceil(N_HEADS * HALF / ROPE_WG).
// bindings:   0 v (N_HEADS, HEAD_DIM) f32 read_write | 1 cs (2, HALF) f32 read: cos then sin
// injected:   N_HEADS (heads in v), HEAD_DIM (stride of a head), HALF (rope_dim / 2; dims
//             past 2 * HALF of each head are left as they are) (override); ROPE_WG
//             (constants.wgsl)
//#include "constants.wgsl"
override N_HEADS:  u32;
override HEAD_DIM: u32;
override HALF:     u32;

@group(0) @binding(0) var<storage, read_write> v:  array<f32>; // (N_HEADS, HEAD_DIM) f32
@group(0) @binding(1) var<storage, read>       cs: array<f32>; // (2, HALF) f32: cos, sin

@compute @workgroup_size(ROPE_WG)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let t = gid.x;
    if (t >= N_HEADS * HALF) {
        return;
    }
    let i  = t % HALF;
    let b  = (t / HALF) * HEAD_DIM;
    let c  = cs[i];
    let s  = cs[HALF + i];
    let x0 = v[b + i];
    let x1 = v[b + i + HALF];
    v[b + i]        = x0 * c - x1 * s;
    v[b + i + HALF] = x0 * s + x1 * c;
}
