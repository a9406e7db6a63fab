#!/bin/bash
# decode attention: workgroup size (WGF_X_ATTWG) and slice length (WGF_X_SPLIT), experiment binary
O=$OUT/x32; mkdir -p $O
X=/tmp/b/wgfx
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt; cat $O/gpu.txt
run() { local tag=$1 shape=$2 w=$3 awg=$4 sp=$5; shift 5; local f=$O/${tag}.json
  if [ -n "$sp" ]; then export WGF_X_SPLIT=$sp; else unset WGF_X_SPLIT; fi
  WGF_X_ATTWG=$awg timeout 90 $X --quiet llm bench --shape $shape --plan roles --weights $w -n 256 --prompt-tokens 32 --runs 3 --json "$@" > $f 2>${f%.json}.err
  echo "$tag $(python3 -c "
import json;j=json.load(open('$f'));p=j.get('profile_us_per_token') or {}
a=' '.join('%s=%s'%(k,v[0]) for k,v in p.items() if 'attn_split' in k or 'attn_combine' in k or 'attn_output' in k)
print(j['decode_tok_s_median'],j['ids_hash'],a)" 2>&1)"; }
for r in 1 2; do
for S in phi-3-mini; do for W in f16 Q4_K_M; do
run r${r}_${S}_${W}_a256 $S $W 256 ""
run r${r}_${S}_${W}_a1024 $S $W 1024 ""
run r${r}_${S}_${W}_a512 $S $W 512 ""
[ $r = 1 ] && run r${r}_${S}_${W}_a1024s64 $S $W 1024 64
done; done
done
for S in qwen2.5-0.5b; do for W in f16 Q4_K_M; do
run r1_${S}_${W}_a256 $S $W 256 ""
run r1_${S}_${W}_a1024 $S $W 1024 ""
done; done
run prof_phi_q4_a256 phi-3-mini Q4_K_M 256 "" --profile
run prof_phi_q4_a1024 phi-3-mini Q4_K_M 1024 "" --profile
