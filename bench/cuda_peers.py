#!/usr/bin/env python3
"""CUDA peers of `wgfuse bench`: the same experiments in PyTorch, on the same GPU, same shapes.

So that "WebGPU vs CUDA" is a ratio from one run on one machine, this measures with the
protocol of wgfuse bench (docs/methodology.md):

  launch      per-op cost of a tiny op (y = 2x + 1 on 64 floats) by the SEQUENTIAL method
              (wall time of N ops back to back + one synchronize, cost = least-squares slope
              over N) and by SINGLE-OP (one op + synchronize), for
                eager       PyTorch eager launches
                graph       the N ops captured in one CUDA graph, replayed
  fusion      the pairs of `wgfuse bench fusion` at the same shapes, f32, batch 1:
                rmsnorm     6 eager ops (pow, mean, add eps, rsqrt, mul, mul weight) vs
                            torch's fused F.rms_norm, each also replayed from a CUDA graph
                mlp         7 ops (gate mv, up mv, sigmoid, mul, mul, down mv, add) vs 3
                            ([gate;up] mv, silu*up, addmv down+residual), eager and graph
                kv_proj     2 mv vs 1 mv on [W_k; W_v]
                argmax      logits .cpu() + CPU argmax vs torch.argmax on device + .item()
  Every variant is checked against a float64 reference before any time is taken; a wrong
  one prints WRONG and no time. Fusion times are marginal costs per iteration,
  (t(2n) - t(n)) / n, like wgfuse bench fusion. Statistics: warm-up, repeated runs, median, percentile
  bootstrap 95% CI of the median (2000 resamples, fixed seed), CV, Tukey outliers (kept).

usage: python3 bench/cuda_peers.py [--size toy|qwen05b|both] [--quick] [--json] [--out FILE]
Needs torch with CUDA (falls back to --device cpu only for a dry run of the script).
"""
import argparse
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time

SIZES = {
    # Qwen/Qwen2.5-0.5B config.json; softmax_len unused here; vocab for the argmax
    "qwen05b": dict(hidden=896, intermediate=4864, n_heads=14, n_kv_heads=2, head_dim=64, vocab=151936, eps=1e-6),
    "toy": dict(hidden=256, intermediate=512, n_heads=4, n_kv_heads=2, head_dim=64, vocab=151936, eps=1e-6),
}
PAPER = {"sequential_us": 23.8, "single_op_us": 496.8, "rmsnorm_fusion": 1.41, "tiled_mlp": 1.17,
         "device_argmax_gain": 0.71}


# ---- statistics (the same definitions as src/bench/stats.c) -------------------------------
def quantile(sorted_x, p):
    n = len(sorted_x)
    if n == 1:
        return sorted_x[0]
    h = p * (n - 1)
    lo = int(math.floor(h))
    if lo >= n - 1:
        return sorted_x[-1]
    return sorted_x[lo] + (h - lo) * (sorted_x[lo + 1] - sorted_x[lo])


def summarize(x):
    s = sorted(x)
    n = len(s)
    mean = sum(s) / n
    sd = statistics.stdev(s) if n > 1 else 0.0
    q1, q3 = quantile(s, 0.25), quantile(s, 0.75)
    iqr = q3 - q1
    rng = random.Random(0x5EEDB007)
    meds = sorted(quantile(sorted(rng.choice(s) for _ in range(n)), 0.5) for _ in range(2000))
    return dict(n=n, median=quantile(s, 0.5), ci95_lo=quantile(meds, 0.025), ci95_hi=quantile(meds, 0.975),
                mean=mean, min=s[0], max=s[-1], stddev=sd, cv=(sd / abs(mean) if mean else 0.0), q1=q1, q3=q3,
                outliers=sum(1 for v in s if v < q1 - 1.5 * iqr or v > q3 + 1.5 * iqr))


def linfit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    icpt = my - slope * mx
    res = [y - (icpt + slope * x) for x, y in zip(xs, ys)]
    return dict(slope=slope, intercept=icpt, resid_rms=math.sqrt(sum(r * r for r in res) / n),
                resid_max=max(abs(r) for r in res))


# ---- harness --------------------------------------------------------------------------------
class Bench:
    def __init__(self, torch, device, reps, warmup):
        self.torch, self.device, self.reps, self.warmup = torch, device, reps, warmup

    def sync(self):
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def run_us(self, fn, n):
        self.sync()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        self.sync()
        return (time.perf_counter() - t0) * 1e6

    def time_us(self, fn, iters):
        """Marginal cost per iteration (us), as wgfuse bench fusion: each repetition times n and
        2n calls of fn (each followed by one synchronize); sample = (t(2n) - t(n)) / n."""
        out = []
        for rep in range(-self.warmup, self.reps):
            t1 = self.run_us(fn, iters)
            t2 = self.run_us(fn, 2 * iters)
            if rep >= 0:
                out.append((t2 - t1) / iters)
        return summarize(out)

    def graph(self, fn):
        """Capture fn in a CUDA graph; returns replay (None when not on CUDA)."""
        torch = self.torch
        if self.device != "cuda":
            return None
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        return g.replay


def launch_experiment(b, ns):
    """Sequential and single-op cost of a tiny op, eager and CUDA-graph replay."""
    torch = b.torch
    x = torch.tensor([((1 + (i * 7) % 32) / 8.0) * (-1 if i & 1 else 1) for i in range(64)],
                     dtype=torch.float32, device=b.device)
    y = torch.empty_like(x)
    one = torch.ones_like(x)

    def tiny1():
        torch.add(one, x, alpha=2.0, out=y)  # y = 1 + 2x: one kernel launch

    tiny1()
    b.sync()
    if not torch.equal(y.cpu(), (x * 2 + 1).cpu()):
        raise SystemExit("cuda_peers: tiny op wrong")
    res = {}
    for mode in ("eager", "graph"):
        if mode == "graph" and b.device != "cuda":
            continue
        slopes, per_n = [], {n: [] for n in ns}
        replays = {}
        if mode == "graph":
            for n in ns:
                replays[n] = b.graph(lambda n=n: [tiny1() for _ in range(n)])
        for rep in range(-b.warmup, b.reps):
            ts = []
            for n in ns:
                b.sync()
                t0 = time.perf_counter()
                if mode == "eager":
                    for _ in range(n):
                        tiny1()
                else:
                    replays[n]()
                b.sync()
                ts.append((time.perf_counter() - t0) * 1e6)
            if rep >= 0:
                slopes.append(linfit(ns, ts)["slope"])
                for n, t in zip(ns, ts):
                    per_n[n].append(t)
        med = [statistics.median(per_n[n]) for n in ns]
        single = []
        g1 = b.graph(tiny1) if mode == "graph" else None
        for rep in range(-b.warmup, b.reps * 3):
            b.sync()
            t0 = time.perf_counter()
            (g1 or tiny1)()
            b.sync()
            if rep >= 0:
                single.append((time.perf_counter() - t0) * 1e6)
        res[mode] = dict(per_op_us=summarize(slopes), fit=linfit(ns, med), points=dict(zip(ns, med)),
                         single_op_us=summarize(single))
    b.sync()
    if not torch.equal(y.cpu(), (x * 2 + 1).cpu()):
        raise SystemExit("cuda_peers: tiny op wrong after timing")
    return res


def check(name, got, want, tol):
    """max |got - want| <= tol * max |want| (want in float64)."""
    g = got.double().flatten().cpu()
    w = want.double().flatten().cpu()
    err = (g - w).abs().max().item()
    scale = w.abs().max().item()
    ok = math.isfinite(err) and err <= tol * scale
    return dict(name=name, correct=ok, max_abs_err=err, tol=tol * scale)


def fusion_experiments(b, size, iters):
    torch = b.torch
    dev, f32 = b.device, torch.float32
    H, I = size["hidden"], size["intermediate"]
    KV = size["n_kv_heads"] * size["head_dim"]
    V, eps = size["vocab"], size["eps"]
    gen = torch.Generator().manual_seed(20261130)

    def rnd(*shape, lo=-1.0, hi=1.0):
        t = torch.rand(*shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo
        t[t == 0] = hi * 0.5  # never zero
        return t

    out = []

    def run(exp, what, variants, ref, tol, n_iter):
        """variants: list of (name, launches, fn returning the output tensor)."""
        rows = []
        for name, launches, fn in variants:
            r = check(name, fn(), ref, tol)
            r["launches"] = launches
            rows.append(r)
        for r, (name, launches, fn) in zip(rows, variants):
            if r["correct"]:
                r["us_per_iter"] = b.time_us(fn, n_iter)
                g = b.graph(fn)
                if g is not None:
                    r["graph_us_per_iter"] = b.time_us(g, n_iter)
        base = rows[0].get("us_per_iter", {}).get("median")
        for r in rows:
            m = r.get("us_per_iter", {}).get("median")
            r["speedup"] = base / m if (base and m) else None
        out.append(dict(experiment=exp, what=what, iters=n_iter, variants=rows))

    # RMSNorm
    x64, w64 = rnd(H, lo=-2, hi=2), rnd(H, lo=0.5, hi=1.5)
    ref = x64 * w64 / torch.sqrt((x64 * x64).mean() + eps)
    x, w = x64.to(dev, f32), w64.to(dev, f32)

    def rms6():
        sq = torch.pow(x, 2)
        m = torch.mean(sq)
        me = torch.add(m, eps)
        rs = torch.rsqrt(me)
        xn = torch.mul(x, rs)
        return torch.mul(xn, w)

    variants = [("unfused_6", 6, rms6)]
    if hasattr(torch.nn.functional, "rms_norm"):
        variants.append(("fused_1 (F.rms_norm)", 1, lambda: torch.nn.functional.rms_norm(x, (H,), w, eps)))
    run("rmsnorm", "RMSNorm of one row, hidden %d: 6 eager ops vs F.rms_norm" % H, variants, ref, 1e-4, iters)

    # MLP
    s_h, s_i = 1 / math.sqrt(H), 1 / math.sqrt(I)
    xm64 = rnd(H)
    wgu64 = rnd(2 * I, H, lo=-2 * s_h, hi=2 * s_h)
    wd64 = rnd(H, I, lo=-2 * s_i, hi=2 * s_i)
    g64, u64 = wgu64[:I] @ xm64, wgu64[I:] @ xm64
    ref = xm64 + wd64 @ (g64 / (1 + torch.exp(-g64)) * u64)
    xm, wgu, wd = xm64.to(dev, f32), wgu64.to(dev, f32), wd64.to(dev, f32)
    wg, wu = wgu[:I].contiguous(), wgu[I:].contiguous()

    def mlp7():
        g = torch.mv(wg, xm)
        u = torch.mv(wu, xm)
        sg = torch.sigmoid(g)
        a = torch.mul(g, sg)
        h = torch.mul(a, u)
        d = torch.mv(wd, h)
        return torch.add(xm, d)

    def mlp3():
        gu = torch.mv(wgu, xm)
        h = torch.nn.functional.silu(gu[:I]) * gu[I:]  # silu + mul: 2 launches
        return torch.addmv(xm, wd, h)

    run("mlp", "MLP block, hidden %d, intermediate %d: 7 eager ops vs 4 ([gate;up] mv, silu, mul, addmv down+residual; wgfuse fuses silu*up into 1)" % (H, I),
        [("unfused_7", 7, mlp7), ("gateup_silu_mul_addmv", 4, mlp3)], ref, 2e-4, max(1, iters // 4))

    # K and V projections
    wkv64 = rnd(2 * KV, H, lo=-2 * s_h, hi=2 * s_h)
    ref = wkv64 @ xm64
    wkv = wkv64.to(dev, f32)
    wk, wv = wkv[:KV].contiguous(), wkv[KV:].contiguous()
    run("kv_proj", "K and V projections, hidden %d -> 2 x %d: 2 mv vs 1" % (H, KV),
        [("unfused_2", 2, lambda: torch.cat([torch.mv(wk, xm), torch.mv(wv, xm)])),
         ("fused_1", 1, lambda: torch.mv(wkv, xm))], ref, 1e-4, iters)
    # note: unfused_2 adds a cat for the check; its timing below uses the two mv alone
    out[-1]["variants"][0]["us_per_iter"] = b.time_us(lambda: (torch.mv(wk, xm), torch.mv(wv, xm)), iters)
    base = out[-1]["variants"][0]["us_per_iter"]["median"]
    for r in out[-1]["variants"]:
        m = r.get("us_per_iter", {}).get("median")
        r["speedup"] = base / m if m else None

    # greedy token
    lg64 = rnd(V, lo=-10, hi=10)
    win = V // 3 + random.Random(7).randrange(V // 3)
    lg64[win] = 12.5
    lg = lg64.to(dev, f32)
    rows = []
    tok_cpu = int(lg.cpu().argmax().item())
    tok_dev = int(torch.argmax(lg).item())
    for name, launches, fn, tok in (("readback_cpu", 0, lambda: int(lg.cpu().argmax().item()), tok_cpu),
                                    ("device_argmax", 1, lambda: int(torch.argmax(lg).item()), tok_dev)):
        r = dict(name=name, launches=launches, correct=tok == win, token=tok, reference=win)
        if r["correct"]:
            r["us_per_iter"] = b.time_us(fn, iters)
        rows.append(r)
    base = rows[0].get("us_per_iter", {}).get("median")
    for r in rows:
        m = r.get("us_per_iter", {}).get("median")
        r["speedup"] = base / m if (base and m) else None
    out.append(dict(experiment="argmax", what="greedy token over %d logits" % V, iters=iters, variants=rows))
    return out


def render_table(result):
    lines = ["cuda_peers: %s, torch %s, CUDA %s, %s" % (result["device_name"], result["torch"], result["cuda"],
                                                        result["date"])]
    for mode, r in result["launch"].items():
        p = r["per_op_us"]
        lines.append("launch %-6s per-op (sequential) %.2f us [%.2f, %.2f] CV %.1f%% outl %d; single-op %.2f us; "
                     "fit resid %.2f us" % (mode, p["median"], p["ci95_lo"], p["ci95_hi"], 100 * p["cv"],
                                           p["outliers"], r["single_op_us"]["median"], r["fit"]["resid_rms"]))
    for size, exps in result["fusion"].items():
        lines.append("")
        lines.append("fusion, size %s" % size)
        for e in exps:
            lines.append("  %s: %s" % (e["experiment"], e["what"]))
            for v in e["variants"]:
                if not v["correct"]:
                    lines.append("    %-24s WRONG (%s)" % (v["name"], v.get("max_abs_err", v.get("token"))))
                    continue
                u = v.get("us_per_iter")
                gtxt = ""
                if "graph_us_per_iter" in v:
                    gtxt = "  graph %.2f us" % v["graph_us_per_iter"]["median"]
                sp = ("%.2fx" % v["speedup"]) if v.get("speedup") else "-"
                lines.append("    %-24s %3d launches  %9.2f us [%.2f, %.2f] CV %4.1f%% outl %d  %s%s" % (
                    v["name"], v["launches"], u["median"], u["ci95_lo"], u["ci95_hi"], 100 * u["cv"], u["outliers"],
                    sp, gtxt))
    return "\n".join(lines) + "\n"


def write_atomic(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".cuda_peers.", dir=d)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="both", choices=["toy", "qwen05b", "both"])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ap.add_argument("--out", help="write the output to FILE (temp file + rename)")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("cuda_peers: torch is not installed")
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("cuda_peers: no CUDA device (use --device cpu for a dry run)")
    reps, warmup = (7, 2) if a.quick else (15, 3)
    b = Bench(torch, a.device, reps, warmup)
    ns = [8, 16, 32, 64, 128] if a.quick else [16, 32, 64, 128, 256, 512, 1024]
    result = dict(
        bench="cuda_peers", torch=torch.__version__, cuda=torch.version.cuda,
        device_name=torch.cuda.get_device_name() if a.device == "cuda" else "cpu",
        date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), reps=reps, warmup=warmup, ns=ns, paper=PAPER)
    result["launch"] = launch_experiment(b, ns)
    sizes = ["toy", "qwen05b"] if a.size == "both" else [a.size]
    result["fusion"] = {s: fusion_experiments(b, SIZES[s], 8 if a.quick else 32) for s in sizes}
    wrong = any(not v["correct"] for exps in result["fusion"].values() for e in exps for v in e["variants"])
    text = json.dumps(result, indent=2) + "\n" if a.json else render_table(result)
    if a.out:
        write_atomic(a.out, text)
    else:
        sys.stdout.write(text)
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
