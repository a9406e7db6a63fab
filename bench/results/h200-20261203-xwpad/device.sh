#!/usr/bin/env bash
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
V="base pad padgx"
mkdir -p /tmp/b /tmp/xc && for v in $V; do gunzip -c out/v/wg_$v.gz > /tmp/b/wg_$v; chmod +x /tmp/b/wg_$v; done
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so XDG_CACHE_HOME=/tmp/xc
R=$OUT/q; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
/tmp/b/wg_base info > $R/info.txt 2>&1
pack() { tar -C $OUT -czf $OUT/results.tgz q 2>/dev/null; }
b() { # variant shape weights tag [extra]
  timeout 60 /tmp/b/wg_$1 llm bench --shape $2 --plan roles --weights $3 -n 256 --prompt-tokens 32 --runs 3 --json ${5:-} > $R/$4_$2_$3_$1.json 2> $R/$4_$2_$3_$1.err
}
T0=$(date +%s)
for W in Q4_K_M f16 Q8_0 Q4_0; do for v in $V; do b $v qwen2.5-0.5b $W r1; done; done
echo "qwen r1 +$(( $(date +%s) - T0 )) s" >> $R/time.txt; pack
for W in Q4_K_M f16; do for v in $V; do b $v phi-3-mini $W r1; done; done
echo "phi r1 +$(( $(date +%s) - T0 )) s" >> $R/time.txt; pack
for W in Q4_K_M f16; do for v in padgx pad base; do b $v qwen2.5-0.5b $W r2; done; done
for v in padgx pad base; do b $v phi-3-mini Q4_K_M r2; done
echo "r2 +$(( $(date +%s) - T0 )) s" >> $R/time.txt; pack
for v in $V; do b $v qwen2.5-0.5b Q4_K_M prof --profile; done
b base qwen2.5-0.5b f16 prof --profile
echo "prof +$(( $(date +%s) - T0 )) s" >> $R/time.txt; pack
python3 - $R <<'PY'
import json,sys,os,glob
R=sys.argv[1]
for f in sorted(glob.glob(R+'/*.json')):
    try:
        d=json.loads(open(f).read().strip().splitlines()[-1])
        p=d.get('profile_us_per_token')
        ps=' '.join('%s:%.2f'%(k.replace('_sg',''),v[0]/max(v[1],1)) for k,v in p.items()) if p else ''
        print(os.path.basename(f)[:-5], d['decode_tok_s_median'], d.get('ids_hash'), d['dispatches_per_token'], ps)
    except Exception as e: print(os.path.basename(f), 'ERR', open(f[:-5]+'.err').read()[-300:])
PY
cat $R/time.txt
