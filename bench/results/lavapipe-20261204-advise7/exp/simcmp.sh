#!/bin/bash
# usage: simcmp.sh TAG  (env passes WGF_SPIN_US etc.)
cd /work/main
export LP_NUM_THREADS=${LPT:-1} XDG_RUNTIME_DIR=/tmp XDG_CACHE_HOME=/tmp/xc
W=build-rel/wgfuse
for L in ${LS:-100}; do
G=$(( (300 + L - 1) / L )); [ $G -lt 3 ] && G=3
$W --quiet sim bench --workload cartpole --pop 1024 --hidden 16 --steps $L --strategy fused,chunked:10,chunked:50,per-step --evolve split --gens $G --runs 5 --json > /tmp/exp/m_$1_$L.json 2>/dev/null
read T M < <(python3 -c "
import json; d=json.load(open('/tmp/exp/m_$1_$L.json')); r=[x for x in d['results'] if x['strategy']=='fused'][0]; print(max(1,round(r['group_steps'])), max(1,round(r['longest_steps'])))")
$W --quiet advise --sim cartpole --pop 1024 --hidden 16 --steps $L --episode-steps $T --longest-steps $M --gens-per-submit $G --chunks 10,50 --json 2>/dev/null | tail -1 > /tmp/exp/p_$1_$L.json
python3 - $1 $L <<'PY'
import json,sys
t,L=sys.argv[1],sys.argv[2]
m=json.load(open(f'/tmp/exp/m_{t}_{L}.json')); p=json.loads(open(f'/tmp/exp/p_{t}_{L}.json').read())
pr={x['plan']:x['predicted_ms_per_generation'] for x in p['plans']}
out=[]
for r in m['results']:
    k=r['strategy']+'/split'; me=1e3/r['gen_per_s_noreadback']
    if k in pr: out.append(f"{r['strategy']}:{pr[k]:.2f}/{me:.2f}({100*(pr[k]/me-1):+.0f}%)")
print(t,'L'+L,' '.join(out))
PY
done
