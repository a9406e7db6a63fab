import json,sys,statistics
t=sys.argv[1]
p=json.loads(open(f'/tmp/exp/lp_{t}.json').read()); m=json.loads(open(f'/tmp/exp/lm_{t}.json').read())
pr={x['plan']:x for x in p['plans'] if not x.get('skipped')}
out=[]
for q in m['plans']:
    if q.get('skipped') or q['plan'] not in pr: continue
    me=1e3/statistics.median(q['decode_tok_s'])
    pv=pr[q['plan']]['predicted_ms_per_token']
    out.append(f"{q['plan']}:{pv:.2f}/{me:.2f}({100*(pv/me-1):+.0f}%) gpu{q.get('gpu_ms_per_token',0):.2f}")
print(t,' '.join(out), 'rec', p.get('recommended'))
