#!/usr/bin/env bash
# Quantization quality on a real trained model (issue 14): mean KL divergence of the
# next-token distributions of each `--weights TYPE` against f32, over a 256-token sequence
# sampled from the f32 model, on cpu-ref (whose quantized path decodes the blocks exactly:
# test_quant.c), and top-1 agreement. Needs a model directory (default ../shared/models/
# stories260k, a trained 260k-parameter Llama; says SKIP when absent).
# WIDEN=256: quantize a copy widened with zeros to rows of 256 (bench/quant_kl_widen.py: the
# same function, so the k-quants' 256-blocks apply); the reference stays the original f32
# model, and a row F32 (the widened model unquantized) shows the widening costs nothing.
#   bench/quant_kl.sh [OUTDIR]     (env: WGFUSE, MODEL, TYPES, WIDEN)
set -eu
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/bench/results/kl-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
WG="${WGFUSE:-$ROOT/build/wgfuse}"
M="${MODEL:-$ROOT/../shared/models/stories260k}"
TYPES="${TYPES:-Q8_0 Q6_K Q5_K_M Q5_1 Q5_0 Q4_K_M Q4_K_S Q4_1 Q4_0}"
[ -d "$M" ] || { echo "SKIP: no model at $M"; exit 0; }
mkdir -p "$OUT"
{ echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"; echo "model: $M"; "$WG" --version; } > "$OUT/env.txt"
seq=$("$WG" run -m "$M" --tokens 1 -n 255 --backend cpu-ref --temp 0.8 --seed 7 2>/dev/null | tr -s ' ' ',' | sed 's/,$//')
echo "1,$seq" > "$OUT/tokens.txt"
"$WG" run -m "$M" --tokens "1,$seq" -n 0 --backend cpu-ref --logits-out "$OUT/f32.npy" >/dev/null 2>&1
files=()
if [ -n "${WIDEN:-}" ]; then
  python3 "$ROOT/bench/quant_kl_widen.py" "$M" "$OUT/model-wide" "$WIDEN" | tee -a "$OUT/env.txt"
  M="$OUT/model-wide"
  "$WG" run -m "$M" --tokens "1,$seq" -n 0 --backend cpu-ref --logits-out "$OUT/F32.npy" >/dev/null 2>&1
  files+=("$OUT/F32.npy")
fi
for t in $TYPES; do
  "$WG" run -m "$M" --tokens "1,$seq" -n 0 --backend cpu-ref --weights "$t" --logits-out "$OUT/$t.npy" >/dev/null 2>&1
  files+=("$OUT/$t.npy")
done
python3 "$ROOT/bench/quant_kl.py" "$OUT/f32.npy" "${files[@]}" | tee "$OUT/kl.md"
rm -f "$OUT"/*.npy
rm -rf "$OUT/model-wide"
