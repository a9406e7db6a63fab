#!/bin/bash
# prefill matmul micro-tiles: WGF_X_MM="bn,tm,rn" for the large tiles (experiment binary wgfx = cb96567 + RN + the env hook)
O=$OUT/x19; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt; cat $O/gpu.txt
r() { # tag variant shape P [extra]
  local t=$1 v=$2 s=$3 p=$4; shift 4
  WGF_X_MM=$v /tmp/b/wgfx llm bench --shape $s --backend gpu -n 8 --prompt-tokens $p --runs 3 --json "$@" > $O/${t}.json 2> $O/${t}.err
  python3 -c "import json,sys;j=json.load(open(sys.argv[1]));print(sys.argv[1].split('/')[-1],j['prefill_tok_s_median'],j['prefill_tok_s_best'],j['ids_hash'])" $O/${t}.json
}
V="64,4,4 64,8,4 128,8,8 128,4,8"
for v in $V; do t=$(echo $v | tr , _)
  r r1_${t}_phi_512 $v phi-3-mini 512
  r r1_${t}_q15_512 $v qwen2.5-1.5b 512
  r r1_${t}_q05_512 $v qwen2.5-0.5b 512
  r r1_${t}_phi_32 $v phi-3-mini 32
  r r1_${t}_phiq4_128 $v phi-3-mini 128 --weights Q4_K_M
done
for v in 128,4,8 128,8,8 64,8,4 64,4,4; do t=$(echo $v | tr , _)
  r r2_${t}_phi_512 $v phi-3-mini 512
  r r2_${t}_q15_512 $v qwen2.5-1.5b 512
done
