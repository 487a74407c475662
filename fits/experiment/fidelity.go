package experiment

import (
	"fmt"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/train"
)

// The study of notebook 14, beyond the paper: what the paper's text (and this toolkit's first forms, where
// the paper is silent) would have given instead of the released code's semantics, which produced the
// paper's tables and which fits/train follows by default. Differences lists every difference as data,
// with the variant that measures it; Variants are the options a training run can flip, each alone from
// the released defaults and then all at once. Each variant is a cell of the catalog, fidelity/<variant>,
// that feeds the label Fidelity: the SSC FiTS cell of Tables 1 and 3 (fidelityBase, M = 2 so that the λ
// nesting matters) with the variant applied, in full mode to the paper's recipe, in quick mode to the
// stand-in with dropout FidelityQuickDropout (the stand-in has none; without dropout the dropout mode
// could not matter). Notebook 14 pairs each variant's runs with the baseline's of the same seed.

// Fidelity is the label that the study's cells feed, as the cells of the paper's tables feed theirs
// (ParseLabel reads "fidelity").
const Fidelity = "Fidelity"

// fidelityBase is the cell whose recipes the variants change.
const fidelityBase = "ssc/fsts-m2/w512"

// FidelityQuickDropout is the dropout probability of the study's quick stand-in.
const FidelityQuickDropout = 0.3

// Variant names (the catalog cells fidelity/<variant>).
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
	// Name is the variant's name, e.g. "ts-mix-paper": the cell fidelity/<Name>.
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

// fidelityCells returns the study's cells: the variants of base's recipes, with its seeds.
func fidelityCells(base Experiment) []Experiment {
	quick := base.Quick
	quick.Dropout = FidelityQuickDropout
	var out []Experiment
	for _, v := range Variants() {
		flags := v.Flags
		if flags == "" {
			flags = "no option"
		}
		note := fmt.Sprintf("%s with %s: %s", base.ID, flags, v.Summary)
		out = append(out, Experiment{ID: "fidelity/" + v.Name, Tables: []string{Fidelity}, Home: Fidelity, Row: v.Name,
			Title: base.Title + ", " + v.Name, Full: v.Apply(base.Full), FullNote: note + "; " + base.FullNote,
			Quick: v.Apply(quick), QuickSeeds: base.QuickSeeds, Seeds: base.Seeds, QuickFixture: base.QuickFixture,
			QuickNote: fmt.Sprintf("%s; %s, dropout %g for the quick recipe's none (the dropout mode matters only with dropout)",
				base.QuickNote, note, FidelityQuickDropout)})
	}
	return out
}
