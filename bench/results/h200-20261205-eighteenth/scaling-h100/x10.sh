#!/bin/bash
# diagnostic: prefill tok/s against prompt length (roles plan), Qwen2.5-0.5B and Phi-3-mini f16
O=$OUT/x10; mkdir -p $O
N=/tmp/b/wgfn
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
run() { local shape=$1 w=$2 p=$3 plan=$4; local f=$O/${plan}_${shape}_${w}_p$p.json
  $N llm bench --shape $shape --plan $plan --weights $w -n 4 --prompt-tokens $p --runs 3 --json > $f 2>${f%.json}.err
  echo "$plan $shape $w p=$p $(python3 -c "import json;j=json.load(open('$f'));print(j['prefill_tok_s_median'], j['prefill_tok_s_best'], j['decode_tok_s_median'])" 2>&1)"; }
for p in 1 2 8 32 128 512; do run qwen2.5-0.5b f16 $p roles; done
run qwen2.5-0.5b f16 32 fused
for p in 1 32 512; do run phi-3-mini f16 $p roles; done
run phi-3-mini Q4_K_M 32 roles
