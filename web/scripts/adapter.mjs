// Prints the WebGPU adapter Dawn finds (node scripts/adapter.mjs), or
// fails with the reason when it finds none: .ci/setup runs it to check
// that the Vulkan driver it installed gives Node a WebGPU device.
import { create, globals } from 'webgpu';

Object.assign(globalThis, globals);
const gpu = create([]);
const adapter = await gpu.requestAdapter();
if (!adapter) {
  console.error('adapter: Dawn found no WebGPU adapter (on Debian bookworm, Mesa 22.3\'s Vulkan drivers are too old for Dawn: install mesa-vulkan-drivers from bookworm-backports, see .ci/setup)');
  process.exit(1);
}
const info = adapter.info || {};
console.log(`adapter: ${info.vendor || '?'} / ${info.architecture || '?'} / ${info.device || '?'} / ${info.description || '?'}`);
const device = await adapter.requestDevice();
console.log(`adapter: device ok, maxStorageBufferBindingSize ${device.limits.maxStorageBufferBindingSize}, maxComputeWorkgroupsPerDimension ${device.limits.maxComputeWorkgroupsPerDimension}`);
device.destroy();
