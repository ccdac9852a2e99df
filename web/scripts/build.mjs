#!/usr/bin/env node
// Builds what web/ runs, into web/dist (npm run build; npm test runs it
// first): the WebAssembly module (GOOS=js GOARCH=wasm go build
// ./cmd/gotrain-wasm), Go's wasm_exec.js of the same toolchain, and the
// native learner's fixtures for the Node test (the model files and
// predictions the Go test TestWriteWebFixtures writes).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const web = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const root = path.dirname(web);
const dist = path.join(web, 'dist');
const go = process.env.GO || 'go';
fs.mkdirSync(dist, { recursive: true });

const run = (args, env = {}) => {
  const t0 = Date.now();
  execFileSync(go, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  console.log(`build: go ${args.join(' ')} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
};
run(['build', '-trimpath', '-ldflags=-s -w', '-o', path.join(dist, 'gotrain.wasm'), './cmd/gotrain-wasm'], { GOOS: 'js', GOARCH: 'wasm', CGO_ENABLED: '0' });
const goroot = execFileSync(go, ['env', 'GOROOT'], { encoding: 'utf8' }).trim();
const wasmExec = ['lib/wasm', 'misc/wasm'].map((d) => path.join(goroot, d, 'wasm_exec.js')).find((p) => fs.existsSync(p));
if (!wasmExec) throw new Error(`wasm_exec.js not found in ${goroot}`);
fs.copyFileSync(wasmExec, path.join(dist, 'wasm_exec.js'));
const fixtures = path.join(dist, 'fixtures');
fs.rmSync(fixtures, { recursive: true, force: true });
run(['test', '-count=1', '-run', '^TestWriteWebFixtures$', './forest/forestwgpu'], { GOTRAIN_WEB_FIXTURES: fixtures });
if (!fs.existsSync(path.join(fixtures, 'manifest.json'))) throw new Error('the fixtures were not written');
console.log(`build: ${path.relative(root, dist)}: gotrain.wasm (${(fs.statSync(path.join(dist, 'gotrain.wasm')).size / 1048576).toFixed(1)} MiB), wasm_exec.js, fixtures/`);
