// The WebGPU learner against the native one: trains diabetes (regression)
// and digits (classification) on WebGPU from the wasm module, and checks
// the model files byte for byte and node for node, and the predictions
// bit for bit, against the fixtures the native learner wrote
// (scripts/build.mjs, TestWriteWebFixtures). Prints the adapter and the
// GPU dispatches per stage. No adapter is a failure: there is no CPU
// fallback.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { load } from '../gotrain.mjs';

const web = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const fixtures = path.join(web, 'dist', 'fixtures');
const outDir = path.join(web, 'dist', 'webgpu');

// writeCSV writes a data set's features with a header (numbers in
// JavaScript's shortest round-trip form, which Go parses to the same bits).
function writeCSV(file, d) {
  const lines = [d.featureNames.join(',')];
  for (let i = 0; i < d.rows; i++) lines.push(Array.from(d.x.subarray(i * d.cols, (i + 1) * d.cols), (v) => (Number.isNaN(v) ? '' : String(v))).join(','));
  fs.writeFileSync(file, lines.join('\n') + '\n');
}
let gotrain, manifest;

before(async () => {
  const m = path.join(fixtures, 'manifest.json');
  assert.ok(fs.existsSync(m), `${m} is missing: run npm run build (scripts/build.mjs) first`);
  manifest = JSON.parse(fs.readFileSync(m, 'utf8'));
  gotrain = await load();
});

test('a WebGPU adapter', async () => {
  const { adapter } = await gotrain.openGPU();
  console.log(`adapter: ${adapter}`);
  assert.ok(adapter.length > 0);
});

const datasets = new Map();
async function dataset(name) {
  if (!datasets.has(name)) datasets.set(name, await gotrain.dataset(name));
  return datasets.get(name);
}

const bytesOf = (f64) => new Uint8Array(f64.buffer, f64.byteOffset, f64.byteLength);

// sameBits compares two Float64Arrays bit for bit; it returns the first
// index that differs, or -1.
function firstDiff(a, b) {
  const x = bytesOf(a), y = bytesOf(b);
  if (x.length !== y.length) return 0;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return Math.floor(i / 8);
  return -1;
}

for (const c of JSON.parse(fs.existsSync(path.join(fixtures, 'manifest.json')) ? fs.readFileSync(path.join(fixtures, 'manifest.json'), 'utf8') : '{"cases":[]}').cases) {
  test(`${c.name}: WebGPU trees and predictions equal the native learner's`, async () => {
    const want = new Uint8Array(fs.readFileSync(path.join(fixtures, `${c.name}.gtf`)));
    const t0 = performance.now();
    const { model, report } = await gotrain.train({ dataset: c.dataset }, { ...c.options, device: 'webgpu' });
    const secs = (performance.now() - t0) / 1000;
    const stages = Object.entries(report.dispatches).map(([k, v]) => `${k} ${v}`).join(', ');
    console.log(`${c.name}: ${report.trees} trees, ${report.nodes} nodes, ${report.levels} levels on ${report.adapter}; ` +
      `GPU dispatches: ${stages}; histograms: ${report.scatteredNodes} nodes on the GPU, ${report.derivedNodes} derived on the host; ` +
      `${secs.toFixed(2)} s (lavapipe runs on the CPU: a correctness run, not a GPU speed)`);
    assert.ok(report.dispatches.histogram > 0 && report.dispatches.partition > 0, 'no histogram or partition dispatch');
    if (c.options.bootstrap !== false) assert.ok(report.dispatches.bootstrap > 0, 'no bootstrap dispatch');
    const diff = await gotrain.diffModels(want, model);
    assert.equal(diff, '', `the trees differ from the native learner's:\n${diff}`);
    assert.equal(Buffer.compare(Buffer.from(model), Buffer.from(want)), 0, 'the model files differ');

    const d = await dataset(c.dataset);
    const wantValues = new Float64Array(new Uint8Array(fs.readFileSync(path.join(fixtures, `${c.name}.values`))).buffer);
    for (const device of ['webgpu', 'cpu']) {
      const { values } = await gotrain.predict(model, d.x, d.rows, { device });
      const i = firstDiff(values, wantValues);
      assert.equal(i, -1, `${device} prediction ${i}: ${values[i]}, native ${wantValues[i]}`);
      if (device === 'webgpu') {
        // For scripts/check-cli.mjs: gotrain forest predict on the native
        // CPU reads this model file and must give these values.
        fs.mkdirSync(outDir, { recursive: true });
        await gotrain.saveModel(model, path.join(outDir, `${c.name}.gtf`));
        fs.writeFileSync(path.join(outDir, `${c.name}.values`), bytesOf(values));
        writeCSV(path.join(outDir, `${c.dataset}.csv`), d);
      }
    }
  });
}

test('the CPU (wasm) learner gives the same model file', async () => {
  const c = manifest.cases[0];
  const want = new Uint8Array(fs.readFileSync(path.join(fixtures, `${c.name}.gtf`)));
  const { model } = await gotrain.train({ dataset: c.dataset }, { ...c.options, device: 'cpu' });
  assert.equal(await gotrain.diffModels(want, model), '');
  assert.equal(Buffer.compare(Buffer.from(model), Buffer.from(want)), 0);
});

test('categorical features are refused on WebGPU, with the reason', async () => {
  const csv = 'color,size,y\nred,1,1.5\nblue,2,2.5\nred,3,1.0\ngreen,4,3.5\nblue,5,2.0\nred,6,1.2\n';
  await assert.rejects(gotrain.trainCSV(csv, { target: 'y', trees: 2 }), /categorical features are refused on WebGPU/);
});

test('no adapter is an error, not a CPU fallback', () => {
  const child = path.join(web, 'test', 'no-adapter.child.mjs');
  const r = spawnSync(process.execPath, [child], { encoding: 'utf8' });
  assert.equal(r.status, 0, `no-adapter child failed:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /found no adapter/);
});
