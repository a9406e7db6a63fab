// wgfuse web page: the device report, the fused simulation with a live chart, and text
// generation from a model picked from disk. Everything runs in wgfuse.wasm (web/wgfuse.js
// loads it); this file only drives it and draws. Every failure ends in the red banner with
// one line saying what went wrong: never a blank page or a spinner that never stops.
import { loadWgfuse } from './wgfuse.js';

const $ = (id) => document.getElementById(id);
const state = { w: null, device: null, busy: false, stop: false };

// What wgfuse's kernels need from an adapter (beyond WebGPU's core defaults, which every
// core adapter has; a compatibility-mode adapter may have less).
const NEEDS = [
  ['maxComputeInvocationsPerWorkgroup', 256, 'every reduction kernel runs 256-thread workgroups (common/reduce_wg)'],
  ['maxComputeWorkgroupStorageSize', 16384, 'the reductions keep 256 partial sums per workgroup'],
];
const LLM_GPU_NEEDS = [
  ['maxStorageBuffersPerShaderStage', 10, 'the roles plan\'s sampler binds 5 buffers and 5 embedding parts (src/llm/gpu/gr.h)'],
];
const unmet = (limits, needs) => needs.filter(([k, min]) => !(limits[k] >= min))
  .map(([k, min, why]) => `${k} is ${limits[k] ?? 'missing'}, needs ${min}: ${why}`);

function setStatus(text, st) { const s = $('status'); s.textContent = text; s.dataset.state = st; }
function showError(msg) {
  const e = $('error');
  e.hidden = false;
  e.textContent = msg;
  e.dataset.count = String(Number(e.dataset.count || 0) + 1);
  setStatus('error', 'error');
  console.error(`wgfuse page error: ${msg}`);
}
window.addEventListener('error', (ev) => showError(`internal error: ${ev.message}`));
window.addEventListener('unhandledrejection', (ev) => showError(`internal error: ${ev.reason && ev.reason.message || ev.reason}`));

// a call whose reply is {"error": ...} throws it
async function call(name, ...args) {
  const r = await state.w.call(name, ...args);
  if (r && r.error) throw new Error(r.error);
  return r;
}

// ---- device --------------------------------------------------------------------------------
function deviceTable(d) {
  const rows = [
    ['adapter', d.name], ['vendor / architecture', `${d.vendor} / ${d.architecture}`],
    ['backend, type', `${d.backend} (navigator.gpu), ${d.type}`],
    ['compute features', `shader-f16 ${d.f16 ? 'yes' : 'no'}, subgroups ${d.subgroups ? `yes (${d.subgroup_min}..${d.subgroup_max})` : 'no'}, timestamp-query ${d.timestamp ? 'yes' : 'no'}`],
    ['all features', d.features.join(', ')],
    ...Object.entries(d.limits).map(([k, v]) => [k, String(v)]),
  ];
  const tb = $('device-table').tBodies[0];
  tb.replaceChildren(...rows.map(([k, v]) => {
    const tr = document.createElement('tr');
    tr.append(Object.assign(document.createElement('th'), { textContent: k }), Object.assign(document.createElement('td'), { textContent: v }));
    return tr;
  }));
}

async function selfcheck() {
  const ul = $('selfcheck');
  ul.dataset.state = 'running';
  for (const [i, n] of [1, 1000, 1 << 20].entries()) {
    const r = await call('wgfw_selfcheck', n, 42 + i);
    const li = document.createElement('li');
    li.textContent = `selfcheck_saxpy n=${n}: PASS, max |gpu - c| = ${r.max_abs_err} (${r.ms.toFixed(1)} ms incl. upload/readback)`;
    ul.append(li);
  }
  ul.dataset.state = 'pass';
}

function drawLines(canvas, series, { xlabel = '', ylabel = '', ymin = null } = {}) {
  const c = canvas.getContext('2d'), W = canvas.width, H = canvas.height, L = 48, B = 28, R = 10, Tp = 10;
  c.clearRect(0, 0, W, H);
  const pts = series.flatMap((s) => s.points);
  if (!pts.length) return;
  const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs, x0 + 1);
  const y0 = ymin ?? Math.min(...ys), y1 = Math.max(...ys, y0 + 1e-9);
  const X = (x) => L + (x - x0) / (x1 - x0) * (W - L - R), Y = (y) => H - B - (y - y0) / (y1 - y0) * (H - B - Tp);
  c.strokeStyle = '#999'; c.beginPath(); c.moveTo(L, Tp); c.lineTo(L, H - B); c.lineTo(W - R, H - B); c.stroke();
  c.fillStyle = '#444'; c.font = '11px sans-serif';
  c.fillText(String(+y1.toPrecision(4)), 2, Tp + 8); c.fillText(String(+y0.toPrecision(4)), 2, H - B);
  c.fillText(String(x0), L, H - B + 14); c.fillText(String(x1), W - R - 24, H - B + 14);
  c.fillText(xlabel, W / 2 - 30, H - 4); c.save(); c.translate(10, H / 2 + 30); c.rotate(-Math.PI / 2); c.fillText(ylabel, 0, 0); c.restore();
  series.forEach((s, k) => {
    c.strokeStyle = s.color; c.lineWidth = s.width || 2; c.setLineDash(s.dash || []);
    c.beginPath(); s.points.forEach(([x, y], i) => (i ? c.lineTo(X(x), Y(y)) : c.moveTo(X(x), Y(y)))); c.stroke();
    c.setLineDash([]); c.fillStyle = s.color; c.fillText(s.label, L + 8 + 150 * k, Tp + 10);
  });
}

async function dispatch() {
  const d = $('dispatch');
  d.dataset.state = 'running'; d.textContent = 'measuring (about 20 s on a CPU adapter)…';
  const r = await call('wgfw_dispatch', 1);
  const s = r.one_pass, w = r.wait_each;
  d.textContent = `sequential: ${s.per_dispatch_us.toPrecision(3)} µs per dispatch (95% CI ${s.ci_lo.toPrecision(3)}–${s.ci_hi.toPrecision(3)}, R² ${s.r2.toFixed(3)}, ${r.reps} sweeps); ` +
    `single-op (submit + wait for one dispatch): ${w.single_op_us.toPrecision(3)} µs = ${r.single_over_sequential.toPrecision(3)}× the sequential cost`;
  d.dataset.state = 'done';
  d.dataset.perDispatchUs = String(s.per_dispatch_us);
  d.dataset.singleOpUs = String(w.single_op_us);
  drawLines($('dispatch-chart'), [{ label: 'one pass: wall time of N dispatches (µs)', color: '#1565c0', points: s.ns.map((n, i) => [n, s.t_us[i]]) }],
    { xlabel: 'dispatches N', ylabel: 'µs', ymin: 0 });
}

// ---- simulation ----------------------------------------------------------------------------
async function train() {
  const pop = Number($('sim-pop').value), seed = Number($('sim-seed').value), gens = Number($('sim-gens').value);
  if (!(pop >= 2 && pop <= 1000000) || !(seed >= 0 && seed <= 4294967295) || !(gens >= 1 && gens <= 100000))
    throw new Error('simulation: population 2..1000000, seed 0..4294967295, generations 1..100000');
  const runs = [{ slot: 0, strategy: 'fused', el: $('run-fused'), color: '#1565c0' }];
  if ($('sim-perstep').checked) runs.push({ slot: 1, strategy: 'per-step', el: $('run-per-step'), color: '#ef6c00' });
  $('run-per-step').classList.toggle('off', !$('sim-perstep').checked);
  const res = $('sim-result'), log = $('sim-log');
  res.dataset.state = 'running'; res.textContent = ''; log.textContent = '';
  for (const r of runs) {
    r.info = await call('wgfw_sim_open', r.slot, r.strategy, pop, seed);
    r.best = []; r.mean = []; r.lines = [];
    r.el.querySelector('.hint').textContent = `${r.info.dispatches_per_gen} dispatches per generation, policy ${r.info.policy}`;
  }
  state.stop = false; $('sim-stop').disabled = false;
  let agree = true, g = 0;
  for (; g < gens && !state.stop; g++) {
    for (const r of runs) {
      const s = await call('wgfw_sim_step', r.slot);
      r.best.push([s.gen, s.best]); r.mean.push([s.gen, s.mean]); r.lines.push(s.line);
      r.el.querySelector('.rate').textContent = `${s.gen_per_s.toPrecision(3)} gen/s`;
      r.el.querySelector('.last').textContent = `gen ${s.gen}: best ${s.best.toFixed(1)}, mean ${s.mean.toFixed(2)}`;
      r.rate = s.gen_per_s;
    }
    if (runs.length > 1 && runs[0].lines[g] !== runs[1].lines[g]) agree = false;
    log.textContent += runs[0].lines[g] + '\n';
    drawLines($('sim-chart'), runs.flatMap((r) => [
      { label: `${r.strategy}: mean return`, color: r.color, points: r.mean, width: r.slot ? 2 : 4, dash: r.slot ? [6, 4] : [] },
      { label: `${r.strategy}: best`, color: r.color, points: r.best, width: 1 }]), { xlabel: 'generation', ylabel: 'return', ymin: 0 });
  }
  const h = await call('wgfw_sim_hash', 0);
  log.textContent += `hash ${h.population_hash}\n`;
  res.textContent = `${g} generations, seed ${seed}, population ${pop}: population hash ${h.population_hash}` +
    (runs.length > 1 ? `; fused and per-step fitness ${agree ? 'bitwise equal every generation' : 'DIFFER'}; fused ${(runs[0].rate / runs[1].rate).toPrecision(3)}× the per-step rate` : '');
  res.dataset.state = agree ? 'done' : 'mismatch';
  $('sim-stop').disabled = true;
}

// ---- text generation -------------------------------------------------------------------------
function pickedModel() {
  const file = $('llm-file').files[0], dir = [...$('llm-dir').files];
  if (file && dir.length) throw new Error('pick either a GGUF file or a HF directory, not both');
  if (file) {
    if (!/\.gguf$/i.test(file.name)) throw new Error(`${file.name}: not a .gguf file (or pick a HF directory)`);
    return { files: [{ path: `model/${file.name}`, file }], path: `/model/${file.name}`, what: file.name };
  }
  if (dir.length) { // webkitRelativePath: "<picked dir>/sub/name"
    const files = dir.map((f) => ({ path: `model/${f.webkitRelativePath.split('/').slice(1).join('/')}`, file: f }));
    return { files, path: '/model', what: `${dir[0].webkitRelativePath.split('/')[0]}/ (${dir.length} files)` };
  }
  throw new Error('pick a model first: a .gguf file or a Hugging Face directory');
}

let loadedKey = null;
async function generate() {
  const m = pickedModel();
  const backend = $('llm-backend').value, n = Number($('llm-n').value), prompt = $('llm-prompt').value;
  if (!(n >= 1 && n <= 4096)) throw new Error('tokens: 1..4096');
  if (backend === 'gpu') {
    const bad = unmet(state.device.limits, LLM_GPU_NEEDS);
    if (bad.length) throw new Error(`the gpu backend cannot run on this adapter: ${bad.join('; ')}; choose cpu-ref`);
  }
  const info = $('llm-model'), out = $('llm-out'), rate = $('llm-rate');
  out.dataset.state = 'running'; out.textContent = ''; rate.textContent = '';
  const key = m.files.map((f) => `${f.path}:${f.file.size}:${f.file.lastModified}`).join('|');
  if (key !== loadedKey) {
    loadedKey = null;
    info.dataset.state = 'loading'; info.textContent = `loading ${m.what}…`;
    state.w.mount(m.files);
    let r;
    try { r = await call('wgfw_llm_load', m.path); } catch (e) { info.dataset.state = 'error'; info.textContent = ''; out.dataset.state = 'error'; throw new Error(`${m.what}: ${e.message}`); }
    loadedKey = key;
    state.vocab = r.vocab;
    info.dataset.state = 'loaded';
    info.textContent = `${m.what}: ${r.arch}, ${r.layers} layers, dim ${r.dim}, ${r.heads}/${r.kv_heads} heads, vocabulary ${r.vocab}, ${r.dtype} weights, context ${r.ctx}`;
  }
  const t0 = performance.now();
  let first = 0;
  state.w.setOnText((t) => { if (!first) first = performance.now(); out.textContent += t; });
  try {
    // a small model's logits come back too (hidden; tests/web compares them with cpu-ref's)
    const r = await call('wgfw_llm_generate', backend, prompt, n, state.vocab * n <= 65536 ? 1 : 0);
    $('llm-ids').textContent = JSON.stringify({ prompt_ids: r.prompt_ids, ids: r.ids, n_vocab: r.n_vocab, logits: r.logits });
    rate.textContent = `${r.backend}: ${r.n_prompt} prompt tokens at ${r.prefill_tok_s.toPrecision(3)} tok/s, ` +
      `${r.n_generated} generated at ${r.decode_tok_s.toPrecision(3)} tok/s (decode), first token after ${(r.ttft_s * 1e3).toFixed(0)} ms; stop: ${r.stop}`;
    out.dataset.state = 'done';
  } catch (e) { out.dataset.state = 'error'; throw e; } finally { state.w.setOnText(() => {}); }
}

// ---- plumbing ------------------------------------------------------------------------------
function button(id, fn) {
  $(id).addEventListener('click', async () => {
    if (state.busy) return;
    state.busy = true;
    document.querySelectorAll('button').forEach((b) => { if (b.id !== 'sim-stop') b.disabled = true; });
    try { await fn(); } catch (e) { showError(e.message); }
    state.busy = false;
    document.querySelectorAll('button').forEach((b) => { if (b.id !== 'sim-stop') b.disabled = !state.device; });
  });
}

async function main() {
  try {
    state.w = await loadWgfuse('./wgfuse.wasm', { log: (s) => console.log(`wgfuse: ${s}`) });
  } catch (e) { showError(e.message); return; }
  try {
    setStatus('opening the WebGPU device…', 'loading');
    await call('wgfw_open');
    state.device = await call('wgfw_device');
    deviceTable(state.device);
    const bad = unmet(state.device.limits, NEEDS);
    if (bad.length) {
      state.device = null;
      throw new Error(`this adapter (${$('device-table').rows[0]?.cells[1]?.textContent}) cannot run wgfuse's kernels: ${bad.join('; ')}`);
    }
    setStatus('self-check…', 'loading');
    await selfcheck();
    setStatus(`ready: ${state.device.name}`, 'ready');
  } catch (e) { showError(e.message); return; }
  button('dispatch-run', dispatch);
  button('sim-run', train);
  $('sim-stop').addEventListener('click', () => { state.stop = true; });
  button('llm-run', generate);
  document.querySelectorAll('button').forEach((b) => { if (b.id !== 'sim-stop') b.disabled = false; });
  document.body.dataset.ready = '1';
}
main();
