// Reference pre-tokenizer pieces and token ids from Hugging Face tokenizers, the Rust
// library transformers runs (its Node binding, `tokenizers` 0.23.2, pinned by
// package-lock.json), for tests/llm/test_tokenizer_hf.c. Run from the source root:
//   (cd tests/llm/data/hf_tokenizers && npm ci)
//   node tests/llm/data/hf_tokenizers/make_ids.js > tests/llm/data/hf_tokenizers/expected.json
// It reads the tokenizer.json files scripts/setup.sh fetches (third_party/chat_models/) and
// tests/llm/data/tokenizer_corpus.txt. Output:
//   splits: [{pre_tokenizer, texts: [[text, [piece, ...]], ...]}]: a Sequence of Split steps
//     (every behavior, invert, Regex and String patterns) then ByteLevel without a regex,
//     its pieces mapped back from the byte-level alphabet to text;
//   models: {name: [[text, [id, ...], decoded], ...]}: Tokenizer.fromFile(tokenizer.json)
//     .encode(text, add_special_tokens = false) for every corpus line, the whole corpus and
//     edge cases, and .decode(ids, skip_special_tokens = false) of those ids.
const path = require('path');
const fs = require('fs');
const { Tokenizer } = require(path.join(__dirname, 'node_modules', 'tokenizers'));
const root = process.cwd();

// GPT-2's byte <-> character table (the ByteLevel alphabet): printable Latin-1 bytes stand
// for themselves, the others for U+0100 + n in byte order.
const byteOf = new Map();
{
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const keep = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    byteOf.set(String.fromCodePoint(keep ? b : 256 + n++), b);
  }
}
const unmap = (s) => Buffer.from([...s].map((c) => byteOf.get(c))).toString('utf8');

function tokenizerWith(pre) {
  const vocab = {};
  for (const c of byteOf.keys()) vocab[c] = Object.keys(vocab).length;
  return Tokenizer.fromString(JSON.stringify({
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null, pre_tokenizer: pre,
    post_processor: null, decoder: null,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
             fuse_unk: false, byte_fallback: false, vocab, merges: [] },
  }));
}

const deepseekSplits = JSON.parse(fs.readFileSync(path.join(root, 'third_party/chat_models/deepseek_v3/tokenizer.json'),
                                                  'utf8')).pre_tokenizer.pretokenizers.filter((p) => p.type === 'Split');
const patterns = [
  { Regex: '\\s+' }, { Regex: '\\s*' }, { Regex: '\\p{N}{1,3}' }, { Regex: '[一-龥぀-ゟ゠-ヿ]+' }, { Regex: 'a|' },
  { Regex: '(?=b)' }, { Regex: 'zz' }, { Regex: '\\b' }, deepseekSplits[2].pattern,
  { String: ' ' }, { String: '▁' }, { String: 'ab' }, { String: '' }, { String: '.*' }, { String: '\\' },
];
const behaviors = ['Isolated', 'Removed', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous'];
const texts = ['', 'a', 'How are  you doing?', '  lead and trail  ', 'ab ab  ba', 'bab', '12345 678a9',
  '日本語のテキスト and カタカナ 123', 'x▁y▁▁z▁', 'a.*b\\c .*', '\n\n\t x\r\n', "I'm  (ok) —!! 👩‍👩‍👧 ü"];

const splits = [];
function addCase(steps, addPrefix) {
  const pre = { type: 'Sequence', pretokenizers: [...steps,
    { type: 'ByteLevel', add_prefix_space: addPrefix, trim_offsets: false, use_regex: false }] };
  const p = tokenizerWith(pre).getPreTokenizer();
  splits.push({ pre_tokenizer: pre, texts: texts.map((t) => [t, p.preTokenizeString(t).map(([s]) => unmap(s))]) });
}
for (const pattern of patterns)
  for (const behavior of behaviors)
    for (const invert of [false, true]) addCase([{ type: 'Split', pattern, behavior, invert }], false);
addCase(deepseekSplits, false);
addCase(deepseekSplits, true);
addCase([{ type: 'Split', pattern: { String: ' ' }, behavior: 'MergedWithPrevious', invert: false },
         { type: 'Split', pattern: { Regex: '\\p{N}' }, behavior: 'Removed', invert: true }], true);

const corpus = fs.readFileSync(path.join(root, 'tests/llm/data/tokenizer_corpus.txt'), 'utf8');
const modelTexts = [...corpus.split('\n').filter((l) => l.length), corpus, ...texts.filter((t) => t.length),
  '1234567 12 1 日本語123テキスト', '  \n  \n\n   x', 'a  b   c    d', '▁▁ ▁x', '<start_of_turn>user\nhi<end_of_turn>',
  '<｜User｜>hi<｜Assistant｜>', '<|im_start|>a<|im_end|>', ' '.repeat(40), '\t'.repeat(33) + '\n'.repeat(35)];
const models = {};
(async () => {
  for (const name of ['qwen3', 'llama3', 'deepseek_v3', 'gemma3']) {
    const tok = Tokenizer.fromFile(path.join(root, 'third_party/chat_models', name, 'tokenizer.json'));
    models[name] = [];
    for (const t of modelTexts) {
      const enc = await tok.encode(t, null, { addSpecialTokens: false });
      const ids = Array.from(enc.getIds());
      models[name].push([t, ids, await tok.decode(ids, false)]);
    }
  }
  const version = JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules/tokenizers/package.json'), 'utf8')).version;
  process.stdout.write(JSON.stringify({ generator: 'tests/llm/data/hf_tokenizers/make_ids.js',
    engine: `Hugging Face tokenizers (Rust) through its Node binding, npm tokenizers ${version}`, splits, models }) + '\n');
})();
