#!/usr/bin/env bash
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b && for v in base A B; do gunzip -c out/v/wg_$v.gz > /tmp/b/wg_$v; chmod +x /tmp/b/wg_$v; done
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so XDG_CACHE_HOME=/tmp/xc
R=$OUT/q; mkdir -p $R
pack() { tar -C $OUT -czf $OUT/results.tgz q 2>/dev/null; }
for W in Q4_K_M Q8_0 f16; do
  for v in base A B; do
    [ "$W" = f16 ] && [ "$v" != base ] && continue
    timeout 60 /tmp/b/wg_$v llm bench --shape qwen2.5-0.5b --plan roles --weights $W -n 256 --prompt-tokens 32 --runs 3 --json > $R/bench_${W}_$v.json 2> $R/bench_${W}_$v.err
  done
done
pack
for v in base A B; do
  timeout 60 /tmp/b/wg_$v --quiet advise --shape qwen2.5-0.5b --weights Q4_K_M --ctx 289 --json > $R/kinds_Q4_K_M_$v.json 2> $R/kinds_Q4_K_M_$v.err
done
# second round of the benches (order reversed) for the spread
for v in B A base; do
  timeout 60 /tmp/b/wg_$v llm bench --shape qwen2.5-0.5b --plan roles --weights Q4_K_M -n 256 --prompt-tokens 32 --runs 3 --json > $R/bench2_Q4_K_M_$v.json 2> $R/bench2_Q4_K_M_$v.err
done
timeout 60 /tmp/b/wg_base llm bench --shape qwen2.5-0.5b --plan roles --weights f16 -n 256 --prompt-tokens 32 --runs 3 --json > $R/bench2_f16_base.json 2> $R/bench2_f16_base.err
pack
python3 - $R <<'PY'
import json,sys,os,glob
R=sys.argv[1]
for f in sorted(glob.glob(R+'/bench*.json')):
    try: d=json.loads(open(f).read().strip().splitlines()[-1]); print(os.path.basename(f), d['decode_tok_s_median'], d.get('ids_hash'), d['dispatches_per_token'])
    except Exception as e: print(os.path.basename(f), 'ERR', open(f[:-5]+'.err').read()[-300:])
for f in sorted(glob.glob(R+'/kinds*.json')):
    try:
        t=open(f).read(); d=json.loads(t[t.index('{'):])
        for p in d['plans']:
            if p['plan']=='roles': print(os.path.basename(f), '  '.join('%s:%.2f'%(k['label'],k['us']) for k in p['probe']['per_kind']))
    except Exception as e: print(f,'ERR',e)
PY
