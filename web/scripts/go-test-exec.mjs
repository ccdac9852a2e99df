#!/usr/bin/env node
// go test's -exec program for GOOS=js GOARCH=wasm test binaries that use
// WebGPU: Go's own go_js_wasm_exec with navigator.gpu installed first
// (the npm package webgpu). Usage, from the repository root:
//
//   GOOS=js GOARCH=wasm go test -exec "node $PWD/web/scripts/go-test-exec.mjs" ./internal/webgpu
import { installWebGPU } from '../lib/gpu-globals.mjs';
import { startGo } from '../lib/go-wasm.mjs';

if (process.argv.length < 3) {
  console.error('usage: go-test-exec.mjs WASM-BINARY [ARGS]');
  process.exit(2);
}
installWebGPU();
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('npm_')));
const { go, done } = await startGo(process.argv[2], { argv: process.argv.slice(3), env });
go.exit = (code) => process.exit(code);
process.on('exit', (code) => {
  if (code === 0 && !go.exited) {
    // Node ran out of events while Go waited: make Go report its deadlock.
    go._pendingEvent = { id: 0 };
    go._resume();
  }
});
await done;
