#!/usr/bin/env bash
# issue 14 experiment: K-quant slices (16 lanes per super-block) vs the committed item kernel
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; gunzip -c out/v/wg_h.gz > /tmp/b/wg; chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so
R=$OUT/r; mkdir -p $R; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
/tmp/b/wg --version > $R/version.txt 2>&1
b() { # tag shape weights kdir env... [-- extra]
  local tag=$1 S=$2 W=$3 kd=$4; shift 4
  local ex=""; local envs=()
  while [ $# -gt 0 ]; do if [ "$1" = "--" ]; then shift; ex="$*"; break; fi; envs+=("$1"); shift; done
  local k=""; [ "$kd" = "-" ] || k="$PWD/out/xk/$kd"
  env "${envs[@]}" WGF_KERNEL_DIR=$k XDG_CACHE_HOME=/tmp/xc_$tag timeout 100 /tmp/b/wg llm bench --shape $S --plan roles --weights $W -n 128 --prompt-tokens 16 --runs 3 --json $ex > $R/${tag}_$S.json 2> $R/${tag}_$S.err
}
export WGF_XK=1
bk() { local tag=$1 S=$2 W=$3 kd=$4; shift 4; local k=""; [ "$kd" = "-" ] || k="$PWD/out/xk2/$kd"
  WGF_KERNEL_DIR=$k XDG_CACHE_HOME=/tmp/xc_$tag timeout 100 /tmp/b/wg llm bench --shape $S --plan roles --weights $W -n 128 --prompt-tokens 16 --runs 3 --json "$@" > $R/${tag}_$S.json 2> $R/${tag}_$S.err; }
S=phi-3-mini
bk f16 $S f16 -
bk head $S Q4_K_M head
bk M $S Q4_K_M M --profile
bk F $S Q4_K_M F
bk MN $S Q4_K_M MN
bk L $S Q4_K_M L
bk f16_2 $S f16 -
bk head_2 $S Q4_K_M head --profile
bk M_2 $S Q4_K_M M
bk F_2 $S Q4_K_M F
echo "phi +$(( $(date +%s) - T0 )) s" >> $R/time.txt
for W in Q4_0 Q8_0; do bk head_$W $S $W head; bk L_$W $S $W L; bk M_$W $S $W M; done
S=qwen2.5-0.5b
bk head $S Q4_K_M head; bk M $S Q4_K_M M; bk L $S Q4_K_M L; bk f16 $S f16 -
S=llama-3.2-1b
bk head $S Q4_K_M head; bk M $S Q4_K_M M; bk L $S Q4_K_M L; bk f16 $S f16 -
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
