package forestgraph

import (
	"context"
	"errors"
	"fmt"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
)

// Engine is where forests are grown and run, as the caller selected it:
// native Go code (package forest), or a GoMLX backend and a device number
// for the graphs of this package. Package device's *Engine satisfies it;
// forestgraph does not choose the device (it does not import device), it
// takes the engine it is given.
type Engine interface {
	// Name names the device, for reports.
	Name() string
	// Native tells whether the work runs as native Go code rather than
	// as graphs.
	Native() bool
	// Backend returns the GoMLX backend that runs the graphs.
	Backend() (backends.Backend, error)
	// DeviceNum is the device's number within the backend.
	DeviceNum() int
}

// Engine names of the reports (forest.TrainResult.Engine,
// PredictReport.Engine): EngineKind returns one of them.
const (
	// NativeEngine is the native learner or predictor of package forest.
	NativeEngine = "native"
	// GraphEngine is this package's graphs.
	GraphEngine = "graph"
)

// EngineKind returns NativeEngine for a native engine and GraphEngine
// otherwise.
func EngineKind(e Engine) string {
	if e.Native() {
		return NativeEngine
	}
	return GraphEngine
}

// LearnerOn returns the learner for forest.TrainConfig.Learner on e:
// forest.Native on a native engine, else a Learner that grows the same
// trees as graphs on e's backend and device. The backend is opened here,
// so that its error (e's, as is: it names the device) comes before any
// training.
func LearnerOn(e Engine) (forest.Learner, error) {
	if e == nil {
		return nil, errors.New("forestgraph: learner: nil engine")
	}
	if e.Native() {
		return forest.Native, nil
	}
	backend, err := e.Backend()
	if err != nil {
		return nil, err
	}
	return Learner{Backend: backend, Options: GrowOptions{DeviceNum: e.DeviceNum()}}, nil
}

// DefaultBatchRows is the PredictOptions.BatchRows that 0 stands for.
const DefaultBatchRows = 8192

// PredictOptions configure PredictOn.
type PredictOptions struct {
	// Proba asks for the class probabilities (classification only)
	// instead of one prediction per row (forest.PredictOptions.Proba).
	Proba bool
	// Quantiles asks for quantiles of each row's conditional distribution
	// (forest.PredictOptions.Quantiles); they are computed on the CPU, so
	// a graph engine refuses them.
	Quantiles []float64
	// BatchRows is the most rows of one graph execution on a graph engine:
	// it bounds device memory. The batch is never larger than the data
	// (at least 1 row). 0 means DefaultBatchRows.
	BatchRows int
}

// PredictReport is a forest's predictions for a data set and where they
// were made. Its JSON form is the report of `gotrain forest predict --json
// --out FILE`. PredictOn fills Device, Engine, Predictions and, on a graph
// engine, PredictorInfo; Model, Data and Out (the files) are the caller's
// to fill in.
type PredictReport struct {
	// Device names the device, Engine the predictor (NativeEngine or
	// GraphEngine).
	Device string `json:"device"`
	Engine string `json:"engine"`
	// Model, Data and Out are the model file, the data file and the
	// predictions' file.
	Model string `json:"model"`
	Data  string `json:"data"`
	Out   string `json:"out"`
	// Predictions are the predictions (rows, trees, predict_seconds).
	*forest.Predictions
	// PredictorInfo describes the graph predictor; nil on a native engine.
	*PredictorInfo
}

// PredictOn predicts the rows of d with f on e (forest.Forest.PredictData):
// with the forest itself on a native engine, else with a Predictor on e's
// backend and device, compiled before predicting so that its compile time
// (PredictorInfo.CompileSeconds) is apart from the prediction time, and
// closed on return. The errors are those of the calls it makes, each
// naming its package.
func PredictOn(e Engine, f *forest.Forest, d *data.Dataset, opt PredictOptions) (*PredictReport, error) {
	switch {
	case e == nil || f == nil || d == nil:
		return nil, errors.New("forestgraph: predict: nil engine, forest or data set")
	case opt.BatchRows < 0:
		return nil, fmt.Errorf("forestgraph: predict: BatchRows %d: want >= 1 (0: %d)", opt.BatchRows, DefaultBatchRows)
	case opt.BatchRows == 0:
		opt.BatchRows = DefaultBatchRows
	}
	rep := &PredictReport{Device: e.Name(), Engine: EngineKind(e)}
	popt := forest.PredictOptions{Proba: opt.Proba, Quantiles: opt.Quantiles}
	if len(opt.Quantiles) > 0 && !e.Native() {
		return nil, fmt.Errorf("forestgraph: predict: quantiles are computed on the CPU only (--device cpu), not on %s", e.Name())
	}
	if !e.Native() {
		backend, err := e.Backend()
		if err != nil {
			return nil, err
		}
		p, err := NewPredictorWithOptions(backend, f, min(opt.BatchRows, max(1, d.Rows)), Options{DeviceNum: e.DeviceNum()})
		if err != nil {
			return nil, err
		}
		defer p.Close()
		if err := p.Compile(); err != nil {
			return nil, err
		}
		info := p.Info()
		rep.PredictorInfo, popt.Predictor = &info, p
	}
	var err error
	if rep.Predictions, err = f.PredictData(d, popt); err != nil {
		return nil, err
	}
	return rep, nil
}

// TrainOn does what `gotrain forest train` does on e: it loads the data
// spec names (forest.LoadData), completes opt for the data's task
// (Split.TrainOptions), grows the forest with the learner of e (LearnerOn)
// and returns the result with its Device, Engine and Data filled in (the
// caller adds where it saved the model and any fallback). logf, when not
// nil, is told what is about to be trained. Errors name their package;
// those of the fit name the device too.
func TrainOn(ctx context.Context, e Engine, spec forest.DataSpec, opt forest.Options, cfg forest.TrainConfig, logf func(msg string, args ...any)) (*forest.TrainResult, error) {
	if e == nil {
		return nil, errors.New("forestgraph: train: nil engine")
	}
	split, err := forest.LoadData(ctx, spec)
	if err != nil {
		return nil, err
	}
	if opt, err = split.TrainOptions(opt, cfg); err != nil {
		return nil, err
	}
	if cfg.Learner, err = LearnerOn(e); err != nil {
		return nil, err
	}
	if logf != nil {
		logf("forest: training", "data", split.Name, "rows", split.Train.Rows, "features", split.Train.Cols,
			"task", split.Task, "trees", opt.Trees, "device", e.Name(), "engine", EngineKind(e))
	}
	// split is not used after the call, so that the training set can go
	// once it is binned (forest.Train).
	name := split.Name
	res, err := forest.Train(split.Train, split.Test, opt, cfg)
	if err != nil {
		return nil, fmt.Errorf("forestgraph: train on %s: %w", e.Name(), err)
	}
	res.Device, res.Engine, res.Data = e.Name(), EngineKind(e), name
	return res, nil
}

// PredictFile does what `gotrain forest predict` does on e: it reads the
// forest in model (forest.LoadFile) and the rows of the data file data
// (data.LoadFile: CSV, Parquet or Arrow; its columns naming the features, at most maxBytes:
// 0 is data's default cap), predicts them (PredictOn) and returns the
// report naming both files. opt.Proba needs a classification forest.
func PredictFile(e Engine, model, dataFile string, maxBytes int64, opt PredictOptions) (*PredictReport, error) {
	f, err := forest.LoadFile(model)
	if err != nil {
		return nil, err
	}
	if opt.Proba && f.Options.Task != forest.Classification {
		return nil, fmt.Errorf("forestgraph: Proba needs a classification model; %s is %s", model, f.Options.Task)
	}
	d, err := data.LoadFile(dataFile, data.CSVOptions{NoTarget: true, MaxBytes: maxBytes})
	if err != nil {
		return nil, err
	}
	rep, err := PredictOn(e, f, d, opt)
	if err != nil {
		return nil, err
	}
	rep.Model, rep.Data = model, dataFile
	return rep, nil
}
