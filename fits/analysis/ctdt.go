package analysis

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/theory"
)

// CT–DT fidelity of a trained model's learned target frequencies (the paper's Figure 3 scatter and
// Table 5, Section 5.3): for every neuron, its learned CT target f*_CT (Theorem 1), its realized DT target
// f*_DT (the global maximizer of |H_d(e^{jω})| over (0, π), found numerically by theory.SweepPeak), the
// closed form f̂*_DT of Theorem 2 and, beyond the paper, the learned target of a DT-exact layer and the
// closed-loop peak of FS+TS neurons. Errors are absolute differences in Hz; neurons without a realized
// target are counted apart. docs/analysis.md ("CT–DT fidelity") gives each quantity and the sweep.

// Comparisons of CTDTRow.
const (
	CompareCT         = "ct_vs_realized"          // f*_CT vs f*_DT (Table 5, first row)
	CompareClosedForm = "closed_form_vs_realized" // f̂*_DT vs f*_DT (Table 5, second row)
	CompareDTExact    = "dt_exact_vs_realized"    // learned DT-exact target vs f*_DT (beyond the paper)
	CompareClosedLoop = "closed_loop_vs_realized" // closed-loop peak vs f*_DT (beyond the paper, FS+TS)
)

// CTDTPoint is one neuron of the scatter (Figure 3).
type CTDTPoint struct {
	Dir    string `json:"dir"`
	Seed   int64  `json:"seed"`
	Layer  int    `json:"layer"`
	Name   string `json:"name"`
	Neuron int    `json:"neuron"`
	// DTExact reports a DT-exact layer; LearnedHz is the layer's trained target (Layer.TargetHz).
	DTExact   bool    `json:"dt_exact"`
	LearnedHz float64 `json:"learned_hz"`
	// CTHz, RealizedHz, ClosedFormHz and ClosedLoopHz are f*_CT, f*_DT (sweep), f̂*_DT (Theorem 2) and the
	// closed-loop peak, in Hz; NaN (null in JSON) where absent.
	CTHz         float64 `json:"-"`
	RealizedHz   float64 `json:"-"`
	ClosedFormHz float64 `json:"-"`
	ClosedLoopHz float64 `json:"-"`
	// Values is [CTHz, RealizedHz, ClosedFormHz, ClosedLoopHz] for JSON (NaN as null).
	Values Floats `json:"ct_realized_closed_form_closed_loop_hz"`
}

// CTDTRow is one row of Table 5: the errors of one comparison over the neurons of a group.
type CTDTRow struct {
	Key        GroupKey `json:"key"`
	Comparison string   `json:"comparison"`
	// N is the number of neurons compared; NoTarget those without a realized target (left out).
	N        int     `json:"n"`
	NoTarget int     `json:"no_target"`
	MAEHz    float64 `json:"mae_hz"`
	MaxHz    float64 `json:"max_err_hz"`
}

// CTDTReport is what CTDT returns.
type CTDTReport struct {
	Points []CTDTPoint `json:"points"`
	Rows   []CTDTRow   `json:"rows"`
}

// CTDT returns the CT–DT fidelity of every neuron of the runs and, per group (pooled over its seeds),
// the rows of Table 5: CT vs realized and closed form vs realized for layers of the paper's
// parameterization, DT-exact vs realized and closed form vs realized for DT-exact layers, and closed
// loop vs realized for FS+TS layers. Runs without a target frequency are an error.
func CTDT(runs []*Run) (*CTDTReport, error) {
	keys, by := groupRuns(runs)
	rep := &CTDTReport{}
	for _, k := range keys {
		var members []CTDTLayers
		for _, r := range by[k] {
			layers, err := r.Layers()
			if err != nil {
				return nil, fmt.Errorf("run %s: %w", r.Dir, err)
			}
			members = append(members, CTDTLayers{Dir: r.Dir, Seed: r.Config.Seed, Layers: layers})
		}
		g, err := CTDTOf(k, members)
		if err != nil {
			return nil, err
		}
		rep.Points, rep.Rows = append(rep.Points, g.Points...), append(rep.Rows, g.Rows...)
	}
	return rep, nil
}

// CTDTLayers are the layers of one run (its folder and seed name the points).
type CTDTLayers struct {
	Dir    string
	Seed   int64
	Layers []Layer
}

// CTDTOf is CTDT for the layers of the runs of one group, given directly (e.g. with parameters set by
// hand): their points and the group's rows, labelled with key.
func CTDTOf(key GroupKey, runs []CTDTLayers) (*CTDTReport, error) {
	type acc struct {
		n, none    int
		sum, worst float64
	}
	accs := map[string]*acc{}
	var order []string
	add := func(cmp string, a, b float64, ok bool) {
		x, found := accs[cmp]
		if !found {
			x = &acc{}
			accs[cmp] = x
			order = append(order, cmp)
		}
		if !ok || math.IsNaN(a) || math.IsNaN(b) {
			x.none++
			return
		}
		e := math.Abs(a - b)
		x.n++
		x.sum += e
		x.worst = math.Max(x.worst, e)
	}
	rep := &CTDTReport{}
	for _, r := range runs {
		for _, l := range r.Layers {
			if l.TargetHz == nil {
				return nil, fmt.Errorf("run %s: layer %s has no target frequency", r.Dir, l.Name)
			}
			for i := range l.TargetHz {
				p, err := ctdtPoint(l, i)
				if err != nil {
					return nil, fmt.Errorf("run %s layer %s neuron %d: %w", r.Dir, l.Name, i, err)
				}
				p.Dir, p.Seed = r.Dir, r.Seed
				p.Values = Floats{p.CTHz, p.RealizedHz, p.ClosedFormHz, p.ClosedLoopHz}
				rep.Points = append(rep.Points, p)
				ok := !math.IsNaN(p.RealizedHz)
				if l.Neuron.DTExact {
					add(CompareDTExact, p.LearnedHz, p.RealizedHz, ok)
				} else {
					add(CompareCT, p.CTHz, p.RealizedHz, ok)
				}
				add(CompareClosedForm, p.ClosedFormHz, p.RealizedHz, ok)
				if l.Neuron.Kind.HasTS() {
					add(CompareClosedLoop, p.ClosedLoopHz, p.RealizedHz, ok)
				}
			}
		}
	}
	for _, cmp := range order {
		a := accs[cmp]
		row := CTDTRow{Key: key, Comparison: cmp, N: a.n, NoTarget: a.none}
		if a.n > 0 {
			row.MAEHz, row.MaxHz = a.sum/float64(a.n), a.worst
		}
		rep.Rows = append(rep.Rows, row)
	}
	return rep, nil
}

// ctdtPoint computes the targets of parameter set i of layer l.
func ctdtPoint(l Layer, i int) (CTDTPoint, error) {
	nan := math.NaN()
	p := CTDTPoint{Layer: l.Index, Name: l.Name, Neuron: i, DTExact: l.Neuron.DTExact, LearnedHz: l.TargetHz[i],
		CTHz: nan, RealizedHz: nan, ClosedFormHz: nan, ClosedLoopHz: nan}
	c := l.Neuron.Constants()
	if !l.Neuron.DTExact {
		p.CTHz = p.LearnedHz
	}
	if p.LearnedHz == 0 && l.Neuron.DTExact {
		return p, nil // no κ̄ realizes a zero DT target
	}
	fs, err := FSModule(l.Neuron, p.LearnedHz)
	if err != nil {
		return p, err
	}
	if l.Neuron.DTExact {
		if f, ok := c.TargetHz(c.KappaFromBar(fs.KappaBar)); ok {
			p.CTHz = f
		}
	}
	if w, ok := theory.SweepPeak(fs); ok {
		p.RealizedHz = c.HzFromRadPerSample(w)
	}
	if t := fs.Target(); t.OK {
		p.ClosedFormHz = c.HzFromRadPerSample(t.Omega)
	}
	if l.Neuron.Kind.HasTS() {
		if w, ok := theory.SweepPeak(theory.ClosedLoop{FS: fs, TS: learnedTS(l, i)}); ok {
			p.ClosedLoopHz = c.HzFromRadPerSample(w)
		}
	}
	return p, nil
}

// Summary returns Table 5: one row per group and comparison, MAE and maximum error in Hz.
func (r *CTDTReport) Summary() Table {
	t := Table{Header: []string{"group", "comparison", "n", "no_target", "mae_hz", "max_err_hz"}}
	for _, row := range r.Rows {
		t.Rows = append(t.Rows, []string{row.Key.String(), row.Comparison, itoa(row.N), itoa(row.NoTarget),
			num(row.MAEHz, 6), num(row.MaxHz, 6)})
	}
	return t
}

// Long returns the scatter of Figure 3: one row per neuron with its targets in Hz.
func (r *CTDTReport) Long() Table {
	t := Table{Header: []string{"dir", "seed", "layer", "neuron", "dt_exact", "learned_hz", "ct_hz", "realized_dt_hz",
		"closed_form_dt_hz", "closed_loop_peak_hz"}}
	for _, p := range r.Points {
		t.Rows = append(t.Rows, []string{p.Dir, fmt.Sprint(p.Seed), p.Name, itoa(p.Neuron), fmt.Sprint(p.DTExact),
			num(p.LearnedHz, 12), num(p.CTHz, 12), num(p.RealizedHz, 12), num(p.ClosedFormHz, 12), num(p.ClosedLoopHz, 12)})
	}
	return t
}
