#!/bin/bash
# the issue-14 table with the i8x3 binary (wgfn, 205d3b3's tree), then an A/B round against
# the clean 76ba940 binary (wgfc) and a profile of i8x3
O=$OUT/x7; mkdir -p $O
C=/tmp/b/wgfc; N=/tmp/b/wgfn
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
WGFUSE=$N WGF_GIT_COMMIT=205d3b3 bash bench/h200_quant.sh $O/table > $O/table.out 2>&1
python3 - $O/table/results.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    j=json.loads(l); print(j['step'], j.get('decode_tok_s_median'), j.get('activations'), j.get('ids_hash'))
PY
run() { local tag=$1 bin=$2 shape=$3 w=$4 a=$5; local f=$O/${tag}_${shape}_$w.json
  $bin llm bench --shape $shape --plan roles --weights $w --activations $a -n 128 --prompt-tokens 32 --runs 3 --json > $f 2>${f%.json}.err
  echo "$tag $shape $w $a $(python3 -c "import json;j=json.load(open('$f'));print(j['decode_tok_s_median'],j['ids_hash'])" 2>&1)"; }
run f16 $C phi-3-mini f16 f32
run c $C phi-3-mini Q4_K_M f32
run n3 $N phi-3-mini Q4_K_M i8x3
run nf $N phi-3-mini Q4_K_M f32
$N llm bench --shape phi-3-mini --plan roles --weights Q4_K_M -n 64 --runs 1 --profile --json > $O/prof_n3.json 2>$O/prof_n3.err
python3 -c "import json;j=json.load(open('$O/prof_n3.json'));print('n3', {k:v[0] for k,v in j['profile_us_per_token'].items()})"
