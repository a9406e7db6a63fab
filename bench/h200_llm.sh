#!/usr/bin/env bash
# LLM decode and prefill on one GPU host, ours and the peers in one run:
#   - `wgfuse llm bench --shape S --backend gpu` (plan roles, f16 weights packed in u32, sampling
#     on the GPU), with the per-role GPU profile; the same for a 512-token prompt (prefill);
#   - bench/llm_peer_graph.py: a hand-written PyTorch decode with a static KV cache, each step a
#     CUDA-graph replay, the token fed back on the GPU (the strongest PyTorch decode we know),
#     and transformers' own model on the 512-token prompt (prefill);
#   - for Qwen2.5-0.5B also: roles with f32 weights, the unfused plan, and the PyTorch peer in f32;
#   - a 2048-token prompt then 256 decoded (attention split over the sequence);
#   - `wgfuse bench matvec` (the projection kernel against the copy bandwidth) and
#     `wgfuse bench dispatch --quick` (the per-dispatch cost of the same device, same run).
# Shapes: Qwen2.5-0.5B, Qwen2.5-1.5B, Phi-3-mini, random weights (no weights can be downloaded).
#
#   bench/h200_llm.sh [OUTDIR]      (default: bench/results/llm-<hostname>-<UTC date>)
#
# Environment: WGFUSE (default build/wgfuse), PYTHON (python3), N (decoded tokens, 256), RUNS (5),
# SHAPES (default "qwen2.5-0.5b qwen2.5-1.5b phi-3-mini"). Writes env.txt, one JSON line per
# measurement into results.jsonl, logs/*.txt and status.txt (exit code and seconds of each step).
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/bench/results/llm-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
PY="${PYTHON:-python3}"
WG="${WGFUSE:-$ROOT/build/wgfuse}"
[ -x "$WG" ] || { echo "h200_llm: no wgfuse binary (set WGFUSE=path)" >&2; exit 1; }
"$WG" --version >/dev/null 2>&1 || { echo "h200_llm: $WG --version failed (a binary older than --version?)" >&2; exit 1; }
N="${N:-256}"; RUNS="${RUNS:-5}"; P=32; PRE=512
SHAPES="${SHAPES:-qwen2.5-0.5b qwen2.5-1.5b phi-3-mini}"
. "$ROOT/bench/lib_steps.sh"
steps_init "$OUT" h200_llm || exit 1
{
  steps_env "$WG" "$PY"
} > "$OUT/env.txt"

for S in $SHAPES; do
  step "ours_roles_f16_$S" "$WG" llm bench --shape "$S" --backend gpu -n "$N" --prompt-tokens $P --runs "$RUNS" --profile --json
  step "peer_graph_f16_$S" "$PY" "$ROOT/bench/llm_peer_graph.py" --shape "$S" --dtype float16 -n "$N" \
       --prompt-tokens $P --runs "$RUNS" --prefill $PRE
  step "ours_prefill_f16_$S" "$WG" llm bench --shape "$S" --backend gpu -n 2 --prompt-tokens $PRE --runs 3 --json
done
S=qwen2.5-0.5b
step "ours_roles_f32_$S" "$WG" llm bench --shape "$S" --backend gpu --weights f32 -n "$N" --prompt-tokens $P --runs "$RUNS" --json
step "ours_unfused_$S" "$WG" llm bench --shape "$S" --backend gpu --plan unfused -n 64 --prompt-tokens $P --runs 3 --json
step "peer_graph_f32_$S" "$PY" "$ROOT/bench/llm_peer_graph.py" --shape "$S" --dtype float32 -n "$N" --prompt-tokens $P --runs "$RUNS"
step "ours_long_ctx_$S" "$WG" llm bench --shape "$S" --backend gpu -n "$N" --prompt-tokens 2048 --runs 3 --json
step "matvec" "$WG" bench matvec --reps 5
step "dispatch" "$WG" bench dispatch --quick --json
cat "$OUT/status.txt"
