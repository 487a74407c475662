// Package paper holds the numbers the FiTS paper publishes and computes the toolkit's own value beside
// each, so tables of "paper vs ours" are built from one place (the CLI's demo, the notebooks, the README).
package paper

import (
	"cmp"
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/theory"
)

// Row is one published number beside ours.
type Row struct {
	Quantity string  `json:"quantity"`
	Where    string  `json:"where"` // section, equation or table of the paper
	Paper    float64 `json:"paper"`
	Ours     float64 `json:"ours"`
	Unit     string  `json:"unit"`
	// Digits is the number of decimals the paper prints.
	Digits int `json:"digits"`
	// Tol is the agreement Match accepts; zero means half a unit of the paper's last printed digit.
	Tol  float64 `json:"tolerance,omitempty"`
	Note string  `json:"note,omitempty"`
	// Indicative marks rows whose setups differ (e.g. the paper measured a trained model, we measure a
	// fixed grid): they are shown side by side but not expected to agree.
	Indicative bool `json:"indicative,omitempty"`
}

// Match reports whether ours agrees with the paper's printed value: within Tol, or by default within half
// a unit of the paper's last printed digit.
func (r Row) Match() bool {
	tol := cmp.Or(r.Tol, 0.5*math.Pow(10, -float64(r.Digits))+1e-12)
	return math.Abs(r.Ours-r.Paper) <= tol
}

// CTDTAlignment measures, over n target frequencies log-spaced on [fmin, fmax] Hz with constants c, the
// gap between the CT target f*_CT (Theorem 1) and the realized DT target found by a dense sweep of |H_d|,
// and the gap between Theorem 2's closed form and the same sweep: mean absolute and maximum errors in Hz.
func CTDTAlignment(c theory.Constants, fmin, fmax float64, n int) (ctMAE, ctMax, cfMAE, cfMax float64, err error) {
	fs, err := theory.LogSpacedHz(fmin, fmax, n)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	for _, f := range fs {
		kappa, err := c.KappaForTargetHz(f)
		if err != nil {
			return 0, 0, 0, 0, err
		}
		sweep, ok := c.DTSweepTargetHz(kappa)
		if !ok {
			return 0, 0, 0, 0, fmt.Errorf("no realized DT target for f* = %g Hz", f)
		}
		closed, ok := c.DTTargetHz(kappa)
		if !ok {
			return 0, 0, 0, 0, fmt.Errorf("no closed-form DT target for f* = %g Hz", f)
		}
		ctErr, cfErr := math.Abs(f-sweep), math.Abs(closed-sweep)
		ctMAE += ctErr / float64(n)
		cfMAE += cfErr / float64(n)
		ctMax = math.Max(ctMax, ctErr)
		cfMax = math.Max(cfMax, cfErr)
	}
	return ctMAE, ctMax, cfMAE, cfMax, nil
}

// TheoryRows compares every closed-form number the paper prints with the toolkit's fits/theory.
func TheoryRows() ([]Row, error) {
	jury := theory.SHD.Jury()
	omegaEx, okEx := theory.OmegaStar(4, 1, 2)
	if !okEx {
		return nil, fmt.Errorf("the paper's example μ=4, ρ=1, κ=2 has no nonzero target")
	}
	poleImag := 0.0
	if w, ok := (theory.CT{Mu: 4, Rho: 1, Kappa: 2}).PoleFrequency(); ok {
		poleImag = w
	}
	const nNeurons = 140 // one SHD hidden layer's worth of log-spaced targets
	ctMAE, ctMax, cfMAE, cfMax, err := CTDTAlignment(theory.SHD, 1, 50, nNeurons)
	if err != nil {
		return nil, err
	}
	ctdt := CTDTTable()
	grid := fmt.Sprintf("ours: %d log-spaced f* in [1, 50] Hz at SHD constants; paper: a trained SHD model", nNeurons)
	return []Row{
		{Quantity: "f* limit, explicit Euler (SHD constants)", Where: "App. A.2", Paper: 13.8, Ours: jury.FStarMaxExplicitHz, Unit: "Hz", Digits: 1},
		{Quantity: "f* limit, semi-implicit Euler (SHD constants)", Where: "App. A.2", Paper: 77.2, Ours: jury.FStarMaxSemiImplicitHz, Unit: "Hz", Digits: 1},
		{Quantity: "Ω* for μ=4, ρ=1, κ=2", Where: "App. A.6", Paper: 1.98, Ours: omegaEx, Unit: "rad/s", Digits: 2, Tol: 0.01,
			Note: "the paper writes ≈ 1.98; the exact value √(√24 − 1) = 1.9746 rounds to 1.97"},
		{Quantity: "(Ω*)² = √24 − 1 for μ=4, ρ=1, κ=2", Where: "App. A.6", Paper: math.Sqrt(24) - 1, Ours: omegaEx * omegaEx, Unit: "rad²/s²", Digits: 6},
		{Quantity: "Ω_pole for μ=4, ρ=1, κ=2 (0: real poles)", Where: "App. A.6", Paper: 0, Ours: poleImag, Unit: "rad/s", Digits: 2},
		{Quantity: "initial λ = σ(−3)", Where: "App. B.1", Paper: 0.047, Ours: theory.LambdaOf(-3), Unit: "", Digits: 3},
		{Quantity: "CT f* vs realized DT f*: MAE", Where: Table5, Paper: ctdt[0].MAEHz, Ours: ctMAE, Unit: "Hz", Digits: 4, Note: grid, Indicative: true},
		{Quantity: "CT f* vs realized DT f*: max error", Where: Table5, Paper: ctdt[0].MaxHz, Ours: ctMax, Unit: "Hz", Digits: 4, Note: grid, Indicative: true},
		{Quantity: "closed-form DT f* vs realized DT f*: MAE", Where: Table5, Paper: ctdt[1].MAEHz, Ours: cfMAE, Unit: "Hz", Digits: 4, Note: "ours: closed form vs refined sweep (the paper's sweep is coarser)", Indicative: true},
		{Quantity: "closed-form DT f* vs realized DT f*: max error", Where: Table5, Paper: ctdt[1].MaxHz, Ours: cfMax, Unit: "Hz", Digits: 4, Note: "ours: closed form vs refined sweep", Indicative: true},
	}, nil
}
