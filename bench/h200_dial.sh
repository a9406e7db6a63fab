#!/usr/bin/env bash
# The fusion dial on one GPU host (issue 13, docs/fusion.md), ours and the peers in one run:
#   - `wgfuse llm bench --shape S --plan all --weights W`: ops, fused, roles and mega on the same
#     model, each checked against cpu-ref before it is timed, with the copy bandwidth and the
#     per-dispatch cost measured in the same process (JSON line + SVG per shape and weights);
#   - bench/llm_peer_graph.py --eager: the hand-written PyTorch decode, op by op (eager) and as one
#     CUDA-graph replay per token, in the same dtype;
#   - the roles plan alone on 512-token prompts (prefill) and 256 decoded tokens, as
#     bench/h200_llm.sh measures it, so the roles row is comparable with that section; the
#     peers' prefill (transformers, 512 tokens) comes with the f16 peer steps.
# Shapes: tiny (built in, not a published model), Qwen2.5-0.5B, Qwen2.5-1.5B; random weights.
#
#   bench/h200_dial.sh [OUTDIR]      (default: bench/results/dial-<hostname>-<UTC date>)
#
# Environment: WGFUSE (default build/wgfuse), PYTHON (python3), N (decoded tokens per run, 64), P (prompt, 32),
# RUNS (timed runs per plan, 5), SHAPES, WEIGHTS ("f16 f32"), DIAL_ONLY=1 (no PyTorch peers and no
# roles-only steps: a machine without CUDA, e.g. lavapipe), WGF_GIT_COMMIT (recorded in env.txt when the tree has
# no .git). Writes env.txt, results.jsonl (one JSON line per step), logs/*.txt, *.svg, status.txt.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/bench/results/dial-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
PY="${PYTHON:-python3}"
WG="${WGFUSE:-$ROOT/build/wgfuse}"
[ -x "$WG" ] || { echo "h200_dial: no wgfuse binary (set WGFUSE=path)" >&2; exit 1; }
"$WG" --version >/dev/null 2>&1 || { echo "h200_dial: $WG --version failed (a binary older than --version?)" >&2; exit 1; }
N="${N:-64}"; RUNS="${RUNS:-5}"; P="${P:-32}"
SHAPES="${SHAPES:-tiny qwen2.5-0.5b qwen2.5-1.5b}"
. "$ROOT/bench/lib_steps.sh"
steps_init "$OUT" h200_dial || exit 1
{
  steps_env "$WG" "$PY"
  echo "N=$N RUNS=$RUNS P=$P SHAPES=$SHAPES WEIGHTS=${WEIGHTS:-f16 f32} DIAL_ONLY=${DIAL_ONLY:-0}"
  echo "load average: $(cat /proc/loadavg 2>/dev/null)"; echo "cpus: $(nproc)"
} > "$OUT/env.txt"

WEIGHTS="${WEIGHTS:-f16 f32}"
for S in $SHAPES; do
  for W in $WEIGHTS; do
    prof=""; [ "$W" = f16 ] && prof="--profile"
    step "dial_${W}_$S" "$WG" llm bench --shape "$S" --plan all --weights "$W" -n "$N" --prompt-tokens $P \
         --runs "$RUNS" $prof --json --svg "$OUT/dial_${W}_$S.svg"
  done
  [ "$S" = tiny ] || [ "${DIAL_ONLY:-0}" = 1 ] && continue # the peer script has only published shapes
  step "peer_f16_$S" "$PY" "$ROOT/bench/llm_peer_graph.py" --shape "$S" --dtype float16 -n "$N" \
       --prompt-tokens $P --runs "$RUNS" --eager --prefill 512
  step "peer_f32_$S" "$PY" "$ROOT/bench/llm_peer_graph.py" --shape "$S" --dtype float32 -n "$N" \
       --prompt-tokens $P --runs "$RUNS" --eager
done
[ "${DIAL_ONLY:-0}" = 1 ] && { cat "$OUT/status.txt"; exit 0; }
for S in qwen2.5-0.5b qwen2.5-1.5b phi-3-mini; do
  step "roles_decode_$S" "$WG" llm bench --shape "$S" --backend gpu -n 256 --prompt-tokens $P --runs 5 --json
  step "roles_prefill_$S" "$WG" llm bench --shape "$S" --backend gpu -n 2 --prompt-tokens 512 --runs 3 --json
done
step "peer_f16_phi-3-mini" "$PY" "$ROOT/bench/llm_peer_graph.py" --shape phi-3-mini --dtype float16 -n 256 \
     --prompt-tokens $P --runs 5 --prefill 512
cat "$OUT/status.txt"
