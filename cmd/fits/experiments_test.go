package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/train"
)

func TestExperimentsCommand(t *testing.T) {
	status, stdout, stderr := run("experiments", "--json")
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var raw struct {
		Experiments []map[string]json.RawMessage `json:"experiments"`
	}
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil || strings.Count(strings.TrimSpace(stdout), "\n") != 0 {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	if len(raw.Experiments) != len(experiment.All()) {
		t.Fatalf("%d experiments, the catalog has %d", len(raw.Experiments), len(experiment.All()))
	}
	for _, key := range []string{"id", "tables", "title", "home", "row", "column", "full", "quick", "seeds"} {
		if _, ok := raw.Experiments[0][key]; !ok {
			t.Errorf("JSON experiments lack the field %q", key)
		}
	}
	var got experimentsOutput
	status, stdout, _ = run("experiments", "--table=A.7", "--json")
	if err := json.Unmarshal([]byte(stdout), &got); status != 0 || err != nil || got.Table != "Table A.7" || len(got.Experiments) != 36 {
		t.Errorf("--table=A.7: status %d, table %q, %d experiments, %v", status, got.Table, len(got.Experiments), err)
	}
	status, stdout, _ = run("experiments", "--table=Table 1")
	if status != 0 || !strings.Contains(stdout, "ssc/fsts-m2/w512") || !strings.Contains(stdout, "6 experiments") {
		t.Errorf("text listing of Table 1: status %d\n%s", status, stdout)
	}
}

func TestExperimentBadInput(t *testing.T) {
	root := t.TempDir()
	notDir := filepath.Join(root, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown table", []string{"experiments", "--table=Table 9"}, "Table A.10"},
		{"table without runs", []string{"experiments", "--table=tableA3"}, "fits bench"},
		{"unknown experiment", []string{"train", "--experiment=ssc/fsts-m2/w1000"}, "ssc/fsts-m2/w512"},
		{"mode without experiment", []string{"train", "--mode=quick"}, "--experiment"},
		{"unknown mode", []string{"train", "--experiment=ssc/lif/w64", "--mode=slow"}, "quick, full"},
		{"no quick stand-in", []string{"train", "--experiment=ssc/lif/w64", "--mode=quick"}, "W = 512"},
		{"bad override", []string{"train", "--experiment=ssc/lif/w64", "--model=izh"}, "fs-frozen"},
		{"aggregate without table", []string{"aggregate", "--root=" + root}, "Table A.10"},
		{"aggregate without root", []string{"aggregate", "--table=3"}, "--root"},
		{"aggregate of a missing folder", []string{"aggregate", "--table=3", "--root=" + filepath.Join(root, "nope")}, "not a folder"},
		{"aggregate of a file", []string{"aggregate", "--table=3", "--root=" + notDir}, "not a folder"},
		{"aggregate of an unknown table", []string{"aggregate", "--table=7", "--root=" + root}, "Table A.10"},
		{"aggregate of an analysis table", []string{"aggregate", "--table=4", "--root=" + root}, "Table A.9"},
		{"aggregate in an unknown mode", []string{"aggregate", "--table=3", "--root=" + root, "--mode=slow"}, "quick, full"},
		{"aggregate with missing shipped results", []string{"aggregate", "--table=3", "--root=" + root, "--results=" + filepath.Join(root, "nope")}, "--results"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkBadInput(t, tc.args, tc.want) })
	}
}

// TestTrainExperimentFlags checks that --experiment sets the recipe and that every flag given explicitly
// overrides it, even when its value equals the flag's usual default.
func TestTrainExperimentFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		check   func(train.Config) bool
		wantOut string
	}{
		{[]string{"--experiment=ssc/fsts-m2/w512"},
			func(c train.Config) bool {
				return c.Dataset == "ssc" && c.Width == 512 && c.M == 2 && c.LR == 4.5e-4 && c.Dropout == 0.55 && c.Epochs == 100 && c.Batch == 128 && c.Seed == 0 && c.Protocol == train.OfficialVal &&
					c.Readout == "sum" && c.TSMix == "official" && c.DropoutMode == "step"
			}, filepath.Join("runs", "full", "ssc", "fsts-m2", "w512", "seed-0")},
		{[]string{"--experiment=ssc/fsts-m2/w512", "--epochs=3", "--dropout=0", "--lr=5e-3", "--seed=4"},
			func(c train.Config) bool {
				return c.Dataset == "ssc" && c.Epochs == 3 && c.Dropout == 0 && c.LR == 5e-3 && c.Seed == 4
			}, filepath.Join("runs", "full", "ssc", "fsts-m2", "w512", "seed-4")},
		{[]string{"--experiment=ssc/fsts-m2/w512", "--mode=quick", "--width=16"},
			func(c train.Config) bool {
				return c.Dataset == "synthetic-shallow" && c.Width == 16 && c.M == 2 && c.Dropout == 0 && c.Seed == 1 && c.TargetLRScale == 0
			}, filepath.Join("runs", "quick", "ssc", "fsts-m2", "w512", "seed-1")},
		{[]string{"--experiment=shd-val/fs/w256", "--mode=quick"},
			func(c train.Config) bool {
				return c.Dataset == "espeak-digits" && c.Protocol == train.ValSplit && c.Executor == "" && c.Chunk == 0
			}, filepath.Join("runs", "quick", "shd-val", "fs", "w256", "seed-1")},
		{[]string{"--experiment=dvs/fsts-m1", "--protocol=best-test"},
			func(c train.Config) bool {
				return c.Dataset == "dvsgesture" && c.Protocol == train.BestTest && c.Width == 128
			},
			filepath.Join("runs", "full", "dvs", "fsts-m1", "seed-0")},
		{[]string{"--model=lif"}, // no experiment: the defaults of DefaultConfig
			func(c train.Config) bool { return c.Dataset == "synthetic" && c.Model == "lif" && c.Epochs == 100 }, ""},
	} {
		f, out, err := parseTrainFlags(tc.args, &strings.Builder{})
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		cfg, err := f.config()
		if err != nil || !tc.check(cfg) || out != tc.wantOut {
			t.Errorf("%v: config %+v, out %q, %v", tc.args, cfg, out, err)
		}
	}
}

func TestAggregateCommand(t *testing.T) {
	root := t.TempDir()
	for seed, acc := range map[int64]float64{1: 0.70, 2: 0.72} {
		e, _ := experiment.Lookup("ssc/lif/w512")
		cfg, _ := e.Config(experiment.Full, seed)
		v, ta := acc, acc
		r := &train.Result{Dataset: cfg.Dataset, Model: cfg.Model, Width: cfg.Width, Seed: seed, ParameterCount: 351_000,
			Protocol: cfg.Protocol, Config: cfg, BestValAcc: &v, TestAccAtBestVal: &ta, BestTestAcc: acc, FinalTestAcc: acc}
		for i := range cfg.Epochs {
			r.Epochs = append(r.Epochs, train.Epoch{Epoch: i + 1, ValAcc: &v, TestAcc: acc})
		}
		dir := experiment.RunDir(root, e.ID, seed)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := train.WriteResult(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	status, stdout, stderr := run("aggregate", "--table=table3", "--root="+root, "--json")
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var tr experiment.TableResult
	if err := json.Unmarshal([]byte(stdout), &tr); err != nil || tr.Label != "Table 3" {
		t.Fatalf("JSON: %v, label %q", err, tr.Label)
	}
	c := tr.Rows[0].Cells[3]
	if c.Experiment != "ssc/lif/w512" || c.Ours == nil || c.Ours.N != 2 || c.Ours.Mean < 70.99 || c.Ours.Mean > 71.01 || c.Diff == nil {
		t.Errorf("LIF W = 512 cell %+v", c)
	}
	// The same runs as shipped results beside an empty runs root: read from there and named as shipped.
	status, stdout, stderr = run("aggregate", "--table=3", "--root="+t.TempDir(), "--results="+root, "--json")
	tr = experiment.TableResult{}
	if err := json.Unmarshal([]byte(stdout), &tr); status != 0 || err != nil {
		t.Fatalf("aggregate with shipped results: status %d, %v: %s", status, err, stderr)
	}
	if c := tr.Rows[0].Cells[3]; c.Ours == nil || c.Ours.N != 2 || !slices.Equal(c.Shipped, []int64{1, 2}) {
		t.Errorf("LIF W = 512 cell from shipped results %+v", c)
	}
	out := filepath.Join(t.TempDir(), "tables")
	status, stdout, stderr = run("aggregate", "--table=3", "--root="+root, "--out="+out)
	if status != 0 || !strings.Contains(stdout, "| Plain LIF | 60.91 ± 0.28 |") || !strings.Contains(stdout, "71.00 ± 1.41 (2/5) | +1.83 |") {
		t.Fatalf("status %d, stderr %s, Markdown:\n%s", status, stderr, stdout)
	}
	for _, name := range []string{"table-3.md", "table-3.csv"} {
		if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || len(b) == 0 || !strings.Contains(stderr, name) {
			t.Errorf("%s: %v (stderr %q)", name, err, stderr)
		}
	}
	// Written by fits: a second run replaces them. A user's file of the same name is never replaced.
	if status, _, stderr = run("aggregate", "--table=3", "--root="+root, "--out="+out); status != 0 {
		t.Fatalf("second aggregate into its own folder: status %d: %s", status, stderr)
	}
	user := filepath.Join(t.TempDir(), "mine")
	plantUserFile(t, filepath.Join(user, "table-3.md"))
	status, _, stderr = run("aggregate", "--table=3", "--root="+root, "--out="+user)
	if status != 2 || !strings.Contains(stderr, "table-3.md already exists and was not written by fits") {
		t.Errorf("aggregate over a user's table-3.md: status %d, stderr %s", status, stderr)
	}
	checkUserFile(t, filepath.Join(user, "table-3.md"))
	if _, err := os.Stat(filepath.Join(user, "table-3.csv")); err == nil {
		t.Errorf("a refused aggregate wrote table-3.csv")
	}
}
