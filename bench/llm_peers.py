#!/usr/bin/env python3
"""The peer of `wgfuse llm bench`: Hugging Face transformers (PyTorch eager, CUDA) on the same
model directory, the same prompt ids and the same greedy decode, timed the same way.

    python3 bench/llm_peers.py MODEL_DIR [-n 64] [--prompt-tokens 32] [--runs 5] [--dtype float32]

Prompt: ids (i * 7919 + 1) % vocab for i < P, as src/cli/cmd_llm.c's llm_bench. Decode tok/s
= (n - 1) / (t(generate n) - t(generate 1)): generate(1) is the prefill plus the first token,
so the difference is n - 1 decode steps with the KV cache. Median over runs after a warm-up.
Prints one JSON line: ids (of the last run), prefill and decode tok/s."""
import argparse, json, statistics, time

import torch
from transformers import AutoModelForCausalLM

ap = argparse.ArgumentParser()
ap.add_argument("model")
ap.add_argument("-n", type=int, default=64)
ap.add_argument("--prompt-tokens", type=int, default=32)
ap.add_argument("--runs", type=int, default=5)
ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
a = ap.parse_args()

dev = "cuda"
m = AutoModelForCausalLM.from_pretrained(a.model, torch_dtype=getattr(torch, a.dtype)).to(dev).eval()
V = m.config.vocab_size
prompt = torch.tensor([[(i * 7919 + 1) % V for i in range(a.prompt_tokens)]], device=dev)


def gen(n):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with torch.no_grad():
        out = m.generate(prompt, max_new_tokens=n, min_new_tokens=n, do_sample=False, num_beams=1,
                         eos_token_id=None, pad_token_id=0, use_cache=True)
    torch.cuda.synchronize()
    return time.perf_counter() - t0, out[0, a.prompt_tokens:].tolist()


gen(a.n)  # warm-up (kernels, allocator)
pre, dec, ids = [], [], None
for _ in range(a.runs):
    t1, _ = gen(1)
    tn, ids = gen(a.n)
    pre.append(a.prompt_tokens / t1)
    dec.append((a.n - 1) / max(tn - t1, 1e-9))
print(json.dumps({"peer": "transformers " + __import__("transformers").__version__ + ", torch " + torch.__version__,
                  "dtype": a.dtype, "device": torch.cuda.get_device_name(0), "prompt_tokens": a.prompt_tokens,
                  "n": a.n, "runs": a.runs, "prefill_tok_s_median": statistics.median(pre),
                  "decode_tok_s_median": statistics.median(dec), "decode_tok_s_best": max(dec), "ids": ids}))
