#!/bin/bash
# K-quant codes as unpack4x8unorm bytes (u8) vs the committed f16 pairs (76ba940)
O=$OUT/x4; mkdir -p $O
C=/tmp/b/wgfc; K=/tmp/b/wgfk; KD=$PWD/out/k
run() { local tag=$1 bin=$2 w=$3; shift 3; local f=$O/${tag}_$w.json
  env "$@" $bin llm bench --shape phi-3-mini --plan roles --weights $w -n 128 --prompt-tokens 32 --runs 3 --json > $f 2>${f%.json}.err
  echo "$tag $w $(python3 -c "import json;j=json.load(open('$f'));print(j['decode_tok_s_median'],j['ids_hash'])" 2>&1)"; }
for R in 1 2; do
  run cand$R $C f16 X=1
  run cand$R $C Q4_K_M X=1
  run u8_$R $K Q4_K_M WGF_KERNEL_DIR=$KD/u8
done
run candq $C Q4_K_M X=1
env WGF_KERNEL_DIR=$KD/u8 $K llm bench --shape phi-3-mini --plan roles --weights Q4_K_M -n 64 --runs 1 --profile --json > $O/prof_u8.json 2>$O/prof_u8.err
python3 -c "import json;j=json.load(open('$O/prof_u8.json'));print('u8', {k:v[0] for k,v in j['profile_us_per_token'].items()})"
$C llm bench --shape phi-3-mini --plan roles --weights Q4_K_M -n 64 --runs 1 --profile --json > $O/prof_c.json 2>$O/prof_c.err
python3 -c "import json;j=json.load(open('$O/prof_c.json'));print('c ', {k:v[0] for k,v in j['profile_us_per_token'].items()})"
for R in 3; do run cand$R $C Q4_K_M X=1; run u8_$R $K Q4_K_M WGF_KERNEL_DIR=$KD/u8; run u8q$R $K Q4_K_M WGF_KERNEL_DIR=$KD/u8 ; done
