#!/bin/bash
# A/B at a long context: f9daca3 (every position attended) vs HEAD (Phi-3-mini's window of 2047
# applied): Phi-3-mini f16 and Q4_K_M, a 3,500-token prompt then 256 decoded, roles plan
O=$OUT/x40; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
for r in 1 2; do for W in f16 Q4_K_M; do for b in wgfn wgfa; do
  f=$O/r${r}_${b}_${W}.json
  timeout 120 /tmp/b/$b --quiet llm bench --shape phi-3-mini --plan roles --weights $W -n 256 --prompt-tokens 3500 --runs 2 --json > $f 2>${f%.json}.err
  echo "r$r $b $W $(python3 -c "import json;j=json.load(open('$f'));print(j['decode_tok_s_median'],j['prefill_tok_s_median'],j['ids_hash'])" 2>&1)"
done; done; done
