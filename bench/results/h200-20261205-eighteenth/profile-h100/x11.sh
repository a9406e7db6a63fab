#!/bin/bash
# diagnostic: prefill profile per role (first chunk), Qwen2.5-0.5B and Phi-3-mini
O=$OUT/x11; mkdir -p $O
N=/tmp/b/wgfp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
run() { local shape=$1 w=$2 p=$3; local f=$O/${shape}_${w}_p$p.txt
  $N llm bench --shape $shape --plan roles --weights $w -n 8 --prompt-tokens $p --runs 2 --profile > $f 2>&1
  sed -n '/prefill tok/p;/prefill profile/,$p' $f; }
run qwen2.5-0.5b f16 32
run qwen2.5-0.5b f16 128
run phi-3-mini f16 32
run phi-3-mini Q4_K_M 32
