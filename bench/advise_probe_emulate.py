#!/usr/bin/env python3
"""The advisor's probe model (src/sim/sim_advise.c, compose()) emulated on an earlier run's
per-kernel GPU timestamps, to see whether composing measured kernels predicts every CartPole
strategy x evolve x episode length. Not a probe run: the "probe" numbers below come from the
run's own `sim bench` profiles (reset | episode | evolve passes, GPU timestamps):

  chunk_us      per-step episode pass at L=10 / 10 dispatches
  step_us       (fused episode at L=100 - fused at L=10) / 90  (one dispatch each)
  wide_us/step  fused-wide's episode at L=10 and L=100, the same way
  reset, evolve the L=10 fused rows' reset and evolve passes (per evolve variant)
  host, submit  least squares of (wall - GPU) = dispatches x host + submit / GENS over the
                L=10 rows only

so L=500 (15 plans) is out of sample, L=10 and L=100 partly in. The population is resident on
a GPU: an episode dispatch lasts as long as the longest episode, the episode limit here.

    bench/advise_probe_emulate.py RUNDIR [--gens 3]      (RUNDIR: bench/h200_advise2.sh's)
"""
import argparse
import json
import math
import os
import sys


def load(rundir):
    rows = {}
    for L in (10, 100, 500):
        for ev in ("split", "thread", "wide"):
            path = os.path.join(rundir, f"sim_L{L}_{ev}.json")
            text = open(path, encoding="utf-8").read()
            for r in json.loads(text[text.index("{"):])["results"]:
                rows[(L, ev, r["strategy"])] = r
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rundir")
    ap.add_argument("--gens", type=int, default=3)
    a = ap.parse_args()
    D = load(a.rundir)
    us = lambda k, f: D[k][f] * 1e3  # noqa: E731  (ms -> us)
    chunk = us((10, "split", "per-step"), "gpu_ms_episode") / 10
    step = (us((100, "split", "fused"), "gpu_ms_episode") - us((10, "split", "fused"), "gpu_ms_episode")) / 90
    wstep = (us((100, "split", "fused-wide"), "gpu_ms_episode") - us((10, "split", "fused-wide"), "gpu_ms_episode")) / 90
    wide = us((10, "split", "fused-wide"), "gpu_ms_episode") - 10 * wstep
    reset = us((10, "split", "fused"), "gpu_ms_reset")
    evolve = {e: us((10, e, "fused"), "gpu_ms_evolve") for e in ("split", "thread", "wide")}
    # host: (wall - gpu) per generation = n host + submit / gens, least squares over L = 10
    xs, ys = [], []
    for (L, ev, s), r in D.items():
        if L != 10:
            continue
        wall = 1e6 / r["gen_per_s_noreadback"]
        gpu = (r["gpu_ms_reset"] + r["gpu_ms_episode"] + r["gpu_ms_evolve"]) * 1e3
        xs.append(r["dispatches_per_gen"])
        ys.append(wall - gpu)
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    host = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    fixed = my - host * mx
    print(f"probe (emulated, us): chunk {chunk:.3f} step {step:.4f} wide {wide:.3f} + {wstep:.4f}/step reset {reset:.3f} "
          f"evolve split {evolve['split']:.2f} thread {evolve['thread']:.2f} wide {evolve['wide']:.2f} "
          f"host {host:.3f}/dispatch + {fixed:.2f}/generation")
    print(f"{'L':>4} {'plan':<22} {'pred ms':>9} {'meas ms':>9} {'error':>8}")
    within = total = 0
    fastest = {}
    for L in (10, 100, 500):
        for ev in ("split", "thread", "wide"):
            for s in ("fused", "fused-wide", "chunked:10", "chunked:50", "per-step"):
                r = D[(L, ev, s)]
                meas = 1e6 / r["gen_per_s_noreadback"]
                if s == "fused-wide":
                    ep = wide + wstep * L
                else:
                    K = min({"fused": L, "chunked:10": 10, "chunked:50": 50, "per-step": 1}[s], L)
                    ep = sum(chunk + step * (min(K, L - i * K) - 1) for i in range(math.ceil(L / K)))
                pred = reset + ep + evolve[ev] + r["dispatches_per_gen"] * host + fixed
                err = pred / meas - 1
                total += 1
                within += abs(err) <= 0.25
                print(f"{L:>4} {s + '/' + ev:<22} {pred / 1e3:9.4f} {meas / 1e3:9.4f} {100 * err:+7.1f}%")
                fastest.setdefault(L, []).append((pred, meas, s + "/" + ev))
    print(f"within 25%: {within} of {total} plans")
    for L, v in fastest.items():
        rec = min(v)[2]
        best = min(v, key=lambda x: x[1])
        slower = next(m for p, m, name in v if name == rec) / best[1] - 1
        print(f"L={L}: recommended {rec}, measured fastest {best[2]}, recommended slower by {100 * slower:.1f}%")
    return 0 if total else 1


if __name__ == "__main__":
    sys.exit(main())
