#!/bin/bash
# The issue's table at HEAD on whatever GPU this is (the full table only on an H200)
O=$OUT/x30; mkdir -p $O
N=/tmp/b/wgfn
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt; cat $O/gpu.txt
if grep -q H200 $O/gpu.txt; then
  WGFUSE=$N WGF_GIT_COMMIT=$(cat out/v/cand.sha) timeout 300 bash bench/h200_quant.sh $O/table > $O/table.out 2>&1
else
  SHAPES="phi-3-mini" WEIGHTS="f16 Q4_K_M" ACTS="f32" PROFILE=0 WGFUSE=$N WGF_GIT_COMMIT=$(cat out/v/cand.sha) timeout 150 bash bench/h200_quant.sh $O/table > $O/table.out 2>&1
fi
python3 - $O/table/results.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    j=json.loads(l); print(j.get('step'), j.get('decode_tok_s_median'), j.get('activations'), j.get('ids_hash'), j.get('compute_units'))
PY
