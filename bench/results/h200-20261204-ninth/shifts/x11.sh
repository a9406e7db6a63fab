#!/usr/bin/env bash
# issue 14, ninth cut: Q4_K nibbles with two shifts (S, built in) against b176c7d's kernel (h9)
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; gunzip -c out/v/wg_s.gz > /tmp/b/wg; chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so
R=$OUT/r; mkdir -p $R; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
/tmp/b/wg --version > $R/version.txt 2>&1
bk() { local tag=$1 S=$2 W=$3 kd=$4; shift 4; local k=""; [ "$kd" = "-" ] || k="$PWD/out/xk3/$kd"
  WGF_KERNEL_DIR=$k XDG_CACHE_HOME=/tmp/xc_$tag timeout 100 /tmp/b/wg llm bench --shape $S --plan roles --weights $W -n 128 --prompt-tokens 16 --runs 3 --json "$@" > $R/${tag}_${W}_$S.json 2> $R/${tag}_${W}_$S.err; }
S=phi-3-mini
bk f16 $S f16 -; bk h9 $S Q4_K_M h9; bk S $S Q4_K_M -; bk h9_2 $S Q4_K_M h9; bk S_2 $S Q4_K_M -; bk f16_2 $S f16 -
bk Sprof $S Q4_K_M - --profile; bk h9prof $S Q4_K_M h9 --profile
for S in llama-3.2-1b qwen2.5-1.5b; do bk h9 $S Q4_K_M h9; bk S $S Q4_K_M -; bk f16 $S f16 -; done
S=phi-3-mini; bk h9_3 $S Q4_K_M h9; bk S_3 $S Q4_K_M -
echo "end +$(( $(date +%s) - T0 )) s" >> $R/time.txt
timeout 200 /tmp/b/wg llm bench --shape phi-3-mini --plan all --weights Q4_K_M -n 8 --prompt-tokens 4 --runs 1 --json > $R/dial_S_phi_q4km.json 2> $R/dial_S_phi_q4km.err
echo "dial +$(( $(date +%s) - T0 )) s" >> $R/time.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_after.txt 2>&1
python3 - $R > $R/summary.txt <<'PY'
import json,sys,os,glob
R=sys.argv[1]
for f in sorted(glob.glob(R+'/*.json')):
    try:
        d=json.loads(open(f).read().strip().splitlines()[-1])
        if 'plans' in d:
            for p in d['plans']: print(os.path.basename(f)[:-5], p.get('plan'), p.get('decode_tok_s_median'), p.get('check_err'), p.get('argmax_agree'))
            continue
        p=d.get('profile_us_per_token')
        ps=' '.join('%s:%.2f'%(k.replace('_sg',''),v[0]/max(v[1],1)) for k,v in sorted(p.items())) if p else ''
        print(os.path.basename(f)[:-5], d.get('decode_tok_s_median'), d.get('ids_hash'), ps)
    except Exception as e: print(os.path.basename(f), 'ERR', open(f[:-5]+'.err').read()[-300:].replace('\n',' '))
PY
cat $R/summary.txt; cat $R/time.txt
tar -C $OUT -czf $OUT/r.tgz r
