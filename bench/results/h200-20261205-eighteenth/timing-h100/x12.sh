#!/bin/bash
O=$OUT/x12; mkdir -p $O
N=/tmp/b/wgfx
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
$N llm bench --shape qwen2.5-0.5b --plan roles --weights f16 -n 8 --prompt-tokens 32 --runs 2 > $O/q32.txt 2>&1; grep -E "XX|prefill tok" $O/q32.txt
$N llm bench --shape qwen2.5-0.5b --plan roles --weights f16 -n 8 --prompt-tokens 300 --runs 1 > $O/q300.txt 2>&1; grep -E "XX|prefill tok" $O/q300.txt
