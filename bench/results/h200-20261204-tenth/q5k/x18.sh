#!/usr/bin/env bash
# issue 14, tenth cut: Q5_K's fifth bits regrouped per item (wg_x) against 60ab355 (wg_a);
# the dial's cpu-ref check of Phi-3-mini Q4_K_M and Q5_K_M with the new layout
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; for v in a x; do gunzip -c out/v/wg_$v.gz > /tmp/b/wg_$v; chmod +x /tmp/b/wg_$v; done
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so
R=$OUT/r; mkdir -p $R; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
for v in a x; do /tmp/b/wg_$v --version > $R/version_$v.txt 2>&1; done
b() { local v=$1 tag=$2 S=$3 W=$4; shift 4
  XDG_CACHE_HOME=/tmp/xc_$v timeout 100 /tmp/b/wg_$v llm bench --shape $S --plan roles --weights $W -n 128 --prompt-tokens 16 --runs 3 --json "$@" > $R/${tag}_${v}_${W}_$S.json 2> $R/${tag}_${v}_${W}_$S.err; }
S=phi-3-mini
b x ab1 $S f16; b a ab1 $S Q4_K_M; b x ab1 $S Q4_K_M; b a ab2 $S Q4_K_M; b x ab2 $S Q4_K_M; b x ab2 $S f16
b a ab1 $S Q5_K_M; b x ab1 $S Q5_K_M; b x prof $S Q4_K_M --profile
S=llama-3.2-1b; b a ab1 $S Q5_K_M; b x ab1 $S Q5_K_M; b x ab1 $S f16
echo "ab +$(( $(date +%s) - T0 )) s" >> $R/time.txt
for W in Q4_K_M Q5_K_M; do XDG_CACHE_HOME=/tmp/xc_x timeout 150 /tmp/b/wg_x llm bench --shape phi-3-mini --plan all --weights $W -n 8 --runs 1 --json > $R/dial_x_$W.json 2> $R/dial_x_$W.err; done
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
        print(os.path.basename(f)[:-5], d.get('decode_tok_s_median'), d.get('ids_hash'), d.get('shader_clamps'), ps)
    except Exception as e: print(os.path.basename(f), 'ERR', open(f[:-5]+'.err').read()[-300:].replace('\n',' '))
PY
cat $R/summary.txt $R/time.txt
tar -C $OUT -czf $OUT/r.tgz r
