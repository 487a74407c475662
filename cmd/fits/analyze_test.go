package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/bench"
	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/xla"
)

// analyzeRun trains a tiny FS+TS run (one epoch of 16 examples of the small synthetic task) into a
// folder below root and returns it.
func analyzeRun(t *testing.T, root string) string {
	t.Helper()
	xla.SetAnnounceWriter(nil)
	b, err := xla.Backend()
	if err != nil {
		t.Fatal(err)
	}
	c := train.DefaultConfig()
	c.Small, c.TrainLimit, c.Model, c.M, c.Width, c.Batch, c.Epochs, c.LR = true, 16, "fsts", 1, 4, 16, 1, 0.05
	dir := filepath.Join(root, "runs", "fsts-s1")
	if _, err := train.TrainModel(c, train.Options{Dir: dir, Backend: b}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestAnalyze(t *testing.T) {
	tmp := t.TempDir()
	dir := analyzeRun(t, tmp)
	existing := filepath.Join(tmp, "existing.csv")
	if err := os.WriteFile(existing, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("bad input", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			{"no analysis", []string{"analyze"}, "missing analysis"},
			{"unknown analysis", []string{"analyze", "frobnicate"}, "ts-params"},
			{"no runs", []string{"analyze", "shifts"}, "--runs"},
			{"runs and root", []string{"analyze", "shifts", "--runs=" + dir, "--root=" + tmp}, "not both"},
			{"missing folder", []string{"analyze", "ctdt", "--runs=" + filepath.Join(tmp, "nope")}, "not a folder"},
			{"empty root", []string{"analyze", "ctdt", "--root=" + t.TempDir()}, "no run folder"},
			{"folder without a run", []string{"analyze", "ctdt", "--runs=" + t.TempDir()}, "no complete checkpoint"},
			{"flag of another analysis", []string{"analyze", "shifts", "--runs=" + dir, "--points=5"}, "--points does not apply"},
			{"existing out", []string{"analyze", "shifts", "--runs=" + dir, "--out=" + existing}, "already exists"},
			{"out in a missing folder", []string{"analyze", "shifts", "--runs=" + dir, "--out=" + filepath.Join(tmp, "no", "x.csv")}, "folder"},
			{"half a range", []string{"analyze", "shifts", "--runs=" + dir, "--lo-hz=1"}, "together"},
			{"bad reference", []string{"analyze", "delays", "--runs=" + dir, "--reference=fs"}, "identity or init"},
			{"grid above Nyquist", []string{"analyze", "delays", "--runs=" + dir, "--fmax-hz=1000"}, "Nyquist"},
			{"bad seed", []string{"analyze", "perturb", "--runs=" + dir, "--seed=0"}, "--seed"},
			{"bad bench file", []string{"analyze", "training-time", "--bench=" + existing}, "--bench"},
			{"positional", []string{"analyze", "ctdt", "extra"}, "unexpected argument"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, stdout, stderr := run(tc.args...)
				if status != 2 || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, tc.want) {
					t.Errorf("status %d, stdout %q, stderr %q; want 2 and one line mentioning %q", status, stdout, stderr, tc.want)
				}
			})
		}
		if b, _ := os.ReadFile(existing); string(b) != "keep" {
			t.Error("an existing file was overwritten")
		}
	})

	t.Run("shifts json", func(t *testing.T) {
		status, stdout, stderr := run("analyze", "shifts", "--root="+tmp, "--json", "--bins=5")
		if status != 0 {
			t.Fatalf("status %d: %s", status, stderr)
		}
		var got struct {
			Analysis string
			Runs     []string
			Report   analysis.ShiftReport
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || strings.Count(strings.TrimSpace(stdout), "\n") != 0 {
			t.Fatalf("not one JSON object (%v): %s", err, stdout)
		}
		if got.Analysis != "shifts" || len(got.Runs) != 1 || got.Runs[0] != dir || len(got.Report.Groups) != 1 ||
			len(got.Report.Groups[0].Layers) != 2 || len(got.Report.Groups[0].Layers[0].Histogram.Counts) != 5 {
			t.Errorf("output %+v", got)
		}
	})

	t.Run("ctdt csv", func(t *testing.T) {
		out := filepath.Join(tmp, "ctdt.csv")
		status, stdout, stderr := run("analyze", "ctdt", "--runs="+dir, "--out="+out)
		if status != 0 {
			t.Fatalf("status %d: %s", status, stderr)
		}
		if !strings.Contains(stdout, "closed_form_vs_realized") || !strings.Contains(stdout, "Table 5") {
			t.Errorf("stdout %q", stdout)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1+2*4 || rows[0][7] != "realized_dt_hz" {
			t.Errorf("csv: %d rows, header %v", len(rows), rows[0])
		}
	})

	t.Run("energy and delays", func(t *testing.T) {
		for _, a := range [][]string{
			{"analyze", "energy", "--runs=" + dir},
			{"analyze", "delays", "--runs=" + dir, "--points=5", "--reference=init"},
			{"analyze", "ts-params", "--runs=" + dir},
		} {
			status, stdout, stderr := run(a...)
			if status != 0 || !strings.Contains(stdout, "synthetic fsts M=1 W=4") {
				t.Errorf("%v: status %d, stdout %q, stderr %q", a, status, stdout, stderr)
			}
		}
	})

	// The kernel-runtime table reads what fits bench writes: the file is made from bench's own types.
	t.Run("training time and kernel runtime", func(t *testing.T) {
		k, _ := paper.KernelRuntimeFor(64, 1)
		bo := bench.Report{Suite: bench.SuiteKernel, Backend: "xla:cpu", Rows: []bench.Row{
			{Cell: bench.Cell{Suite: bench.SuiteKernel, Model: "fsts", Width: 64, M: 1, Variant: "chunked", Batch: bench.KernelBatch, Time: bench.KernelTime},
				Measurement: bench.Measurement{MedianMs: 123.5}, PaperPyTorchMs: &k.PyTorchMs, PaperTritonMs: &k.TritonMs},
		}}
		b, err := json.Marshal(bo)
		if err != nil {
			t.Fatal(err)
		}
		benchFile := filepath.Join(tmp, "bench.json")
		if err := os.WriteFile(benchFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
		benchCSV := filepath.Join(tmp, "kernel.csv")
		status, stdout, stderr := run("analyze", "training-time", "--root="+tmp, "--bench="+benchFile, "--json", "--bench-out="+benchCSV)
		if status != 0 {
			t.Fatalf("status %d: %s", status, stderr)
		}
		var got struct {
			Report        analysis.TrainingTimeReport
			KernelRuntime analysis.KernelRuntimeReport `json:"kernel_runtime"`
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatal(err)
		}
		res, err := train.ReadResult(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Report.Rows) != 1 || got.Report.Rows[0].MedianMinutes != res.WallSeconds/60 || got.Report.Rows[0].Runs != 1 {
			t.Errorf("training time %+v, the run took %g s", got.Report, res.WallSeconds)
		}
		kr := got.KernelRuntime.Rows
		if len(kr) != 1 || kr[0].MedianMs != 123.5 || kr[0].Width != 64 || kr[0].M != 1 || kr[0].Variant != "chunked" ||
			kr[0].PaperPyTorchMs == nil || *kr[0].PaperPyTorchMs != k.PyTorchMs || kr[0].Backend != "xla:cpu" {
			t.Errorf("kernel runtime %+v", kr)
		}
		if b, err := os.ReadFile(benchCSV); err != nil || !strings.Contains(string(b), "123.5") {
			t.Errorf("kernel csv %q (%v)", b, err)
		}
		// The bench files alone are enough.
		if status, stdout, _ := run("analyze", "training-time", "--bench="+benchFile); status != 0 || !strings.Contains(stdout, "Table A.3") {
			t.Errorf("bench only: status %d, %q", status, stdout)
		}
	})
}
