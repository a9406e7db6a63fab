// Replace the token ids of some models in tests/llm/data/chat/expected.json with Hugging
// Face tokenizers' own (Tokenizer.fromFile(tokenizer.json).encode(text, add_special_tokens =
// false), the Rust library through its Node binding pinned here), keeping the ids that were
// there as "ids_transformers". Run from the source root after `npm ci` in this directory:
//   node tests/llm/data/hf_tokenizers/chat_ids.js deepseek_v3
// Why: transformers 5.x's AutoTokenizer loads DeepSeek-V3 (tokenizer_class
// "LlamaTokenizerFast") as its LlamaTokenizer, which replaces tokenizer.json's ByteLevel
// pre-tokenizer with Metaspace (huggingface/transformers#45488): spaces and every character
// outside the byte-level alphabet vanish from its ids. make_expected.py now cross-checks the
// two on the GPU host; this patches the committed file made before it did.
const path = require('path');
const fs = require('fs');
const { Tokenizer } = require(path.join(__dirname, 'node_modules', 'tokenizers'));
const file = 'tests/llm/data/chat/expected.json';
const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
const version = JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules/tokenizers/package.json'), 'utf8')).version;
(async () => {
  for (const m of doc.models.filter((m) => process.argv.slice(2).includes(m.name))) {
    const tok = Tokenizer.fromFile(path.join('third_party/chat_models', m.tokenizer, 'tokenizer.json'));
    for (const c of m.cases.filter((c) => c.ids)) {
      const ids = Array.from((await tok.encode(c.text, null, { addSpecialTokens: false })).getIds());
      if (!c.ids_transformers) c.ids_transformers = c.ids;
      c.ids = ids;
    }
    m.ids_engine = `Hugging Face tokenizers ${version} (Rust, Node binding): Tokenizer.fromFile(tokenizer.json)` +
      '.encode(text, add_special_tokens=False); ids_transformers: what transformers 5.17 apply_chat_template gave, ' +
      'through its LlamaTokenizer class, which drops the ByteLevel pre-tokenizer (huggingface/transformers#45488)';
  }
  fs.writeFileSync(file, JSON.stringify(doc, null, 1) + '\n');
})();
