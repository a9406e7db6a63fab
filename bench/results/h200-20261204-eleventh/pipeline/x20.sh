#!/usr/bin/env bash
# issue 14, eleventh cut: Q4_K / Q5_K half-item steps (the next step's words in flight) against
# the committed kernel; ablations (nodot: loads only, wbc: dots only); layouts under the new kernel
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; gunzip -c out/v/wg_e.gz > /tmp/b/wg; chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so
R=$OUT/r; mkdir -p $R; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
/tmp/b/wg --version > $R/version.txt 2>&1
# b TAG SHAPE WEIGHTS KERNELS QCFG [args]: KERNELS a directory of out/xk or "" (the built-in kernels)
b() { local tag=$1 S=$2 W=$3 k=$4 q=$5; shift 5
  echo "$tag $S $W k=$k q=$q $*" >> $R/cfgs.txt
  local kd=""; [ -n "$k" ] && kd=$PWD/out/xk/$k
  WGF_KERNEL_DIR=$kd WGF_QCFG="$q" XDG_CACHE_HOME=/tmp/xc_${k:-base} timeout 120 /tmp/b/wg llm bench --shape $S --plan roles --weights $W -n 128 --prompt-tokens 16 --runs 3 --json "$@" > $R/${tag}_${W}_$S.json 2> $R/${tag}_${W}_$S.err; }
S=phi-3-mini
b ab1_base $S Q4_K_M "" ""; b ab1_half $S Q4_K_M half ""; b ab1_f16 $S f16 "" ""
b ab2_base $S Q4_K_M "" ""; b ab2_half $S Q4_K_M half ""; b ab2_f16 $S f16 "" ""
echo "ab +$(( $(date +%s) - T0 )) s" >> $R/time.txt
b p0base $S Q4_K_M "" "" --profile; b p0 $S Q4_K_M half "" --profile
b pnodot $S Q4_K_M nodot "" --profile; b pwbc $S Q4_K_M wbc "" --profile
P=(""
"ffn_gate_up/q4_k=4:24:8,attn_qkv/q5_k=2:12:8,attn_output/q4_k=1:3:16,ffn_down/q4_k=2:8:32"
"ffn_gate_up/q4_k=2:6:16,attn_qkv/q5_k=4:12:16,attn_output/q4_k=2:6:16,ffn_down/q4_k=4:8:64"
"ffn_gate_up/q4_k=2:12:8,attn_qkv/q5_k=2:4:32,attn_output/q4_k=2:4:32,ffn_down/q4_k=2:4:64")
for i in 1 2 3; do b p$i $S Q4_K_M half "${P[$i]}" --profile; done
echo "sweep +$(( $(date +%s) - T0 )) s" >> $R/time.txt
cat > /tmp/pick.py <<'PY'
import json,sys
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
        if p[r] < best.get(k,(base.get(r,1e9)*0.97,None))[0]: best[k]=(p[r],v)
print(','.join('%s=%s'%(k,v[1]) for k,v in best.items()))
for k,v in best.items(): print('  %s base %.2f best %.2f (%s)'%(k,base.get(role(k),0),v[0],v[1]),file=sys.stderr)
PY
BP=$(python3 /tmp/pick.py $R $S 4 "${P[@]}" 2>> $R/pick.txt); echo "phi best: $BP" >> $R/pick.txt
b c1_half $S Q4_K_M half ""; b c1_comp $S Q4_K_M half "$BP"; b c1_f16 $S f16 "" ""
b c2_half $S Q4_K_M half ""; b c2_comp $S Q4_K_M half "$BP"
b q5_base $S Q5_K_M "" ""; b q5_half $S Q5_K_M half ""
S=llama-3.2-1b; b l_base $S Q4_K_M "" ""; b l_half $S Q4_K_M half ""; b l_f16 $S f16 "" ""
echo "ab2 +$(( $(date +%s) - T0 )) s" >> $R/time.txt
for W in Q4_K_M Q5_K_M; do WGF_KERNEL_DIR=$PWD/out/xk/half XDG_CACHE_HOME=/tmp/xc_half timeout 150 /tmp/b/wg llm bench --shape phi-3-mini --plan all --weights $W -n 8 --runs 1 --json > $R/dial_half_$W.json 2> $R/dial_half_$W.err; done
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
        print(os.path.basename(f)[:-5], d.get('decode_tok_s_median'), d.get('ids_hash'), ps)
    except Exception as e: print(os.path.basename(f), 'ERR', open(f[:-5]+'.err').read()[-300:].replace('\n',' '))
PY
cat $R/summary.txt $R/pick.txt $R/time.txt
tar -C $OUT -czf $OUT/r.tgz r
