// The browser half of bench/web_vs_native.sh: opens web/index.html in headless Chromium
// (WebGPU on SwiftShader, as tests/web), runs the page's dispatch-overhead measurement and a
// CartPole GA run (fused and per-step side by side), and writes what the page reports to
// OUT/browser.json. Usage: node bench/web_bench.mjs OUT [POP] [GENS] [SEED]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { chromium } = await import(path.join(ROOT, 'tests/web/node_modules/playwright-core/index.mjs'));
const { serve } = await import(path.join(ROOT, 'tests/web/serve.mjs'));
const [out, pop = '1024', gens = '30', seed = '7'] = process.argv.slice(2);
if (!out) { console.error('usage: node bench/web_bench.mjs OUT [POP] [GENS] [SEED]'); process.exit(2); }

const server = await serve(path.join(ROOT, 'web'));
const browser = await chromium.launch({ executablePath: process.env.WGF_CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-angle=swiftshader', '--use-webgpu-adapter=swiftshader'] });
const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
await page.goto(`http://127.0.0.1:${server.address().port}/`);
const ok = () => document.body.dataset.ready || !document.getElementById('error').hidden;
await page.waitForFunction(ok, null, { timeout: 120000 });
const err = () => page.evaluate(() => (document.getElementById('error').hidden ? '' : document.getElementById('error').textContent));
if (await err()) throw new Error(await err());
const result = { date: new Date().toISOString(), chromium: browser.version(), user_agent: await page.evaluate(() => navigator.userAgent),
  device: JSON.parse(await page.evaluate(() => JSON.stringify([...document.querySelectorAll('#device-table tr')].map((r) => [r.cells[0].textContent, r.cells[1].textContent])))) };
await page.click('#dispatch-run');
await page.waitForFunction(() => document.getElementById('dispatch').dataset.state === 'done' || !document.getElementById('error').hidden, null, { timeout: 600000 });
result.dispatch = { text: await page.textContent('#dispatch'),
  per_dispatch_us: Number(await page.evaluate(() => document.getElementById('dispatch').dataset.perDispatchUs)),
  single_op_us: Number(await page.evaluate(() => document.getElementById('dispatch').dataset.singleOpUs)) };
await page.fill('#sim-pop', pop); await page.fill('#sim-seed', seed); await page.fill('#sim-gens', gens);
await page.click('#sim-run');
await page.waitForFunction(() => ['done', 'mismatch'].includes(document.getElementById('sim-result').dataset.state) || !document.getElementById('error').hidden, null, { timeout: 600000 });
if (await err()) throw new Error(await err());
result.cartpole = { pop: Number(pop), gens: Number(gens), seed: Number(seed), result: await page.textContent('#sim-result'),
  fused_gen_per_s: parseFloat(await page.textContent('#run-fused .rate')), per_step_gen_per_s: parseFloat(await page.textContent('#run-per-step .rate')),
  log: (await page.textContent('#sim-log')).trim().split('\n') };
fs.mkdirSync(out, { recursive: true });
fs.writeFileSync(path.join(out, 'browser.json'), JSON.stringify(result, null, 1) + '\n');
console.log(`browser: ${result.dispatch.per_dispatch_us} us/dispatch, CartPole fused ${result.cartpole.fused_gen_per_s} gen/s, per-step ${result.cartpole.per_step_gen_per_s} gen/s`);
await browser.close(); server.close();
