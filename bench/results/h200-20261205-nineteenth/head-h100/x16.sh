#!/bin/bash
# prefill at HEAD (host-grid dispatches) vs ecf49d3 (indirect) vs transformers, one call
O=$OUT/x16; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/gpu.txt
cat $O/gpu.txt
for S in qwen2.5-0.5b phi-3-mini; do
  for P in 8 32 128 512; do
    /tmp/b/wgfh llm bench --shape $S --backend gpu -n 8 --prompt-tokens $P --runs 3 --json > $O/head_${S}_$P.json 2> $O/head_${S}_$P.err
    python3 -c "import json,sys;j=json.load(open(sys.argv[1]));print(sys.argv[1],j['prefill_tok_s_median'],j['ids_hash'])" $O/head_${S}_$P.json
  done
  for P in 32 128; do
    /tmp/b/wgfn llm bench --shape $S --backend gpu -n 8 --prompt-tokens $P --runs 3 --json > $O/base_${S}_$P.json 2> $O/base_${S}_$P.err
    python3 -c "import json,sys;j=json.load(open(sys.argv[1]));print(sys.argv[1],j['prefill_tok_s_median'],j['ids_hash'])" $O/base_${S}_$P.json
  done
  /tmp/b/wgfh llm bench --shape $S --backend gpu -n 8 --prompt-tokens 128 --runs 2 --profile --json > $O/prof_${S}_128.json 2> $O/prof_${S}_128.err
  for P in 32 128 512; do
    timeout 150 python3 bench/llm_peer_graph.py --shape $S --dtype float16 -n 8 --prompt-tokens 32 --runs 1 --prefill $P > $O/peer_${S}_$P.json 2> $O/peer_${S}_$P.err
    python3 -c "import json,sys;j=json.load(open(sys.argv[1]));print(sys.argv[1],j['prefill_tok_s_median'])" $O/peer_${S}_$P.json
  done
done
