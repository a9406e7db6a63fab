#!/usr/bin/env python3
# One-layer Llama test model (dim 256), every matrix Q8_0 (--pure), one token: llama.cpp's logits
# (third_party/llamacpp, CPU variant argv[2] alone in a temporary directory) against wgfuse's exact
# and --activations q8 logits on the same file. Usage: q8_model.py WGFUSE_BINARY VARIANT
import os, sys, tempfile
root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../..'))
tmp = tempfile.mkdtemp()
os.environ.update(WGF_SOURCE_DIR=root, WGF_CLI=os.path.abspath(sys.argv[1]), WGF_TEST_TMP=tmp)
sys.path.insert(0, os.path.join(root, 'tests', 'llm'))
import test_llamacpp as t  # noqa: E402
lib = os.path.join(root, 'third_party', 'llamacpp')
only = os.path.join(tmp, 'lib')
os.makedirs(only)
for n in os.listdir(lib):
    if not n.startswith('libggml-cpu-') or n == 'libggml-cpu-%s.so' % sys.argv[2]:
        os.symlink(os.path.join(lib, n), os.path.join(only, n))
lc = t.LlamaCpp(only)
os.makedirs(t.TMP, exist_ok=True)
t.TOKENS = [5]
m, q = os.path.join(tmp, 'm1.gguf'), os.path.join(tmp, 'q.gguf')
t.wgfuse('llm', 'make-test-model', '--arch', 'llama', '--format', 'gguf', '--dtype', 'f32', '-o', m,
         '--dims', 'dim=256,hidden=512,layers=1,heads=4,kv_heads=2,vocab=512,ctx=128')
for ty in ('F32', 'Q8_0'):
    t.wgfuse('llm', 'quantize', m, q, '--type', ty, '--pure')
    L, E, Q = lc.logits(q, t.TOKENS), t.wg_logits(q), t.wg_logits(q, '--activations', 'q8')
    print('%s: llama.cpp vs exact %.2e, vs q8 %.2e; q8 vs exact %.2e' % (ty, t.rel_diff(E, L), t.rel_diff(Q, L), t.rel_diff(Q, E)))

# The lm_head alone, made an identity (rows 0..255 one-hot, Q8_0: every other matrix F32), so
# that logit i is the rounded input element i: llama.cpp's rounding against wgfuse's, element by
# element, and against emulations of per-32 rounding of wgfuse's exact input x.
import array, ctypes, struct  # noqa: E402
g = t.Gguf(m)
C, R = [d for n, d, ty, o in g.tensors if n == 'output.weight'][0]
buf = bytearray(g.buf)
off = [g.data + o for n, d, ty, o in g.tensors if n == 'output.weight'][0]
eye = array.array('f', [0.0] * (C * R))
for i in range(min(C, R)):
    eye[i * C + i] = 1.0
buf[off:off + 4 * C * R] = eye.tobytes()
ef, eq = os.path.join(tmp, 'eye_f32.gguf'), os.path.join(tmp, 'eye_q8.gguf')
open(ef, 'wb').write(bytes(buf))
# eye_q8: output.weight quantized by ggml, every other tensor as in eye_f32
lc.base.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                        ctypes.c_int64, ctypes.c_void_p]
g = t.Gguf(ef)
infos, blobs, o2 = [], [], 0
for name, dims, ty, _ in g.tensors:
    raw, ne, _ = g.raw(lc, name)
    if name == 'output.weight':
        out = ctypes.create_string_buffer(ne // 32 * 34)
        lc.base.ggml_quantize_chunk(8, ctypes.create_string_buffer(raw, len(raw)), out, 0, dims[1], dims[0], None)
        raw, ty = out.raw, 8
    nb = name.encode()
    infos.append(struct.pack('<Q', len(nb)) + nb + struct.pack('<I', len(dims)) + b''.join(struct.pack('<Q', d) for d in dims) +
                 struct.pack('<IQ', ty, o2))
    pad = (-len(raw)) % g.align
    blobs.append(raw + b'\0' * pad)
    o2 += len(raw) + pad
head = b'GGUF' + struct.pack('<IQQ', g.version, len(g.tensors), g.n_kv) + g.kv_raw + b''.join(infos)
open(eq, 'wb').write(head + b'\0' * ((-len(head)) % g.align) + b''.join(blobs))
x = list(t.wg_logits(ef)[:C])
L, Q = list(lc.logits(eq, t.TOKENS)[:C]), list(t.wg_logits(eq, '--activations', 'q8')[:C])
w1 = struct.unpack('<e', struct.pack('<e', 1 / 127))[0] * 127  # the one-hot row's decoded 1


def emu(xs, f16_scale):
    out = []
    for b in range(0, len(xs), 32):
        blk = xs[b:b + 32]
        d = max(abs(v) for v in blk) / 127
        ds = struct.unpack('<e', struct.pack('<e', d))[0] if f16_scale else d
        out += [w1 * ds * max(-127, min(127, round(v / d))) for v in blk]
    return out


e16 = emu(x, True)
near = sum(1 for a, b in zip(L, Q) if abs(a - b) < 1e-3)
print('identity lm_head: %d of %d rounded inputs within 1e-3 between llama.cpp and wgfuse q8; wgfuse q8 vs its '
      'f32-scale emulation %.1e; llama.cpp vs the f16-scale emulation of wgfuse\'s x: %d of %d within 1e-3' %
      (near, C, max(abs(a - b) for a, b in zip(Q, emu(x, False))), sum(1 for a, b in zip(L, e16) if abs(a - b) < 1e-3), C))
for i in sorted(range(C), key=lambda i: -abs(L[i] - Q[i]))[:C - near]:
    d = max(abs(v) for v in x[i // 32 * 32:i // 32 * 32 + 32]) / 127
    print('  element %d: x / d = %.4f (llama.cpp %.5f, wgfuse q8 %.5f: one step of d = %.5f apart)' % (i, x[i] / d, L[i], Q[i], d))
