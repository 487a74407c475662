package fidelity

import (
	"fmt"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/train"
)

// Variant names (the run folders under <root>/fidelity).
const (
	VariantBaseline        = "baseline"
	VariantTSMixPaper      = "ts-mix-paper"
	VariantSurrogateBellec = "surrogate-bellec"
	VariantTargetOmega     = "target-omega"
	VariantGuardOffClip    = "guard-off-clip"
	VariantDropoutShared   = "dropout-shared"
	VariantReadoutMean     = "readout-mean"
	VariantLRStep          = "lr-step"
	VariantAdamEps         = "adam-eps-1e-7"
	VariantBiasZero        = "bias-zero"
	VariantFirstForms      = "first-forms"
)

// Variant is one training semantics to compare with the released defaults.
type Variant struct {
	// Name is the variant's folder name, e.g. "ts-mix-paper".
	Name string `json:"name"`
	// Flags are the options of `fits train` that turn the released defaults into this variant ("" for
	// the baseline).
	Flags string `json:"flags"`
	// Summary says in words what the variant changes.
	Summary string `json:"summary"`
	// Apply returns a configuration with the variant's semantics; its argument has the released
	// semantics (train.Config.WithReleasedSemantics), and only the fields the variant names change.
	Apply func(train.Config) train.Config `json:"-"`
}

// Variants returns the baseline (the released defaults) and every option flipped alone from them, then
// all of them at once (this toolkit's first semantics). The order is the table's.
func Variants() []Variant {
	return []Variant{
		{Name: VariantBaseline, Summary: "the released code's semantics (the defaults)",
			Apply: func(c train.Config) train.Config { return c }},
		{Name: VariantTSMixPaper, Flags: "--ts-mix=paper",
			Summary: "Eq. 10's outermost-first λ nesting and spikes at Ṽ ≥ V_th (Algorithm 1)",
			Apply:   func(c train.Config) train.Config { c.TSMix = string(neuron.TSMixPaper); return c }},
		{Name: VariantSurrogateBellec, Flags: "--surrogate=bellec",
			Summary: "surrogate 0.3·max(0, 1 − |Ṽ − V_th|) instead of α = 2",
			Apply:   func(c train.Config) train.Config { c.Surrogate = train.SurrogateBellec; return c }},
		{Name: VariantTargetOmega, Flags: "--target-coordinate=omega",
			Summary: "Ω* in rad/s as the trainable coordinate (Section 3.1.1) instead of ln f*",
			Apply:   func(c train.Config) train.Config { c.TargetCoordinate = string(neuron.TargetOmega); return c }},
		{Name: VariantGuardOffClip, Flags: "--freq-guard-safety=0 --forward-clip",
			Summary: "f* clamped in the forward pass at 0.99 of the Jury bound, no guard",
			Apply: func(c train.Config) train.Config {
				c.FreqGuardSafety, c.ForwardClip = 0, true
				return c
			}},
		{Name: VariantDropoutShared, Flags: "--dropout-mode=shared",
			Summary: "one dropout mask per example and neuron for every time step",
			Apply:   func(c train.Config) train.Config { c.DropoutMode = string(model.DropoutShared); return c }},
		{Name: VariantReadoutMean, Flags: "--readout=mean",
			Summary: "the readout averages over time instead of summing",
			Apply:   func(c train.Config) train.Config { c.Readout = string(model.ReadoutMean); return c }},
		{Name: VariantLRStep, Flags: "--lr-schedule=step",
			Summary: "the cosine learning rate evaluated at every step instead of once per epoch",
			Apply:   func(c train.Config) train.Config { c.LRSchedule = train.ScheduleStep; return c }},
		{Name: VariantAdamEps, Flags: "--adam-epsilon=1e-7",
			Summary: "Adam's ε = 1e-7 instead of 1e-8",
			Apply:   func(c train.Config) train.Config { c.AdamEpsilon = 1e-7; return c }},
		{Name: VariantBiasZero, Flags: "--bias-init=zero",
			Summary: "dense biases start at zero instead of U(±1/√fan_in)",
			Apply:   func(c train.Config) train.Config { c.BiasInit = train.BiasZero; return c }},
		{Name: VariantFirstForms, Flags: "--ts-mix=paper --surrogate=bellec --target-coordinate=omega --freq-guard-safety=0 --forward-clip --dropout-mode=shared --readout=mean --lr-schedule=step --adam-epsilon=1e-7 --bias-init=zero",
			Summary: "all of the above at once: this toolkit's first semantics (train.Config.Legacy, mean readout)",
			Apply: func(c train.Config) train.Config {
				c = c.Legacy()
				c.Readout = string(model.ReadoutMean)
				return c
			}},
	}
}

// LookupVariant returns the variant named name.
func LookupVariant(name string) (Variant, error) {
	for _, v := range Variants() {
		if v.Name == name {
			return v, nil
		}
	}
	return Variant{}, fmt.Errorf("unknown variant %q", name)
}

// StandInExperiment is the experiment whose quick stand-in the variants train: the SSC FiTS cell of Table
// 1 and Table 3 (M = 2, so that the λ nesting matters).
const StandInExperiment = "ssc/fsts-m2/w512"

// StandInDropout is the stand-in's dropout probability (the quick recipe has none; with none the dropout
// mode could not matter).
const StandInDropout = 0.3

// Seeds are the stand-in's seeds (the quick seeds of the SSC grid).
var Seeds = []int64{1, 2, 3}

// StandIn returns the stand-in's configuration for a seed: the quick recipe of StandInExperiment (the
// synthetic task with modulation depth 0.5, FiTS M = 2, width 64, 20 epochs, batch 64, learning rate
// 5e-3, official-val, the chunked engine, the released semantics) with dropout StandInDropout.
func StandIn(seed int64) (train.Config, error) {
	e, err := experiment.Lookup(StandInExperiment)
	if err != nil {
		return train.Config{}, err
	}
	cfg, err := e.Config(experiment.Quick, seed)
	if err != nil {
		return train.Config{}, err
	}
	cfg.Dropout = StandInDropout
	return cfg, nil
}
