#!/usr/bin/env bash
# Issue 16 ("Simulation II") on one GPU host in one go (~6-8 minutes on an H200): the financial
# simulation fused vs fused-wide vs its JAX and CUDA C (CuPy) peers, CartPole 4,096 x 500 with
# the GA evolve's per-pass GPU times (split vs one-dispatch A/B), Acrobot / MountainCar /
# Rastrigin re-measured, the scaling sweep (population x episode length), and, where mpirun
# and an MPI build exist, a 1-rank vs R-rank check. Raw files only; bench/sim2_tables.py
# renders them (tables.md, scale.svg) for bench/RESULTS.md.
#
#   bench/h200_sim2.sh [OUTDIR]        (default: bench/results/sim2-<hostname>-<UTC date>)
#
# Environment: WGFUSE (the wgfuse binary; default build-h200/wgfuse, then build/wgfuse),
# WGFUSE_MPI (an MPI build for step 6; default: WGFUSE when its --version says "mpi: yes"),
# PYTHON (python3), QUICK=1 (small sizes: a lavapipe smoke run), SIM_GENS / SIM_RUNS
# (generations per timed run, runs; default 10 / 3), SCALE_MAX (largest population x steps
# the sweep runs, default 1e9), MPI_RANKS (default: the GPUs nvidia-smi lists, at most 8).
# Writes into OUTDIR: env.txt, status.txt (exit code and seconds per step), sim_*.json
# (wgfuse sim bench --json), peers_*.json (bench/sim_peers.py), scale_*.json, mpi_*.json,
# market.bin, train_*.txt. A failed step does not stop the others.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/bench/results/sim2-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT" || exit 1
PY="${PYTHON:-python3}"
WG="${WGFUSE:-}"
if [ -z "$WG" ]; then
  for c in "$ROOT/build-h200/wgfuse" "$ROOT/build/wgfuse"; do [ -x "$c" ] && WG="$c" && break; done
fi
[ -x "$WG" ] || { echo "h200_sim2: no wgfuse binary (set WGFUSE=path)" >&2; exit 1; }
"$WG" --version >/dev/null 2>&1 || { echo "h200_sim2: $WG --version failed" >&2; exit 1; }
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
export XLA_PYTHON_CLIENT_PREALLOCATE=false
NV_ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$NV_ICD" ]; then export VK_DRIVER_FILES="$NV_ICD"; fi

POP=4096; FIN_POP=10000; FIN_STEPS=1500; GENS=10; RUNS=3
SCALE_POPS="1000 4096 16384 65536 262144 1048576"; SCALE_LENS="10 100 1000 10000"; SCALE_MAX="${SCALE_MAX:-1000000000}"
if [ "${QUICK:-0}" = 1 ]; then
  POP=512; FIN_POP=512; FIN_STEPS=200; GENS=2; RUNS=1
  SCALE_POPS="256 1024"; SCALE_LENS="10 100"; SCALE_MAX="${SCALE_MAX:-200000}"
fi
GENS="${SIM_GENS:-$GENS}"; RUNS="${SIM_RUNS:-$RUNS}"

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "script git: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "wgfuse --version:"
  "$WG" --version 2>&1 | sed 's/^/  /'
  echo "wgfuse: $WG"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  "$WG" info 2>&1 | head -12
  "$PY" -c 'import jax; print("jax", jax.__version__, jax.devices())' 2>&1
  "$PY" -c 'import cupy; print("cupy", cupy.__version__)' 2>&1
  echo "mpirun: $(command -v mpirun || echo none) $(mpirun --version 2>/dev/null | head -1)"
  echo "load: $(cat /proc/loadavg 2>/dev/null)"
} > "$OUT/env.txt"

: > "$OUT/status.txt"
step() { # step NAME cmd...
  local name="$1"; shift
  echo "[h200_sim2] $name" >&2
  local t0=$(date +%s)
  "$@"; local rc=$?
  echo "$name rc=$rc seconds=$(( $(date +%s) - t0 ))" >> "$OUT/status.txt"
}
wjson() { # wjson NAME wgfuse-sim-bench-args...
  local name="$1"; shift
  "$WG" --quiet sim bench --json --gens "$GENS" --runs "$RUNS" "$@" > "$OUT/.$name.tmp" && mv "$OUT/.$name.tmp" "$OUT/$name.json"
}
peers() { # peers NAME sim_peers-args...  (no PyTorch step loop: 30x slower, measured in h200_sim.sh)
  local name="$1"; shift
  "$PY" "$ROOT/bench/sim_peers.py" --json --impl jax,cupy --gens "$GENS" --runs "$RUNS" --out "$OUT/$name.json" "$@"
}

# 1. the financial simulation (pop 10,000, 1,500 steps, RNN 8-16-6): fused (a thread per
#    genome) vs fused-wide (finsim_wide.wgsl, a lane per asset), the GPU time per pass in the
#    JSON (gpu_ms_episode: compare with the floor in docs/sim.md), and its peers on the same path
step market            "$WG" --quiet sim market --steps "$FIN_STEPS" --seed 1 --out "$OUT/market.bin"
step sim_finsim        wjson sim_finsim --workload finsim --pop "$FIN_POP" --steps "$FIN_STEPS" --strategy fused,fused-wide
step peers_finsim      peers peers_finsim --workload finsim --pop "$FIN_POP" --steps "$FIN_STEPS" --market "$OUT/market.bin"
# 2. CartPole 4,096 x 500, MLP 4-16-2: the split evolve (select | rank | breed timed per pass:
#    gpu_us_select/rank/breed; gpu_ms_evolve is the three in one pass) and the one-dispatch
#    evolve as the A/B; then the peers
step sim_cartpole      wjson sim_cartpole --workload cartpole --pop "$POP" --hidden 16 --strategy fused,fused-wide
step sim_cartpole_thread wjson sim_cartpole_thread --workload cartpole --pop "$POP" --hidden 16 --strategy fused-wide --evolve thread
step peers_cartpole    peers peers_cartpole --workload cartpole --pop "$POP" --hidden 16
# 3. the other workloads re-measured (their default policies)
step sim_classic       wjson sim_classic --workload acrobot,mountaincar --pop "$POP" --strategy fused,fused-wide
step sim_rastrigin     wjson sim_rastrigin --workload rastrigin --pop "$POP" --dim 2000
# 4. how cost grows: MountainCar (random policies never reach the goal, so every genome runs
#    the whole episode: the work is exactly pop x steps), fused-wide, populations x lengths up
#    to SCALE_MAX genome-steps per generation; gens/runs small (the big cells are seconds each)
for P in $SCALE_POPS; do
  LS=""
  for L in $SCALE_LENS; do
    if [ "$(( P * L ))" -le "$SCALE_MAX" ]; then LS="${LS:+$LS,}$L"; fi
  done
  [ -n "$LS" ] || continue
  step "scale_$P" sh -c "\"$WG\" --quiet sim bench --json --gens 3 --runs 1 --workload mountaincar --strategy fused-wide --pop $P --steps $LS > \"$OUT/.scale_$P.tmp\" && mv \"$OUT/.scale_$P.tmp\" \"$OUT/scale_$P.json\""
done
# 5. training with default flags still solves (as the CI test does on lavapipe)
for E in cartpole acrobot mountaincar; do
  step "train_$E" sh -c "\"$WG\" sim train $E --out \"$OUT/$E.policy\" > \"$OUT/train_$E.txt\" 2>&1"
done
# 6. MPI: the same population over 1 and R ranks (fitness gathered every generation): equal
#    hashes, gen/s. Needs mpirun and a wgfuse built with MPI (the static build has none).
WGM="${WGFUSE_MPI:-}"
if [ -z "$WGM" ] && "$WG" --version 2>/dev/null | grep -q '^mpi: yes'; then WGM="$WG"; fi
NGPU="$(nvidia-smi -L 2>/dev/null | wc -l)"; [ "$NGPU" -ge 1 ] 2>/dev/null || NGPU=1
R="${MPI_RANKS:-$(( NGPU > 8 ? 8 : NGPU ))}"
if command -v mpirun >/dev/null && [ -n "$WGM" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
  for n in 1 "$R"; do
    step "mpi_$n" sh -c "timeout 240 mpirun --oversubscribe -n $n \"$WGM\" --quiet sim bench --json --gather --gens $GENS --runs $RUNS --workload finsim --strategy fused-wide --pop $FIN_POP --steps $FIN_STEPS > \"$OUT/.mpi_$n.tmp\" && mv \"$OUT/.mpi_$n.tmp\" \"$OUT/mpi_$n.json\""
  done
else
  echo "mpi skipped: $(command -v mpirun >/dev/null || echo 'no mpirun on this host; ')$([ -n "$WGM" ] || echo 'the wgfuse binary has no MPI (static build; set WGFUSE_MPI to a dynamic MPI build)')" | tee "$OUT/mpi_skipped.txt" >&2
  # the single-process gather path still runs: what a 1-rank MPI job would measure
  step mpi_1 sh -c "\"$WG\" --quiet sim bench --json --gather --gens $GENS --runs $RUNS --workload finsim --strategy fused-wide --pop $FIN_POP --steps $FIN_STEPS > \"$OUT/.mpi_1.tmp\" && mv \"$OUT/.mpi_1.tmp\" \"$OUT/mpi_1.json\""
fi

step tables "$PY" "$ROOT/bench/sim2_tables.py" "$OUT"
cat "$OUT/status.txt"
