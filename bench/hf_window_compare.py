#!/usr/bin/env python3
"""Sliding windows against Hugging Face transformers: tiny random models written by transformers.

    python3 bench/hf_window_compare.py [--wgfuse build/wgfuse] [--out DIR]

For each case, transformers builds a small random model (float32) and writes it with
save_pretrained; wgfuse runs the directory on a 24-token prompt (`run --tokens ... -n 1
--logits-out`) with cpu-ref and with the GPU plans roles (--weights f32) and unfused (the rows as stored,
f32 here), and the
logits of the 24 prompt positions are compared with transformers' forward (eager and sdpa
attention). The same weights without the window are compared too, so a window that is not
applied (or applied where transformers does not) shows as a large difference past it:

  phi3_w5        Phi-3, sliding_window 5 (every layer)
  qwen2_w5_l1    Qwen2, use_sliding_window, sliding_window 5, max_window_layers 1 (layer 1 slides)
  qwen2_off      Qwen2, sliding_window 5 but use_sliding_window false (no layer slides)

Prints one JSON line per (case, backend, attention implementation) and a verdict line.
Needs torch + transformers (the GPU host has them); the GPU rows need a WebGPU adapter."""
import argparse, json, os, subprocess, sys, tempfile

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, Phi3Config, Qwen2Config

ap = argparse.ArgumentParser()
ap.add_argument("--wgfuse", default="build/wgfuse")
ap.add_argument("--out", default=None, help="directory for the models (default: a temporary one)")
a = ap.parse_args()

N_TOK, W = 24, 5
common = dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
              max_position_embeddings=64, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, pad_token_id=0)
cases = {
    "phi3_w5": Phi3Config(num_key_value_heads=4, sliding_window=W, original_max_position_embeddings=64, **common),
    "qwen2_w5_l1": Qwen2Config(num_key_value_heads=2, use_sliding_window=True, sliding_window=W, max_window_layers=1,
                               **common),
    "qwen2_off": Qwen2Config(num_key_value_heads=2, use_sliding_window=False, sliding_window=W, **common),
}
rng = np.random.default_rng(7)
prompt = [int(t) for t in rng.integers(3, 256, N_TOK)]
backends = [("cpu-ref", []), ("gpu-roles", ["--backend", "gpu", "--plan", "roles", "--weights", "f32"]),
            ("gpu-unfused", ["--backend", "gpu", "--plan", "unfused"])]  # f32 rows as stored


def randomize(m, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in m.named_parameters():
            if p.dim() == 1:  # norms (and biases)
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g) if "norm" in name else 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.25 * torch.randn(p.shape, generator=g))


def hf_logits(d, impl, window):
    kw = {}
    if not window:  # the same weights, no window: the config overridden at load
        kw = {"sliding_window": None}
        if "qwen2" in d:
            kw.update(use_sliding_window=False, layer_types=["full_attention"] * common["num_hidden_layers"])
    m = AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32, attn_implementation=impl, **kw).eval()
    with torch.no_grad():
        return m(torch.tensor([prompt])).logits[0].numpy()


def rel(x, y):
    return float(np.abs(x - y).max() / np.abs(y).max())


ok = True
with tempfile.TemporaryDirectory() as td:
    root = a.out or td
    for name, cfg in cases.items():
        d = os.path.join(root, name)
        torch.manual_seed(0)
        m = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
        randomize(m, 11)
        m.save_pretrained(d, safe_serialization=True)
        ref = {impl: hf_logits(d, impl, True) for impl in ("eager", "sdpa")}
        nowin = hf_logits(d, "eager", None)
        slides = name != "qwen2_off"
        # transformers itself: rows inside the window equal the no-window model's, rows past it differ
        inside, past = rel(ref["eager"][:W], nowin[:W]), rel(ref["eager"][W:], nowin[W:])
        hf_applies = past > 1e-3
        print(json.dumps({"case": name, "transformers": transformers.__version__, "hf_window_rows_vs_none": inside,
                          "hf_past_window_vs_none": past, "hf_applies_window": hf_applies}))
        ok &= hf_applies == slides and inside < 1e-6
        for bname, flags in backends:
            npy = os.path.join(root, f"{name}_{bname}.npy")
            r = subprocess.run([a.wgfuse, "--quiet", "run", "-m", d, "--tokens", ",".join(map(str, prompt)), "-n", "1",
                                "--temp", "0", "--ignore-eos", "--logits-out", npy] + flags,
                               capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                print(json.dumps({"case": name, "backend": bname, "error": r.stderr.strip()[-400:]}))
                ok = False
                continue
            ours = np.load(npy)[:N_TOK]
            for impl in ("eager", "sdpa"):
                e = rel(ours, ref[impl])
                print(json.dumps({"case": name, "backend": bname, "attn": impl, "rel_logit_diff": e,
                                  "vs_no_window": rel(ours, nowin), "notes": [l for l in r.stderr.splitlines() if "note" in l]}))
                ok &= e < 1e-4
print("verdict:", "ok" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
