package nb

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fits-snn/fits/fits/bench"
)

// TableA4CPU is Table A.4 as measured on a CPU by `fits bench --suite=training --json`, from the files
// docs/training-time-*.json of docs (DocsDir): per cell, our median epoch (training steps with batch
// assembly and Adam, and the protocol's evaluations), the estimated minutes of the 100-epoch run, the paper's
// median minutes on one RTX A5000 beside it and their ratio, the data trained on (real or the full-size
// stand-ins), the peak memory and the CPU.
func TableA4CPU(docs string) (*Output, error) {
	paths, err := filepath.Glob(filepath.Join(docs, "training-time-*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("Table A.4 on CPU: no %s", filepath.Join(docs, "training-time-*.json"))
	}
	t := Table{Caption: "Table A.4 on CPU · fits bench --suite=training: minutes for 100 epochs, ours (estimated from whole epochs) beside the paper's (RTX A5000)",
		Header: []string{"file", "CPU", "experiment", "data", "M", "W", "epoch s", "ours min / 100 epochs", "paper min (A5000)", "ours / paper", "peak MiB"}}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var rep bench.TrainingReport
		if err := json.Unmarshal(b, &rep); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if rep.Suite != "training" {
			return nil, fmt.Errorf("%s: suite %q, want training", p, rep.Suite)
		}
		for _, r := range rep.Rows {
			cpu := fmt.Sprintf("%s (%d CPUs)", rep.Machine.CPU, rep.Machine.CPUs)
			if r.Error != "" {
				t.Rows = append(t.Rows, []string{filepath.Base(p), cpu, r.Experiment, r.Data, fmt.Sprint(r.M), fmt.Sprint(r.Width), "failed: " + r.Error, "", "", "", ""})
				continue
			}
			paperMin, ratio := "—", "—"
			if r.PaperMinutes != nil {
				paperMin, ratio = fmt.Sprintf("%.1f", *r.PaperMinutes), fmt.Sprintf("%.2f×", r.Minutes100 / *r.PaperMinutes)
			}
			t.Rows = append(t.Rows, []string{filepath.Base(p), cpu, r.Experiment, r.Data, fmt.Sprint(r.M), fmt.Sprint(r.Width),
				fmt.Sprintf("%.1f", r.EpochSeconds), fmt.Sprintf("%.1f", r.Minutes100), paperMin, ratio, fmt.Sprintf("%.0f", r.PeakRSSMiB)})
		}
	}
	return &Output{Tables: []Table{t}}, nil
}
