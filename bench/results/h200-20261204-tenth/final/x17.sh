#!/usr/bin/env bash
# issue 14, tenth cut: the quantized table with the shaders' bounds clamps off (new default),
# A/B against --robust-shaders, more shapes, the dial's cpu-ref check
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; gunzip -c out/v/wg_x.gz > /tmp/b/wg; chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so XDG_CACHE_HOME=/tmp/xc
R=$OUT/r; mkdir -p $R; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
/tmp/b/wg --version > $R/version.txt 2>&1
C=$(sed -n 's/^commit: \([0-9a-f]\{7\}\).*/\1/p' $R/version.txt | head -1)
WGFUSE=/tmp/b/wg WGF_GIT_COMMIT=$C bash bench/h200_quant.sh $R/quant > $R/quant_stdout.txt 2>&1
echo "quant +$(( $(date +%s) - T0 )) s" >> $R/time.txt
b() { local tag=$1 S=$2 W=$3; shift 3
  timeout 120 /tmp/b/wg "$@" llm bench --shape $S --plan roles --weights $W -n 128 --prompt-tokens 16 --runs 3 --json > $R/${tag}_${W}_$S.json 2> $R/${tag}_${W}_$S.err; }
S=phi-3-mini
for r in 1 2; do b ab${r}_trusted $S Q4_K_M; b ab${r}_robust $S Q4_K_M --robust-shaders; b ab${r}_trusted $S f16; b ab${r}_robust $S f16 --robust-shaders; done
for S in llama-3.2-1b qwen2.5-1.5b qwen2.5-0.5b; do b s_trusted $S Q4_K_M; b s_robust $S Q4_K_M --robust-shaders; b s_trusted $S f16; b s_robust $S f16 --robust-shaders; done
echo "ab +$(( $(date +%s) - T0 )) s" >> $R/time.txt
timeout 200 /tmp/b/wg llm bench --shape phi-3-mini --plan all --weights Q4_K_M -n 8 --runs 1 --json > $R/dial_phi_q4km.json 2> $R/dial_phi_q4km.err
echo "end +$(( $(date +%s) - T0 )) s" >> $R/time.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_after.txt 2>&1
python3 - $R > $R/summary.txt <<'PY'
import json,sys,os,glob
R=sys.argv[1]
for f in sorted(glob.glob(R+'/*.json'))+[R+'/quant/results.jsonl']:
    try:
        for line in open(f).read().strip().splitlines():
            d=json.loads(line)
            if 'plans' in d:
                for p in d['plans']: print('dial', p.get('plan'), p.get('decode_tok_s_median'), p.get('check_err'), p.get('argmax_agree'), p.get('skipped','')[:60])
                continue
            r=d.get('result',d)
            print(os.path.basename(f)[:-5] if not f.endswith('jsonl') else 'quant:'+d.get('step',''), r.get('decode_tok_s_median'), r.get('ids_hash'), r.get('shader_clamps'), r.get('weight_bytes_per_token'))
    except Exception as e: print(os.path.basename(f), 'ERR', e)
PY
cat $R/summary.txt $R/time.txt; tail -3 $R/quant/status.txt
tar -C $OUT -czf $OUT/r.tgz r
