#!/bin/bash
# Q6_K decode variants, config hooks, ablations; base = clean a962f4f binary
O=$OUT/x3; mkdir -p $O
B=/tmp/b/wgfuse; K=/tmp/b/wgfk; KD=$PWD/out/k
run() { # tag binary weights [env...]
  local tag=$1 bin=$2 w=$3; shift 3
  local f=$O/${tag}_$w.json
  env "$@" $bin llm bench --shape phi-3-mini --plan roles --weights $w -n 128 --prompt-tokens 32 --runs 3 --json > $f 2>${f%.json}.err
  echo "$tag $w $* $(python3 -c "import json;j=json.load(open('$f'));print(j['decode_tok_s_median'],j['ids_hash'])" 2>&1)"
}
for R in 1 2; do
  run base$R $B f16 X=1
  run base$R $B Q4_K_M X=1
  run q6_$R $K Q4_K_M WGF_KERNEL_DIR=$KD/q6
  run q6cap4_$R $K Q4_K_M WGF_KERNEL_DIR=$KD/q6 WGF_X_Q6CAP=4
  run q6cvt_$R $K Q4_K_M WGF_KERNEL_DIR=$KD/q6cvt
  if [ $R = 1 ]; then
    run cap4 $K Q4_K_M WGF_X_Q6CAP=4
    run cand1 /tmp/b/wgfc Q4_K_M X=1
  else
    run q6sp64 $K Q4_K_M WGF_KERNEL_DIR=$KD/q6 WGF_X_SPLIT=64
    run sp64 $K f16 WGF_X_SPLIT=64
    run cand2 /tmp/b/wgfc Q4_K_M X=1
  fi
done
prof() { # tag binary [env...]
  local tag=$1 bin=$2; shift 2
  env "$@" $bin llm bench --shape phi-3-mini --plan roles --weights Q4_K_M -n 64 --runs 1 --profile --json > $O/prof_$tag.json 2>$O/prof_$tag.err
  python3 -c "import json;j=json.load(open('$O/prof_$tag.json'));print('$tag', {k:v[0] for k,v in j['profile_us_per_token'].items()})" 2>&1
}
prof base $B X=1
prof q6 $K WGF_KERNEL_DIR=$KD/q6
prof q6cvt $K WGF_KERNEL_DIR=$KD/q6cvt
prof fmaonly $K WGF_KERNEL_DIR=$KD/fmaonly
prof nounpack $K WGF_KERNEL_DIR=$KD/nounpack
# the issue's table at the candidate commit (clean binary)
WGFUSE=/tmp/b/wgfc WGF_GIT_COMMIT=$(cat out/v/cand.sha) ACTS=f32 bash bench/h200_quant.sh $O/table/exact > $O/table_exact.log 2>&1
WGFUSE=/tmp/b/wgfc WGF_GIT_COMMIT=$(cat out/v/cand.sha) ACTS=q8 WEIGHTS="Q4_K_M" PROFILE=0 bash bench/h200_quant.sh $O/table/q8 > $O/table_q8.log 2>&1
python3 - $O/table/exact/results.jsonl $O/table/q8/results.jsonl <<'P'
import json,sys
for f in sys.argv[1:]:
    for l in open(f):
        j=json.loads(l); r=j.get('result') or j
        print(j.get('step', j.get('name')), r.get('decode_tok_s_median') if isinstance(r,dict) else r)
P
