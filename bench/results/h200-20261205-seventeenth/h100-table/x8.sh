#!/bin/bash
# issue 14 table at HEAD (ACTS f32 i8x3 q8), Phi-3-mini first; then A/B rounds at N=128
O=$OUT/x8; mkdir -p $O
N=/tmp/b/wgfn
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
SHAPES="phi-3-mini qwen2.5-0.5b" WGFUSE=$N WGF_GIT_COMMIT=$(cat out/v/cand.sha) bash bench/h200_quant.sh $O/table > $O/table.out 2>&1
python3 - $O/table/results.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    j=json.loads(l); print(j['step'], j.get('decode_tok_s_median'), j.get('activations'), j.get('ids_hash'))
PY
run() { local tag=$1 shape=$2 w=$3 a=$4; local f=$O/${tag}_${shape}_${w}_$a.json
  $N llm bench --shape $shape --plan roles --weights $w --activations $a -n 128 --prompt-tokens 32 --runs 3 --json > $f 2>${f%.json}.err
  echo "$tag $shape $w $a $(python3 -c "import json;j=json.load(open('$f'));print(j['decode_tok_s_median'],j['ids_hash'])" 2>&1)"; }
for r in 1 2; do
run r$r phi-3-mini f16 f32
run r$r phi-3-mini Q4_K_M f32
run r$r phi-3-mini Q4_K_M i8x3
done
