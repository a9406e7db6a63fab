#!/usr/bin/env bash
set -u
WG=$PWD/out/wgfuse_b
O=$OUT/qsweep; mkdir -p $O
N=${N:-128}; RUNS=${RUNS:-3}
one() { # tag kdir cfg shape weights [extra]
  local tag=$1 kd=$2 cfg=$3 S=$4 W=$5; shift 5
  local kdv=""; [ "$kd" != x ] && kdv=$PWD/out/kv/$kd
  WGF_KERNEL_DIR=$kdv WGF_QCFG=$cfg timeout 120 $WG llm bench --shape $S --plan roles --weights $W -n $N --prompt-tokens 16 --runs $RUNS --json "$@" > $O/$tag.json 2> $O/$tag.err
  echo "$tag rc=$? $(python3 -c "import json,sys;d=json.load(open('$O/$tag.json'));print(d['decode_tok_s_median'], d.get('dispatches_per_token'), d.get('ids_hash'))" 2>/dev/null)" | tee -a $O/summary.txt
}
for S in phi-3-mini qwen2.5-0.5b; do
  one v4_q4km_$S x x $S Q4_K_M --profile
  one v4_q40_$S x x $S Q4_0
  one v4_q80_$S x x $S Q8_0
  one v4x_q4km_$S v4x x $S Q4_K_M --profile
  one v4x_q40_$S v4x x $S Q4_0
  one v4x_q80_$S v4x x $S Q8_0
  one v4x_f16_$S v4x x $S f16
  for cfg in 4,8,4,2 4,32,16,8 2,16,8,4,0,2 4,16,8,4,0,4; do
    one v4x_q4km_${cfg//,/_}_$S v4x $cfg $S Q4_K_M
  done
done
