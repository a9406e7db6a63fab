#!/bin/bash
# split-K prefill matmul, final rule (wgfk) vs HEAD 208c900 (wgfh), one call, + transformers peer (longer warm-up)
O=$OUT/x18; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt; cat $O/gpu.txt
r() { # tag bin shape P [extra]
  local t=$1 b=$2 s=$3 p=$4; shift 4
  /tmp/b/$b llm bench --shape $s --backend gpu -n 8 --prompt-tokens $p --runs 3 --json "$@" > $O/${t}.json 2> $O/${t}.err
  python3 -c "import json,sys;j=json.load(open(sys.argv[1]));print(sys.argv[1].split('/')[-1],j['prefill_tok_s_median'],j['ids_hash'])" $O/${t}.json
}
for S in qwen2.5-0.5b phi-3-mini qwen2.5-1.5b; do for P in 32 128 512; do
  for b in wgfh wgfk; do r r1_${b}_${S}_$P $b $S $P; done
done; done
for S in qwen2.5-0.5b phi-3-mini; do for P in 128 512; do
  for b in wgfk wgfh; do r r2_${b}_${S}_$P $b $S $P; done
done; done
for b in wgfh wgfk; do r q4_${b}_phi_128 $b phi-3-mini 128 --weights Q4_K_M; done
r prof_wgfk_qwen2.5-0.5b wgfk qwen2.5-0.5b 128 --profile
for S in qwen2.5-0.5b phi-3-mini qwen2.5-1.5b; do for P in 128 512; do
  timeout 100 python3 bench/llm_peer_graph.py --shape $S --dtype float16 -n 8 --prompt-tokens 32 --runs 1 --prefill $P > $O/peer_${S}_$P.json 2> $O/peer_${S}_$P.err
  python3 -c "import json,sys;j=json.load(open(sys.argv[1]));print(sys.argv[1].split('/')[-1],j['prefill_tok_s_median'])" $O/peer_${S}_$P.json
done; done
