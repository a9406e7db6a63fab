#!/usr/bin/env python3
"""Writes OUTDIR (argv[1]; the build writes BUILD/tiny_llama at every build, and the tests
read it through $WGF_TINY_LLAMA: generated, never committed): a small random HF Llama directory (config.json,
model.safetensors, f32, tied embeddings, GQA 4/2, head_dim 8) and expected.txt, the greedy
continuation from BOS and the logits after BOS computed by an independent float64
implementation of HF's LlamaForCausalLM (rotate-half RoPE, repeat_kv GQA, RMSNorm, SiLU
MLP): the same script docs/llm.md gives for stories260k, reading the file this writes.

It stands in for ../shared/models/stories260k where that directory is absent (CI): the
tests that need a real checkpoint (test_forward_stories, test_llm_files_stories,
test_cli_llm) run their checks on this model first and on stories260k only when present.

Standard library only, deterministic (own splitmix64; every weight is k / 2^23 times a
power of two, so exact in f32). By hand:
    python3 tests/llm/data/make_tiny_llama.py OUTDIR
It refuses a draw whose greedy choice is nearly tied at any
step (top-2 logit gap below MIN_GAP), so f32 rounding cannot flip an id.
"""
import json, math, os, struct, sys

# the output folder: argv[1] (the build writes it into the build tree at every build)
OUT = sys.argv[1] if __name__ == "__main__" and len(sys.argv) > 1 else os.path.join(os.getcwd(), "tiny_llama")
SEED = 3  # the first seed whose draw passes both checks in main() at these scales
N_GEN = 40
MIN_GAP = 1e-3  # relative to max |logit|; f32 vs f64 differ by ~1e-6 there

CFG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama",
    "hidden_size": 32, "intermediate_size": 88, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 64,
    "max_position_embeddings": 128, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
    "tie_word_embeddings": True, "bos_token_id": 1, "eos_token_id": 2,
    "hidden_act": "silu", "torch_dtype": "float32",
}


class Rng:  # splitmix64
    def __init__(self, seed):
        self.s = seed & 0xFFFFFFFFFFFFFFFF

    def u64(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def uniform(self, scale):  # in [-scale, scale), exact in f32 for a power-of-two scale
        return ((self.u64() >> 40) - (1 << 23)) / (1 << 23) * scale


def weights(rng):
    D, F, L = CFG["hidden_size"], CFG["intermediate_size"], CFG["num_hidden_layers"]
    H, KV, V = CFG["num_attention_heads"], CFG["num_key_value_heads"], CFG["vocab_size"]
    hd = D // H
    mat = lambda r, c, s: [[rng.uniform(s) for _ in range(c)] for _ in range(r)]
    vec = lambda n, base, s: [base + rng.uniform(s) for _ in range(n)]
    # scales: matrices ~4x the usual 1/sqrt(fan_in), so each layer moves the residual stream
    # away from the input embedding (with tied embeddings a weaker stack repeats its input:
    # half these scales gave 4-17 distinct ids in 40)
    W = {"model.embed_tokens.weight": mat(V, D, 1.0), "model.norm.weight": vec(D, 1.0, 0.25)}
    for l in range(L):
        p = "model.layers.%d." % l
        W[p + "input_layernorm.weight"] = vec(D, 1.0, 0.25)
        W[p + "post_attention_layernorm.weight"] = vec(D, 1.0, 0.25)
        W[p + "self_attn.q_proj.weight"] = mat(H * hd, D, 1.0)
        W[p + "self_attn.k_proj.weight"] = mat(KV * hd, D, 1.0)
        W[p + "self_attn.v_proj.weight"] = mat(KV * hd, D, 1.0)
        W[p + "self_attn.o_proj.weight"] = mat(D, H * hd, 1.0)
        W[p + "mlp.gate_proj.weight"] = mat(F, D, 1.0)
        W[p + "mlp.up_proj.weight"] = mat(F, D, 1.0)
        W[p + "mlp.down_proj.weight"] = mat(D, F, 0.5)
    return W


def write_safetensors(path, W):
    hdr, blobs, off = {}, [], 0
    for k in sorted(W):
        v = W[k]
        flat = [x for r in v for x in r] if isinstance(v[0], list) else v
        shape = [len(v), len(v[0])] if isinstance(v[0], list) else [len(v)]
        b = struct.pack("<%df" % len(flat), *flat)
        hdr[k] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


# ---- the independent reference: reads the safetensors file back, float64 throughout ----
def read_safetensors(path):  # {name: row lists (2-D) or a list (1-D)} of f32 values
    b = open(path, "rb").read(); n = struct.unpack("<Q", b[:8])[0]
    hdr = json.loads(b[8:8 + n]); W = {}
    for k, v in hdr.items():
        if k == "__metadata__": continue
        s, e = v["data_offsets"]; a = list(struct.unpack("<%df" % ((e - s) // 4), b[8 + n + s:8 + n + e]))
        W[k] = [a[r * v["shape"][1]:(r + 1) * v["shape"][1]] for r in range(v["shape"][0])] if len(v["shape"]) == 2 else a
    return W


def reference(d, n_gen):
    return forward(json.load(open(d + "/config.json")), read_safetensors(d + "/model.safetensors"), n_gen)[:3]


def forward(cfg, W, n_gen, feed=None):
    """HF names and layout. Greedy from BOS for n_gen steps: (ids, logits after BOS, min
    top-2 gap, last logits); with `feed`, those tokens are fed instead (BOS first) and the
    last logits are those after feed[-1]."""
    D, L, H, KV = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd, eps = D // H, cfg["rms_norm_eps"]; inv = [cfg["rope_theta"] ** (-2 * i / hd) for i in range(hd // 2)]
    mv = lambda M, x: [sum(p * q for p, q in zip(r, x)) for r in M]
    def rms(x, w): s = 1 / math.sqrt(sum(v * v for v in x) / len(x) + eps); return [v * s * g for v, g in zip(x, w)]
    def rope(v, nh, pos):
        o = list(v)
        for h in range(nh):
            for i in range(hd // 2):
                c, s = math.cos(pos * inv[i]), math.sin(pos * inv[i]); a, z = v[h*hd+i], v[h*hd+i+hd//2]
                o[h*hd+i], o[h*hd+i+hd//2] = a * c - z * s, a * s + z * c
        return o
    E = W["model.embed_tokens.weight"]; Kc = [[] for _ in range(L)]; Vc = [[] for _ in range(L)]
    def step(tok, pos):
        x = list(E[tok])
        for l in range(L):
            p = "model.layers.%d." % l; xb = rms(x, W[p + "input_layernorm.weight"])
            q = rope(mv(W[p + "self_attn.q_proj.weight"], xb), H, pos)
            Kc[l].append(rope(mv(W[p + "self_attn.k_proj.weight"], xb), KV, pos)); Vc[l].append(mv(W[p + "self_attn.v_proj.weight"], xb))
            att = [0.0] * D
            for h in range(H):
                g = h // (H // KV); sc = [sum(q[h*hd+i] * k[g*hd+i] for i in range(hd)) / math.sqrt(hd) for k in Kc[l]]
                m = max(sc); e = [math.exp(s - m) for s in sc]; z = sum(e)
                for i in range(hd): att[h*hd+i] = sum(e[t] / z * Vc[l][t][g*hd+i] for t in range(len(e)))
            x = [a + c for a, c in zip(x, mv(W[p + "self_attn.o_proj.weight"], att))]; xb = rms(x, W[p + "post_attention_layernorm.weight"])
            hh = [a / (1 + math.exp(-a)) * u for a, u in zip(mv(W[p + "mlp.gate_proj.weight"], xb), mv(W[p + "mlp.up_proj.weight"], xb))]
            x = [a + c for a, c in zip(x, mv(W[p + "mlp.down_proj.weight"], hh))]
        return mv(E, rms(x, W["model.norm.weight"]))
    tok, out, first, gap = cfg["bos_token_id"], [], None, math.inf
    for pos in range(len(feed) if feed else n_gen):
        lg = step(feed[pos] if feed else tok, pos)
        first = first or lg
        top = sorted(lg, reverse=True)
        gap = min(gap, (top[0] - top[1]) / max(abs(v) for v in lg))
        tok = max(range(len(lg)), key=lambda i: (lg[i], -i)); out.append(tok)
    return out, first, gap, lg


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(OUT + "/config.json", "w") as f:
        json.dump(CFG, f, indent=1)
        f.write("\n")
    write_safetensors(OUT + "/model.safetensors", weights(Rng(SEED)))
    ids, logits, gap = reference(OUT, N_GEN)
    if gap < MIN_GAP:
        sys.exit("make_tiny_llama: smallest top-2 gap %.3g < %.0e: pick another SEED" % (gap, MIN_GAP))
    if len(set(ids)) < 10:
        sys.exit("make_tiny_llama: only %d distinct ids in %d: pick another SEED" % (len(set(ids)), N_GEN))
    with open(OUT + "/expected.txt", "w") as f:
        f.write("# written by tests/llm/data/make_tiny_llama.py (float64 HF-semantics reference); do not edit\n")
        f.write("# smallest top-2 logit gap / max |logit| over the %d steps: %.3g\n" % (N_GEN, gap))
        f.write("greedy_from_bos %s\n" % " ".join(map(str, ids)))
        f.write("logits_after_bos %s\n" % " ".join("%.17g" % v for v in logits))
    print("tiny_llama: %d ids, %d distinct, min gap %.3g: %s" % (len(ids), len(set(ids)), gap, ids))


if __name__ == "__main__":
    main()
