//go:build js && wasm

// These tests need a WebGPU adapter: run them under Node with the npm
// package webgpu (web/scripts/go-test-exec.mjs installs navigator.gpu):
//
//	GOOS=js GOARCH=wasm go test -exec "node $PWD/web/scripts/go-test-exec.mjs" ./internal/webgpu
//
// Without an adapter they fail: Open's error is the reason.
package webgpu

import (
	"strings"
	"testing"
)

func open(t *testing.T) *Device {
	t.Helper()
	d, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	t.Logf("adapter: %s (maxBufferSize %d, maxStorageBufferBindingSize %d)", d.Info, d.MaxBufferSize, d.MaxStorageBinding)
	return d
}

const affine = `
struct Params { n: u32, a: u32, b: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nw: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wid.y * nw.x + wid.x) * 64u + li;
  if (i >= P.n) { return; }
  y[i] = x[i] * P.a + P.b;
}`

// TestDispatchRoundTrip uploads words, runs a kernel on them and reads the
// result back, with workgroups over two axes (more than 65,535).
func TestDispatchRoundTrip(t *testing.T) {
	d := open(t)
	const n = 65536*64 + 1000 // 65,552 workgroups of 64: two axes
	xs := make([]uint32, n)
	for i := range xs {
		xs[i] = uint32(i*2654435761) ^ 0x5bd1e995
	}
	x, err := d.NewBuffer("x", 4*n)
	if err != nil {
		t.Fatal(err)
	}
	y, err := d.NewBuffer("y", 4*n)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.WriteUint32(0, xs); err != nil {
		t.Fatal(err)
	}
	k, err := d.Compile("affine", affine, 3)
	if err != nil {
		t.Fatal(err)
	}
	groups := (n + 63) / 64
	if gx, gy := Groups(groups); gy < 2 || gx*gy < groups {
		t.Fatalf("Groups(%d) = %d, %d", groups, gx, gy)
	}
	if err := k.Dispatch(groups, []uint32{n, 3, 7}, x, y); err != nil {
		t.Fatal(err)
	}
	got, err := y.ReadUint32(0, n)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if want := xs[i]*3 + 7; v != want {
			t.Fatalf("y[%d] = %d, want %d", i, v, want)
		}
	}
	part, err := y.ReadUint32(10, 5)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range part {
		if want := xs[10+i]*3 + 7; v != want {
			t.Fatalf("partial read [%d] = %d, want %d", 10+i, v, want)
		}
	}
	if err := y.Clear(0, 4*n); err != nil {
		t.Fatal(err)
	}
	if got, err = y.ReadUint32(n-3, 3); err != nil || got[0]|got[1]|got[2] != 0 {
		t.Fatalf("after Clear: %v, %v", got, err)
	}
	labels, counts := d.Dispatches()
	if len(labels) != 1 || labels[0] != "affine" || counts[0] != 1 {
		t.Fatalf("Dispatches() = %v, %v", labels, counts)
	}
}

// TestCompileError: a WGSL error is an error naming the line.
func TestCompileError(t *testing.T) {
	d := open(t)
	_, err := d.Compile("broken", strings.Replace(affine, "x[i] * P.a", "x[i] * P.zz", 1), 3)
	if err == nil || !strings.Contains(err.Error(), "broken") || !strings.Contains(err.Error(), "line") {
		t.Fatalf("Compile of broken WGSL: %v, want an error naming the kernel and the line", err)
	}
	t.Log(err)
}

// TestValidationError: a dispatch WebGPU refuses (a buffer bound twice, as
// read-only and writable) surfaces at the next read.
func TestValidationError(t *testing.T) {
	d := open(t)
	k, err := d.Compile("affine", affine, 3)
	if err != nil {
		t.Fatal(err)
	}
	x, err := d.NewBuffer("x", 256)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Dispatch(1, []uint32{64, 1, 1}, x, x); err != nil {
		t.Fatal(err)
	}
	if _, err := x.ReadUint32(0, 4); err == nil {
		t.Fatal("a dispatch binding one buffer as read and read_write: no error")
	} else {
		t.Log(err)
	}
	if err := k.Dispatch(1, []uint32{1}, x, x); err == nil {
		t.Fatal("a dispatch with the wrong number of parameters: no error")
	}
}

// TestBufferLimits: a buffer over the device's limit and reads out of
// range are errors.
func TestBufferLimits(t *testing.T) {
	d := open(t)
	if _, err := d.NewBuffer("huge", d.MaxBufferSize+4); err == nil {
		t.Fatal("a buffer over maxBufferSize: no error")
	}
	b, err := d.NewBuffer("b", 16)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Read(8, 16); err == nil {
		t.Fatal("a read past the end: no error")
	}
	if err := b.Write(2, []byte{1, 2, 3, 4}); err == nil {
		t.Fatal("an unaligned write: no error")
	}
}
