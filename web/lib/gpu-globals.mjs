// Gives Node the browser's WebGPU globals from the npm package webgpu
// (Google's Dawn): navigator.gpu and the GPU* constants (GPUBufferUsage,
// GPUMapMode, ...). In a browser there is nothing to do.
import { create, globals } from 'webgpu';

let installed = null;

// installWebGPU sets navigator.gpu (once) and returns it.
export function installWebGPU(flags = []) {
  if (installed) return installed;
  Object.assign(globalThis, globals);
  const gpu = create(flags);
  if (globalThis.navigator) {
    Object.defineProperty(globalThis.navigator, 'gpu', { value: gpu, configurable: true });
  } else {
    globalThis.navigator = { gpu };
  }
  installed = gpu;
  return gpu;
}
