package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/forest/forestgraph"
)

// TestForestPredictGraphDevice trains a small model on the CPU and predicts
// with it on the native predictor and on the inference graph (simplego):
// the CSV outputs must be identical, and the JSON report must name the
// device used and give the compile time apart from the prediction time.
func TestForestPredictGraphDevice(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		dataset string
		proba   bool
	}{{"diabetes", false}, {"digits", false}, {"digits", true}} {
		model := filepath.Join(dir, tc.dataset+".gtf")
		if _, err := os.Stat(model); err != nil {
			if _, _, err := run(t, "forest", "train", "--dataset", tc.dataset, "--trees", "12", "--max-depth", "8", "--seed", "3", "--save", model); err != nil {
				t.Fatal(err)
			}
		}
		in := filepath.Join(dir, tc.dataset+".csv")
		writeForestInput(t, in, tc.dataset, 300)
		name := fmt.Sprintf("%s/proba=%v", tc.dataset, tc.proba)
		outs := map[string]string{}
		for _, dev := range []string{"cpu", "go"} {
			out := filepath.Join(dir, fmt.Sprintf("%s-%v-%s.csv", tc.dataset, tc.proba, dev))
			args := []string{"--json", "--device", dev, "forest", "predict", "--model", model, "--data", in, "--out", out, "--batch-rows", "128"}
			if tc.proba {
				args = append(args, "--proba")
			}
			stdout, _, err := run(t, args...)
			if err != nil {
				t.Fatalf("%s on %s: %v", name, dev, err)
			}
			var rep forestgraph.PredictReport
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("%s on %s: bad JSON: %v\n%s", name, dev, err, stdout)
			}
			if rep.Device != dev || rep.Predictions == nil || rep.Rows != 300 || rep.Trees != 12 || rep.Predictions.Seconds <= 0 {
				t.Errorf("%s on %s: report %+v", name, dev, rep)
			}
			if dev == "go" && (rep.Engine != "graph" || rep.PredictorInfo == nil || rep.PredictorInfo.CompileSeconds <= 0 || rep.BatchRows != 128 || rep.Strategy == "") {
				t.Errorf("%s on go: report lacks the graph fields: %s", name, stdout)
			}
			if dev == "cpu" && (rep.Engine != "native" || rep.PredictorInfo != nil || strings.Contains(stdout, "compile_seconds")) {
				t.Errorf("%s on cpu: report %s", name, stdout)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			outs[dev] = string(b)
		}
		if outs["cpu"] != outs["go"] || strings.Count(outs["cpu"], "\n") != 301 {
			t.Errorf("%s: the graph predictions differ from the native ones (or are not 300 rows)", name)
		}
	}
	// Without --json the CSV goes to stdout, the same on both paths.
	model, in := filepath.Join(dir, "diabetes.gtf"), filepath.Join(dir, "diabetes.csv")
	cpu, _, err := run(t, "--device", "cpu", "forest", "predict", "--model", model, "--data", in)
	if err != nil {
		t.Fatal(err)
	}
	gr, _, err := run(t, "--device", "go", "forest", "predict", "--model", model, "--data", in)
	if err != nil {
		t.Fatal(err)
	}
	if cpu != gr || !strings.HasPrefix(cpu, "prediction\n") {
		t.Errorf("stdout predictions differ:\ncpu %.200s\ngo  %.200s", cpu, gr)
	}
}

// writeForestInput writes rows random feature rows (some missing) with the
// embedded data set's header.
func writeForestInput(t *testing.T, path, dataset string, rows int) {
	t.Helper()
	var header []string
	if dataset == "diabetes" {
		header = strings.Split("age,sex,bmi,bp,s1,s2,s3,s4,s5,s6", ",")
	} else {
		for r := range 8 {
			for c := range 8 {
				header = append(header, fmt.Sprintf("pixel_%d_%d", r, c))
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	sb.WriteString(strings.Join(header, ",") + "\n")
	for range rows {
		for j := range header {
			if j > 0 {
				sb.WriteByte(',')
			}
			switch {
			case r.IntN(10) == 0: // missing
			case dataset == "diabetes":
				fmt.Fprintf(&sb, "%g", []float64{50, 1.5, 26, 95, 190, 115, 50, 4, 4.6, 91}[j]*(0.6+0.8*r.Float64()))
			default:
				fmt.Fprintf(&sb, "%d", r.IntN(17))
			}
		}
		sb.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestForestGraphDeviceErrors(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.gtf")
	if _, _, err := run(t, "forest", "train", "--dataset", "diabetes", "--trees", "3", "--max-depth", "3", "--save", model); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.csv")
	writeForestInput(t, in, "diabetes", 5)
	// Invalid options are refused on a graph device as on the cpu, with the reason.
	_, _, err := run(t, "--device", "go", "forest", "train", "--dataset", "digits", "--trees", "2", "--criterion", "squared_error")
	if err == nil || !strings.Contains(err.Error(), "criterion") {
		t.Errorf("forest train --device go --criterion squared_error (classification): err = %v", err)
	}
	// No plugin (run hides them): training there fails with the reason.
	if _, _, err := run(t, "--device", "gpu", "forest", "train", "--dataset", "diabetes", "--trees", "2"); err == nil || !errors.Is(err, device.ErrUnavailable) {
		t.Errorf("forest train --device gpu: err = %v", err)
	}
	// No plugin: an explicit request fails with the reason.
	if _, _, err := run(t, "--device", "gpu", "forest", "predict", "--model", model, "--data", in); err == nil {
		t.Error("forest predict --device gpu succeeded on a machine without plugins")
	}
	if gpu := gpuHere(t); gpu != "" {
		// A GPU host: the same forest predicts there, as graphs, with the
		// native predictor's values.
		gp, cp := filepath.Join(dir, "gpu.csv"), filepath.Join(dir, "cpu.csv")
		out, _, err := runGPU(t, "--json", "--device", "gpu", "forest", "predict", "--model", model, "--data", in, "--out", gp)
		if err != nil || !strings.Contains(out, `"engine": "graph"`) {
			t.Errorf("forest predict --device gpu on a GPU host (%s): %v\n%s", gpu, err, out)
		}
		if _, _, err := run(t, "--device", "cpu", "forest", "predict", "--model", model, "--data", in, "--out", cp); err != nil {
			t.Fatal(err)
		}
		g, _ := os.ReadFile(gp)
		c, _ := os.ReadFile(cp)
		if len(c) == 0 || !bytes.Equal(g, c) {
			t.Errorf("forest predict on the GPU differs from the cpu:\n%s\nvs\n%s", g, c)
		}
	}
	// --json needs --out; --batch-rows must be positive.
	if _, _, err := run(t, "--json", "--device", "go", "forest", "predict", "--model", model, "--data", in); err == nil || !strings.Contains(err.Error(), "--out") {
		t.Errorf("--json without --out: err = %v", err)
	}
	if _, _, err := run(t, "--device", "go", "forest", "predict", "--model", model, "--data", in, "--batch-rows", "0"); err == nil || !strings.Contains(err.Error(), "--batch-rows") {
		t.Errorf("--batch-rows 0: err = %v", err)
	}
	// auto without an accelerator keeps the native predictor.
	stdout, _, err := run(t, "--json", "forest", "predict", "--model", model, "--data", in, "--out", filepath.Join(dir, "p.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var rep forestgraph.PredictReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || rep.Device != "cpu" || rep.Engine != "native" {
		t.Errorf("auto: %v %s", err, stdout)
	}
}

// TestForestTrainGraphDevice trains on the native learner and on the graph
// learner (simplego): the JSON report names the device and engine, and the
// saved models predict the same values on the native and graph predictors.
func TestForestTrainGraphDevice(t *testing.T) {
	dir := t.TempDir()
	for _, dataset := range []string{"diabetes", "digits"} {
		in := filepath.Join(dir, dataset+".csv")
		writeForestInput(t, in, dataset, 100)
		var preds []string
		for _, dev := range []string{"cpu", "go"} {
			model := filepath.Join(dir, dataset+"-"+dev+".gtf")
			args := []string{"--json", "--device", dev, "forest", "train", "--dataset", dataset, "--trees", "3", "--max-depth", "5", "--seed", "4", "--save", model}
			if dataset == "digits" {
				args = append(args, "--criterion", "entropy") // simplego's Log is Go's math.Log
			}
			stdout, _, err := run(t, args...)
			if err != nil {
				t.Fatalf("%s: train on %s: %v", dataset, dev, err)
			}
			var rep forest.TrainResult
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("%s on %s: bad JSON: %v\n%s", dataset, dev, err, stdout)
			}
			switch {
			case rep.Device != dev || rep.Trees != 3 || rep.FitSeconds <= 0:
				t.Errorf("%s on %s: report %s", dataset, dev, stdout)
			case dev == "go" && (rep.Engine != "graph" || rep.GraphStats == nil || rep.GraphStats.CompileSeconds <= 0 || rep.PeakHistogramBytes <= 0 || rep.TreesPerBatch < 1):
				t.Errorf("%s on go: report lacks the graph fields: %s", dataset, stdout)
			case dev == "cpu" && (rep.Engine != "native" || rep.GraphStats != nil || strings.Contains(stdout, "compile_seconds")):
				t.Errorf("%s on cpu: report %s", dataset, stdout)
			}
			for _, pdev := range []string{"cpu", "go"} {
				out := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.csv", dataset, dev, pdev))
				if _, _, err := run(t, "--device", pdev, "forest", "predict", "--model", model, "--data", in, "--out", out); err != nil {
					t.Fatalf("%s: model trained on %s, predict on %s: %v", dataset, dev, pdev, err)
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				preds = append(preds, string(b))
			}
		}
		for i := 1; i < len(preds); i++ {
			if preds[i] != preds[0] {
				t.Errorf("%s: predictions %d (trained on %s, predicted on %s) differ from the native ones", dataset, i, []string{"cpu", "go"}[i/2], []string{"cpu", "go"}[i%2])
			}
		}
	}
}
