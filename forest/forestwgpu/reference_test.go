package forestwgpu

import (
	"github.com/gotrain/gotrain/forest/internal/core"
)

// refKernels computes the device stages on the CPU, by their definitions,
// to test the host side (search, growth, subtraction) apart from WebGPU,
// and to check the WGSL kernels' results against.
type refKernels struct {
	pr      *prepared
	n, p, q int
	trees   int
	weight  []uint32
	slot    []int32
	maxS    int
	calls   map[string]int
}

func newRefKernels(pr *prepared, maxScatter int) *refKernels {
	if maxScatter <= 0 {
		maxScatter = 1 << 20
	}
	return &refKernels{pr: pr, n: pr.Rows, p: pr.Cols, q: pr.Stride(), maxS: maxScatter, calls: map[string]int{}}
}

func (k *refKernels) Bootstrap(seed uint64, t0, trees, n, draws int) ([]uint32, error) {
	k.calls["bootstrap"]++
	out := make([]uint32, trees*n)
	c := make([]int32, n)
	for t := 0; t < trees; t++ {
		core.BootstrapCounts(seed, t0+t, draws, c)
		for i, v := range c {
			out[t*n+i] = uint32(v)
		}
	}
	return out, nil
}

func (k *refKernels) SetBatch(trees int, weight []uint32, slot []int32) error {
	k.trees = trees
	k.weight = append([]uint32(nil), weight...)
	k.slot = append([]int32(nil), slot...)
	return nil
}

func (k *refKernels) MaxScatter() int { return k.maxS }

func (k *refKernels) Histograms(hmap []int32, lo, hi int) ([]int64, error) {
	k.calls["histogram"]++
	pr, q, e := k.pr, k.q, k.pr.Entries
	h := make([]int64, (hi-lo)*e*q)
	for r, s := range k.slot {
		if s < 0 {
			continue
		}
		hs := int(hmap[s])
		if hs < lo || hs >= hi {
			continue
		}
		i := r % k.n
		w := int64(k.weight[r])
		for j := 0; j < k.p; j++ {
			base := ((hs-lo)*e + pr.Offsets[j] + int(pr.Codes[i*k.p+j])) * q
			h[base]++
			h[base+1] += w
			if pr.Class != nil {
				h[base+2+int(pr.Class[i])] += w
			} else {
				h[base+2] += w * pr.YQ[i]
			}
		}
	}
	return h, nil
}

func (k *refKernels) Move(dec []int32) error {
	k.calls["partition"]++
	for r, s := range k.slot {
		if s < 0 {
			continue
		}
		f := dec[4*s]
		if f < 0 {
			k.slot[r] = -1
			continue
		}
		code := k.pr.Codes[(r%k.n)*k.p+int(f)]
		bin, ml := uint8(dec[4*s+1]&0xFF), dec[4*s+1]>>8 != 0
		if code <= bin || (code == k.pr.MissCode[f] && ml) {
			k.slot[r] = dec[4*s+2]
		} else {
			k.slot[r] = dec[4*s+3]
		}
	}
	return nil
}

func (k *refKernels) Close() {}
