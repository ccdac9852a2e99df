// Run by webgpu.test.mjs: a navigator.gpu that finds no adapter (as on a
// machine without a driver WebGPU can use). Training on WebGPU must fail
// with the reason; it prints the error and exits 0 when it does, 1 when
// the module trained anyway.
import { load } from '../gotrain.mjs';

const gotrain = await load();
Object.defineProperty(globalThis.navigator, 'gpu', { value: { requestAdapter: async () => null }, configurable: true });
try {
  await gotrain.train({ dataset: 'diabetes' }, { trees: 2 });
  console.log('trained without an adapter');
  process.exit(1);
} catch (e) {
  console.log(String(e.message));
  process.exit(0);
}
