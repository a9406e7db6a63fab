#!/usr/bin/env bash
# Re-make the `advise --sim` predictions of a bench/h200_advise2.sh run with another (later)
# wgfuse binary, from the run's own calibration.json and the episode steps its measurements
# recorded; the measurements stay the run's. Writes RUNDIR/predictions_<TAG>.jsonl, which
# bench/advise_compare2.py RUNDIR --predictions FILE reads in place of the run's advise steps.
#
#   WGFUSE=build/wgfuse POP=1024 LENGTHS="10 100 500" GENS=3 bench/advise_repredict.sh RUNDIR TAG
set -u
D="${1:?run directory}"; TAG="${2:?tag}"
WG="${WGFUSE:-build/wgfuse}"; POP="${POP:-4096}"; LENGTHS="${LENGTHS:-10 100 500}"; GENS="${GENS:-3}"
OUTF="$D/predictions_$TAG.jsonl"; : > "$OUTF"
"$WG" --version > "$D/predictions_$TAG.version.txt" 2>&1
for L in $LENGTHS; do
  for K in fused fused-wide; do
    T=$(python3 - "$D/sim_L${L}_split.json" "$K" "$L" <<'PYEOF'
import json, sys
try:
    r = [x for x in json.load(open(sys.argv[1]))["results"] if x["strategy"] == sys.argv[2]]
    print(max(1, round(r[0]["group_steps"])) if r else sys.argv[3])
except Exception:
    print(sys.argv[3])
PYEOF
)
    "$WG" --quiet advise --sim cartpole --pop "$POP" --hidden 16 --steps "$L" --episode-steps "$T" \
      --gens-per-submit "$GENS" --chunks 10,50 --calibration "$D/calibration.json" --json 2>/dev/null | tail -1 |
      sed "s/^{/{\"step\": \"advise_sim_L${L}_$K\", /" >> "$OUTF"
  done
done
