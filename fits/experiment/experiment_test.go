package experiment

import (
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data"
	_ "github.com/fits-snn/fits/data/all" // registers every dataset, for train.Config.Validate
	"github.com/fits-snn/fits/data/dvs"
	"github.com/fits-snn/fits/data/mel"
	"github.com/fits-snn/fits/data/shd"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

func TestCatalog(t *testing.T) {
	all := All()
	// 24 cells in each of Tables 3, A.5 and A.6, 12 more for M = 3..5 in Table A.7, 2 SHD best-test rows,
	// 1 sMNIST, 4 DVS, the 20-seed learned-organisation runs and the 11 variants of the fidelity study.
	if len(all) != 24*3+12+2+1+4+1+11 {
		t.Fatalf("%d experiments", len(all))
	}
	idPattern := regexp.MustCompile(`^[a-z0-9-]+(/[a-z0-9-]+)+$`)
	seen := map[string]bool{}
	for _, e := range all {
		if seen[e.ID] || !idPattern.MatchString(e.ID) {
			t.Errorf("id %q repeated or not path-safe", e.ID)
		}
		seen[e.ID] = true
		if len(e.Tables) == 0 || !e.Feeds(e.Home) || e.Row == "" || e.Title == "" {
			t.Errorf("%s: tables %v, home %q, row %q, title %q", e.ID, e.Tables, e.Home, e.Row, e.Title)
		}
		want := seedsUpTo(5)
		if e.ID == "gsc-org/fsts-m1/w512" {
			want = seedsUpTo(20)
		}
		if !slices.Equal(e.Seeds, want) {
			t.Errorf("%s: seeds %v", e.ID, e.Seeds)
		}
		if e.Full.Seed != 0 || e.Quick.Seed != 0 {
			t.Errorf("%s: recipes carry seeds %d, %d; want 0", e.ID, e.Full.Seed, e.Quick.Seed)
		}
		got, err := Lookup(e.ID)
		if err != nil || got.ID != e.ID {
			t.Errorf("Lookup(%s) = %s, %v", e.ID, got.ID, err)
		}
	}
	// Copies: modifying what All returns does not change the catalog.
	all[0].Tables[0], all[0].Seeds[0] = "Table 99", 99
	if e, _ := Lookup(all[0].ID); e.Tables[0] == "Table 99" || e.Seeds[0] == 99 {
		t.Error("All shares slices with the catalog")
	}
	want := []string{"Table 1", "Table 2", "Table 3", "Table 4", "Table 5", "Table A.4", "Table A.5", "Table A.6",
		"Table A.7", "Table A.8", "Table A.9", "Table A.10", "Figure 2", "Figure 3", "Figure A.2", "Fidelity"}
	if got := Tables(); !slices.Equal(got, want) {
		t.Errorf("Tables() = %v, want %v", got, want)
	}
}

func TestLookupErrors(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"ssc/fsts-m2/w1024", "ssc/fsts-m2/w512"},     // a grid's ids are listed
		{"cifar/lif", "`fits experiments` lists all"}, // other ids: examples and the listing command
		{"", "dvs/lif"},
	} {
		_, err := Lookup(tc.id)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Lookup(%q) error %v, want it to mention %q", tc.id, err, tc.want)
		}
	}
}

func TestParseLabel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Table 3", "Table 3"}, {"table3", "Table 3"}, {"3", "Table 3"}, {"tab 3", "Table 3"},
		{"A.7", "Table A.7"}, {"tableA7", "Table A.7"}, {"a7", "Table A.7"}, {"Table A.10", "Table A.10"},
		{"TABLE_A_5", "Table A.5"}, {"Figure 2", "Figure 2"}, {"fig2", "Figure 2"}, {"Fig. 3", "Figure 3"},
		{"figure A.2", "Figure A.2"}, {"table 1", "Table 1"}, {"fidelity", "Fidelity"}, {" Fidelity", "Fidelity"},
	} {
		got, err := ParseLabel(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseLabel(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "Table 6", "A.11", "Figure 4", "table", "3a", "03", "bogus"} {
		if got, err := ParseLabel(bad); err == nil || !strings.Contains(err.Error(), "Table A.10") {
			t.Errorf("ParseLabel(%q) = %q, %v; want an error listing the labels", bad, got, err)
		}
	}
}

func TestForTable(t *testing.T) {
	for _, tc := range []struct {
		label string
		n     int
		first string
	}{
		{"Table 1", 6, "shd-best/lif/w128"},
		{"2", 2, "gsc/lif/w512"},
		{"table3", 24, "ssc/lif/w64"},
		{"4", 6, "ssc/lif/w512"},
		{"Table 5", 1, "shd-best/fsts-m1/w128"},
		{"A.4", 36, "ssc/fs/w64"},
		{"A.5", 24, "gsc/lif/w64"},
		{"tableA6", 24, "shd-val/lif/w64"},
		{"a7", 36, "ssc/lif/w64"},
		{"A.8", 4, "ssc/fs/w64"},
		{"A.9", 1, "smnist/fsts-m1/w256"},
		{"A.10", 4, "dvs/lif"},
		{"fig2", 1, "gsc-org/fsts-m1/w512"},
		{"Figure 3", 1, "shd-best/fsts-m1/w128"},
		{"Figure A.2", 1, "gsc-org/fsts-m1/w512"},
		{"fidelity", 11, "fidelity/baseline"},
	} {
		es, err := ForTable(tc.label)
		if err != nil || len(es) != tc.n || es[0].ID != tc.first {
			ids := []string{}
			for _, e := range es {
				ids = append(ids, e.ID)
			}
			t.Errorf("ForTable(%q): %d experiments %v, %v; want %d starting with %s", tc.label, len(es), ids, err, tc.n, tc.first)
			continue
		}
		l, _ := ParseLabel(tc.label)
		for _, e := range es {
			if !e.Feeds(l) {
				t.Errorf("ForTable(%q) returned %s, which feeds %v", tc.label, e.ID, e.Tables)
			}
		}
	}
	for _, tc := range []struct{ label, want string }{
		{"Table A.3", "fits bench"}, {"A.1", "neuron constants"}, {"Table A.2", "learning rates"},
		{"Table 6", "Table A.10"}, {"nonsense", "tables with experiments"},
	} {
		if _, err := ForTable(tc.label); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "Table A.9") {
			t.Errorf("ForTable(%q) error %v, want one mentioning %q and the valid tables", tc.label, err, tc.want)
		}
	}
}

// TestRecipesValidate checks that every Full and Quick recipe is a valid training configuration, and
// Config's seeds and errors.
func TestRecipesValidate(t *testing.T) {
	for _, e := range All() {
		if err := e.Full.Validate(); err != nil {
			t.Errorf("%s full: %v", e.ID, err)
		}
		cfg, err := e.Config(Full, 3)
		if err != nil || cfg.Seed != 3 || cfg.Dataset != e.Full.Dataset {
			t.Errorf("%s: Config(full, 3) = %+v, %v", e.ID, cfg, err)
		}
		if !e.HasQuick() {
			if _, err := e.Config(Quick, 1); err == nil || !strings.Contains(err.Error(), "quick mode covers W =") {
				t.Errorf("%s: Config(quick) without a stand-in gave %v", e.ID, err)
			}
			if e.QuickNote != "" || e.QuickSeeds != nil {
				t.Errorf("%s: quick note or seeds without a stand-in", e.ID)
			}
			continue
		}
		if err := e.Quick.Validate(); err != nil {
			t.Errorf("%s quick: %v", e.ID, err)
		}
		if cfg, err := e.Config(Quick, 2); err != nil || cfg.Seed != 2 || cfg.Dataset != e.Quick.Dataset {
			t.Errorf("%s: Config(quick, 2) = %+v, %v", e.ID, cfg, err)
		}
		q := e.Quick
		if (q.Dataset == e.Full.Dataset && e.QuickFixture == "") || q.Model != e.Full.Model || q.M != e.Full.M || q.Width > 64 || q.Epochs > 20 ||
			e.QuickNote == "" || len(e.QuickSeeds) == 0 || !strings.Contains(e.QuickNote, "not ") {
			t.Errorf("%s: quick %+v, note %q, seeds %v", e.ID, q, e.QuickNote, e.QuickSeeds)
		}
	}
	e, _ := Lookup("ssc/lif/w64")
	if _, err := e.Config("fast", 1); err == nil || !strings.Contains(err.Error(), "quick, full") {
		t.Errorf("Config with an unknown mode: %v", err)
	}
}

// TestQuickPlanSize holds the size of the quick reproduction that quick.go documents.
func TestQuickPlanSize(t *testing.T) {
	runs := 0
	for _, e := range All() {
		runs += len(e.SeedsFor(Quick))
	}
	if runs != 82 {
		t.Errorf("the quick plan has %d runs; quick.go says 82", runs)
	}
}

// TestOneLearningRate checks that no recipe, full or quick, scales the learning rate of f*: with the
// released code's coordinate ln f* one learning rate serves every variable. Every recipe but the fidelity
// variants' carries the released code's training semantics.
func TestOneLearningRate(t *testing.T) {
	released := train.DefaultConfig()
	for _, e := range All() {
		for _, c := range []train.Config{e.Full, e.Quick} {
			if c.Dataset == "" {
				continue
			}
			if c.TargetLRScale != 0 {
				t.Errorf("%s: learning-rate scale of f* %g, want none", e.ID, c.TargetLRScale)
			}
			if e.Feeds(Fidelity) && e.ID != "fidelity/"+VariantBaseline {
				continue
			}
			if c.TSMix != released.TSMix || c.TargetCoordinate != released.TargetCoordinate || c.DropoutMode != released.DropoutMode ||
				c.LRSchedule != released.LRSchedule || c.FreqGuardSafety != released.FreqGuardSafety || c.SurrogateAlpha != released.SurrogateAlpha {
				t.Errorf("%s: semantics %+v, want the released code's", e.ID, c.Semantics())
			}
		}
	}
}

// TestFullRecipesFollowThePaper holds the Full recipes to Section 4.2 and Tables A.1/A.2.
func TestFullRecipesFollowThePaper(t *testing.T) {
	protocols := map[string]train.Protocol{"ssc": train.OfficialVal, "gsc": train.OfficialVal, "gsc-org": train.OfficialVal,
		"shd-val": train.ValSplit, "shd-best": train.BestTest, "smnist": train.BestTest, "dvs": train.FinalEpoch, "fidelity": train.OfficialVal}
	datasets := map[string]string{"ssc": "SSC", "gsc": "GSC", "gsc-org": "GSC", "shd-val": "SHD", "shd-best": "SHD", "fidelity": "SSC"}
	for _, e := range All() {
		f := e.Full
		prefix, _, _ := strings.Cut(e.ID, "/")
		batch := 128
		if prefix == "smnist" {
			batch = 256 // the released sMNIST config
		}
		if f.Epochs != 100 || f.Batch != batch || f.Protocol != protocols[prefix] {
			t.Errorf("%s: epochs %d, batch %d, protocol %s", e.ID, f.Epochs, f.Batch, f.Protocol)
		}
		ds, ok := datasets[prefix]
		if !ok {
			continue
		}
		order := f.M
		if f.Model != "fsts" {
			order = 0
		}
		want, _ := paper.LRDropoutFor(ds, min(order, 2), f.Width)
		if f.LR != want.LR || f.Dropout != want.Dropout || want.LR == 0 {
			t.Errorf("%s: lr %g, dropout %g; Table A.2 (%s, M = %d, W = %d) says %g, %g", e.ID, f.LR, f.Dropout, ds, min(order, 2), f.Width, want.LR, want.Dropout)
		}
		if (f.Model != "fsts" && f.Model != "fs" || f.M > 2) && e.FullNote == "" {
			t.Errorf("%s borrows a Table A.2 cell without saying so", e.ID)
		}
	}
	s, _ := Lookup("smnist/fsts-m1/w256")
	if s.Full.Dataset != "smnist" || s.Full.Width != 256 || s.Full.M != 1 || s.Full.Model != "fsts" {
		t.Errorf("sMNIST recipe %+v, the paper's is pixel-wise, W = 256, M = 1", s.Full)
	}
	d, _ := Lookup("dvs/fsts-m2")
	if d.Full.Dataset != "dvsgesture" || d.Full.M != 2 {
		t.Errorf("DVS recipe %+v", d.Full)
	}
}

// TestNeuronConstantsAreTableA1 checks that the neuron constants fits/train derives from the registered
// datasets' time bins are those of Table A.1 (SHD, SSC, GSC) and Appendix C.4 (DVS Gesture).
func TestNeuronConstantsAreTableA1(t *testing.T) {
	m := mel.Default()
	dts := map[string]float64{"shd": shd.DefaultBinning().Dt(), "ssc": shd.DefaultBinning().Dt(), "gsc": float64(m.Hop) / float64(m.SampleRate)}
	for name, col := range map[string]string{"shd": "SHD", "ssc": "SSC", "gsc": "GSC"} {
		want, _ := paper.NeuronConstantsFor(col)
		n, err := train.NeuronConfig(neuron.FS, 0, &data.Dataset{Name: name, Dt: dts[name]})
		if err != nil {
			t.Fatal(err)
		}
		if !near(n.TauM, want.TauM) || !near(n.TauA, want.TauA) || !near(n.Dt, want.Dt) || n.FMinHz != want.FMinHz || n.FMaxHz != want.FMaxHz {
			t.Errorf("%s: τm %g, τa %g, Δt %g, f* [%g, %g]; Table A.1: %+v", name, n.TauM, n.TauA, n.Dt, n.FMinHz, n.FMaxHz, want)
		}
	}
	f := dvs.DefaultFraming()
	c := model.DefaultConvConfig(neuron.FS, 0)
	if f.T != paper.DVSBins || !near(f.Dt, paper.DVSDt) || f.Out != paper.DVSSize ||
		c.Neuron.FMinHz != paper.DVSFMinHz || c.Neuron.FMaxHz != paper.DVSFMaxHz || c.Classes != paper.DVSClasses {
		t.Errorf("DVS: framing %+v, conv neuron f* [%g, %g], %d classes; Appendix C.4: T = 50, Δt = 20 ms, 64×64, [0.5, 5] Hz, 11 classes",
			f, c.Neuron.FMinHz, c.Neuron.FMaxHz, c.Classes)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

// TestWidthsMatchParameterCounts checks the widths read from the parameter counts of Tables 1, 2 and
// A.9: the dense layers of a two-hidden-layer network (input→W→W→classes, with biases) round to the
// printed count (neuron parameters, a few per neuron, do not change the rounding).
func TestWidthsMatchParameterCounts(t *testing.T) {
	inputs := map[string][2]int{"SHD": {140, 20}, "SHD*": {140, 20}, "SSC": {140, 35}, "GSC": {40, 35}, "sMNIST": {1, 10}}
	for _, l := range []string{paper.Table1, paper.Table2, paper.TableA9} {
		for _, r := range paper.BenchmarkRows(l) {
			if !r.Ours {
				continue
			}
			e, err := Lookup(BenchmarkID(r))
			if err != nil {
				t.Fatal(err)
			}
			in, classes, w := inputs[r.Dataset][0], inputs[r.Dataset][1], e.Full.Width
			count := in*w + w + w*w + w + w*classes + classes
			if got := math.Round(float64(count)/1e4) / 100; got != r.ParamsM {
				t.Errorf("%s %s %s: W = %d gives %d parameters (%.2f M), the paper prints %.2f M", l, r.Dataset, r.Method, w, count, got, r.ParamsM)
			}
		}
	}
}

func TestRunDirAndModes(t *testing.T) {
	if got, want := RunDir("runs", "ssc/fsts-m2/w512", 3), filepath.Join("runs", "ssc", "fsts-m2", "w512", "seed-3"); got != want {
		t.Errorf("RunDir = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		in   string
		want Mode
		ok   bool
	}{{"quick", Quick, true}, {" FULL ", Full, true}, {"", "", false}, {"fast", "", false}} {
		got, err := ParseMode(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseMode(%q) = %q, %v", tc.in, got, err)
		}
	}
}

// TestReleasedRecipeFields: every full cell carries the released code's training semantics (but the
// fidelity variants, whose semantics TestVariantsFlipWhatTheirFlagsSay checks) and its neuron constants
// explicitly, seeds 0-4; the SHD best-test FiTS cell and the sMNIST cell are the released configs.
func TestReleasedRecipeFields(t *testing.T) {
	for _, e := range All() {
		f := e.Full
		if e.Feeds(Fidelity) {
			f = f.WithReleasedSemantics().Resolved() // the variants' constants, seeds and notes are checked here
		}
		if f.TauM <= 0 || f.TauA <= 0 || f.Dt <= 0 || f.FMinHz <= 0 || f.FMaxHz <= f.FMinHz || f.Readout == "" || f.FInit == "" ||
			f.TSMix != "official" || f.SurrogateAlpha != 2 || f.TargetCoordinate != "log-hz" || f.FreqGuardSafety != 0.98 || f.DropoutMode != "step" {
			t.Errorf("%s: full recipe %+v lacks a released field", e.ID, f)
		}
		if want := seedsUpTo(len(e.Seeds)); !slices.Equal(e.Seeds, want) || e.Seeds[0] != 0 {
			t.Errorf("%s: seeds %v, want from 0", e.ID, e.Seeds)
		}
		if !strings.Contains(e.FullNote, "Table") && !strings.Contains(e.FullNote, "released") {
			t.Errorf("%s: the note names no source: %q", e.ID, e.FullNote)
		}
	}
	shd, err := Lookup("shd-best/fsts-m1/w128")
	if err != nil {
		t.Fatal(err)
	}
	if f := shd.Full; f.M != 1 || f.Width != 128 || f.LR != 7.5e-3 || f.Dropout != 0.5 || f.Readout != "sum" {
		t.Errorf("SHD best-test FiTS: %+v", f)
	}
	sm, err := Lookup("smnist/fsts-m1/w256")
	if err != nil {
		t.Fatal(err)
	}
	if f := sm.Full; f.TauM != 20 || f.TauA != 150 || f.Dt != 1 || f.FMinHz != 0.001 || f.FMaxHz != 0.1 || f.FInit != "linear" ||
		f.LR != 0.008 || f.Batch != 256 || f.Dropout != 0 || f.Readout != "mean" {
		t.Errorf("sMNIST: %+v", f)
	}
	if f := sm.Quick; f.TauM != 20 || f.Dt != 1 || f.FInit != "linear" || f.Readout != "mean" {
		t.Errorf("quick sMNIST does not keep the pixel-step constants: %+v", f)
	}
	ssc, _ := Lookup("ssc/fsts-m2/w512")
	if q := ssc.Quick; q.TauM != 0 || q.Dt != 0 || q.Readout != "sum" {
		t.Errorf("quick SSC stand-in keeps the full dataset's constants: %+v", q)
	}
}
