#!/usr/bin/env python3
"""Widen a small Hugging Face Llama (f32 safetensors) with zeros so its matrices have rows
of whole 256-blocks, computing the same function (issue 14, bench/quant_kl.sh WIDEN=...).

    python3 bench/quant_kl_widen.py IN_DIR OUT_DIR WIDTH

Why: stories260k (dim 64, hidden 172) is the only trained model here, and at width 64 no
k-quant block fits a row, so every k-quant recipe falls back to the 32-blocks and the KL
table cannot tell Q2_K from Q4_0. Widening the residual stream to WIDTH and the FFN to a
multiple of 256 with zero weights keeps the function: the new residual coordinates stay 0
(zero embedding columns, zero o_proj/down_proj rows), q/k/v/gate/up read them through zero
columns, and RMSNorm, which now averages over WIDTH instead of D, is compensated exactly:
    x / sqrt(ms_D * D/W + eps * D/W) * w * sqrt(D/W)  ==  x / sqrt(ms_D + eps) * w
(norm weights scaled by sqrt(D/W), rms_norm_eps by D/W; exact in binary for D/W = 1/4).
The head layout is kept with an explicit head_dim. Each widened row then holds the real
values in its first D (or hidden) columns and zeros after them: a 256-block is quantized
with the real values' own scales (all-zero sub-blocks stay zero in every k-quant), so a
recipe's quantization error on the real weights is what it would be on a row of that
length. o_proj rows (n_heads * head_dim = D columns) stay narrow and fall back as before.
Standard library only (no numpy)."""
import array
import json
import math
import os
import struct
import sys


def read_st(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    hdr = json.loads(b[8:8 + n])
    base = 8 + n
    out = {}
    for k, v in hdr.items():
        if k == "__metadata__":
            continue
        if v["dtype"] != "F32":
            sys.exit("%s: tensor %s is %s (f32 only)" % (path, k, v["dtype"]))
        a = array.array("f")
        s, e = v["data_offsets"]
        a.frombytes(b[base + s:base + e])
        out[k] = (v["shape"], a)
    return out


def write_st(path, tensors):
    hdr, off, blobs = {}, 0, []
    for k in sorted(tensors):
        shape, a = tensors[k]
        raw = a.tobytes()
        hdr[k] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * ((-len(h)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for raw in blobs:
            f.write(raw)


def pad2(shape, a, rows, cols):
    """(r, c) row-major -> (rows, cols), zeros outside."""
    r, c = shape
    out = array.array("f", bytes(4 * rows * cols))
    for i in range(r):
        out[i * cols:i * cols + c] = a[i * c:(i + 1) * c]
    return [rows, cols], out


def main():
    src, dst, width = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cfg = json.load(open(src + "/config.json"))
    if cfg.get("model_type") != "llama":
        sys.exit("%s: model_type %s (llama only)" % (src, cfg.get("model_type")))
    D, F, H = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_attention_heads"]
    hd = cfg.get("head_dim", D // H)
    W, FW = width, -(-cfg["intermediate_size"] // 256) * 256
    if W < D or W % 256:
        sys.exit("WIDTH %d: a multiple of 256, at least hidden_size %d" % (W, D))
    t = read_st(src + "/model.safetensors")
    g = math.sqrt(D / W)
    out = {}
    for k, (shape, a) in t.items():
        if k.endswith("norm.weight"):
            n = array.array("f", bytes(4 * W))
            for i in range(D):
                n[i] = a[i] * g
            out[k] = ([W], n)
        elif k.endswith("embed_tokens.weight") or k.endswith("lm_head.weight"):
            out[k] = pad2(shape, a, shape[0], W)
        elif k.endswith(("q_proj.weight", "k_proj.weight", "v_proj.weight")):
            out[k] = pad2(shape, a, shape[0], W)
        elif k.endswith("o_proj.weight"):
            out[k] = pad2(shape, a, W, shape[1])
        elif k.endswith(("gate_proj.weight", "up_proj.weight")):
            out[k] = pad2(shape, a, FW, W)
        elif k.endswith("down_proj.weight"):
            out[k] = pad2(shape, a, W, FW)
        else:
            sys.exit("%s: tensor %s has no widening rule" % (src, k))
    cfg.update(hidden_size=W, intermediate_size=FW, head_dim=hd, rms_norm_eps=cfg.get("rms_norm_eps", 1e-6) * D / W)
    os.makedirs(dst, exist_ok=True)
    json.dump(cfg, open(dst + "/config.json", "w"), indent=1)
    write_st(dst + "/model.safetensors", out)
    print("widened %s: hidden %d -> %d, intermediate %d -> %d, head_dim %d, norm weights x %.6g, eps x %.6g"
          % (src, D, W, F, FW, hd, g, D / W))


if __name__ == "__main__":
    main()
