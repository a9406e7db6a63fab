#!/usr/bin/env bash
# issue 14, ninth cut, diagnostic: the matvec workgroup size (WGF_WG hook) - does wave packing matter?
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; gunzip -c out/v/wg_w.gz > /tmp/b/wg; chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so
R=$OUT/r; mkdir -p $R; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
/tmp/b/wg --version > $R/version.txt 2>&1
bw() { local tag=$1 S=$2 W=$3 wg=$4; shift 4
  WGF_WG=$wg XDG_CACHE_HOME=/tmp/xc_$tag$wg timeout 100 /tmp/b/wg llm bench --shape $S --plan roles --weights $W -n 128 --prompt-tokens 16 --runs 3 --json "$@" > $R/${tag}_wg${wg}_${W}_$S.json 2> $R/${tag}_wg${wg}_${W}_$S.err; }
S=phi-3-mini
for r in a b; do for wg in 256 128; do bw $r $S Q4_K_M $wg; bw $r $S f16 $wg; done; done
bw prof $S Q4_K_M 128 --profile; bw prof $S f16 128 --profile; bw prof $S f16 256 --profile
for S in llama-3.2-1b qwen2.5-0.5b; do for wg in 256 128; do bw a $S Q4_K_M $wg; bw a $S f16 $wg; done; done
echo "end +$(( $(date +%s) - T0 )) s" >> $R/time.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_after.txt 2>&1
python3 - $R > $R/summary.txt <<'PY'
import json,sys,os,glob
R=sys.argv[1]
for f in sorted(glob.glob(R+'/*.json')):
    try:
        d=json.loads(open(f).read().strip().splitlines()[-1])
        p=d.get('profile_us_per_token')
        ps=' '.join('%s:%.2f'%(k.replace('_sg',''),v[0]/max(v[1],1)) for k,v in sorted(p.items())) if p else ''
        print(os.path.basename(f)[:-5], d.get('decode_tok_s_median'), d.get('ids_hash'), ps)
    except Exception as e: print(os.path.basename(f), 'ERR', open(f[:-5]+'.err').read()[-300:].replace('\n',' '))
PY
cat $R/summary.txt; cat $R/time.txt
tar -C $OUT -czf $OUT/r.tgz r
