#!/usr/bin/env bash
# issue 14, eleventh cut, sixth call: what the norm roles' RMS statistic costs (nostat: attn_qkv,
# ffn_gate_up and lm_head keep the x * g copy and its barrier, and take 1 / rms = 1: wrong values),
# for f16 and Q4_K_M: the ceiling of computing the statistic once per token instead of per workgroup
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; gunzip -c out/v/wg_e.gz > /tmp/b/wg; chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so
R=$OUT/r; mkdir -p $R; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
/tmp/b/wg --version > $R/version.txt 2>&1
# b TAG SHAPE WEIGHTS KERNELS QCFG [args]: KERNELS a directory of out/xk or "" (the built-in kernels)
b() { local tag=$1 S=$2 W=$3 k=$4 q=$5; shift 5
  echo "$tag $S $W k=$k q=$q $*" >> $R/cfgs.txt
  local kd=""; [ -n "$k" ] && kd=$PWD/out/xk/$k
  WGF_KERNEL_DIR=$kd WGF_QCFG="$q" XDG_CACHE_HOME=/tmp/xc_${k:-base} timeout 120 /tmp/b/wg llm bench --shape $S --plan roles --weights $W -n 128 --prompt-tokens 16 --runs 3 --json "$@" > $R/${tag}_${W}_$S.json 2> $R/${tag}_${W}_$S.err; }
S=phi-3-mini
for r in 1 2; do
  b r${r}_base $S Q4_K_M "" ""; b r${r}_nostat $S Q4_K_M nostat ""; b r${r}_f16 $S f16 "" ""; b r${r}_f16nostat $S f16 nostat ""
done
echo "end +$(( $(date +%s) - T0 )) s" >> $R/time.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_after.txt 2>&1
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
cat $R/summary.txt $R/time.txt
tar -C $OUT -czf $OUT/r.tgz r
