// Package webgpu is gotrain's bridge from Go to WebGPU for the
// GOOS=js GOARCH=wasm build: through syscall/js it reaches the host's
// navigator.gpu (a browser tab's, or Node's with the npm package webgpu,
// Google's Dawn), requests an adapter and a device, creates storage
// buffers, uploads and reads them back (mapAsync), compiles WGSL compute
// shaders and dispatches them. Every asynchronous WebGPU call is awaited
// through its JavaScript promise, so the Go code reads as synchronous; it
// must therefore run in a goroutine of its own, never inside a js.FuncOf
// callback, which cannot block (see syscall/js).
//
// The package never falls back to the CPU: no navigator.gpu, no adapter,
// a device that cannot be created, a shader that does not compile, a
// validation or out-of-memory error and a lost device are errors that say
// which and why.
//
// Everything but this documentation is built for js/wasm only.
package webgpu
