// gotrain's random forests for JavaScript: the WebAssembly module
// (cmd/gotrain-wasm) trains and predicts on WebGPU, or on the CPU when
// asked, with the same trees as the native `gotrain forest train`.
// docs/WEBGPU.md documents the API.
//
//   import { load } from './gotrain.mjs';
//   const gotrain = await load();                     // Node: dist/gotrain.wasm
//   const { adapter } = await gotrain.openGPU();
//   const { model, report } = await gotrain.train({ dataset: 'diabetes' }, { trees: 100 });
//   const { values } = await gotrain.predict(model, x, rows);
//
// In Node, load() gives the module navigator.gpu from the npm package
// webgpu (Dawn) first; in a browser it uses the browser's WebGPU.

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

let loaded = null;

// load starts the module once and resolves with its API (globalThis.gotrain).
// wasm: a path (Node) or URL (browser) of gotrain.wasm; wasmExec: of Go's
// wasm_exec.js (browser: a URL, loaded as a script; Node: found beside the
// module or in the Go toolchain).
export function load({ wasm, wasmExec, gpuFlags = [] } = {}) {
  loaded ??= (isNode ? loadNode(wasm, gpuFlags) : loadBrowser(wasm, wasmExec)).catch((e) => {
    loaded = null;
    throw e;
  });
  return loaded;
}

function ready() {
  return new Promise((resolve) => {
    globalThis.__gotrainReady = () => resolve(wrap(globalThis.gotrain));
  });
}

async function loadNode(wasm, gpuFlags) {
  const { fileURLToPath } = await import('node:url');
  const path = await import('node:path');
  const { installWebGPU } = await import('./lib/gpu-globals.mjs');
  const { startGo } = await import('./lib/go-wasm.mjs');
  installWebGPU(gpuFlags);
  wasm ??= path.join(path.dirname(fileURLToPath(import.meta.url)), 'dist', 'gotrain.wasm');
  const r = ready();
  const { done } = await startGo(wasm);
  done.catch((e) => console.error('gotrain.wasm stopped:', e));
  return r;
}

async function loadBrowser(wasm = 'dist/gotrain.wasm', wasmExec = 'dist/wasm_exec.js') {
  if (!globalThis.Go) {
    await new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = wasmExec;
      s.onload = resolve;
      s.onerror = () => reject(new Error(`cannot load ${wasmExec}`));
      document.head.appendChild(s);
    });
  }
  const go = new globalThis.Go();
  const r = ready();
  const { instance } = await WebAssembly.instantiateStreaming(fetch(wasm), go.importObject);
  go.run(instance);
  return r;
}

// wrap adds the conveniences of the JS side to the module's functions.
function wrap(g) {
  return {
    openGPU: () => g.openGPU(),
    dataset: (name) => g.dataset(name),
    // train(data, options): data is {dataset}, {csv, target, task} or
    // {x, y, rows, cols, featureNames, task}; options as forest.Options in
    // camelCase, plus device: 'webgpu' (default) or 'cpu'.
    train: (data, options = {}) => g.train(typeof data === 'string' ? { dataset: data } : data, options),
    trainCSV: (text, { target, task, ...options } = {}) => g.train({ csv: text, target, task }, options),
    predict: (model, x, rows, options = {}) => g.predict(model, x, rows, options),
    describe: (model) => g.describe(model),
    diffModels: (a, b) => g.diffModels(a, b),
    // saveModel/loadModel: the model file's bytes, as gotrain forest
    // train --save writes them (Node: a path; browser: a Blob).
    async saveModel(model, file) {
      if (isNode) {
        const fs = await import('node:fs/promises');
        await fs.writeFile(file, model);
        return file;
      }
      return new Blob([model], { type: 'application/octet-stream' });
    },
    async loadModel(src) {
      if (src instanceof Uint8Array) return src;
      if (typeof Blob !== 'undefined' && src instanceof Blob) return new Uint8Array(await src.arrayBuffer());
      if (isNode) {
        const fs = await import('node:fs/promises');
        return new Uint8Array(await fs.readFile(src));
      }
      return new Uint8Array(await (await fetch(src)).arrayBuffer());
    },
  };
}
