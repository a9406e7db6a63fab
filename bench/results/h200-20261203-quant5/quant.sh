#!/usr/bin/env bash
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b /tmp/xc && gunzip -c out/v/wg_c.gz > /tmp/b/wg && gunzip -c out/v/wg_c6.gz > /tmp/b/wg_c6 && chmod +x /tmp/b/wg /tmp/b/wg_c6
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so XDG_CACHE_HOME=/tmp/xc WGF_GIT_COMMIT=$1 WGFUSE=/tmp/b/wg
R=$OUT/r; mkdir -p $R
pack() { tar -C $OUT -czf $OUT/results.tgz r 2>/dev/null; }
date > $R/times.txt
N=128 RUNS=3 P=16 SHAPES="phi-3-mini qwen2.5-0.5b" WEIGHTS="f16 Q4_K_M Q4_0 Q8_0" ACTS="f32 q8" bench/h200_quant.sh $R/quant > $R/quant_stdout.txt 2>&1
date >> $R/times.txt; pack
for A in f32 q8; do timeout 120 /tmp/b/wg llm bench --shape qwen2.5-0.5b --plan all --weights Q4_K_M --activations $A -n 32 --prompt-tokens 16 --runs 1 --json > $R/dial_${A}_q4km_qwen.json 2> $R/dial_${A}_q4km_qwen.err; done
date >> $R/times.txt; pack
N=128 RUNS=3 P=16 PROFILE=0 SHAPES="qwen2.5-1.5b llama-3.2-1b" WEIGHTS="f16 Q4_K_M Q4_0" ACTS="f32 q8" bench/h200_quant.sh $R/more > $R/more_stdout.txt 2>&1
date >> $R/times.txt; pack
for r in 1 2; do for v in wg wg_c6; do for S in phi-3-mini qwen2.5-1.5b; do
  timeout 90 /tmp/b/$v llm bench --shape $S --plan roles --weights Q4_K_M -n 128 --prompt-tokens 16 --runs 3 --json > $R/q6_${r}_${S}_$v.json 2> $R/q6_${r}_${S}_$v.err
done; done; done
date >> $R/times.txt
rm -f $OUT/r/*/cache -r 2>/dev/null; pack
for f in $R/q6_*.json; do echo "$(basename $f) $(tail -1 $f | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["decode_tok_s_median"], d["ids_hash"])' 2>&1)"; done
cat $R/times.txt; tail -4 $R/quant_stdout.txt
python3 - $R <<'PY'
import json,sys,glob,os
for f in sorted(glob.glob(sys.argv[1]+'/*/results.jsonl')):
    for l in open(f):
        try: d=json.loads(l)
        except: continue
        print(os.path.basename(os.path.dirname(f)), d.get('model'), d.get('weights'), d.get('activations'), d.get('decode_tok_s_median'), d.get('dispatches_per_token'))
PY
