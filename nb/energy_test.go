package nb

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/experiment"
)

func TestTable4(t *testing.T) {
	cell := func(id string, layer, neuron float64, rates ...float64) energyCell {
		e, err := experiment.Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		v := func(x float64) analysis.MeanStdValue { return analysis.MeanStdValue{Mean: x, Std: 0.1} }
		return energyCell{e, analysis.EnergyGroup{Runs: []analysis.RunEnergy{{Seed: 1, Rates: rates, RatesSource: "recorded epoch 20 (val)"}},
			ELayer: v(layer), ENeuron: v(neuron), ETotal: v(layer + neuron)}}
	}
	out, err := table4([]energyCell{cell("ssc/lif/w512", 1.5, 0.5, 0.05, 0.02), cell("ssc/fsts-m2/w512", 1, 2, 0.01, 0.005)}, experiment.Quick)
	if err != nil {
		t.Fatal(err)
	}
	tab := out.Tables[0]
	want := [][]string{
		{"Plain LIF", "1", "6.1", "1.50 ± 0.10", "2.8", "0.50 ± 0.10", "8.9", "2.00 ± 0.10", "5.00, 2.00", "recorded epoch 20 (val)"},
		{"FS+TS (M=2)", "1", "2.7", "1.00 ± 0.10", "17.6", "2.00 ± 0.10", "20.3", "3.00 ± 0.10", "1.00, 0.50", "recorded epoch 20 (val)"},
	}
	if len(tab.Rows) != 2 || !slices.Equal(tab.Rows[0], want[0]) || !slices.Equal(tab.Rows[1], want[1]) {
		t.Errorf("rows %q, want %q", tab.Rows, want)
	}
	if !strings.Contains(tab.Caption, "E_AC = 0.9 pJ, E_MAC = 4.6 pJ") || !strings.Contains(tab.Caption, "quick mode") {
		t.Errorf("caption %q", tab.Caption)
	}
	checkRenders(t, out.Figures[0], "paper (SSC, W = 512)", "ours (quick mode)")

	if _, err := table4([]energyCell{cell("ssc/fsts-m3/w512", 1, 1)}, experiment.Quick); err == nil {
		t.Error("a model without a row of Table 4 was accepted")
	}
	e, _ := experiment.Lookup("dvs/fs")
	if _, err := Table4([]ExperimentRuns{{Experiment: e}}, experiment.Quick); !errors.Is(err, ErrNoRuns) {
		t.Errorf("no experiment of Table 4: %v", err)
	}
}

// benchKernel is the JSON of `fits bench --suite=kernel` with one row of the paper's shape.
const benchKernel = `{"suite": "kernel", "backend": "xla:cpu", "machine": {"cpus": 2, "cpu": "test CPU"},
 "rows": [{"model": "fs", "width": 64, "m": 0, "variant": "fused", "batch": 128, "time": 250, "median_ms": 12.5,
           "paper_pytorch_ms": 426.7, "paper_triton_ms": 8.3}]}`

func TestTableA3(t *testing.T) {
	repo := t.TempDir()
	docs := filepath.Join(repo, "docs")
	files := map[string]string{
		"performance-cpu.json":    `{"kernel": ` + benchKernel + `, "training": {"suite": "training", "rows": []}}`,
		"performance-single.json": strings.Replace(benchKernel, `"fused"`, `"chunked"`, 1),
		"performance-other.json":  `{"suite": "training", "rows": []}`,
		"notes.json":              `not read`,
	}
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := TableA3(docs)
	if err != nil {
		t.Fatal(err)
	}
	tab := out.Tables[0]
	col := func(name string) int { return slices.Index(tab.Header, name) }
	if len(tab.Rows) != 2 || col("file") < 0 || col("variant") < 0 {
		t.Fatalf("header %q, rows %q", tab.Header, tab.Rows)
	}
	var got []string
	for _, r := range tab.Rows {
		got = append(got, r[col("variant")]+" "+r[col("file")]+" "+r[col("median_ms")]+" "+r[col("paper_triton_ms")])
	}
	if want := []string{"chunked docs/performance-single.json 12.5 8.3", "fused docs/performance-cpu.json 12.5 8.3"}; !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	checkRenders(t, out.Figures[0], "paper: Triton (A5000)", "ours: fused (xla:cpu)", "ours: chunked (xla:cpu)")

	if _, err := TableA3(t.TempDir()); err == nil {
		t.Error("a folder without bench files was accepted")
	}
}
