package nb

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/bench"
)

// TestTableA4CPU checks that the CPU Table A.4 puts our estimate beside the paper's minutes with their ratio,
// and refuses a folder without measurements and a file of another suite.
func TestTableA4CPU(t *testing.T) {
	dir := t.TempDir()
	if _, err := TableA4CPU(dir); err == nil {
		t.Fatal("no file: no error")
	}
	paper := 6.6
	rep := bench.TrainingReport{Suite: "training", Machine: bench.Host{CPU: "AMD EPYC", CPUs: 2}, Rows: []bench.TrainingRow{
		{TrainingCell: bench.TrainingCell{Dataset: "shd", M: 1, Width: 128, Experiment: "shd-val/fsts-m1/w128"},
			EpochSeconds: 4, Minutes100: 6.8, PaperMinutes: &paper, Data: "stand-in", PeakRSSMiB: 600},
		{TrainingCell: bench.TrainingCell{Dataset: "smnist", M: 1, Width: 256, Experiment: "smnist/fsts-m1/w256"}, Error: "no data"},
	}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "training-time-x.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := TableA4CPU(dir)
	if err != nil {
		t.Fatal(err)
	}
	rows := out.Tables[0].Rows
	if len(rows) != 2 || rows[0][7] != "6.8" || rows[0][8] != "6.6" || rows[0][9] != "1.03×" || rows[0][3] != "stand-in" || !strings.HasPrefix(rows[1][6], "failed") {
		t.Fatalf("rows = %q", rows)
	}
	if err := os.WriteFile(filepath.Join(dir, "training-time-y.json"), []byte(`{"suite":"kernel"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := TableA4CPU(dir); err == nil {
		t.Fatal("a kernel-suite file: no error")
	}
}

// TestTableA4CPUCommitted reads the committed measurements (docs/training-time-*.json): every row of
// Table A.4's datasets has the paper's minutes and a ratio beside ours, and sMNIST, which Table A.4 lacks,
// has neither.
func TestTableA4CPUCommitted(t *testing.T) {
	out, err := TableA4CPU(filepath.Join("..", "docs")) // the test runs in nb/

	if err != nil {
		t.Fatal(err)
	}
	rows := out.Tables[0].Rows
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	for _, r := range rows {
		smnist := strings.HasPrefix(r[2], "smnist/")
		if strings.HasPrefix(r[6], "failed") || (r[8] == "—") != smnist || (r[9] == "—") != smnist {
			t.Errorf("row %q", r)
		}
	}
}
