#!/usr/bin/env python3
"""Mean KL divergence of next-token distributions, quantized vs f32 (issue 14), from
`wgfuse run --logits-out` files (float32 .npy, (positions, vocab)); standard library only."""
import array, ast, math, sys

def load(path):
    b = open(path, 'rb').read()
    hl = int.from_bytes(b[8:10], 'little')
    h = ast.literal_eval(b[10:10 + hl].decode())
    a = array.array('f'); a.frombytes(b[10 + hl:])
    n, v = h['shape']
    return [a[i * v:(i + 1) * v] for i in range(n)]

def logsoftmax(r):
    m = max(r); s = math.log(sum(math.exp(x - m) for x in r))
    return [x - m - s for x in r]

ref = [logsoftmax(r) for r in load(sys.argv[1])]
print("| weights | mean KL (nats) | 99th percentile KL | top-1 agreement |")
print("| --- | --- | --- | --- |")
for path in sys.argv[2:]:
    q = [logsoftmax(r) for r in load(path)]
    kls, agree = [], 0
    for lp, lq in zip(ref, q):
        kls.append(sum(math.exp(a) * (a - b) for a, b in zip(lp, lq)))
        agree += max(range(len(lp)), key=lp.__getitem__) == max(range(len(lq)), key=lq.__getitem__)
    kls.sort()
    name = path.rsplit('/', 1)[-1][:-4]
    print(f"| {name} | {sum(kls) / len(kls):.6f} | {kls[int(0.99 * (len(kls) - 1))]:.6f} | {100 * agree / len(kls):.1f}% |")
