#!/usr/bin/env bash
# Run the dispatch-overhead and fusion characterization on a GPU host, and its CUDA peers,
# in one go, so WebGPU-vs-CUDA numbers come from one run on one GPU.
#
#   bench/h200_bench.sh [OUTDIR]        (default: bench/results/<hostname>-<UTC date>)
#
# Environment: WGFUSE (the wgfuse binary; default build/wgfuse, then build-bench/wgfuse),
# PYTHON (default python3), QUICK=1 for the --quick variants (a smoke run, ~1 minute).
# Writes into OUTDIR: env.txt (GPU, driver, date, and `wgfuse --version`: the binary's commit,
# build type, static/shared dependencies and the WebGPU library it loads),
# dispatch.txt/.json, fusion_{qwen05b,toy}.txt/.json, plots/*.svg, cuda_peers.txt/.json,
# and status.txt (exit code of each step). Each file is written to a temp name and renamed
# by the tools themselves; a failed step does not stop the others (its status says so).
# Budget on an H200: well under 10 minutes for the full run.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/bench/results/$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT/plots" || exit 1
PY="${PYTHON:-python3}"
WG="${WGFUSE:-}"
if [ -z "$WG" ]; then
  for c in "$ROOT/build/wgfuse" "$ROOT/build-bench/wgfuse"; do [ -x "$c" ] && WG="$c" && break; done
fi
[ -x "$WG" ] || { echo "h200_bench: no wgfuse binary (set WGFUSE=path)" >&2; exit 1; }
# results must name the commit they came from: a binary without --version cannot say it
"$WG" --version >/dev/null 2>&1 || { echo "h200_bench: $WG --version failed (a binary older than --version?)" >&2; exit 1; }
Q=""; [ "${QUICK:-0}" = 1 ] && Q="--quick"

# Dawn probes display backends and complains without this; harmless, but keep logs clean.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
# The NVIDIA Vulkan ICD on the lent GPU hosts lives here (docs: shared/PLATFORM.md).
NV_ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$NV_ICD" ]; then export VK_DRIVER_FILES="$NV_ICD"; fi

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  # the source tree running this script; the binary may be older or built elsewhere, so
  # the commit a result belongs to is the one `wgfuse --version` names below
  echo "script git: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "wgfuse --version:"
  "$WG" --version 2>&1 | sed 's/^/  /'
  echo "wgfuse: $WG"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$WG" info 2>&1 | head -12
  "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
} > "$OUT/env.txt"

: > "$OUT/status.txt"
step() { # step NAME cmd...
  local name="$1"; shift
  echo "[h200_bench] $name" >&2
  local t0=$(date +%s)
  "$@"; local rc=$?
  echo "$name rc=$rc seconds=$(( $(date +%s) - t0 ))" >> "$OUT/status.txt"
}

step dispatch_table "$WG" --quiet bench dispatch $Q --out "$OUT/dispatch.txt" --plot "$OUT/plots"
step dispatch_json  "$WG" --quiet bench dispatch $Q --json --out "$OUT/dispatch.json"
for size in qwen05b toy; do
  step "fusion_${size}_table" "$WG" --quiet bench fusion --size "$size" $Q --out "$OUT/fusion_$size.txt" --plot "$OUT/plots"
  step "fusion_${size}_json"  "$WG" --quiet bench fusion --size "$size" $Q --json --out "$OUT/fusion_$size.json"
done
step cuda_peers_json  "$PY" "$ROOT/bench/cuda_peers.py" $Q --json --out "$OUT/cuda_peers.json"
step cuda_peers_table "$PY" "$ROOT/bench/cuda_peers.py" $Q --out "$OUT/cuda_peers.txt"

cat "$OUT/status.txt"
echo "[h200_bench] results in $OUT" >&2
! grep -qv 'rc=0' "$OUT/status.txt"
