//go:build js && wasm

package webgpu

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall/js"
	"unsafe"
)

// WebGPU's GPUBufferUsage and GPUMapMode flags.
const (
	usageMapRead  = 0x0001
	usageCopySrc  = 0x0004
	usageCopyDst  = 0x0008
	usageUniform  = 0x0040
	usageStorage  = 0x0080
	mapModeRead   = 0x0001
	uniformAlign  = 16
	bufferAlign   = 4
	maxGroupsAxis = 65535 // WebGPU's default maxComputeWorkgroupsPerDimension
)

// AdapterInfo is what the adapter tells of itself (GPUAdapterInfo).
type AdapterInfo struct {
	Vendor, Architecture, Device, Description string
}

// String is the information on one line: vendor / architecture / device /
// description.
func (a AdapterInfo) String() string {
	s := []string{a.Vendor, a.Architecture, a.Device, a.Description}
	for i := range s {
		if s[i] == "" {
			s[i] = "?"
		}
	}
	return strings.Join(s, " / ")
}

// Device is an open WebGPU device.
type Device struct {
	gpu, adapter, device, queue js.Value
	// Info describes the adapter.
	Info AdapterInfo
	// MaxBufferSize and MaxStorageBinding are the device's limits on a
	// buffer and on one storage binding, in bytes (the adapter's, which
	// Open requests).
	MaxBufferSize, MaxStorageBinding int
	// MaxStorageBuffers is the most storage buffers one shader binds.
	MaxStorageBuffers int

	lost    string     // the reason the device was lost, "" while it is not
	scopes  []js.Value // promises of popErrorScope not yet awaited
	counts  map[string]int
	order   []string
	closing bool
}

// jsError turns a JavaScript exception or rejection value into an error.
func jsError(v js.Value) error {
	if v.Type() == js.TypeObject {
		if m := v.Get("message"); m.Type() == js.TypeString {
			return errors.New(m.String())
		}
	}
	return errors.New(v.String())
}

// await waits for promise p to settle and returns its value, or its
// rejection as an error. It blocks the calling goroutine, which must not be
// a js.FuncOf callback.
func await(p js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	onOK := js.FuncOf(func(this js.Value, args []js.Value) any {
		v := js.Undefined()
		if len(args) > 0 {
			v = args[0]
		}
		ch <- result{v: v}
		return nil
	})
	onErr := js.FuncOf(func(this js.Value, args []js.Value) any {
		err := errors.New("rejected")
		if len(args) > 0 {
			err = jsError(args[0])
		}
		ch <- result{err: err}
		return nil
	})
	defer onOK.Release()
	defer onErr.Release()
	p.Call("then", onOK, onErr)
	r := <-ch
	return r.v, r.err
}

// try runs fn, turning a JavaScript exception (a panic of syscall/js) into
// an error.
func try(what string, fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(js.Error); ok {
				err = fmt.Errorf("webgpu: %s: %w", what, jsError(e.Value))
				return
			}
			err = fmt.Errorf("webgpu: %s: %v", what, r)
		}
	}()
	fn()
	return nil
}

// Open requests an adapter from the host's navigator.gpu (a high-performance
// one where there is a choice) and a device with the adapter's largest
// buffer limits. It fails, saying why, where the host has no WebGPU or no
// adapter: there is no CPU fallback.
func Open() (*Device, error) {
	nav := js.Global().Get("navigator")
	if nav.IsUndefined() || nav.IsNull() {
		return nil, errors.New("webgpu: no navigator in this JavaScript host: no WebGPU (under Node, install the npm package webgpu and set navigator.gpu, as web/gotrain.mjs does)")
	}
	gpu := nav.Get("gpu")
	if gpu.IsUndefined() || gpu.IsNull() {
		return nil, errors.New("webgpu: navigator.gpu is missing: this JavaScript host has no WebGPU (a browser without WebGPU or with it disabled, or Node without the npm package webgpu)")
	}
	d := &Device{gpu: gpu, counts: map[string]int{}}
	var p js.Value
	if err := try("requestAdapter", func() {
		p = gpu.Call("requestAdapter", map[string]any{"powerPreference": "high-performance"})
	}); err != nil {
		return nil, err
	}
	adapter, err := await(p)
	if err != nil {
		return nil, fmt.Errorf("webgpu: requestAdapter: %w", err)
	}
	if adapter.IsNull() || adapter.IsUndefined() {
		return nil, errors.New("webgpu: navigator.gpu found no adapter (no GPU or driver WebGPU can use: on Linux, a Vulkan driver; under Node on Debian bookworm, Mesa's from bookworm-backports, see .ci/setup)")
	}
	d.adapter = adapter
	if info := adapter.Get("info"); info.Type() == js.TypeObject {
		str := func(k string) string {
			if v := info.Get(k); v.Type() == js.TypeString {
				return v.String()
			}
			return ""
		}
		d.Info = AdapterInfo{Vendor: str("vendor"), Architecture: str("architecture"), Device: str("device"), Description: str("description")}
	}
	al := adapter.Get("limits")
	limit := func(k string) int {
		if v := al.Get(k); v.Type() == js.TypeNumber {
			return v.Int()
		}
		return 0
	}
	req := map[string]any{}
	for _, k := range []string{"maxBufferSize", "maxStorageBufferBindingSize", "maxStorageBuffersPerShaderStage"} {
		if v := limit(k); v > 0 {
			req[k] = v
		}
	}
	if err := try("requestDevice", func() {
		p = adapter.Call("requestDevice", map[string]any{"requiredLimits": req, "label": "gotrain"})
	}); err != nil {
		return nil, err
	}
	dev, err := await(p)
	if err != nil {
		return nil, fmt.Errorf("webgpu: requestDevice on %s: %w", d.Info, err)
	}
	d.device, d.queue = dev, dev.Get("queue")
	dl := dev.Get("limits")
	d.MaxBufferSize = dl.Get("maxBufferSize").Int()
	d.MaxStorageBinding = dl.Get("maxStorageBufferBindingSize").Int()
	d.MaxStorageBuffers = dl.Get("maxStorageBuffersPerShaderStage").Int()
	onLost := js.FuncOf(func(this js.Value, args []js.Value) any {
		reason := "lost"
		if len(args) > 0 && args[0].Type() == js.TypeObject {
			reason = fmt.Sprintf("%s: %s", args[0].Get("reason").String(), args[0].Get("message").String())
		}
		d.lost = reason
		return nil
	})
	// onLost is not released: the promise settles once, when the device
	// is lost or destroyed (by Close too), and may do so after Close.
	dev.Get("lost").Call("then", onLost)
	return d, nil
}

// Close destroys the device; its buffers go with it.
func (d *Device) Close() {
	if d == nil || d.closing {
		return
	}
	d.closing = true
	_ = try("destroy", func() { d.device.Call("destroy") })
}

// Dispatches returns how many dispatches each kernel label has run, in the
// order the labels were first used.
func (d *Device) Dispatches() (labels []string, counts []int) {
	for _, l := range d.order {
		labels = append(labels, l)
		counts = append(counts, d.counts[l])
	}
	return labels, counts
}

// ResetDispatches sets the dispatch counts to zero.
func (d *Device) ResetDispatches() {
	d.counts = map[string]int{}
	d.order = nil
}

// alive fails when the device was lost.
func (d *Device) alive() error {
	if d.lost != "" {
		return fmt.Errorf("webgpu: the device (%s) was lost: %s", d.Info, d.lost)
	}
	if d.closing {
		return errors.New("webgpu: the device is closed")
	}
	return nil
}

// scoped runs fn inside validation and out-of-memory error scopes whose
// results are awaited later, by Sync (errors of a dispatch surface at the
// next read).
func (d *Device) scoped(what string, fn func()) error {
	if err := d.alive(); err != nil {
		return err
	}
	return try(what, func() {
		d.device.Call("pushErrorScope", "out-of-memory")
		d.device.Call("pushErrorScope", "validation")
		defer func() {
			d.scopes = append(d.scopes, d.device.Call("popErrorScope"), d.device.Call("popErrorScope"))
		}()
		fn()
	})
}

// Sync awaits the error scopes of the work submitted so far and returns
// the first error WebGPU reported (a validation or out-of-memory error),
// or the loss of the device.
func (d *Device) Sync() error {
	scopes := d.scopes
	d.scopes = nil
	var first error
	for _, p := range scopes {
		v, err := await(p)
		if err == nil && !v.IsNull() && !v.IsUndefined() {
			err = jsError(v)
		}
		if err != nil && first == nil {
			first = fmt.Errorf("webgpu: %w", err)
		}
	}
	if first != nil {
		return first
	}
	return d.alive()
}

// Buffer is a storage buffer on the device.
type Buffer struct {
	d     *Device
	v     js.Value
	Label string
	// Size is the buffer's size in bytes (a multiple of 4).
	Size int
}

// NewBuffer creates a zeroed storage buffer of at least size bytes (rounded
// up to a multiple of 4, at least 4) that can be copied from and to.
func (d *Device) NewBuffer(label string, size int) (*Buffer, error) {
	size = max(bufferAlign, (size+bufferAlign-1)/bufferAlign*bufferAlign)
	if size > d.MaxBufferSize {
		return nil, fmt.Errorf("webgpu: buffer %s of %d bytes is larger than the device's maxBufferSize (%d)", label, size, d.MaxBufferSize)
	}
	b := &Buffer{d: d, Label: label, Size: size}
	err := d.scoped("createBuffer "+label, func() {
		b.v = d.device.Call("createBuffer", map[string]any{"label": label, "size": size, "usage": usageStorage | usageCopySrc | usageCopyDst})
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Destroy frees the buffer.
func (b *Buffer) Destroy() {
	if b != nil && !b.v.IsUndefined() {
		_ = try("destroy "+b.Label, func() { b.v.Call("destroy") })
		b.v = js.Undefined()
	}
}

// Write uploads data at byte offset off (both multiples of 4).
func (b *Buffer) Write(off int, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if off%4 != 0 || len(data)%4 != 0 || off+len(data) > b.Size {
		return fmt.Errorf("webgpu: write of %d bytes at %d into buffer %s of %d bytes (offsets and sizes must be multiples of 4)", len(data), off, b.Label, b.Size)
	}
	arr := js.Global().Get("Uint8Array").New(len(data))
	js.CopyBytesToJS(arr, data)
	return b.d.scoped("writeBuffer "+b.Label, func() {
		b.d.queue.Call("writeBuffer", b.v, off, arr)
	})
}

// WriteUint32 uploads words at byte offset off.
func (b *Buffer) WriteUint32(off int, words []uint32) error {
	return b.Write(off, u32Bytes(words))
}

// Clear zeroes size bytes from byte offset off (multiples of 4).
func (b *Buffer) Clear(off, size int) error {
	if size == 0 {
		return nil
	}
	return b.d.scoped("clearBuffer "+b.Label, func() {
		enc := b.d.device.Call("createCommandEncoder")
		enc.Call("clearBuffer", b.v, off, size)
		b.d.queue.Call("submit", []any{enc.Call("finish")})
	})
}

// Read downloads size bytes from byte offset off (multiples of 4): it
// copies them to a mappable buffer, waits for the device's work and maps
// it. It reports the errors of the work submitted before (Sync).
func (b *Buffer) Read(off, size int) ([]byte, error) {
	d := b.d
	if off%4 != 0 || size%4 != 0 || off+size > b.Size {
		return nil, fmt.Errorf("webgpu: read of %d bytes at %d from buffer %s of %d bytes (offsets and sizes must be multiples of 4)", size, off, b.Label, b.Size)
	}
	out := make([]byte, size)
	if size == 0 {
		return out, d.Sync()
	}
	var staging, p js.Value
	err := d.scoped("read "+b.Label, func() {
		staging = d.device.Call("createBuffer", map[string]any{"label": "read " + b.Label, "size": size, "usage": usageMapRead | usageCopyDst})
		enc := d.device.Call("createCommandEncoder")
		enc.Call("copyBufferToBuffer", b.v, off, staging, 0, size)
		d.queue.Call("submit", []any{enc.Call("finish")})
	})
	if err == nil {
		err = try("mapAsync", func() { p = staging.Call("mapAsync", mapModeRead) })
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = try("destroy staging", func() { staging.Call("destroy") }) }()
	if _, err := await(p); err != nil {
		if serr := d.Sync(); serr != nil {
			return nil, serr
		}
		return nil, fmt.Errorf("webgpu: mapping buffer %s for reading: %w", b.Label, err)
	}
	if err := try("getMappedRange", func() {
		arr := js.Global().Get("Uint8Array").New(staging.Call("getMappedRange"))
		js.CopyBytesToGo(out, arr)
		staging.Call("unmap")
	}); err != nil {
		return nil, err
	}
	if err := d.Sync(); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadUint32 downloads words words from word offset off.
func (b *Buffer) ReadUint32(off, words int) ([]uint32, error) {
	raw, err := b.Read(4*off, 4*words)
	if err != nil {
		return nil, err
	}
	out := make([]uint32, words)
	copy(u32Bytes(out), raw)
	return out, nil
}

// u32Bytes views words as bytes (wasm is little-endian, as WebGPU's buffers).
func u32Bytes(words []uint32) []byte {
	if len(words) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 4*len(words))
}

// Kernel is a compiled compute pipeline. Its WGSL binds, in group 0, a
// uniform block of Params words at binding 0 when Params > 0, then its
// storage buffers at bindings 1, 2, ... (all of them used by the shader:
// the pipeline's layout is derived from the shader, "auto").
type Kernel struct {
	d        *Device
	Label    string
	pipeline js.Value
	layout   js.Value
	params   js.Value
	nparams  int
}

// Compile compiles the WGSL source's entry point "main" into a compute
// pipeline with params uniform words. A compilation error names the line
// and the message.
func (d *Device) Compile(label, wgsl string, params int) (*Kernel, error) {
	if err := d.alive(); err != nil {
		return nil, err
	}
	k := &Kernel{d: d, Label: label, nparams: params}
	var mod, info, pipe js.Value
	if err := try("createShaderModule "+label, func() {
		mod = d.device.Call("createShaderModule", map[string]any{"label": label, "code": wgsl})
		info = mod.Call("getCompilationInfo")
	}); err != nil {
		return nil, err
	}
	ci, err := await(info)
	if err != nil {
		return nil, fmt.Errorf("webgpu: compiling %s: %w", label, err)
	}
	var msgs []string
	ms := ci.Get("messages")
	for i := 0; i < ms.Length(); i++ {
		m := ms.Index(i)
		if m.Get("type").String() == "error" {
			msgs = append(msgs, fmt.Sprintf("line %d:%d: %s", m.Get("lineNum").Int(), m.Get("linePos").Int(), m.Get("message").String()))
		}
	}
	if len(msgs) > 0 {
		return nil, fmt.Errorf("webgpu: compiling %s: %s", label, strings.Join(msgs, "; "))
	}
	if err := try("createComputePipelineAsync "+label, func() {
		pipe = d.device.Call("createComputePipelineAsync", map[string]any{
			"label": label, "layout": "auto",
			"compute": map[string]any{"module": mod, "entryPoint": "main"},
		})
	}); err != nil {
		return nil, err
	}
	if k.pipeline, err = await(pipe); err != nil {
		return nil, fmt.Errorf("webgpu: creating the pipeline of %s: %w", label, err)
	}
	if err := try("getBindGroupLayout "+label, func() {
		k.layout = k.pipeline.Call("getBindGroupLayout", 0)
		if params > 0 {
			size := (4*params + uniformAlign - 1) / uniformAlign * uniformAlign
			k.params = d.device.Call("createBuffer", map[string]any{"label": label + " params", "size": size, "usage": usageUniform | usageCopyDst})
		}
	}); err != nil {
		return nil, err
	}
	return k, nil
}

// Groups splits n workgroups over x and y so that neither exceeds WebGPU's
// 65,535; a kernel finds its workgroup's index as
// wid.y·num_workgroups.x + wid.x and returns when it is n or more.
func Groups(n int) (x, y int) {
	if n <= maxGroupsAxis {
		return max(n, 1), 1
	}
	y = (n + maxGroupsAxis - 1) / maxGroupsAxis
	x = (n + y - 1) / y
	return x, y
}

// Dispatch runs the kernel on n workgroups (Groups splits them over x and
// y) with the given uniform words and storage buffers (bindings 1, 2, ...),
// and counts it under the kernel's label. Errors of the work itself surface
// at the next Read or Sync.
func (k *Kernel) Dispatch(n int, params []uint32, bufs ...*Buffer) error {
	d := k.d
	if len(params) != k.nparams {
		return fmt.Errorf("webgpu: %s takes %d parameters, got %d", k.Label, k.nparams, len(params))
	}
	if n == 0 {
		return nil
	}
	x, y := Groups(n)
	err := d.scoped("dispatch "+k.Label, func() {
		var entries []any
		if k.nparams > 0 {
			arr := js.Global().Get("Uint8Array").New(4 * len(params))
			js.CopyBytesToJS(arr, u32Bytes(slices.Clone(params)))
			d.queue.Call("writeBuffer", k.params, 0, arr)
			entries = append(entries, map[string]any{"binding": 0, "resource": map[string]any{"buffer": k.params}})
		}
		for i, b := range bufs {
			entries = append(entries, map[string]any{"binding": i + 1, "resource": map[string]any{"buffer": b.v}})
		}
		bg := d.device.Call("createBindGroup", map[string]any{"label": k.Label, "layout": k.layout, "entries": entries})
		enc := d.device.Call("createCommandEncoder")
		pass := enc.Call("beginComputePass", map[string]any{"label": k.Label})
		pass.Call("setPipeline", k.pipeline)
		pass.Call("setBindGroup", 0, bg)
		pass.Call("dispatchWorkgroups", x, y, 1)
		pass.Call("end")
		d.queue.Call("submit", []any{enc.Call("finish")})
	})
	if err != nil {
		return err
	}
	if _, ok := d.counts[k.Label]; !ok {
		d.order = append(d.order, k.Label)
	}
	d.counts[k.Label]++
	return nil
}
