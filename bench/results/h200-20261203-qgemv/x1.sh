#!/usr/bin/env bash
# call 1 (2026-12-03 session 2): decode micro-benchmark + fold/f16p/ablation A/B
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
/tmp/b/wg --version > $R/version.txt 2>&1
# micro: calib_fma replaced by a decode loop (gflops*2 = weights/s)
for v in raw magic f16p fold f16f i2f dp4a dp4u emu; do
  for r in 1 2; do
    XDG_CACHE_HOME=/tmp/xc_${v}_$r WGF_KERNEL_DIR=$PWD/out/xk/$v timeout 60 /tmp/b/wg advise --calibrate --json > $R/micro_${v}_$r.json 2> $R/micro_${v}_$r.err
  done
done
echo "micro +$(( $(date +%s) - T0 )) s" >> $R/time.txt; pack
b() { # variant shape weights tag [extra]
  local kd=""; [ "$1" = base ] || kd="$PWD/out/xk/e2e_$1"
  WGF_KERNEL_DIR=$kd XDG_CACHE_HOME=/tmp/xc timeout 90 /tmp/b/wg llm bench --shape $2 --plan roles --weights $3 -n 128 --prompt-tokens 16 --runs 3 --json ${5:-} > $R/$4_$2_$3_$1.json 2> $R/$4_$2_$3_$1.err
}
for S in phi-3-mini qwen2.5-0.5b; do
  b base $S f16 r1
  for v in base fold f16p abl; do b $v $S Q4_K_M r1 --profile; done
  for W in Q4_0 Q8_0; do for v in base fold; do b $v $S $W r1; done; done
  echo "$S r1 +$(( $(date +%s) - T0 )) s" >> $R/time.txt; pack
done
for S in phi-3-mini qwen2.5-0.5b; do
  for v in fold base; do b $v $S Q4_K_M r2; done; b base $S f16 r2
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
