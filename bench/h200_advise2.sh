#!/usr/bin/env bash
# The advisor, second cut (issue 17): everything the acceptance needs on one device in ONE run.
#   1. calibrate (dispatch cost by recording mode and by schedule length, read bandwidth, FMA
#      rate, one workgroup's dot-product stream, barrier, subgroup reduction);
#   2. CartPole (pop POP, hidden 16) at episode lengths LENGTHS: every strategy (fused,
#      fused-wide, chunked:10, chunked:50, per-step) x every evolve (split, thread, wide)
#      measured (`sim bench`, G generations per submit), then predicted (`advise --sim`) with
#      the episode steps the measurement's SIMD groups ran (its group_steps), its longest episode
#      (longest_steps) and the same generations per submit; advise probes the kernels first
#      (PROBE=--no-probe: the static model alone);
#   3. Qwen2.5-0.5B shapes, f16 and f32: every plan predicted (`advise --shape`) and measured
#      (`llm bench --plan all`: checked against cpu-ref, then timed), and `--plan auto`;
#   4. the crossover batch B* per operation for SHAPES_BSTAR (default Qwen2.5-0.5B and 1.5B, f16
#      and f32: `advise --shape S --weights W --json`'s "crossover");
#   5. --autotune on `llm bench` and `sim bench`; `advise --table` (the decision table);
#   6. bench/advise_compare2.py: advise2_table.txt/.json (per plan predicted, measured, error;
#      per case the recommended, the measured fastest, how much slower the recommended measured;
#      the B* table).
#
#   bench/h200_advise2.sh [OUTDIR]     (default: bench/results/advise2-<hostname>-<UTC date>)
#
# Environment: WGFUSE (default build/wgfuse), PYTHON (python3), POP (4096), LENGTHS ("10 100
# 500"), GENS (generations per submit at every length; default per length L: the larger of 3
# and ceil(GEN_STEPS / L), GEN_STEPS 300, so one submit holds ~300 episode steps: at
# L = 10 three generations are ~0.3 ms, and the submit's round trip, 25-120 us on the H200 from
# one call to the next, moved the measured ms/generation by up to 40% while the GPU's own times
# stayed within 1%), SRUNS (5: sim bench runs), N / RUNS / P (decode tokens, timed runs, prompt
# tokens of the LLM dial: 256 / 3 / 32; the decode loop keeps 3 submits of up to 16 tokens in
# flight, so a short run's tokens/s mostly times filling it: on the H200 Qwen2.5-1.5B roles
# measured 1.43 ms/token over 64 tokens and 1.79 over 512), SHAPE (qwen2.5-0.5b), WEIGHTS ("f16 f32"),
# SHAPES_BSTAR ("qwen2.5-0.5b qwen2.5-1.5b"), TABLE (1: run advise --table; 0: skip), AUTOTUNE
# (1; 0: skip the --autotune steps), WEIGHTS="" skips the LLM plans,
# QUICK (empty; "--quick" for a CPU adapter), WGF_GIT_COMMIT, CPUS (empty; a CPU list for
# taskset, e.g. CPUS=1: the whole run, every process and thread, on those cores).
# On lavapipe in a small VM: CPUS=1 LP_NUM_THREADS=0 (recorded in env.txt), lavapipe running
# each dispatch on its queue thread on the one core the host shares with it (the host blocks
# in its waits on a CPU adapter). With the threads free to move over a 2-core VM's two vCPUs
# the same CartPole per-step generation measured 21 to 37 ms in consecutive processes; on one
# core with LP_NUM_THREADS=0 two runs agreed within 2.5% (bench/RESULTS.md, the advisor's seventh
# cut). The sixth cut's setting, LP_NUM_THREADS=1 on two cores, measured the same plan up to
# 1.9x apart with both lavapipe threads. A shared VM still has slow spells of tens of seconds:
# run the script twice and compare with `bench/advise_compare2.py --best-of OUT1 OUT2 --out F`
# (per plan the least of each side over the passes).
# Raw files in OUTDIR: env.txt, status.txt, logs/<step>.txt (every command's whole output),
# results.jsonl (the last JSON line of each single-line step), sim_L<L>_<evolve>.json (sim
# bench's JSON), calibration.json, advise2_table.txt/.json.
# Budget on an H200 (estimated): calibration 2 s, sims ~2 min, the two dials ~3 min, B* ~1 min,
# table ~1 min: under 8 minutes.
set -u
if [ -n "${CPUS:-}" ] && [ -z "${WGF_ADVISE2_PINNED:-}" ]; then
  command -v taskset >/dev/null || { echo "h200_advise2: CPUS=$CPUS needs taskset (util-linux)" >&2; exit 1; }
  WGF_ADVISE2_PINNED=1 exec taskset -c "$CPUS" "$0" "$@"
fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/bench/results/advise2-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
PY="${PYTHON:-python3}"
WG="${WGFUSE:-$ROOT/build/wgfuse}"
[ -x "$WG" ] || { echo "h200_advise2: no wgfuse binary (set WGFUSE=path)" >&2; exit 1; }
"$WG" --version >/dev/null 2>&1 || { echo "h200_advise2: $WG --version failed" >&2; exit 1; }
POP="${POP:-4096}"; LENGTHS="${LENGTHS:-10 100 500}"; GENS="${GENS:-}"; GEN_STEPS="${GEN_STEPS:-300}"; SRUNS="${SRUNS:-5}"
N="${N:-256}"; RUNS="${RUNS:-3}"; P="${P:-32}"; SHAPE="${SHAPE:-qwen2.5-0.5b}"
SHAPES_BSTAR="${SHAPES_BSTAR-qwen2.5-0.5b qwen2.5-1.5b}"; TABLE="${TABLE:-1}"; QUICK="${QUICK:-}"
AUTOTUNE="${AUTOTUNE:-1}"; WEIGHTS="${WEIGHTS-f16 f32}"
STRATS="fused,fused-wide,chunked:10,chunked:50,per-step"
. "$ROOT/bench/lib_steps.sh"
steps_init "$OUT" h200_advise2 || exit 1
OUT="$(cd "$OUT" && pwd)"               # absolute: XDG_CACHE_HOME must be (the XDG rule)
export XDG_CACHE_HOME="$OUT/cache"    # this run's own calibration, used by every prediction
mkdir -p "$XDG_CACHE_HOME" || exit 1
# the drivers' shader caches would land in XDG_CACHE_HOME too: not results, keep them out
SHADER_TMP="$(mktemp -d)"
export MESA_SHADER_CACHE_DIR="$SHADER_TMP" __GL_SHADER_DISK_CACHE_PATH="$SHADER_TMP"
unset WGFUSE_CALIBRATION
{
  steps_env "$WG" "$PY"
  echo "POP=$POP LENGTHS=$LENGTHS GENS=${GENS:-per length} GEN_STEPS=$GEN_STEPS SRUNS=$SRUNS N=$N RUNS=$RUNS P=$P SHAPE=$SHAPE WEIGHTS=$WEIGHTS"
  echo "SHAPES_BSTAR=$SHAPES_BSTAR TABLE=$TABLE QUICK=$QUICK AUTOTUNE=$AUTOTUNE LP_NUM_THREADS=${LP_NUM_THREADS:-unset}"
  echo "load average: $(cat /proc/loadavg 2>/dev/null)"; echo "cpus: $(nproc) (CPUS=${CPUS:-unset}: $(taskset -pc $$ 2>/dev/null))"
} > "$OUT/env.txt"
T0=$(date +%s)

step calibrate "$WG" --quiet advise --calibrate $QUICK --json
cp "$XDG_CACHE_HOME"/wgfuse/calibration-*.json "$OUT/calibration.json" 2>/dev/null
# a CPU adapter (QUICK): every kernel compiled once, untimed, before anything is timed. With an
# empty shader cache Mesa writes each new shader to its disk cache from a thread of its own,
# which shared lavapipe's one core with the first probe: CartPole's first probe measured its
# per-step dispatch at 549 us against 283 in the next process
if [ -n "$QUICK" ]; then
  { "$WG" --quiet advise --sim cartpole --pop "$POP" --hidden 16 --steps 10 --chunks 10,50
    for W in $WEIGHTS; do "$WG" --quiet advise --shape "$SHAPE" --weights "$W" --ctx $((P + N + 1)); done
  } > "$OUT/logs/prime.txt" 2>&1
  echo "prime (shader cache) rc=$? at +$(( $(date +%s) - T0 )) s" >> "$OUT/status.txt"
fi

# 2. CartPole: measured first (the episode steps its groups ran), then predicted with them
gens_for() {  # generations per submit at episode length $1
  if [ -n "$GENS" ]; then echo "$GENS"; else local g=$(( (GEN_STEPS + $1 - 1) / $1 )); [ "$g" -lt 3 ] && g=3; echo "$g"; fi
}
for L in $LENGTHS; do
  G=$(gens_for "$L")
  for E in split thread wide; do
    name="sim_L${L}_$E"
    step "$name" "$WG" --quiet sim bench --workload cartpole --pop "$POP" --hidden 16 --steps "$L" \
         --strategy "$STRATS" --evolve "$E" --gens "$G" --runs "$SRUNS" --json
    cp "$OUT/logs/$name.txt" "$OUT/$name.json"
    # sim bench's JSON spans lines: its whole output is $name.json; drop the tail line `step` took
    if tail -1 "$OUT/results.jsonl" | grep -q '^ *"complete"'; then sed -i '$d' "$OUT/results.jsonl"; fi
  done
  # group steps of thread-per-genome strategies (fused's row) and of fused-wide (its own groups)
  for K in fused fused-wide; do
    read -r T M < <("$PY" - "$OUT/sim_L${L}_split.json" "$K" <<'PYEOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    r = [x for x in d["results"] if x["strategy"] == sys.argv[2]]
    print(max(1, round(r[0]["group_steps"])), max(1, round(r[0].get("longest_steps", 0)))) if r else print(0, 0)
except Exception:
    print(0, 0)
PYEOF
)
    [ "$T" -gt 0 ] 2>/dev/null || T=$L
    [ "$M" -gt 1 ] 2>/dev/null || M=$L
    # the kernels are probed at this population (advise's default; PROBE=--no-probe: the static model)
    step "advise_sim_L${L}_$K" "$WG" --quiet advise --sim cartpole --pop "$POP" --hidden 16 --steps "$L" \
         --episode-steps "$T" --longest-steps "$M" --gens-per-submit "$G" --chunks 10,50 ${PROBE:-} --json
  done
done
echo "sims done at +$(( $(date +%s) - T0 )) s" >> "$OUT/status.txt"

# 3. the LLM plans
for W in $WEIGHTS; do
  # the plans built for the context the dial's decode runs in (prompt + tokens + 1); the probe
  # times the step at its middle
  step "advise_${W}_$SHAPE" "$WG" --quiet advise --shape "$SHAPE" --weights "$W" --ctx $((P + N + 1)) --json
  step "dial_${W}_$SHAPE" "$WG" llm bench --shape "$SHAPE" --plan all --weights "$W" -n "$N" --prompt-tokens "$P" \
       --runs "$RUNS" --json
  step "auto_${W}_$SHAPE" "$WG" llm bench --shape "$SHAPE" --plan auto --weights "$W" -n 16 --prompt-tokens "$P" \
       --runs 1 --json
done
echo "llm done at +$(( $(date +%s) - T0 )) s" >> "$OUT/status.txt"

# 4. B* per operation
for S in $SHAPES_BSTAR; do
  for W in $WEIGHTS; do
    [ "$S" = "$SHAPE" ] && continue   # step 3's advise has it
    step "bstar_${W}_$S" "$WG" --quiet advise --shape "$S" --weights "$W" --json
  done
done

# 5. autotune, the table
[ "$AUTOTUNE" = 1 ] && [ -n "$WEIGHTS" ] && step autotune_llm "$WG" llm bench --shape "$SHAPE" --plan auto --autotune -n 16 --prompt-tokens "$P" --runs 1 --json
[ "$AUTOTUNE" = 1 ] && step autotune_sim "$WG" --quiet sim bench --workload cartpole --pop "$POP" --hidden 16 --steps 500 --strategy auto \
     --autotune --gens "$(gens_for 500)" --runs 1 --json
if tail -1 "$OUT/results.jsonl" | grep -q '^ *"complete"'; then sed -i '$d' "$OUT/results.jsonl"; fi
[ "$TABLE" = 1 ] && step table "$WG" --quiet advise --table $QUICK --json
echo "total $(( $(date +%s) - T0 )) s" >> "$OUT/status.txt"
rm -rf "$SHADER_TMP"
find "$OUT/cache" -mindepth 1 -maxdepth 1 ! -name wgfuse -exec rm -rf {} + 2>/dev/null

"$PY" "$ROOT/bench/advise_compare2.py" "$OUT" --out "$OUT/advise2_table" \
  && echo "advise2_table rc=0" >> "$OUT/status.txt" || echo "advise2_table rc=1" >> "$OUT/status.txt"
cat "$OUT/status.txt"
[ -f "$OUT/advise2_table.txt" ] && cat "$OUT/advise2_table.txt"
exit 0
