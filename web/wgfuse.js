// wgfuse web host: loads wgfuse.wasm (the C core built for wasm32-wasi) and gives it
//   - the WebGPU C API it imports (module "wgpu", the functions src/gpu/wgpu_abi.h lists),
//     implemented over navigator.gpu with a handle table for the objects and the
//     descriptors read from wasm memory by wgpu_abi.h's struct layouts (checked against the
//     C compiler's offsets at start-up: wgfw_abi_layout);
//   - the few WASI calls wasi-libc makes (clock, stdout/stderr, random, environment).
//
// Waiting. The runtime waits the way it does natively: it registers a callback
// (AllowProcessEvents mode) and polls wgpuInstanceProcessEvents until the callback has run
// (src/gpu/context.c). Here every asynchronous WebGPU call (requestAdapter, requestDevice,
// mapAsync, popErrorScope, getCompilationInfo) starts its promise and returns a future;
// wgpuInstanceProcessEvents is a JSPI import (WebAssembly.Suspending): when nothing has
// settled yet it suspends the wasm stack until the next promise settles (or 4 ms pass, so
// the runtime's own timeouts still tick), then runs the settled callbacks in order. Every
// export that can wait is called through WebAssembly.promising. JSPI rather than an async
// rewrite of the runtime: the C code, its waits, timeouts and error paths stay the ones the
// native build tests, and only this file knows it runs in a browser. Callbacks are run
// only from inside ProcessEvents, never from a promise's own continuation, so C never
// re-enters itself.

const WHOLE_SIZE = 0xffffffffffffffffn;
const SIZE_MAX32 = 0xffffffff;
const U32_UNDEF = 0xffffffff;

// ---- struct layouts (wasm32: pointers and size_t 4 bytes, uint64_t/double aligned to 8) ----
const T = { ptr: [4, 4], u32: [4, 4], i32: [4, 4], u64: [8, 8], f64: [8, 8], sv: [8, 4] };
function layout(fields) {
  const L = {}; let off = 0, align = 1;
  for (const [name, type] of fields) {
    const [size, al] = typeof type === 'string' ? T[type] : [type.$size, type.$align];
    off = (off + al - 1) & ~(al - 1);
    L[name] = off; off += size; align = Math.max(align, al);
  }
  L.$size = (off + align - 1) & ~(align - 1); L.$align = align;
  return L;
}
const CallbackInfo = layout([['next', 'ptr'], ['mode', 'u32'], ['callback', 'ptr'], ['u1', 'ptr'], ['u2', 'ptr']]);
const UncapturedInfo = layout([['next', 'ptr'], ['callback', 'ptr'], ['u1', 'ptr'], ['u2', 'ptr']]);
const QueueDesc = layout([['next', 'ptr'], ['label', 'sv']]);
const AdapterOptions = layout([['next', 'ptr'], ['featureLevel', 'u32'], ['powerPreference', 'u32'],
  ['forceFallbackAdapter', 'u32'], ['backendType', 'u32'], ['compatibleSurface', 'ptr']]);
const AdapterInfo = layout([['next', 'ptr'], ['vendor', 'sv'], ['architecture', 'sv'], ['device', 'sv'],
  ['description', 'sv'], ['backendType', 'u32'], ['adapterType', 'u32'], ['vendorID', 'u32'], ['deviceID', 'u32'],
  ['subgroupMinSize', 'u32'], ['subgroupMaxSize', 'u32']]);
const LIMIT_FIELDS = [
  ['maxTextureDimension1D', 'u32'], ['maxTextureDimension2D', 'u32'], ['maxTextureDimension3D', 'u32'],
  ['maxTextureArrayLayers', 'u32'], ['maxBindGroups', 'u32'], ['maxBindGroupsPlusVertexBuffers', 'u32'],
  ['maxBindingsPerBindGroup', 'u32'], ['maxDynamicUniformBuffersPerPipelineLayout', 'u32'],
  ['maxDynamicStorageBuffersPerPipelineLayout', 'u32'], ['maxSampledTexturesPerShaderStage', 'u32'],
  ['maxSamplersPerShaderStage', 'u32'], ['maxStorageBuffersPerShaderStage', 'u32'],
  ['maxStorageTexturesPerShaderStage', 'u32'], ['maxUniformBuffersPerShaderStage', 'u32'],
  ['maxUniformBufferBindingSize', 'u64'], ['maxStorageBufferBindingSize', 'u64'],
  ['minUniformBufferOffsetAlignment', 'u32'], ['minStorageBufferOffsetAlignment', 'u32'], ['maxVertexBuffers', 'u32'],
  ['maxBufferSize', 'u64'], ['maxVertexAttributes', 'u32'], ['maxVertexBufferArrayStride', 'u32'],
  ['maxInterStageShaderVariables', 'u32'], ['maxColorAttachments', 'u32'], ['maxColorAttachmentBytesPerSample', 'u32'],
  ['maxComputeWorkgroupStorageSize', 'u32'], ['maxComputeInvocationsPerWorkgroup', 'u32'],
  ['maxComputeWorkgroupSizeX', 'u32'], ['maxComputeWorkgroupSizeY', 'u32'], ['maxComputeWorkgroupSizeZ', 'u32'],
  ['maxComputeWorkgroupsPerDimension', 'u32']];
const Limits = layout([['next', 'ptr'], ...LIMIT_FIELDS]);
const SupportedFeatures = layout([['count', 'ptr'], ['features', 'ptr']]);
const DeviceDesc = layout([['next', 'ptr'], ['label', 'sv'], ['requiredFeatureCount', 'ptr'],
  ['requiredFeatures', 'ptr'], ['requiredLimits', 'ptr'], ['defaultQueue', QueueDesc],
  ['deviceLostCallbackInfo', CallbackInfo], ['uncapturedErrorCallbackInfo', UncapturedInfo]]);
const BufferDesc = layout([['next', 'ptr'], ['label', 'sv'], ['usage', 'u64'], ['size', 'u64'],
  ['mappedAtCreation', 'u32']]);
const ShaderModuleDesc = layout([['next', 'ptr'], ['label', 'sv']]);
const Chained = layout([['next', 'ptr'], ['sType', 'u32']]);
const ShaderSourceWGSL = layout([['chain', Chained], ['code', 'sv']]);
const CompilationMessage = layout([['next', 'ptr'], ['message', 'sv'], ['type', 'u32'], ['lineNum', 'u64'],
  ['linePos', 'u64'], ['offset', 'u64'], ['length', 'u64']]);
const ConstantEntry = layout([['next', 'ptr'], ['key', 'sv'], ['value', 'f64']]);
const ComputeState = layout([['next', 'ptr'], ['module', 'ptr'], ['entryPoint', 'sv'], ['constantCount', 'ptr'],
  ['constants', 'ptr']]);
const PipelineDesc = layout([['next', 'ptr'], ['label', 'sv'], ['layout', 'ptr'], ['compute', ComputeState]]);
const BindGroupEntry = layout([['next', 'ptr'], ['binding', 'u32'], ['buffer', 'ptr'], ['offset', 'u64'],
  ['size', 'u64'], ['sampler', 'ptr'], ['textureView', 'ptr']]);
const BindGroupDesc = layout([['next', 'ptr'], ['label', 'sv'], ['layout', 'ptr'], ['entryCount', 'ptr'],
  ['entries', 'ptr']]);
const LabelDesc = layout([['next', 'ptr'], ['label', 'sv']]);
const PassDesc = layout([['next', 'ptr'], ['label', 'sv'], ['timestampWrites', 'ptr']]);
const TimestampWrites = layout([['next', 'ptr'], ['querySet', 'ptr'], ['begin', 'u32'], ['end', 'u32']]);
const QuerySetDesc = layout([['next', 'ptr'], ['label', 'sv'], ['type', 'u32'], ['count', 'u32']]);

// What the C compiler says (wgfw_abi_layout) against the table above: a mismatch is a bug
// here, reported before anything runs.
const EXPECTED = {
  'WGPUAdapterInfo.subgroupMaxSize': AdapterInfo.subgroupMaxSize,
  'WGPULimits.maxUniformBufferBindingSize': Limits.maxUniformBufferBindingSize,
  'WGPULimits.maxBufferSize': Limits.maxBufferSize,
  'WGPULimits.maxComputeWorkgroupsPerDimension': Limits.maxComputeWorkgroupsPerDimension,
  'WGPUDeviceDescriptor.deviceLostCallbackInfo': DeviceDesc.deviceLostCallbackInfo,
  'WGPUDeviceDescriptor.uncapturedErrorCallbackInfo': DeviceDesc.uncapturedErrorCallbackInfo,
  'WGPUBufferDescriptor.usage': BufferDesc.usage, 'WGPUBufferDescriptor.mappedAtCreation': BufferDesc.mappedAtCreation,
  'WGPUComputePipelineDescriptor.compute': PipelineDesc.compute, 'WGPUComputeState.constants': ComputeState.constants,
  'WGPUConstantEntry.value': ConstantEntry.value, 'WGPUBindGroupEntry.offset': BindGroupEntry.offset,
  'WGPUBindGroupEntry.size': BindGroupEntry.size, 'WGPUBindGroupDescriptor.entries': BindGroupDesc.entries,
  'WGPUComputePassDescriptor.timestampWrites': PassDesc.timestampWrites,
  'WGPUQuerySetDescriptor.count': QuerySetDesc.count, 'WGPUCompilationMessage.lineNum': CompilationMessage.lineNum,
  'WGPUCompilationMessage.length': CompilationMessage.length, 'WGPUShaderSourceWGSL.code': ShaderSourceWGSL.code,
  'WGPURequestAdapterOptions.backendType': AdapterOptions.backendType,
  'WGPUPassTimestampWrites.endOfPassWriteIndex': TimestampWrites.end,
  'sizeof.WGPULimits': Limits.$size, 'sizeof.WGPUCompilationMessage': CompilationMessage.$size,
  'sizeof.WGPUBindGroupEntry': BindGroupEntry.$size,
};

// WGPUFeatureName values of the 2025 ABI <-> the JS names
const FEATURES = { 1: 'depth-clip-control', 2: 'depth32float-stencil8', 3: 'timestamp-query',
  4: 'texture-compression-bc', 5: 'texture-compression-bc-sliced-3d', 6: 'texture-compression-etc2',
  7: 'texture-compression-astc', 8: 'texture-compression-astc-sliced-3d', 9: 'indirect-first-instance',
  10: 'shader-f16', 11: 'rg11b10ufloat-renderable', 12: 'bgra8unorm-storage', 13: 'float32-filterable',
  14: 'float32-blendable', 15: 'clip-distances', 16: 'dual-source-blending', 17: 'subgroups' };
const FEATURE_IDS = Object.fromEntries(Object.entries(FEATURES).map(([k, v]) => [v, Number(k)]));

const ERR = { validation: 2, oom: 3, internal: 4, unknown: 5 };
function errorType(e) {
  if (!e) return 1;
  if (typeof GPUValidationError !== 'undefined' && e instanceof GPUValidationError) return ERR.validation;
  if (typeof GPUOutOfMemoryError !== 'undefined' && e instanceof GPUOutOfMemoryError) return ERR.oom;
  if (typeof GPUInternalError !== 'undefined' && e instanceof GPUInternalError) return ERR.internal;
  return ERR.unknown;
}

export class WgfuseError extends Error {}

export async function loadWgfuse(wasmUrl, { log = () => {}, stdout = null } = {}) {
  if (typeof WebAssembly.Suspending !== 'function' || typeof WebAssembly.promising !== 'function')
    throw new WgfuseError('this browser has no WebAssembly JSPI (WebAssembly.Suspending / promising): ' +
      'wgfuse needs Chromium 137 or newer');
  if (!navigator.gpu) throw new WgfuseError('this browser has no WebGPU (navigator.gpu is missing): ' +
    'use Chromium with WebGPU enabled');

  let mem = null, ex = null;
  const dv = () => new DataView(mem.buffer);
  const u8 = () => new Uint8Array(mem.buffer);
  const td = new TextDecoder(), te = new TextEncoder();
  const cstr = (p) => { const a = u8(); let e = p; while (a[e]) e++; return td.decode(a.subarray(p, e)); };
  const sv = (p) => { // a WGPUStringView at p
    const d = dv(), data = d.getUint32(p, true), len = d.getUint32(p + 4, true);
    if (!data) return null;
    return len === SIZE_MAX32 ? cstr(data) : td.decode(u8().subarray(data, data + len));
  };
  const u32 = (p) => dv().getUint32(p, true);
  const u64 = (p) => dv().getBigUint64(p, true);
  const num64 = (x) => Number(BigInt.asUintN(64, BigInt(x)));
  const alloc = (n) => { const p = ex.wgfw_malloc(n); if (!p) throw new WgfuseError('wasm out of memory'); return p; };
  const allocStr = (s) => { const b = te.encode(s ?? ''); const p = alloc(b.length + 1); u8().set(b, p); u8()[p + b.length] = 0; return [p, b.length]; };

  // ---- handles: 0 is NULL; objects live until released -------------------------------------
  const objs = [null]; const free = [];
  const put = (o) => { if (o == null) return 0; const h = free.length ? free.pop() : objs.length; objs[h] = o; return h; };
  const get = (h) => objs[h];
  const drop = (h) => { if (h && objs[h] !== undefined) { objs[h] = undefined; free.push(h); } };

  // ---- pending work and callbacks ------------------------------------------------------------
  // Releasing the instance drops the callbacks still pending (epoch): the C side frees their
  // targets right after (wgf__parking_free), as Dawn cancels them then natively.
  let nextFuture = 1n, epoch = 0;
  const pending = new Set();       // promises not yet settled
  const ready = [];                // callbacks to run in the next ProcessEvents
  const track = (promise, onSettle) => {
    const id = nextFuture++, ep = epoch;
    const p = promise.then((v) => ({ ok: true, v }), (e) => ({ ok: false, e }))
      .then((r) => { pending.delete(p); if (ep === epoch) ready.push(() => onSettle(r)); });
    pending.add(p);
    return id;
  };
  const table = () => ex.__indirect_function_table;
  const withMsg = (msg, fn) => { // msg into wasm memory for the length of one callback
    if (msg == null || msg === '') return fn(0, 0);
    const [p, n] = allocStr(String(msg));
    try { return fn(p, n); } finally { ex.wgfw_free(p); }
  };
  const cbInfo = (p) => ({ cb: u32(p + CallbackInfo.callback), u1: u32(p + CallbackInfo.u1), u2: u32(p + CallbackInfo.u2) });

  const mapped = new Map();        // buffer handle -> [wasm copies of mapped ranges]
  const devices = new Map();       // device handle -> {lost, uncaptured}

  const processEvents = async () => {
    if (!ready.length && pending.size) {
      let timer;
      await Promise.race([...pending, new Promise((r) => { timer = setTimeout(r, 4); })]);
      clearTimeout(timer);
      await null; // let the .then that moves a settled promise into `ready` run
    }
    while (ready.length) ready.shift()();
  };

  const wgpu = {
    wgpuCreateInstance: () => put({ kind: 'instance' }),
    wgpuInstanceRequestAdapter: (inst, opts, info) => {
      const o = {};
      if (opts) {
        const pp = u32(opts + AdapterOptions.powerPreference);
        if (pp === 1) o.powerPreference = 'low-power'; else if (pp === 2) o.powerPreference = 'high-performance';
        if (u32(opts + AdapterOptions.forceFallbackAdapter)) o.forceFallbackAdapter = true;
        if (u32(opts + AdapterOptions.featureLevel) === 1) o.featureLevel = 'compatibility';
      }
      const { cb, u1, u2 } = cbInfo(info);
      return track(navigator.gpu.requestAdapter(o), (r) => {
        const a = r.ok ? r.v : null;
        const st = a ? 1 : r.ok ? 3 : 4;
        withMsg(a ? '' : r.ok ? 'no adapter for these options' : String(r.e),
          (mp, mn) => ex.wgfw_cb_adapter(cb, st, put(a), mp, mn, u1, u2));
      });
    },
    wgpuInstanceProcessEvents: new WebAssembly.Suspending(processEvents),
    wgpuInstanceRelease: (h) => { epoch++; ready.length = 0; pending.clear(); drop(h); },
    wgpuAdapterGetInfo: (h, out) => {
      const a = get(h), i = a.info || {};
      const d = dv();
      // browsers hide the device's name (fingerprinting); name it by vendor and architecture
      const named = { vendor: i.vendor, architecture: i.architecture, description: i.description,
        device: i.device || i.description || `${i.vendor || 'unknown'} ${i.architecture || 'adapter'}` };
      for (const k of ['vendor', 'architecture', 'device', 'description']) {
        const [p, n] = allocStr(named[k] || '');
        d.setUint32(out + AdapterInfo[k], p, true); d.setUint32(out + AdapterInfo[k] + 4, n, true);
      }
      d.setUint32(out + AdapterInfo.backendType, 2, true); // WGPUBackendType_WebGPU
      // the page cannot see the adapter's type; a software rasteriser (SwiftShader) or a
      // fallback adapter is a CPU one, everything else unknown
      const cpu = i.isFallbackAdapter || /swiftshader|llvmpipe|lavapipe/i.test(`${i.architecture} ${i.description}`);
      d.setUint32(out + AdapterInfo.adapterType, cpu ? 3 : 4, true);
      d.setUint32(out + AdapterInfo.vendorID, 0, true); d.setUint32(out + AdapterInfo.deviceID, 0, true);
      d.setUint32(out + AdapterInfo.subgroupMinSize, i.subgroupMinSize || 0, true);
      d.setUint32(out + AdapterInfo.subgroupMaxSize, i.subgroupMaxSize || 0, true);
      return 1;
    },
    wgpuAdapterInfoFreeMembers: (info) => { // by value: a pointer to the copy
      for (const k of ['vendor', 'architecture', 'device', 'description']) ex.wgfw_free(u32(info + AdapterInfo[k]));
    },
    wgpuAdapterGetLimits: (h, out) => { writeLimits(get(h).limits, out); return 1; },
    wgpuAdapterGetFeatures: (h, out) => {
      const ids = [...get(h).features].map((n) => FEATURE_IDS[n]).filter((x) => x);
      const p = ids.length ? alloc(4 * ids.length) : 0;
      ids.forEach((v, k) => dv().setUint32(p + 4 * k, v, true));
      dv().setUint32(out + SupportedFeatures.count, ids.length, true); dv().setUint32(out + SupportedFeatures.features, p, true);
    },
    wgpuSupportedFeaturesFreeMembers: (sf) => ex.wgfw_free(u32(sf + SupportedFeatures.features)),
    wgpuAdapterHasFeature: (h, f) => (FEATURES[f] && get(h).features.has(FEATURES[f]) ? 1 : 0),
    wgpuAdapterRequestDevice: (h, desc, info) => {
      const a = get(h);
      const d = { label: sv(desc + DeviceDesc.label) || undefined, requiredFeatures: [], requiredLimits: {} };
      const nf = u32(desc + DeviceDesc.requiredFeatureCount), fp = u32(desc + DeviceDesc.requiredFeatures);
      for (let k = 0; k < nf; k++) { const n = FEATURES[u32(fp + 4 * k)]; if (n) d.requiredFeatures.push(n); }
      const lp = u32(desc + DeviceDesc.requiredLimits);
      if (lp) for (const [name, type] of LIMIT_FIELDS) {
        if (!(name in a.limits)) continue;
        const v = type === 'u64' ? u64(lp + Limits[name]) : BigInt(u32(lp + Limits[name]));
        if (v === WHOLE_SIZE || (type === 'u32' && v === BigInt(U32_UNDEF)) || v === 0n) continue;
        d.requiredLimits[name] = Number(v);
      }
      const lost = cbInfo(desc + DeviceDesc.deviceLostCallbackInfo);
      const unc = { cb: u32(desc + DeviceDesc.uncapturedErrorCallbackInfo + UncapturedInfo.callback),
        u1: u32(desc + DeviceDesc.uncapturedErrorCallbackInfo + UncapturedInfo.u1),
        u2: u32(desc + DeviceDesc.uncapturedErrorCallbackInfo + UncapturedInfo.u2) };
      const { cb, u1, u2 } = cbInfo(info);
      return track(a.requestDevice(d), (r) => {
        if (!r.ok) {
          withMsg(String(r.e && r.e.message || r.e), (mp, mn) => ex.wgfw_cb_device(cb, 3, 0, mp, mn, u1, u2));
          return;
        }
        const dev = r.v, dh = put(dev);
        const state = { released: false };
        devices.set(dh, state);
        // after wgpuDeviceRelease the C context is gone: its callbacks must not run
        if (unc.cb) dev.addEventListener('uncapturederror', (ev) => {
          if (!state.released) ready.push(() => state.released || withMsg(ev.error.message, (mp, mn) =>
            ex.wgfw_cb_uncaptured(unc.cb, dh, errorType(ev.error), mp, mn, unc.u1, unc.u2)));
        });
        if (lost.cb) track(dev.lost, (lr) => {
          if (state.released) return;
          const info2 = lr.ok ? lr.v : { reason: 'unknown', message: String(lr.e) };
          const reason = info2.reason === 'destroyed' ? 2 : 1;
          withMsg(info2.message, (mp, mn) => ex.wgfw_cb_lost(lost.cb, dh, reason, mp, mn, lost.u1, lost.u2));
        });
        withMsg('', (mp, mn) => ex.wgfw_cb_device(cb, 1, dh, mp, mn, u1, u2));
      });
    },
    wgpuAdapterRelease: drop,
    wgpuDeviceGetQueue: (h) => put(get(h).queue),
    wgpuDeviceGetLimits: (h, out) => { writeLimits(get(h).limits, out); return 1; },
    wgpuDeviceHasFeature: (h, f) => (FEATURES[f] && get(h).features.has(FEATURES[f]) ? 1 : 0),
    wgpuDeviceCreateBuffer: (h, desc) => {
      try {
        return put(get(h).createBuffer({ label: sv(desc + BufferDesc.label) || undefined,
          usage: num64(u64(desc + BufferDesc.usage)), size: num64(u64(desc + BufferDesc.size)),
          mappedAtCreation: !!u32(desc + BufferDesc.mappedAtCreation) }));
      } catch (e) { log(`createBuffer: ${e.message}`); return 0; }
    },
    wgpuDeviceCreateShaderModule: (h, desc) => {
      let c = u32(desc + ShaderModuleDesc.next), code = null;
      while (c) { if (u32(c + Chained.sType) === 2) code = sv(c + ShaderSourceWGSL.code); c = u32(c + Chained.next); }
      return put(get(h).createShaderModule({ label: sv(desc + ShaderModuleDesc.label) || undefined, code: code ?? '' }));
    },
    wgpuDeviceCreateComputePipeline: (h, desc) => {
      const cs = desc + PipelineDesc.compute, constants = {};
      const n = u32(cs + ComputeState.constantCount), cp = u32(cs + ComputeState.constants);
      for (let k = 0; k < n; k++) {
        const e = cp + k * ConstantEntry.$size;
        constants[sv(e + ConstantEntry.key)] = dv().getFloat64(e + ConstantEntry.value, true);
      }
      const layoutH = u32(desc + PipelineDesc.layout);
      return put(get(h).createComputePipeline({ label: sv(desc + PipelineDesc.label) || undefined,
        layout: layoutH ? get(layoutH) : 'auto',
        compute: { module: get(u32(cs + ComputeState.module)), entryPoint: sv(cs + ComputeState.entryPoint) ?? undefined, constants } }));
    },
    wgpuDeviceCreateBindGroup: (h, desc) => {
      const n = u32(desc + BindGroupDesc.entryCount), ep = u32(desc + BindGroupDesc.entries), entries = [];
      for (let k = 0; k < n; k++) {
        const e = ep + k * BindGroupEntry.$size, size = u64(e + BindGroupEntry.size);
        const res = { buffer: get(u32(e + BindGroupEntry.buffer)), offset: num64(u64(e + BindGroupEntry.offset)) };
        if (size !== WHOLE_SIZE) res.size = num64(size);
        entries.push({ binding: u32(e + BindGroupEntry.binding), resource: res });
      }
      return put(get(h).createBindGroup({ label: sv(desc + BindGroupDesc.label) || undefined,
        layout: get(u32(desc + BindGroupDesc.layout)), entries }));
    },
    wgpuDeviceCreateCommandEncoder: (h, desc) =>
      put(get(h).createCommandEncoder(desc ? { label: sv(desc + LabelDesc.label) || undefined } : {})),
    wgpuDeviceCreateQuerySet: (h, desc) => {
      try {
        return put(get(h).createQuerySet({ label: sv(desc + QuerySetDesc.label) || undefined,
          type: u32(desc + QuerySetDesc.type) === 2 ? 'timestamp' : 'occlusion', count: u32(desc + QuerySetDesc.count) }));
      } catch (e) { log(`createQuerySet: ${e.message}`); return 0; }
    },
    wgpuDevicePushErrorScope: (h, filter) =>
      get(h).pushErrorScope(filter === 2 ? 'out-of-memory' : filter === 3 ? 'internal' : 'validation'),
    wgpuDevicePopErrorScope: (h, info) => {
      const { cb, u1, u2 } = cbInfo(info);
      return track(get(h).popErrorScope(), (r) => withMsg(r.ok ? r.v && r.v.message : String(r.e),
        (mp, mn) => ex.wgfw_cb_pop(cb, r.ok ? 1 : 3, r.ok ? errorType(r.v) : ERR.unknown, mp, mn, u1, u2)));
    },
    wgpuDeviceDestroy: (h) => get(h).destroy(),
    wgpuDeviceRelease: (h) => { const s = devices.get(h); if (s) s.released = true; devices.delete(h); drop(h); },
    wgpuQueueSubmit: (q, n, p) => {
      const cbs = []; for (let k = 0; k < n; k++) cbs.push(get(u32(p + 4 * k)));
      get(q).submit(cbs);
    },
    wgpuQueueWriteBuffer: (q, b, off, data, size) => get(q).writeBuffer(get(b), num64(off), mem.buffer, data, size),
    wgpuQueueRelease: drop,
    wgpuBufferMapAsync: (b, mode, off, size, info) => {
      const { cb, u1, u2 } = cbInfo(info);
      const buf = get(b);
      let p;
      try {
        p = size === SIZE_MAX32 ? buf.mapAsync(GPUMapMode.READ, off) : buf.mapAsync(GPUMapMode.READ, off, size);
      } catch (e) { p = Promise.reject(e); }
      return track(p, (r) => withMsg(r.ok ? '' : String(r.e && r.e.message || r.e),
        (mp, mn) => ex.wgfw_cb_map(cb, r.ok ? 1 : (r.e && r.e.name === 'AbortError' ? 4 : 3), mp, mn, u1, u2)));
    },
    wgpuBufferGetConstMappedRange: (b, off, size) => {
      let ab;
      try { ab = size === SIZE_MAX32 ? get(b).getMappedRange(off) : get(b).getMappedRange(off, size); } catch (e) { log(`getMappedRange: ${e.message}`); return 0; }
      const p = alloc(Math.max(ab.byteLength, 1));
      u8().set(new Uint8Array(ab), p);
      if (!mapped.has(b)) mapped.set(b, []);
      mapped.get(b).push(p);
      return p;
    },
    wgpuBufferUnmap: (b) => { for (const p of mapped.get(b) || []) ex.wgfw_free(p); mapped.delete(b); get(b).unmap(); },
    wgpuBufferDestroy: (b) => get(b).destroy(),
    wgpuBufferRelease: (b) => { for (const p of mapped.get(b) || []) ex.wgfw_free(p); mapped.delete(b); drop(b); },
    wgpuShaderModuleGetCompilationInfo: (h, info) => {
      const { cb, u1, u2 } = cbInfo(info);
      return track(get(h).getCompilationInfo(), (r) => {
        const ms = r.ok ? r.v.messages : [];
        const n = ms.length, arr = n ? alloc(n * CompilationMessage.$size) : 0, strs = [];
        const d = dv();
        ms.forEach((m, k) => {
          const e = arr + k * CompilationMessage.$size;
          const [p, len] = allocStr(m.message); strs.push(p);
          d.setUint32(e, 0, true); d.setUint32(e + CompilationMessage.message, p, true);
          d.setUint32(e + CompilationMessage.message + 4, len, true);
          d.setUint32(e + CompilationMessage.type, m.type === 'error' ? 1 : m.type === 'warning' ? 2 : 3, true);
          d.setBigUint64(e + CompilationMessage.lineNum, BigInt(m.lineNum), true);
          d.setBigUint64(e + CompilationMessage.linePos, BigInt(m.linePos), true);
          d.setBigUint64(e + CompilationMessage.offset, BigInt(m.offset), true);
          d.setBigUint64(e + CompilationMessage.length, BigInt(m.length), true);
        });
        try { ex.wgfw_cb_compilation(cb, r.ok ? 1 : 2, arr, n, u1, u2); } finally {
          strs.forEach((p) => ex.wgfw_free(p)); if (arr) ex.wgfw_free(arr);
        }
      });
    },
    wgpuShaderModuleRelease: drop,
    wgpuComputePipelineGetBindGroupLayout: (h, i) => put(get(h).getBindGroupLayout(i)),
    wgpuComputePipelineRelease: drop,
    wgpuBindGroupLayoutRelease: drop,
    wgpuBindGroupRelease: drop,
    wgpuCommandEncoderBeginComputePass: (h, desc) => {
      const d = {};
      if (desc) {
        d.label = sv(desc + PassDesc.label) || undefined;
        const tw = u32(desc + PassDesc.timestampWrites);
        if (tw) {
          d.timestampWrites = { querySet: get(u32(tw + TimestampWrites.querySet)) };
          const b = u32(tw + TimestampWrites.begin), e = u32(tw + TimestampWrites.end);
          if (b !== U32_UNDEF) d.timestampWrites.beginningOfPassWriteIndex = b;
          if (e !== U32_UNDEF) d.timestampWrites.endOfPassWriteIndex = e;
        }
      }
      return put(get(h).beginComputePass(d));
    },
    wgpuCommandEncoderCopyBufferToBuffer: (h, s, so, d, dof, n) =>
      get(h).copyBufferToBuffer(get(s), num64(so), get(d), num64(dof), num64(n)),
    wgpuCommandEncoderClearBuffer: (h, b, off, size) =>
      (size === WHOLE_SIZE ? get(h).clearBuffer(get(b), num64(off)) : get(h).clearBuffer(get(b), num64(off), num64(size))),
    wgpuCommandEncoderResolveQuerySet: (h, qs, first, count, dst, off) =>
      get(h).resolveQuerySet(get(qs), first, count, get(dst), num64(off)),
    wgpuCommandEncoderFinish: (h, desc) => put(get(h).finish(desc ? { label: sv(desc + LabelDesc.label) || undefined } : {})),
    wgpuCommandEncoderRelease: drop,
    wgpuComputePassEncoderSetPipeline: (h, p) => get(h).setPipeline(get(p)),
    wgpuComputePassEncoderSetBindGroup: (h, i, bg, n, offs) => {
      if (!n) return get(h).setBindGroup(i, get(bg));
      return get(h).setBindGroup(i, get(bg), new Uint32Array(mem.buffer, offs, n).slice());
    },
    wgpuComputePassEncoderDispatchWorkgroups: (h, x, y, z) => get(h).dispatchWorkgroups(x, y, z),
    wgpuComputePassEncoderDispatchWorkgroupsIndirect: (h, b, off) => get(h).dispatchWorkgroupsIndirect(get(b), num64(off)),
    wgpuComputePassEncoderEnd: (h) => get(h).end(),
    wgpuComputePassEncoderRelease: drop,
    wgpuCommandBufferRelease: drop,
    wgpuQuerySetDestroy: (h) => get(h).destroy(),
    wgpuQuerySetRelease: drop,
  };

  function writeLimits(lim, out) {
    const d = dv();
    d.setUint32(out, 0, true);
    for (const [name, type] of LIMIT_FIELDS) {
      const v = lim[name];
      if (type === 'u64') d.setBigUint64(out + Limits[name], v === undefined ? WHOLE_SIZE : BigInt(v), true);
      else d.setUint32(out + Limits[name], v === undefined ? U32_UNDEF : v, true);
    }
  }

  // ---- WASI: what wasi-libc calls --------------------------------------------------------------
  // Files: a read-only tree of File objects the user picked (mount()), under the preopened
  // directory "/" (fd 3). Reads are asynchronous in a page (File.slice().arrayBuffer()), so
  // fd_read / fd_pread are JSPI imports too: the C code's read()/pread()/mmap() (wasi-libc
  // emulates mmap with pread) suspend until the bytes are there.
  const E = { BADF: 8, INVAL: 28, IO: 29, ISDIR: 31, NOENT: 44, NOSYS: 52, NOTDIR: 54, ROFS: 69, SPIPE: 70 };
  let tree = new Map();            // "dir/name" -> File, plus directories as null
  const fds = new Map();           // fd -> {file, path, pos, dir}
  let nextFd = 4;
  const norm = (p) => p.split('/').filter((x) => x && x !== '.').join('/');
  const isDir = (p) => p === '' || [...tree.keys()].some((k) => k.startsWith(p + '/'));
  const fileOf = (fd) => { const f = fds.get(fd); return f && !f.dir ? f : null; };
  const writeStat = (buf, size, dir) => {
    u8().fill(0, buf, buf + 64);
    dv().setUint8(buf + 16, dir ? 3 : 4); dv().setBigUint64(buf + 24, 1n, true); dv().setBigUint64(buf + 32, BigInt(size), true);
  };
  const readInto = async (f, iovs, n, pos) => {
    let total = 0;
    for (let k = 0; k < n; k++) {
      const p = u32(iovs + 8 * k), len = u32(iovs + 8 * k + 4);
      const end = Math.min(pos + total + len, f.file.size);
      if (end <= pos + total) break;
      const ab = await f.file.slice(pos + total, end).arrayBuffer();
      u8().set(new Uint8Array(ab), p); total += ab.byteLength;
      if (ab.byteLength < len) break;
    }
    return total;
  };
  const lines = { 1: '', 2: '' };
  const wasi = {
    clock_time_get: (id, prec, out) => {
      const ns = id === 0 ? BigInt(Date.now()) * 1000000n : BigInt(Math.round(performance.now() * 1e6));
      dv().setBigUint64(out, ns, true); return 0;
    },
    clock_res_get: (id, out) => { dv().setBigUint64(out, 1000n, true); return 0; },
    fd_write: (fd, iovs, n, nout) => {
      let total = 0, s = '';
      for (let k = 0; k < n; k++) {
        const p = u32(iovs + 8 * k), len = u32(iovs + 8 * k + 4);
        s += td.decode(u8().slice(p, p + len)); total += len;
      }
      dv().setUint32(nout, total, true);
      if (fd === 1 || fd === 2) {
        lines[fd] += s;
        let i;
        while ((i = lines[fd].indexOf('\n')) >= 0) {
          const line = lines[fd].slice(0, i); lines[fd] = lines[fd].slice(i + 1);
          (fd === 1 && stdout ? stdout : log)(line);
        }
        return 0;
      }
      return E.BADF;
    },
    random_get: (p, n) => { crypto.getRandomValues(u8().subarray(p, p + n)); return 0; },
    environ_sizes_get: (c, s) => { dv().setUint32(c, 0, true); dv().setUint32(s, 0, true); return 0; },
    environ_get: () => 0,
    args_sizes_get: (c, s) => { dv().setUint32(c, 0, true); dv().setUint32(s, 0, true); return 0; },
    args_get: () => 0,
    fd_prestat_get: (fd, out) => {
      if (fd !== 3) return E.BADF;
      dv().setUint32(out, 0, true); dv().setUint32(out + 4, 1, true); return 0; // a directory named "/"
    },
    fd_prestat_dir_name: (fd, p, len) => { if (fd !== 3) return E.BADF; u8()[p] = 47; return 0; },
    path_open: (dirfd, dirflags, path, pathLen, oflags, rb, ri, fdflags, out) => {
      if (dirfd !== 3) return E.BADF;
      if (oflags & (1 | 4 | 8)) return E.ROFS; // create, exclusive, truncate: the tree is read-only
      const name = norm(td.decode(u8().subarray(path, path + pathLen)));
      const file = tree.get(name);
      if (!file && !isDir(name)) return E.NOENT;
      if (file && (oflags & 2)) return E.NOTDIR;
      const fd = nextFd++;
      fds.set(fd, { file, path: name, pos: 0, dir: !file });
      dv().setUint32(out, fd, true); return 0;
    },
    fd_close: (fd) => (fds.delete(fd) || fd <= 3 ? 0 : E.BADF),
    fd_read: new WebAssembly.Suspending(async (fd, iovs, n, nread) => {
      const f = fileOf(fd);
      if (!f) return E.BADF;
      const got = await readInto(f, iovs, n, f.pos);
      f.pos += got; dv().setUint32(nread, got, true); return 0;
    }),
    fd_pread: new WebAssembly.Suspending(async (fd, iovs, n, off, nread) => {
      const f = fileOf(fd);
      if (!f) return E.BADF;
      dv().setUint32(nread, await readInto(f, iovs, n, Number(off)), true); return 0;
    }),
    fd_seek: (fd, off, whence, out) => {
      const f = fileOf(fd);
      if (!f) return fd <= 2 ? E.SPIPE : E.BADF;
      const base = whence === 0 ? 0 : whence === 1 ? f.pos : f.file.size;
      const to = base + Number(off);
      if (to < 0) return E.INVAL;
      f.pos = to; dv().setBigUint64(out, BigInt(to), true); return 0;
    },
    fd_tell: (fd, out) => { const f = fileOf(fd); if (!f) return E.BADF; dv().setBigUint64(out, BigInt(f.pos), true); return 0; },
    fd_fdstat_get: (fd, out) => {
      u8().fill(0, out, out + 24);
      if (fd <= 2) { u8()[out] = 2; return 0; } // character device
      const f = fds.get(fd);
      if (fd !== 3 && !f) return E.BADF;
      u8()[out] = fd === 3 || f.dir ? 3 : 4;
      dv().setBigUint64(out + 8, 0xffffffffffffffffn, true); dv().setBigUint64(out + 16, 0xffffffffffffffffn, true);
      return 0;
    },
    fd_fdstat_set_flags: () => 0,
    fd_filestat_get: (fd, buf) => {
      const f = fds.get(fd);
      if (fd === 3 || (f && f.dir)) { writeStat(buf, 0, true); return 0; }
      if (!f) return E.BADF;
      writeStat(buf, f.file.size, false); return 0;
    },
    path_filestat_get: (dirfd, flags, path, pathLen, buf) => {
      if (dirfd !== 3) return E.BADF;
      const name = norm(td.decode(u8().subarray(path, path + pathLen)));
      const file = tree.get(name);
      if (file) { writeStat(buf, file.size, false); return 0; }
      if (isDir(name)) { writeStat(buf, 0, true); return 0; }
      return E.NOENT;
    },
    fd_readdir: () => E.NOSYS,
    path_create_directory: () => E.ROFS,
    path_unlink_file: () => E.ROFS,
    path_remove_directory: () => E.ROFS,
    path_rename: () => E.ROFS,
    poll_oneoff: (i, o, n, nev) => { dv().setUint32(nev, 0, true); return 0; }, // sleeps return at once
    proc_exit: (code) => { throw new WgfuseError(`wgfuse.wasm exited with status ${code}`); },
    sched_yield: () => 0,
  };
  const wasiProxy = new Proxy(wasi, { get: (t, k) => t[k] || (() => E.NOSYS) }); // the rest: ENOSYS

  const bytes = await (await fetch(wasmUrl)).arrayBuffer();
    // generation streams its text through wgfw.text; wgfw.yield lets the page paint between
  // tokens (cpu-ref never waits on the GPU, so nothing else would suspend it)
  let onText = () => {};
  const host = {
    text: (p, n) => onText(td.decode(u8().slice(p, p + n))),
    yield: new WebAssembly.Suspending(() => new Promise((r) => setTimeout(r, 0))),
  };
  const { instance } = await WebAssembly.instantiate(bytes, { wgpu, wasi_snapshot_preview1: wasiProxy, wgfw: host });
  ex = instance.exports; mem = ex.memory;
  ex._initialize();

  // the struct layouts above must be the C compiler's
  const got = Object.fromEntries(cstr(ex.wgfw_abi_layout()).split(';').map((kv) => kv.split('=')).map(([k, v]) => [k, Number(v)]));
  const bad = Object.entries(EXPECTED).filter(([k, v]) => got[k] !== v).map(([k, v]) => `${k}: C ${got[k]}, JS ${v}`);
  if (bad.length) throw new WgfuseError(`wgfuse.js struct layouts differ from wgfuse.wasm's: ${bad.join('; ')}`);

  // one call at a time: the C state is not re-entrant
  let chain = Promise.resolve();
  const promising = {};
  const call = (name, ...args) => {
    const run = async () => {
      const f = promising[name] || (promising[name] = WebAssembly.promising(ex[name]));
      const conv = [];
      const strs = [];
      for (const a of args) {
        if (typeof a === 'string') { const [p] = allocStr(a); strs.push(p); conv.push(p); } else conv.push(a);
      }
      try {
        const r = await f(...conv);
        return typeof r === 'number' && r ? JSON.parse(cstr(r)) : r;
      } finally { strs.forEach((p) => ex.wgfw_free(p)); }
    };
    const p = chain.then(run, run);
    chain = p.catch(() => {});
    return p;
  };
  // the files the C code can open: [{path: 'model/config.json', file: File}, ...]
  const mount = (files) => { tree = new Map(files.map((f) => [norm(f.path), f.file])); };
  return { call, mount, setOnText: (fn) => { onText = fn; }, exports: ex };
}
