#!/usr/bin/env python3
"""Write the seed corpora under fuzz/corpus/<target>/: small valid files made by the
wgfuse CLI (make-test-model) plus one reproducer per applicable RELIABILITY.md checklist
item, named item<NN>_<what>. Re-run after a format change:
    python3 fuzz/make_seeds.py build-rel/wgfuse
The files are committed; the fuzzers start from them and tests/reliability feeds each one
to the same entry points in the normal and sanitizer builds."""
import json, os, shutil, struct, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
CLI = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build-rel", "wgfuse")
U64 = 0xFFFFFFFFFFFFFFFF


def out(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---- GGUF ----------------------------------------------------------------------------------
def gstr(s):
    b = s if isinstance(s, bytes) else s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, typ, payload):
    return gstr(key) + struct.pack("<I", typ) + payload


def kv_u32(key, v): return kv(key, 4, struct.pack("<I", v))
def kv_i32(key, v): return kv(key, 5, struct.pack("<i", v))
def kv_s(key, v): return kv(key, 8, gstr(v))
def kv_arr_s(key, items): return kv(key, 9, struct.pack("<IQ", 8, len(items)) + b"".join(gstr(x) for x in items))
def kv_arr_i32(key, items): return kv(key, 9, struct.pack("<IQ", 5, len(items)) + b"".join(struct.pack("<i", x) for x in items))
def kv_arr_f32(key, items): return kv(key, 9, struct.pack("<IQ", 6, len(items)) + b"".join(struct.pack("<f", x) for x in items))


def tinfo(name, ne, typ, off):
    return gstr(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d & U64) for d in ne) + struct.pack("<IQ", typ, off & U64)


def gguf(kvs=(), tensors=(), data=b"", magic=b"GGUF", version=3, nt=None, nkv=None, align=32):
    h = magic + struct.pack("<I", version) + struct.pack("<QQ", len(tensors) if nt is None else nt, len(kvs) if nkv is None else nkv)
    h += b"".join(kvs) + b"".join(tensors)
    if tensors or data:
        h += b"\0" * ((-len(h)) % align)
    return h + data


T1 = [tinfo("a", [8], 0, 0)]
D1 = b"\0" * 32


def gguf_seeds():
    t = "gguf_parse"
    out(t, "valid_minimal", gguf([kv_s("general.architecture", "none")], T1, D1))
    out(t, "item01_bad_magic", gguf(magic=b"GGUX"))
    out(t, "item01_version0", gguf(version=0))
    out(t, "item01_version1", gguf(version=1))
    out(t, "item01_version4", gguf(version=4))
    out(t, "item01_byteswapped", b"GGUF" + struct.pack(">I", 3) + struct.pack(">QQ", 0, 0))
    out(t, "item02_n_tensors_max", gguf(nt=U64))
    out(t, "item02_n_kv_max", gguf(nkv=U64))
    out(t, "item03_key_len_max", gguf(nkv=1) + struct.pack("<Q", U64) + b"k")
    out(t, "item03_str_past_end", gguf(nkv=1) + gstr("k") + struct.pack("<IQ", 8, 1000) + b"abc")
    out(t, "item03_name_len_max", gguf(nt=1) + struct.pack("<Q", U64) + b"a")
    out(t, "item04_array_count_2p62", gguf([kv("arr", 9, struct.pack("<IQ", 4, 1 << 62))]))
    out(t, "item04_nested_array", gguf([kv("arr", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 4, 1) + b"\0" * 4)]))
    out(t, "item04_type13", gguf([kv("x", 13, b"\0" * 8)]))
    out(t, "item04_type_minus1", gguf([kv("x", 0xFFFFFFFF, b"\0" * 8)]))
    out(t, "item05_empty_key", gguf([kv_u32("", 1)]))
    out(t, "item05_dup_key", gguf([kv_u32("dup", 1), kv_u32("dup", 2)]))
    out(t, "item05_dup_tensor", gguf([], [tinfo("a", [8], 0, 0), tinfo("a", [8], 0, 32)], b"\0" * 64))
    for a in (0, 3, 1 << 31):
        out(t, "item06_alignment_%d" % a, gguf([kv_u32("general.alignment", a)], T1, D1))
    out(t, "item06_alignment_int32", gguf([kv_i32("general.alignment", 32)], T1, D1))
    out(t, "item07_n_dims5", gguf([], [tinfo("a", [1, 1, 1, 1, 8], 0, 0)], D1))
    out(t, "item07_n_dims_max", gguf(nt=1) + gstr("a") + struct.pack("<I", 0xFFFFFFFF) + struct.pack("<Q", 8) * 4)
    out(t, "item08_zero_dim", gguf([], [tinfo("a", [0], 0, 0)], D1))
    out(t, "item08_negative_dim", gguf([], [tinfo("a", [-8], 0, 0)], D1))
    out(t, "item08_product_overflow", gguf([], [tinfo("a", [8, (1 << 42) + 1, 1 << 30], 0, 0)], D1))
    out(t, "item09_type_99", gguf([], [tinfo("a", [8], 99, 0)], D1))
    out(t, "item09_q8_row_not_block", gguf([], [tinfo("a", [31], 8, 0)], b"\0" * 64))
    out(t, "item10_misaligned", gguf([], [tinfo("a", [8], 0, 4)], b"\0" * 64))
    out(t, "item10_overlap", gguf([], [tinfo("a", [16], 0, 0), tinfo("b", [8], 0, 32)], b"\0" * 96))
    out(t, "item10_gap", gguf([], [tinfo("a", [8], 0, 0), tinfo("b", [8], 0, 64)], b"\0" * 96))
    out(t, "item10_past_end", gguf([], [tinfo("a", [64], 0, 0)], b"\0" * 32))
    out(t, "item11_two_huge", gguf([], [tinfo("a", [0x7FFFFFFFFFFFFFC0 // 4], 0, 0),
                                        tinfo("b", [0x7FFFFFFFFFFFFFC0 // 4], 0, 0x7FFFFFFFFFFFFFC0)], D1))


# ggml block types (id, elements, bytes, offsets of the f16 scales in the block)
QTYPES = [("q4_0", 2, 32, 18, (0,)), ("q4_1", 3, 32, 20, (0, 2)), ("q5_0", 6, 32, 22, (0,)), ("q5_1", 7, 32, 24, (0, 2)),
          ("q8_0", 8, 32, 34, (0,)), ("q2_k", 10, 256, 84, (80, 82)), ("q3_k", 11, 256, 110, (108,)),
          ("q4_k", 12, 256, 144, (0, 2)), ("q5_k", 13, 256, 176, (0, 2)), ("q6_k", 14, 256, 210, (208,))]


def quant_seeds():
    """Per block type (issue 14): two valid rows of two blocks, NaN and Inf scales, a row that is
    not whole blocks, and a last block cut short."""
    t = "gguf_parse"
    arch = [kv_s("general.architecture", "none")]
    for name, tid, el, by, scales in QTYPES:
        blk = bytes((i * 37 + 11) & 0xFF for i in range(4 * by))
        out(t, "valid_" + name, gguf(arch, [tinfo("w", [2 * el, 2], tid, 0)], blk + b"\0" * ((-len(blk)) % 32)))
        for tag, h in (("nan", 0x7E00), ("inf", 0x7C00)):
            b = bytearray(blk)
            for o in scales:
                b[o:o + 2] = struct.pack("<H", h)
            out(t, "item09_%s_%s_scale" % (name, tag), gguf(arch, [tinfo("w", [2 * el, 2], tid, 0)], bytes(b) + b"\0" * ((-len(b)) % 32)))
        out(t, "item09_%s_row_not_block" % name, gguf(arch, [tinfo("w", [el + 16, 2], tid, 0)], blk + b"\0" * ((-len(blk)) % 32)))
        out(t, "item10_%s_truncated" % name, gguf(arch, [tinfo("w", [2 * el, 2], tid, 0)], blk[:-1]))


def vocab_seeds():
    t = "gguf_vocab"
    byte_toks = ["<0x%02X>" % b for b in range(256)]
    spm = byte_toks + ["<unk>", "<s>", "</s>", "\u2581a", "a"]
    types = [6] * 256 + [2, 3, 3, 1, 1]
    base = [kv_s("tokenizer.ggml.model", "llama"), kv_arr_s("tokenizer.ggml.tokens", spm),
            kv_arr_f32("tokenizer.ggml.scores", [0.0] * len(spm)), kv_arr_i32("tokenizer.ggml.token_type", types)]
    ids = [kv_u32("tokenizer.ggml.bos_token_id", 257), kv_u32("tokenizer.ggml.eos_token_id", 258),
           kv_u32("tokenizer.ggml.unknown_token_id", 256)]
    out(t, "valid_spm", gguf(base + ids))
    bl = [chr(c) for c in range(ord("!"), ord("~") + 1)]  # not the full byte-level alphabet: from the CLI seed below
    out(t, "item14_tokens_wrong_type", gguf([base[0], kv_arr_i32("tokenizer.ggml.tokens", [1, 2, 3])] + ids))
    out(t, "item14_scores_length", gguf([base[0], base[1], kv_arr_f32("tokenizer.ggml.scores", [0.0] * 3), base[3]] + ids))
    out(t, "item14_types_length", gguf(base[:3] + [kv_arr_i32("tokenizer.ggml.token_type", [1] * 3)] + ids))
    out(t, "item15_bos_negative", gguf(base + [kv_i32("tokenizer.ggml.bos_token_id", -1)] + ids[1:]))
    out(t, "item15_eos_vocab_size", gguf(base + [ids[0], kv_u32("tokenizer.ggml.eos_token_id", len(spm))]))
    bad = list(spm)
    bad[5] = "<0x-1>"
    out(t, "item16_byte_token_minus1", gguf([base[0], kv_arr_s("tokenizer.ggml.tokens", bad)] + base[2:] + ids))
    bad = [x.encode() for x in spm]
    bad[-1] = b"a\xff"
    out(t, "item16_invalid_utf8", gguf([base[0], kv_arr_s("tokenizer.ggml.tokens", bad)] + base[2:] + ids))
    bpe_toks = bl + ["ab"]
    out(t, "item16_unknown_merge", gguf([kv_s("tokenizer.ggml.model", "gpt2"), kv_arr_s("tokenizer.ggml.tokens", bpe_toks),
                                         kv_arr_s("tokenizer.ggml.merges", ["x y"])]))


# ---- safetensors -------------------------------------------------------------------------
def st(header, data=b"", n=None):
    h = header.encode() if isinstance(header, str) else header
    return struct.pack("<Q", len(h) if n is None else n) + h + data


def safetensors_seeds():
    t = "safetensors_parse"
    out(t, "valid_two", st('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[2,2],"data_offsets":[8,16]},"__metadata__":{"format":"pt"}}', b"\0" * 16))
    out(t, "valid_odd_zero_rank0", st('{"a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]},"b":{"dtype":"F32","shape":[0],"data_offsets":[3,3]},"c":{"dtype":"F16","shape":[],"data_offsets":[3,5]}}', b"\0" * 5))
    out(t, "item17_short", b"abcde")
    out(t, "item17_n_over_100mb", st("{}", n=200 << 20))
    out(t, "item17_n_plus_8_over_file", st("{}", n=100))
    out(t, "item17_n_max", st("{}", n=U64))
    out(t, "item18_not_utf8", st(b'{"a\xff":1}'))
    out(t, "item18_no_brace", st("[1,2,3]"))
    out(t, "item18_truncated", st('{"a":{"dtype":"F32"'))
    out(t, "item18_nested_deep", st("[" * 100000 + "]" * 100000))
    out(t, "item18_dup_name", st('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', b"\0" * 8))
    out(t, "item18_metadata_nonstring", st('{"__metadata__":{"x":1}}'))
    out(t, "item19_unknown_dtype", st('{"a":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}}', b"\0" * 8))
    out(t, "item19_dim_2p48", st('{"a":{"dtype":"F32","shape":[281474976710656],"data_offsets":[0,8]}}', b"\0" * 8))
    out(t, "item19_negative_dim", st('{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}', b"\0" * 8))
    out(t, "item19_shape_overflow", st('{"a":{"dtype":"F32","shape":[140737488355328,140737488355328],"data_offsets":[0,8]}}', b"\0" * 8))
    out(t, "item20_end_lt_begin", st('{"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}', b"\0" * 8))
    out(t, "item20_overlap", st('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', b"\0" * 8))
    out(t, "item20_hole", st('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}', b"\0" * 12))
    out(t, "item20_trailing", st('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', b"\0" * 12))
    out(t, "item21_f4_partial", st('{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}', b"\0" * 2))


# ---- JSON ----------------------------------------------------------------------------------
def config_seeds(hf_dirs):
    t = "config_json"
    for name, d in hf_dirs.items():
        with open(os.path.join(d, "config.json"), "rb") as f:
            out(t, "valid_" + name, f.read())
    base = json.load(open(os.path.join(hf_dirs["qwen2"], "config.json")))
    def bad(name, **kw):
        c = dict(base)
        c.update(kw)
        out(t, name, json.dumps(c))
    bad("item12_n_head_zero", num_attention_heads=0)
    bad("item12_layers_huge", num_hidden_layers=1 << 40)
    bad("item23_wrong_type", hidden_size="64")
    out(t, "item23_1e309", json.dumps(base).replace('"rms_norm_eps": ', '"rms_norm_eps": 1e309, "x": '))
    bad("item23_negative_ctx", max_position_embeddings=-1)
    out(t, "item23_duplicate_key", json.dumps(base)[:-1] + ', "hidden_size": 64}')
    out(t, "item23_nested_deep", "[" * 100000)
    bad("eos_17_distinct", eos_token_id=list(range(17)))
    bad("eos_repeats_fold", eos_token_id=[5] * 40 + list(range(10, 25)))
    phi3 = json.load(open(os.path.join(hf_dirs["phi3"], "config.json")))
    lr = dict(phi3, max_position_embeddings=64, original_max_position_embeddings=1,
              rope_scaling={"type": "longrope", "short_factor": [1.0, 1.0], "long_factor": [1.0, 2.0]})
    out(t, "longrope_original_1", json.dumps(lr))


def tokenizer_json_seeds(hf_dirs):
    t = "tokenizer_json"
    with open(os.path.join(hf_dirs["qwen2"], "tokenizer.json"), "rb") as f:
        tj = f.read()
    out(t, "valid_test_tokenizer", tj)
    out(t, "valid_with_config", tj + b"\n\0\n" + b'{"bos_token":"<|im_start|>","eos_token":"<|im_end|>","add_bos_token":true}')
    out(t, "item22_truncated", tj[: len(tj) // 2])
    mini = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
            "pre_tokenizer": {"type": "ByteLevel"}}
    out(t, "item22_unknown_model", json.dumps({"model": {"type": "WordPiece", "vocab": {}}, "pre_tokenizer": {"type": "ByteLevel"}}))
    evil = dict(mini)
    evil["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "(a+)+$"}, "behavior": "Isolated", "invert": False}, {"type": "ByteLevel"}]}
    out(t, "item22_regex_a_plus_plus", json.dumps(evil))
    out(t, "item22_nested_deep", "[" * 100000)
    # SentencePiece-style tokenizer.json (Llama-2 / Phi-3): byte_fallback BPE over U+2581 text,
    # Prepend+Replace normalizer or a Metaspace pre-tokenizer, added tokens with lstrip/rstrip.
    head = ["<unk>", "<s>", "</s>"]
    vocab = {}
    for x in head + ["<0x%02X>" % b for b in range(256)] + ["\u2581", "a", "b", "c", "h", "i", "bc", "ab", "abc",
                                                          "\u2581h", "\u2581hi", "\n", "<|user|>", "<|end|>"]:
        vocab[x] = len(vocab)
    added = [{"id": i, "content": h, "special": True, "lstrip": False, "rstrip": False} for i, h in enumerate(head)]
    added += [{"id": vocab["<|user|>"], "content": "<|user|>", "special": True, "lstrip": False, "rstrip": True},
              {"id": vocab["<|end|>"], "content": "<|end|>", "special": True, "lstrip": True, "rstrip": True}]
    model = {"type": "BPE", "vocab": vocab, "merges": ["b c", "ab c", "a b", "\u2581 h", "\u2581h i"],
             "byte_fallback": True, "unk_token": "<unk>"}
    norm = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                 {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}
    out(t, "valid_spm_style", json.dumps({"added_tokens": added, "normalizer": norm, "pre_tokenizer": None, "model": model}))
    meta = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
    out(t, "valid_spm_metaspace", json.dumps({"added_tokens": added, "normalizer": None, "pre_tokenizer": meta, "model": model}))
    nfc = json.loads(tj)
    nfc["normalizer"] = {"type": "NFC"}
    out(t, "valid_nfc", json.dumps(nfc))
    split_seeds(t, tj, model, added)


def split_seeds(t, tj, spm_model, spm_added):
    """Split pre-tokenizers in every behavior, inverted, Regex and String patterns, with
    ByteLevel's add_prefix_space after them; and a Gemma-style Split on the normalized text."""
    seq = json.loads(tj)
    seq["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "\\s*"}, "behavior": "MergedWithPrevious", "invert": False},
        {"type": "Split", "pattern": {"String": ","}, "behavior": "Removed", "invert": False},
        {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Contiguous", "invert": True},
        {"type": "Split", "pattern": {"String": ""}, "behavior": "MergedWithNext", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": True, "use_regex": False}]}
    out(t, "valid_split_behaviors", json.dumps(seq))
    norm = {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}
    pre = {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False}
    out(t, "valid_spm_split", json.dumps({"added_tokens": spm_added, "normalizer": norm, "pre_tokenizer": pre,
                                          "model": spm_model}))


# ---- prompts and argv ----------------------------------------------------------------------
def prompt_seeds():
    # byte 0 selects the case: bits 0-1 the tokenizer (gpt2, qwen2, llama3, spm), bit 2
    # parse_special; every prompt is written for all eight cases
    t = "tokenize"
    names = ("gpt2", "qwen2", "llama3", "spm")
    def p(name, text):
        text = text if isinstance(text, bytes) else text.encode()
        for sel in range(8):
            out(t, "%s_%s%s" % (name, names[sel & 3], "_special" if sel & 4 else ""), bytes([sel]) + text)
    p("item24_x80", b"a\x80z")
    p("item24_e2_80", b"x\xe2\x80")
    p("item24_overlong", b"\xc0\xaf\xe0\x80\xaf")
    p("item24_surrogate", b"\xed\xa0\x80")
    p("item24_ff", b"\xff")
    p("item24_nul", b"a\0b")
    for c, n in ((b"a", "a"), (b"^", "caret"), (b"\n", "newline"), (b" ", "space")):
        p("item25_run_" + n, c * 4096)
    p("item27_im_start", "<|im_start|>user\nhi<|im_end|>")
    p("item28_split_utf8", "caf\u00e9 \u2581the 12345 \U0001F600 \u4e2d\u6587")
    p("text_english", "Hello world, the thing 123 is running.\n\n  indented")


def argv_seeds():
    t = "argv"
    def a(sel, *args):
        return bytes([sel]) + b"\0".join(x.encode() for x in args)
    out(t, "run_ok", a(0, "-m", "m.gguf", "-p", "hi", "-n", "5", "--temp", "0.5", "--top-k", "4", "--top-p", "0.9", "--stop", "x"))
    out(t, "item29_n_minus1", a(0, "-m", "m", "-n", "-1"))
    out(t, "item29_ctx_huge", a(0, "-m", "m", "--ctx", "99999999999"))
    out(t, "item29_threads0", a(0, "-m", "m", "--threads", "0"))
    out(t, "item29_temp_nan", a(0, "-m", "m", "--temp", "nan"))
    out(t, "item29_unknown_flag", a(0, "-m", "m", "--frobnicate"))
    out(t, "item29_missing_value", a(0, "-m"))
    out(t, "bench_dispatch", a(1, "--quick", "--reps", "3", "--json", "--out", "x"))
    out(t, "bench_fusion", a(2, "--size", "toy", "--exp", "a,b", "--iters", "7", "--csv"))
    out(t, "ids", a(3, "1,2,3", "0", "2147483647", "2147483648", "-1", ",,"))
    out(t, "dims", a(4, "dim=64,hidden=96,layers=2,heads=4,kv_heads=2,vocab=512,ctx=256", "qwen2.5-0.5b", "heads=3"))
    out(t, "long", a(5, "12", "-5", "1e3", "99999999999999999999", ""))
    out(t, "double", a(6, "0.5", "nan", "inf", "1e309", "-0", "0x1p3"))
    out(t, "tokenize", a(7, "-m", "x", "-p", "hello", "--parse-special"))


def policy_seeds():
    """sim eval policy files (issue 11): valid ones for each workload with a policy file, and
    one per field the loader checks against the workload."""
    t = "policy_load"
    def pol(workload, shape, n, params=None, extra=""):
        ps = params if params is not None else ["%.9g" % (0.01 * (i % 17) - 0.08) for i in range(n)]
        return "wgfuse-sim-policy 1\nworkload %s\nshape %s\nparams %d\n%s%s" % (workload, shape, n, "".join(p + "\n" for p in ps), extra)
    def n_params(i, h, o): return h * i + h + o * h + o
    out(t, "valid_cartpole_4_8_2", pol("cartpole", "4 8 2 0", n_params(4, 8, 2)))
    out(t, "valid_acrobot_6_16_3", pol("acrobot", "6 16 3 0", n_params(6, 16, 3)))
    out(t, "valid_mountaincar_fb2", pol("MountainCar-v0", "4 8 5 2", n_params(4, 8, 5)))
    out(t, "valid_cartpole_h64_fb4", pol("cartpole", "8 64 6 4", n_params(8, 64, 6)))
    out(t, "issue11_rastrigin_8_params", pol("rastrigin", "0 8 0 0", 8, [str(i + 1) for i in range(8)]))
    out(t, "issue11_finsim", pol("finsim", "8 16 6 2", n_params(8, 16, 6)))
    out(t, "issue11_hidden_100", pol("cartpole", "4 100 2 0", n_params(4, 100, 2)))
    out(t, "issue11_feedback_5", pol("cartpole", "9 8 7 5", n_params(9, 8, 7)))
    out(t, "issue11_wrong_n_in", pol("cartpole", "5 8 2 0", n_params(5, 8, 2)))
    out(t, "issue11_params_short", pol("cartpole", "4 8 2 0", 58, ["1", "2"]))
    out(t, "issue11_params_count", pol("cartpole", "4 8 2 0", 57))
    out(t, "issue11_shape_overflow", pol("cartpole", "4 99999999999999999999 2 0", 58))
    out(t, "issue11_nan", pol("cartpole", "4 1 2 0", 9, ["1"] * 8 + ["nan"]))
    out(t, "issue11_inf_overflow", pol("cartpole", "4 1 2 0", 9, ["1"] * 8 + ["1e39"]))
    out(t, "issue11_trailing", pol("cartpole", "4 1 2 0", 9, ["1"] * 9, "10\n"))
    out(t, "issue11_nul", pol("cartpole", "4 1 2 0", 9, ["1"] * 9) + "\0junk")
    out(t, "issue11_version", pol("cartpole", "4 1 2 0", 9).replace("policy 1", "policy 2"))
    out(t, "issue11_not_a_policy", "not a policy")
    out(t, "empty", "")


def added_token_seeds():
    """The added-token matcher (issue 11): byte 0 flags (bit 0 parse_special, bit 1 a
    scaffolding mask, bits 2-4 its run length - 1, bit 5 mask starts on), token lines
    (type letter c/u/k + bytes), an empty line, then the text."""
    t = "added_tokens"
    def seed(flags, toks, text):
        enc = lambda x: x if isinstance(x, bytes) else x.encode()
        return bytes([flags]) + b"".join(enc(k) + b"\n" for k in toks) + b"\n" + enc(text)
    chat = ["c<|im_start|>", "c<|im_end|>", "c<|endoftext|>", "u<think>", "u</think>"]
    out(t, "chatml_text", seed(0, chat, "<|im_start|>user\nhi<think>x</think><|im_end|>\n"))
    out(t, "chatml_special", seed(1, chat, "<|im_start|>user\nhi<|im_end|><|im_end|x<|im_start|>"))
    out(t, "chatml_mask", seed(2 | (3 << 2) | 32, chat, "<|im_start|>user\n<|im_end|>hello<|im_start|>assistant\n"))
    out(t, "longest_and_ties", seed(1, ["c<|a|>", "u<|a|>x", "u<|", "ca|>", "u<|a|>", "cab", "ub", "c<|a|>x"],
                                     "<|a|>x<|a|><|a|ab<|a|>xb<|ab<|a|>"))
    out(t, "unknown_type", seed(1, ["k<unk>", "c<s>", "c</s>"], "<s>a<unk>b</s><s"))
    out(t, "nested_suffixes", seed(1, ["ca", "caa", "caaa", "caaaa", "ub", "uab", "uaab"], "aaaaabaaabab" * 4))
    out(t, "near_misses", seed(1, ["c<t%03d>" % i for i in range(40)], "<t00<t001<t001><<<<t03x>" * 6))
    out(t, "long_token", seed(3, ["u" + "q" * 300, "c" + "q" * 299 + "s"], "q" * 700 + "s" + "q" * 40))
    out(t, "invalid_utf8_token", seed(1, [b"c\xff"], "x"))
    out(t, "empty", b"\x00")


def main():
    tmp = tempfile.mkdtemp(prefix="wgf_seeds_")
    try:
        hf = {}
        for arch in ("qwen2", "llama", "phi3"):
            dims = "dim=8,hidden=16,layers=1,heads=2,kv_heads=1,vocab=512,ctx=16"
            g = os.path.join(tmp, arch + ".gguf")
            subprocess.run([CLI, "llm", "make-test-model", "--arch", arch, "--dims", dims, "--format", "gguf", "--dtype",
                            "q8_0" if arch != "phi3" else "f16", "-o", g], check=True, capture_output=True)
            out("gguf_parse", "valid_" + arch, open(g, "rb").read())
            out("gguf_vocab", "valid_" + arch, open(g, "rb").read())
            hf[arch] = os.path.join(tmp, arch + "_hf")
            subprocess.run([CLI, "llm", "make-test-model", "--arch", arch, "--dims", dims, "--format", "hf", "--dtype",
                            "bf16", "-o", hf[arch]], check=True, capture_output=True)
            out("safetensors_parse", "valid_" + arch, open(os.path.join(hf[arch], "model.safetensors"), "rb").read())
        # item 12-13 reproducers: a valid model GGUF with one hyperparameter patched
        q = open(os.path.join(tmp, "llama.gguf"), "rb").read()
        def patch_u32(data, key, v):
            k = gstr(key) + struct.pack("<I", 4)
            i = data.index(k) + len(k)
            return data[:i] + struct.pack("<I", v) + data[i + 4:]
        out("gguf_parse", "item12_n_head_zero", patch_u32(q, "llama.attention.head_count", 0))
        out("gguf_parse", "item12_block_count_huge", patch_u32(q, "llama.block_count", 100000))
        out("gguf_parse", "item13_ffn_shape", patch_u32(q, "llama.feed_forward_length", 100))
        # per-layer names whose layer number is not the canonical decimal (no layer reads them):
        # the untied output.weight renamed in place, by its length-prefixed name
        def rename_tensor(data, old, new):
            assert len(old) == len(new)
            i = data.index(gstr(old))
            return data[:i] + gstr(new) + data[i + len(gstr(old)):]
        for tag, name in (("leading_zero", "blk.00.weight"), ("negative", "blk.-1.weight"), ("8_digits", "blk.12345678.")):
            out("gguf_parse", "layer_name_" + tag, rename_tensor(q, "output.weight", name))
        gguf_seeds()
        quant_seeds()
        vocab_seeds()
        safetensors_seeds()
        config_seeds(hf)
        tokenizer_json_seeds(hf)
        prompt_seeds()
        argv_seeds()
        policy_seeds()
        added_token_seeds()
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
