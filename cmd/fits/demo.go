package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

// The demo's recipe on the synthetic task: enough for the ablation ordering to show in a short run on a CPU
// (measured: docs/performance-notes.md). The model is selected on the
// task's validation split and the test accuracy at that epoch is reported (protocol official-val).
const (
	demoEpochs = 20
	demoBatch  = 64
)

// demoOutput is the JSON form of `fits demo --json`.
type demoOutput struct {
	Theory []demoRow      `json:"theory"`
	Train  []demoTrainRow `json:"train,omitempty"`
}

type demoRow struct {
	paper.Row
	Match bool `json:"match"`
}

func runDemo(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object")
	doTrain := fs.Bool("train", true, "train the five models of the ablation ladder on the synthetic task")
	retrain := fs.Bool("retrain", false, "train again even when the finished run of the same configuration exists, into a new folder beside it (nothing is deleted)")
	dir := fs.String("out", filepath.Join("runs", "demo"), "folder of the demo's training runs: one folder per model and settings, e.g. fsts-m1-e20-w64-b64-s1; folders holding anything else are refused, never overwritten")
	base := train.DefaultConfig()
	base.Batch, base.Protocol = demoBatch, train.OfficialVal
	fs.IntVar(&base.Epochs, "epochs", demoEpochs, "training epochs per model")
	fs.IntVar(&base.Width, "width", base.Width, "neurons per hidden layer")
	fs.IntVar(&base.Batch, "batch", base.Batch, "examples per step")
	fs.Int64Var(&base.Seed, "seed", base.Seed, "random seed")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if base.Epochs < 1 || base.Width < 1 || base.Batch < 1 {
		return badInput("--epochs, --width and --batch must be positive")
	}
	rows, err := paper.TheoryRows()
	if err != nil {
		return err
	}
	out := demoOutput{}
	for _, r := range rows {
		out.Theory = append(out.Theory, demoRow{Row: r, Match: r.Match()})
	}
	if *doTrain {
		out.Train, err = demoTrain(base, *dir, *retrain, stderr)
		if err != nil {
			return err
		}
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	fmt.Fprintln(stdout, "Theory: the paper's closed-form numbers beside fits/theory (n/a: different setups, shown for scale)")
	printRows(stdout, out.Theory)
	if *doTrain {
		fmt.Fprintf(stdout, "\nAblation ladder on the embedded synthetic task (%d epochs, batch %d, width %d, seed %d, test accuracy at the best validation epoch; the paper's SSC ordering: LIF ≈ adaptive < FS frozen < FS < FS+TS)\n", base.Epochs, base.Batch, base.Width, base.Seed)
		printTrainRows(stdout, out.Train)
	}
	return nil
}

// printRows prints paper-vs-ours rows as an aligned table; notes follow, numbered.
func printRows(w io.Writer, rows []demoRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "quantity\twhere\tpaper\tours\tunit\tagree")
	var notes []string
	for _, r := range rows {
		agree := "yes"
		switch {
		case r.Indicative:
			agree = "n/a"
		case !r.Match:
			agree = "NO"
		}
		q := r.Quantity
		if r.Note != "" {
			notes = append(notes, r.Note)
			q += fmt.Sprintf(" [%d]", len(notes))
		}
		ours := fmt.Sprintf("%.*f", r.Digits+2, r.Ours)
		if r.Ours != 0 && math.Abs(r.Ours) < math.Pow(10, -float64(r.Digits)) {
			ours = fmt.Sprintf("%.2g", r.Ours)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.*f\t%s\t%s\t%s\n", q, r.Where, r.Digits, r.Paper, ours, r.Unit, agree)
	}
	tw.Flush()
	for i, n := range notes {
		fmt.Fprintf(w, "  [%d] %s\n", i+1, strings.TrimSpace(n))
	}
}

// demoModel is one row of the demo's training table: the paper's ablation ladder (Table 2).
type demoModel struct {
	Label string
	Kind  neuron.Kind
	M     int
	// PaperSSC64 is the paper's SSC test accuracy at hidden size 64 (Table 3, mean of 5 seeds), in %:
	// shown beside ours for the ordering, not for the value (a different task and scale).
	PaperSSC64 float64
}

// demoModels are trained by `fits demo`: plain LIF, the zero-initialized adaptive LIF, FS with frozen and
// learnable target frequencies, and FS+TS with M = 1.
var demoModels = []demoModel{
	{"Plain LIF", neuron.LIF, 0, 60.91},
	{"Adapt. LIF (frozen zero init.)", neuron.AdaptLIF, 0, 61.18},
	{"FS (frozen target frequency)", neuron.FSFrozen, 0, 69.46},
	{"FS (learnable target frequency)", neuron.FS, 0, 71.72},
	{"FS + TS (M = 1)", neuron.FSTS, 1, 72.58},
}

// demoTrainRow is one trained model of the demo.
type demoTrainRow struct {
	Label   string  `json:"label"`
	Model   string  `json:"model"`
	M       int     `json:"m"`
	TestAcc float64 `json:"best_test_acc"`
	// TestAtBestVal is the test accuracy at the epoch of best validation accuracy (the demo's selection).
	TestAtBestVal  float64   `json:"test_acc_at_best_val"`
	BestEpoch      int       `json:"best_epoch"`
	PaperSSC64     float64   `json:"paper_ssc_w64_pct"`
	FiringRates    []float64 `json:"firing_rates"`
	ParameterCount int       `json:"parameter_count"`
	WallSeconds    float64   `json:"wall_seconds"`
	Dir            string    `json:"dir"`
	Reused         bool      `json:"reused"`
}

// demoTrain trains every demo model on the embedded synthetic task under dir, printing progress on stderr.
// Each model's run has its own folder named after the model and the demo's settings (demoRunDir), so runs
// of other settings stay beside it. A folder that already holds the finished run of the same
// configuration is reused (with retrain, a new folder is made beside it), one that holds an interrupted
// run of it is resumed, and any other content is refused as bad input: nothing is deleted or overwritten.
func demoTrain(base train.Config, dir string, retrain bool, stderr io.Writer) ([]demoTrainRow, error) {
	if err := checkOutDir("out", dir); err != nil {
		return nil, err
	}
	var rows []demoTrainRow
	for i, dm := range demoModels {
		cfg := base.WithNeuron(dm.Kind, dm.M)
		runDir := demoRunDir(dir, cfg)
		if retrain {
			runDir = unusedDir(runDir)
		}
		resume, verb := false, "training"
		switch state, err := demoRunState(runDir, cfg); state {
		case demoFinished:
			res, _ := train.ReadResult(runDir)
			rows = append(rows, rowOf(dm, res, runDir, true))
			fmt.Fprintf(stderr, "demo: [%d/%d] %s: reusing %s\n", i+1, len(demoModels), dm.Label, runDir)
			continue
		case demoInterrupted:
			resume, verb = true, "resuming"
		case demoConflict:
			return nil, badInput("--out=%s: %s %v; move it away, choose another --out, or add --retrain to train into a new folder beside it",
				dir, runDir, err)
		}
		b, err := openBackend("")
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "demo: [%d/%d] %s %s (%d epochs, width %d) in %s\n", i+1, len(demoModels), verb, dm.Label, cfg.Epochs, cfg.Width, runDir)
		created := missingDirs(runDir)
		res, err := train.TrainModel(cfg, train.Options{Dir: runDir, Resume: resume, Backend: b, BackendName: backendName(),
			Progress: train.TerminalProgress(stderr),
			Warn:     func(line string) { fmt.Fprintf(stderr, "fits demo: warning: %s\n", line) }})
		if err != nil {
			removeEmptyDirs(created)
			if isErr[*train.NaNError](err) {
				return nil, fmt.Errorf("%s: %w", dm.Label, err)
			}
			return nil, err
		}
		rows = append(rows, rowOf(dm, res, runDir, false))
	}
	return rows, nil
}

// demoRunDir returns the folder of a demo model's run under dir, named after the model and every setting
// a flag of `fits demo` changes: e.g. dir/fsts-m1-e20-w64-b64-s1.
func demoRunDir(dir string, cfg train.Config) string {
	return filepath.Join(dir, fmt.Sprintf("%s-m%d-e%d-w%d-b%d-s%d", cfg.Model, cfg.M, cfg.Epochs, cfg.Width, cfg.Batch, cfg.Seed))
}

// unusedDir returns dir, or the first of dir-2, dir-3, ... that does not exist.
func unusedDir(dir string) string {
	p := dir
	for i := 2; ; i++ {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return p
		}
		p = fmt.Sprintf("%s-%d", dir, i)
	}
}

// demoState is what a demo model's run folder holds.
type demoState int

const (
	demoMissing     demoState = iota // nothing, or an empty folder: train there
	demoFinished                     // the finished run of the same configuration: reuse it
	demoInterrupted                  // checkpoints of the same configuration, no result yet: resume
	demoConflict                     // anything else: refuse
)

// demoRunState classifies the folder of a demo run of configuration cfg; for demoConflict the error says
// what the folder holds.
func demoRunState(dir string, cfg train.Config) (demoState, error) {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return demoMissing, nil
	}
	if err != nil {
		return demoConflict, err
	}
	if !st.IsDir() {
		return demoConflict, errors.New("is a file")
	}
	if res, err := train.ReadResult(dir); err == nil {
		if res.Config == cfg.Resolved() {
			return demoFinished, nil
		}
		return demoConflict, fmt.Errorf("holds a finished run of another configuration (%s, %d epochs, width %d, batch %d, seed %d)",
			res.Config.Model, res.Config.Epochs, res.Config.Width, res.Config.Batch, res.Config.Seed)
	}
	if train.HoldsRun(dir) {
		saved, _, _, err := train.SavedConfig(dir)
		if err == nil && saved == cfg.Resolved() {
			return demoInterrupted, nil
		}
		if err != nil {
			return demoConflict, fmt.Errorf("holds checkpoints that cannot be resumed: %v", err)
		}
		return demoConflict, errors.New("holds an interrupted run of another configuration")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return demoConflict, err
	}
	if len(entries) > 0 {
		return demoConflict, fmt.Errorf("holds %d files that are not a demo run (e.g. %s)", len(entries), entries[0].Name())
	}
	return demoMissing, nil
}

func rowOf(dm demoModel, res *train.Result, dir string, reused bool) demoTrainRow {
	return demoTrainRow{
		Label: dm.Label, Model: dm.Kind.String(), M: dm.M,
		TestAcc: res.BestTestAcc, TestAtBestVal: deref(res.TestAccAtBestVal), BestEpoch: res.BestEpoch,
		PaperSSC64: dm.PaperSSC64, FiringRates: res.FiringRates, ParameterCount: res.ParameterCount,
		WallSeconds: res.WallSeconds, Dir: dir, Reused: reused,
	}
}

// printTrainRows prints the demo's training table.
func printTrainRows(w io.Writer, rows []demoTrainRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\ttest acc at best val\tbest test acc\tfiring rate (layer 1, 2)\tparameters\tseconds\tpaper, SSC W=64")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.2f %%\t%.2f %%\t%s\t%d\t%.0f\t%.2f %%\n", r.Label, 100*r.TestAtBestVal, 100*r.TestAcc,
			joinFloats(r.FiringRates, 1, "%.3f"), r.ParameterCount, r.WallSeconds, r.PaperSSC64)
	}
	tw.Flush()
}

// deref returns *p, or 0 for nil.
func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
