#!/usr/bin/env bash
# issue 14, twelfth cut, sixth call: the K-quant streamed dots accumulated by chains of fused
# multiply-adds (qfold_fma: 4 fmas where dot + dot + acc took 2 muls, 2 fmas, 2 adds); A/B
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; gunzip -c out/v/wg_x.gz > /tmp/b/wg; chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so
export VK_LAYER_PATH=$PWD/out/vkstats VK_INSTANCE_LAYERS=VK_LAYER_WGF_stats WGF_XLABELS=1
R=$OUT/r; mkdir -p $R; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
b() { local tag=$1 S=$2 W=$3 k=$4 q=$5; shift 5
  echo "$tag $S $W k=$k q=$q $*" >> $R/cfgs.txt
  local kd=""; [ -n "$k" ] && kd=$PWD/out/xk/$k
  WGF_VKSTATS_OUT=$R/vk_${tag}_$W.txt WGF_KERNEL_DIR=$kd WGF_QCFG="$q" timeout 150 /tmp/b/wg llm bench --shape $S --plan roles --weights $W -n 128 --prompt-tokens 16 --runs 3 --json "$@" > $R/${tag}_${W}_$S.json 2> $R/${tag}_${W}_$S.err; }
S=phi-3-mini
for r in 1 2; do
  b r${r}_base $S Q4_K_M "" ""; b r${r}_f16 $S f16 "" ""; b r${r}_fma $S Q4_K_M fma ""
done
b q5_base $S Q5_K_M "" ""; b q5_fma $S Q5_K_M fma ""
b l_base llama-3.2-1b Q4_K_M "" ""; b l_fma llama-3.2-1b Q4_K_M fma ""; b l_f16 llama-3.2-1b f16 "" ""
b p_base $S Q4_K_M "" "" --profile; b p_fma $S Q4_K_M fma "" --profile
for W in Q4_K_M Q5_K_M; do WGF_KERNEL_DIR=$PWD/out/xk/fma timeout 150 /tmp/b/wg llm bench --shape $S --plan all --weights $W -n 8 --runs 1 --json > $R/dial_fma_$W.json 2> $R/dial_fma_$W.err; done
echo "end +$(( $(date +%s) - T0 )) s" >> $R/time.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_after.txt 2>&1
python3 out/vkstats/join.py $R/vk_r1_*.txt | grep -E "^#|gate_up|qkv|gemv|lm_head" > $R/regs.txt
python3 - $R > $R/summary.txt <<'PY'
import json,sys,os,glob
R=sys.argv[1]
for f in sorted(glob.glob(R+'/*.json')):
    try:
        d=json.loads(open(f).read().strip().splitlines()[-1])
        if 'plans' in d:
            for p in d['plans']: print(os.path.basename(f)[:-5], p.get('plan'), p.get('decode_tok_s_median'), p.get('check_err'), p.get('argmax_agree'), p.get('skipped','')[:50])
            continue
        p=d.get('profile_us_per_token')
        ps=' '.join('%s:%.2f'%(k.replace('_sg',''),v[0]/max(v[1],1)) for k,v in sorted(p.items())) if p else ''
        print(os.path.basename(f)[:-5], d.get('decode_tok_s_median'), d.get('ids_hash'), ps)
    except Exception as e: print(os.path.basename(f), 'ERR', open(f[:-5]+'.err').read()[-300:].replace('\n',' '))
PY
cat $R/summary.txt $R/regs.txt $R/time.txt
tar -C $OUT -czf $OUT/r.tgz r
