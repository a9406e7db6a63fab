#!/usr/bin/env python3
"""Predicted vs measured ms/token per LLM plan, from bench/h200_advise.sh's results.jsonl.

For each advise_<W>_<S> step and the dial_<W>_<S> step of the same weights and shape:
measured ms/token = 1000 / median(decode_tok_s) of the plan (the dial's timed runs);
error = predicted / measured - 1. Per shape and weights: the recommended plan, the measured
fastest, and how much slower the recommended one measured (0 when it is the fastest).
Writes OUT.txt (a table) and OUT.json; exits 1 when a step is missing or malformed.

    bench/advise_compare.py RESULTS.jsonl --out OUTDIR/advise_table
"""
import argparse
import json
import statistics
import sys


def compare_llm(steps):
    """Per plan (predicted, measured, error) and per case (recommended vs measured fastest) for
    every advise_<W>_<S> step with its dial_<W>_<S>; (None, None) when a dial is missing."""
    rows, cases = [], []
    for name, adv in sorted(steps.items()):
        if not name.startswith("advise_") or "plans" not in adv or adv.get("advise") == "sim":
            continue
        key = name[len("advise_"):]
        dial = steps.get("dial_" + key)
        if dial is None:
            print(f"advise_compare: no dial_{key} step for {name}", file=sys.stderr)
            return None, None
        measured = {}
        for p in dial.get("plans", []):
            tok = [x for x in p.get("decode_tok_s", []) if x > 0]
            if tok:
                measured[p["plan"]] = 1000.0 / statistics.median(tok)
        for p in adv["plans"]:
            if p["skipped"] or p["plan"] not in measured:
                continue
            pred, meas = p["predicted_ms_per_token"], measured[p["plan"]]
            rows.append({"case": key, "plan": p["plan"], "dispatches": p["dispatches"],
                         "predicted_ms": pred, "measured_ms": meas, "error": pred / meas - 1,
                         "dispatch_bound_share": p["dispatch_bound_share"]})
        if not measured:
            continue
        fastest = min(measured, key=measured.get)
        rec = adv["recommended"]
        slower = measured[rec] / measured[fastest] - 1 if rec in measured else None
        cases.append({"case": key, "recommended": rec, "measured_fastest": fastest,
                      "recommended_slower_by": slower, "reason": adv["reason"]})
    return rows, cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    steps = {}
    with open(a.results, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                d = json.loads(line)
                steps[d.get("step", "")] = d
    rows, cases = compare_llm(steps)
    if rows is None:
        return 1
    lines = [f"{'case':<22} {'plan':<6} {'disp':>5} {'pred ms':>9} {'meas ms':>9} {'error':>8} {'disp%':>6}"]
    for r in rows:
        lines.append(f"{r['case']:<22} {r['plan']:<6} {r['dispatches']:>5} {r['predicted_ms']:>9.4f} "
                     f"{r['measured_ms']:>9.4f} {100 * r['error']:>7.1f}% {100 * r['dispatch_bound_share']:>5.1f}%")
    lines.append("")
    for c in cases:
        s = "n/a" if c["recommended_slower_by"] is None else f"{100 * c['recommended_slower_by']:.1f}%"
        lines.append(f"{c['case']}: recommended {c['recommended']}, measured fastest {c['measured_fastest']}, "
                     f"recommended slower by {s}")
    with open(a.out + ".txt", "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    with open(a.out + ".json", "w", encoding="utf-8") as f:
        json.dump({"plans": rows, "cases": cases}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
