package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/fits-snn/fits/fits/train"
)

// demoModel is one row of the demo's training table: the paper's ablation ladder (Table 2).
type demoModel struct {
	Label string
	Model string
	M     int
	// PaperSSC64 is the paper's SSC test accuracy at hidden size 64 (Table 3, mean of 5 seeds), in %:
	// shown beside ours for the ordering, not for the value (a different task and scale).
	PaperSSC64 float64
}

// demoModels are trained by `fits demo`: plain LIF, the zero-initialized adaptive LIF, FS with frozen and
// learnable target frequencies, and FS+TS with M = 1.
var demoModels = []demoModel{
	{"Plain LIF", "lif", 0, 60.91},
	{"Adapt. LIF (frozen zero init.)", "adaptlif", 0, 61.18},
	{"FS (frozen target frequency)", "fs-frozen", 0, 69.46},
	{"FS (learnable target frequency)", "fs", 0, 71.72},
	{"FS + TS (M = 1)", "fsts", 1, 72.58},
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

// demoTrain trains (or reuses, when result.json of the same configuration exists) every demo model on the
// embedded synthetic task under dir, printing progress on stderr.
func demoTrain(base train.Config, dir string, retrain bool, stderr io.Writer) ([]demoTrainRow, error) {
	var rows []demoTrainRow
	for i, dm := range demoModels {
		cfg := base
		cfg.Model, cfg.M = dm.Model, dm.M
		runDir := filepath.Join(dir, fmt.Sprintf("%s-m%d", dm.Model, dm.M))
		if !retrain {
			if res, err := train.ReadResult(runDir); err == nil && res.Config == cfg {
				rows = append(rows, rowOf(dm, res, runDir, true))
				fmt.Fprintf(stderr, "demo: [%d/%d] %s: reusing %s\n", i+1, len(demoModels), dm.Label, runDir)
				continue
			}
		}
		if err := os.RemoveAll(runDir); err != nil {
			return nil, err
		}
		b, err := openBackend("")
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "demo: [%d/%d] training %s (%d epochs, width %d)\n", i+1, len(demoModels), dm.Label, cfg.Epochs, cfg.Width)
		res, err := train.TrainModel(cfg, train.Options{Dir: runDir, Backend: b, BackendName: backendName(), Progress: train.TerminalProgress(stderr)})
		if err != nil {
			var nan *train.NaNError
			if errors.As(err, &nan) {
				return nil, fmt.Errorf("%s: %w", dm.Label, err)
			}
			return nil, err
		}
		rows = append(rows, rowOf(dm, res, runDir, false))
	}
	return rows, nil
}

func rowOf(dm demoModel, res *train.Result, dir string, reused bool) demoTrainRow {
	return demoTrainRow{
		Label: dm.Label, Model: dm.Model, M: dm.M,
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
		rates := ""
		for i, fr := range r.FiringRates {
			if i > 0 {
				rates += ", "
			}
			rates += fmt.Sprintf("%.3f", fr)
		}
		fmt.Fprintf(tw, "%s\t%.2f %%\t%.2f %%\t%s\t%d\t%.0f\t%.2f %%\n", r.Label, 100*r.TestAtBestVal, 100*r.TestAcc, rates, r.ParameterCount, r.WallSeconds, r.PaperSSC64)
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
