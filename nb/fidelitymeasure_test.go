package nb

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/theory"
	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/xla/xlatest"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// tiny is a configuration that trains in seconds: FiTS M = 2 of width 8 on the first 32 training examples
// of the small synthetic task, two epochs, dropout 0.3, selected on the task's validation split.
func tiny(seed int64) train.Config {
	c := train.DefaultConfig()
	c.Small, c.TrainLimit = true, 32
	c.Model, c.M, c.Width, c.Batch, c.Epochs, c.LR = "fsts", 2, 8, 16, 2, 0.05
	c.Dropout, c.Protocol, c.Seed = 0.3, train.OfficialVal, seed
	return c.Resolved()
}

// travelFromCheckpoint recomputes a run's f* travel from its last checkpoint's raw target variables and
// the log spacing of the initial f* over [1, 50] Hz.
func travelFromCheckpoint(t *testing.T, dir string) float64 {
	t.Helper()
	scope := mlmodel.NewStore().RootScope()
	if _, _, err := train.LoadCheckpointAll(scope, dir); err != nil {
		t.Fatal(err)
	}
	sum, n, layers := 0.0, 0, 0
	for v := range scope.Store().IterVariables() {
		if v.Name() != neuron.VarLogTargetHz && v.Name() != neuron.VarOmegaStar {
			continue
		}
		tensor, err := v.Value()
		if err != nil {
			t.Fatal(err)
		}
		vals, err := tensors.CopyFlatData[float32](tensor)
		if err != nil {
			t.Fatal(err)
		}
		init, err := theory.LogSpacedHz(1, 50, len(vals))
		if err != nil {
			t.Fatal(err)
		}
		layers++
		for i, x := range vals {
			lnf := float64(x)
			if v.Name() == neuron.VarOmegaStar {
				lnf = math.Log(float64(x) / (2 * math.Pi))
			}
			sum += math.Abs(lnf - math.Log(init[i]))
			n++
		}
	}
	if layers != 2 || n != 16 {
		t.Fatalf("%s: %d target variables of %d entries, want 2 of 8", dir, layers, n)
	}
	return sum / float64(n)
}

// TestMeasureFidelity trains the baseline and target-omega on a tiny task with two seeds into the study's
// run folders, and checks the table against the runs: the protocol's selection recomputed from the
// epochs, the f* travel recomputed from the last checkpoint, the paired differences, the unfinished run in
// the notes and the files.
func TestMeasureFidelity(t *testing.T) {
	b := xlatest.XLA(t)
	root := t.TempDir()
	var runs []PlannedRun
	for _, name := range []string{experiment.VariantBaseline, experiment.VariantTargetOmega} {
		e, err := experiment.Lookup("fidelity/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var v experiment.Variant
		for _, x := range experiment.Variants() {
			if x.Name == name {
				v = x
			}
		}
		for _, seed := range []int64{1, 2} {
			dir := experiment.RunDir(root, e.ID, seed)
			if _, err := train.TrainModel(v.Apply(tiny(seed)), train.Options{Dir: dir, Backend: b, BackendName: "xla:cpu"}); err != nil {
				t.Fatal(err)
			}
			runs = append(runs, PlannedRun{Experiment: e, Seed: seed, Dir: dir, Finished: true})
		}
	}
	lr, _ := experiment.Lookup("fidelity/" + experiment.VariantLRStep)
	runs = append(runs, PlannedRun{Experiment: lr, Seed: 1, Dir: experiment.RunDir(root, lr.ID, 1)})

	tab, err := MeasureFidelity(runs)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Protocol != train.OfficialVal || tab.Dataset != "synthetic" || tab.M != 2 || tab.Width != 8 || tab.Epochs != 2 ||
		!reflect.DeepEqual(tab.Seeds, []int64{1, 2}) || len(tab.Rows) != 2 || len(tab.Runs) != 4 {
		t.Fatalf("table %+v", tab)
	}
	if len(tab.Notes) != 1 || !strings.Contains(tab.Notes[0], "lr-step seed 1 has not finished") {
		t.Errorf("notes %q", tab.Notes)
	}
	acc := map[string]float64{}
	travel := map[string]float64{}
	for _, r := range runs[:4] {
		res, err := train.ReadResult(r.Dir)
		if err != nil {
			t.Fatal(err)
		}
		// The protocol's selection, recomputed: the test accuracy of the first epoch of best validation
		// accuracy.
		best, sel := math.Inf(-1), 0.0
		for _, e := range res.Epochs {
			if *e.ValAcc > best {
				best, sel = *e.ValAcc, e.TestAcc
			}
		}
		variant := strings.TrimPrefix(r.Experiment.ID, "fidelity/")
		key := variant + "/" + strconv.FormatInt(r.Seed, 10)
		acc[key], travel[key] = sel, travelFromCheckpoint(t, r.Dir)
		found := false
		for _, m := range tab.Runs {
			if m.Variant == variant && m.Seed == r.Seed {
				found = true
				if m.TestAcc != sel || math.Abs(m.Travel-travel[key]) > 1e-6 || len(m.LayerTravel) != 2 {
					t.Errorf("%s: measured acc %g travel %g (%v), want %g and %g", key, m.TestAcc, m.Travel, m.LayerTravel, sel, travel[key])
				}
			}
		}
		if !found {
			t.Errorf("%s not measured", key)
		}
	}
	base, omegaRow := tab.Row(experiment.VariantBaseline), tab.Row(experiment.VariantTargetOmega)
	if base == nil || omegaRow == nil {
		t.Fatal("rows missing")
	}
	t.Logf("baseline: acc %v travel %v; target-omega: Δacc %v Δtravel %v", base.TestAcc.Values, base.Travel.Values,
		omegaRow.DeltaAcc.Values, omegaRow.DeltaTravel.Values)
	if base.DeltaAcc.N != 0 || base.TestAcc.N != 2 || math.Abs(base.TestAcc.Mean-(acc["baseline/1"]+acc["baseline/2"])/2) > 1e-12 {
		t.Errorf("baseline row %+v", base)
	}
	d1, d2 := acc["target-omega/1"]-acc["baseline/1"], acc["target-omega/2"]-acc["baseline/2"]
	if !reflect.DeepEqual(omegaRow.PairedSeeds, []int64{1, 2}) || omegaRow.DeltaAcc.Values[0] != d1 || omegaRow.DeltaAcc.Values[1] != d2 ||
		math.Abs(omegaRow.DeltaAcc.Mean-(d1+d2)/2) > 1e-12 || math.Abs(omegaRow.DeltaAcc.Std-math.Abs(d1-d2)/math.Sqrt2) > 1e-12 {
		t.Errorf("Δ accuracy %+v, want %g and %g", omegaRow.DeltaAcc, d1, d2)
	}
	t1, t2 := travel["target-omega/1"]-travel["baseline/1"], travel["target-omega/2"]-travel["baseline/2"]
	if math.Abs(omegaRow.DeltaTravel.Mean-(t1+t2)/2) > 1e-6 {
		t.Errorf("Δ travel %+v, want %g and %g", omegaRow.DeltaTravel, t1, t2)
	}
	// Adam moves ln f* by about the learning rate per step and Ω* by about as many rad/s: with Ω* as the
	// coordinate f* barely moves.
	if !(t1 < 0 && t2 < 0) || !(base.Travel.Mean > 10*omegaRow.Travel.Mean) {
		t.Errorf("f* travel: baseline %v, omega %v", base.Travel.Values, omegaRow.Travel.Values)
	}

	// The files.
	out := t.TempDir()
	paths, err := tab.Write(out)
	if err != nil || len(paths) != 3 {
		t.Fatal(paths, err)
	}
	f, err := os.Open(filepath.Join(out, TableCSV))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 3 || rows[2][0] != experiment.VariantTargetOmega {
		t.Fatalf("table.csv: %v %v", rows, err)
	}
	if got, _ := strconv.ParseFloat(rows[2][6], 64); math.Abs(got-100*omegaRow.DeltaAcc.Mean) > 1e-6 {
		t.Errorf("table.csv Δ accuracy %s, want %g", rows[2][6], 100*omegaRow.DeltaAcc.Mean)
	}
	b2, err := os.ReadFile(filepath.Join(out, TableJSON))
	if err != nil {
		t.Fatal(err)
	}
	var back FidelityResult
	if err := json.Unmarshal(b2, &back); err != nil || !reflect.DeepEqual(&back, tab) {
		t.Errorf("table.json does not round-trip: %v", err)
	}
	runsCSV, err := os.ReadFile(filepath.Join(out, RunsCSV))
	if err != nil || strings.Count(string(runsCSV), "\n") != 5 {
		t.Errorf("runs.csv: %q %v", runsCSV, err)
	}

	// FidelityResults writes the same table beside the runs.
	o, err := FidelityResults(runs, root)
	if err != nil || len(o.Tables) != 1 || len(o.Notes) != 2 || !strings.Contains(o.Notes[1], filepath.Join(root, "fidelity", TableJSON)) {
		t.Fatalf("FidelityResults: %+v, %v", o, err)
	}
	if back, _ := os.ReadFile(filepath.Join(root, "fidelity", TableJSON)); string(back) != string(b2) {
		t.Error("FidelityResults wrote another table.json")
	}
}
