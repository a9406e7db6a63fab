#!/bin/bash
# the compute-unit spread (new binary) against HEAD (hooks binary, no override) on the H200, then the issue's table
O=$OUT/x22; mkdir -p $O
H=/tmp/b/wgfh; N=/tmp/b/wgfn
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt; cat $O/gpu.txt
run() { local tag=$1 b=$2 w=$3 q=$4; local f=$O/${tag}_${w}.json
  WGF_QCFG="$q" timeout 100 $b --quiet llm bench --shape phi-3-mini --plan roles --weights $w -n 128 --prompt-tokens 32 --runs 3 --json > $f 2>${f%.json}.err
  echo "$tag $w $(python3 -c "import json;j=json.load(open('$f'));print(j['decode_tok_s_median'],j['ids_hash'],j.get('compute_units'))" 2>&1)"; }
for r in 1 2 3; do
run r${r}_f16 $N f16 ""
run r${r}_base $H Q4_K_M ""
run r${r}_q288 $H Q4_K_M "attn_qkv/*=2:6:16:288"
run r${r}_new $N Q4_K_M ""
done
SHAPES="phi-3-mini qwen2.5-0.5b" WGFUSE=$N WGF_GIT_COMMIT=$(cat out/v/cand.sha) timeout 400 bash bench/h200_quant.sh $O/table > $O/table.out 2>&1
python3 - $O/table/results.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    j=json.loads(l); print(j.get('step'), j.get('decode_tok_s_median'), j.get('activations'), j.get('ids_hash'), j.get('compute_units'))
PY
