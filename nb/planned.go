package nb

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

// Figures and tables of the results notebooks read from the result.json of planned runs (Plan): learning
// curves (notebooks 06 and 12) and whether the DVS network learns (notebook 12).

// PlannedCurves reads the per-epoch history (result.json) of the finished runs of a plan, in the plan's
// order, labelled "<group>: <row> (seed N)" after the experiment's place in its table (the group left out
// where the table has none). With firstSeed, only the first finished seed of each experiment.
func PlannedCurves(runs []PlannedRun, firstSeed bool) ([]Curves, error) {
	var out []Curves
	seen := map[string]bool{}
	for _, r := range runs {
		if !r.Finished || (firstSeed && seen[r.Experiment.ID]) {
			continue
		}
		seen[r.Experiment.ID] = true
		res, err := train.ReadResult(r.Dir)
		if err != nil {
			return nil, err
		}
		out = append(out, Curves{Label: rowLabel(r.Experiment) + fmt.Sprintf(" (seed %d)", r.Seed), Epochs: res.Epochs})
	}
	return out, nil
}

// rowLabel names an experiment by its group and row in its home table ("SHD: FiTS (ours)").
func rowLabel(e experiment.Experiment) string {
	if e.Group == "" {
		return e.Row
	}
	return e.Group + ": " + e.Row
}

// LearningCurves is TrainingCurves (loss, and accuracy on the training examples, the validation split
// and the test split, per epoch) under another file name and caption; an error wrapping ErrNoRuns when
// there are no curves.
func LearningCurves(name, caption string, curves []Curves) (*Figure, error) {
	if len(curves) == 0 {
		return nil, fmt.Errorf("%s: %w", name, ErrNoRuns)
	}
	fig, err := TrainingCurves(curves, 0)
	if err != nil {
		return nil, err
	}
	fig.Name, fig.Caption = name, caption
	return fig, nil
}

// DVSCheck tells whether the convolutional network of Table A.10 (DVS Gesture) learns: for every finished
// run of the plan, the final-epoch test accuracy (the table's protocol; %) against chance (one over the
// number of classes) beside the paper's accuracy of the same row, and the mean firing rate of each spiking
// block after the last epoch (spikes per neuron per time bin, %, without dropout); and the learning curves
// of those runs (figure 12_dvs_learning_curves). An error wrapping ErrNoRuns when none has finished.
func DVSCheck(runs []PlannedRun, mode experiment.Mode) (*Output, error) {
	published := map[string]string{}
	for _, r := range paper.TableA10Rows() {
		published[experiment.BenchmarkID(r)] = r.Acc.String()
	}
	t := Table{Caption: fmt.Sprintf("DVS runs (%s mode): final-epoch test accuracy (the protocol of Table A.10) against chance and the paper's, and firing rates per spiking block", mode),
		Header: []string{"experiment", "seed", "classes", "final test acc. (%)", "paper, final epoch (%)", "chance (%)", "× chance", "firing rates after the last epoch (%)"}}
	var curves []Curves
	for _, r := range runs {
		if !r.Finished {
			continue
		}
		res, err := train.ReadResult(r.Dir)
		if err != nil {
			return nil, err
		}
		if res.Classes <= 0 {
			return nil, fmt.Errorf("%s: result.json gives no number of classes", r.Dir)
		}
		chance := 1 / float64(res.Classes)
		rates := make([]string, len(res.FinalFiringRates))
		for i, v := range res.FinalFiringRates {
			rates[i] = fmt.Sprintf("%.2f", 100*v)
		}
		t.Rows = append(t.Rows, []string{r.Experiment.ID, fmt.Sprint(r.Seed), fmt.Sprint(res.Classes), fmt.Sprintf("%.2f", 100*res.FinalTestAcc), cmp.Or(published[r.Experiment.ID], "—"),
			fmt.Sprintf("%.2f", 100*chance), fmt.Sprintf("%.1f", res.FinalTestAcc/chance), strings.Join(rates, ", ")})
		curves = append(curves, Curves{Label: fmt.Sprintf("%s (seed %d)", r.Experiment.Row, r.Seed), Epochs: res.Epochs})
	}
	if len(curves) == 0 {
		return nil, fmt.Errorf("Table A.10: %w", ErrNoRuns)
	}
	fig, err := LearningCurves("12_dvs_learning_curves",
		fmt.Sprintf("DVS Gesture (%s mode): loss (left) and accuracy per epoch (right; train solid, test dotted); the protocol reports the last epoch's test accuracy.", mode), curves)
	return figureOutput(fig, err, t)
}
