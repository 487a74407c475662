package analysis

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/train"
)

// Theoretical inference energy (the paper's Table 4, Section 5.2): operation counts of one example's
// forward pass (T time steps) weighted by the 45 nm CMOS costs of Horowitz (2014) that the paper uses,
// E_AC = 0.9 pJ per accumulate and E_MAC = 4.6 pJ per multiply-accumulate: operation-level estimates, not
// measured hardware energy. A linear layer (dense, or convolution with its mean pooling; the readout too)
// on spiking input is event-driven, r_in · n_in · fan-out · T ACs; on real-valued input it is a dense
// product, in MACs; biases are not counted. Neuron updates are counted by NeuronOps. docs/analysis.md
// ("Theoretical energy") gives the counting rules, their derivation and their check against Table 4.
//
// Firing rates are those of the selected checkpoint on the validation split (the protocol's selection
// split: validation, or test where the protocol has none): the rates train records for the selected
// epoch (train.Epoch.EvalFiringRates of Result.BestEpoch, measured without dropout on that split, the
// same as Result.FiringRates) when the run has them; otherwise the latest checkpoint is evaluated
// (train.EvaluateWith) and its rates used. The input's event rate is measured on the same split.

// Energy per operation at 45 nm (Horowitz 2014), in pJ.
const (
	EnergyACpJ  = 0.9
	EnergyMACpJ = 4.6
)

// Ops counts accumulates (AC) and multiply-accumulates (MAC).
type Ops struct {
	AC  float64 `json:"ac"`
	MAC float64 `json:"mac"`
}

// EnergyMicroJ returns the energy of the operations in µJ (E_AC = 0.9 pJ, E_MAC = 4.6 pJ).
func (o Ops) EnergyMicroJ() float64 { return (o.AC*EnergyACpJ + o.MAC*EnergyMACpJ) * 1e-6 }

// Scale returns the counts multiplied by s.
func (o Ops) Scale(s float64) Ops { return Ops{AC: o.AC * s, MAC: o.MAC * s} }

// Add returns o + p.
func (o Ops) Add(p Ops) Ops { return Ops{AC: o.AC + p.AC, MAC: o.MAC + p.MAC} }

// NeuronOps returns the operations of one neuron's update per time step for a kind and TS order M (see
// the counting rules above): LIF 2 MAC + 2 AC; adaptive LIF, FS frozen and FS 5 MAC + 4 AC; FS+TS
// (5 + 4M) MAC + (4 + 3M) AC.
//
// The count follows the kind's cell, not its name: 2 MAC + 2 AC for the membrane update, 3 MAC + 2 AC more
// when the cell carries the adaptation current (neuron.Kind.HasAdaptation), 4 MAC + 3 AC per TS stage when
// it has the TS module (neuron.Kind.HasTS); so a new kind is counted without a change here.
func NeuronOps(kind neuron.Kind, m int) Ops {
	o := Ops{MAC: 2, AC: 2}
	if kind.HasAdaptation() {
		o = Ops{MAC: 5, AC: 4}
	}
	if kind.HasTS() {
		o = o.Add(Ops{MAC: 4 * float64(m), AC: 3 * float64(m)})
	}
	return o
}

// EnergyOptions configure Energy.
type EnergyOptions struct {
	// Evaluate measures the firing rates by evaluating the latest checkpoint even where the run recorded
	// the selected epoch's rates.
	Evaluate bool
}

// EnergyLayer is the cost of one block of the network for one example.
type EnergyLayer struct {
	Name string    `json:"name"`
	Kind BlockKind `json:"kind"`
	// InputRate is the mean input value per unit per time step (spikes per neuron per bin for spiking
	// inputs); InputSpiking tells whether the input was counted as events (ACs) or as a dense product (MACs).
	InputRate    float64 `json:"input_rate"`
	InputSpiking bool    `json:"input_spiking"`
	// Synaptic are the linear map's operations (with the pooling of a convolutional block); Neuron the
	// spiking units' updates (zero for the readout). Units is the number of spiking units.
	Synaptic Ops `json:"synaptic"`
	Neuron   Ops `json:"neuron"`
	Units    int `json:"units"`
	// ELayerMicroJ and ENeuronMicroJ are their energies in µJ.
	ELayerMicroJ  float64 `json:"e_layer_uj"`
	ENeuronMicroJ float64 `json:"e_neuron_uj"`
}

// RunEnergy is the theoretical energy of one run's network per example.
type RunEnergy struct {
	Dir  string `json:"dir"`
	Seed int64  `json:"seed"`
	// RatesSource says where the firing rates come from: "recorded epoch N (split)" or "evaluated epoch
	// N (split)"; Rates are the hidden layers' mean spikes per neuron per bin.
	RatesSource string        `json:"rates_source"`
	Rates       []float64     `json:"rates"`
	T           int           `json:"time_steps"`
	Layers      []EnergyLayer `json:"layers"`
	// ELayerMicroJ, ENeuronMicroJ and ETotalMicroJ are the sums over the blocks, in µJ.
	ELayerMicroJ  float64 `json:"e_layer_uj"`
	ENeuronMicroJ float64 `json:"e_neuron_uj"`
	ETotalMicroJ  float64 `json:"e_total_uj"`
}

// EnergyGroup aggregates the runs of one group: mean ± std over seeds of the three energies (µJ), the
// columns of Table 4.
type EnergyGroup struct {
	Key     GroupKey     `json:"key"`
	Runs    []RunEnergy  `json:"runs"`
	ELayer  MeanStdValue `json:"e_layer_uj"`
	ENeuron MeanStdValue `json:"e_neuron_uj"`
	ETotal  MeanStdValue `json:"e_total_uj"`
}

// EnergyReport is what Energy returns.
type EnergyReport struct {
	EACpJ  float64       `json:"e_ac_pj"`
	EMACpJ float64       `json:"e_mac_pj"`
	Groups []EnergyGroup `json:"groups"`
}

// Energy returns the theoretical energy per example of every run (see the counting rules above) and its
// mean ± std over the seeds of each group.
func Energy(runs []*Run, opts EnergyOptions) (*EnergyReport, error) {
	keys, by := groupRuns(runs)
	rep := &EnergyReport{EACpJ: EnergyACpJ, EMACpJ: EnergyMACpJ}
	for _, k := range keys {
		g := EnergyGroup{Key: k}
		var el, en, et []float64
		for _, r := range by[k] {
			e, err := r.Energy(opts)
			if err != nil {
				return nil, fmt.Errorf("run %s: %w", r.Dir, err)
			}
			g.Runs = append(g.Runs, *e)
			el, en, et = append(el, e.ELayerMicroJ), append(en, e.ENeuronMicroJ), append(et, e.ETotalMicroJ)
		}
		g.ELayer, g.ENeuron, g.ETotal = meanStdOf(el), meanStdOf(en), meanStdOf(et)
		rep.Groups = append(rep.Groups, g)
	}
	return rep, nil
}

// Energy returns the run's theoretical energy per example (see the counting rules above).
func (r *Run) Energy(opts EnergyOptions) (*RunEnergy, error) {
	lay, err := r.Layout()
	if err != nil {
		return nil, err
	}
	inSet, split, err := r.rateSet()
	if err != nil {
		return nil, err
	}
	rates, source, err := r.selectedRates(opts.Evaluate, split)
	if err != nil {
		return nil, err
	}
	spiking := lay.Spiking()
	if len(rates) != len(spiking) {
		return nil, fmt.Errorf("%d firing rates for %d spiking layers", len(rates), len(spiking))
	}
	inRate, inSpikes := InputRate(inSet)
	return layoutEnergy(lay, r.Config.Kind(), r.Config.Order(), inRate, inSpikes, rates, r.Dir, r.Config.Seed, source), nil
}

// layoutEnergy applies the counting rules to a layout with the input's rate and the hidden layers'
// firing rates.
func layoutEnergy(lay *Layout, kind neuron.Kind, m int, inRate float64, inSpikes bool, rates []float64, dir string, seed int64, source string) *RunEnergy {
	e := &RunEnergy{Dir: dir, Seed: seed, RatesSource: source, Rates: rates, T: lay.T}
	T := float64(lay.T)
	rate, spikes := inRate, inSpikes
	hidden := 0
	for _, b := range lay.Blocks {
		l := EnergyLayer{Name: b.Name, Kind: b.Kind, InputRate: rate, InputSpiking: spikes}
		nIn, nOut := float64(size(b.In)), float64(size(b.Out))
		switch b.Kind {
		case Dense:
			if spikes {
				l.Synaptic = Ops{AC: rate * nIn * nOut * T}
			} else {
				l.Synaptic = Ops{MAC: nIn * nOut * T}
			}
		case Conv:
			h, w, cin, cout := float64(b.In[0]), float64(b.In[1]), float64(b.In[2]), float64(b.Out[2])
			k2 := float64(b.Kernel * b.Kernel)
			if spikes {
				l.Synaptic = Ops{AC: rate * h * w * cin * k2 * cout * T}
			} else {
				l.Synaptic = Ops{MAC: h * w * cout * k2 * cin * T}
			}
			l.Synaptic = l.Synaptic.Add(Ops{AC: h * w * cout * T}) // mean pooling
		}
		if b.Neuron != nil {
			l.Units = size(b.Out)
			l.Neuron = NeuronOps(kind, m).Scale(float64(l.Units) * T)
			rate, spikes = rates[hidden], true
			hidden++
		}
		l.ELayerMicroJ, l.ENeuronMicroJ = l.Synaptic.EnergyMicroJ(), l.Neuron.EnergyMicroJ()
		e.ELayerMicroJ += l.ELayerMicroJ
		e.ENeuronMicroJ += l.ENeuronMicroJ
		e.Layers = append(e.Layers, l)
	}
	e.ETotalMicroJ = e.ELayerMicroJ + e.ENeuronMicroJ
	return e
}

// InputRate returns the mean input value per feature per time step of a set and whether the input
// counts as spikes (every value a non-negative integer: event counts).
func InputRate(s *data.Set) (rate float64, spikes bool) {
	spikes = true
	sum := 0.0
	ex := make([]float32, s.T*s.F)
	for i := range s.N {
		s.ExampleInto(i, ex)
		for _, v := range ex {
			x := float64(v)
			sum += x
			if spikes && (x < 0 || x != math.Trunc(x)) {
				spikes = false
			}
		}
	}
	if n := s.N * s.T * s.F; n > 0 {
		return sum / float64(n), spikes
	}
	return 0, spikes
}

// rateSet returns the split the firing rates are measured on, the protocol's selection split: validation,
// or test where the protocol has no validation split (best-test, final-epoch).
func (r *Run) rateSet() (*data.Set, string, error) {
	ds, err := r.Dataset()
	if err != nil {
		return nil, "", err
	}
	_, val, test, err := train.ProtocolSplits(r.Config, ds)
	if err != nil {
		return nil, "", err
	}
	if val != nil {
		return val, "validation split", nil
	}
	return test, fmt.Sprintf("test split (%s has no validation split)", r.Config.Protocol), nil
}

// selectedRates returns the hidden layers' firing rates of the selected checkpoint on the selection split
// and where they come from.
func (r *Run) selectedRates(evaluate bool, split string) ([]float64, string, error) {
	if !evaluate {
		best := 0
		if r.Result != nil {
			best = r.Result.BestEpoch
		}
		if best >= 1 && best <= len(r.Epochs) && len(r.Epochs[best-1].EvalFiringRates) > 0 {
			return r.Epochs[best-1].EvalFiringRates, fmt.Sprintf("recorded at the selected epoch %d on the %s", best, split), nil
		}
	}
	ev, err := train.EvaluateWith(r.Dir, train.Options{Backend: r.opts.Backend, Dataset: r.opts.Dataset, DataDir: r.opts.DataDir}, nil)
	if err != nil {
		return nil, "", err
	}
	rates := ev.ValFiringRates
	if rates == nil {
		rates = ev.FiringRates
	}
	return rates, fmt.Sprintf("evaluated at the latest checkpoint, epoch %d, on the %s", ev.Epoch, split), nil
}

// Summary returns Table 4: one row per group, E_layer, E_neuron and E_total in µJ (mean ± std over seeds).
func (r *EnergyReport) Summary() Table {
	t := Table{Header: []string{"group", "seeds", "e_layer_uj", "e_layer_std", "e_neuron_uj", "e_neuron_std", "e_total_uj", "e_total_std"}}
	for _, g := range r.Groups {
		t.Rows = append(t.Rows, []string{g.Key.String(), itoa(len(g.Runs)), num(g.ELayer.Mean, 4), num(g.ELayer.Std, 4),
			num(g.ENeuron.Mean, 4), num(g.ENeuron.Std, 4), num(g.ETotal.Mean, 4), num(g.ETotal.Std, 4)})
	}
	return t
}

// Long returns one row per run and block: rates, operation counts and energies.
func (r *EnergyReport) Long() Table {
	t := Table{Header: []string{"dataset", "model", "m", "width", "seed", "dir", "block", "kind", "input_rate", "input_spiking",
		"synaptic_ac", "synaptic_mac", "units", "neuron_ac", "neuron_mac", "e_layer_uj", "e_neuron_uj"}}
	for _, g := range r.Groups {
		for _, e := range g.Runs {
			for _, l := range e.Layers {
				t.Rows = append(t.Rows, []string{g.Key.Dataset, g.Key.Model, itoa(g.Key.M), itoa(g.Key.Width), fmt.Sprint(e.Seed), e.Dir,
					l.Name, string(l.Kind), num(l.InputRate, 6), fmt.Sprint(l.InputSpiking), num(l.Synaptic.AC, 8), num(l.Synaptic.MAC, 8),
					itoa(l.Units), num(l.Neuron.AC, 8), num(l.Neuron.MAC, 8), num(l.ELayerMicroJ, 6), num(l.ENeuronMicroJ, 6)})
			}
		}
	}
	return t
}
