package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/sweep"
	"github.com/fits-snn/fits/fits/train"
)

// sweepTable returns the SSC ablation table and an experiment of it with a quick recipe.
func sweepTable(t *testing.T) (string, string) {
	t.Helper()
	exps, err := experiment.ForTable("Table 3")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exps {
		if e.HasQuick() {
			return "Table 3", e.ID
		}
	}
	t.Fatal("Table 3 has no quick experiment")
	return "", ""
}

func TestSweepBadInput(t *testing.T) {
	table, id := sweepTable(t)
	out := "--out=" + t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not aggregated", []string{"sweep", out, "--table=Table 4", "--collect"}, "--table"},
		{"no grid", []string{"sweep", out}, "--table"},
		{"both", []string{"sweep", out, "--table=" + table, "--experiments=" + id}, "exclude"},
		{"unknown table", []string{"sweep", out, "--table=no-such-table"}, "no-such-table"},
		{"unknown experiment", []string{"sweep", out, "--experiments=no/such"}, "no/such"},
		{"bad seeds", []string{"sweep", out, "--table=" + table, "--seeds=5-1"}, "--seeds"},
		{"bad mode", []string{"sweep", out, "--table=" + table, "--mode=slow"}, "--mode"},
		{"bad workers", []string{"sweep", out, "--table=" + table, "--workers=0"}, "--workers"},
		{"bad emit", []string{"sweep", out, "--table=" + table, "--emit=pbs"}, "slurm"},
		{"emit and collect", []string{"sweep", out, "--table=" + table, "--emit=slurm", "--collect"}, "exclude"},
		{"bad mem", []string{"sweep", out, "--table=" + table, "--emit=slurm", "--mem=lots"}, "lots"},
		{"bad time", []string{"sweep", out, "--table=" + table, "--emit=slurm", "--time=1h"}, "1h"},
		{"reserved train flag", []string{"sweep", out, "--table=" + table, "--", "--seed=4"}, "--seed"},
		{"positional argument", []string{"sweep", out, "--table=" + table, "extra"}, "extra"},
		// Issue 34: extra training flags are parsed as fits train will, before anything is emitted.
		{"undefined extra flag", []string{"sweep", out, "--table=" + table, "--mode=quick", "--", "--bogus"}, "flag provided but not defined: -bogus"},
		{"bad extra value", []string{"sweep", out, "--table=" + table, "--mode=quick", "--emit=slurm", "--", "--lr=abc"}, `--lr: "abc" is not a finite number`},
		{"inapplicable extra flag", []string{"sweep", out, "--experiments=ssc/lif/w512", "--mode=quick", "--dry-run", "--", "--tau-a=0.3"}, "--tau-a applies to kinds with an adaptation current"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkBadInput(t, tc.args, tc.want) })
	}
}

func TestSweepEmitDryRunCollect(t *testing.T) {
	table, id := sweepTable(t)
	root := t.TempDir()
	grid := []string{"sweep", "--experiments=" + id, "--seeds=1-3", "--mode=quick", "--out=" + root}

	status, stdout, stderr := run(append(grid, "--dry-run", "--json")...)
	var dry struct {
		Runs []struct {
			Experiment string
			Seed       int64
			Status     sweep.Status
			Command    []string
		}
	}
	if status != 0 || json.Unmarshal([]byte(stdout), &dry) != nil || len(dry.Runs) != 3 || dry.Runs[2].Seed != 3 ||
		dry.Runs[0].Status != sweep.Pending || dry.Runs[0].Command[0] != "train" {
		t.Fatalf("dry run: %d %q %q", status, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(root, sweep.IndexFile)); err == nil {
		t.Error("--dry-run wrote the index")
	}

	status, stdout, stderr = run(append(grid, "--emit=slurm", "--cpus-per-task=2", "--mem=4G", "--time=01:00:00",
		"--gres=gpu:1", "--", "--epochs=1")...)
	script := filepath.Join(root, sweep.SlurmScript)
	if status != 0 || !strings.Contains(stdout, "sbatch "+script) {
		t.Fatalf("emit: %d %q %q", status, stdout, stderr)
	}
	b, err := os.ReadFile(script)
	if err != nil || !strings.Contains(string(b), "#SBATCH --array=0-2\n") || !strings.Contains(string(b), "#SBATCH --gres=gpu:1\n") {
		t.Errorf("script: %v\n%s", err, b)
	}
	runs, err := os.ReadFile(filepath.Join(root, sweep.RunsFile))
	if err != nil || strings.Count(string(runs), "\n") != 3 || !strings.Contains(string(runs), "--seed=2 ") ||
		!strings.Contains(string(runs), " --epochs=1\n") {
		t.Errorf("runs.txt: %v\n%s", err, runs)
	}

	status, stdout, stderr = run(append(grid, "--collect", "--table="+table)...)
	if status != 2 || !strings.Contains(stderr, "exclude") {
		t.Errorf("collect with both --table and --experiments: %d %q", status, stderr)
	}
	status, stdout, stderr = run(append(grid, "--collect", "--json")...)
	var col struct {
		Index  sweep.Index
		Tables []sweep.TableFiles
	}
	if status != 0 || json.Unmarshal([]byte(stdout), &col) != nil || col.Index.Counts[sweep.Pending] != 3 || len(col.Tables) == 0 {
		t.Fatalf("collect: %d %q %q", status, stdout, stderr)
	}
	for _, f := range col.Tables {
		if _, err := os.Stat(f.Markdown); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(f.CSV); err != nil {
			t.Error(err)
		}
	}
	// The root now belongs to the quick mode.
	status, _, stderr = run("sweep", "--experiments="+id, "--mode=full", "--out="+root, "--collect")
	if status != 2 || !strings.Contains(stderr, "quick") {
		t.Errorf("full-mode collect in a quick-mode root: %d %q", status, stderr)
	}
}

// A run folder that holds only the log fits sweep opens before it starts fits train is still a new run's
// folder.
func TestTrainStartsBesideSweepLog(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, sweep.LogFile), []byte("sweep: starting\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run("train", "--small", "--epochs=1", "--width=4", "--quiet", "--out="+out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, train.ResultFile)); err != nil {
		t.Error(err)
	}
}

// TestSweepFinishedOtherConfig: a sweep whose extra training flags ask another configuration than its
// finished runs have names the difference (exit 2) instead of counting them as finished and training
// nothing (issue 34).
func TestSweepFinishedOtherConfig(t *testing.T) {
	root := t.TempDir()
	const id = "ssc/lif/w512"
	e, err := experiment.Lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := e.Config(experiment.Quick, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Epochs = 1
	res := &train.Result{Dataset: cfg.Dataset, Model: cfg.Model, M: cfg.M, Width: cfg.Width, Seed: 1, Protocol: cfg.Protocol,
		Config: cfg, Epochs: []train.Epoch{{Epoch: 1, TestAcc: 0.5}}, BestEpoch: 1, BestTestAcc: 0.5}
	dir := experiment.RunDir(root, id, 1)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := train.WriteResult(dir, res); err != nil {
		t.Fatal(err)
	}
	grid := []string{"sweep", "--experiments=" + id, "--seeds=1", "--mode=quick", "--out=" + root, "--dry-run"}
	if status, stdout, stderr := run(grid...); status != 0 || !strings.Contains(stdout, "finished") {
		t.Fatalf("dry run of the finished run: %d %q %q", status, stdout, stderr)
	}
	checkBadInput(t, append(grid, "--", "--epochs=3", "--width=32"),
		dir+" finished with another configuration than the extra training flags ask: --width=32 (saved: 64), --epochs=3 (saved: 1)")
}
