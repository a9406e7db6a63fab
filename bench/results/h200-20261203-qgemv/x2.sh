#!/usr/bin/env bash
# call 2 (2026-12-03 session 2): decode micro-benchmark; rows per group of the gemv roles; gemv activation-read ablation
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b && gunzip -c out/v/wg_x.gz > /tmp/b/wg && chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so
R=$OUT/r; mkdir -p $R
pack() { tar -C $OUT -czf $OUT/results.tgz r 2>/dev/null; }
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
for v in raw magic f16p fold f16f i2f dp4a dp4u emu; do
  for r in 1 2; do
    mkdir -p /tmp/xc_${v}_$r
    XDG_CACHE_HOME=/tmp/xc_${v}_$r WGF_KERNEL_DIR=$PWD/out/xk/$v timeout 60 /tmp/b/wg advise --calibrate --json > $R/micro_${v}_$r.json 2> $R/micro_${v}_$r.err
  done
done
echo "micro +$(( $(date +%s) - T0 )) s" >> $R/time.txt; pack
mkdir -p /tmp/xc
b() { # variant shape weights tag [extra]
  local kd="" rp=""
  case $1 in abl2) kd="$PWD/out/xk/e2e_abl2" ;; rpg*) rp=${1#rpg} ;; esac
  WGF_QRPG_SMALL=$rp WGF_KERNEL_DIR=$kd XDG_CACHE_HOME=/tmp/xc timeout 90 /tmp/b/wg llm bench --shape $2 --plan roles --weights $3 -n 128 --prompt-tokens 16 --runs 3 --json ${5:-} > $R/$4_$2_$3_$1.json 2> $R/$4_$2_$3_$1.err
}
for S in phi-3-mini qwen2.5-0.5b; do
  b base $S f16 r1 --profile
  for v in base rpg2 rpg4 abl2; do b $v $S Q4_K_M r1 --profile; done
  for W in Q4_0 Q8_0; do for v in base rpg2 rpg4; do b $v $S $W r1; done; done
  echo "$S r1 +$(( $(date +%s) - T0 )) s" >> $R/time.txt; pack
done
for S in phi-3-mini qwen2.5-0.5b; do
  for v in rpg4 rpg2 base; do b $v $S Q4_K_M r2; done; b base $S f16 r2
done
echo "r2 +$(( $(date +%s) - T0 )) s" >> $R/time.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_after.txt 2>&1
pack
python3 - $R <<'PY'
import json,sys,os,glob
R=sys.argv[1]
for f in sorted(glob.glob(R+'/micro_*.json')):
    try:
        d=json.load(open(f)); print(os.path.basename(f)[:-5], 'Tweights/s %.2f'%(d['device']['gflops']*2/1e3))
    except Exception as e: print(os.path.basename(f), 'ERR', open(f[:-5]+'.err').read()[-200:])
for f in sorted(glob.glob(R+'/r*.json')):
    try:
        d=json.loads(open(f).read().strip().splitlines()[-1])
        p=d.get('profile_us_per_token')
        ps=' '.join('%s:%.2f'%(k.replace('_sg',''),v[0]/max(v[1],1)) for k,v in sorted(p.items())) if p else ''
        print(os.path.basename(f)[:-5], d['decode_tok_s_median'], d.get('ids_hash'), ps)
    except Exception as e: print(os.path.basename(f), 'ERR', open(f[:-5]+'.err').read()[-300:])
PY
cat $R/time.txt
