#!/usr/bin/env python3
"""Writes OUTDIR/model-{f32,q8_0,q4_0}.gguf and expected_gguf.txt (the build runs it on the
build tree's tiny_llama/ at every build; nothing is committed): the
tiny Llama of make_tiny_llama.py (read back from its model.safetensors) as GGUF v3 files
written by this script's own code, independent of wgfuse's writer (gguf.c), quantizers and
decoders (dtype.c, quant.c) and q/k permutation (wgf__llama_perm_row), from the formats as
their owners document them:
  - GGUF v3 (ggml docs/gguf.md): "GGUF", u32 version 3, u64 n_tensors, u64 n_kv; each KV is
    a string key (u64 length + bytes), a u32 value type, the value; each tensor info is a
    name, u32 n_dims, u64 dims innermost first (ne0 = the row length), u32 ggml type, u64
    offset from the start of the data section; the data section starts at the next multiple
    of general.alignment (32 by default), every offset a multiple of it, zero padding.
  - llama.cpp convert_hf_to_gguf.py's Llama q/k row permutation: rows reshaped to
    (n_head, 2, head_dim/2) and axes 1, 2 swapped (k uses the KV head count), tensor names
    token_embd / blk.N.attn_q ... / output_norm, output.weight omitted when tied, 1-D
    tensors kept f32, a matrix whose row length is not a multiple of 32 written as F16
    (convert_hf_to_gguf's fallback on gguf-py's QuantError).
  - ggml's reference quantizers (quantize_row_q8_0_ref / q4_0_ref), arithmetic in f32:
    Q8_0 block = f16 d, 32 int8; d = max|x| / 127, q = round-half-away(x / d).
    Q4_0 block = f16 d, 16 bytes; m = the first element of largest |x|, d = m / -8,
    q = min(15, trunc(x / d + 8.5)); byte j holds element j in its low nibble and element
    j + 16 in its high nibble; x = (q - 8) * d.
expected_gguf.txt holds PROMPT and, for each file, the logits after PROMPT's last token of
make_tiny_llama's float64 HF-semantics forward run on the weights this script dequantizes
from the blocks it wrote (F16 down_proj included; the HF f32 weights for model-f32.gguf).
A prompt, not BOS alone: with one position, attention returns v whatever q and k are, so
logits after BOS cannot see a q/k row order. test_gguf_fixtures.c loads the files with
wgfuse's loader and compares.

Standard library only, deterministic. By hand (after make_tiny_llama.py OUTDIR):
    python3 tests/llm/data/make_tiny_gguf.py OUTDIR
"""
import json, os, struct, sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tiny_llama as tl  # read_safetensors and the float64 forward

F32, F16, Q4_0, Q8_0 = 0, 1, 2, 8  # ggml_type
FILE_TYPE = {F32: 0, Q8_0: 7, Q4_0: 2}  # llama_ftype (general.file_type)
V_U32, V_F32, V_STR = 4, 6, 8  # gguf_metadata_value_type
ALIGN = 32
PROMPT = [1, 42, 25, 47, 34, 55, 11, 40]  # BOS and the f32 model's greedy continuation: positions 0..7


def f32(x):  # round a Python float to f32, as ggml's float arithmetic does
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f16_bytes(x):
    return struct.pack("<e", x)  # IEEE half, round to nearest even


def f16_val(b):
    return struct.unpack("<e", b)[0]


# ---- ggml blocks -------------------------------------------------------------------------
def q8_0_block(x):
    amax = max(abs(v) for v in x)
    d = f32(amax / 127)
    inv = f32(1 / d) if d else 0.0
    q = []
    for v in x:
        t = f32(v * inv)
        r = int(abs(t) + 0.5) * (1 if t >= 0 else -1)  # roundf: half away from zero
        q.append(r)
    return f16_bytes(d) + struct.pack("<32b", *q)


def q8_0_dequant(b):
    d = f16_val(b[:2])
    return [f32(d * q) for q in struct.unpack("<32b", b[2:34])]


def q4_0_block(x):
    amax, m = 0.0, 0.0
    for v in x:
        if abs(v) > amax:
            amax, m = abs(v), v
    d = f32(m / -8)
    inv = f32(1 / d) if d else 0.0
    q = [min(15, int(f32(f32(v * inv) + 8.5))) for v in x]  # int(): truncation, as (int8_t)
    return f16_bytes(d) + bytes(q[j] | (q[j + 16] << 4) for j in range(16))


def q4_0_dequant(b):
    d = f16_val(b[:2])
    lo = [(c & 15) - 8 for c in b[2:18]]
    hi = [(c >> 4) - 8 for c in b[2:18]]
    return [f32(q * d) for q in lo + hi]


def encode_row(row, ty):  # -> (bytes, the row as the file holds it, dequantized)
    if ty == F32:
        return struct.pack("<%df" % len(row), *row), list(row)
    if ty == F16:
        b = b"".join(f16_bytes(v) for v in row)
        return b, [f16_val(b[i:i + 2]) for i in range(0, len(b), 2)]
    blk, deq = (q8_0_block, q8_0_dequant) if ty == Q8_0 else (q4_0_block, q4_0_dequant)
    out, vals = b"", []
    for i in range(0, len(row), 32):
        b = blk(row[i:i + 32])
        out += b
        vals += deq(b)
    return out, vals


# ---- llama.cpp's Llama q/k permutation ---------------------------------------------------
def permute(rows, n_head):
    """rows.reshape(n_head, 2, hd/2, cols).swapaxes(1, 2).reshape(rows.shape): new row
    (h, i, j) of shape (n_head, hd/2, 2) is old row (h, j, i) of (n_head, 2, hd/2)."""
    half = len(rows) // n_head // 2
    out = []
    for h in range(n_head):
        for i in range(half):
            for j in range(2):
                out.append(rows[h * 2 * half + j * half + i])
    return out


# ---- GGUF v3 writer ----------------------------------------------------------------------
def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, val):
    enc = {V_U32: lambda v: struct.pack("<I", v), V_F32: lambda v: struct.pack("<f", v), V_STR: gstr}[vtype]
    return gstr(key) + struct.pack("<I", vtype) + enc(val)


def write_gguf(path, kvs, tensors):  # tensors: (name, dims innermost first, type, bytes)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
    infos, data = b"", b""
    for name, dims, ty, blob in tensors:
        data += b"\0" * (-len(data) % ALIGN)
        infos += gstr(name) + struct.pack("<I", len(dims)) + struct.pack("<%dQ" % len(dims), *dims)
        infos += struct.pack("<IQ", ty, len(data))
        data += blob
    pre = head + infos
    with open(path, "wb") as f:
        f.write(pre + b"\0" * (-len(pre) % ALIGN) + data)


def build(cfg, W, qtype):
    """One GGUF's tensors from the HF weights, and the HF-layout weights it holds (dequantized)."""
    H, KV, L = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["num_hidden_layers"]
    tensors, held = [], {}

    def add(gname, hname, perm_heads=0):
        w = W[hname]
        if not isinstance(w[0], list):  # 1-D: f32
            tensors.append((gname, [len(w)], F32, struct.pack("<%df" % len(w), *w)))
            held[hname] = list(w)
            return
        ty = qtype if qtype == F32 or len(w[0]) % 32 == 0 else F16
        enc = [encode_row(r, ty) for r in w]  # per-row blocks: quantizing before permuting is the same
        held[hname] = [v for _, v in enc]
        if perm_heads:
            enc = permute(enc, perm_heads)
        tensors.append((gname, [len(w[0]), len(w)], ty, b"".join(b for b, _ in enc)))

    add("token_embd.weight", "model.embed_tokens.weight")
    for l in range(L):
        p, g = "model.layers.%d." % l, "blk.%d." % l
        add(g + "attn_norm.weight", p + "input_layernorm.weight")
        add(g + "attn_q.weight", p + "self_attn.q_proj.weight", H)
        add(g + "attn_k.weight", p + "self_attn.k_proj.weight", KV)
        add(g + "attn_v.weight", p + "self_attn.v_proj.weight")
        add(g + "attn_output.weight", p + "self_attn.o_proj.weight")
        add(g + "ffn_norm.weight", p + "post_attention_layernorm.weight")
        add(g + "ffn_gate.weight", p + "mlp.gate_proj.weight")
        add(g + "ffn_up.weight", p + "mlp.up_proj.weight")
        add(g + "ffn_down.weight", p + "mlp.down_proj.weight")
    add("output_norm.weight", "model.norm.weight")
    return tensors, held


def metadata(cfg, qtype):
    a, D, H = "llama", cfg["hidden_size"], cfg["num_attention_heads"]
    kvs = [kv("general.architecture", V_STR, a), kv("general.name", V_STR, "tiny_llama (make_tiny_gguf.py)"),
           kv("general.file_type", V_U32, FILE_TYPE[qtype])]
    if qtype != F32:
        kvs.append(kv("general.quantization_version", V_U32, 2))
    for key, v in [("context_length", cfg["max_position_embeddings"]), ("embedding_length", D),
                   ("block_count", cfg["num_hidden_layers"]), ("feed_forward_length", cfg["intermediate_size"]),
                   ("attention.head_count", H), ("attention.head_count_kv", cfg["num_key_value_heads"]),
                   ("rope.dimension_count", D // H), ("vocab_size", cfg["vocab_size"])]:
        kvs.append(kv(a + "." + key, V_U32, v))
    kvs.append(kv(a + ".attention.layer_norm_rms_epsilon", V_F32, cfg["rms_norm_eps"]))
    kvs.append(kv(a + ".rope.freq_base", V_F32, cfg["rope_theta"]))
    kvs.append(kv("tokenizer.ggml.bos_token_id", V_U32, cfg["bos_token_id"]))
    kvs.append(kv("tokenizer.ggml.eos_token_id", V_U32, cfg["eos_token_id"]))
    return kvs


def main():
    cfg = json.load(open(tl.OUT + "/config.json"))
    W = tl.read_safetensors(tl.OUT + "/model.safetensors")
    lines = ["# written by tests/llm/data/make_tiny_gguf.py (float64 forward on the weights it"
             " dequantizes from its own blocks); do not edit",
             "prompt %s" % " ".join(map(str, PROMPT))]
    for name, qtype in [("f32", F32), ("q8_0", Q8_0), ("q4_0", Q4_0)]:
        tensors, held = build(cfg, W, qtype)
        write_gguf("%s/model-%s.gguf" % (tl.OUT, name), metadata(cfg, qtype), tensors)
        logits = tl.forward(cfg, held, 0, PROMPT)[3]
        err = max(abs(a - b) for k in W if isinstance(W[k][0], list) for r, s in zip(W[k], held[k]) for a, b in zip(r, s))
        lines.append("# %s: max |weight - dequantized| %.3g" % (name, err))
        lines.append("logits_after_prompt_%s %s" % (name, " ".join("%.17g" % v for v in logits)))
        print("tiny_llama %s: max |weight - dequantized| %.3g, logit[0..3] %s" % (name, err, logits[:4]))
    with open(tl.OUT + "/expected_gguf.txt", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 1:  # the folder make_tiny_llama.py wrote (the build tree's)
        tl.OUT = sys.argv[1]
    main()
