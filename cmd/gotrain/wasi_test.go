package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
)

// TestWASIModule builds gotrain as a WASI module (GOOS=wasip1 GOARCH=wasm
// -tags noxla), runs it under wazero to train and save a forest and to
// predict with it, and checks the predictions against the native build.
func TestWASIModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a WASI module (about a minute); skipped with -short")
	}
	dir := t.TempDir()
	wasm := filepath.Join(dir, "gotrain.wasm")
	build := exec.Command("go", "build", "-tags", "noxla", "-o", wasm, ".")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the WASI module: %v\n%s", err, out)
	}
	code, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	mod, err := rt.CompileModule(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, uint32) {
		var out, errb bytes.Buffer
		cfg := wazero.NewModuleConfig().
			WithArgs(append([]string{"gotrain"}, args...)...).
			WithStdout(&out).WithStderr(&errb).
			WithFSConfig(wazero.NewFSConfig().WithDirMount(dir, "/work")).
			WithSysWalltime().WithSysNanotime()
		m, err := rt.InstantiateModule(ctx, mod, cfg.WithName(""))
		if m != nil {
			_ = m.Close(ctx)
		}
		var exit *sys.ExitError
		if errors.As(err, &exit) {
			return out.String(), errb.String(), exit.ExitCode()
		}
		if err != nil {
			t.Fatalf("running %v: %v\nstderr: %s", args, err, errb.String())
		}
		return out.String(), errb.String(), 0
	}

	out, stderr, rc := run("--json", "forest", "train", "--dataset", "diabetes", "--trees", "20", "--max-depth", "8", "--seed", "3", "--save", "/work/model.gtf")
	if rc != 0 {
		t.Fatalf("train exited %d: %s", rc, stderr)
	}
	var rep forest.TrainResult
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("train output is not JSON: %v\n%s", err, out)
	}
	if rep.TestMSE == nil || *rep.TestMSE < 1000 || *rep.TestMSE > 6000 || rep.Device != "cpu" {
		t.Errorf("unexpected report: %s", out)
	}

	// Predict inside the module and natively; the results must be identical.
	d, err := data.Diabetes()
	if err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	rows := make([][]float64, 30)
	for i := range rows {
		rows[i] = d.Row(i)
	}
	if err := data.WriteCSV(&in, d.FeatureNames, rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, rc := run("forest", "predict", "--model", "/work/model.gtf", "--data", "/work/in.csv", "--out", "/work/pred.csv"); rc != 0 {
		t.Fatalf("predict exited %d: %s", rc, stderr)
	}
	got, err := data.LoadCSV(filepath.Join(dir, "pred.csv"), data.CSVOptions{NoTarget: true})
	if err != nil {
		t.Fatal(err)
	}
	f, err := forest.LoadFile(filepath.Join(dir, "model.gtf"))
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 0, 30*d.Cols)
	for _, r := range rows {
		x = append(x, r...)
	}
	want, err := f.Predict(x, 30)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got.X[i] != want[i] && !(math.IsNaN(got.X[i]) && math.IsNaN(want[i])) {
			t.Fatalf("row %d: WASI prediction %v, native %v", i, got.X[i], want[i])
		}
	}
	// A WASI module cannot load PJRT plugins, so this holds on a GPU host too.
	if _, _, rc := run("--device", "gpu", "forest", "train", "--dataset", "diabetes", "--trees", "2"); rc == 0 {
		t.Error("--device gpu succeeded inside the WASI module")
	}
}
