// The browser test (`make test-web`, part of `make test`): playwright-core drives Debian's
// Chromium headless with WebGPU on SwiftShader and checks, on web/index.html:
//   1. the page loads wgfuse.wasm, opens the device and its self-check passes;
//   2. a CartPole GA run started from the page's controls gives, generation by generation,
//      the same fitness (SipHash of every genome's return, plus best and mean) and the same
//      final population hash as the native build on Chromium's own SwiftShader Vulkan
//      driver (VK_ICD_FILENAMES): build/tests/web/web_sim_trace runs the page's code
//      natively, and `wgfuse sim train` prints the same best/mean columns and hash;
//   3. fused and per-step agree bitwise in the page;
//   4. the dispatch-overhead measurement gives a positive per-dispatch cost;
//   5. text generation from a tiny generated model (HF directory and GGUF, picked through the
//      page's file inputs) streams the same greedy ids as `wgfuse run`;
//   6. bad input shows one clear message, never a blank page or a hung tab: a corrupt model
//      file, an adapter below the kernels' limits, a browser without WebGPU, a bad
//      population.
// Usage: node test_web.mjs [--screenshots DIR]   (env: WGF_BUILD, default <repo>/build)
// Exit 0 pass, 1 fail, 77 skip (only when Chromium is absent: said loudly).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from './serve.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const BUILD = process.env.WGF_BUILD || path.join(ROOT, 'build');
const CHROMIUM = process.env.WGF_CHROMIUM || '/usr/bin/chromium';
const ICD = process.env.WGF_SWIFTSHADER_ICD || '/usr/lib/chromium/vk_swiftshader_icd.json';
const ARGS = ['--no-sandbox', '--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-angle=swiftshader',
  '--use-webgpu-adapter=swiftshader'];
const POP = 512, GENS = 12, SEED = 11;
const shotDir = process.argv.includes('--screenshots') ? path.resolve(process.argv[process.argv.indexOf('--screenshots') + 1]) : null;

let failures = 0;
const check = (ok, what) => { console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`); if (!ok) failures++; return ok; };
const die = (msg) => { console.log(`FAIL ${msg}`); process.exit(1); };

if (!fs.existsSync(CHROMIUM)) {
  console.log(`\n*** SKIP test_web: no Chromium at ${CHROMIUM} (scripts/setup.sh installs it: apt-get install chromium) ***\n`);
  process.exit(77);
}
if (!fs.existsSync(path.join(ROOT, 'web/wgfuse.wasm'))) die('web/wgfuse.wasm is missing: run `make web`');
const { chromium } = await import('playwright-core').catch(() =>
  die('playwright-core is missing: scripts/setup.sh installs it (npm ci in tests/web)'));

// ---- the native side, on Chromium's SwiftShader ------------------------------------------------
const env = { ...process.env, VK_ICD_FILENAMES: ICD };
const run = (exe, args) => execFileSync(exe, args, { env, encoding: 'utf8', timeout: 300000 });
const trace = run(path.join(BUILD, 'tests/web/web_sim_trace'), [String(POP), String(GENS), String(SEED), 'fused']).trim().split('\n');
check(/SwiftShader/.test(trace[0]), `native adapter is SwiftShader: ${trace[0]}`);
const nativeLines = trace.filter((l) => /^\d+,/.test(l));
const nativeHash = (trace.find((l) => l.startsWith('hash ')) || '').slice(5);
// --target 1e9: never "solved", so exactly GENS generations and exit status 1 ("not solved")
const cliRun = spawnSync(path.join(BUILD, 'wgfuse'), ['sim', 'train', 'cartpole', '--pop', String(POP), '--gens', String(GENS),
  '--seed', String(SEED), '--target', '1e9', '--out', path.join(BUILD, 'test_tmp', 'web_cartpole.policy')],
{ env, encoding: 'utf8', timeout: 300000 });
check(cliRun.status === 1 && /not solved after/.test(cliRun.stdout), `\`wgfuse sim train\` ran ${GENS} generations ${cliRun.stderr || ''}`);
const cli = cliRun.stdout.split('\n');
const cliLines = cli.filter((l) => /^\d+,/.test(l)).map((l) => l.split(',').slice(0, 3).join(','));
check(cliLines.length === GENS && cliLines.every((l, i) => nativeLines[i].startsWith(l + ',')),
  '`wgfuse sim train` prints the same gen,best,mean as web_sim_trace');
check(cli.some((l) => l.includes(`# population hash ${nativeHash}`)), `\`wgfuse sim train\`'s population hash is web_sim_trace's (${nativeHash})`);

// the tiny generated models (random weights, a byte-level BPE tokenizer) and `wgfuse run`'s
// greedy ids and logits for them
const TMP = path.join(BUILD, 'test_tmp', 'web');
fs.rmSync(TMP, { recursive: true, force: true }); fs.mkdirSync(TMP, { recursive: true });
const MODELS = [
  { name: 'hf', path: path.join(TMP, 'tiny_hf'), args: ['--arch', 'qwen2', '--format', 'hf'] },
  { name: 'gguf', path: path.join(TMP, 'tiny.gguf'), args: ['--arch', 'llama', '--format', 'gguf'] },
];
const PROMPT = 'Hello world, the page speaks', NTOK = 12;
function readNpy(file) { // float32 C-order (rows, cols)
  const b = fs.readFileSync(file), hl = b.readUInt16LE(8), h = b.toString('latin1', 10, 10 + hl);
  const [rows, cols] = h.match(/'shape': \((\d+), (\d+)\)/).slice(1).map(Number);
  return { rows, cols, data: new Float32Array(b.buffer.slice(b.byteOffset + 10 + hl, b.byteOffset + 10 + hl + 4 * rows * cols)) };
}
const argmax = (a, off, n) => { let k = 0; for (let j = 1; j < n; j++) if (a[off + j] > a[off + k]) k = j; return k; };
for (const m of MODELS) {
  run(path.join(BUILD, 'wgfuse'), ['llm', 'make-test-model', ...m.args, '-o', m.path]);
  const npy = path.join(TMP, `${m.name}.npy`);
  run(path.join(BUILD, 'wgfuse'), ['run', '-m', m.path, '--no-template', '--temp', '0', '-p', PROMPT, '-n', String(NTOK),
    '--backend', 'cpu-ref', '--logits-out', npy]);
  const L = readNpy(npy);
  // --logits-out holds every prompt row, then one per decode step: the last NTOK rows sampled the ids
  m.rows = []; m.ids = [];
  for (let r = L.rows - NTOK; r < L.rows; r++) { m.rows.push(L.data.subarray(r * L.cols, (r + 1) * L.cols)); m.ids.push(argmax(L.data, r * L.cols, L.cols)); }
  m.vocab = L.cols;
}
fs.writeFileSync(path.join(TMP, 'corrupt.gguf'), Buffer.concat([Buffer.from('GGUF'), Buffer.from([3, 0, 0, 0]), Buffer.alloc(64, 0xff)]));

// ---- the browser ---------------------------------------------------------------------------------
const server = await serve(path.join(ROOT, 'web'));
const url = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
const errorText = (page) => page.evaluate(() => { const e = document.getElementById('error'); return e.hidden ? '' : e.textContent; });
async function open(init) {
  const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
  page.on('pageerror', (e) => console.log(`  page error: ${e.message}`));
  if (init) await page.addInitScript(init);
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.ready || !document.getElementById('error').hidden, null, { timeout: 120000 });
  return page;
}
const until = (page, fn, arg, ms = 300000) => page.waitForFunction(fn, arg, { timeout: ms });

try {
  const page = await open();
  check(!(await errorText(page)), `page ready without an error ${await errorText(page)}`);
  check(await page.evaluate(() => document.getElementById('selfcheck').dataset.state) === 'pass', 'self-check passes in the page');
  const arch = await page.evaluate(() => document.getElementById('device-table').textContent);
  check(/swiftshader/i.test(arch), 'the page\'s adapter is SwiftShader');

  // CartPole from the page's controls
  await page.fill('#sim-pop', String(POP)); await page.fill('#sim-seed', String(SEED)); await page.fill('#sim-gens', String(GENS));
  await page.click('#sim-run');
  await until(page, () => ['done', 'mismatch'].includes(document.getElementById('sim-result').dataset.state) || !document.getElementById('error').hidden);
  const log = (await page.textContent('#sim-log')).trim().split('\n');
  const webLines = log.filter((l) => /^\d+,/.test(l)), webHash = (log.find((l) => l.startsWith('hash ')) || '').slice(5);
  const firstDiff = webLines.findIndex((l, i) => l !== nativeLines[i]);
  check(webLines.length === GENS && firstDiff < 0,
    `CartPole fitness sequence (${GENS} generations, gen,best,mean,SipHash of the ${POP} returns) equals the native run` +
    (firstDiff >= 0 ? `: generation ${firstDiff} browser ${webLines[firstDiff]} native ${nativeLines[firstDiff]}` : ''));
  check(webHash === nativeHash, `population hash after ${GENS} generations: browser ${webHash}, native ${nativeHash}`);
  check(await page.evaluate(() => document.getElementById('sim-result').dataset.state) === 'done', 'fused and per-step bitwise equal in the page');

  await page.click('#dispatch-run');
  await until(page, () => document.getElementById('dispatch').dataset.state === 'done' || !document.getElementById('error').hidden);
  const us = Number(await page.evaluate(() => document.getElementById('dispatch').dataset.perDispatchUs));
  check(us > 0 && us < 1e5, `dispatch overhead measured in the page: ${us} us per dispatch`);
  if (shotDir) { fs.mkdirSync(shotDir, { recursive: true }); await page.screenshot({ path: path.join(shotDir, 'web_cartpole.png'), fullPage: true }); }

  // text generation: each tiny model, picked through the page's file inputs, on both backends
  async function generate(pick, file, backend) {
    await page.evaluate(() => { document.getElementById('llm-file').value = ''; document.getElementById('llm-dir').value = ''; });
    await page.setInputFiles(pick, file);
    await page.selectOption('#llm-backend', backend);
    await page.fill('#llm-prompt', PROMPT); await page.fill('#llm-n', String(NTOK));
    await page.evaluate(() => { document.getElementById('error').hidden = true; });
    await page.click('#llm-run');
    await until(page, () => ['done', 'error'].includes(document.getElementById('llm-out').dataset.state) || !document.getElementById('error').hidden);
    return { err: await errorText(page), out: JSON.parse((await page.textContent('#llm-ids')) || '{}') };
  }
  for (const m of MODELS) for (const backend of ['cpu-ref', 'gpu']) {
    const { err, out } = await generate(m.name === 'hf' ? '#llm-dir' : '#llm-file', m.path, backend);
    if (!check(!err, `${m.name} model, ${backend}: generated without an error ${err}`)) continue;
    check(JSON.stringify(out.ids) === JSON.stringify(m.ids),
      `${m.name} model, ${backend}: greedy ids ${JSON.stringify(out.ids)} = \`wgfuse run\`'s ${JSON.stringify(m.ids)}`);
    // logits against cpu-ref's (native): max |diff| / max |logit| over every row, within the
    // plans' tolerance (tests/llm/test_forward_roles.c: 2e-2 with f16 weights; cpu-ref 1e-5)
    let d = 0, mx = 0;
    const rows = out.logits ? out.logits.length / m.vocab : 0, first = rows - NTOK; // the page's last NTOK rows too
    if (first >= 0) m.rows.forEach((row, r) => row.forEach((v, j) => { d = Math.max(d, Math.abs(v - out.logits[(first + r) * m.vocab + j])); mx = Math.max(mx, Math.abs(v)); }));
    const tol = backend === 'gpu' ? 2e-2 : 1e-5;
    check(first >= 0 && d / mx <= tol,
      `${m.name} model, ${backend}: logits within ${tol} of native cpu-ref's (max |diff| / max |logit| = ${(d / mx).toExponential(2)})`);
  }
  const rateText = await page.textContent('#llm-rate');
  check(/tok\/s/.test(rateText), `the page shows tok/s: ${rateText}`);
  if (shotDir) await page.screenshot({ path: path.join(shotDir, 'web_generation.png'), fullPage: true });

  // bad input: a corrupt model file
  const bad = await generate('#llm-file', path.join(TMP, 'corrupt.gguf'), 'cpu-ref');
  check(/corrupt\.gguf/.test(bad.err) && bad.err.length < 400, `corrupt model file: "${bad.err}"`);
  check(await page.evaluate(() => document.getElementById('llm-run').disabled === false), 'the page stays usable after the corrupt file');

  // bad input: a population the sim refuses
  await page.fill('#sim-pop', '1'); await page.click('#sim-run');
  await until(page, () => !document.getElementById('error').hidden, null, 30000);
  check(/population/.test(await errorText(page)), `bad population: "${await errorText(page)}"`);
  await page.close();

  // bad input: an adapter below the kernels' limits (what a compatibility-mode adapter offers)
  const low = await open(() => {
    for (const P of [GPUAdapter.prototype, GPUDevice.prototype]) {
      const get = Object.getOwnPropertyDescriptor(P, 'limits').get;
      Object.defineProperty(P, 'limits', { get() { const l = get.call(this), o = {}; for (const k in l) o[k] = l[k]; o.maxComputeInvocationsPerWorkgroup = 128; return o; } });
    }
  });
  const lowErr = await errorText(low);
  check(/maxComputeInvocationsPerWorkgroup is 128, needs 256/.test(lowErr), `adapter below the limits: "${lowErr}"`);
  await low.close();

  // bad input: an adapter without what the gpu backend needs (10 storage buffers per stage)
  const few = await open(() => {
    for (const P of [GPUAdapter.prototype, GPUDevice.prototype]) {
      const get = Object.getOwnPropertyDescriptor(P, 'limits').get;
      Object.defineProperty(P, 'limits', { get() { const l = get.call(this), o = {}; for (const k in l) o[k] = l[k]; o.maxStorageBuffersPerShaderStage = 8; return o; } });
    }
  });
  await few.setInputFiles('#llm-file', MODELS[1].path); await few.selectOption('#llm-backend', 'gpu'); await few.click('#llm-run');
  await until(few, () => !document.getElementById('error').hidden, null, 60000);
  const fewErr = await errorText(few);
  check(/maxStorageBuffersPerShaderStage is 8, needs 10.*choose cpu-ref/.test(fewErr), `adapter without the gpu backend's storage buffers: "${fewErr}"`);
  await few.close();

  // bad input: no WebGPU at all
  const nogpu = await open(() => { Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined }); });
  const ngErr = await errorText(nogpu);
  check(/no WebGPU/.test(ngErr), `browser without WebGPU: "${ngErr}"`);
  await nogpu.close();
} catch (e) {
  check(false, `browser test: ${e.message}`);
} finally {
  await browser.close();
  server.close();
}
console.log(failures ? `test_web: ${failures} check(s) FAILED` : 'test_web: all checks passed');
process.exit(failures ? 1 : 0);
