#!/usr/bin/env python3
"""The strongest PyTorch decode we know how to write, as the peer of `wgfuse llm bench --shape`:
a minimal hand-written decoder (fused QKV and gate/up weights, static KV cache, SDPA with GQA,
RMSNorm and RoPE in plain torch ops), one whole decode step captured in a CUDA graph and
replayed, the sampled token fed back on the GPU (argmax written into the graph's input), so
the host does nothing per token. Random weights with the real shapes (no download), the same
greedy protocol: a P-token prompt, then N decoded tokens.

    python3 bench/llm_peer_graph.py --shape qwen2.5-0.5b [--dtype float16] [-n 256] [--prompt-tokens 32]
                                    [--runs 5] [--prefill 512] [--eager]

Timing: CUDA events around N graph replays after 3 warm-up replays; decode tok/s = N / time;
median and best over --runs (every run's rate in decode_tok_s). --eager also times the same step
launched op by op without the graph (eager_decode_tok_s). --prefill P also times transformers' own model (AutoModel from the
same config, random init, eager, the library's default attention) on a P-token prompt (median
of 10 after at least 3 prompts and 1 s of warm-up): prefill tok/s = P / time. Prints one JSON line."""
import argparse, json, math, statistics, time

import torch
import torch.nn.functional as F

SHAPES = {
    "qwen2.5-0.5b": dict(arch="qwen2", dim=896, hidden=4864, layers=24, heads=14, kv=2, vocab=151936, bias=True,
                         tied=True, theta=1e6, eps=1e-6),
    "qwen2.5-1.5b": dict(arch="qwen2", dim=1536, hidden=8960, layers=28, heads=12, kv=2, vocab=151936, bias=True,
                         tied=True, theta=1e6, eps=1e-6),
    "phi-3-mini": dict(arch="phi3", dim=3072, hidden=8192, layers=32, heads=32, kv=32, vocab=32064, bias=False,
                       tied=False, theta=1e4, eps=1e-5),
    "llama-3.2-1b": dict(arch="llama", dim=2048, hidden=8192, layers=16, heads=32, kv=8, vocab=128256, bias=False,
                         tied=True, theta=5e5, eps=1e-5),
}

ap = argparse.ArgumentParser()
ap.add_argument("--shape", default="qwen2.5-0.5b", choices=sorted(SHAPES))
ap.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "float32"])
ap.add_argument("-n", type=int, default=256)
ap.add_argument("--prompt-tokens", type=int, default=32)
ap.add_argument("--runs", type=int, default=5)
ap.add_argument("--prefill", type=int, default=0)
ap.add_argument("--eager", action="store_true", help="also time the same step without the graph (eager launches)")
a = ap.parse_args()
S = SHAPES[a.shape]
dev, dt = "cuda", getattr(torch, a.dtype)
torch.manual_seed(0)
D, H, L, NH, NKV, V = S["dim"], S["hidden"], S["layers"], S["heads"], S["kv"], S["vocab"]
HD = D // NH
Q, KV = NH * HD, NKV * HD
MAXLEN = a.prompt_tokens + a.n + 8


def rnd(*shape, scale):
    return (torch.randn(*shape, device=dev, dtype=torch.float32) * scale).to(dt)


layers = []
for _ in range(L):
    layers.append(dict(
        wqkv=rnd(Q + 2 * KV, D, scale=D ** -0.5), bqkv=rnd(Q + 2 * KV, scale=0.05) if S["bias"] else None,
        wo=rnd(D, Q, scale=Q ** -0.5), wgu=rnd(2 * H, D, scale=D ** -0.5), wd=rnd(D, H, scale=H ** -0.5),
        g1=torch.ones(D, device=dev, dtype=dt), g2=torch.ones(D, device=dev, dtype=dt)))
emb = rnd(V, D, scale=1.0)
lm_head = emb if S["tied"] else rnd(V, D, scale=D ** -0.5)
gout = torch.ones(D, device=dev, dtype=dt)
inv = 1.0 / (S["theta"] ** (torch.arange(0, HD, 2, device=dev, dtype=torch.float32) / HD))
ang = torch.arange(MAXLEN, device=dev, dtype=torch.float32)[:, None] * inv[None, :]
cos_t, sin_t = torch.cos(ang).to(dt), torch.sin(ang).to(dt)  # (MAXLEN, HD/2)
kc = torch.zeros(L, 1, NKV, MAXLEN, HD, device=dev, dtype=dt)
vc = torch.zeros(L, 1, NKV, MAXLEN, HD, device=dev, dtype=dt)
ar = torch.arange(MAXLEN, device=dev)


def rms(x, g):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + S["eps"])).to(dt) * g


def rope(x, pos):  # x (1, heads, T, HD), pos (T,)
    c, s = cos_t[pos][None, None], sin_t[pos][None, None]
    x1, x2 = x[..., : HD // 2], x[..., HD // 2:]
    return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1)


def forward(tok, pos):  # tok (T,) ids, pos (T,) positions; returns logits of the last row
    T = tok.shape[0]
    x = emb[tok][None]  # (1, T, D)
    mask = ar[None, :] <= pos[:, None]  # (T, MAXLEN): causal over the static cache
    for l, W in enumerate(layers):
        h = rms(x, W["g1"])
        qkv = F.linear(h, W["wqkv"], W["bqkv"])
        q, k, v = qkv.split([Q, KV, KV], dim=-1)
        q = rope(q.view(1, T, NH, HD).transpose(1, 2), pos)
        k = rope(k.view(1, T, NKV, HD).transpose(1, 2), pos)
        v = v.view(1, T, NKV, HD).transpose(1, 2)
        kc[l].index_copy_(2, pos, k)
        vc[l].index_copy_(2, pos, v)
        o = F.scaled_dot_product_attention(q, kc[l], vc[l], attn_mask=mask[None, None], enable_gqa=True)
        x = x + F.linear(o.transpose(1, 2).reshape(1, T, Q), W["wo"])
        gu = F.linear(rms(x, W["g2"]), W["wgu"])
        g, u = gu.split([H, H], dim=-1)
        x = x + F.linear(F.silu(g) * u, W["wd"])
    return F.linear(rms(x[:, -1], gout), lm_head)  # (1, V)


tok_buf = torch.zeros(1, dtype=torch.long, device=dev)
pos_buf = torch.zeros(1, dtype=torch.long, device=dev)


def step():
    logits = forward(tok_buf, pos_buf)
    tok_buf.copy_(logits.argmax(-1))
    pos_buf.add_(1)


prompt = torch.tensor([(i * 7919 + 1) % V for i in range(a.prompt_tokens)], device=dev)


def start():
    with torch.no_grad():
        logits = forward(prompt, torch.arange(a.prompt_tokens, device=dev))
        tok_buf.copy_(logits.argmax(-1))
        pos_buf.fill_(a.prompt_tokens)


with torch.no_grad():
    start()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    start()
    with torch.cuda.graph(graph):
        step()

dec, ids = [], None
for r in range(a.runs + 1):
    start()
    for _ in range(3):  # warm-up replays (positions are rewound by start())
        graph.replay()
    start()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    out = []
    e0.record()
    for _ in range(a.n):
        graph.replay()
    e1.record()
    torch.cuda.synchronize()
    if r > 0:
        dec.append(a.n / (e0.elapsed_time(e1) * 1e-3))

res = {"peer": "pytorch %s, hand-written decode, static KV cache, CUDA graph per step, token fed back on the GPU"
       % torch.__version__, "shape": a.shape, "dtype": a.dtype, "device": torch.cuda.get_device_name(0),
       "prompt_tokens": a.prompt_tokens, "n": a.n, "runs": a.runs,
       "decode_tok_s_median": statistics.median(dec), "decode_tok_s_best": max(dec), "decode_tok_s": dec}

if a.eager:  # the same step, launched op by op (no graph); the token still stays on the GPU
    eag = []
    with torch.no_grad():
        for r in range(a.runs + 1):
            start()
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(a.n):
                step()
            e1.record()
            torch.cuda.synchronize()
            if r > 0:
                eag.append(a.n / (e0.elapsed_time(e1) * 1e-3))
    res.update({"eager_decode_tok_s_median": statistics.median(eag), "eager_decode_tok_s": eag})

if a.prefill:
    import transformers
    from transformers import AutoModelForCausalLM
    if S["arch"] == "qwen2":
        cfg = transformers.Qwen2Config(hidden_size=D, intermediate_size=H, num_hidden_layers=L, num_attention_heads=NH,
                                       num_key_value_heads=NKV, vocab_size=V, tie_word_embeddings=S["tied"],
                                       rope_theta=S["theta"], rms_norm_eps=S["eps"], max_position_embeddings=32768)
    elif S["arch"] == "phi3":
        cfg = transformers.Phi3Config(hidden_size=D, intermediate_size=H, num_hidden_layers=L, num_attention_heads=NH,
                                      num_key_value_heads=NKV, vocab_size=V, rope_theta=S["theta"],
                                      rms_norm_eps=S["eps"], max_position_embeddings=4096, pad_token_id=0)
    else:
        cfg = transformers.LlamaConfig(hidden_size=D, intermediate_size=H, num_hidden_layers=L, num_attention_heads=NH,
                                       num_key_value_heads=NKV, vocab_size=V, tie_word_embeddings=S["tied"],
                                       rope_theta=S["theta"], rms_norm_eps=S["eps"])
    del layers, kc, vc
    torch.cuda.empty_cache()
    with torch.device(dev):  # random init on the GPU (on the CPU a 3.8B model takes a minute)
        m = AutoModelForCausalLM.from_config(cfg, torch_dtype=dt).eval()
    ids = torch.tensor([[(i * 7919 + 1) % V for i in range(a.prefill)]], device=dev)
    ts = []
    with torch.no_grad():
        # warm-up: at least 3 prompts and 1 s of them (a 512-token prefill takes ~20 ms; one
        # warm-up prompt left the clocks and cuBLAS's choices settling, and the median of 5
        # moved ~2x between processes on the H100), then 10 timed
        w0 = time.perf_counter()
        for r in range(1000):
            m(ids, use_cache=True, logits_to_keep=1)
            torch.cuda.synchronize()
            if r >= 2 and time.perf_counter() - w0 > 1.0:
                break
        for r in range(10):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            m(ids, use_cache=True, logits_to_keep=1)
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t0)
    res.update({"prefill_peer": "transformers %s eager" % transformers.__version__, "prefill_tokens": a.prefill,
                "prefill_tok_s_median": a.prefill / statistics.median(ts)})
print(json.dumps(res))
