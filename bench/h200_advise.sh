#!/usr/bin/env bash
# The advisor on a GPU host: calibrate, then predicted vs measured ms/token for every LLM plan
# (ops, fused, roles, mega) of each shape and weight format, and whether the recommended plan
# is the measured fastest (issue 17's acceptance: within 25% per plan, recommended within 5%).
#
#   bench/h200_advise.sh [OUTDIR]      (default: bench/results/advise-<hostname>-<UTC date>)
#
# Environment: WGFUSE (default build/wgfuse), PYTHON (default python3), SHAPES (default
# "qwen2.5-0.5b"; add qwen2.5-1.5b or tiny), WEIGHTS (default "f16 f32"), N / RUNS / P (decode
# tokens, timed runs, prompt tokens of the measured dial: 64 / 5 / 32), WGF_GIT_COMMIT.
# Writes into OUTDIR: env.txt, status.txt, logs/<step>.txt, results.jsonl (one JSON line per
# step: "calibrate", "advise_<W>_<S>", "dial_<W>_<S>"), calibration.json (the cache file the
# run made, in OUTDIR/cache), and advise_table.txt/.json from bench/advise_compare.py (per plan:
# predicted, measured, error; per shape: recommended vs measured fastest).
# Budget on an H200: calibration seconds; each dial 1-2 minutes; well under 10 minutes.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/bench/results/advise-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
PY="${PYTHON:-python3}"
WG="${WGFUSE:-$ROOT/build/wgfuse}"
[ -x "$WG" ] || { echo "h200_advise: no wgfuse binary (set WGFUSE=path)" >&2; exit 1; }
"$WG" --version >/dev/null 2>&1 || { echo "h200_advise: $WG --version failed (a binary older than --version?)" >&2; exit 1; }
N="${N:-64}"; RUNS="${RUNS:-5}"; P="${P:-32}"
SHAPES="${SHAPES:-qwen2.5-0.5b}"; WEIGHTS="${WEIGHTS:-f16 f32}"
. "$ROOT/bench/lib_steps.sh"
steps_init "$OUT" h200_advise || exit 1
# a cache of this run's own: the calibration below is the one every prediction uses
export XDG_CACHE_HOME="$OUT/cache"
mkdir -p "$XDG_CACHE_HOME" || exit 1
unset WGFUSE_CALIBRATION
{
  steps_env "$WG" "$PY"
  echo "N=$N RUNS=$RUNS P=$P SHAPES=$SHAPES WEIGHTS=$WEIGHTS"
  echo "load average: $(cat /proc/loadavg 2>/dev/null)"; echo "cpus: $(nproc)"
} > "$OUT/env.txt"

step calibrate "$WG" --quiet advise --calibrate --json
cp "$XDG_CACHE_HOME"/wgfuse/calibration-*.json "$OUT/calibration.json" 2>/dev/null
for S in $SHAPES; do
  for W in $WEIGHTS; do
    step "advise_${W}_$S" "$WG" --quiet advise --shape "$S" --weights "$W" --json
    step "dial_${W}_$S" "$WG" llm bench --shape "$S" --plan all --weights "$W" -n "$N" --prompt-tokens "$P" \
         --runs "$RUNS" --json
    step "auto_${W}_$S" "$WG" llm bench --shape "$S" --plan auto --weights "$W" -n "$N" --prompt-tokens "$P" \
         --runs 1 --json
  done
done
"$PY" "$ROOT/bench/advise_compare.py" "$OUT/results.jsonl" --out "$OUT/advise_table" \
  && echo "advise_table rc=0" >> "$OUT/status.txt" || echo "advise_table rc=1" >> "$OUT/status.txt"
cat "$OUT/status.txt"
[ -f "$OUT/advise_table.txt" ] && cat "$OUT/advise_table.txt"
exit 0
