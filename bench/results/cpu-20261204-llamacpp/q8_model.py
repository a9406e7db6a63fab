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
