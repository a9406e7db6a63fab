#!/usr/bin/env bash
# The browser vs the native build on one machine and one adapter: Chromium's SwiftShader,
# which the page gets (--use-webgpu-adapter=swiftshader) and the native build loads through
# VK_ICD_FILENAMES. One run each of: dispatch overhead by the sequential method (the page's
# measurement vs `wgfuse bench dispatch --quick`), and CartPole GA gen/s with the fitness read
# back every generation (the page's fused and per-step runs vs `wgfuse sim train`).
#   bench/web_vs_native.sh OUT      (needs `make build web`; env POP GENS SEED, BUILD)
# Writes OUT/{version.txt, native_dispatch.txt, native_train_fused.csv,
# native_train_per_step.csv, browser.json}.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:?usage: bench/web_vs_native.sh OUT}"
BUILD="${BUILD:-$ROOT/build}"
POP="${POP:-1024}" GENS="${GENS:-30}" SEED="${SEED:-7}"
export VK_ICD_FILENAMES="${VK_ICD_FILENAMES:-/usr/lib/chromium/vk_swiftshader_icd.json}"
mkdir -p "$OUT"
{
  date -u +%FT%TZ
  "$BUILD/wgfuse" --version
  chromium --version 2>/dev/null || true
  echo "VK_ICD_FILENAMES=$VK_ICD_FILENAMES"
  nproc
} >"$OUT/version.txt"
"$BUILD/wgfuse" bench dispatch --quick >"$OUT/native_dispatch.txt"
for s in fused per-step; do
  # --target 1e9: never solved, exactly GENS generations (exit status 1: "not solved")
  "$BUILD/wgfuse" sim train cartpole --pop "$POP" --gens "$GENS" --seed "$SEED" --strategy "$s" --target 1e9 \
    --out "$OUT/cartpole.policy" >"$OUT/native_train_${s/-/_}.csv" || true
done
node "$ROOT/bench/web_bench.mjs" "$OUT" "$POP" "$GENS" "$SEED"
echo "wrote $OUT"
