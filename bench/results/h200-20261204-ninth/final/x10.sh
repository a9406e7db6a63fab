#!/usr/bin/env bash
# issue 14, ninth cut: llama.cpp's fused-qkv rule (Phi-3 Q4_K_M qkv = Q5_K) and streamed Q5_K
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; for v in n r; do gunzip -c out/v/wg_$v.gz > /tmp/b/wg_$v; chmod +x /tmp/b/wg_$v; done
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so
R=$OUT/r; mkdir -p $R; T0=$(date +%s)
pack() { tar -C $OUT -czf $OUT/r.tgz r; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
for v in n r; do /tmp/b/wg_$v --version > $R/version_$v.txt 2>&1; done
WGFUSE=/tmp/b/wg_n WGF_GIT_COMMIT=9f2f995 bash bench/h200_quant.sh $R/quant > $R/quant_stdout.txt 2>&1
echo "quant +$(( $(date +%s) - T0 )) s" >> $R/time.txt; pack
b() { local v=$1 tag=$2 S=$3 W=$4; shift 4
  XDG_CACHE_HOME=/tmp/xc_$v timeout 100 /tmp/b/wg_$v llm bench --shape $S --plan roles --weights $W -n 128 --prompt-tokens 16 --runs 3 --json "$@" > $R/${tag}_${v}_${W}_$S.json 2> $R/${tag}_${v}_${W}_$S.err; }
S=phi-3-mini
b n ab $S f16; b n ab $S Q4_K_M; b r ab $S Q4_K_M; b n ab $S Q5_K_M; b r ab $S Q5_K_M
b n ab2 $S Q4_K_M; b r ab2 $S Q4_K_M; b n ab2 $S f16; b n prof $S Q4_K_M --profile; b r prof $S Q4_K_M --profile
echo "ab +$(( $(date +%s) - T0 )) s" >> $R/time.txt; pack
timeout 240 /tmp/b/wg_n llm bench --shape phi-3-mini --plan all --weights Q4_K_M -n 8 --prompt-tokens 4 --runs 1 --json > $R/dial_phi_q4km.json 2> $R/dial_phi_q4km.err
echo "dial +$(( $(date +%s) - T0 )) s" >> $R/time.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_after.txt 2>&1
python3 - $R > $R/summary.txt <<'PY'
import json,sys,os,glob
R=sys.argv[1]
for f in sorted(glob.glob(R+'/*.json'))+sorted(glob.glob(R+'/quant/results.jsonl')):
    for line in open(f).read().strip().splitlines():
        try:
            d=json.loads(line)
            p=d.get('profile_us_per_token')
            ps=' '.join('%s:%.2f'%(k.replace('_sg',''),v[0]/max(v[1],1)) for k,v in sorted(p.items())) if p else ''
            print(os.path.basename(f)[:-5], d.get('step',''), d.get('weights'), d.get('activations'), d.get('decode_tok_s_median'), d.get('pct_bytes_floor'), d.get('ids_hash'), d.get('check_err'), ps)
        except Exception as e: print(os.path.basename(f), 'ERR', str(e)[:100])
PY
cat $R/summary.txt; cat $R/time.txt; grep -h "check\|within\|error" $R/dial_phi_q4km.err | tail -5
pack
