#!/usr/bin/env bash
# issue 14 experiment: the attention dispatch's idle SMs prefetch the next weights into L2
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; gunzip -c out/v/wg_x.gz > /tmp/b/wg; chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so XDG_CACHE_HOME=/tmp/xc
R=$OUT/r; mkdir -p $R; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
/tmp/b/wg --version > $R/version.txt 2>&1
b() { local tag=$1 S=$2 W=$3 pf=$4 n=$5; shift 5
  env WGF_PF=$pf WGF_PF_WG=$n timeout 120 /tmp/b/wg llm bench --shape $S --plan roles --weights $W -n 128 --prompt-tokens 16 --runs 3 --json "$@" > $R/${tag}_${W}_$S.json 2> $R/${tag}_${W}_$S.err; }
S=phi-3-mini
b base $S Q4_K_M o 0; b o100 $S Q4_K_M o 100; b og100 $S Q4_K_M og 100; b og200 $S Q4_K_M og 200
b og400 $S Q4_K_M og 400; b og800 $S Q4_K_M og 800; b base2 $S Q4_K_M o 0
b f16base $S f16 o 0; b f16o200 $S f16 o 200; b f16og200 $S f16 og 200
b pbase $S Q4_K_M o 0 --profile; b pog400 $S Q4_K_M og 400 --profile; b pf16o200 $S f16 o 200 --profile
echo "phi +$(( $(date +%s) - T0 )) s" >> $R/time.txt
for S in qwen2.5-0.5b llama-3.2-1b; do
b base $S Q4_K_M o 0; b og200 $S Q4_K_M og 200; b og400 $S Q4_K_M og 400; b f16base $S f16 o 0; b f16o200 $S f16 o 200
done
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
cat $R/summary.txt $R/time.txt
tar -C $OUT -czf $OUT/r.tgz r
