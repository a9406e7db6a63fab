#!/usr/bin/env python3
"""llama.cpp itself as the oracle of `wgfuse llm quantize` and of wgfuse's block decoding.

llama.cpp's own shared libraries (the npm package @node-llama-cpp/linux-x64, llama.cpp release
v0.5.0, pinned by sha256 in scripts/setup.sh, in third_party/llamacpp/) are called through
ctypes; no llama.cpp code is part of wgfuse. For three small models written by
`wgfuse llm make-test-model` as F32 GGUF (Llama, n_gqa 2; Qwen2 with 224-wide rows, so
llama.cpp's fallbacks to 32-blocks apply, n_gqa 7, tied embedding; Phi-3 with fused qkv and
gate/up, 8 layers):

1. Files: for every recipe, llama_model_quantize (llama-quantize without an importance matrix)
   and `wgfuse llm quantize` of the same F32 file give the same tensors, shapes, types (the
   _S/_M/_L mixtures and fallbacks) and tensor bytes (ggml's reference quantizers), and the
   same general.file_type; also with --pure, from an F16 source, and from a Q4_K_M file
   re-quantized (a matrix already in its new type is copied, as llama-quantize copies it).
2. Decoding: each quantized type of those files (and F16, BF16), decoded by ggml's own
   dequantize_row_* (ggml_fp16_to_fp32_row, ggml_bf16_to_fp32_row) into an F32 GGUF, gives the same logits under wgfuse's cpu-ref as the quantized file itself
   (<= 1e-4 of the largest logit, issue 14's bound), and so does the GPU plan `roles` on two
   mixtures: wgfuse reads every block as ggml does.
3. Loading: llama.cpp loads the files wgfuse writes (F32 and quantized) and its logits after an
   8-token prompt agree with wgfuse's: within 2e-3 of the largest logit for F32 (llama.cpp
   keeps the KV cache in f16), within 5e-2 for quantized files (llama.cpp's CPU rounds the
   activations of quantized matrices to 8 bits; the exact check is 2.). wgfuse reads
   llama-quantize's own files to the same logits as its own.
4. From Hugging Face directories (the same three architectures, F32): llama.cpp runs the GGUF
   `wgfuse llm quantize --type F32` converts (Llama's q/k rows permuted, Phi-3's fused) to
   wgfuse's logits on the directory, within 2e-3; so do Llama-3's rope scaling and Phi-3's
   LongRoPE over 60 tokens of a 16-token original context (and without the scaling the same
   weights are told apart). Below the original length llama.cpp keeps LongRoPE's long factors
   when its context exceeds it, where transformers and wgfuse take the short ones: not compared.
5. Real tokenizers (Qwen3's and Llama-3's tokenizer.json, with tiny models of their vocabulary
   size): llama.cpp loads the Q8_0 GGUF wgfuse converts (its token list padded to the
   embedding rows, as convert_hf_to_gguf.py does) and tokenizes tests/llm/data's corpus to the
   ids wgfuse gives from the same file, with and without special-token parsing.

Without third_party/llamacpp (scripts/setup.sh installs it) the test says SKIP (exit 77).
"""
import array
import ctypes
import json
import math
import os
import shutil
import struct
import subprocess
import sys

SRC = os.environ['WGF_SOURCE_DIR']
CLI = os.environ['WGF_CLI']
LIBDIR = os.environ.get('WGF_LLAMACPP_DIR', os.path.join(SRC, 'third_party', 'llamacpp'))
TMP = os.path.join(os.environ['WGF_TEST_TMP'], 'llamacpp')
TOKENS = [1, 5, 9, 200, 33, 77, 120, 300]
fails = 0

# llama_ftype of each recipe (llama.h)
RECIPES = {'Q4_0': 2, 'Q4_1': 3, 'Q8_0': 7, 'Q5_0': 8, 'Q5_1': 9, 'Q2_K': 10, 'Q3_K_S': 11, 'Q3_K_M': 12,
           'Q3_K_L': 13, 'Q4_K_S': 14, 'Q4_K_M': 15, 'Q5_K_S': 16, 'Q5_K_M': 17, 'Q6_K': 18,
           'F32': 0, 'F16': 1, 'BF16': 32}
# real tokenizers (scripts/setup.sh's third_party/chat_models) and their models' embedding rows
REAL_TOKENIZERS = {'qwen3': ('qwen2', 151936), 'llama3': ('llama', 128256)}
MODELS = {
    'llama': 'dim=256,hidden=512,layers=4,heads=4,kv_heads=2,vocab=512,ctx=128',
    'qwen2': 'dim=224,hidden=768,layers=8,heads=7,kv_heads=1,vocab=512,ctx=128',
    'phi3': 'dim=256,hidden=512,layers=8,heads=4,kv_heads=4,vocab=512,ctx=128',
}
F32_TOL = 2e-3
Q_TOL = 5e-2
EXACT_TOL = 1e-4


def check(cond, what):
    global fails
    print(('ok   ' if cond else 'FAIL ') + what)
    fails += not cond
    return cond


# ---- llama.cpp through ctypes ---------------------------------------------------------------
class Blob(ctypes.Structure):
    """a params struct llama.cpp returns and takes by value: only its size class matters to the
    x86-64 calling convention (memory), so a larger blob carries it whole; the fields set below
    lead the struct in every release since 2024"""
    _fields_ = [('b', ctypes.c_ubyte * 1024)]


class Batch(ctypes.Structure):
    _fields_ = [('n_tokens', ctypes.c_int32), ('token', ctypes.c_void_p), ('embd', ctypes.c_void_p),
                ('pos', ctypes.c_void_p), ('n_seq_id', ctypes.c_void_p), ('seq_id', ctypes.c_void_p),
                ('logits', ctypes.c_void_p)]


LOGCB = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)


class LlamaCpp:
    def __init__(self, d):
        def lib(prefix):
            names = sorted(n for n in os.listdir(d) if n.startswith(prefix) and n.endswith('.so'))
            if not names:
                raise FileNotFoundError(os.path.join(d, prefix + '*.so'))
            return ctypes.CDLL(os.path.join(d, names[0]), mode=ctypes.RTLD_GLOBAL)
        self.base = lib('libggml-base')
        self.ggml = lib('libggml.')
        self.ll = lib('libllama.')
        b, g, ll = self.base, self.ggml, self.ll
        b.ggml_type_name.restype = ctypes.c_char_p
        b.ggml_blck_size.restype = ctypes.c_int64
        b.ggml_type_size.restype = ctypes.c_size_t
        g.ggml_backend_load_all_from_path.argtypes = [ctypes.c_char_p]
        g.ggml_backend_load_all_from_path(d.encode())
        self._quiet = LOGCB(lambda level, text, user: None)
        ll.llama_log_set.argtypes = [LOGCB, ctypes.c_void_p]
        ll.llama_log_set(self._quiet, None)
        ll.llama_backend_init()
        ll.llama_model_quantize_default_params.restype = Blob
        ll.llama_model_quantize.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(Blob)]
        ll.llama_model_quantize.restype = ctypes.c_uint32
        ll.llama_model_default_params.restype = Blob
        ll.llama_context_default_params.restype = Blob
        ll.llama_model_load_from_file.argtypes = [ctypes.c_char_p, Blob]
        ll.llama_model_load_from_file.restype = ctypes.c_void_p
        ll.llama_model_free.argtypes = [ctypes.c_void_p]
        ll.llama_init_from_model.argtypes = [ctypes.c_void_p, Blob]
        ll.llama_init_from_model.restype = ctypes.c_void_p
        ll.llama_free.argtypes = [ctypes.c_void_p]
        ll.llama_batch_get_one.argtypes = [ctypes.POINTER(ctypes.c_int32), ctypes.c_int32]
        ll.llama_batch_get_one.restype = Batch
        ll.llama_decode.argtypes = [ctypes.c_void_p, Batch]
        ll.llama_decode.restype = ctypes.c_int32
        ll.llama_get_logits_ith.argtypes = [ctypes.c_void_p, ctypes.c_int32]
        ll.llama_get_logits_ith.restype = ctypes.POINTER(ctypes.c_float)
        ll.llama_model_get_vocab.argtypes = [ctypes.c_void_p]
        ll.llama_model_get_vocab.restype = ctypes.c_void_p
        ll.llama_vocab_n_tokens.argtypes = [ctypes.c_void_p]
        ll.llama_vocab_n_tokens.restype = ctypes.c_int32

    def type_info(self, t):
        """(name, elements per block, bytes per block) of ggml type t"""
        return self.base.ggml_type_name(t).decode(), self.base.ggml_blck_size(t), self.base.ggml_type_size(t)

    def quantize(self, src, dst, ftype, pure=False, requantize=False):
        p = self.ll.llama_model_quantize_default_params()
        struct.pack_into('<ii', p.b, 0, 2, ftype)  # nthread, ftype
        p.b[16] = 1 if requantize else 0           # allow_requantize, after 4 int-sized fields
        p.b[19] = 1 if pure else 0                 # after allow_requantize, quantize_output_tensor, only_copy
        return self.ll.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(p))

    def dequantize(self, t, raw, n):
        """n values of type t decoded by ggml's own row decoder"""
        name = self.base.ggml_type_name(t).decode()
        out = (ctypes.c_float * n)()
        src = ctypes.create_string_buffer(bytes(raw), len(raw))
        fn = {'f16': 'ggml_fp16_to_fp32_row', 'bf16': 'ggml_bf16_to_fp32_row'}.get(name, 'dequantize_row_' + name)
        f = getattr(self.base, fn)
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        f.restype = None
        f(src, out, n)
        return array.array('f', out)

    def logits(self, path, tokens):
        """llama.cpp's logits at the last of `tokens` (no BOS added), or None where it does not load"""
        m = self.ll.llama_model_load_from_file(path.encode(), self.ll.llama_model_default_params())
        if not m:
            return None
        cp = self.ll.llama_context_default_params()
        struct.pack_into('<IIIIii', cp.b, 0, 64, 64, 64, 1, 2, 2)  # n_ctx, n_batch, n_ubatch, n_seq_max, threads
        c = self.ll.llama_init_from_model(m, cp)
        out = None
        if c:
            ids = (ctypes.c_int32 * len(tokens))(*tokens)
            if self.ll.llama_decode(c, self.ll.llama_batch_get_one(ids, len(tokens))) == 0:
                nv = self.ll.llama_vocab_n_tokens(self.ll.llama_model_get_vocab(m))
                lg = self.ll.llama_get_logits_ith(c, -1)
                out = array.array('f', (lg[i] for i in range(nv)))
            self.ll.llama_free(c)
        self.ll.llama_model_free(m)
        return out


# ---- GGUF (ggml's gguf.md) ------------------------------------------------------------------
SCALAR = {0: 'B', 1: 'b', 2: 'H', 3: 'h', 4: 'I', 5: 'i', 6: 'f', 7: '?', 10: 'Q', 11: 'q', 12: 'd'}


class Gguf:
    def __init__(self, path):
        self.buf = b = open(path, 'rb').read()
        self.o = 4
        if b[:4] != b'GGUF':
            raise ValueError(path + ': not GGUF')
        self.version, n_t, n_kv = self._u('I'), self._u('Q'), self._u('Q')
        kv0 = self.o
        self.kv = {}
        for _ in range(n_kv):
            k = self._s()
            self.kv[k] = self._val(self._u('I'))
        self.kv_raw, self.n_kv = b[kv0:self.o], n_kv
        self.align = self.kv.get('general.alignment', 32)
        self.tensors = []
        for _ in range(n_t):
            name = self._s()
            dims = [self._u('Q') for _ in range(self._u('I'))]
            self.tensors.append((name, dims, self._u('I'), self._u('Q')))
        self.data = (self.o + self.align - 1) // self.align * self.align

    def _u(self, f):
        v = struct.unpack_from('<' + f, self.buf, self.o)[0]
        self.o += struct.calcsize('<' + f)
        return v

    def _s(self):
        n = self._u('Q')
        self.o += n
        return self.buf[self.o - n:self.o].decode('utf-8', 'replace')

    def _val(self, t):
        if t in SCALAR:
            return self._u(SCALAR[t])
        if t == 8:
            return self._s()
        if t == 9:
            et, n = self._u('I'), self._u('Q')
            return [self._val(et) for _ in range(n)]
        raise ValueError('GGUF value type %d' % t)

    def raw(self, lc, name):
        for n, dims, t, off in self.tensors:
            if n == name:
                ne = 1
                for d in dims:
                    ne *= d
                _, be, bb = lc.type_info(t)
                return self.buf[self.data + off:self.data + off + ne // be * bb], ne, t
        raise KeyError(name)


def write_dequantized(lc, src, dst):
    """src with every tensor decoded by ggml into F32 (the metadata copied as it is)"""
    g = Gguf(src)
    infos, blobs, off = [], [], 0
    for name, dims, t, _ in g.tensors:
        raw, ne, _ = g.raw(lc, name)
        vals = lc.dequantize(t, raw, ne).tobytes() if t != 0 else raw
        nb = name.encode()
        infos.append(struct.pack('<Q', len(nb)) + nb + struct.pack('<I', len(dims)) +
                     b''.join(struct.pack('<Q', d) for d in dims) + struct.pack('<IQ', 0, off))
        pad = (-len(vals)) % g.align
        blobs.append(vals + b'\0' * pad)
        off += len(vals) + pad
    head = b'GGUF' + struct.pack('<IQQ', g.version, len(g.tensors), g.n_kv) + g.kv_raw + b''.join(infos)
    head += b'\0' * ((-len(head)) % g.align)
    with open(dst, 'wb') as f:
        f.write(head + b''.join(blobs))


def same_file(lc, a, b):
    """'' when GGUF files a and b hold the same tensors, types, bytes and file type, else why not"""
    ga, gb = Gguf(a), Gguf(b)
    why = []
    if ga.kv.get('general.file_type') != gb.kv.get('general.file_type'):
        why.append('general.file_type %s vs %s' % (ga.kv.get('general.file_type'), gb.kv.get('general.file_type')))
    ta = {n: (d, t) for n, d, t, _ in ga.tensors}
    tb = {n: (d, t) for n, d, t, _ in gb.tensors}
    if set(ta) != set(tb):
        why.append('tensor names differ: %s' % sorted(set(ta) ^ set(tb))[:4])
    for n in sorted(set(ta) & set(tb)):
        if ta[n] != tb[n]:
            why.append('%s: %s %s vs %s %s' % (n, ta[n][0], lc.type_info(ta[n][1])[0], tb[n][0], lc.type_info(tb[n][1])[0]))
        elif ga.raw(lc, n)[0] != gb.raw(lc, n)[0]:
            why.append('%s (%s): bytes differ' % (n, lc.type_info(ta[n][1])[0]))
    return '; '.join(why[:4]) + (' (+%d more)' % (len(why) - 4) if len(why) > 4 else '')


# ---- wgfuse ---------------------------------------------------------------------------------
def wgfuse(*args):
    r = subprocess.run([CLI] + list(args), capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        print('  wgfuse %s: exit %d: %s' % (' '.join(args), r.returncode, r.stderr.strip()[-500:]))
    return r.returncode == 0


def wg_logits(path, *extra, tokens=None):
    """wgfuse's logits at the last of `tokens` (TOKENS), or None"""
    out = os.path.join(TMP, 'logits.npy')
    ids = ','.join(map(str, tokens or TOKENS))
    if not wgfuse('run', '-m', path, '--tokens', ids, '-n', '0', '--logits-out', out, *extra):
        return None
    b = open(out, 'rb').read()
    hl = struct.unpack_from('<H', b, 8)[0]
    a = array.array('f')
    a.frombytes(b[10 + hl:])
    return a


def rel_diff(a, b):
    """max |a - b| over the largest |b|: inf when either is missing or the lengths differ"""
    if a is None or b is None or len(b) == 0 or len(a) < len(b):
        return float('inf')
    a = a[len(a) - len(b):]
    if not all(math.isfinite(v) for v in a) or not all(math.isfinite(v) for v in b):
        return float('inf')  # max() would skip a NaN
    return max(abs(x - y) for x, y in zip(a, b)) / max(max(abs(y) for y in b), 1e-30)


def real_tokenizers(lc):
    corpus = open(os.path.join(SRC, 'tests', 'llm', 'data', 'tokenizer_corpus.txt'), encoding='utf-8').read()
    ll = lc.ll
    ll.llama_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_int32),
                                  ctypes.c_int32, ctypes.c_bool, ctypes.c_bool]
    ll.llama_tokenize.restype = ctypes.c_int32
    for name, (arch, rows) in REAL_TOKENIZERS.items():
        tj = os.path.join(SRC, 'third_party', 'chat_models', name, 'tokenizer.json')
        if not check(os.path.exists(tj), '%s: tokenizer.json present (scripts/setup.sh)' % name):
            continue
        hf, gg = os.path.join(TMP, name + '_hf'), os.path.join(TMP, name + '_q8.gguf')
        ok = wgfuse('llm', 'make-test-model', '--arch', arch, '--no-tokenizer', '--format', 'hf', '--dtype', 'f16', '-o', hf,
                    '--dims', 'dim=64,hidden=128,layers=1,heads=2,kv_heads=1,vocab=%d,ctx=128' % rows)
        if ok:
            for f in ('tokenizer.json', 'tokenizer_config.json'):
                open(os.path.join(hf, f), 'wb').write(open(os.path.join(os.path.dirname(tj), f), 'rb').read())
            ok = wgfuse('llm', 'quantize', hf, gg, '--type', 'Q8_0')
        m = ll.llama_model_load_from_file(gg.encode(), ll.llama_model_default_params()) if ok else None
        if not check(bool(m), '%s: llama.cpp loads the GGUF wgfuse converts (one token per each of the %d embedding rows)' % (name, rows)):
            continue
        vocab = ll.llama_model_get_vocab(m)
        for special in (False, True):
            text = corpus
            if special and name == 'qwen3':
                # llama.cpp turns an end-of-generation-looking NORMAL token ("</s>" is one in
                # Qwen3's vocabulary) into a control token at load; the tokenizer.json and wgfuse
                # keep it normal, so with special parsing the text "</s>" splits differently
                text = text.replace('</s>', '')
            b = text.encode()
            buf = (ctypes.c_int32 * (len(b) + 16))()
            n = ll.llama_tokenize(vocab, b, len(b), buf, len(b) + 16, False, special)
            theirs = list(buf[:max(n, 0)])
            r = subprocess.run([CLI, 'tokenize', '-m', gg, '-p', text, '--no-bos'] + (['--parse-special'] if special else []),
                               capture_output=True, text=True, timeout=900)
            ours = [int(x) for x in r.stdout.strip().strip('[]').split(',') if x.strip()] if r.returncode == 0 else None
            at = next((i for i, (x, y) in enumerate(zip(ours or [], theirs)) if x != y), None)
            check(n > 0 and ours == theirs, '%s: the corpus (%d bytes) tokenizes alike%s: %d ids%s' %
                  (name, len(b), ' with special tokens' if special else '', len(theirs),
                   '' if ours == theirs else ' (wgfuse %s, first difference at %s)' % (None if ours is None else len(ours), at)))
        ll.llama_model_free(m)


def rope_scaling(lc):
    """Llama-3's rope scaling (rope_freqs.weight) and Phi-3's LongRoPE (rope_factors_long/short),
    from HF configs whose original context is 16 tokens, so that 60 tokens reach the scaled
    frequencies: llama.cpp on the converted F32 GGUF against wgfuse on the directory"""
    toks = [(7 * i + 3) % 500 for i in range(60)]
    cases = {
        'llama': {'rope_scaling': {'rope_type': 'llama3', 'factor': 8.0, 'low_freq_factor': 1.0, 'high_freq_factor': 4.0,
                                   'original_max_position_embeddings': 16}},
        'phi3': {'rope_scaling': {'type': 'longrope', 'long_factor': [1.0 + 0.5 * i for i in range(32)],
                                  'short_factor': [1.0 + 0.05 * i for i in range(32)]},
                 'original_max_position_embeddings': 16},
    }
    for arch, extra in cases.items():
        hf, plain, conv = (os.path.join(TMP, arch + s) for s in ('_rope_hf', '_rope_plain', '_rope.gguf'))
        ok = wgfuse('llm', 'make-test-model', '--arch', arch, '--format', 'hf', '--dtype', 'f32', '-o', hf,
                    '--dims', 'dim=256,hidden=512,layers=2,heads=4,kv_heads=%d,vocab=512,ctx=256' % (4 if arch == 'phi3' else 2))
        if ok:
            cfg = json.load(open(os.path.join(hf, 'config.json')))
            cfg.update(extra)
            json.dump(cfg, open(os.path.join(hf, 'config.json'), 'w'))
            ok = wgfuse('llm', 'quantize', hf, conv, '--type', 'F32')
        theirs = lc.logits(conv, toks) if ok else None
        d = rel_diff(wg_logits(hf, tokens=toks), theirs)
        check(d <= F32_TOL, '%s %s, 60 tokens: llama.cpp on the converted GGUF = wgfuse on the directory within %.0e (%.2e)' %
              (arch, 'llama3 rope scaling' if arch == 'llama' else 'LongRoPE', F32_TOL, d))
        # control: the same weights without the scaling are told apart
        if ok:
            shutil.rmtree(plain, ignore_errors=True)
            shutil.copytree(hf, plain)
            cfg.pop('rope_scaling')
            json.dump(cfg, open(os.path.join(plain, 'config.json'), 'w'))
        d = rel_diff(wg_logits(plain, tokens=toks), theirs) if ok else float('inf')
        check(math.isfinite(d) and d > 5 * F32_TOL, '%s control: without the scaling the logits are %.2e away' % (arch, d))


def main():
    try:
        lc = LlamaCpp(LIBDIR)
    except OSError as e:  # absent, or not loadable on this machine
        print('SKIP: llama.cpp from npm is not in %s (scripts/setup.sh installs it): %s' % (LIBDIR, e))
        return 77
    os.makedirs(TMP, exist_ok=True)
    covered = set()
    for arch, dims in MODELS.items():
        f32 = os.path.join(TMP, arch + '_f32.gguf')
        if not check(wgfuse('llm', 'make-test-model', '--arch', arch, '--dims', dims, '--format', 'gguf',
                            '--dtype', 'f32', '-o', f32), '%s: the F32 source written' % arch):
            continue
        ref = wg_logits(f32)
        d = rel_diff(ref, lc.logits(f32, TOKENS))
        check(d <= F32_TOL, '%s F32: llama.cpp loads wgfuse\'s file, logits within %.0e (%.2e)' % (arch, F32_TOL, d))
        # 4. an HF directory converted
        hf, conv = os.path.join(TMP, arch + '_hf'), os.path.join(TMP, arch + '_hf.gguf')
        ok = wgfuse('llm', 'make-test-model', '--arch', arch, '--dims', dims, '--format', 'hf', '--dtype', 'f32', '-o', hf) and \
            wgfuse('llm', 'quantize', hf, conv, '--type', 'F32')
        d = rel_diff(wg_logits(hf), lc.logits(conv, TOKENS)) if ok else float('inf')
        check(d <= F32_TOL, '%s HF -> GGUF F32: llama.cpp\'s logits = wgfuse\'s on the directory within %.0e (%.2e)' %
              (arch, F32_TOL, d))
        # 1. the same file from both quantizers
        for recipe, ftype in RECIPES.items():
            ours, theirs = os.path.join(TMP, 'wg.gguf'), os.path.join(TMP, 'lc.gguf')
            for f in (ours, theirs):  # no earlier recipe's file can stand in
                if os.path.exists(f):
                    os.remove(f)
            ok = wgfuse('llm', 'quantize', f32, ours, '--type', recipe) and lc.quantize(f32, theirs, ftype) == 0
            why = same_file(lc, theirs, ours) if ok else 'a quantizer failed'
            check(not why, '%s %s: llama-quantize and wgfuse write the same types and bytes%s' %
                  (arch, recipe, ': ' + why if why else ''))
            if not ok:
                continue
            # 2. wgfuse's decoding against ggml's, per type met
            types = {t for _, _, t, _ in Gguf(ours).tensors} - {0}
            if types - covered or recipe in ('Q4_K_M', 'Q3_K_M'):
                covered |= types
                deq = os.path.join(TMP, 'deq.gguf')
                write_dequantized(lc, ours, deq)
                exact = wg_logits(deq)
                names = ', '.join(sorted(lc.type_info(t)[0] for t in types))
                d = rel_diff(wg_logits(ours), exact)
                check(d <= EXACT_TOL, '%s %s (%s): cpu-ref on the blocks = cpu-ref on ggml\'s decoding (%.2e)' %
                      (arch, recipe, names, d))
                if arch == 'llama' and recipe in ('Q4_K_M', 'Q3_K_M'):
                    d = rel_diff(wg_logits(ours, '--backend', 'gpu', '--plan', 'roles'), exact)
                    check(d <= EXACT_TOL, '%s %s: GPU roles on the blocks = cpu-ref on ggml\'s decoding (%.2e)' %
                          (arch, recipe, d))
            # 3. llama.cpp runs wgfuse's file; wgfuse reads llama-quantize's
            if recipe in ('Q8_0', 'Q4_0', 'Q4_K_M', 'Q2_K'):
                mine = wg_logits(ours)
                d = rel_diff(mine, lc.logits(ours, TOKENS))
                check(d <= Q_TOL, '%s %s: llama.cpp loads wgfuse\'s file, logits within %.0e (%.2e)' % (arch, recipe, Q_TOL, d))
                d = rel_diff(wg_logits(theirs), mine)
                check(d == 0.0, '%s %s: wgfuse reads llama-quantize\'s file to the same logits (%.2e)' % (arch, recipe, d))
        # --pure, and an F16 source (llama-quantize converts it to f32 first, as wgfuse does)
        ours, theirs = os.path.join(TMP, 'wg.gguf'), os.path.join(TMP, 'lc.gguf')
        ok = wgfuse('llm', 'quantize', f32, ours, '--type', 'Q4_K_M', '--pure') and lc.quantize(f32, theirs, 15, pure=True) == 0
        why = same_file(lc, theirs, ours) if ok else 'a quantizer failed'
        check(not why, '%s Q4_K_M --pure: the same file%s' % (arch, ': ' + why if why else ''))
        f16 = os.path.join(TMP, arch + '_f16.gguf')
        ok = wgfuse('llm', 'make-test-model', '--arch', arch, '--dims', dims, '--format', 'gguf', '--dtype', 'f16',
                    '-o', f16) and wgfuse('llm', 'quantize', f16, ours, '--type', 'Q5_K_M') and lc.quantize(f16, theirs, 17) == 0
        why = same_file(lc, theirs, ours) if ok else 'a step failed'
        check(not why, '%s Q5_K_M from an F16 source: the same file%s' % (arch, ': ' + why if why else ''))
        # a quantized source re-quantized (llama-quantize --allow-requantize): a matrix whose type
        # does not change is copied, the others decoded and quantized again
        src = os.path.join(TMP, arch + '_q4km.gguf')
        ok = lc.quantize(f32, src, RECIPES['Q4_K_M']) == 0
        for recipe in ('Q4_K_M', 'Q3_K_M', 'Q6_K', 'Q8_0'):
            ok2 = ok and wgfuse('llm', 'quantize', src, ours, '--type', recipe) and \
                lc.quantize(src, theirs, RECIPES[recipe], requantize=True) == 0
            why = same_file(lc, theirs, ours) if ok2 else 'a quantizer failed'
            check(not why, '%s Q4_K_M re-quantized to %s: the same file%s' % (arch, recipe, ': ' + why if why else ''))
    real_tokenizers(lc)
    rope_scaling(lc)
    names = sorted(lc.type_info(t)[0] for t in covered)
    check(len(covered) == 12, 'every block type, f16 and bf16 were decoded against ggml: %s' % ', '.join(names))
    # the tolerance tells outputs apart: the same model after a prompt whose last token differs
    d = rel_diff(wg_logits(os.path.join(TMP, 'llama_f32.gguf')), lc.logits(os.path.join(TMP, 'llama_f32.gguf'), TOKENS[:-1] + [301]))
    check(math.isfinite(d) and d > F32_TOL, 'control: another prompt\'s logits are not within the F32 tolerance (%.2e)' % d)
    print('%d failed' % fails)
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
