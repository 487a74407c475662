package nb

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data/synth"
	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/train"
)

func TestSynthAblationRecipeAndFolders(t *testing.T) {
	t.Setenv("GONB_DIR", "/repo/notebooks")
	t.Setenv("FITS_ROOT", "")
	for _, tc := range []struct {
		quick, figures string
		wantQuick      bool
		wantFigs       string
		wantDir        string
		wantEpochs     int
		wantWidth      int
	}{
		{"", "", false, "/repo/figures", "/repo/runs/notebook05-fsts-m1", 20, 64},
		{"0", "", false, "/repo/figures", "/repo/runs/notebook05-fsts-m1", 20, 64},
		{"1", "", true, "/repo/notebooks/.executed/figures-quick", "/repo/runs/notebook05-fsts-m1-quick", 4, 16},
		{"1", "/elsewhere", true, "/elsewhere", "/repo/runs/notebook05-fsts-m1-quick", 4, 16},
		{"", "/elsewhere", false, "/elsewhere", "/repo/runs/notebook05-fsts-m1", 20, 64},
	} {
		t.Setenv("FITS_QUICK", tc.quick)
		t.Setenv("FITS_FIGURES_DIR", tc.figures)
		t.Setenv("FITS_MODE", "")
		a := NewSynthAblation(Open(&recorder{}))
		s := a.Session
		fsts := AblationModels[4]
		c := a.Config(fsts)
		if a.Quick != tc.wantQuick || s.Figures != tc.wantFigs || a.RunDir(fsts) != tc.wantDir || a.Epochs() != tc.wantEpochs ||
			c.Width != tc.wantWidth || c.Small != tc.wantQuick || c.Dataset != synth.Name || c.Model != "fsts" || c.M != 1 ||
			c.Protocol != train.OfficialVal || c.Seed != 1 {
			t.Errorf("FITS_QUICK=%q FITS_FIGURES_DIR=%q: quick %v, figures %q, run %q, config %+v", tc.quick, tc.figures, a.Quick, s.Figures, a.RunDir(fsts), c)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("recipe: %v", err)
		}
		if tc.wantQuick && a.TaskConfig().T != synth.SmallConfig().T || !tc.wantQuick && a.TaskConfig().T != synth.DefaultConfig().T {
			t.Errorf("task of %d bins", a.TaskConfig().T)
		}
	}
	var labels []string
	for _, m := range AblationModels {
		labels = append(labels, m.Label())
	}
	if want := []string{"lif", "adaptlif", "fs-frozen", "fs", "fsts M=1"}; !slices.Equal(labels, want) {
		t.Errorf("models %v, want %v", labels, want)
	}
}

func TestClassCodes(t *testing.T) {
	for _, cfg := range []synth.Config{synth.DefaultConfig(), synth.SmallConfig()} {
		tab, err := ClassCodes(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(tab.Rows) != cfg.Classes || len(tab.Header) != cfg.Groups+1 || !strings.Contains(tab.Caption, "bins of 4 ms") {
			t.Fatalf("%d rows, header %v, caption %q", len(tab.Rows), tab.Header, tab.Caption)
		}
		// Every class uses the same frequencies and the same onsets, permuted over the groups.
		split := func(row []string) (freqs, onsets []string) {
			for _, c := range row[1:] {
				f, o, ok := strings.Cut(c, " / ")
				if !ok {
					t.Fatalf("cell %q", c)
				}
				freqs, onsets = append(freqs, f), append(onsets, o)
			}
			slices.Sort(freqs)
			slices.Sort(onsets)
			return freqs, onsets
		}
		f0, o0 := split(tab.Rows[0])
		if len(slices.Compact(slices.Clone(f0))) != cfg.Groups {
			t.Errorf("frequencies %v, want %d distinct", f0, cfg.Groups)
		}
		for _, r := range tab.Rows[1:] {
			if f, o := split(r); !slices.Equal(f, f0) || !slices.Equal(o, o0) {
				t.Errorf("class %s: %v, want the frequencies %v and the onsets %v", r[0], r[1:], f0, o0)
			}
		}
	}
	bad := synth.DefaultConfig()
	bad.Groups = 0
	if _, err := ClassCodes(bad); err == nil {
		t.Error("a task without groups was accepted")
	}
}

// ablationRun is a finished run of model m on the Small synthetic task, without a checkpoint: what
// AblationTable reads (the configuration and result.json).
func ablationRun(m AblationModel, test, val float64, rates ...float64) *analysis.Run {
	c := train.DefaultConfig()
	c.Dataset, c.Small, c.Model, c.M, c.Width, c.Seed, c.Protocol = synth.Name, true, m.Model, m.M, 16, 1, train.OfficialVal
	res := &train.Result{Model: m.Model, M: m.M, ParameterCount: 1000 + m.M, BestEpoch: 3, FiringRates: rates,
		TestAccAtBestVal: &test, BestValAcc: &val, Config: c}
	return &analysis.Run{Dir: filepath.Join("runs", m.Label()), Config: c, Result: res}
}

func TestAblationTable(t *testing.T) {
	runs := []*analysis.Run{ablationRun(AblationModels[0], 0.125, 0.15, 0.02, 0.01), ablationRun(AblationModels[4], 1, 0.96875, 0.04, 0.002)}
	tab, err := AblationTable(runs)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Plain LIF", "0", "1000", "12.50", "15.00", "3", "5.0, 2.5", "60.91 ± 0.28"},
		{"FS + TS (M = 1)", "1", "1001", "100.00", "96.88", "3", "10.0, 0.5", "72.58 ± 0.08"},
	}
	for i := range want {
		if !slices.Equal(tab.Rows[i], want[i]) {
			t.Errorf("row %d %q, want %q", i, tab.Rows[i], want[i])
		}
	}
	if !strings.Contains(tab.Caption, "width 16, seed 1, protocol official-val") || !strings.Contains(tab.Caption, "Table 3") || len(tab.Header) != len(want[0]) {
		t.Errorf("caption %q, header %v", tab.Caption, tab.Header)
	}

	unfinished := ablationRun(AblationModels[1], 0.1, 0.1)
	unfinished.Result.TestAccAtBestVal = nil
	if _, err := AblationTable([]*analysis.Run{unfinished}); err == nil || !strings.Contains(err.Error(), "official-val") {
		t.Errorf("a run without a best-validation result: %v", err)
	}
	if _, err := AblationTable(nil); !errors.Is(err, ErrNoRuns) {
		t.Errorf("no run: %v", err)
	}
}

func TestLearnedTargets(t *testing.T) {
	cfg := neuron.DefaultConfig(neuron.FS, 0)
	init, err := analysis.InitialTargetsHz(cfg, 4)
	if err != nil {
		t.Fatal(err)
	}
	// Two of four targets move by more than 5 %: 50 %.
	learned := []float64{init[0] * 1.2, init[1], init[2] * 0.9, init[3] * 1.01}
	fs := analysis.Layer{Index: 0, Neuron: cfg, Neurons: 4, InitialHz: init, TargetHz: learned}
	fsts := fs
	fsts.Index, fsts.Neuron = 1, neuron.DefaultConfig(neuron.FSTS, 1)
	fsts.Beta, fsts.Lambda = [][]float64{{0.1, 0.2, 0.3, 0.4}}, [][]float64{{0.05, 0.05, 0.1, 0.2}}
	out, err := LearnedTargets([]TargetRun{{"fs", []analysis.Layer{fs}}, {"fsts M=1", []analysis.Layer{fs, fsts}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Figures) != 1 || out.Figures[0].Name != "05_target_histograms" || len(out.Tables) != 1 {
		t.Fatalf("output %+v", out)
	}
	rows := out.Tables[0].Rows
	med := func(v []float64) float64 { return analysis.Median(v) }
	wantMedian := strings.Join([]string{fmt1(med(init)), fmt1(med(learned))}, " → ")
	if len(rows) != 3 || rows[0][1] != "1" || rows[0][4] != "50" || rows[0][3] != wantMedian || rows[0][5] != "–" ||
		rows[2][0] != "fsts M=1" || rows[2][1] != "2" || rows[2][5] != "0.250" || rows[2][6] != "0.100" ||
		rows[0][2] != fmt1(cfg.FMinHz)+" – "+fmt1(cfg.FMaxHz) {
		t.Errorf("rows %q (median %q)", rows, wantMedian)
	}
	if _, err := LearnedTargets(nil); err == nil {
		t.Error("no run: want an error")
	}
}

func fmt1(v float64) string { return fmt.Sprintf("%.1f", v) }
