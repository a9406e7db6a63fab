#!/bin/bash
# llmcmp.sh TAG SHAPE W N RUNS P
cd /work/main
export LP_NUM_THREADS=${LPT:-1} XDG_RUNTIME_DIR=/tmp XDG_CACHE_HOME=/tmp/xc
W=build-rel/wgfuse; T=$1 S=$2 WT=$3 N=$4 R=$5 P=$6
$W --quiet advise --shape $S --weights $WT --ctx $((P + N + 1)) --json 2>/dev/null | tail -1 > /tmp/exp/lp_$T.json
$W llm bench --shape $S --plan all --weights $WT -n $N --prompt-tokens $P --runs $R --json 2>/dev/null | tail -1 > /tmp/exp/lm_$T.json
python3 /tmp/exp/cmp.py $T; exit 0
: <<'PY'
import json,sys,statistics
t=sys.argv[1]
p=json.loads(open(f'/tmp/exp/lp_{t}.json').read()); m=json.loads(open(f'/tmp/exp/lm_{t}.json').read())
pr={x['plan']:x for x in p['plans'] if not x.get('skipped')}
out=[]
for q in m['plans']:
    me=1e3/statistics.median(q['decode_tok_s']); b=1e3/max(q['decode_tok_s'])
    if q['plan'] in pr:
        pv=pr[q['plan']]['predicted_ms_per_token'] if 'predicted_ms_per_token' in pr[q['plan']] else None
        out.append(f"{q['plan']}:{pv:.2f}/{me:.2f}({100*(pv/me-1):+.0f}%) gpu{q.get('gpu_ms_per_token',0):.2f}")
print(t,' '.join(out), 'rec', p.get('recommended'))
PY
