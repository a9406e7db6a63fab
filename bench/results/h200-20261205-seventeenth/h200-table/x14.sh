#!/bin/bash
O=$OUT/x14; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
SHAPES="phi-3-mini qwen2.5-0.5b" ACTS="f32 q8" WGFUSE=/tmp/b/wgfn WGF_GIT_COMMIT=ecf49d349b93c568570d7c067bd4117826bfcb28 bash bench/h200_quant.sh $O/table > $O/table.out 2>&1
python3 - $O/table/results.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    j=json.loads(l); print(j['step'], j.get('decode_tok_s_median'), j.get('activations'), j.get('ids_hash'))
PY
