package fidelity

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data/synth"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/theory"
	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/xla/xlatest"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// TestMain lowers XLA's LLVM optimization level for this test binary unless XLA_FLAGS is set (the tiny
// graphs compile faster; the tests check values, not speed).
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("XLA_FLAGS"); !ok {
		_ = os.Setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
	}
	os.Exit(m.Run())
}

func TestDifferencesAreComplete(t *testing.T) {
	ds := Differences()
	variants := map[string]bool{}
	for _, v := range Variants() {
		variants[v.Name] = true
	}
	measured := map[string]bool{}
	options := ""
	for _, d := range ds {
		for name, v := range map[string]string{"aspect": d.Aspect, "paper": d.Paper, "paper form": d.PaperForm,
			"released": d.Released, "released file": d.ReleasedFile, "default": d.Default, "why": d.Why} {
			if strings.TrimSpace(v) == "" {
				t.Errorf("%q: empty %s", d.Aspect, name)
			}
		}
		for _, f := range strings.Split(d.ReleasedFile, ",") {
			f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "@6c016f1"))
			if !strings.HasSuffix(f, ".py") && !strings.HasSuffix(f, ".yaml") && !strings.HasSuffix(f, ".sh") {
				t.Errorf("%q: released file %q is not a file of the released repository", d.Aspect, f)
			}
		}
		if d.Variant != "" {
			if !variants[d.Variant] {
				t.Errorf("%q names the unknown variant %q", d.Aspect, d.Variant)
			}
			measured[d.Variant] = true
			// The variant's flags are the option that gives the paper's form.
			v, _ := LookupVariant(d.Variant)
			for _, f := range flagsOf(v.Flags) {
				if !strings.Contains(d.Option, f) {
					t.Errorf("%q is measured by %s, whose flag %s is not in its option %q", d.Aspect, v.Name, f, d.Option)
				}
			}
		}
		options += " " + d.Option
	}
	// Every flag of every variant appears in an option of the differences, and every variant that flips
	// one option measures a difference.
	for _, v := range Variants() {
		for _, f := range flagsOf(v.Flags) {
			if !strings.Contains(options, f) {
				t.Errorf("variant %s: flag %s appears in no difference's option", v.Name, f)
			}
		}
		if v.Name != VariantBaseline && v.Name != VariantFirstForms && !measured[v.Name] {
			t.Errorf("variant %s measures no difference", v.Name)
		}
	}
	// The aspects the study must cover.
	var all strings.Builder
	for _, d := range ds {
		all.WriteString(strings.ToLower(d.Aspect) + "\n")
	}
	for _, want := range []string{"λ nesting", "spike comparison", "surrogate", "trainable coordinate", "spacing of f* (smnist)",
		"stability", "dropout", "readout", "bias", "adam's ε", "cosine", "adaptive-lif", "shd/ssc inputs", "gsc front end",
		"shd* validation split", "recipe: shd best test", "recipe: ssc", "recipe: smnist", "seeds"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no difference covers %q", want)
		}
	}
	// The paper's equation and algorithm numbers where the paper states a form.
	for aspect, ref := range map[string]string{"λ nesting (M ≥ 2)": "Eq. 10", "spike comparison": "Algorithm 1",
		"trainable coordinate of f*": "Eq. 5", "stability of f*": "Appendix A.2", "dropout masks": "Table A.2"} {
		found := false
		for _, d := range ds {
			if d.Aspect == aspect {
				found = true
				if !strings.Contains(d.Paper, ref) {
					t.Errorf("%q cites %q, want %s", aspect, d.Paper, ref)
				}
			}
		}
		if !found {
			t.Errorf("no difference %q", aspect)
		}
	}
}

// configKeys returns the JSON keys of the fields in which a and b differ.
func configKeys(t *testing.T, a, b train.Config) map[string]any {
	t.Helper()
	ma, err := configMap(a)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := configMap(b)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for k := range union(ma, mb) {
		if !reflect.DeepEqual(ma[k], mb[k]) {
			out[k] = mb[k]
		}
	}
	return out
}

func TestVariantsFlipWhatTheirFlagsSay(t *testing.T) {
	base, err := StandIn(1)
	if err != nil {
		t.Fatal(err)
	}
	base = base.Resolved()
	if base != base.WithReleasedSemantics() {
		t.Fatal("the stand-in does not have the released semantics")
	}
	names := map[string]bool{}
	allKeys := map[string]bool{}
	for _, v := range Variants() {
		if names[v.Name] {
			t.Errorf("variant %s twice", v.Name)
		}
		names[v.Name] = true
		got := v.Apply(base)
		if err := got.Validate(); err != nil {
			t.Errorf("%s: %v", v.Name, err)
		}
		changed := configKeys(t, base, got)
		if v.Name == VariantBaseline {
			if len(changed) != 0 || v.Flags != "" {
				t.Errorf("baseline changes %v (flags %q)", changed, v.Flags)
			}
			continue
		}
		if v.Name == VariantFirstForms {
			for k := range allKeys {
				if _, ok := changed[k]; !ok {
					t.Errorf("first-forms does not change %s", k)
				}
			}
			if got.Resolved() != got.Legacy().Resolved() || got.Readout != string(model.ReadoutMean) {
				t.Errorf("first-forms is not the toolkit's first semantics with the mean readout: %+v", got)
			}
			continue
		}
		// Exactly the fields the flags name change, to the flags' values.
		want := map[string]bool{}
		for _, tok := range strings.Fields(v.Flags) {
			name, value, hasValue := strings.Cut(strings.TrimPrefix(tok, "--"), "=")
			key := strings.ReplaceAll(name, "-", "_")
			want[key], allKeys[key] = true, true
			g, ok := changed[key]
			if !ok {
				t.Errorf("%s: %s does not change %s", v.Name, tok, key)
				continue
			}
			switch g := g.(type) {
			case string:
				if g != value {
					t.Errorf("%s: %s = %q, want %q", v.Name, key, g, value)
				}
			case float64:
				f, err := strconv.ParseFloat(value, 64)
				if err != nil || f != g {
					t.Errorf("%s: %s = %g, want %s", v.Name, key, g, value)
				}
			case bool:
				if hasValue || !g {
					t.Errorf("%s: %s = %v from %s", v.Name, key, g, tok)
				}
			}
		}
		for k := range changed {
			if !want[k] {
				t.Errorf("%s also changes %s (flags %q)", v.Name, k, v.Flags)
			}
		}
	}
	if _, err := LookupVariant("no-such"); err == nil {
		t.Error("an unknown variant was found")
	}
}

func TestStandInAndPlan(t *testing.T) {
	c, err := StandIn(2)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dataset != synth.ShallowName || c.Model != "fsts" || c.M != 2 || c.Width != 64 || c.Dropout != StandInDropout ||
		c.Seed != 2 || c.Protocol != train.OfficialVal || c.Epochs != 20 {
		t.Errorf("stand-in %+v", c)
	}
	root := t.TempDir()
	plan, err := Plan(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != len(Variants())*len(Seeds) {
		t.Fatalf("%d runs, want %d", len(plan), len(Variants())*len(Seeds))
	}
	dirs := map[string]bool{}
	for _, r := range plan {
		want := filepath.Join(root, "fidelity", r.Variant, "seed-"+strconv.FormatInt(r.Seed, 10))
		if r.Dir != want || dirs[r.Dir] {
			t.Errorf("run dir %s, want %s once", r.Dir, want)
		}
		dirs[r.Dir] = true
		if r.Config.Seed != r.Seed || r.Finished() {
			t.Errorf("%s: seed %d, finished %v", r.Dir, r.Config.Seed, r.Finished())
		}
		v, _ := LookupVariant(r.Variant)
		base, _ := StandIn(r.Seed)
		if err := sameConfig(r.Config, v.Apply(base)); err != nil {
			t.Errorf("%s: %v", r.Dir, err)
		}
	}
	if _, err := PlanFor(root, StandIn, nil, Seeds); err == nil {
		t.Error("a plan without variants was accepted")
	}
}

func TestStat(t *testing.T) {
	s := NewStat([]float64{1, 2, 3})
	if s.N != 3 || s.Mean != 2 || math.Abs(s.Std-1) > 1e-15 || !s.Clear() {
		t.Errorf("%+v clear %v", s, s.Clear())
	}
	for _, v := range [][]float64{{1, -1, 3}, {0.1, 2, 0.1}, {5}, nil, {0, 1, 2}} {
		if NewStat(v).Clear() {
			t.Errorf("%v read as clear", v)
		}
	}
	if s := NewStat([]float64{-2, -2.5, -3}); !s.Clear() || s.Mean != -2.5 {
		t.Errorf("%+v", s)
	}
}

func TestLogProgress(t *testing.T) {
	var buf bytes.Buffer
	log := LogProgress(&buf)
	r := Run{Variant: "lr-step", Flags: "--lr-schedule=step", Seed: 2}
	log(Event{Index: 3, Total: 12, Run: r})
	log(Event{Index: 3, Total: 12, Run: r, Train: &train.Progress{Phase: train.PhaseStep}})
	log(Event{Index: 4, Total: 12, Run: r, Skipped: true})
	acc := 0.5
	log(Event{Index: 3, Total: 12, Run: r, Result: &train.Result{Protocol: train.OfficialVal, BestEpoch: 2,
		TestAccAtBestVal: &acc, Epochs: make([]train.Epoch, 2)}})
	want := "[ 3/12] lr-step, seed 2: training (--lr-schedule=step) ...\n" +
		"[ 4/12] lr-step, seed 2: finished before, skipped\n" +
		"[ 3/12] lr-step, seed 2: done in 0.0 s, 2 epochs, selected test accuracy 50.00 % (epoch 2)\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

// tiny is a configuration that trains in seconds: FiTS M = 2 of width 8 on the first 32 training examples
// of the small synthetic task, two epochs, dropout 0.3, selected on the task's validation split.
func tiny(seed int64) (train.Config, error) {
	c := train.DefaultConfig()
	c.Small, c.TrainLimit = true, 32
	c.Model, c.M, c.Width, c.Batch, c.Epochs, c.LR = "fsts", 2, 8, 16, 2, 0.05
	c.Dropout, c.Protocol, c.Seed = 0.3, train.OfficialVal, seed
	return c, nil
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

func TestTrainAndMeasure(t *testing.T) {
	b := xlatest.XLA(t)
	root := t.TempDir()
	baseline, _ := LookupVariant(VariantBaseline)
	omega, _ := LookupVariant(VariantTargetOmega)
	plan, err := PlanFor(root, tiny, []Variant{baseline, omega}, []int64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	// A folder this study did not make is never written to.
	foreign := RunDir(root, VariantBiasZero, 1)
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	bias, _ := LookupVariant(VariantBiasZero)
	foreignPlan, err := PlanFor(root, tiny, []Variant{bias}, []int64{1})
	if err != nil {
		t.Fatal(err)
	}
	if err := TrainMissing(foreignPlan, b, "xla:cpu", nil); err == nil || !strings.Contains(err.Error(), "not touched") {
		t.Errorf("a foreign folder: %v", err)
	}
	if entries, _ := os.ReadDir(foreign); len(entries) != 1 {
		t.Errorf("the foreign folder was written to: %d entries", len(entries))
	}
	if err := os.RemoveAll(filepath.Dir(foreign)); err != nil {
		t.Fatal(err)
	}

	var started, finished, skipped int
	progress := func(e Event) {
		switch {
		case e.Skipped:
			skipped++
		case e.Result != nil:
			finished++
		case e.Train == nil:
			started++
		}
	}
	if err := TrainMissing(plan, b, "xla:cpu", progress); err != nil {
		t.Fatal(err)
	}
	if started != 4 || finished != 4 || skipped != 0 {
		t.Errorf("first pass: %d started, %d finished, %d skipped", started, finished, skipped)
	}
	stamp := map[string]int64{}
	for _, r := range plan {
		st, err := os.Stat(filepath.Join(r.Dir, train.ResultFile))
		if err != nil {
			t.Fatal(err)
		}
		stamp[r.Dir] = st.ModTime().UnixNano()
		if _, err := os.Stat(filepath.Join(r.Dir, MarkerFile)); err != nil {
			t.Errorf("%s: no marker: %v", r.Dir, err)
		}
	}
	started, finished, skipped = 0, 0, 0
	if err := TrainMissing(plan, b, "xla:cpu", progress); err != nil {
		t.Fatal(err)
	}
	if started != 0 || finished != 0 || skipped != 4 {
		t.Errorf("second pass: %d started, %d finished, %d skipped", started, finished, skipped)
	}
	for _, r := range plan {
		if st, _ := os.Stat(filepath.Join(r.Dir, train.ResultFile)); st.ModTime().UnixNano() != stamp[r.Dir] {
			t.Errorf("%s: result.json rewritten", r.Dir)
		}
	}
	// An unfinished run of this study (marker, no result) is named in the notes.
	lr, _ := LookupVariant(VariantLRStep)
	pending, err := PlanFor(root, tiny, []Variant{lr}, []int64{1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := claim(pending[0]); err != nil {
		t.Fatal(err)
	}

	tab, err := Measure(root)
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
	for _, r := range plan {
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
		key := r.Variant + "/" + strconv.FormatInt(r.Seed, 10)
		acc[key], travel[key] = sel, travelFromCheckpoint(t, r.Dir)
		found := false
		for _, m := range tab.Runs {
			if m.Variant == r.Variant && m.Seed == r.Seed {
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
	base, omegaRow := tab.Row(VariantBaseline), tab.Row(VariantTargetOmega)
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
	if err != nil || len(rows) != 3 || rows[2][0] != VariantTargetOmega {
		t.Fatalf("table.csv: %v %v", rows, err)
	}
	if got, _ := strconv.ParseFloat(rows[2][6], 64); math.Abs(got-100*omegaRow.DeltaAcc.Mean) > 1e-6 {
		t.Errorf("table.csv Δ accuracy %s, want %g", rows[2][6], 100*omegaRow.DeltaAcc.Mean)
	}
	b2, err := os.ReadFile(filepath.Join(out, TableJSON))
	if err != nil {
		t.Fatal(err)
	}
	var back Table
	if err := json.Unmarshal(b2, &back); err != nil || !reflect.DeepEqual(&back, tab) {
		t.Errorf("table.json does not round-trip: %v", err)
	}
	runs, err := os.ReadFile(filepath.Join(out, RunsCSV))
	if err != nil || strings.Count(string(runs), "\n") != 5 {
		t.Errorf("runs.csv: %q %v", runs, err)
	}

	// A run whose configuration is not its baseline's with the variant applied is refused.
	stale := RunDir(root, VariantBiasZero, 1)
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(plan[0].Dir)
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		bs, err := os.ReadFile(filepath.Join(plan[0].Dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stale, n), bs, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Measure(root); err == nil || !strings.Contains(err.Error(), "bias_init") {
		t.Errorf("a stale run was measured: %v", err)
	}
}
