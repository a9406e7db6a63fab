// `wgfuse serve` through the official OpenAI client for Node (npm `openai`, pinned in
// package-lock.json beside this file; scripts/setup.sh installs it). Run by test_serve.py with
// WGF_BASE_URL (the server's /v1), WGF_API_KEY and WGF_EXPECT ({"chat": text, "chat_tokens": n}:
// what `wgfuse run` printed for the same seed, sampling and template). This is the example
// docs/serve.md shows. Prints one line per check and "N passed, N failed".
import OpenAI from "openai";

const expect = JSON.parse(process.env.WGF_EXPECT);
const client = new OpenAI({ baseURL: process.env.WGF_BASE_URL, apiKey: process.env.WGF_API_KEY, maxRetries: 0 });
let passed = 0, failed = 0;
function check(ok, name, detail) {
  if (ok) passed++; else failed++;
  console.log(`${ok ? "PASS" : "FAIL"} openai client: ${name}${ok ? "" : ": " + JSON.stringify(detail).slice(0, 800)}`);
}

const request = {
  model: "test",
  messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello world" }],
  max_tokens: 24, temperature: 0.9, top_p: 0.95, seed: 11,
  top_k: 0, // llama.cpp's extension: wgfuse run --top-k 0 (no top-k cut)
};

try {
  const r = await client.chat.completions.create(request);
  check(r.choices[0].message.content === expect.chat, "chat == wgfuse run", r.choices[0].message.content);
  check(r.usage.completion_tokens === expect.chat_tokens, "usage.completion_tokens == run's count", r.usage);

  const stream = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
  let text = "", finish = null, usage = null;
  for await (const chunk of stream) {
    if (chunk.choices.length) {
      text += chunk.choices[0].delta.content ?? "";
      finish = chunk.choices[0].finish_reason ?? finish;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  check(text === expect.chat && finish === "length", "streamed chat == wgfuse run", { text, finish });
  check(usage && usage.completion_tokens === expect.chat_tokens, "stream usage", usage);

  const models = await client.models.list();
  check(models.data.length === 1 && typeof models.data[0].id === "string", "models.list", models.data);

  try {
    await client.chat.completions.create({ ...request, n: 2 });
    check(false, "n: 2 is refused", "no error");
  } catch (e) {
    check(e instanceof OpenAI.APIError && e.status === 400 && e.param === "n", "n: 2 -> 400 naming 'n'", String(e));
  }
  const bad = new OpenAI({ baseURL: process.env.WGF_BASE_URL, apiKey: "sk-wrong", maxRetries: 0 });
  try {
    await bad.models.list();
    check(false, "a wrong key is refused", "no error");
  } catch (e) {
    check(e instanceof OpenAI.AuthenticationError && e.status === 401, "wrong key -> AuthenticationError 401", String(e));
  }
} catch (e) {
  check(false, "no exception", String(e));
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
