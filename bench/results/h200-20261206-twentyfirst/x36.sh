#!/bin/bash
# H200 only: the issue's table with the attention-workgroup binary (cand.sha), one A/B round
# against f9daca3 on Phi-3-mini, then the dial's cpu-ref check of Phi-3-mini Q4_K_M
O=$OUT/x36; mkdir -p $O
A=/tmp/b/wgfa; N=/tmp/b/wgfn
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt; cat $O/gpu.txt
grep -q H200 $O/gpu.txt || { echo "not an H200: stop"; exit 0; }
WGFUSE=$A WGF_GIT_COMMIT=$(cat out/v/cand.sha) timeout 200 bash bench/h200_quant.sh $O/table > $O/table.out 2>&1
python3 - $O/table/results.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    j=json.loads(l); print(j.get('step'), j.get('decode_tok_s_median'), j.get('activations'), j.get('ids_hash'), j.get('compute_units'))
PY
run() { local tag=$1 b=$2 shape=$3 w=$4; local f=$O/${tag}.json
  timeout 40 $b --quiet llm bench --shape $shape --plan roles --weights $w -n 256 --prompt-tokens 32 --runs 3 --json > $f 2>${f%.json}.err
  echo "$tag $(python3 -c "import json;j=json.load(open('$f'));print(j['decode_tok_s_median'],j['ids_hash'])" 2>&1)"; }
for W in Q4_K_M f16; do run r1_old_phi_$W $N phi-3-mini $W; run r1_new_phi_$W $A phi-3-mini $W; done
timeout 150 $A --quiet llm bench --plan all -n 8 --runs 1 --prompt-tokens 32 --shape phi-3-mini --weights Q4_K_M --json > $O/dial_phi3q4.json 2>$O/dial_phi3q4.err; echo "dial rc=$?"
python3 -c "
import json;j=json.load(open('$O/dial_phi3q4.json'))
for p in j['plans']: print(' ', p.get('plan'), p.get('check_err'), p.get('argmax_agree'), p.get('check_rows'), p.get('decode_tok_s_median'), p.get('skipped',''))" 2>&1
