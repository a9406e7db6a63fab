#!/usr/bin/env bash
# The LLM decode baseline on one GPU host, ours and the peer in one run: `wgfuse llm bench`
# with the gpu-unfused backend (one kernel role per dispatch, f32 weights) and with cpu-ref,
# and Hugging Face transformers (PyTorch eager, CUDA) in float32 and bfloat16, all on one
# Qwen2.5-0.5B-shaped model with random weights (no weights can be downloaded here).
#
#   bench/h200_llm.sh [OUTDIR]      (default: bench/results/llm-<hostname>-<UTC date>)
#
# Environment: WGFUSE (default build/wgfuse), PYTHON (default python3), N (generated tokens,
# 64), RUNS (5). Writes env.txt, ours_gpu.txt, ours_cpu.txt, ids_gpu.txt, peer_f32.json,
# peer_bf16.json and status.txt (exit code and seconds of each step) into OUTDIR.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/bench/results/llm-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT" || exit 1
PY="${PYTHON:-python3}"
WG="${WGFUSE:-$ROOT/build/wgfuse}"
[ -x "$WG" ] || { echo "h200_llm: no wgfuse binary (set WGFUSE=path)" >&2; exit 1; }
N="${N:-64}"; RUNS="${RUNS:-5}"; P=32
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
NV_ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$NV_ICD" ]; then export VK_DRIVER_FILES="$NV_ICD"; fi

: > "$OUT/status.txt"
step() { # step NAME cmd...
  local name="$1"; shift
  echo "[h200_llm] $name" >&2
  local t0=$(date +%s)
  "$@"; local rc=$?
  echo "$name rc=$rc seconds=$(( $(date +%s) - t0 ))" >> "$OUT/status.txt"
}
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "git: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$WG" info 2>&1 | head -8
  "$PY" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)' 2>&1
} > "$OUT/env.txt"

MODEL="$(mktemp -d)/q05b"
step make-model "$WG" llm make-test-model --arch qwen2 --dims qwen2.5-0.5b --format hf --dtype bf16 --no-tokenizer -o "$MODEL"
PROMPT="$("$PY" -c "print(','.join(str((i * 7919 + 1) % 151936) for i in range($P)))")"
step ours-gpu sh -c "'$WG' llm bench -m '$MODEL' --backend gpu -n $N --runs $RUNS --prompt-tokens $P > '$OUT/ours_gpu.txt' 2>&1"
step ours-gpu-ids sh -c "'$WG' run -m '$MODEL' --backend gpu --tokens $PROMPT -n $N --temp 0 --ignore-eos > '$OUT/ids_gpu.txt' 2>&1"
step ours-cpu sh -c "'$WG' llm bench -m '$MODEL' -n 16 --runs 3 --prompt-tokens $P --threads 16 > '$OUT/ours_cpu.txt' 2>&1"
step peer-f32 sh -c "'$PY' '$ROOT/bench/llm_peers.py' '$MODEL' -n $N --runs $RUNS --prompt-tokens $P --dtype float32 > '$OUT/peer_f32.json' 2> '$OUT/peer_f32.err'"
step peer-bf16 sh -c "'$PY' '$ROOT/bench/llm_peers.py' '$MODEL' -n $N --runs $RUNS --prompt-tokens $P --dtype bfloat16 > '$OUT/peer_bf16.json' 2> '$OUT/peer_bf16.err'"
rm -rf "$(dirname "$MODEL")"
cat "$OUT/status.txt"
