#!/usr/bin/env python3
"""Join VK_LAYER_WGF_stats logs (bench/vkstats/wgf_vkstats.c): one line per compute pipeline,
its wgfuse label (Dawn's "Dawn_ComputePipeline_<label>" name; '?N' if it was never named) and
the driver's statistics as columns.

    bench/vkstats/join.py LOG...
"""
import re
import sys


def parse(path):
    """(pipelines in creation order as (label, spirv_bytes, {stat: value})), device line"""
    stats, names, device = {}, {}, ''
    with open(path) as f:
        for line in f:
            m = re.match(r'pipeline (\d+) handle=(\w+) module=(\w+) spirv_bytes=(\d+)(.*)', line)
            if m:
                kv = {}
                for part in m.group(5).split('|'):
                    if '=' in part:
                        k, v = part.strip().split('=', 1)
                        kv[k] = v
                stats[m.group(2)] = (int(m.group(1)), int(m.group(4)), kv)
                continue
            m = re.match(r'name pipeline handle=(\w+) (.*)', line)
            if m:
                names[m.group(1)] = m.group(2).split('Dawn_ComputePipeline_')[-1] if 'Dawn_ComputePipeline_' in m.group(2) else ''
                continue
            if line.startswith('device:'):
                device = line.strip()
    rows = []
    for h, (i, b, kv) in sorted(stats.items(), key=lambda t: t[1][0]):
        rows.append((names.get(h, '?%d' % i) or '(dawn)', b, kv))
    return rows, device


def main(argv):
    if len(argv) < 2:
        print('usage: join.py LOG...', file=sys.stderr)
        return 2
    for path in argv[1:]:
        try:
            rows, device = parse(path)
        except OSError as e:
            print('join.py: %s: %s' % (path, e.strerror), file=sys.stderr)
            return 1
        keys = sorted({k for _, _, kv in rows for k in kv})
        print('#', path, '|', device)
        print('pipeline', 'spirv_bytes', *[k.replace(' ', '_') for k in keys])
        for label, b, kv in rows:
            print(label, b, *[kv.get(k, '-') for k in keys])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
