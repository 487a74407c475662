// Package golden embeds reference results of the released FiTS code's semantics, computed in float64 by the
// PyTorch peer (peers/fits_torch.py, official_config) and written by peers/official_golden.py, for the Go
// engines to test against. `make peers-check` regenerates the files and compares them with these. The
// semantics (both nestings, "official" and "paper") and what each of official/neurons.json (NeuronFile),
// guard.json (GuardCase) and steps.json (StepFile) holds: docs/peers.md, "The golden files".
package golden

import (
	"bytes"
	_ "embed" // the golden files
	"encoding/json"
	"fmt"
	"slices"
)

// The files, one variable each, so that a binary holds only the files it reads (the linker drops the
// others): `fits selftest` reads steps.json alone.
var (
	//go:embed official/neurons.json
	neuronsJSON []byte
	//go:embed official/guard.json
	guardJSON []byte
	//go:embed official/steps.json
	stepsJSON []byte
)

// Meta is what every file records about its making.
type Meta struct {
	Generator string `json:"generator"` // the script that wrote the file
	Torch     string `json:"torch"`     // torch.__version__
	Numpy     string `json:"numpy"`     // numpy.__version__
	Seed      int64  `json:"seed"`      // the generator's seed
	DType     string `json:"dtype"`     // the computation's precision ("float64")
}

// Tensor is a tensor as its shape and its row-major values.
type Tensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

// Size returns the number of elements of the shape.
func (t Tensor) Size() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Check reports whether the data fill the shape.
func (t Tensor) Check() error {
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("negative dimension in shape %v", t.Shape)
		}
	}
	if t.Size() != len(t.Data) {
		return fmt.Errorf("shape %v needs %d values, have %d", t.Shape, t.Size(), len(t.Data))
	}
	return nil
}

// Constants are a data set's time constants and step, in seconds.
type Constants struct {
	TauM float64 `json:"tau_m"`
	TauA float64 `json:"tau_a"`
	Dt   float64 `json:"dt"`
}

// NeuronFile is neurons.json.
type NeuronFile struct {
	Meta
	Steps     int                  `json:"steps"`      // T of every case
	MinMargin float64              `json:"min_margin"` // least Margin over the cases
	Constants map[string]Constants `json:"constants"`  // "shd" (SHD, SSC) and "gsc"
	Cases     []NeuronCase         `json:"cases"`
}

// NeuronCase is one neuron run T steps from a zero state.
type NeuronCase struct {
	Name   string    `json:"name"`
	M      int       `json:"m"`      // TS order
	TSMix  string    `json:"ts_mix"` // "official" or "paper"
	TauM   float64   `json:"tau_m"`
	TauA   float64   `json:"tau_a"`
	Dt     float64   `json:"dt"`
	Vth    float64   `json:"vth"`
	FHz    float64   `json:"f_hz"`   // target frequency f*, Hz
	Beta   []float64 `json:"beta"`   // β1..βM
	Lambda []float64 `json:"lambda"` // λ1..λM
	// Attempt is the index of the accepted draw of this case's random numbers.
	Attempt int `json:"attempt"`
	// Radius is the spectral radius of the update without spikes (state V, a and the stage states).
	Radius float64 `json:"radius"`
	// NudgeDrift is max_k |ΔṼ[k]| when f* is scaled by 1 + 1e-12: how far rounding-sized changes travel.
	NudgeDrift float64 `json:"nudge_drift"`
	// Margin is min_k |Ṽ[k] − Vth|.
	Margin     float64 `json:"margin"`
	SpikeCount int     `json:"spike_count"`
	// OtherMixSpikesDiffer counts the steps whose spike the other nesting changes (0 for M ≤ 1).
	OtherMixSpikesDiffer int       `json:"other_mix_spikes_differ"`
	Input                []float64 `json:"input"`   // I[k], [T]
	Spikes               []int     `json:"spikes"`  // S[k+1] ∈ {0, 1}, [T]
	VMixed               []float64 `json:"v_mixed"` // Ṽ[k+1] before the reset, [T]
	V                    []float64 `json:"v"`       // V[k+1] after the reset, [T]
	A                    []float64 `json:"a"`       // a[k+1], [T]
}

// GuardCase is guard.json.
type GuardCase struct {
	Meta
	Safety         float64     `json:"safety"` // fraction of the Jury bound on κΔt² (0.98)
	TauM           float64     `json:"tau_m"`
	TauA           float64     `json:"tau_a"`
	Dt             float64     `json:"dt"`
	JuryBound      float64     `json:"jury_bound"` // (1 + μ̄)(1 + ρ̄)
	FSafeHz        float64     `json:"f_safe_hz"`  // target of κΔt² = Safety·JuryBound (76.42 Hz here)
	FRawCap        float64     `json:"f_raw_cap"`  // ln FSafeHz
	Loss           string      `json:"loss"`       // the loss, in words
	Adam           AdamConfig  `json:"adam"`
	InitHz         []float64   `json:"init_hz"`         // initial f*, [n]
	InitFRaw       []float64   `json:"init_f_raw"`      // ln InitHz
	ProjectedTotal int         `json:"projected_total"` // projections over all steps
	Steps          []GuardStep `json:"steps"`
	// Caps lists f_safe for other constants too: "shd", "gsc" and "smnist" (Δt = 1: cycles per step).
	Caps []GuardCap `json:"caps"`
}

// AdamConfig is torch.optim.Adam's setting.
type AdamConfig struct {
	LR          float64 `json:"lr"`
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`
	WeightDecay float64 `json:"weight_decay"`
}

// GuardStep is one optimizer step of GuardCase; every slice has one entry per f_raw element.
type GuardStep struct {
	Step       int       `json:"step"`
	TargetHz   []float64 `json:"target_hz"`    // the loss's targets at this step
	Loss       float64   `json:"loss"`         // at FRawBefore
	FRawBefore []float64 `json:"f_raw_before"` // before the step
	Grad       []float64 `json:"grad"`         // dLoss/df_raw
	GradMasked []float64 `json:"grad_masked"`  // what Adam gets: Grad zeroed where Masked
	Masked     []bool    `json:"masked"`       // f_raw ≥ cap and grad < 0
	FRawAfter  []float64 `json:"f_raw_after"`  // after the Adam step and the projection
	ExpAvg     []float64 `json:"exp_avg"`      // Adam's first moment after the projection
	ExpAvgSq   []float64 `json:"exp_avg_sq"`   // Adam's second moment
	Projected  []bool    `json:"projected"`    // f_raw > cap after the Adam step: set to cap
	Count      int       `json:"count"`        // projections so far, this step's included
}

// GuardCap is the cap of one set of constants.
type GuardCap struct {
	Name      string  `json:"name"`
	TauM      float64 `json:"tau_m"`
	TauA      float64 `json:"tau_a"`
	Dt        float64 `json:"dt"`
	JuryBound float64 `json:"jury_bound"`
	FSafeHz   float64 `json:"f_safe_hz"`
}

// StepFile is steps.json.
type StepFile struct {
	Meta
	MinMargin      float64    `json:"min_margin"`      // least MinMargin over the cases
	MarginRequired float64    `json:"margin_required"` // the bound every case was drawn to keep (1e-3)
	Network        string     `json:"network"`         // the network, in words
	Cases          []StepCase `json:"cases"`
}

// StepCase is the loss and the gradients of one training step (ParamShapes names the parameters).
type StepCase struct {
	Name           string  `json:"name"`
	M              int     `json:"m"`
	TSMix          string  `json:"ts_mix"`  // "official"
	Readout        string  `json:"readout"` // "sum" or "mean" over time
	Target         string  `json:"target"`  // "log-hz" or "omega"
	TauM           float64 `json:"tau_m"`
	TauA           float64 `json:"tau_a"`
	Dt             float64 `json:"dt"`
	Vth            float64 `json:"vth"`
	SurrogateAlpha float64 `json:"surrogate_alpha"`
	Dropout        float64 `json:"dropout"` // p of the masks
	MaskSeed       int64   `json:"mask_seed"`
	MaskStep       int64   `json:"mask_step"`
	Batch          int     `json:"batch"`
	Time           int     `json:"time"`
	Inputs         int     `json:"inputs"`
	Hidden         int     `json:"hidden"`
	Classes        int     `json:"classes"`
	Attempt        int     `json:"attempt"`
	// MinMargin is the least |Ṽ − Vth| over both layers, every example, step and neuron.
	MinMargin  float64           `json:"min_margin"`
	SpikeRates []float64         `json:"spike_rates"` // mean spike of each layer, before the mask
	Input      Tensor            `json:"input"`       // [B, T, F], 0/1
	Labels     []int             `json:"labels"`      // [B]
	Params     map[string]Tensor `json:"params"`
	// Masks are fits/dropmask.Mask(MaskSeed, MaskStep, layer, Dropout, B, T, N) (all ones for Dropout 0).
	Masks  map[string]Tensor `json:"masks"`  // "layer0", "layer1": [B, T, N]
	Spikes map[string]Tensor `json:"spikes"` // "layer0", "layer1": [B, T, N]
	Logits Tensor            `json:"logits"` // [B, classes]
	Loss   float64           `json:"loss"`
	Grads  map[string]Tensor `json:"grads"`
}

// load decodes the golden file name, whose contents are data, and checks it with check.
func load[F any](name string, data []byte, check func(F) error) (F, error) {
	var f F
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(&f)
	if err == nil {
		err = check(f)
	}
	if err != nil {
		return f, fmt.Errorf("golden %s: %w", name, err)
	}
	return f, nil
}

// NeuronSet returns neurons.json.
func NeuronSet() (NeuronFile, error) {
	return load("neurons.json", neuronsJSON, func(f NeuronFile) error {
		for _, c := range f.Cases {
			if err := c.check(f.Steps); err != nil {
				return fmt.Errorf("case %s: %w", c.Name, err)
			}
		}
		return nil
	})
}

// Neurons returns the cases of neurons.json.
func Neurons() ([]NeuronCase, error) {
	f, err := NeuronSet()
	return f.Cases, err
}

func (c NeuronCase) check(steps int) error {
	if len(c.Beta) != c.M || len(c.Lambda) != c.M {
		return fmt.Errorf("M = %d with %d betas and %d lambdas", c.M, len(c.Beta), len(c.Lambda))
	}
	for _, s := range [][]float64{c.Input, c.VMixed, c.V, c.A} {
		if len(s) != steps {
			return fmt.Errorf("a series of %d steps, want %d", len(s), steps)
		}
	}
	if len(c.Spikes) != steps {
		return fmt.Errorf("%d spikes, want %d", len(c.Spikes), steps)
	}
	return nil
}

// Guard returns guard.json.
func Guard() (GuardCase, error) {
	return load("guard.json", guardJSON, func(g GuardCase) error {
		n := len(g.InitHz)
		for _, s := range g.Steps {
			for _, l := range []int{len(s.TargetHz), len(s.FRawBefore), len(s.Grad), len(s.GradMasked), len(s.Masked),
				len(s.FRawAfter), len(s.ExpAvg), len(s.ExpAvgSq), len(s.Projected)} {
				if l != n {
					return fmt.Errorf("step %d has a list of %d entries, want %d", s.Step, l, n)
				}
			}
		}
		return nil
	})
}

// StepSet returns steps.json.
func StepSet() (StepFile, error) {
	return load("steps.json", stepsJSON, func(f StepFile) error {
		for _, c := range f.Cases {
			if err := c.check(); err != nil {
				return fmt.Errorf("case %s: %w", c.Name, err)
			}
		}
		return nil
	})
}

// Steps returns the cases of steps.json.
func Steps() ([]StepCase, error) {
	f, err := StepSet()
	return f.Cases, err
}

// ParamShapes returns the name and shape of every parameter of the case's network (its gradient has the
// same): layer{0,1}/weight [in, out], layer{0,1}/bias [out], layer{0,1}/f_raw [N] (Target "log-hz") or
// layer{0,1}/omega_star [N] (Target "omega", rad/s), layer{0,1}/beta_hat and layer{0,1}/lambda_hat [M, N]
// (M ≥ 1; β = tanh β̂, λ = σ(λ̂)), readout/weight [N, classes], readout/bias [classes].
func (c StepCase) ParamShapes() map[string][]int {
	coord := "f_raw"
	if c.Target == "omega" {
		coord = "omega_star"
	}
	out := map[string][]int{}
	fan := c.Inputs
	for l := range 2 {
		p := fmt.Sprintf("layer%d/", l)
		out[p+"weight"] = []int{fan, c.Hidden}
		out[p+"bias"] = []int{c.Hidden}
		out[p+coord] = []int{c.Hidden}
		if c.M > 0 {
			out[p+"beta_hat"] = []int{c.M, c.Hidden}
			out[p+"lambda_hat"] = []int{c.M, c.Hidden}
		}
		fan = c.Hidden
	}
	out["readout/weight"] = []int{c.Hidden, c.Classes}
	out["readout/bias"] = []int{c.Classes}
	return out
}

func (c StepCase) check() error {
	want := c.ParamShapes()
	for what, set := range map[string]map[string]Tensor{"params": c.Params, "grads": c.Grads} {
		if len(set) != len(want) {
			return fmt.Errorf("%d %s, want %d", len(set), what, len(want))
		}
		for name, shape := range want {
			t, ok := set[name]
			if !ok {
				return fmt.Errorf("%s lacks %s", what, name)
			}
			if err := t.Check(); err != nil {
				return fmt.Errorf("%s %s: %w", what, name, err)
			}
			if !slices.Equal(t.Shape, shape) {
				return fmt.Errorf("%s %s has shape %v, want %v", what, name, t.Shape, shape)
			}
		}
	}
	layer := []int{c.Batch, c.Time, c.Hidden}
	for what, set := range map[string]map[string]Tensor{"masks": c.Masks, "spikes": c.Spikes} {
		for _, name := range []string{"layer0", "layer1"} {
			t, ok := set[name]
			if !ok || t.Check() != nil || !slices.Equal(t.Shape, layer) {
				return fmt.Errorf("%s %s missing or not of shape %v", what, name, layer)
			}
		}
	}
	if c.Input.Check() != nil || !slices.Equal(c.Input.Shape, []int{c.Batch, c.Time, c.Inputs}) {
		return fmt.Errorf("input of shape %v, want [%d %d %d]", c.Input.Shape, c.Batch, c.Time, c.Inputs)
	}
	if c.Logits.Check() != nil || !slices.Equal(c.Logits.Shape, []int{c.Batch, c.Classes}) {
		return fmt.Errorf("logits of shape %v, want [%d %d]", c.Logits.Shape, c.Batch, c.Classes)
	}
	if len(c.Labels) != c.Batch {
		return fmt.Errorf("%d labels, want %d", len(c.Labels), c.Batch)
	}
	return nil
}
