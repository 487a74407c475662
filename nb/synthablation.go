package nb

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/fits-snn/fits/data/synth"
	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

// Notebook 05 (training): the five neuron models of the paper's factorized ablation (Section 5.2; the
// rows of Table 3 up to M = 1) trained on the embedded synthetic task with one recipe, read back from
// their checkpoints, and what the notebook shows of them.

// AblationModel is one row of notebook 05's ablation: a neuron model (train.Config.Model) and its TS
// order M (0 without TS).
type AblationModel struct {
	Model string
	M     int
}

// Label names the model as the figures' legends do (RunLabel: "fsts M=1").
func (m AblationModel) Label() string { return RunLabel(m.Model, m.M) }

// AblationModels are the rows of notebook 05, in the order of the paper's Table 3: plain LIF, the
// adaptive LIF with zero-initialized adaptation, FS with frozen and with learnable target frequencies,
// and FS + TS with M = 1.
var AblationModels = []AblationModel{{"lif", 0}, {"adaptlif", 0}, {"fs-frozen", 0}, {"fs", 0}, {"fsts", 1}}

// SynthAblation is notebook 05's session: AblationModels trained on the synthetic task (synth.Name) with
// one recipe, in folders of their own under the repository's runs/ folder.
type SynthAblation struct {
	*Session
	// Quick is set by FITS_QUICK (CIMode, what the headless test run sets): the reduced task (24 bins, 64
	// training examples), width 16, batch 8 and 4 epochs, runs with a "-quick" suffix, and figures in
	// notebooks/.executed/figures-quick unless FITS_FIGURES_DIR says otherwise.
	Quick bool
}

// NewSynthAblation returns notebook 05's session on s, whose Figures it sets: $FITS_FIGURES_DIR when
// set, else notebooks/.executed/figures-quick in quick mode and the repository's figures/ otherwise.
func NewSynthAblation(s *Session) *SynthAblation {
	a := &SynthAblation{Session: s, Quick: CIMode()}
	s.Figures = FiguresDir()
	if a.Quick && os.Getenv("FITS_FIGURES_DIR") == "" {
		s.Figures = filepath.Join(RepoRoot(), "notebooks", ".executed", "figures-quick")
	}
	return a
}

// Config is the training recipe of model m: Adam with a cosine-annealed learning rate of 5e-3, batch 64,
// 20 epochs, width 64, seed 1, selected on the task's validation split (train.OfficialVal); in quick mode
// the Small task, width 16, batch 8, 4 epochs and a learning rate of 1e-2.
func (a *SynthAblation) Config(m AblationModel) train.Config {
	c := train.DefaultConfig()
	c.Dataset, c.Model, c.M = synth.Name, m.Model, m.M
	c.Width, c.Batch, c.Epochs, c.LR, c.Seed = 64, 64, 20, 5e-3, 1
	c.Protocol = train.OfficialVal
	if a.Quick {
		c.Small, c.Width, c.Batch, c.Epochs, c.LR = true, 16, 8, 4, 1e-2
	}
	return c
}

// RunDir is the folder of model m's run: runs/notebook05-<model>-m<M> in the repository, with a "-quick"
// suffix in quick mode.
func (a *SynthAblation) RunDir(m AblationModel) string {
	dir := filepath.Join(RepoRoot(), "runs", fmt.Sprintf("notebook05-%s-m%d", m.Model, m.M))
	if a.Quick {
		dir += "-quick"
	}
	return dir
}

// Epochs is the number of epochs of the recipe.
func (a *SynthAblation) Epochs() int { return a.Config(AblationModels[0]).Epochs }

// Train trains model m (train.TrainModel, the code of `fits train`) into RunDir(m) with the notebooks'
// backend, reporting to progress; an unfinished run is resumed and a finished one only reloaded.
func (a *SynthAblation) Train(m AblationModel, progress train.ProgressFunc) *train.Result {
	b, name := a.Backend()
	res, err := train.TrainModel(a.Config(m), train.Options{Dir: a.RunDir(m), Resume: true, Progress: progress, Backend: b, BackendName: name})
	a.Check(err)
	return res
}

// Runs reads every model's run back (checkpoint, history and result.json), in the order of
// AblationModels; a missing run ends the cell.
func (a *SynthAblation) Runs() []*analysis.Run {
	var dirs []string
	for _, m := range AblationModels {
		dirs = append(dirs, a.RunDir(m))
	}
	b, _ := a.Backend()
	runs, err := analysis.LoadRuns(dirs, analysis.Options{Backend: b})
	if err != nil {
		a.Check(fmt.Errorf("%w (run the training cell first)", err))
	}
	return runs
}

// TaskConfig is the synthetic task's configuration: synth.SmallConfig in quick mode, else
// synth.DefaultConfig.
func (a *SynthAblation) TaskConfig() synth.Config {
	if a.Quick {
		return synth.SmallConfig()
	}
	return synth.DefaultConfig()
}

// ClassCodes lists the class codes of the synthetic task cfg: one row per class, one column per channel
// group, each cell the group's rate-modulation frequency in Hz and its onset in ms ("12.5 / 8").
func ClassCodes(cfg synth.Config) (Table, error) {
	task, err := synth.NewTask(cfg)
	if err != nil {
		return Table{}, err
	}
	t := Table{Caption: fmt.Sprintf("Class codes of the synthetic task (%d classes, %d channels in %d groups, %d bins of %g ms): modulation frequency (Hz) / onset (ms)",
		cfg.Classes, cfg.Channels, cfg.Groups, cfg.T, 1000*cfg.Dt), Header: []string{"class"}}
	for g := range cfg.Groups {
		t.Header = append(t.Header, fmt.Sprintf("group %d", g))
	}
	for c, code := range task.Codes {
		row := []string{fmt.Sprint(c)}
		for g := range code.Freq {
			row = append(row, fmt.Sprintf("%.1f / %.0f", code.Freq[g], 1000*code.Onset[g]))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// AblationTable is notebook 05's ablation table, one row per run in the order given: the paper's row
// name (paper.AblationRows), M, the parameter count, the test accuracy at the epoch of best validation
// accuracy (%, the official-val protocol), the best validation accuracy (%) and its epoch, the hidden
// layers' mean firing rates (spikes per neuron per second, on the validation split), and beside them the
// paper's SSC accuracy of the same row at W = 64 (Table 3, mean ± std over 5 seeds), for the ordering
// only: the task is not SSC. Every run must have finished under the official-val protocol.
func AblationTable(runs []*analysis.Run) (Table, error) {
	if len(runs) == 0 {
		return Table{}, fmt.Errorf("ablation table: %w", ErrNoRuns)
	}
	names := map[string]string{}
	for _, r := range paper.AblationRows(2) {
		names[RunLabel(r.Model, r.Order)] = r.Label
	}
	published := map[string]string{}
	for _, c := range paper.AblationCells(paper.Table3) {
		if c.Width == 64 {
			published[RunLabel(c.Model, c.Order)] = c.Acc.String()
		}
	}
	first := runs[0].Config
	t := Table{
		Caption: fmt.Sprintf("Synthetic task, width %d, seed %d, protocol %s: test accuracy at the epoch of best validation accuracy, beside the paper's SSC row at W = 64 (Table 3; another task: compare the ordering only)",
			first.Width, first.Seed, train.OfficialVal),
		Header: []string{"model", "M", "# params", "test acc. (%)", "best val. acc. (%)", "best epoch", "firing rates (Hz)", "paper: SSC, W = 64 (%)"},
	}
	for _, r := range runs {
		res := r.Result
		if res == nil || res.TestAccAtBestVal == nil || res.BestValAcc == nil {
			return Table{}, fmt.Errorf("%s has no finished result under the %s protocol: run the training cell", r.Dir, train.OfficialVal)
		}
		ds, err := r.Dataset()
		if err != nil {
			return Table{}, err
		}
		rates := make([]string, len(res.FiringRates))
		for i, v := range res.FiringRates {
			rates[i] = fmt.Sprintf("%.1f", v/ds.Dt)
		}
		label := RunLabel(res.Model, res.M)
		name, pub := cmp.Or(names[label], label), cmp.Or(published[label], "—")
		t.Rows = append(t.Rows, []string{name, fmt.Sprint(res.M), fmt.Sprint(res.ParameterCount),
			fmt.Sprintf("%.2f", 100**res.TestAccAtBestVal), fmt.Sprintf("%.2f", 100**res.BestValAcc), fmt.Sprint(res.BestEpoch),
			strings.Join(rates, ", "), pub})
	}
	return t, nil
}

// SpikeRastersOf is figure 05_spike_raster (SpikeRasters) of runs on test example `example` (its index
// in the test split), each run without dropout (analysis.Run.Spikes) and labelled RunLabel.
func SpikeRastersOf(runs []*analysis.Run, example int) (*Figure, error) {
	var rasters []RasterRun
	for _, r := range runs {
		a, err := r.Spikes(analysis.SplitTest, []int{example})
		if err != nil {
			return nil, err
		}
		rasters = append(rasters, RasterRun{Label: RunLabel(r.Config.Model, r.Config.M), Activity: a})
	}
	return SpikeRasters(rasters, 0)
}

// TargetRunsOf returns the hidden layers (analysis.Run.Layers: f* at initialization and learned, β, λ)
// of the runs whose neurons have a target frequency, labelled RunLabel; the others are left out.
func TargetRunsOf(runs []*analysis.Run) ([]TargetRun, error) {
	var out []TargetRun
	for _, r := range runs {
		layers, err := r.Layers()
		if err != nil {
			return nil, err
		}
		if len(layers) == 0 || layers[0].TargetHz == nil {
			continue
		}
		out = append(out, TargetRun{Label: RunLabel(r.Config.Model, r.Config.M), Layers: layers})
	}
	return out, nil
}

// LearnedTargets is figure 05_target_histograms (TargetHistograms) and its table: per run and hidden
// layer, the f* range at initialization (Hz), the median f* at initialization and learned (Hz), the share
// of neurons whose f* moved by more than 5 % of its initial value, and the mean β and λ of the first TS
// stage ("–" without TS).
func LearnedTargets(runs []TargetRun) (*Output, error) {
	fig, err := TargetHistograms(runs, 0)
	if err != nil {
		return nil, err
	}
	t := Table{
		Caption: "Learned target frequencies f* (median over the layer; moved: share of neurons whose f* changed by more than 5 %) and TS coefficients (mean over the layer, first stage)",
		Header:  []string{"model", "layer", "f* range at init. (Hz)", "median f* init. → learned (Hz)", "moved (%)", "mean β", "mean λ"},
	}
	for _, r := range runs {
		for _, l := range r.Layers {
			if l.TargetHz == nil {
				continue
			}
			moved := 0
			for i, f := range l.TargetHz {
				if math.Abs(f-l.InitialHz[i]) > 0.05*l.InitialHz[i] {
					moved++
				}
			}
			beta, lambda := "–", "–"
			if len(l.Beta) > 0 {
				beta, lambda = fmt.Sprintf("%.3f", analysis.Summarize(l.Beta[0]).Mean), fmt.Sprintf("%.3f", analysis.Summarize(l.Lambda[0]).Mean)
			}
			t.Rows = append(t.Rows, []string{r.Label, fmt.Sprint(l.Index + 1),
				fmt.Sprintf("%.1f – %.1f", l.Neuron.FMinHz, l.Neuron.FMaxHz),
				fmt.Sprintf("%.1f → %.1f", analysis.Median(l.InitialHz), analysis.Median(l.TargetHz)),
				fmt.Sprintf("%.0f", 100*float64(moved)/float64(max(len(l.TargetHz), 1))), beta, lambda})
		}
	}
	return &Output{Figures: []*Figure{fig}, Tables: []Table{t}}, nil
}
