#!/usr/bin/env python3
"""Compare wgfuse's reference forward with Hugging Face transformers on one model directory.

    python3 bench/hf_compare.py MODEL_DIR [--wgfuse build/wgfuse] [--tokens 1] [-n 60]

Runs greedy generation in both from the same prompt ids, and compares the logits of every
evaluated position (wgfuse --logits-out vs transformers' forward on the same ids, float32).
Prints the max relative logit difference, the first diverging token (if any), and a one-line
JSON verdict. Needs torch + transformers (on the GPU host, or any machine with them)."""
import argparse, json, os, subprocess, sys, tempfile

import numpy as np
import torch
from transformers import AutoModelForCausalLM

ap = argparse.ArgumentParser()
ap.add_argument("model")
ap.add_argument("--wgfuse", default="build/wgfuse")
ap.add_argument("--tokens", default="1")
ap.add_argument("-n", type=int, default=60)
a = ap.parse_args()
prompt = [int(t) for t in a.tokens.split(",")]

m = AutoModelForCausalLM.from_pretrained(a.model, torch_dtype=torch.float32).eval()
with torch.no_grad():
    out = m.generate(torch.tensor([prompt]), max_new_tokens=a.n, do_sample=False, num_beams=1,
                     eos_token_id=None, pad_token_id=0)
hf_ids = out[0, len(prompt):].tolist()

with tempfile.TemporaryDirectory() as td:
    npy = os.path.join(td, "logits.npy")
    r = subprocess.run([a.wgfuse, "run", "-m", a.model, "--tokens", a.tokens, "-n", str(a.n), "--temp", "0",
                        "--ignore-eos", "--logits-out", npy], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("wgfuse failed: " + r.stderr.strip())
    ours_ids = [int(t) for t in r.stdout.replace(",", " ").split() if t.lstrip("-").isdigit()]
    ours = np.load(npy)

seq = prompt + hf_ids[: ours.shape[0] - len(prompt) + 1]
with torch.no_grad():
    ref = m(torch.tensor([seq[: ours.shape[0]]])).logits[0].numpy()
rel = float(np.abs(ours - ref).max() / np.abs(ref).max())
first = next((i for i, (x, y) in enumerate(zip(ours_ids, hf_ids)) if x != y), None)
print("hf     :", hf_ids)
print("wgfuse :", ours_ids)
print("max |logits diff| / max |logits| over %d positions: %.3g" % (ours.shape[0], rel))
print(json.dumps({"model": a.model, "positions": int(ours.shape[0]), "rel_logit_diff": rel,
                  "tokens_equal": ours_ids[: len(hf_ids)] == hf_ids, "first_diverging_index": first}))
