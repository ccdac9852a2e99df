#!/usr/bin/env node
// Reads the model files the WebGPU learner wrote in the Node test
// (dist/webgpu/NAME.gtf) with the native CLI, `gotrain forest predict
// --device cpu` (its path in $GOTRAIN, else gotrain on PATH), and checks
// its predictions (class probabilities for classification) against the
// WebGPU predictor's, bit for bit. .ci/run runs it after npm test.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const web = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const dir = path.join(web, 'dist', 'webgpu');
const bin = process.env.GOTRAIN || 'gotrain';
const manifest = JSON.parse(fs.readFileSync(path.join(web, 'dist', 'fixtures', 'manifest.json'), 'utf8'));
let failed = 0;
for (const c of manifest.cases) {
  const model = path.join(dir, `${c.name}.gtf`);
  if (!fs.existsSync(model)) throw new Error(`${model} is missing: run npm test first`);
  const out = path.join(dir, `${c.name}.cli.csv`);
  const args = ['forest', 'predict', '--device', 'cpu', '--model', model, '--data', path.join(dir, `${c.dataset}.csv`), '--out', out];
  const desc = fs.readFileSync(model).subarray(0, 4096).toString('latin1');
  const isCls = desc.includes('"task":"classification"');
  if (isCls) args.push('--proba');
  execFileSync(bin, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const rows = fs.readFileSync(out, 'utf8').trim().split('\n').slice(1);
  const got = new Float64Array(rows.flatMap((r) => r.split(',').map(Number)));
  const want = new Float64Array(new Uint8Array(fs.readFileSync(path.join(dir, `${c.name}.values`))).buffer);
  let bad = got.length === want.length ? -1 : 0;
  for (let i = 0; bad < 0 && i < want.length; i++) if (!Object.is(got[i], want[i])) bad = i;
  if (bad >= 0) {
    console.error(`check-cli: ${c.name}: gotrain forest predict gives ${got[bad]} at value ${bad} (${got.length} values), WebGPU ${want[bad]} (${want.length} values)`);
    failed++;
  } else {
    console.log(`check-cli: ${c.name}: gotrain forest predict on the WebGPU model file: ${got.length} values identical to WebGPU's${isCls ? ' (class probabilities)' : ''}`);
  }
}
if (failed) process.exit(1);
