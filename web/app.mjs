// The page of index.html: diabetes on WebGPU and on the CPU (wasm), side
// by side. With ?auto=1 it trains once on load and, with &report=URL, posts
// the results table's text to URL (the headless Chromium test).
import { load } from './gotrain.mjs';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);

function split(d) {
  const tr = { x: [], y: [] }, te = { x: [], y: [] };
  for (let i = 0; i < d.rows; i++) {
    const s = i % 5 === 4 ? te : tr;
    s.x.push(...d.x.subarray(i * d.cols, (i + 1) * d.cols));
    s.y.push(d.y[i]);
  }
  const f = (s) => ({ x: new Float64Array(s.x), y: new Float64Array(s.y), rows: s.y.length, cols: d.cols, featureNames: d.featureNames, task: 'regression' });
  return [f(tr), f(te)];
}

const mse = (p, y) => p.reduce((s, v, i) => s + (v - y[i]) ** 2, 0) / y.length;
const sameBits = (a, b) => a.length === b.length && new Uint8Array(a.buffer, a.byteOffset, a.byteLength).every((v, i) => v === new Uint8Array(b.buffer, b.byteOffset, b.byteLength)[i]);

async function run(gotrain) {
  $('run').disabled = true;
  $('error').textContent = '';
  $('identical').textContent = '';
  $('identical').className = '';
  const body = $('results').tBodies[0];
  body.innerHTML = '';
  try {
    const d = await gotrain.dataset('diabetes');
    const [train, test] = split(d);
    const options = { trees: Number($('trees').value), seed: Number($('seed').value), threads: 1 };
    const out = {};
    for (const device of ['webgpu', 'cpu']) {
      $('status').textContent = `Training on ${device === 'webgpu' ? 'WebGPU' : 'the CPU (WebAssembly)'}…`;
      let t0 = performance.now();
      const { model, report } = await gotrain.train(train, { ...options, device });
      const fit = (performance.now() - t0) / 1000;
      t0 = performance.now();
      const { values } = await gotrain.predict(model, test.x, test.rows, { device });
      const pred = (performance.now() - t0) / 1000;
      out[device] = { model, values };
      const name = device === 'webgpu' ? `WebGPU (${report.adapter})` : 'CPU (WebAssembly)';
      const tr = body.insertRow();
      for (const v of [name, report.trees, report.nodes, fit.toFixed(2), pred.toFixed(3), mse(values, test.y).toFixed(1)]) tr.insertCell().textContent = v;
      tr.id = `row-${device}`;
      $('results').hidden = false;
    }
    const diff = await gotrain.diffModels(out.cpu.model, out.webgpu.model);
    const same = diff === '' && sameBits(out.cpu.model, out.webgpu.model) && sameBits(out.cpu.values, out.webgpu.values);
    $('identical').textContent = `identical: ${same ? 'yes' : 'no'}` + (same ? ' (trees node for node, model files byte for byte, predictions bit for bit)' : ` — ${diff || 'model files or predictions differ'}`);
    $('identical').className = same ? 'yes' : 'no';
    $('status').textContent = 'Done.';
  } catch (e) {
    $('error').textContent = `error: ${e.message}`;
    $('status').textContent = 'Failed.';
  }
  $('run').disabled = false;
}

async function report() {
  const url = params.get('report');
  if (!url) return;
  const text = ['status', 'adapter', 'identical', 'error'].map((id) => `${id}: ${$(id).textContent}`).join('\n') + '\n' + $('results').innerText;
  await fetch(url, { method: 'POST', body: text });
}

for (const k of ['trees', 'seed']) if (params.get(k)) $(k).value = params.get(k);
try {
  if (!navigator.gpu) throw new Error('this browser has no WebGPU (navigator.gpu is missing)');
  const gotrain = await load({ wasm: 'dist/gotrain.wasm', wasmExec: 'dist/wasm_exec.js' });
  const { adapter } = await gotrain.openGPU();
  $('adapter').textContent = `WebGPU adapter: ${adapter}`;
  $('status').textContent = 'Ready.';
  $('run').disabled = false;
  $('run').onclick = () => run(gotrain);
  if (params.get('auto')) await run(gotrain);
} catch (e) {
  $('error').textContent = `error: ${e.message}`;
  $('status').textContent = 'Failed.';
}
await report();
