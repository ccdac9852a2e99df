//go:build js && wasm

package forestwgpu

import (
	"fmt"
	"math"

	"github.com/gotrain/gotrain/internal/webgpu"
)

// workgroup is the kernels' workgroup size.
const workgroup = 256

// gpuKernels runs a fit's device stages as WGSL on a WebGPU device.
type gpuKernels struct {
	d          *webgpu.Device
	pr         *prepared
	n, p, q, e int
	trees      int // rows of the batch buffers: trees × n
	maxS       int
	boot       *webgpu.Kernel
	hist       *webgpu.Kernel
	part       *webgpu.Kernel
	// Buffers shared by the fit, and grown on demand.
	codes, offsets, target *webgpu.Buffer
	counts, weight, slot   *webgpu.Buffer
	hmap, dec, hbuf        *webgpu.Buffer
	batch                  int // trees of the current batch
}

// packCodes packs bytes 4 a word, little-endian.
func packCodes(b []uint8) []uint32 {
	out := make([]uint32, (len(b)+3)/4)
	for i, c := range b {
		out[i>>2] |= uint32(c) << (8 * (i & 3))
	}
	return out
}

// newGPUKernels compiles the kernels and uploads the fit's constant data
// (codes, feature offsets, targets); it returns the number of trees per
// batch that the device's binding limit allows (at most trees).
func newGPUKernels(d *webgpu.Device, pr *prepared, trees int) (_ *gpuKernels, batch int, err error) {
	k := &gpuKernels{d: d, pr: pr, n: pr.Rows, p: pr.Cols, q: pr.Stride(), e: pr.Entries}
	defer func() {
		if err != nil {
			k.Close()
		}
	}()
	n, p := int64(k.n), int64(k.p)
	if n*p >= math.MaxUint32 {
		return nil, 0, fmt.Errorf("forestwgpu: fit: %d rows × %d features is beyond the 32-bit indices of the kernels", n, p)
	}
	if int64(pr.Draws) >= math.MaxUint32 {
		return nil, 0, fmt.Errorf("forestwgpu: fit: %d bootstrap draws is beyond the 32-bit counters of the bootstrap kernel", pr.Draws)
	}
	bind := int64(d.MaxStorageBinding)
	// Trees per batch: the per-row buffers (4 bytes a (tree, row)) within
	// one binding, and the invocations ((tree, row) × feature, tree ×
	// draw) within 32 bits.
	perTree := max(n*p, int64(pr.Draws), 1)
	t := min(int64(trees), bind/(4*n), (math.MaxUint32-1)/perTree)
	if t < 1 {
		return nil, 0, fmt.Errorf("forestwgpu: fit: one tree's rows (%d) do not fit the device's storage binding of %d bytes and 32-bit indices", n, bind)
	}
	k.trees = int(t)
	slotBytes := int64(k.e) * int64(k.q) * 8
	if slotBytes > bind {
		return nil, 0, fmt.Errorf("forestwgpu: fit: one node's histogram takes %d bytes (%d entries × %d statistics × 8), more than the device's storage binding of %d bytes", slotBytes, k.e, k.q, bind)
	}
	k.maxS = int(bind / slotBytes)
	for _, c := range []struct {
		dst    **webgpu.Kernel
		name   string
		params int
	}{{&k.boot, "bootstrap", 6}, {&k.hist, "histogram", 8}, {&k.part, "partition", 3}} {
		if *c.dst, err = d.Compile(c.name, shader(c.name), c.params); err != nil {
			return nil, 0, err
		}
	}
	if k.codes, err = upload(d, "codes", packCodes(pr.Codes)); err != nil {
		return nil, 0, err
	}
	off := make([]uint32, k.p+1)
	for j := 0; j < k.p; j++ {
		off[j] = uint32(pr.Offsets[j])
	}
	off[k.p] = uint32(pr.Entries)
	if k.offsets, err = upload(d, "offsets", off); err != nil {
		return nil, 0, err
	}
	var tgt []uint32
	if pr.Class != nil {
		tgt = make([]uint32, k.n)
		for i, c := range pr.Class {
			tgt[i] = uint32(c)
		}
	} else {
		tgt = make([]uint32, 2*k.n)
		for i, y := range pr.YQ {
			tgt[2*i], tgt[2*i+1] = uint32(uint64(y)), uint32(uint64(y)>>32)
		}
	}
	if k.target, err = upload(d, "target", tgt); err != nil {
		return nil, 0, err
	}
	return k, k.trees, nil
}

// upload creates a buffer holding words.
func upload(d *webgpu.Device, label string, words []uint32) (*webgpu.Buffer, error) {
	b, err := d.NewBuffer(label, 4*len(words))
	if err != nil {
		return nil, err
	}
	if err := b.WriteUint32(0, words); err != nil {
		b.Destroy()
		return nil, err
	}
	return b, nil
}

// ensure makes *b a buffer of at least size bytes.
func (k *gpuKernels) ensure(b **webgpu.Buffer, label string, size int) error {
	if *b != nil && (*b).Size >= size {
		return nil
	}
	(*b).Destroy()
	nb, err := k.d.NewBuffer(label, size)
	if err != nil {
		return err
	}
	*b = nb
	return nil
}

func (k *gpuKernels) Bootstrap(seed uint64, t0, trees, n, draws int) ([]uint32, error) {
	if err := k.ensure(&k.counts, "counts", 4*trees*n); err != nil {
		return nil, err
	}
	if err := k.counts.Clear(0, 4*trees*n); err != nil {
		return nil, err
	}
	inv := trees * draws
	params := []uint32{uint32(seed), uint32(seed >> 32), uint32(t0), uint32(trees), uint32(n), uint32(draws)}
	if err := k.boot.Dispatch((inv+workgroup-1)/workgroup, params, k.counts); err != nil {
		return nil, err
	}
	return k.counts.ReadUint32(0, trees*n)
}

func (k *gpuKernels) SetBatch(trees int, weight []uint32, slot []int32) error {
	k.batch = trees
	if err := k.ensure(&k.weight, "weight", 4*len(weight)); err != nil {
		return err
	}
	if err := k.weight.WriteUint32(0, weight); err != nil {
		return err
	}
	if err := k.ensure(&k.slot, "slot", 4*len(slot)); err != nil {
		return err
	}
	s := make([]uint32, len(slot))
	for i, v := range slot {
		s[i] = uint32(v)
	}
	return k.slot.WriteUint32(0, s)
}

func (k *gpuKernels) MaxScatter() int { return k.maxS }

func (k *gpuKernels) Histograms(hmap []int32, lo, hi int) ([]int64, error) {
	words := (hi - lo) * k.e * k.q * 2
	if err := k.ensure(&k.hbuf, "histograms", 4*words); err != nil {
		return nil, err
	}
	if err := k.hbuf.Clear(0, 4*words); err != nil {
		return nil, err
	}
	if err := k.ensure(&k.hmap, "hmap", 4*len(hmap)); err != nil {
		return nil, err
	}
	hm := make([]uint32, len(hmap))
	for i, v := range hmap {
		hm[i] = uint32(v)
	}
	if err := k.hmap.WriteUint32(0, hm); err != nil {
		return nil, err
	}
	rows := k.batch * k.n
	classify := uint32(0)
	if k.pr.Class != nil {
		classify = 1
	}
	params := []uint32{uint32(rows), uint32(k.n), uint32(k.p), uint32(k.e), uint32(k.q), uint32(lo), uint32(hi), classify}
	inv := rows * k.p
	if err := k.hist.Dispatch((inv+workgroup-1)/workgroup, params, k.codes, k.offsets, k.target, k.weight, k.slot, k.hmap, k.hbuf); err != nil {
		return nil, err
	}
	raw, err := k.hbuf.ReadUint32(0, words)
	if err != nil {
		return nil, err
	}
	out := make([]int64, words/2)
	for i := range out {
		out[i] = int64(uint64(raw[2*i]) | uint64(raw[2*i+1])<<32)
	}
	return out, nil
}

func (k *gpuKernels) Move(dec []int32) error {
	if err := k.ensure(&k.dec, "decisions", 4*len(dec)); err != nil {
		return err
	}
	w := make([]uint32, len(dec))
	for i, v := range dec {
		w[i] = uint32(v)
	}
	if err := k.dec.WriteUint32(0, w); err != nil {
		return err
	}
	rows := k.batch * k.n
	return k.part.Dispatch((rows+workgroup-1)/workgroup, []uint32{uint32(rows), uint32(k.n), uint32(k.p)}, k.codes, k.offsets, k.dec, k.slot)
}

func (k *gpuKernels) Close() {
	for _, b := range []*webgpu.Buffer{k.codes, k.offsets, k.target, k.counts, k.weight, k.slot, k.hmap, k.dec, k.hbuf} {
		b.Destroy()
	}
}
