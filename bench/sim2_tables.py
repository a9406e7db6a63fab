#!/usr/bin/env python3
"""Render an h200_sim2.sh output directory (issue 16) into tables.md and scale.svg.

    bench/sim2_tables.py OUTDIR

Reads the raw JSON the script wrote (sim_*.json from `wgfuse sim bench --json`, peers_*.json
from bench/sim_peers.py, scale_*.json, mpi_*.json) and writes, next to them:
  tables.md  the markdown for bench/RESULTS.md: the financial simulation (fused, fused-wide,
             JAX, CUDA C, ratios), its GPU time per generation against the floor, CartPole with
             the evolve's per-pass GPU times, the other workloads, the scaling table, MPI;
  scale.svg  gen/s and genome-steps/s against population, one line per episode length.
Every number is printed at the precision the raw files hold or rounded from them (ratios and
floors are derived: the RESULTS.md section marks them so). Standard library only."""

import glob
import json
import math
import os
import sys

# finsim's floor per generation (docs/sim.md "The financial simulation, wide"): per policy
# evaluation 8*16 + 16*6 = 224 multiply-adds, 19 tanh + 2 sigmoid (an exp and a reciprocal each,
# tanh as exp + reciprocal too): 42 transcendental ops; 16 evaluations per genome-step.
FIN_FMA_PER_STEP = 16 * 224
FIN_SFU_PER_STEP = 16 * 42
H200_FP32_FMA_PER_S = 132 * 128 * 1.98e9  # SMs x FP32 lanes x boost clock: 33.5 T FMA/s
H200_SFU_PER_S = 132 * 16 * 1.98e9         # 16 SFU results per SM per clock: 4.2 T/s


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"results": [], "error": f"{path}: {e}"}


def rows(d):
    return [r for r in d.get("results", []) if "error" not in r]


def fmt(x, nd=None):
    if x is None or not isinstance(x, (int, float)) or math.isnan(x) or x < 0:
        return "—"  # -1 in the raw JSON: not measured (no timestamps, one-dispatch evolve)
    if nd is not None:
        return f"{x:,.{nd}f}"
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


def finsim_section(out, lines):
    sim = {r["strategy"]: r for r in rows(load(os.path.join(out, "sim_finsim.json")))}
    peers = {r["impl"]: r for r in rows(load(os.path.join(out, "peers_finsim.json")))}
    lines += ["### Financial simulation (pop 10,000, 1,500 steps, RNN 8-16-6, 246 parameters)", "",
              "| implementation | gen/s (no readback) | gen/s (readback) | GPU ms episode / evolve | checksum |",
              "| --- | --- | --- | --- | --- |"]
    for k, label in (("fused", "wgfuse fused (a thread per genome)"), ("fused-wide", "wgfuse fused-wide (a lane per asset)")):
        r = sim.get(k)
        if r:
            lines.append(f"| {label} | {r['gen_per_s_noreadback']} | {r['gen_per_s_readback']} | "
                         f"{r['gpu_ms_episode']} / {r['gpu_ms_evolve']} | {r['checksum']} |")
    for k, label in (("jax", "JAX lax.scan + vmap"), ("cupy", "fused CUDA C (CuPy)")):
        r = peers.get(k)
        if r:
            lines.append(f"| {label} | {r['gen_per_s_noreadback']:.4g} | {r['gen_per_s_readback']:.4g} | | |")
    w, f = sim.get("fused-wide"), sim.get("fused")
    if w and f:
        same = "equal" if w["checksum"] == f["checksum"] else "DIFFERENT"
        lines += ["", f"fused-wide vs fused checksum (sum of the first evaluation's fitness): {same}."]
    if w:
        g = w["gen_per_s_noreadback"]
        ratios = [f"fused-wide / fused = {g / f['gen_per_s_noreadback']:.2f}x" if f else None]
        if "cupy" in peers:
            ratios.append(f"fused-wide / CUDA C = {g / peers['cupy']['gen_per_s_noreadback']:.2f}x (want >= 1)")
        if "jax" in peers:
            ratios.append(f"fused-wide / JAX = {g / peers['jax']['gen_per_s_noreadback']:.2f}x (want >= 2, target >= 3)")
        lines += ["", "Derived: " + "; ".join(x for x in ratios if x) + "."]
        gs = w["pop"] * w.get("mean_steps", w["steps"])
        t_fma = gs * FIN_FMA_PER_STEP / H200_FP32_FMA_PER_S * 1e3
        t_sfu = gs * FIN_SFU_PER_STEP / H200_SFU_PER_S * 1e3
        lines += ["", f"Floor (derived, H200 FP32 / SFU peak): {gs:.4g} genome-steps per generation x "
                  f"{FIN_FMA_PER_STEP} FMA = {t_fma:.2f} ms of FMA issue, x {FIN_SFU_PER_STEP} transcendental ops = "
                  f"{t_sfu:.2f} ms of SFU issue; bytes: the population read once ({w['pop'] * w['params'] * 4 / 1e6:.1f} MB) "
                  f"and the market path (broadcast) — microseconds. Measured episode {w['gpu_ms_episode']} ms: "
                  f"{w['gpu_ms_episode'] / max(t_fma, t_sfu):.1f}x the larger floor."]
    lines.append("")


def cartpole_section(out, lines):
    sim = rows(load(os.path.join(out, "sim_cartpole.json"))) + rows(load(os.path.join(out, "sim_cartpole_thread.json")))
    peers = {r["impl"]: r for r in rows(load(os.path.join(out, "peers_cartpole.json")))}
    lines += ["### CartPole-v1 4,096 x 500, MLP 4-16-2: the evolve per pass", "",
              "| strategy | evolve | gen/s (no readback) | GPU ms reset / episode / evolve | evolve µs select / rank / breed (own passes) |",
              "| --- | --- | --- | --- | --- |"]
    for r in sim:
        lines.append(f"| wgfuse {r['strategy']} | {r['evolve']} | {r['gen_per_s_noreadback']} | "
                     f"{r['gpu_ms_reset']} / {r['gpu_ms_episode']} / {r['gpu_ms_evolve']} | "
                     f"{fmt(r.get('gpu_us_select'))} / {fmt(r.get('gpu_us_rank'))} / {fmt(r.get('gpu_us_breed'))} |")
    for k, label in (("jax", "JAX"), ("cupy", "fused CUDA C (CuPy)")):
        if k in peers:
            lines.append(f"| {label} | | {peers[k]['gen_per_s_noreadback']:.4g} | | |")
    lines.append("")


def other_section(out, lines):
    lines += ["### Acrobot, MountainCar, Rastrigin (pop 4,096)", "",
              "| workload | strategy | gen/s (no readback) | GPU ms episode / evolve |", "| --- | --- | --- | --- |"]
    for name in ("sim_classic", "sim_rastrigin"):
        for r in rows(load(os.path.join(out, name + ".json"))):
            lines.append(f"| {r['workload']} | {r['strategy']} | {r['gen_per_s_noreadback']} | "
                         f"{r['gpu_ms_episode']} / {r['gpu_ms_evolve']} |")
    lines.append("")


def scale_rows(out):
    rs = []
    for p in sorted(glob.glob(os.path.join(out, "scale_*.json"))):
        rs += rows(load(p))
    return sorted(rs, key=lambda r: (r["steps"], r["pop"]))


def scale_section(out, lines):
    rs = scale_rows(out)
    lines += ["### How cost grows (MountainCar, fused-wide, MLP 2-8-3: every genome runs the whole episode)", "",
              "| pop | steps | gen/s (no readback) | genome-steps/s | GPU ms episode / evolve | bytes per genome |",
              "| --- | --- | --- | --- | --- | --- |"]
    for r in rs:
        lines.append(f"| {r['pop']} | {r['steps']} | {r['gen_per_s_noreadback']} | {r['genome_steps_per_s']} | "
                     f"{r['gpu_ms_episode']} / {r['gpu_ms_evolve']} | {r['bytes_per_genome']} |")
    lines.append("")
    return rs


def svg(rs, path):
    """Two panels: gen/s and genome-steps/s against population (log-log), a line per length."""
    if not rs:
        return
    W, H, M = 900, 380, 60
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
    lens = sorted({r["steps"] for r in rs})
    pops = [r["pop"] for r in rs]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    for panel, (key, title) in enumerate((("gen_per_s_noreadback", "generations / s"),
                                           ("genome_steps_per_s", "genome-steps / s"))):
        x0, pw, ph = M + panel * (W // 2), W // 2 - M - 20, H - 2 * M
        vals = [r[key] for r in rs if r[key] > 0]
        lx0, lx1 = math.log10(min(pops)), math.log10(max(pops)) + 1e-9
        ly0, ly1 = math.floor(math.log10(min(vals))), math.ceil(math.log10(max(vals)) + 1e-9)
        X = lambda p: x0 + (math.log10(p) - lx0) / (lx1 - lx0) * pw
        Y = lambda v: M + ph - (math.log10(v) - ly0) / (ly1 - ly0) * ph
        out.append(f'<rect x="{x0}" y="{M}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>')
        out.append(f'<text x="{x0 + pw / 2}" y="{M - 10}" text-anchor="middle" font-size="13">{title} (log)</text>')
        out.append(f'<text x="{x0 + pw / 2}" y="{H - 15}" text-anchor="middle">population (log)</text>')
        for e in range(int(ly0), int(ly1) + 1):
            out.append(f'<text x="{x0 - 5}" y="{Y(10 ** e) + 4}" text-anchor="end">1e{e}</text>')
            out.append(f'<line x1="{x0}" x2="{x0 + pw}" y1="{Y(10 ** e)}" y2="{Y(10 ** e)}" stroke="#ddd"/>')
        for p in sorted(set(pops)):
            out.append(f'<text x="{X(p)}" y="{M + ph + 15}" text-anchor="middle">{p:,}</text>')
        for i, L in enumerate(lens):
            pts = [(X(r["pop"]), Y(r[key])) for r in rs if r["steps"] == L and r[key] > 0]
            c = colors[i % len(colors)]
            if len(pts) > 1:
                out.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="' +
                           " ".join(f"{x:.1f},{y:.1f}" for x, y in pts) + '"/>')
            for x, y in pts:
                out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{c}"/>')
            if panel == 0:
                out.append(f'<text x="{x0 + pw - 90}" y="{M + 15 + 14 * i}" fill="{c}">{L} steps</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def mpi_section(out, lines):
    rs = []
    for p in sorted(glob.glob(os.path.join(out, "mpi_*.json"))):
        rs += rows(load(p))
    if os.path.exists(os.path.join(out, "mpi_skipped.txt")):
        with open(os.path.join(out, "mpi_skipped.txt")) as f:
            lines += [f"MPI: {f.read().strip()}", ""]
    if rs:
        lines += ["### MPI (finsim fused-wide, fitness gathered every generation)", "",
                  "| ranks | gen/s | population hash |", "| --- | --- | --- |"]
        for r in rs:
            lines.append(f"| {r['ranks']} | {r['gen_per_s_gather']} | {r['pop_hash']} |")
        lines.append("")


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: bench/sim2_tables.py OUTDIR (an h200_sim2.sh output directory)", file=sys.stderr)
        return 2
    out = sys.argv[1]
    lines = [f"<!-- rendered by bench/sim2_tables.py from {out} -->", ""]
    finsim_section(out, lines)
    cartpole_section(out, lines)
    other_section(out, lines)
    rs = scale_section(out, lines)
    svg(rs, os.path.join(out, "scale.svg"))
    mpi_section(out, lines)
    for E in ("cartpole", "acrobot", "mountaincar"):
        p = os.path.join(out, f"train_{E}.txt")
        if os.path.exists(p):
            with open(p) as f:
                last = [ln for ln in f.read().splitlines() if ln.startswith("# solved") or ln.startswith("# not solved")]
            lines.append(f"train {E}: {last[-1] if last else '(no result line)'}")
    with open(os.path.join(out, "tables.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {out}/tables.md and {out}/scale.svg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
