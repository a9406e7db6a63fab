#!/bin/bash
O=$OUT/x13; mkdir -p $O
N=/tmp/b/wgfx
for p in 32 128; do
$N llm bench --shape qwen2.5-0.5b --plan roles --weights f16 -n 8 --prompt-tokens $p --runs 3 --json > $O/ind$p.json 2>&1
WGF_X_DIRECT_T=$p $N llm bench --shape qwen2.5-0.5b --plan roles --weights f16 -n 8 --prompt-tokens $p --runs 3 --json > $O/dir$p.json 2>&1
done
WGF_X_DIRECT_T=32 $N llm bench --shape phi-3-mini --plan roles --weights f16 -n 8 --prompt-tokens 32 --runs 3 --json > $O/phidir32.json 2>&1
for f in $O/*.json; do echo "$f $(python3 -c "import json;j=json.load(open('$f'));print(j['prefill_tok_s_median'],j['decode_tok_s_median'],j['ids_hash'])" 2>&1)"; done
