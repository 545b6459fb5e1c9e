"""Fairness of one diagnostic run two ways: by the order k6 began the keyed shoppers' first attempts, and by
the order those reached HAProxy (its request log, /tmp/haproxy-NAME.log, written by diag.sh). The inputs are
under /tmp (10-14 MB of log a run), not committed; the output is edge-order.out.   python3 edge-order.py NAME"""
import re,collections,glob,sys,calendar
name=sys.argv[1]
ans=glob.glob(f'/tmp/diag-{name}/steps/sale-*-step/answers.log')[0]
rows={}
for line in open(ans):
    m=re.search(r'msg="R (.*)"',line)
    if not m: continue
    f=m.group(1).split()
    rows[int(f[0])]=dict(i=int(f[0]),status=int(f[1]),started=int(f[3]))
first={}
for l in open(f'/tmp/haproxy-{name}.log'):
    m=re.search(r'\[(\d+)/Dec/2026:(\d+):(\d+):(\d+)\.(\d+)\] api \S+ (-?\d+)/.*?\{([^}]*)\} "POST',l)
    if not m or '-step-' not in m.group(7): continue
    d,h,mi,s,ms=map(int,m.groups()[:5]); t=calendar.timegm((2026,12,d,h,mi,s))*1000+ms + max(0,int(m.group(6)))
    n=int(m.group(7).rsplit('-',1)[1]); first[n]=min(first.get(n,1<<62), t)
keyed=[n for n in first if n in rows]
S=1000; share=len(keyed)/len(rows)
def fair(order):
    top=set(order[:int(1.5*S*share)])
    wins=[n for n in keyed if rows[n]['status'] in (201,202)]
    return sum(1 for n in wins if n in top)/len(wins), len(wins)
by_k6=sorted(keyed,key=lambda n: rows[n]['started'])
by_edge=sorted(keyed,key=lambda n: first[n])
print(name,'keyed shoppers',len(keyed),'share %.2f'%share)
print('  by k6 start: %.3f of %d keyed winners' % fair(by_k6))
print('  by HAProxy arrival: %.3f of %d keyed winners' % fair(by_edge))
lags = sorted(first[n] - rows[n]['started'] for n in keyed)
print('  k6 sent first attempts late by %d / %d / %d ms (p50 / p90 / max)'
      % (lags[len(lags) // 2], lags[int(len(lags) * 0.9)], lags[-1]))
