#!/usr/bin/env bash
# Run `wgfuse sim bench` and its peers (JAX lax.scan+vmap, PyTorch step loop, fused CUDA C via
# CuPy) on one GPU host in one go, so every gen/s in bench/RESULTS.md's sim tables comes from
# one run on one GPU with one definition (docs/sim.md: a generation = evaluate + evolve).
#
#   bench/h200_sim.sh [OUTDIR]        (default: bench/results/sim-<hostname>-<UTC date>)
#
# Environment: WGFUSE (the wgfuse binary; default build/wgfuse, then build-sim/wgfuse),
# PYTHON (default python3), QUICK=1 for a smoke run (small populations, ~1 minute),
# SIM_GENS / SIM_RUNS to override generations per timed run (10) and runs (3).
# Writes into OUTDIR: env.txt, sim_<what>.json from wgfuse, peers_<what>.json from
# bench/sim_peers.py, train_cartpole.txt, market.bin, tables.md (the markdown for
# bench/RESULTS.md), status.txt (exit code and seconds of each
# step). A failed step does not stop the others. Budget on an H200: ~10 minutes.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/bench/results/sim-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT" || exit 1
PY="${PYTHON:-python3}"
WG="${WGFUSE:-}"
if [ -z "$WG" ]; then
  for c in "$ROOT/build/wgfuse" "$ROOT/build-sim/wgfuse"; do [ -x "$c" ] && WG="$c" && break; done
fi
[ -x "$WG" ] || { echo "h200_sim: no wgfuse binary (set WGFUSE=path)" >&2; exit 1; }
"$WG" --version >/dev/null 2>&1 || { echo "h200_sim: $WG --version failed (a binary older than --version?)" >&2; exit 1; }
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # JAX, PyTorch and CuPy share the GPU in one process
NV_ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$NV_ICD" ]; then export VK_DRIVER_FILES="$NV_ICD"; fi

# Sizes: the issue's (CartPole 4,096 x 500 steps x MLP 4-16-2; Rastrigin 4,096 x 2,000;
# finsim 10,000 x 1,500 steps x 246 parameters). QUICK=1 shrinks them for a smoke run.
POP=4096; FIN_POP=10000; FIN_STEPS=1500; GENS=10; RUNS=3; LENS="10,50,100,200,500"
if [ "${QUICK:-0}" = 1 ]; then POP=512; FIN_POP=512; FIN_STEPS=200; GENS=3; RUNS=2; LENS="50,500"; fi
GENS="${SIM_GENS:-$GENS}"; RUNS="${SIM_RUNS:-$RUNS}"   # lower these if the 10-minute command limit bites

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
  "$PY" -c 'import jax; print("jax", jax.__version__, jax.devices())' 2>&1
  "$PY" -c 'import cupy; print("cupy", cupy.__version__)' 2>&1
} > "$OUT/env.txt"

: > "$OUT/status.txt"
step() { # step NAME cmd...
  local name="$1"; shift
  echo "[h200_sim] $name" >&2
  local t0=$(date +%s)
  "$@"; local rc=$?
  echo "$name rc=$rc seconds=$(( $(date +%s) - t0 ))" >> "$OUT/status.txt"
}
wjson() { # wjson NAME wgfuse-sim-bench-args...  (stdout -> OUT/NAME.json via a temp file)
  local name="$1"; shift
  "$WG" --quiet sim bench --json --gens "$GENS" --runs "$RUNS" "$@" > "$OUT/.$name.tmp" && mv "$OUT/.$name.tmp" "$OUT/$name.json"
}
peers() { # peers NAME sim_peers-args...
  local name="$1"; shift
  "$PY" "$ROOT/bench/sim_peers.py" --json --gens "$GENS" --runs "$RUNS" --out "$OUT/$name.json" "$@"
}

# 1. the acceptance row: CartPole-v1, 4,096 x 500, MLP 4-16-2, every strategy (fused-wide: the
#    experimental lane-per-hidden-unit kernel; slower on lavapipe, untried on a GPU)
step sim_cartpole      wjson sim_cartpole --workload cartpole --pop "$POP" --hidden 16 --strategy fused,fused-wide,chunked:50,per-step
step peers_cartpole    peers peers_cartpole --workload cartpole --pop "$POP" --hidden 16
# 2. the other classic-control workloads (their default policies) and Rastrigin
step sim_classic       wjson sim_classic --workload acrobot,mountaincar --pop "$POP" --strategy fused,fused-wide,chunked:50,per-step
step peers_classic     peers peers_classic --workload acrobot,mountaincar --pop "$POP"
step sim_rastrigin     wjson sim_rastrigin --workload rastrigin --pop "$POP" --dim 2000
step peers_rastrigin   peers peers_rastrigin --workload rastrigin --pop "$POP" --dim 2000
# 3. finsim on the same synthetic path (seed 1, as `sim bench` uses)
step market            "$WG" --quiet sim market --steps "$FIN_STEPS" --seed 1 --out "$OUT/market.bin"
step sim_finsim        wjson sim_finsim --workload finsim --pop "$FIN_POP" --steps "$FIN_STEPS" --strategy fused,chunked:100,per-step
step peers_finsim      peers peers_finsim --workload finsim --pop "$FIN_POP" --steps "$FIN_STEPS" --market "$OUT/market.bin"
# 4. fused vs per-step as a function of episode length (CartPole dynamics, MLP 4-16-2)
step sim_lengths       wjson sim_lengths --workload cartpole --pop "$POP" --hidden 16 --strategy fused,per-step --steps "$LENS"
# 5. training to the solved level, recorded where it ran
step train_cartpole    sh -c "\"$WG\" sim train cartpole --pop $POP --out \"$OUT/cartpole.policy\" > \"$OUT/train_cartpole.txt\" 2>&1 && \"$WG\" sim eval \"$OUT/cartpole.policy\" >> \"$OUT/train_cartpole.txt\" 2>&1"

# 6. the markdown tables for bench/RESULTS.md
step tables            "$PY" "$ROOT/bench/sim_peers.py" --tables "$OUT" --out "$OUT/tables.md"

cat "$OUT/status.txt"
