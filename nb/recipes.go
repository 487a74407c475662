package nb

import (
	"fmt"
	"strings"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

// The recipes of notebook 07: the paper's Tables A.1 and A.2 beside what this toolkit trains with.

// NeuronConstantsTable is Table A.1 beside the code: per dataset, the paper's τm and τa (s), Δt (s) and
// f* range (Hz), each beside the value fits/train sets for an FS layer on a dataset of that name and Δt
// (train.NeuronConfig).
func NeuronConstantsTable() (Table, error) {
	t := Table{Caption: "Table A.1 · dataset-specific neuron constants: the paper's and those fits/train uses (FS, for a dataset of the paper's Δt)",
		Header: []string{"dataset", "τm (s) paper / ours", "τa (s) paper / ours", "Δt (s)", "f* range (Hz) paper / ours"}}
	for _, c := range paper.NeuronConstantsTable() {
		n, err := train.NeuronConfig(neuron.FS, 0, &data.Dataset{Name: strings.ToLower(c.Dataset), Dt: c.Dt})
		if err != nil {
			return Table{}, err
		}
		t.Rows = append(t.Rows, []string{c.Dataset, fmt.Sprintf("%g / %g", c.TauM, n.TauM), fmt.Sprintf("%g / %g", c.TauA, n.TauA), fmt.Sprint(c.Dt),
			fmt.Sprintf("[%g, %g] / [%g, %g]", c.FMinHz, c.FMaxHz, n.FMinHz, n.FMaxHz)})
	}
	return t, nil
}

// LRDropoutTable is Table A.2 beside the code: per dataset, M and W, the paper's selected learning rate and
// dropout probability, the experiment of fits/experiment that trains that cell in full mode, its learning
// rate and dropout, and whether the two agree ("NO" when they do not). The ablation rows without TS use
// the M = 0 cell.
func LRDropoutTable() (Table, error) {
	prefix := map[string]string{"SHD": "shd-val", "SSC": "ssc", "GSC": "gsc"}
	t := Table{Caption: "Table A.2 · selected learning rate lr and dropout p: the paper's and our full recipes (the quick stand-ins use lr = 5e-3 and no dropout)",
		Header: []string{"dataset", "M", "W", "paper lr, p", "experiment", "full recipe lr, p", "same"}}
	for _, c := range paper.LRDropoutTable() {
		model := "fs"
		if c.Order > 0 {
			model = fmt.Sprintf("fsts-m%d", c.Order)
		}
		p, ok := prefix[c.Dataset]
		if !ok {
			return Table{}, fmt.Errorf("Table A.2: no experiments for dataset %q", c.Dataset)
		}
		id := fmt.Sprintf("%s/%s/w%d", p, model, c.Width)
		e, err := experiment.Lookup(id)
		if err != nil {
			return Table{}, err
		}
		same := "yes"
		if e.Full.LR != c.LR || e.Full.Dropout != c.Dropout {
			same = "NO"
		}
		t.Rows = append(t.Rows, []string{c.Dataset, fmt.Sprint(c.Order), fmt.Sprint(c.Width), fmt.Sprintf("%g, %g", c.LR, c.Dropout), id,
			fmt.Sprintf("%g, %g", e.Full.LR, e.Full.Dropout), same})
	}
	return t, nil
}
