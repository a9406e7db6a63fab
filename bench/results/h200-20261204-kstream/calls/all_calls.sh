#!/usr/bin/env bash
# issue 14, eighth cut: the six experiment calls of 2026-12-04 as one script (`bash calls.sh N`).
# Each call ran the preamble, its body (callN) and the epilogue, with the binary and kernel
# directories of its day (README.md); calls 3 and 4 printed no ids hashes.
# issue 14 experiment: K-quant slices (16 lanes per super-block) vs the committed item kernel
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; gunzip -c out/v/wg_k1.gz > /tmp/b/wg; chmod +x /tmp/b/wg
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

call1() {
for S in phi-3-mini qwen2.5-0.5b; do
  b f16 $S f16 - X=1
  b base $S Q4_K_M base X=1 -- --profile
  b k1 $S Q4_K_M - X=1 -- --profile
  b k1t32 $S Q4_K_M - WGF_QTPR=32
  b k1t16 $S Q4_K_M - WGF_QTPR=16
  echo "$S +$(( $(date +%s) - T0 )) s" >> $R/time.txt
done
S=phi-3-mini
b k1t128 $S Q4_K_M - WGF_QTPR=128
b k1t64r4 $S Q4_K_M - WGF_QTPR=64 WGF_QRPG=4
b k1t32r4 $S Q4_K_M - WGF_QTPR=32 WGF_QRPG=4
b k1t32b2 $S Q4_K_M - WGF_QTPR=32 WGF_QRPG_BIG=2
b k1t16r4 $S Q4_K_M - WGF_QTPR=16 WGF_QRPG=4
b f16_2 $S f16 - X=1
b base_2 $S Q4_K_M base X=1
b k1_2 $S Q4_K_M - X=1
}

call2() {
S=phi-3-mini
b f16 $S f16 - X=1
b base $S Q4_K_M base X=1 -- --profile
for v in k2 k3; do
  b $v $S Q4_K_M $v X=1 -- --profile
  b ${v}t32 $S Q4_K_M $v WGF_QTPR=32
  b ${v}t128 $S Q4_K_M $v WGF_QTPR=128
  b ${v}t64b2 $S Q4_K_M $v WGF_QTPR=64 WGF_QRPG_BIG=2
done
echo "phi +$(( $(date +%s) - T0 )) s" >> $R/time.txt
S=qwen2.5-0.5b
b f16 $S f16 - X=1
b base $S Q4_K_M base X=1
for v in k2 k3; do b $v $S Q4_K_M $v X=1 -- --profile; done
}

call3() {
S=phi-3-mini
for v in base nodot wbc noprol nodotnp wbcnp; do b $v $S Q4_K_M $v X=1 -- --profile; done
b f16 $S f16 base X=1 -- --profile
b f16np $S f16 noprol X=1 -- --profile
}

call4() {
S=phi-3-mini
b base $S Q4_K_M base X=1 -- --profile
b kst $S Q4_K_M kst X=1 -- --profile
b baseB2 $S Q4_K_M base WGF_QRPG_BIG=2 -- --profile
b kstB2 $S Q4_K_M kst WGF_QRPG_BIG=2 -- --profile
b baseG1 $S Q4_K_M base WGF_QRPG_GEMV=1 -- --profile
b baseB2G1 $S Q4_K_M base WGF_QRPG_BIG=2 WGF_QRPG_GEMV=1
b kstB2G1 $S Q4_K_M kst WGF_QRPG_BIG=2 WGF_QRPG_GEMV=1
b kstG4 $S Q4_K_M kst WGF_QRPG_GEMV=4 -- --profile
b f16 $S f16 base X=1
b kst_2 $S Q4_K_M kst X=1
b base_2 $S Q4_K_M base X=1
S=qwen2.5-0.5b
b base $S Q4_K_M base X=1
b kst $S Q4_K_M kst X=1
}

call5() {
S=phi-3-mini
b kst $S Q4_K_M kst X=1 -- --profile
b kstL2 $S Q4_K_M kst WGF_QRPG_LM=2 -- --profile
b kpf3 $S Q4_K_M kpf WGF_QRPG_MID=2 WGF_QRPG_GEMV=2 WGF_QRPG_LM=2 WGF_QRPG_BIG=2 WGF_QNIT=3 -- --profile
b kpf3B4 $S Q4_K_M kpf WGF_QRPG_MID=2 WGF_QRPG_GEMV=2 WGF_QRPG_LM=2 WGF_QRPG_BIG=4 WGF_QNIT=3 -- --profile
b kpf2 $S Q4_K_M kpf WGF_QRPG_MID=2 WGF_QRPG_GEMV=2 WGF_QRPG_LM=2 WGF_QRPG_BIG=2 WGF_QNIT=2
b kst3 $S Q4_K_M kst WGF_QRPG_MID=2 WGF_QRPG_GEMV=2 WGF_QRPG_LM=2 WGF_QRPG_BIG=2 WGF_QNIT=3 -- --profile
b base $S Q4_K_M base X=1
b f16 $S f16 base X=1
S=qwen2.5-0.5b
b kst $S Q4_K_M kst X=1
b base $S Q4_K_M base X=1
b kpf3 $S Q4_K_M kpf WGF_QRPG_MID=2 WGF_QRPG_GEMV=2 WGF_QRPG_LM=2 WGF_QRPG_BIG=2 WGF_QNIT=3
}

call6() {
S=phi-3-mini
b s1 $S Q4_K_M kst WGF_QRPG_MID=2 WGF_QRPG_BIG=2 WGF_QRPG_LM=2 WGF_QNIT=3 -- --profile
b s2 $S Q4_K_M kst WGF_QRPG_MID=2 WGF_QRPG_BIG=2 WGF_QRPG_LM=2 WGF_QNIT=6 -- --profile
b s3 $S Q4_K_M kst WGF_QRPG_MID=2 WGF_QRPG_BIG=4 WGF_QRPG_LM=2 WGF_QNIT=3 -- --profile
b s4 $S Q4_K_M kst WGF_QRPG_MID=2 WGF_QRPG_BIG=2 WGF_QRPG_LM=1 WGF_QNIT_LM=6 WGF_QNIT=3 -- --profile
b s5 $S Q4_K_M kst WGF_QRPG_MID=2 WGF_QRPG_BIG=2 WGF_QRPG_LM=2 WGF_QNIT=3 WGF_QRPG_GEMV=2 WGF_QNIT_GEMV=2 -- --profile
b s6 $S Q4_K_M kst WGF_QRPG_MID=4 WGF_QRPG_BIG=2 WGF_QRPG_LM=2 WGF_QNIT=3 -- --profile
b s7 $S Q4_K_M kst WGF_QRPG_MID=2 WGF_QRPG_BIG=2 WGF_QRPG_LM=2 WGF_QNIT=3 WGF_QRPG_GEMV=4 WGF_QNIT_GEMV=1 -- --profile
b s8 $S Q4_K_M kst WGF_QRPG_MID=2 WGF_QRPG_BIG=2 WGF_QRPG_LM=2 WGF_QNIT=3 WGF_QRPG_GEMV=1 WGF_QNIT_GEMV=2 -- --profile
b f16 $S f16 base X=1
b kst $S Q4_K_M kst X=1
}

call${1:?call number}
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
