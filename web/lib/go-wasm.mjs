// Runs a Go program built with GOOS=js GOARCH=wasm under Node, with Go's
// own wasm_exec.js (the one of the toolchain that built it: $GOROOT/lib/wasm,
// copied next to the module by the build, or found with `go env GOROOT`).
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import crypto from 'node:crypto';
import { TextEncoder, TextDecoder } from 'node:util';

const require = createRequire(import.meta.url);

// wasmExecPath finds wasm_exec.js: beside the module when the build copied
// it there, else in the Go toolchain on PATH (or $GOROOT).
export function wasmExecPath(besides) {
  if (besides) {
    const p = path.join(path.dirname(besides), 'wasm_exec.js');
    if (fs.existsSync(p)) return p;
  }
  const root = process.env.GOROOT || execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim();
  for (const dir of ['lib/wasm', 'misc/wasm']) {
    const p = path.join(root, dir, 'wasm_exec.js');
    if (fs.existsSync(p)) return p;
  }
  throw new Error(`wasm_exec.js not found under ${root} (lib/wasm or misc/wasm)`);
}

// loadGo defines globalThis.Go from wasm_exec.js (with the Node globals it
// wants) and returns a new Go instance.
export function newGo(wasmFile) {
  globalThis.fs ??= fs;
  globalThis.path ??= path;
  globalThis.TextEncoder ??= TextEncoder;
  globalThis.TextDecoder ??= TextDecoder;
  globalThis.crypto ??= crypto.webcrypto;
  if (!globalThis.Go) require(wasmExecPath(wasmFile));
  return new globalThis.Go();
}

// startGo instantiates the module and starts it; it resolves with the
// Go instance and the promise of its run (which settles when main returns).
export async function startGo(wasmFile, { argv = [], env = {} } = {}) {
  const go = newGo(wasmFile);
  go.argv = [path.basename(wasmFile), ...argv];
  go.env = Object.assign({ TMPDIR: process.env.TMPDIR || '/tmp' }, env);
  const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmFile), go.importObject);
  const done = go.run(instance);
  return { go, done };
}
