package paper

// The shared training recipe of Section 4.2 ("Training details", "Model configuration") and Appendix B.1.
const (
	// Epochs is the number of training epochs of every FiTS and LIF-based model.
	Epochs = 100
	// Batch is the batch size.
	Batch = 128
	// Seeds is the number of random seeds each reported mean ± std is taken over.
	Seeds = 5
	// OrganisationSeeds is the number of seeds of the learned-organisation analysis (Figure 2, Figure A.2).
	OrganisationSeeds = 20
	// EtaGammaRatio is the adaptation current scale ratio η/γ of every dataset.
	EtaGammaRatio = 1.0
	// BetaHatInit and LambdaHatInit initialize the TS coordinates: β = tanh(β̂) = 0, λ = σ(λ̂) ≈ 0.047.
	BetaHatInit   = 0.0
	LambdaHatInit = -3.0
)

// DVS Gesture 128 (Appendix C.4): T = 50 bins of Δt = 20 ms, two polarities resized to 64×64, target
// frequencies restricted to [0.5, 5] Hz.
const (
	DVSBins    = 50
	DVSDt      = 0.02 // s
	DVSSize    = 64
	DVSFMinHz  = 0.5
	DVSFMaxHz  = 5.0
	DVSClasses = 11
)

// NeuronConstants is one column of Table A.1 (dataset-specific neuron constants).
type NeuronConstants struct {
	Dataset string  `json:"dataset"` // "SHD", "SSC" or "GSC"
	TauM    float64 `json:"tau_m"`   // membrane time constant τm, s
	TauA    float64 `json:"tau_a"`   // adaptation time constant τa, s
	Dt      float64 `json:"dt"`      // time bin Δt, s
	FMinHz  float64 `json:"f_min_hz"`
	FMaxHz  float64 `json:"f_max_hz"` // the target-frequency range f* the log-scale initialization covers
}

// NeuronConstantsTable returns Table A.1: SHD, SSC and GSC in the paper's column order.
func NeuronConstantsTable() []NeuronConstants {
	return []NeuronConstants{
		{"SHD", 0.04, 0.20, 0.004, 1, 50},
		{"SSC", 0.04, 0.20, 0.004, 1, 50},
		{"GSC", 0.10, 0.50, 0.010, 1, 30},
	}
}

// NeuronConstantsFor returns the Table A.1 column of a dataset ("SHD", "SSC" or "GSC"; SHD* is SHD).
func NeuronConstantsFor(dataset string) (NeuronConstants, bool) {
	if dataset == "SHD*" {
		dataset = "SHD"
	}
	return find(NeuronConstantsTable(), func(c NeuronConstants) bool { return c.Dataset == dataset })
}

// LRDropout is one cell of Table A.2: the selected peak learning rate and dropout probability of a
// dataset, TS cascade order M (0: FS only) and hidden width W.
type LRDropout struct {
	Dataset string  `json:"dataset"` // "SHD", "SSC" or "GSC"
	Order   int     `json:"m"`
	Width   int     `json:"width"`
	LR      float64 `json:"lr"`
	Dropout float64 `json:"dropout"`
}

// Widths are the hidden widths of the paper's ablation grids (Tables 3, A.2, A.4–A.8).
func Widths() []int { return []int{64, 128, 256, 512} }

// LRDropoutTable returns the 36 cells of Table A.2 in the paper's order (dataset, M, W).
func LRDropoutTable() []LRDropout {
	rows := []struct {
		dataset string
		m       int
		cells   [4][2]float64 // W = 64, 128, 256, 512: lr, p
	}{
		{"SHD", 0, [4][2]float64{{3e-3, 0.5}, {6.5e-3, 0.4}, {2e-3, 0.3}, {1.5e-3, 0.4}}},
		{"SHD", 1, [4][2]float64{{9e-3, 0.2}, {7.5e-3, 0.5}, {7.5e-4, 0.2}, {2e-3, 0.3}}},
		{"SHD", 2, [4][2]float64{{5.5e-3, 0.6}, {6.5e-3, 0.6}, {4.5e-3, 0.3}, {2e-2, 0.2}}},
		{"SSC", 0, [4][2]float64{{2e-3, 0.3}, {1.5e-3, 0.3}, {6e-4, 0.45}, {6e-4, 0.55}}},
		{"SSC", 1, [4][2]float64{{1.25e-3, 0.2}, {1e-3, 0.35}, {5.5e-4, 0.5}, {5.5e-4, 0.6}}},
		{"SSC", 2, [4][2]float64{{3e-3, 0.3}, {1.5e-3, 0.45}, {8e-4, 0.55}, {4.5e-4, 0.55}}},
		{"GSC", 0, [4][2]float64{{4e-3, 0.15}, {2.5e-3, 0.20}, {2.5e-3, 0.3}, {9e-4, 0.45}}},
		{"GSC", 1, [4][2]float64{{3.5e-3, 0.2}, {3e-3, 0.25}, {3e-3, 0.4}, {3e-3, 0.65}}},
		{"GSC", 2, [4][2]float64{{4e-3, 0.2}, {3.5e-3, 0.3}, {2e-3, 0.55}, {1e-3, 0.45}}},
	}
	var out []LRDropout
	for _, r := range rows {
		for i, w := range Widths() {
			out = append(out, LRDropout{Dataset: r.dataset, Order: r.m, Width: w, LR: r.cells[i][0], Dropout: r.cells[i][1]})
		}
	}
	return out
}

// LRDropoutFor returns the Table A.2 cell of a dataset ("SHD", "SSC", "GSC"; SHD* is SHD), order M and
// width W, and whether the table has it (M ≤ 2, W ∈ Widths()).
func LRDropoutFor(dataset string, order, width int) (LRDropout, bool) {
	if dataset == "SHD*" {
		dataset = "SHD"
	}
	return find(LRDropoutTable(), func(c LRDropout) bool { return c.Dataset == dataset && c.Order == order && c.Width == width })
}
