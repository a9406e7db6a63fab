#!/usr/bin/env bash
# Quantized weights on one GPU host (issue 14), in one run: the roles plan decoding the same
# shape with f16 weights and with llama.cpp's Q8_0, Q4_K_M and Q4_0 mixtures, each as random
# blocks of the recipe (`--shape S --weights TYPE`: every matrix in the type llama.cpp's rules
# give it, so the bytes per token and the decoding work are a real file's). Every run checks
# nothing against cpu-ref (test_quant_gpu does, on lavapipe); what it records per step is
# decode tok/s (median of RUNS), the weight bytes a token reads on the device, the copy
# bandwidth measured in the same process (the bytes floor = copy rate / bytes per token), the
# weight bytes on the device against the model's stored bytes, and (PROFILE=1, default) the
# GPU time per kernel role of the Q4_K_M run.
#
#   bench/h200_quant.sh [OUTDIR]     (default: bench/results/quant-<hostname>-<UTC date>)
#
# Environment: WGFUSE (default build/wgfuse), N (decoded tokens per run, 256), P (prompt, 32),
# RUNS (5), SHAPES ("qwen2.5-0.5b phi-3-mini"), WEIGHTS ("f16 Q8_0 Q4_K_M Q4_0"), ACTS ("f32 q8":
# the --activations of each quantized run; f32 = exact, the default; q8 = int8-rounded
# activations, not exact; i8x3 = f32-level activations as three int8 digits on the decode rows,
# integer dots, slower on K-quants (bench/RESULTS.md, "Seventeenth cut"); float weights run once), FLAGS (global wgfuse flags, e.g.
# --robust-shaders: keep the shaders' bounds clamps, which the default turns off), WGF_GIT_COMMIT.
# Writes env.txt, results.jsonl (one JSON line per step), logs/*.txt, status.txt.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/bench/results/quant-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
WG="${WGFUSE:-$ROOT/build/wgfuse}"
[ -x "$WG" ] || { echo "h200_quant: no wgfuse binary (set WGFUSE=path)" >&2; exit 1; }
N="${N:-256}"; RUNS="${RUNS:-5}"; P="${P:-32}"
SHAPES="${SHAPES:-qwen2.5-0.5b phi-3-mini}"
WEIGHTS="${WEIGHTS:-f16 Q8_0 Q4_K_M Q4_0}"
ACTS="${ACTS:-f32 q8}"
. "$ROOT/bench/lib_steps.sh"
steps_init "$OUT" h200_quant || exit 1
{
  steps_env "$WG" "${PYTHON:-python3}"
  echo "N=$N RUNS=$RUNS P=$P SHAPES=$SHAPES WEIGHTS=$WEIGHTS ACTS=$ACTS FLAGS=${FLAGS:-}"
  echo "load average: $(cat /proc/loadavg 2>/dev/null)"; echo "cpus: $(nproc)"
} > "$OUT/env.txt"
for S in $SHAPES; do
  for W in $WEIGHTS; do
    for A in $ACTS; do
      case "$W" in f16|f32) [ "$A" = f32 ] || continue; name="roles_${W}_$S" ;; *) name="roles_${W}_${A}_$S" ;; esac
      prof=""; [ "$W" = Q4_K_M ] && [ "${PROFILE:-1}" = 1 ] && prof="--profile"
      step "$name" "$WG" ${FLAGS:-} llm bench --shape "$S" --plan roles --weights "$W" --activations "$A" -n "$N" \
           --prompt-tokens "$P" --runs "$RUNS" $prof --json
    done
  done
done
cat "$OUT/status.txt"
