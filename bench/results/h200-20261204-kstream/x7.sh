#!/usr/bin/env bash
# eighth cut of issue 14 (2026-12-04): the issue-14 table with streamed Q4_K / Q6_K dots and
# their layouts (wg_n, the commit in $1), A/B against the previous kernels (wg_x: b2dae89,
# whose lib_rows_q / q_cfg are 08959dd's), more shapes, dial checks against cpu-ref
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b /tmp/xc && for v in x n; do gunzip -c out/v/wg_$v.gz > /tmp/b/wg_$v; chmod +x /tmp/b/wg_$v; done
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so XDG_CACHE_HOME=/tmp/xc
unset WGF_KERNEL_DIR
R=$OUT/r; mkdir -p $R
pack() { tar -C $OUT -czf $OUT/results.tgz r 2>/dev/null; }
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
/tmp/b/wg_n --version > $R/version_n.txt 2>&1; /tmp/b/wg_x --version > $R/version_x.txt 2>&1
WGFUSE=/tmp/b/wg_n WGF_GIT_COMMIT=$1 N=128 RUNS=3 P=16 SHAPES="phi-3-mini qwen2.5-0.5b" WEIGHTS="f16 Q4_K_M Q4_0 Q8_0" ACTS="f32 q8" bench/h200_quant.sh $R/quant > $R/quant_stdout.txt 2>&1
echo "quant +$(( $(date +%s) - T0 )) s" >> $R/time.txt; pack
b() { # binary shape weights tag
  timeout 120 /tmp/b/wg_$1 llm bench --shape $2 --plan roles --weights $3 -n 128 --prompt-tokens 16 --runs 3 --json > $R/$4_$2_$3_$1.json 2> $R/$4_$2_$3_$1.err
}
for S in phi-3-mini qwen2.5-0.5b; do b x $S Q4_K_M ab; done
echo "ab +$(( $(date +%s) - T0 )) s" >> $R/time.txt; pack
for S in llama-3.2-1b qwen2.5-1.5b; do b n $S f16 more; for v in x n; do b $v $S Q4_K_M more; done; done
echo "more +$(( $(date +%s) - T0 )) s" >> $R/time.txt; pack
timeout 150 /tmp/b/wg_n llm bench --shape llama-3.2-1b --plan all --weights Q4_K_M -n 16 --prompt-tokens 8 --runs 1 --json > $R/dial_f32_q4km_llama.json 2> $R/dial_f32_q4km_llama.err
echo "dial +$(( $(date +%s) - T0 )) s" >> $R/time.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_after.txt 2>&1
rm -rf $R/quant/cache 2>/dev/null; pack
python3 - $R <<'PY'
import json,sys,os,glob
R=sys.argv[1]
for f in sorted(glob.glob(R+'/quant/results.jsonl')):
    for l in open(f):
        d=json.loads(l); p=d.get('profile_us_per_token')
        ps=' '.join('%s:%.2f'%(k.replace('_sg',''),v[0]/max(v[1],1)) for k,v in sorted(p.items())) if p else ''
        print(d['step'], d['decode_tok_s_median'], d.get('ids_hash'), ps)
for f in sorted(glob.glob(R+'/*.json')):
    try:
        d=json.loads(open(f).read().strip().splitlines()[-1])
        print(os.path.basename(f)[:-5], d.get('decode_tok_s_median'), d.get('ids_hash'))
    except Exception as e: print(os.path.basename(f), 'ERR', open(f[:-5]+'.err').read()[-300:])
PY
grep -h "check\|within" $R/dial_f32_q4km_llama.err | tail -3
cat $R/time.txt
