package nb

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/train"
)

// patchResult rewrites the result.json in dir through edit.
func patchResult(t *testing.T, dir string, edit func(*train.Result)) {
	t.Helper()
	r, err := train.ReadResult(dir)
	if err != nil {
		t.Fatal(err)
	}
	edit(r)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, train.ResultFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// quickPlan returns a fresh runs root and the quick plan of tables under it (every quick experiment and
// seed: FITS_QUICK unset).
func quickPlan(t *testing.T, tables ...string) (string, []PlannedRun) {
	t.Helper()
	t.Setenv("FITS_QUICK", "")
	root := t.TempDir()
	plan, err := Plan(root, experiment.Quick, tables)
	if err != nil {
		t.Fatal(err)
	}
	return root, plan
}

// finishPlan writes a finished result.json for the runs of plan that keep says to.
func finishPlan(t *testing.T, plan []PlannedRun, mode experiment.Mode, keep func(PlannedRun) bool) {
	t.Helper()
	for _, r := range plan {
		if keep(r) {
			epochs, _ := r.Experiment.Config(mode, r.Seed)
			writeResult(t, r.Dir, r.Experiment, mode, r.Seed, epochs.Epochs)
		}
	}
}

func TestPlannedCurves(t *testing.T) {
	root, plan := quickPlan(t, "Table 1", "Table 3")
	finishPlan(t, plan, experiment.Quick, func(r PlannedRun) bool {
		return r.Experiment.ID == "shd-best/lif/w128" || r.Experiment.ID == "ssc/fsts-m2/w512" && r.Seed != 2
	})
	plan, _ = Plan(root, experiment.Quick, []string{"Table 1", "Table 3"})
	for _, tc := range []struct {
		firstSeed bool
		want      []string
	}{
		{true, []string{"SHD: Plain LIF (ours) (seed 1)", "FS + TS (M = 2) (seed 1)"}},
		{false, []string{"SHD: Plain LIF (ours) (seed 1)", "FS + TS (M = 2) (seed 1)", "FS + TS (M = 2) (seed 3)"}},
	} {
		curves, err := PlannedCurves(plan, tc.firstSeed)
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		for _, c := range curves {
			labels = append(labels, c.Label)
			if len(c.Epochs) == 0 {
				t.Errorf("%s: no epochs", c.Label)
			}
		}
		if !slices.Equal(labels, tc.want) {
			t.Errorf("first seed %v: %q, want %q", tc.firstSeed, labels, tc.want)
		}
	}

	fig, err := LearningCurves("06_learning_curves", "a caption", []Curves{{Label: "a", Epochs: epochs(3, true)}})
	if err != nil || fig.Name != "06_learning_curves" || fig.Caption != "a caption" {
		t.Errorf("figure %+v, %v", fig, err)
	}
	if _, err := LearningCurves("x", "", nil); !errors.Is(err, ErrNoRuns) {
		t.Errorf("no curves: %v", err)
	}
}

func TestDVSCheck(t *testing.T) {
	root, plan := quickPlan(t, "Table A.10")
	if _, err := DVSCheck(plan, experiment.Quick); !errors.Is(err, ErrNoRuns) {
		t.Errorf("no finished run: %v", err)
	}
	finishPlan(t, plan, experiment.Quick, func(r PlannedRun) bool { return r.Experiment.ID == "dvs/fs" || r.Experiment.ID == "dvs/lif" })
	for _, r := range plan {
		switch r.Experiment.ID {
		case "dvs/fs":
			patchResult(t, r.Dir, func(res *train.Result) {
				res.Classes, res.FinalTestAcc, res.FinalFiringRates = 11, 0.5, []float64{0.01, 0.025}
			})
		case "dvs/lif":
			patchResult(t, r.Dir, func(res *train.Result) { res.Classes = 0 })
		}
	}
	plan, _ = Plan(root, experiment.Quick, []string{"Table A.10"})
	if _, err := DVSCheck(plan, experiment.Quick); err == nil || !strings.Contains(err.Error(), "classes") {
		t.Errorf("a result without classes: %v", err)
	}
	var fsOnly []PlannedRun
	for _, r := range plan {
		if r.Experiment.ID == "dvs/fs" {
			fsOnly = append(fsOnly, r)
		}
	}
	out, err := DVSCheck(fsOnly, experiment.Quick)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"dvs/fs", "1", "11", "50.00", "89.72 ± 0.84", "9.09", "5.5", "1.00, 2.50"}
	tab := out.Tables[0]
	if len(tab.Rows) != 1 || !slices.Equal(tab.Rows[0], want) || !strings.Contains(tab.Caption, "quick mode") || !strings.Contains(tab.Caption, "Table A.10") {
		t.Errorf("rows %q, want %q; caption %q", tab.Rows, want, tab.Caption)
	}
	if len(out.Figures) != 1 || out.Figures[0].Name != "12_dvs_learning_curves" {
		t.Errorf("figures %+v", out.Figures)
	}
}
