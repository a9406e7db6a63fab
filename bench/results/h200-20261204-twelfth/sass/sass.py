#!/usr/bin/env python3
"""Find ELF images (the driver's compiled shader, if it keeps it as a cubin) in pipeline-cache
blobs written by VK_LAYER_WGF_stats (WGF_VKSTATS_CACHE) and disassemble them with nvdisasm."""
import glob, os, struct, subprocess, sys
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
for f in sorted(glob.glob(src + '/*.cache')):
    b = open(f, 'rb').read()
    i, k = b.find(b'\x7fELF'), 0
    if i < 0:
        print(os.path.basename(f), len(b), 'no ELF'); continue
    while i >= 0:
        if b[i + 4] == 2:  # ELF64
            shoff, = struct.unpack_from('<Q', b, i + 0x28)
            shentsize, shnum = struct.unpack_from('<HH', b, i + 0x3A)
            size = shoff + shentsize * shnum
        else:
            size = len(b) - i
        e = '%s/%s_%d.elf' % (dst, os.path.basename(f)[:-6], k)
        open(e, 'wb').write(b[i:i + size])
        out = e[:-4] + '.sass'
        for cmd in (['nvdisasm', '-c', e], ['cuobjdump', '-sass', e]):
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
                if r.returncode == 0 and r.stdout.strip():
                    open(out, 'w').write(r.stdout); break
                open(out + '.err', 'a').write(' '.join(cmd) + ': ' + r.stderr[-500:] + '\n')
            except Exception as ex:
                open(out + '.err', 'a').write(' '.join(cmd) + ': ' + str(ex) + '\n')
        print(os.path.basename(f), len(b), 'ELF at', i, 'size', size, os.path.exists(out))
        k += 1
        i = b.find(b'\x7fELF', i + 4)
