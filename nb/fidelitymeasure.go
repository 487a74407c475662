package nb

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/internal/filesafe"
)

// Notebook 14's table: every finished run of the fidelity study (experiment.Fidelity) read back, its
// selected test accuracy and how far the target frequencies f* travelled during training, and per variant
// the paired differences from the baseline's run of the same seed. Accuracies are fractions in [0, 1]; the
// f* travel is in natural-log units (nepers): the mean over hidden neurons of |ln f*_final − ln f*_init|,
// so 0.1 means f* moved by about 10 % of itself.

// PairedStat summarizes values over seeds: their mean and sample standard deviation (n − 1 in the
// denominator; 0 for fewer than two values).
type PairedStat struct {
	N      int       `json:"n"`
	Mean   float64   `json:"mean"`
	Std    float64   `json:"std"`
	Values []float64 `json:"values"`
}

// NewPairedStat summarizes values.
func NewPairedStat(values []float64) PairedStat {
	s := PairedStat{N: len(values), Values: append([]float64{}, values...)}
	if s.N == 0 {
		return s
	}
	for _, v := range values {
		s.Mean += v
	}
	s.Mean /= float64(s.N)
	if s.N > 1 {
		ss := 0.0
		for _, v := range values {
			ss += (v - s.Mean) * (v - s.Mean)
		}
		s.Std = math.Sqrt(ss / float64(s.N-1))
	}
	return s
}

// Clear reports whether paired differences show an effect beyond the seed spread: at least two seeds,
// every difference nonzero and of the same sign, and the mean larger in size than the standard
// deviation. It is a reading aid, not a significance test (three seeds cannot give one).
func (s PairedStat) Clear() bool {
	if s.N < 2 || !(math.Abs(s.Mean) > s.Std) {
		return false
	}
	for _, v := range s.Values {
		if v == 0 || (v > 0) != (s.Mean > 0) {
			return false
		}
	}
	return true
}

// FidelityRun is what MeasureFidelity reads from one finished run.
type FidelityRun struct {
	Variant string `json:"variant"`
	Seed    int64  `json:"seed"`
	Dir     string `json:"dir"`
	// TestAcc is the test accuracy the run's protocol selects (train.Result.SelectedTestAcc), a fraction;
	// Epoch the epoch it selects.
	TestAcc float64 `json:"test_acc"`
	Epoch   int     `json:"epoch"`
	// Travel is how far f* moved during training, in natural-log units: the mean over the hidden neurons of
	// every layer of |ln f*_final − ln f*_init|, with f*_final read from the last checkpoint
	// (neuron.TargetFrequenciesHz, as the graph uses it) and f*_init from neuron.InitialTargetsHz (as the
	// graph used it). LayerTravel holds the same mean per hidden layer.
	Travel      float64   `json:"travel"`
	LayerTravel []float64 `json:"layer_travel"`
	// AtZero counts the neurons whose final f* is 0 (an Ω* clamped at zero), left out of Travel.
	AtZero int `json:"at_zero,omitempty"`
	// FreqProjected is the number of f* entries the frequency guard projected, summed over the epochs.
	FreqProjected int64 `json:"freq_projected"`
	// Seconds is the run's wall time.
	Seconds float64 `json:"seconds"`
}

// FidelityRow is one variant's line of the table.
type FidelityRow struct {
	Variant string `json:"variant"`
	Flags   string `json:"flags"`
	Summary string `json:"summary"`
	// TestAcc and Travel summarize the variant's own runs (every finished seed).
	TestAcc PairedStat `json:"test_acc"`
	Travel  PairedStat `json:"travel"`
	// DeltaAcc and DeltaTravel are the paired differences variant − baseline over the seeds both have
	// (PairedSeeds), in the units of TestAcc and Travel; empty for the baseline.
	PairedSeeds []int64    `json:"paired_seeds"`
	DeltaAcc    PairedStat `json:"delta_acc"`
	DeltaTravel PairedStat `json:"delta_travel"`
}

// FidelityResult is the study's table.
type FidelityResult struct {
	// Dataset, Model, M, Width, Epochs, Dropout and Protocol describe the baseline's runs.
	Dataset  string         `json:"dataset"`
	Model    string         `json:"model"`
	M        int            `json:"m"`
	Width    int            `json:"width"`
	Epochs   int            `json:"epochs"`
	Dropout  float64        `json:"dropout"`
	Protocol train.Protocol `json:"protocol"`
	// Selection says in words which test accuracy the protocol selects.
	Selection string `json:"selection"`
	// Seeds are the seeds of the baseline's finished runs.
	Seeds []int64       `json:"seeds"`
	Rows  []FidelityRow `json:"rows"`
	Runs  []FidelityRun `json:"runs"`
	// Notes name unfinished runs and runs without a baseline to pair with.
	Notes []string `json:"notes,omitempty"`
}

// Row returns the row of a variant, or nil.
func (t *FidelityResult) Row(variant string) *FidelityRow {
	for i := range t.Rows {
		if t.Rows[i].Variant == variant {
			return &t.Rows[i]
		}
	}
	return nil
}

// selectionText says which test accuracy a protocol selects.
func selectionText(p train.Protocol) string {
	switch p {
	case train.BestTest:
		return "the best test accuracy over the epochs (best-test)"
	case train.ValSplit:
		return "the test accuracy at the epoch of best accuracy on the 20 % held out of the training set (val-split)"
	case train.OfficialVal:
		return "the test accuracy at the epoch of best validation accuracy (official-val)"
	case train.FinalEpoch:
		return "the test accuracy after the last epoch (final-epoch)"
	}
	return string(p)
}

// MeasureFidelity reads the finished runs of the fidelity study among runs (a plan of the label
// experiment.Fidelity, which marks runs of another recipe unfinished) and returns the table: every finished
// run's selected test accuracy and f* travel, and per variant the paired differences from the baseline's run
// of the same seed. The unfinished runs are named in the notes; an error wrapping ErrNoRuns when no baseline
// run has finished.
func MeasureFidelity(runs []PlannedRun) (*FidelityResult, error) {
	t := &FidelityResult{}
	measures := map[string]map[int64]FidelityRun{}
	configs := map[int64]train.Config{}
	datasets := map[string]*data.Dataset{}
	for _, r := range runs {
		variant, ok := strings.CutPrefix(r.Experiment.ID, "fidelity/")
		if !ok {
			continue
		}
		if !r.Finished {
			t.Notes = append(t.Notes, fmt.Sprintf("%s seed %d has not finished (%s)", variant, r.Seed, r.Dir))
			continue
		}
		res, err := train.ReadResult(r.Dir)
		if err != nil {
			return nil, err
		}
		m, err := measureRun(r.Dir, res, datasets)
		if err != nil {
			return nil, err
		}
		m.Variant = variant
		if measures[variant] == nil {
			measures[variant] = map[int64]FidelityRun{}
		}
		measures[variant][r.Seed] = m
		if variant == experiment.VariantBaseline {
			configs[r.Seed] = res.Config
		}
		t.Runs = append(t.Runs, m)
	}
	baseline := measures[experiment.VariantBaseline]
	if len(baseline) == 0 {
		return nil, fmt.Errorf("the fidelity study's baseline: %w", ErrNoRuns)
	}
	t.Seeds = sortedSeeds(baseline)
	first := configs[t.Seeds[0]]
	t.Dataset, t.Model, t.M, t.Width, t.Epochs, t.Dropout = first.Dataset, first.Model, first.M, first.Width, first.Epochs, first.Dropout
	t.Protocol = first.Protocol
	t.Selection = selectionText(t.Protocol)
	for _, v := range experiment.Variants() {
		runs := measures[v.Name]
		if len(runs) == 0 {
			continue
		}
		row := FidelityRow{Variant: v.Name, Flags: v.Flags, Summary: v.Summary}
		var accs, travels, dAcc, dTravel []float64
		for _, s := range sortedSeeds(runs) {
			m := runs[s]
			accs, travels = append(accs, m.TestAcc), append(travels, m.Travel)
			b, ok := baseline[s]
			switch {
			case v.Name == experiment.VariantBaseline:
				continue
			case !ok:
				t.Notes = append(t.Notes, fmt.Sprintf("%s seed %d has no baseline run of its seed: left out of the differences", v.Name, s))
				continue
			}
			row.PairedSeeds = append(row.PairedSeeds, s)
			dAcc, dTravel = append(dAcc, m.TestAcc-b.TestAcc), append(dTravel, m.Travel-b.Travel)
		}
		row.TestAcc, row.Travel = NewPairedStat(accs), NewPairedStat(travels)
		row.DeltaAcc, row.DeltaTravel = NewPairedStat(dAcc), NewPairedStat(dTravel)
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// measureRun reads the selected accuracy from res and the f* travel from the run's last checkpoint.
func measureRun(dir string, res *train.Result, datasets map[string]*data.Dataset) (FidelityRun, error) {
	m := FidelityRun{Seed: res.Seed, Dir: dir, Epoch: res.BestEpoch, Seconds: res.WallSeconds}
	acc, err := res.SelectedTestAcc()
	if err != nil {
		return m, fmt.Errorf("%s: %w", dir, err)
	}
	m.TestAcc = acc
	for _, e := range res.Epochs {
		m.FreqProjected += e.FreqProjected
	}
	key := fmt.Sprintf("%s|%t|%d|%d", res.Config.Dataset, res.Config.Small, res.Config.TrainLimit, res.Config.TestLimit)
	ds := datasets[key]
	if ds == nil {
		if ds, err = train.LoadDataset(res.Config, train.Options{}); err != nil {
			return m, fmt.Errorf("%s: %w", dir, err)
		}
		datasets[key] = ds
	}
	run, err := analysis.Load(dir, analysis.Options{Dataset: ds})
	if err != nil {
		return m, err
	}
	if len(run.Epochs) != len(res.Epochs) {
		return m, fmt.Errorf("%s: the last checkpoint holds %d epochs, result.json %d", dir, len(run.Epochs), len(res.Epochs))
	}
	layers, err := run.Layers()
	if err != nil {
		return m, fmt.Errorf("%s: %w", dir, err)
	}
	sum, n := 0.0, 0
	for _, l := range layers {
		if l.TargetHz == nil {
			continue
		}
		lt, ln, zero, err := layerTravel(l)
		if err != nil {
			return m, fmt.Errorf("%s: layer %s: %w", dir, l.Name, err)
		}
		m.AtZero += zero
		m.LayerTravel = append(m.LayerTravel, lt)
		sum += lt * float64(ln)
		n += ln
	}
	if n == 0 {
		return m, fmt.Errorf("%s: no hidden neuron with a target frequency", dir)
	}
	m.Travel = sum / float64(n)
	return m, nil
}

// layerTravel returns the mean of |ln f*_final − ln f*_init| over a layer's neurons whose final f* is
// positive, their number, and the number of neurons at f* = 0.
func layerTravel(l analysis.Layer) (mean float64, n, atZero int, err error) {
	init, err := neuron.InitialTargetsHz(l.Neuron, l.Neurons)
	if err != nil {
		return 0, 0, 0, err
	}
	if len(init) != len(l.TargetHz) {
		return 0, 0, 0, fmt.Errorf("%d initial and %d final target frequencies", len(init), len(l.TargetHz))
	}
	fmax := math.Inf(1)
	if l.Neuron.ForwardClip {
		if fmax, err = l.Neuron.MaxTargetHz(); err != nil {
			return 0, 0, 0, err
		}
	}
	sum := 0.0
	for i, f := range l.TargetHz {
		f0 := math.Min(init[i], fmax)
		if !(f > 0) || !(f0 > 0) {
			atZero++
			continue
		}
		sum += math.Abs(math.Log(f) - math.Log(f0))
		n++
	}
	if n == 0 {
		return 0, 0, atZero, nil
	}
	return sum / float64(n), n, atZero, nil
}

func sortedSeeds[T any](m map[int64]T) []int64 { return slices.Sorted(maps.Keys(m)) }

// File names of FidelityResult.Write.
const (
	TableCSV  = "table.csv"
	RunsCSV   = "runs.csv"
	TableJSON = "table.json"
)

// CSV returns the table as CSV, one line per variant: accuracies and their differences in percentage
// points, f* travel and its differences in natural-log units, mean and standard deviation over seeds.
func (t *FidelityResult) CSV() ([]byte, error) {
	rows := [][]string{{"variant", "flags", "seeds", "test_acc_pct_mean", "test_acc_pct_std", "paired_seeds",
		"delta_acc_pp_mean", "delta_acc_pp_std", "delta_acc_clear", "travel_mean", "travel_std",
		"delta_travel_mean", "delta_travel_std", "delta_travel_clear"}}
	for _, r := range t.Rows {
		rows = append(rows, []string{r.Variant, r.Flags, strconv.Itoa(r.TestAcc.N), csvNum(100 * r.TestAcc.Mean), csvNum(100 * r.TestAcc.Std),
			strconv.Itoa(r.DeltaAcc.N), csvNum(100 * r.DeltaAcc.Mean), csvNum(100 * r.DeltaAcc.Std), strconv.FormatBool(r.DeltaAcc.Clear()),
			csvNum(r.Travel.Mean), csvNum(r.Travel.Std), csvNum(r.DeltaTravel.Mean), csvNum(r.DeltaTravel.Std), strconv.FormatBool(r.DeltaTravel.Clear())})
	}
	return csvBytes(rows)
}

// RunsCSV returns one line per measured run: the selected test accuracy (%), its epoch, the f* travel
// (natural-log units, and per layer), the guard's projections and the wall time (s).
func (t *FidelityResult) RunsCSV() ([]byte, error) {
	rows := [][]string{{"variant", "seed", "test_acc_pct", "epoch", "travel", "layer_travel", "at_zero", "freq_projected", "seconds", "dir"}}
	for _, m := range t.Runs {
		layers := make([]string, len(m.LayerTravel))
		for i, v := range m.LayerTravel {
			layers[i] = csvNum(v)
		}
		rows = append(rows, []string{m.Variant, strconv.FormatInt(m.Seed, 10), csvNum(100 * m.TestAcc), strconv.Itoa(m.Epoch),
			csvNum(m.Travel), strings.Join(layers, " "), strconv.Itoa(m.AtZero), strconv.FormatInt(m.FreqProjected, 10),
			csvNum(m.Seconds), m.Dir})
	}
	return csvBytes(rows)
}

// csvBytes writes rows as CSV.
func csvBytes(rows [][]string) ([]byte, error) {
	var buf bytes.Buffer
	if err := csv.NewWriter(&buf).WriteAll(rows); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func csvNum(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }

// Write writes the table into dir as TableCSV, RunsCSV and TableJSON (each atomically) and returns their
// paths.
func (t *FidelityResult) Write(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tab, err := t.CSV()
	if err != nil {
		return nil, err
	}
	runs, err := t.RunsCSV()
	if err != nil {
		return nil, err
	}
	js, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range []struct {
		name string
		b    []byte
	}{{TableCSV, tab}, {RunsCSV, runs}, {TableJSON, append(js, '\n')}} {
		p := filepath.Join(dir, f.name)
		if err := filesafe.WriteFile(p, f.b); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
