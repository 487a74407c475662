package nb

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/paper"
)

// Notebook 11 (energy and time): the paper's Table 4 (theoretical inference energy, Section 5.2) from the
// runs' checkpoints and Table A.3 (runtime of one training iteration, Appendix B.2) from the `fits bench`
// files committed under docs/. Table A.4 (training time) is aggregated from result.json (Session.Result).

// energyCell is one experiment's energy: the experiment and the group analysis.Energy aggregated over its
// seeds.
type energyCell struct {
	experiment experiment.Experiment
	group      analysis.EnergyGroup
}

// Table4 is Table 4 from the runs of the experiments that feed it (analysis.Energy: AC and MAC counts per
// example with E_AC = 0.9 pJ and E_MAC = 4.6 pJ, and the hidden layers' firing rates of the selected
// checkpoint): per model, the paper's E_layer (spike-driven linear layers), E_neuron (neuron-internal
// updates) and E_total in µJ, each beside ours (mean ± std over seeds), with our firing rates and where they
// were measured; and figure 11_table4_energy (the three energies, paper and ours). An error wrapping
// ErrNoRuns when no group feeds Table 4.
func Table4(groups []ExperimentRuns, mode experiment.Mode) (*Output, error) {
	var cells []energyCell
	for _, g := range groups {
		if !g.Experiment.Feeds(paper.Table4) {
			continue
		}
		rep, err := analysis.Energy(g.Runs, analysis.EnergyOptions{})
		if err != nil {
			return nil, err
		}
		for _, eg := range rep.Groups {
			cells = append(cells, energyCell{g.Experiment, eg})
		}
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("Table 4: %w", ErrNoRuns)
	}
	return table4(cells, mode)
}

func table4(cells []energyCell, mode experiment.Mode) (*Output, error) {
	published := map[string]paper.Energy{}
	for _, e := range paper.EnergyTable() {
		published[RunLabel(e.Model, e.Order)] = e
	}
	t := Table{Caption: fmt.Sprintf("Table 4 · theoretical energy per example (µJ), E_AC = %g pJ, E_MAC = %g pJ, firing rates of the selected checkpoint (ours: %s mode, mean ± std over seeds)", analysis.EnergyACpJ, analysis.EnergyMACpJ, mode),
		Header: []string{"model", "seeds", "E_layer paper", "E_layer ours", "E_neuron paper", "E_neuron ours", "E_total paper", "E_total ours", "firing rates (selected epoch, %)", "rates from"}}
	ms := func(v analysis.MeanStdValue) string { return fmt.Sprintf("%.2f ± %.2f", v.Mean, v.Std) }
	var cats []string
	var pl, ol, pn, on, pt, ot []float64
	for _, c := range cells {
		g := c.group
		label := RunLabel(c.experiment.Full.Model, c.experiment.Full.M)
		p, ok := published[label]
		if !ok {
			return nil, fmt.Errorf("Table 4 has no row for %s (experiment %s)", label, c.experiment.ID)
		}
		if len(g.Runs) == 0 {
			return nil, fmt.Errorf("Table 4: experiment %s has no run", c.experiment.ID)
		}
		rates := make([]string, len(g.Runs[0].Rates))
		for i, v := range g.Runs[0].Rates {
			rates[i] = fmt.Sprintf("%.2f", 100*v)
		}
		t.Rows = append(t.Rows, []string{p.Row, fmt.Sprint(len(g.Runs)), fmt.Sprintf("%.1f", p.LayerUJ), ms(g.ELayer), fmt.Sprintf("%.1f", p.NeuronUJ), ms(g.ENeuron),
			fmt.Sprintf("%.1f", p.TotalUJ), ms(g.ETotal), strings.Join(rates, ", "), g.Runs[0].RatesSource})
		cats = append(cats, p.Row)
		pl, ol = append(pl, p.LayerUJ), append(ol, g.ELayer.Mean)
		pn, on = append(pn, p.NeuronUJ), append(on, g.ENeuron.Mean)
		pt, ot = append(pt, p.TotalUJ), append(ot, g.ETotal.Mean)
	}
	panel := func(title string, p, o []float64) CategoryPanel {
		return CategoryPanel{Title: "Table 4 · " + title, XLabel: "model", YLabel: "energy per example (µJ)", Categories: cats,
			Series: []CategorySeries{{Label: fmt.Sprintf("paper (SSC, W = %d)", paper.EnergyWidth), Values: p}, {Label: fmt.Sprintf("ours (%s mode)", mode), Values: o}}}
	}
	fig, err := CategoryFigure("11_table4_energy",
		fmt.Sprintf("Table 4 as a figure: theoretical energy per example, spike-driven linear layers, neuron-internal updates and total (ours: %s mode).", mode),
		[]CategoryPanel{panel("E_layer (synaptic)", pl, ol), panel("E_neuron (neuron-internal)", pn, on), panel("E_total", pt, ot)}, 3)
	return figureOutput(fig, err, t)
}

// DocsDir is the repository's docs/ folder, which holds the `fits bench` measurements of Table A.3
// (docs/performance-*.json).
func DocsDir() string { return filepath.Join(RepoRoot(), "docs") }

// kernelBenchFiles returns the `fits bench --json` files of docs (docs/performance-*.json) with one suite
// per file, and for each the committed file it came from: a file holding several suites ({"kernel": {...},
// ...}) has its kernel suite written to a file of its own under tmp, since analysis.KernelRuntimes reads
// one suite per file.
func kernelBenchFiles(docs, tmp string) (files []string, origin map[string]string, err error) {
	paths, err := filepath.Glob(filepath.Join(docs, "performance-*.json"))
	if err != nil {
		return nil, nil, err
	}
	origin = map[string]string{}
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, err
		}
		var suites map[string]json.RawMessage
		if json.Unmarshal(b, &suites) == nil && suites["kernel"] != nil {
			f := filepath.Join(tmp, fmt.Sprintf("kernel-%d.json", i))
			if err := os.WriteFile(f, suites["kernel"], 0o644); err != nil {
				return nil, nil, err
			}
			files, origin[f] = append(files, f), p
			continue
		}
		files, origin[p] = append(files, p), p
	}
	return files, origin, nil
}

// TableA3 is Table A.3 as measured by `fits bench --suite=kernel` in the files docs/performance-*.json of
// docs (DocsDir): one training iteration (forward and backward) of the two-hidden-layer network, median ms,
// per width W, order M, engine and file, beside the paper's PyTorch loop and Triton kernel (RTX A5000)
// where the shape is the paper's (B = 128, T = 250); and figure 11_tableA3_kernel_runtime (ms against W per
// M, log scale: the paper's two dashed, our stepwise, chunked and fused engines solid).
func TableA3(docs string) (*Output, error) {
	tmp, err := os.MkdirTemp("", "fits-table-a3-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	files, origin, err := kernelBenchFiles(docs, tmp)
	if err != nil {
		return nil, err
	}
	rep, err := analysis.KernelRuntimes(files)
	if err != nil {
		return nil, fmt.Errorf("Table A.3: %w", err)
	}
	for i := range rep.Rows {
		if rel, err := filepath.Rel(filepath.Dir(docs), origin[rep.Rows[i].File]); err == nil {
			rep.Rows[i].File = rel
		}
	}
	s := rep.Summary()
	t := Table{Caption: "Table A.3 · one training iteration (forward + backward), median ms per iteration: ours by engine and bench file, the paper's PyTorch loop and Triton kernel (RTX A5000) beside them",
		Header: s.Header, Rows: s.Rows}
	var panels []CurvePanel
	for _, m := range []int{0, 1, 2} {
		p := CurvePanel{Title: fmt.Sprintf("Table A.3 · M = %d", m), XLabel: "hidden width W", YLabel: "ms per iteration (log scale)", LogY: true, YMin: 2, YMax: 1e5}
		var w, py, tr []float64
		for _, k := range paper.KernelRuntimes() {
			if k.Order == m {
				w, py, tr = append(w, float64(k.Width)), append(py, k.PyTorchMs), append(tr, k.TritonMs)
			}
		}
		p.Curves = append(p.Curves, Curve{Label: "paper: PyTorch loop (A5000)", X: w, Y: py, Dashed: true}, Curve{Label: "paper: Triton (A5000)", X: w, Y: tr, Dashed: true})
		for _, engine := range []string{"stepwise", "chunked", "fused"} {
			var x, y []float64
			backend := ""
			for _, r := range rep.Rows {
				if r.M == m && r.Variant == engine && r.Error == "" && r.MedianMs > 0 && r.PaperPyTorchMs != nil {
					x, y, backend = append(x, float64(r.Width)), append(y, r.MedianMs), r.Backend
				}
			}
			if len(x) > 0 {
				p.Curves = append(p.Curves, Curve{Label: fmt.Sprintf("ours: %s (%s)", engine, backend), X: x, Y: y})
			}
		}
		panels = append(panels, p)
	}
	fig, err := CurveFigure("11_tableA3_kernel_runtime",
		"Table A.3 as a figure: one training iteration, median ms, by width and TS order: the paper's GPU numbers (dashed) and this toolkit's engines as measured by fits bench (solid).", panels, 3)
	return figureOutput(fig, err, t)
}
