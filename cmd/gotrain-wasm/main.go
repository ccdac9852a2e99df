//go:build js && wasm

// Command gotrain-wasm is gotrain's random forests as a WebAssembly module
// for JavaScript (a browser tab, or Node): built with
//
//	GOOS=js GOARCH=wasm go build -o web/dist/gotrain.wasm ./cmd/gotrain-wasm
//
// and started by Go's wasm_exec.js, it sets globalThis.gotrain, whose
// functions return promises (docs/WEBGPU.md, "The JavaScript API";
// web/gotrain.mjs wraps them):
//
//	gotrain.openGPU()                       → {adapter}
//	gotrain.dataset(name)                   → {x, y, rows, cols, featureNames, task}
//	gotrain.train(data, options)            → {model, report}
//	gotrain.predict(model, x, rows, opts)   → {values, predictions, outputs, device}
//	gotrain.diffModels(a, b)                → "" or the first difference
//	gotrain.describe(model)                 → {task, trees, nodes, features, classes, ...}
//
// data is {dataset: "diabetes"|"digits"}, {csv: text, target, task} or
// {x: Float64Array, y: Float64Array, rows, cols, featureNames}; options
// follow forest.Options in camel case, plus device: "webgpu" (the
// default) or "cpu" (the native learner compiled to WebAssembly). The
// model is the model file's bytes (forest.Forest.Save), which gotrain
// forest predict reads on the CPU. WebGPU is never replaced by the CPU
// silently: a missing adapter is an error, and "cpu" must be asked for.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"syscall/js"
	"time"
	"unsafe"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/forest/forestwgpu"
	"github.com/gotrain/gotrain/internal/webgpu"
)

var gpu *webgpu.Device

// openGPU opens the WebGPU device once.
func openGPU() (*webgpu.Device, error) {
	if gpu != nil {
		return gpu, nil
	}
	d, err := webgpu.Open()
	if err != nil {
		return nil, err
	}
	gpu = d
	return d, nil
}

// async wraps fn as a JavaScript function returning a promise; fn runs in
// a goroutine of its own (it may await WebGPU's promises).
func async(fn func(args []js.Value) (any, error)) js.Func {
	return js.FuncOf(func(this js.Value, args []js.Value) any {
		args = append([]js.Value(nil), args...)
		var executor js.Func
		executor = js.FuncOf(func(this js.Value, pa []js.Value) any {
			resolve, reject := pa[0], pa[1]
			go func() {
				defer executor.Release()
				v, err := func() (v any, err error) {
					defer func() {
						if r := recover(); r != nil {
							err = fmt.Errorf("gotrain: %v", r)
						}
					}()
					return fn(args)
				}()
				if err != nil {
					reject.Invoke(js.Global().Get("Error").New(err.Error()))
					return
				}
				resolve.Invoke(v)
			}()
			return nil
		})
		return js.Global().Get("Promise").New(executor)
	})
}

// bytesFromJS copies a Uint8Array (or any typed array's bytes) into Go.
func bytesFromJS(v js.Value) ([]byte, error) {
	if v.IsUndefined() || v.IsNull() {
		return nil, errors.New("missing bytes")
	}
	u8 := js.Global().Get("Uint8Array")
	if !v.InstanceOf(u8) {
		if buf := v.Get("buffer"); !buf.IsUndefined() {
			v = u8.New(buf, v.Get("byteOffset"), v.Get("byteLength"))
		} else {
			return nil, errors.New("not a typed array")
		}
	}
	out := make([]byte, v.Get("byteLength").Int())
	js.CopyBytesToGo(out, v)
	return out, nil
}

// float64sFromJS copies a Float64Array (or an array of numbers) into Go.
func float64sFromJS(v js.Value, what string) ([]float64, error) {
	if v.IsUndefined() || v.IsNull() {
		return nil, fmt.Errorf("gotrain: %s is missing", what)
	}
	if !v.InstanceOf(js.Global().Get("Float64Array")) {
		v = js.Global().Get("Float64Array").New(v) // from an array or another typed array
	}
	b, err := bytesFromJS(v)
	if err != nil {
		return nil, fmt.Errorf("gotrain: %s: %w", what, err)
	}
	out := make([]float64, len(b)/8)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), len(b)), b)
	return out, nil
}

// float64sToJS returns a new Float64Array holding xs.
func float64sToJS(xs []float64) js.Value {
	arr := js.Global().Get("Float64Array").New(len(xs))
	if len(xs) > 0 {
		u8 := js.Global().Get("Uint8Array").New(arr.Get("buffer"))
		js.CopyBytesToJS(u8, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), 8*len(xs)))
	}
	return arr
}

func bytesToJS(b []byte) js.Value {
	arr := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(arr, b)
	return arr
}

func strings2JS(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// field reads an optional field of a JavaScript object.
func field(o js.Value, k string) (js.Value, bool) {
	if o.IsUndefined() || o.IsNull() {
		return js.Undefined(), false
	}
	v := o.Get(k)
	return v, !v.IsUndefined() && !v.IsNull()
}

// loadData reads the training data a train or dataset call names.
func loadData(in js.Value) (*data.Dataset, forest.Task, error) {
	if in.Type() == js.TypeString {
		in = js.ValueOf(map[string]any{"dataset": in.String()})
	}
	if v, ok := field(in, "dataset"); ok {
		name := v.String()
		d, err := data.Embedded(name)
		if err != nil {
			return nil, "", err
		}
		return d, forest.DataSpec{Dataset: name}.DefaultTask(), nil
	}
	task := forest.Regression
	if v, ok := field(in, "task"); ok {
		task = forest.Task(v.String())
	}
	if v, ok := field(in, "csv"); ok {
		opts := data.CSVOptions{Classification: task == forest.Classification}
		if t, ok := field(in, "target"); ok {
			opts.Target = t.String()
		}
		d, err := data.ReadCSV(strings.NewReader(v.String()), "csv", opts)
		return d, task, err
	}
	xv, ok := field(in, "x")
	if !ok {
		return nil, "", errors.New("gotrain: the data is none of {dataset}, {csv} or {x, y, rows, cols}")
	}
	x, err := float64sFromJS(xv, "x")
	if err != nil {
		return nil, "", err
	}
	yv, _ := field(in, "y")
	y, err := float64sFromJS(yv, "y")
	if err != nil {
		return nil, "", err
	}
	rows, cols := len(y), 0
	if v, ok := field(in, "cols"); ok {
		cols = v.Int()
	}
	if v, ok := field(in, "rows"); ok && v.Int() != rows {
		return nil, "", fmt.Errorf("gotrain: rows %d, but y holds %d values", v.Int(), rows)
	}
	if cols <= 0 || len(x) != rows*cols {
		return nil, "", fmt.Errorf("gotrain: x holds %d values, want rows (%d) × cols (%d)", len(x), rows, cols)
	}
	d := &data.Dataset{Name: "array", X: x, Y: y, Rows: rows, Cols: cols}
	if v, ok := field(in, "featureNames"); ok {
		for i := 0; i < v.Length(); i++ {
			d.FeatureNames = append(d.FeatureNames, v.Index(i).String())
		}
	}
	return d, task, nil
}

// options reads forest.Options and the device from a JavaScript object.
func options(o js.Value, task forest.Task) (forest.Options, string, error) {
	opt := forest.DefaultOptions()
	opt.Task = task
	device := "webgpu"
	ints := map[string]*int{"trees": &opt.Trees, "maxDepth": &opt.MaxDepth, "minSamplesSplit": &opt.MinSamplesSplit,
		"minSamplesLeaf": &opt.MinSamplesLeaf, "bins": &opt.Bins, "threads": &opt.Threads}
	for k, p := range ints {
		if v, ok := field(o, k); ok {
			*p = v.Int()
		}
	}
	if v, ok := field(o, "seed"); ok {
		if v.Type() == js.TypeString { // seeds beyond 2^53 as decimal text
			if _, err := fmt.Sscan(v.String(), &opt.Seed); err != nil {
				return opt, "", fmt.Errorf("gotrain: seed %q: %w", v.String(), err)
			}
		} else {
			opt.Seed = uint64(v.Float())
		}
	}
	strs := map[string]*string{"maxFeatures": &opt.MaxFeatures, "classWeight": &opt.ClassWeight}
	for k, p := range strs {
		if v, ok := field(o, k); ok {
			*p = v.String()
		}
	}
	if v, ok := field(o, "task"); ok {
		opt.Task = forest.Task(v.String())
	}
	if v, ok := field(o, "criterion"); ok {
		opt.Criterion = forest.Criterion(v.String())
	}
	if v, ok := field(o, "splitter"); ok {
		opt.Splitter = forest.Splitter(v.String())
	}
	if v, ok := field(o, "maxSamples"); ok {
		opt.MaxSamples = v.Float()
	}
	if v, ok := field(o, "minWeightFractionLeaf"); ok {
		opt.MinWeightFractionLeaf = v.Float()
	}
	if v, ok := field(o, "bootstrap"); ok {
		opt.NoBootstrap = !v.Bool()
	}
	if v, ok := field(o, "oob"); ok {
		opt.OOB = v.Bool()
	}
	if v, ok := field(o, "device"); ok {
		device = v.String()
	}
	if device != "webgpu" && device != "cpu" {
		return opt, "", fmt.Errorf("gotrain: device %q: want webgpu or cpu", device)
	}
	return opt, device, nil
}

func train(args []js.Value) (any, error) {
	if len(args) < 1 {
		return nil, errors.New("gotrain: train(data, options): no data")
	}
	d, task, err := loadData(args[0])
	if err != nil {
		return nil, err
	}
	var o js.Value
	if len(args) > 1 {
		o = args[1]
	}
	opt, device, err := options(o, task)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var f *forest.Forest
	report := map[string]any{"device": device}
	if device == "cpu" {
		if opt.Threads == 0 {
			opt.Threads = 1
		}
		if f, err = forest.Fit(d, opt); err != nil {
			return nil, err
		}
	} else {
		dev, err := openGPU()
		if err != nil {
			return nil, err
		}
		var rep *forestwgpu.Report
		if f, rep, err = forestwgpu.Fit(dev, d, opt); err != nil {
			return nil, err
		}
		stages := map[string]any{}
		for i, s := range rep.Stages {
			stages[s] = rep.Dispatches[i]
		}
		report["adapter"] = rep.Adapter
		report["dispatches"] = stages
		report["levels"] = rep.Levels
		report["treesPerBatch"] = rep.TreesPerBatch
		report["scatteredNodes"] = rep.ScatteredNodes
		report["derivedNodes"] = rep.DerivedNodes
		report["histogramPasses"] = rep.HistogramCalls
	}
	report["seconds"] = time.Since(start).Seconds()
	report["trees"] = len(f.Trees)
	nodes := 0
	for i := range f.Trees {
		nodes += f.Trees[i].NumNodes()
	}
	report["nodes"] = nodes
	if !math.IsNaN(f.OOBScore) {
		report["oobScore"] = f.OOBScore
	}
	var buf bytes.Buffer
	if err := f.Save(&buf); err != nil {
		return nil, err
	}
	return map[string]any{"model": bytesToJS(buf.Bytes()), "report": report}, nil
}

func loadModel(v js.Value) (*forest.Forest, error) {
	b, err := bytesFromJS(v)
	if err != nil {
		return nil, fmt.Errorf("gotrain: model: %w", err)
	}
	return forest.Load(bytes.NewReader(b))
}

func predict(args []js.Value) (any, error) {
	if len(args) < 3 {
		return nil, errors.New("gotrain: predict(model, x, rows[, options])")
	}
	f, err := loadModel(args[0])
	if err != nil {
		return nil, err
	}
	x, err := float64sFromJS(args[1], "x")
	if err != nil {
		return nil, err
	}
	rows := args[2].Int()
	device := "webgpu"
	if len(args) > 3 {
		if v, ok := field(args[3], "device"); ok {
			device = v.String()
		}
	}
	var vals, preds []float64
	switch device {
	case "cpu":
		f.Options.Threads = 1
		if vals, err = f.PredictValues(x, rows); err != nil {
			return nil, err
		}
		preds, err = f.Predict(x, rows)
	case "webgpu":
		dev, err := openGPU()
		if err != nil {
			return nil, err
		}
		p, err := forestwgpu.NewPredictor(dev, f)
		if err != nil {
			return nil, err
		}
		defer p.Close()
		if vals, err = p.PredictValues(x, rows); err != nil {
			return nil, err
		}
		preds, err = p.Predict(x, rows)
	default:
		return nil, fmt.Errorf("gotrain: device %q: want webgpu or cpu", device)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"values": float64sToJS(vals), "predictions": float64sToJS(preds), "outputs": f.Outputs(), "device": device}, nil
}

// diffModels describes the first difference between two models' trees
// node for node ("" when equal).
func diffModels(args []js.Value) (any, error) {
	if len(args) < 2 {
		return nil, errors.New("gotrain: diffModels(a, b)")
	}
	a, err := loadModel(args[0])
	if err != nil {
		return nil, err
	}
	b, err := loadModel(args[1])
	if err != nil {
		return nil, err
	}
	return diffTrees(a, b), nil
}

func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

func diffTrees(want, got *forest.Forest) string {
	if len(want.Trees) != len(got.Trees) {
		return fmt.Sprintf("%d trees, want %d", len(got.Trees), len(want.Trees))
	}
	d := want.Outputs()
	if got.Outputs() != d {
		return fmt.Sprintf("%d outputs, want %d", got.Outputs(), d)
	}
	for t := range want.Trees {
		a, b := &want.Trees[t], &got.Trees[t]
		if a.NumNodes() != b.NumNodes() {
			return fmt.Sprintf("tree %d: %d nodes, want %d", t, b.NumNodes(), a.NumNodes())
		}
		for i := range a.Feature {
			node := func(tr *forest.Tree) string {
				return fmt.Sprintf("feature %d bin %d threshold %v missingLeft %v left %d samples %d weight %d gain %v value %v",
					tr.Feature[i], tr.Bin(i), tr.Threshold(i), tr.MissingLeft(i), tr.Left[i], tr.Samples(i), tr.Weight(i), tr.Gain(i), tr.Value[i*d:(i+1)*d])
			}
			same := a.Feature[i] == b.Feature[i] && a.Bin(i) == b.Bin(i) && sameFloat(a.Threshold(i), b.Threshold(i)) &&
				a.MissingLeft(i) == b.MissingLeft(i) && a.Left[i] == b.Left[i] && a.Samples(i) == b.Samples(i) &&
				a.Weight(i) == b.Weight(i) && sameFloat(a.Gain(i), b.Gain(i))
			for k := 0; k < d; k++ {
				same = same && sameFloat(a.Value[i*d+k], b.Value[i*d+k])
			}
			if !same {
				return fmt.Sprintf("tree %d node %d:\n  second: %s\n  first:  %s", t, i, node(b), node(a))
			}
		}
	}
	if !sameFloat(want.OOBScore, got.OOBScore) || want.OOBRows != got.OOBRows {
		return fmt.Sprintf("OOB score %v (%d rows), want %v (%d rows)", got.OOBScore, got.OOBRows, want.OOBScore, want.OOBRows)
	}
	return ""
}

func describe(args []js.Value) (any, error) {
	if len(args) < 1 {
		return nil, errors.New("gotrain: describe(model)")
	}
	f, err := loadModel(args[0])
	if err != nil {
		return nil, err
	}
	nodes, depth := 0, 0
	for i := range f.Trees {
		nodes += f.Trees[i].NumNodes()
		depth = max(depth, f.Trees[i].Depth())
	}
	out := map[string]any{"task": string(f.Options.Task), "trees": len(f.Trees), "nodes": nodes, "depth": depth,
		"features": strings2JS(f.Features), "numFeatures": f.NumFeatures, "classes": strings2JS(f.Classes), "target": f.Target}
	if !math.IsNaN(f.OOBScore) {
		out["oobScore"] = f.OOBScore
	}
	return out, nil
}

func dataset(args []js.Value) (any, error) {
	if len(args) < 1 {
		return nil, errors.New("gotrain: dataset(name)")
	}
	d, task, err := loadData(args[0])
	if err != nil {
		return nil, err
	}
	return map[string]any{"x": float64sToJS(d.X), "y": float64sToJS(d.Y), "rows": d.Rows, "cols": d.Cols,
		"featureNames": strings2JS(d.FeatureNames), "target": d.TargetName, "task": string(task)}, nil
}

func main() {
	api := js.Global().Get("Object").New()
	api.Set("openGPU", async(func([]js.Value) (any, error) {
		d, err := openGPU()
		if err != nil {
			return nil, err
		}
		return map[string]any{"adapter": d.Info.String()}, nil
	}))
	api.Set("train", async(train))
	api.Set("predict", async(predict))
	api.Set("diffModels", async(diffModels))
	api.Set("describe", async(describe))
	api.Set("dataset", async(dataset))
	js.Global().Set("gotrain", api)
	if ready := js.Global().Get("__gotrainReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {} // serve calls until the page or process ends
}
