#!/bin/bash
# qkv workgroup balance (issue 14): same per-lane work, workgroup counts that fill the SMs evenly
O=$OUT/x20; mkdir -p $O
N=/tmp/b/wgfh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt; cat $O/gpu.txt
run() { local tag=$1 w=$2 q=$3; shift 3; local f=$O/${tag}_${w}.json
  WGF_QCFG="$q" timeout 120 $N --quiet llm bench --shape phi-3-mini --plan roles --weights $w -n 128 --prompt-tokens 32 --runs 3 --json "$@" > $f 2>${f%.json}.err
  echo "$tag $w $(python3 -c "import json;j=json.load(open('$f'));print(j['decode_tok_s_median'],j['ids_hash'])" 2>&1)"; }
Q288="attn_qkv/*=2:6:16:288"
Q320="attn_qkv/*=2:6:16:320"
Q4R="attn_qkv/*=4:12:16:144"
for r in 1 2; do
run r${r}_f16 f16 ""
run r${r}_base Q4_K_M ""
run r${r}_q288 Q4_K_M "$Q288"
run r${r}_q320 Q4_K_M "$Q320"
run r${r}_q4r Q4_K_M "$Q4R"
done
prof() { local tag=$1 q=$2; local f=$O/prof_$tag.json
  WGF_QCFG="$q" timeout 120 $N --quiet llm bench --shape phi-3-mini --plan roles --weights Q4_K_M -n 64 --prompt-tokens 32 --runs 1 --profile --json > $f 2>${f%.json}.err
  python3 -c "
import json;j=json.load(open('$f'));p=j['profile_us_per_token']
print('$tag', j['decode_tok_s_median'], ' '.join('%s=%.2f'%(k.replace('_sg',''),v[0]/v[1]) for k,v in p.items() if 'qkv' in k or 'gate' in k))" 2>&1; }
prof base ""
prof q288 "$Q288"
prof q320 "$Q320"
prof q4r "$Q4R"
timeout 150 $N bench dispatch --quick > $O/dispatch.txt 2>$O/dispatch.err; tail -15 $O/dispatch.txt
# the dial on real shapes: every plan checked against cpu-ref (8-token prefill: split-K matmuls) then timed
dial() { local tag=$1; shift; timeout 150 $N --quiet llm bench --plan all -n 8 --runs 1 --prompt-tokens 32 "$@" --json > $O/dial_$tag.json 2>$O/dial_$tag.err; echo "dial $tag rc=$?"; python3 -c "
import json;j=json.load(open('$O/dial_$tag.json'))
for p in j['plans']: print(' ', p.get('plan'), p.get('check_err'), p.get('argmax_agree'), p.get('check_rows'), p.get('decode_tok_s_median'), p.get('skipped',''))" 2>&1; }
dial qwen05 --shape qwen2.5-0.5b
dial phi3q4 --shape phi-3-mini --weights Q4_K_M
dial phi3f16 --shape phi-3-mini
