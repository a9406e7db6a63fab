#!/usr/bin/env bash
# limbs experiment (issue 14): WGF_XL=0 committed f32 path, 2/3 = int8 limb split of f32 activations
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b /tmp/xc; gunzip -c out/v/wg_l.gz > /tmp/b/wg; chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so XDG_CACHE_HOME=/tmp/xc
R=$OUT/r; mkdir -p $R; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
/tmp/b/wg --version > $R/version.txt 2>&1
b() { # xl shape weights acts tag [extra]
  WGF_XL=$1 timeout 120 /tmp/b/wg llm bench --shape $2 --plan roles --weights $3 --activations $4 -n 128 --prompt-tokens 16 --runs 3 --json ${6:-} > $R/$5_$2_$3_$4_l$1.json 2> $R/$5_$2_$3_$4_l$1.err
}
for round in r1 r2; do
for S in phi-3-mini qwen2.5-0.5b; do
  b 0 $S f16 f32 $round
  for W in Q4_K_M Q4_0 Q8_0; do b 0 $S $W f32 $round; b 3 $S $W f32 $round; done
  b 2 $S Q4_K_M f32 $round
  b 0 $S Q4_K_M q8 $round
done
echo "$round +$(( $(date +%s) - T0 )) s" >> $R/time.txt
done
b 0 phi-3-mini Q4_K_M f32 prof --profile; b 3 phi-3-mini Q4_K_M f32 prof --profile
for S in llama-3.2-1b qwen2.5-1.5b; do b 0 $S f16 f32 more; for W in Q4_K_M Q4_0; do b 0 $S $W f32 more; b 3 $S $W f32 more; done; done
echo "more +$(( $(date +%s) - T0 )) s" >> $R/time.txt
WGF_XL=3 timeout 150 /tmp/b/wg llm bench --shape qwen2.5-0.5b --plan all --weights Q4_K_M -n 32 --prompt-tokens 16 --runs 1 --json > $R/dial_l3_q4km_qwen.json 2> $R/dial_l3_q4km_qwen.err
echo "dial +$(( $(date +%s) - T0 )) s" >> $R/time.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_after.txt 2>&1
python3 - $R <<'PY'
import json,sys,os,glob
R=sys.argv[1]
for f in sorted(glob.glob(R+'/*.json')):
    try:
        d=json.loads(open(f).read().strip().splitlines()[-1])
        p=d.get('profile_us_per_token')
        ps=' '.join('%s:%.2f'%(k.replace('_sg',''),v[0]/max(v[1],1)) for k,v in sorted(p.items())) if p else ''
        print(os.path.basename(f)[:-5], d.get('decode_tok_s_median'), d.get('ids_hash'), ps)
    except Exception as e: print(os.path.basename(f), 'ERR', open(f[:-5]+'.err').read()[-300:])
PY
grep -h "check\|within\|FAIL\|differ" $R/dial_l3_q4km_qwen.err | tail -5
cat $R/time.txt
