package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/dist"
	"github.com/gotrain/gotrain/internal/cpufeat"
	"github.com/gotrain/gotrain/internal/outputs"
	"github.com/gotrain/gotrain/internal/readlimit"
	"github.com/gotrain/gotrain/signal"
	"github.com/gotrain/gotrain/train"
)

// globals are the flags every command shares.
type globals struct {
	device      string
	fallback    bool
	plugin      string // --plugin: the only PJRT plugin file considered
	json        bool
	logLevel    string
	maxInputMiB int64 // --max-input-mib: the data readers' size cap (0: theirs)
	// stdout is the pipe an output "-" writes to (outputs), stdoutPath
	// its path.
	stdout     *outputs.Pipe
	stdoutPath string
	// comm is the MPI launch a training command joined with
	// --distributed (joinRanks); runTraining leaves it.
	comm dist.Comm
}

// maxInput is --max-input-mib in bytes (0: each reader's default cap).
func (g *globals) maxInput() int64 { return g.maxInputMiB << 20 }

func newRootCmd() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "gotrain",
		Short: "Train models on the device you choose, and know which one did the work",
		Long: `gotrain trains random forests, neural networks and signal pipelines on an
XLA device (NVIDIA GPU, TPU, XLA CPU), GoMLX's pure-Go backend or native Go code.
It never falls back silently: a --device it cannot honour is an error with the
reason, unless --fallback is given.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
				return fmt.Errorf("--log-level %q: want debug, info, warn or error", g.logLevel)
			}
			if g.maxInputMiB < 0 || g.maxInputMiB > 1<<30 {
				return fmt.Errorf("--max-input-mib %d: want 0 (the readers' defaults) to %d", g.maxInputMiB, 1<<30)
			}
			slog.SetDefault(slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level})))
			if err := dist.CheckLaunch(); err != nil {
				// Started as one of several processes by mpirun, srun or
				// the like, without MPI: each would do the whole job alone.
				return err
			}
			return cpufeat.Err() // an unknown GOTRAIN_CPU value
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.device, "device", "auto", "device to run on: "+device.ValidForms)
	pf.BoolVar(&g.fallback, "fallback", false, "if --device cannot be used, continue on the next best device (with a warning)")
	pf.StringVar(&g.plugin, "plugin", "", "PJRT plugin file to use, for example JAX's <site-packages>/jax_plugins/xla_cuda12/xla_cuda_plugin.so; when given, it is the only plugin considered")
	pf.BoolVar(&g.json, "json", false, "print the report as JSON on stdout")
	pf.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.Int64Var(&g.maxInputMiB, "max-input-mib", 0, "size cap, in MiB, of the data files read (CSV, IDX, text, instructions, feature sets); a larger or endless input is refused (0: 1024 MiB, 2048 for feature sets)")
	root.AddCommand(newBenchCmd(g), newDevicesCmd(g), newDoctorCmd(g), newVersionCmd(g),
		group("setup", "Install optional components on request", newSetupXLACmd(g)),
		group("forest", "Train random forests, predict with them and explain their predictions", newForestTrainCmd(g), newForestPredictCmd(g), newForestExplainCmd(g)),
		group("signal", "Synthesize IQ records, extract RF features, benchmark the pipeline",
			newSignalSynthCmd(g), newSignalFeaturesCmd(g), newSignalBenchCmd(g), newSignalDatasetCmd(g),
			group("classify", "Train and evaluate a modulation classifier: a random forest on signal dataset features, or a ResNet on their IQ records",
				newClassifyTrainCmd(g), newClassifyEvalCmd(g), newClassifyDemoCmd(g), newClassifyCompareCmd(g))),
		group("lm", "Train language models and sample from them",
			group("lstm", "Character-level LSTM language model (docs/LSTM.md)", newLMTrainCmd(g), newLSTMSampleCmd(g)),
			group("transformer", "Character-level transformer language model, pretraining and instruction tuning (docs/TRANSFORMER.md)",
				newLMTransformerTrainCmd(g), newTransformerSampleCmd(g))),
		group("moe", "Mixture-of-experts classifier (docs/MOE.md)", newMoETrainCmd(g)),
		newExportCmd(g))
	finishEach(root, g)
	return root
}

// finishEach sets up every runnable command of the tree: it takes no
// positional argument unless it says otherwise, and it ends with
// finishOutputs, so that an output written to standard output is
// complete, and its errors reported, before the command returns.
func finishEach(c *cobra.Command, g *globals) {
	if run := c.RunE; run != nil {
		if c.Args == nil {
			c.Args = cobra.NoArgs
		}
		c.RunE = func(cmd *cobra.Command, args []string) error { return g.finishOutputs(run(cmd, args)) }
	}
	for _, sub := range c.Commands() {
		finishEach(sub, g)
	}
}

// group returns a command that holds the commands subs.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short}
	c.AddCommand(subs...)
	return c
}

// engine turns --device (and --fallback) into an engine with device.Select,
// the one place that parses a device spec and resolves it. A fallback
// prints its one warning line on stderr; the choice is logged at debug level.
func (g *globals) engine(cmd *cobra.Command, req device.Request) (*device.Engine, error) {
	req.Device = g.device
	req.Fallback = req.Fallback || g.fallback
	req.PluginFile = g.plugin
	e, err := device.Select(req)
	if err != nil {
		return nil, err
	}
	announce(cmd, &e.Resolution)
	return e, nil
}

// announce prints the one warning line of a resolution that fell back on
// stderr, else logs the choice at debug level (nothing for nil).
func announce(cmd *cobra.Command, r *device.Resolution) {
	if r != nil && r.FellBack {
		fmt.Fprintln(cmd.ErrOrStderr(), r.Warning)
	} else if r != nil {
		slog.Debug(r.Summary())
	}
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// textReport is a result that writes itself as text; its JSON is the
// --json report.
type textReport interface{ WriteText(io.Writer) error }

// print writes rep as JSON with --json, else as text.
func (g *globals) print(cmd *cobra.Command, rep textReport) error {
	var b bytes.Buffer
	var err error
	if g.json {
		err = printJSON(&b, rep)
	} else {
		err = rep.WriteText(&b)
	}
	if err != nil {
		return err
	}
	text := b.String()
	if g.stdoutPath != "" {
		text = strings.ReplaceAll(text, g.stdoutPath, "-") // the output the user named
	}
	_, err = io.WriteString(cmd.OutOrStdout(), text)
	return err
}

// onEngine runs fn on the engine of a command with a native path, closed
// after: the native code on cpu and on auto without an accelerator (it is
// the faster on a CPU), graphs elsewhere; accept, when set, refuses
// devices. The selection's errors start with what.
func (g *globals) onEngine(cmd *cobra.Command, what string, accept func(device.Device) error, fn func(*device.Engine) error) error {
	e, err := g.engine(cmd, device.Request{PreferNative: true, Accept: accept})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer e.Close()
	return fn(e)
}

// outputs prepares the output flags outs of cmd before any work: each
// must pass outputs.Check against the input flags ins (a SigMF input with
// its pair) and extra (derived inputs, by what they are). And it makes "-"
// mean standard output: the flag is set to the path of an outputs.Pipe,
// which the library's writers write through (as any FIFO), and the report
// goes to standard error, naming the output "-". At most one output may
// be "-". The command's end (finishOutputs) closes the pipe.
func (g *globals) outputs(cmd *cobra.Command, outs, ins []string, extra map[string]string) error {
	inputs := map[string]string{}
	for _, name := range ins {
		if p, _ := cmd.Flags().GetString(name); p != "" && p != "-" {
			inputs["--"+name] = p
			inputs["--"+name+" (its SigMF metadata)"], inputs["--"+name+" (its SigMF data)"] = signal.SigMFPaths(p)
		}
	}
	maps.Copy(inputs, extra)
	dash := ""
	for _, name := range outs {
		out, _ := cmd.Flags().GetString(name)
		if out == "-" && dash != "" {
			return fmt.Errorf("%s: only one output can be - (standard output): --%s and --%s", cmd.CommandPath(), dash, name)
		} else if out == "-" {
			dash = name
		} else if out != "" {
			if err := outputs.Check(out, inputs); err != nil {
				return fmt.Errorf("%s: --%s: %w", cmd.CommandPath(), name, err)
			}
			if name == "metrics-log" { // and the CSV log written beside it
				if err := outputs.Check(train.CSVLogPath(out), inputs); err != nil {
					return fmt.Errorf("%s: --%s: its CSV log: %w", cmd.CommandPath(), name, err)
				}
			}
		}
	}
	if dash == "" {
		return nil
	}
	p, err := outputs.NewPipe(cmd.OutOrStdout())
	if err != nil {
		return fmt.Errorf("%s: standard output: %w", cmd.CommandPath(), err)
	}
	g.stdoutPath, g.stdout = p.Path(), p
	cmd.SetOut(cmd.ErrOrStderr())
	return cmd.Flags().Set(dash, g.stdoutPath)
}

// finishOutputs ends a command that wrote an output to standard output
// (outputs): it closes the pipe and waits for the copy, whose error (a
// full disk behind standard output) joins err.
func (g *globals) finishOutputs(err error) error {
	if g.stdout == nil {
		return err
	}
	werr := g.stdout.Close()
	g.stdout = nil
	if werr != nil {
		return errors.Join(fmt.Errorf("standard output: %w", werr), err)
	}
	return err
}

// execute runs the command tree root: the size-cap error of a reader that
// --max-input-mib sets then names that flag (other caps keep their own
// advice).
func execute(root *cobra.Command) error {
	err := root.Execute()
	var le *readlimit.Error
	if errors.As(err, &le) && slices.Contains(maxInputOptions, le.Option) {
		return readlimit.Rename(err, "--max-input-mib")
	}
	return err
}

// maxInputOptions are the library options --max-input-mib sets, as the
// readers' cap errors name them.
var maxInputOptions = []string{"DataSpec.MaxBytes", "RunSpec.MaxBytes", "CSVOptions.MaxBytes", "DataOptions.MaxBytes", "Options.MaxBytes", "maxBytes"}
