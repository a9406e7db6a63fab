#!/bin/bash
# decode attention slices: base (a962f4f) vs wgfy (early exit + combine grid; WGF_X_SPLIT hook)
O=$OUT/x2; mkdir -p $O
run() { # tag binary split shape weights
  local f=$O/$1_$4_$5.json
  WGF_X_SPLIT=$3 $2 llm bench --shape $4 --plan roles --weights $5 -n 256 --prompt-tokens 32 --runs 3 --json > $f 2>${f%.json}.err
  echo "$1 $4 $5 split=$3 $(python3 -c "import json;j=json.load(open('$f'));print(j['decode_tok_s_median'],j['prefill_tok_s_median'],j['ids_hash'])" 2>&1)"
}
B=/tmp/b/wgfuse; Y=/tmp/b/wgfy
for S in phi-3-mini qwen2.5-0.5b; do for W in f16 Q4_K_M; do
  run base1 $B 512 $S $W; run y64 $Y 64 $S $W; run y32 $Y 32 $S $W
  [ $S = phi-3-mini ] && run y128 $Y 128 $S $W
  run base2 $B 512 $S $W; run y64b $Y 64 $S $W
done; done
WGF_X_SPLIT=64 $Y llm bench --shape phi-3-mini --plan roles --weights Q4_K_M -n 64 --runs 1 --profile --json > $O/prof_y64.json 2>&1
$B llm bench --shape phi-3-mini --plan roles --weights f16 -n 64 --runs 1 --profile --json > $O/prof_f16.json 2>&1
