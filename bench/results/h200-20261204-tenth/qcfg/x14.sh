#!/usr/bin/env bash
# issue 14 experiment: q_cfg sweep per role (WGF_QCFG hook), profile per role, then A/B of the best
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; gunzip -c out/v/wg_x.gz > /tmp/b/wg; chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so XDG_CACHE_HOME=/tmp/xc
R=$OUT/r; mkdir -p $R; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
/tmp/b/wg --version > $R/version.txt 2>&1
b() { local tag=$1 S=$2 W=$3 q=$4; shift 4
  echo "$tag $S $W $q" >> $R/cfgs.txt
  WGF_QCFG="$q" timeout 120 /tmp/b/wg llm bench --shape $S --plan roles --weights $W -n 128 --prompt-tokens 16 --runs 3 --json "$@" > $R/${tag}_${W}_$S.json 2> $R/${tag}_${W}_$S.err; }
P=(""
"attn_qkv/q5_k=4:8:0,ffn_gate_up/q4_k=4:8:0,llm.output/q6_k=4:12:0,ffn_down/q4_k=4:8:0,ffn_down/q6_k=2:2:0,attn_output/q4_k=4:4:0"
"attn_qkv/q5_k=4:12:0,ffn_gate_up/q4_k=2:6:0,llm.output/q6_k=2:12:0,ffn_down/q4_k=2:4:0,ffn_down/q6_k=4:8:0,attn_output/q4_k=2:4:0"
"attn_qkv/q5_k=2:4:0,ffn_gate_up/q4_k=4:24:0,llm.output/q6_k=4:8:0,ffn_down/q4_k=2:2:0,ffn_down/q6_k=1:2:0,attn_output/q4_k=1:1:0"
"attn_qkv/q5_k=2:12:0,llm.output/q6_k=4:24:0,ffn_down/q4_k=1:2:0,ffn_down/q6_k=4:4:0,attn_output/q4_k=1:3:0"
"attn_qkv/q5_k=2:2:0,llm.output/q6_k=1:3:0,ffn_down/q4_k=4:16:0,ffn_down/q6_k=2:8:0,attn_output/q4_k=4:8:0")
Q=(""
"llm.output/q8_0=4:8:0,ffn_gate_up/q5_0=2:4:0,ffn_down/q6_k=1:2:0,ffn_down/q4_k=1:1:0,attn_output/q5_0=2:2:0"
"llm.output/q8_0=4:16:0,ffn_gate_up/q5_0=4:4:0,ffn_down/q6_k=2:2:0,ffn_down/q4_k=1:2:0,attn_output/q5_0=1:1:64"
"llm.output/q8_0=2:4:0,ffn_gate_up/q5_0=4:8:0,ffn_down/q6_k=1:4:0,ffn_down/q4_k=2:4:0"
"llm.output/q8_0=2:8:0,ffn_gate_up/q5_0=2:8:0"
"llm.output/q8_0=1:2:0")
for i in 0 1 2 3 4 5; do b p$i phi-3-mini Q4_K_M "${P[$i]}" --profile; done
for i in 0 1 2 3 4 5; do b p$i qwen2.5-0.5b Q4_K_M "${Q[$i]}" --profile; done
echo "sweep +$(( $(date +%s) - T0 )) s" >> $R/time.txt
cat > /tmp/pick.py <<'PY'
import json,sys,re
R,S,n=sys.argv[1],sys.argv[2],int(sys.argv[3]); vs=sys.argv[4:]
def prof(i):
    d=json.loads(open('%s/p%d_Q4_K_M_%s.json'%(R,i,S)).read().strip().splitlines()[-1])
    return {k.replace('_sg',''):v[0]/max(v[1],1) for k,v in d['profile_us_per_token'].items()}
def role(key):
    sub,ty=key.split('/')
    if sub=='llm.output': return 'lm_head_'+ty
    if sub in('ffn_down','attn_output'): return 'gemv_%s_%s'%(sub,ty)
    return '%s_%s'%(sub,ty)
base=prof(0); best={}
for i in range(1,n):
    p=prof(i)
    for e in filter(None,vs[i].split(',')):
        k,v=e.split('='); r=role(k)
        if r not in p: continue
        if p[r] < best.get(k,(base.get(r,1e9),None))[0]: best[k]=(p[r],v)
print(','.join('%s=%s'%(k,v[1]) for k,v in best.items()))
for k,v in best.items(): print('  %s base %.2f best %.2f (%s)'%(k,base.get(role(k),0),v[0],v[1]),file=sys.stderr)
PY
BP=$(python3 /tmp/pick.py $R phi-3-mini 6 "${P[@]}" 2>> $R/pick.txt); echo "phi best: $BP" >> $R/pick.txt
BQ=$(python3 /tmp/pick.py $R qwen2.5-0.5b 6 "${Q[@]}" 2>> $R/pick.txt); echo "qwen best: $BQ" >> $R/pick.txt
S=phi-3-mini
b a0 $S f16 ""; b a0 $S Q4_K_M ""; b a1 $S Q4_K_M "$BP"; b b0 $S Q4_K_M ""; b b1 $S Q4_K_M "$BP"; b b0 $S f16 ""
b pb $S Q4_K_M "$BP" --profile
S=qwen2.5-0.5b
b a0 $S f16 ""; b a0 $S Q4_K_M ""; b a1 $S Q4_K_M "$BQ"; b b0 $S Q4_K_M ""; b b1 $S Q4_K_M "$BQ"; b b0 $S f16 ""
b pb $S Q4_K_M "$BQ" --profile
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
cat $R/summary.txt $R/pick.txt $R/time.txt
tar -C $OUT -czf $OUT/r.tgz r
