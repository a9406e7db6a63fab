#!/usr/bin/env bash
# issue 14 experiment: Dawn's robustness / workgroup-init / div-mod polyfills off (device toggles)
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; gunzip -c out/v/wg_x.gz > /tmp/b/wg; chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so
R=$OUT/r; mkdir -p $R; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
/tmp/b/wg --version > $R/version.txt 2>&1
T1=disable_robustness
T2=disable_robustness,disable_workgroup_init,disable_polyfills_on_integer_div_and_mod
T3=disable_workgroup_init
b() { local tag=$1 S=$2 W=$3 t=$4; shift 4
  if [ "$t" = - ]; then unset WGF_DAWN_TOGGLES; else export WGF_DAWN_TOGGLES=$t; fi
  XDG_CACHE_HOME=/tmp/xc_$tag timeout 120 /tmp/b/wg llm bench --shape $S --plan roles --weights $W -n 128 --prompt-tokens 16 --runs 3 --json "$@" > $R/${tag}_${W}_$S.json 2> $R/${tag}_${W}_$S.err; }
S=phi-3-mini
for W in Q4_K_M f16; do b base $S $W -; b t1 $S $W $T1; b t2 $S $W $T2; b t3 $S $W $T3; b base2 $S $W -; b t2b $S $W $T2; done
b pt2 $S Q4_K_M $T2 --profile; b pt2 $S f16 $T2 --profile
echo "phi +$(( $(date +%s) - T0 )) s" >> $R/time.txt
for S in qwen2.5-0.5b llama-3.2-1b; do for W in Q4_K_M f16; do b base $S $W -; b t2 $S $W $T2; done; done
WGF_DAWN_TOGGLES=$T2 XDG_CACHE_HOME=/tmp/xc_dial timeout 200 /tmp/b/wg llm bench --shape phi-3-mini --plan all --weights Q4_K_M -n 8 --runs 1 --json > $R/dial_t2.txt 2> $R/dial_t2.err
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
