#!/bin/bash
# H200 only: the spread (new) against HEAD before it (hooks binary, no override), and the issue's Phi-3-mini rows
O=$OUT/x24; mkdir -p $O
H=/tmp/b/wgfh; N=/tmp/b/wgfn
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt; cat $O/gpu.txt
grep -q H200 $O/gpu.txt || { echo "not an H200: stop"; exit 0; }
run() { local tag=$1 b=$2 w=$3; local f=$O/${tag}_${w}.json
  timeout 60 $b --quiet llm bench --shape phi-3-mini --plan roles --weights $w -n 128 --prompt-tokens 32 --runs 3 --json > $f 2>${f%.json}.err
  echo "$tag $w $(python3 -c "import json;j=json.load(open('$f'));print(j['decode_tok_s_median'],j['ids_hash'],j.get('compute_units'))" 2>&1)"; }
for r in 1 2; do
run r${r}_f16 $N f16
run r${r}_base $H Q4_K_M
run r${r}_new $N Q4_K_M
done
SHAPES="phi-3-mini" WEIGHTS="f16 Q4_K_M" ACTS="f32" PROFILE=0 WGFUSE=$N WGF_GIT_COMMIT=$(cat out/v/cand.sha) timeout 150 bash bench/h200_quant.sh $O/table > $O/table.out 2>&1
python3 - $O/table/results.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    j=json.loads(l); print(j.get('step'), j.get('decode_tok_s_median'), j.get('activations'), j.get('ids_hash'), j.get('compute_units'))
PY
