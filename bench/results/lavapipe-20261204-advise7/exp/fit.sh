#!/bin/bash
cd /work/main
export LP_NUM_THREADS=${LPT:-1} XDG_RUNTIME_DIR=/tmp XDG_CACHE_HOME=/tmp/xc
for L in 8 16 32 64 128 256 500; do
G=$(( (300 + L - 1) / L )); [ $G -lt 3 ] && G=3
build-rel/wgfuse --quiet sim bench --workload cartpole --pop 1024 --hidden 16 --steps $L --strategy per-step --evolve split --gens $G --runs 5 --json 2>/dev/null > /tmp/exp/f_$1_$L.json
python3 -c "
import json; d=json.load(open('/tmp/exp/f_$1_$L.json')); r=d['results'][0]
print($L, round(1e3/r['gen_per_s_noreadback'],3), r['gpu_ms_episode'], r['gpu_ms_evolve'], r['gpu_ms_reset'], r['group_steps'], r['mean_steps'])"
done
