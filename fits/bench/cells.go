package bench

import (
	"errors"
	"fmt"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/xla"
)

// Suites of `fits bench`: the paper's kernel-runtime table (KernelSpec), the Open Neuromorphic framework
// benchmark's shape (OpenNeuromorphicSpec), and Table A.4's training times (RunTraining).
const (
	SuiteKernel   = "kernel"
	SuiteON       = "open-neuromorphic"
	SuiteTraining = "training"
)

// InputError reports a cell that cannot be measured as asked: an unknown neuron kind, an invalid network,
// an engine the backend cannot run, or a cell's process that exited with status 2. The input is at fault,
// not the machine.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }

func (e *InputError) Unwrap() error { return e.Err }

// Cell is one measured cell of the kernel or open-neuromorphic suite: the network and the variant. Its JSON
// form is what an isolated cell's process is given (--internal-cell) and the leading fields of a Row.
type Cell struct {
	Suite   string `json:"suite"` // SuiteKernel or SuiteON
	Model   string `json:"model"` // neuron kind (neuron.ParseKind): lif, fs, fsts, ...
	Width   int    `json:"width"` // hidden width W (kernel) or neurons n (open-neuromorphic)
	M       int    `json:"m"`
	Variant string `json:"variant"`
	Chunk   int    `json:"chunk_request,omitempty"` // MeasureOptions.Chunk of Chunked and Scan
	Batch   int    `json:"batch"`
	Time    int    `json:"time"`
	Inputs  int    `json:"inputs"`
	Classes int    `json:"classes"`
	// Dropout is the per-step dropout probability of the hidden layers' spikes (masks drawn by the engine,
	// regenerated in the fused kernel), Readout the classifier's readout over time.
	Dropout float64 `json:"dropout"`
	Readout string  `json:"readout,omitempty"`
	Iters   int     `json:"iters"`
	Warmup  int     `json:"warmup"`
}

// Grid is the cells of one run of the kernel or open-neuromorphic suite: every size, model and variant.
type Grid struct {
	// Suite is SuiteKernel or SuiteON.
	Suite string
	// Sizes are the hidden widths W (SuiteKernel) or the neurons n, which are the inputs too (SuiteON).
	Sizes []int
	// Orders are the TS orders M of the FiTS models (0: kind fs, else fsts); with LIF (SuiteON only) the
	// plain LIF neuron comes first.
	Orders []int
	LIF    bool
	// Variants are the engines timed on each network, in this order.
	Variants []Variant
	// Chunk is the steps per call of Chunked and Scan (0: step.DefaultChunk).
	Chunk int
	// Batch, Time and Inputs replace the suite's shape when positive, Classes when >= 0 (0: the spike-sum
	// loss) and Dropout when >= 0.
	Batch, Time, Inputs, Classes int
	Dropout                      float64
	// Iters timed and Warmup untimed iterations per cell (MeasureOptions).
	Iters, Warmup int
}

// Cells expands the grid: for each size, each model, each variant.
func (g Grid) Cells() []Cell {
	type model struct {
		kind neuron.Kind
		m    int
	}
	var models []model
	base := KernelSpec(1, 0)
	if g.Suite == SuiteON {
		base = OpenNeuromorphicSpec(1, neuron.LIF, 0)
		if g.LIF {
			models = append(models, model{neuron.LIF, 0})
		}
	}
	for _, m := range g.Orders {
		models = append(models, model{neuron.FiTS(m), m})
	}
	var cells []Cell
	for _, w := range g.Sizes {
		for _, md := range models {
			for _, v := range g.Variants {
				c := Cell{
					Suite: g.Suite, Model: md.kind.String(), Width: w, M: md.m, Variant: string(v),
					Batch: base.Batch, Time: base.Time, Inputs: base.Inputs, Classes: base.Classes,
					Dropout: base.Dropout, Readout: string(base.Net().Readout), Iters: g.Iters, Warmup: g.Warmup,
				}
				if g.Suite == SuiteON {
					c.Inputs = w
				}
				if v == Chunked || v == Scan {
					c.Chunk = g.Chunk
				}
				if g.Batch > 0 {
					c.Batch = g.Batch
				}
				if g.Time > 0 {
					c.Time = g.Time
				}
				if g.Inputs > 0 {
					c.Inputs = g.Inputs
				}
				if g.Classes >= 0 {
					c.Classes = g.Classes
				}
				if g.Dropout >= 0 {
					c.Dropout = g.Dropout
				}
				cells = append(cells, c)
			}
		}
	}
	return cells
}

// WithKinds returns cells with their models replaced by kinds: each kind with a TS module once per order
// M >= 1 of orders, every other kind with M = 0; per cell in the order of kinds, repeated cells dropped.
// None when no kind remains.
func WithKinds(cells []Cell, kinds []neuron.Kind, orders []int) []Cell {
	var models []Cell // only Model and M
	for _, k := range kinds {
		if !k.HasTS() {
			models = append(models, Cell{Model: k.String()})
			continue
		}
		for _, m := range orders {
			if m >= 1 {
				models = append(models, Cell{Model: k.String(), M: m})
			}
		}
	}
	var out []Cell
	seen := map[Cell]bool{}
	for _, c := range cells {
		for _, md := range models {
			c.Model, c.M = md.Model, md.M
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// Spec returns the cell's network: the suite's with the neuron of kind Model and order M, and the cell's
// shape, dropout and readout. An unknown kind or an invalid network is an *InputError.
func (c Cell) Spec() (Spec, error) {
	kind, err := neuron.ParseKind(c.Model)
	if err != nil {
		return Spec{}, &InputError{fmt.Errorf("model: %v", err)}
	}
	var s Spec
	if c.Suite == SuiteON {
		s = OpenNeuromorphicSpec(c.Width, kind, c.M)
	} else {
		s = KernelSpec(c.Width, c.M)
		s.Neuron = neuron.DefaultConfig(kind, c.M)
	}
	s.Batch, s.Time, s.Inputs, s.Classes, s.Dropout = c.Batch, c.Time, c.Inputs, c.Classes, c.Dropout
	if c.Readout != "" {
		s.Readout = model.Readout(c.Readout)
	}
	if err := s.Validate(); err != nil {
		return s, &InputError{err}
	}
	return s, nil
}

// sameNetwork reports whether two cells time the same network (they may differ in the variant).
func sameNetwork(a, b Cell) bool {
	a.Variant, b.Variant, a.Chunk, b.Chunk = "", "", 0, 0
	return a == b
}

// kernelLayers returns the distinct hidden layers (as the host kernel runs them) of the fused cells.
func kernelLayers(cells []Cell) []KernelLayer {
	var out []KernelLayer
	seen := map[KernelLayer]bool{}
	for _, c := range cells {
		if c.Variant != string(Fused) {
			continue
		}
		s, err := c.Spec()
		if err != nil {
			continue // the cell's row carries the error
		}
		if l := KernelLayerOf(s); !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// measureCell measures one cell in this process on the backend already open (xla.Backend), with progress
// before each phase. An engine the backend cannot run is an *InputError naming the --engine flag.
func measureCell(c Cell, progress func(string)) (Measurement, error) {
	s, err := c.Spec()
	if err != nil {
		return Measurement{}, err
	}
	b, err := xla.Backend()
	if err != nil {
		return Measurement{}, err
	}
	m, err := Measure(b, s, Variant(c.Variant), MeasureOptions{
		Warmup: c.Warmup, Iters: c.Iters, Chunk: c.Chunk, Progress: progress,
	})
	if unsupported := (*step.UnsupportedError)(nil); errors.As(err, &unsupported) {
		return m, &InputError{fmt.Errorf("--engine=%s: %v", c.Variant, err)}
	}
	return m, err
}
