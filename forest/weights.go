package forest

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxWeightBound is the most a node's weight may reach in fixed point
// (WeightBound): 2^31, so that class weights stay below 2^32 for the
// packed Gini scans and regression sums keep their precision.
const maxWeightBound = 1 << 31

// classWeights returns the weight of each class that opt.ClassWeight
// gives ("balanced": rows / (classes × rows of the class), scikit-learn's
// rule; "LABEL=W,...": the listed classes, 1 for the others), or nil
// when it is empty. cls is each row's class, names the class labels.
func classWeights(spec string, cls []int32, names []string) ([]float64, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil
	}
	if cls == nil {
		return nil, errors.New("forest: class weights need a classification task")
	}
	w := make([]float64, len(names))
	if spec == "balanced" {
		count := make([]int, len(names))
		for _, c := range cls {
			count[c]++
		}
		present := 0
		for _, n := range count {
			if n > 0 {
				present++
			}
		}
		for k, n := range count {
			if n > 0 {
				w[k] = float64(len(cls)) / (float64(present) * float64(n))
			}
		}
		return w, nil
	}
	for k := range w {
		w[k] = 1
	}
	seen := map[string]bool{}
	for _, field := range strings.Split(spec, ",") {
		label, val, ok := strings.Cut(field, "=")
		label, val = strings.TrimSpace(label), strings.TrimSpace(val)
		if !ok || label == "" {
			return nil, fmt.Errorf("forest: class weight %q: want LABEL=WEIGHT (or balanced)", field)
		}
		k := -1
		for i, n := range names {
			if n == label {
				k = i
			}
		}
		if k < 0 {
			return nil, fmt.Errorf("forest: class weight %q: no class %q (the classes are %s)", field, label, strings.Join(names, ", "))
		}
		if seen[label] {
			return nil, fmt.Errorf("forest: class weight: class %q given twice", label)
		}
		seen[label] = true
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("forest: class weight %q: want a finite weight >= 0", field)
		}
		w[k] = v
	}
	return w, nil
}

// rowWeights sets pr.Sample, pr.W and pr.WeightBound from the sample
// weights (nil: 1 each) and the class weights spec: each row's weight is
// its sample weight times its class's weight, then in fixed point (see
// docs/FOREST.md, "Sample and class weights").
func rowWeights(pr *prepared, sample []float64, spec string) error {
	n := pr.Rows
	pr.WeightBound = int64(n)
	cw, err := classWeights(spec, pr.Class, pr.Classes)
	if err != nil {
		return err
	}
	if sample == nil && cw == nil {
		return nil
	}
	if sample != nil && len(sample) != n {
		return fmt.Errorf("forest: %d sample weights for %d rows", len(sample), n)
	}
	s := make([]float64, n)
	var total, largest float64
	integers := true
	for i := range s {
		v := 1.0
		if sample != nil {
			v = sample[i]
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("forest: row %d: sample weight %v is not a finite number >= 0", i, v)
			}
		}
		if cw != nil {
			v *= cw[pr.Class[i]]
		}
		s[i] = v
		total += v
		largest = max(largest, v)
		integers = integers && v == math.Trunc(v)
	}
	if !(total > 0) {
		return errors.New("forest: every row has weight 0")
	}
	// The bound of a node's weight, in the weights as given.
	bound := total
	if !pr.Options.NoBootstrap {
		bound = float64(pr.Draws) * largest
	}
	w := make([]int64, n)
	shift := 0
	if !integers || bound > maxWeightBound {
		shift = int(math.Floor(math.Log2(maxWeightBound / bound)))
	}
	var sum, top int64
	for i, v := range s {
		w[i] = int64(math.Round(math.Ldexp(v, shift)))
		sum += w[i]
		top = max(top, w[i])
	}
	if sum == 0 {
		return errors.New("forest: every row's weight rounds to 0 in fixed point (docs/FOREST.md, \"Sample and class weights\")")
	}
	pr.WeightBound = sum
	if !pr.Options.NoBootstrap {
		pr.WeightBound = int64(pr.Draws) * top
	}
	// Rows count as copies of themselves in the target's mean (so that
	// integer weights fit as repeated rows) up to a total of 2^24 copies,
	// about 16 ms of additions; beyond, the mean multiplies.
	pr.Sample, pr.W, pr.Copies = s, w, shift == 0 && sum <= 1<<24
	return nil
}
