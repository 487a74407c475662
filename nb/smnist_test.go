package nb

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/train"
)

// shipSMNIST writes a finished run of Table A.9's FiTS cell under the repository root repo's results
// folder, with test accuracy rising to best at epoch 90 and ending at final.
func shipSMNIST(t *testing.T, repo string, seed int64, best, final float64) string {
	t.Helper()
	e, err := experiment.Lookup(SMNISTExperiment)
	if err != nil {
		t.Fatal(err)
	}
	dir := experiment.RunDir(filepath.Join(repo, experiment.ShippedDir), e.ID, seed)
	writeResult(t, dir, e, experiment.Full, seed, 100)
	r, err := train.ReadResult(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Epochs {
		r.Epochs[i].TestAcc, r.Epochs[i].TrainAcc = 0.9+0.0008*float64(i), 0.92+0.0006*float64(i)
	}
	r.Epochs[89].TestAcc, r.Epochs[99].TestAcc = best, final
	r.BestTestAcc, r.BestEpoch, r.FinalTestAcc, r.WallSeconds = best, 90, final, 3*3600
	r.Segments = []train.Segment{{FirstEpoch: 1, LastEpoch: 17, WallSeconds: 3600}, {FirstEpoch: 18, LastEpoch: 100, Commit: "0123456789abcdef0123456789abcdef01234567", CPU: "AMD EPYC", WallSeconds: 7200}}
	r.Resumes = 1
	if err := train.WriteResult(dir, r); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRealSMNIST(t *testing.T) {
	repo := t.TempDir()
	root := filepath.Join(repo, experiment.ShippedDir)
	if _, err := RealSMNIST(root); !errors.Is(err, ErrNoRuns) {
		t.Fatalf("nothing shipped: %v, want ErrNoRuns", err)
	}
	shipSMNIST(t, repo, 0, 0.9841, 0.9832)
	o, err := RealSMNIST(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Tables) != 1 || len(o.Tables[0].Rows) != 1 || len(o.Figures) != 1 || o.Figures[0].Name != "12_smnist_real" {
		t.Fatalf("output %+v", o)
	}
	row := strings.Join(o.Tables[0].Rows[0], " | ")
	for _, want := range []string{"seed 0 | finished | 100 | 98.41 | 90 | 98.32 | 98.28 | +0.13", "| 1 after epoch 17 (earlier ones not recorded) | 3.00 | AMD EPYC |",
		"epochs 1–17: not recorded; 18–100: 0123456"} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}
	if _, err := o.Figures[0].PNG(40); err != nil {
		t.Errorf("figure: %v", err)
	}

	// A departure (skipped updates) is a row and a curve of its own, named so, with a note; it is not a seed.
	dep := shipSMNIST(t, repo, 2, 0.981, 0.980)
	r, err := train.ReadResult(dep)
	if err != nil {
		t.Fatal(err)
	}
	r.Epochs[19].SkippedSteps, r.Epochs[20].SkippedSteps = []int{134, 144}, []int{7}
	depDir := filepath.Join(root, DeparturesDir, "smnist-fsts-m1-w256-seed-2-skip-nonfinite")
	if err := os.MkdirAll(depDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := train.WriteResult(depDir, r); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dep); err != nil {
		t.Fatal(err)
	}
	if o, err = RealSMNIST(root); err != nil || len(o.Tables[0].Rows) != 2 {
		t.Fatalf("with a departure: %v, %+v", err, o)
	}
	if row := strings.Join(o.Tables[0].Rows[1], " | "); !strings.HasPrefix(row, "FiTS M = 1, W = 256, seed 2 (departure: skip-nonfinite, 3 updates skipped) | finished | 100 | 98.10") {
		t.Errorf("departure row %q", row)
	}
	if notes := strings.Join(o.Notes, " "); !strings.Contains(notes, "Seed 2, skip-nonfinite, departs from the released recipe") || !strings.Contains(notes, "(3 updates in its 100 epochs") {
		t.Errorf("notes %q", notes)
	}
	if runs, err := ShippedRuns(root, SMNISTExperiment); err != nil || len(runs) != 1 {
		t.Errorf("ShippedRuns counts a departure as a seed: %v, %d runs", err, len(runs))
	}

	shipSMNIST(t, repo, 1, 0.975, 0.974)
	if o, err = RealSMNIST(root); err != nil || len(o.Tables[0].Rows) != 3 || !strings.Contains(strings.Join(o.Notes, " "), "Seed 1 ends at 97.50 % best test, below") {
		t.Errorf("a run below 97.8 %%: %v, notes %q", err, o.Notes)
	}
}

// TestPlanReadsShippedRuns: full mode counts a shipped seed as finished where the user's runs root has
// no run of it, and a run of the user's own (even unfinished) wins over the shipped one.
func TestPlanReadsShippedRuns(t *testing.T) {
	repo := t.TempDir()
	t.Setenv("FITS_ROOT", repo)
	t.Setenv("GONB_DIR", "")
	shipped := shipSMNIST(t, repo, 0, 0.9841, 0.9832)
	root := t.TempDir()
	runs, err := Plan(root, experiment.Full, []string{"A.9"})
	if err != nil {
		t.Fatal(err)
	}
	var seed0 PlannedRun
	for _, r := range runs {
		if r.Experiment.ID == SMNISTExperiment && r.Seed == 0 {
			seed0 = r
		}
	}
	if !seed0.Finished || !seed0.Shipped || seed0.Dir != shipped {
		t.Fatalf("seed 0 %+v, want the finished shipped run %s", seed0, shipped)
	}
	own := experiment.RunDir(root, SMNISTExperiment, 0)
	if err := os.MkdirAll(own, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(own, train.ResultFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	runs, _ = Plan(root, experiment.Full, []string{"A.9"})
	for _, r := range runs {
		if r.Experiment.ID == SMNISTExperiment && r.Seed == 0 && (r.Shipped || r.Dir != own) {
			t.Errorf("the user's own seed 0 should be planned: %+v", r)
		}
	}
	// Quick mode never reads shipped runs as its cells.
	runs, _ = Plan(t.TempDir(), experiment.Quick, []string{"A.9"})
	for _, r := range runs {
		if r.Shipped {
			t.Errorf("quick mode planned a shipped run: %+v", r)
		}
	}
}

func TestRepoPath(t *testing.T) {
	repo := t.TempDir()
	t.Setenv("FITS_ROOT", repo)
	t.Setenv("GONB_DIR", "")
	inside := filepath.Join(repo, "results", "smnist", "seed-0")
	outside := filepath.Join(filepath.Dir(repo), "elsewhere")
	if got := repoPath(inside); got != "results/smnist/seed-0" {
		t.Errorf("inside the repository: %q", got)
	}
	if got := repoPath(outside); got != outside {
		t.Errorf("outside the repository: %q", got)
	}
}
