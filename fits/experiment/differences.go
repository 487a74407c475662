package experiment

// Difference is one difference between the paper's text (or this toolkit's first form, where the paper
// says nothing) and the released code.
type Difference struct {
	// Aspect names what differs, e.g. "λ nesting (M ≥ 2)".
	Aspect string `json:"aspect"`
	// Paper is where the paper states its form: an equation, algorithm, section, table or appendix
	// ("Eq. 10", "Algorithm 1", "Section 4.2", "Table A.2"); "silent" with the place that omits it when
	// the paper does not say.
	Paper string `json:"paper"`
	// PaperForm is the paper's text, or this toolkit's first form where the paper is silent.
	PaperForm string `json:"paper_form"`
	// Released is what the released code does, and ReleasedFile the file (of the repository's layout at
	// 1a81e78 unless the name carries "@6c016f1") where it does it.
	Released     string `json:"released"`
	ReleasedFile string `json:"released_file"`
	// Option is the command-line option (and value) of this toolkit that gives PaperForm; "" when there
	// is none.
	Option string `json:"option"`
	// Default is what this toolkit does by default, and Why the reason.
	Default string `json:"default"`
	Why     string `json:"why"`
	// Variant is the name of the Variant that measures this difference on the stand-in; "" when none
	// does (the stand-in cannot show it: another dataset, another model).
	Variant string `json:"variant,omitempty"`
}

// whyReleased is the reason for every released default: the released code's runs made the tables.
const whyReleased = "the released code's runs produced the paper's tables, so its form is what reproduces them"

// Differences returns every difference between the paper's text (or this toolkit's first form) and the
// released code, in the order of the neuron (Section 3, Algorithm 1), training (Section 4.2, Appendix
// B), data (Section 4.1, 4.2) and per-result recipes (Tables 1, 2, A.2, A.9).
func Differences() []Difference {
	return []Difference{
		{
			Aspect: "λ nesting (M ≥ 2)", Paper: "Eq. 10, Algorithm 1 (the TS loop)",
			PaperForm:    "outermost first: Ṽ_m = (1 − λ_m)·Ṽ_{m−1} + λ_m·V_m from Ṽ_0 = V_0; for M = 2, (1−λ1)(1−λ2)V0 + λ1(1−λ2)V1 + λ2V2",
			Released:     "innermost first: b = V_M, then b = (1 − λ_m)·V_{m−1} + λ_m·b for m = M … 1; for M = 2, (1−λ1)V0 + λ1(1−λ2)V1 + λ1λ2V2",
			ReleasedFile: "fits/reference.py, fits/kernels/fits_kernel.py",
			Option:       "--ts-mix=paper", Default: "official (innermost first)", Variant: VariantTSMixPaper,
			Why: whyReleased + "; the two agree for M ≤ 1 and differ from M = 2 on (22-1009 spike mismatches per 2000 steps in 20 random neurons)",
		},
		{
			Aspect: "spike comparison", Paper: "Algorithm 1: S[k+1] = Θ(Ṽ_M[k+1] − V_th)",
			PaperForm:    "a Heaviside step Θ, its value at 0 not given; this toolkit's first form read it as S = 1 when Ṽ ≥ V_th",
			Released:     "strict: S = 1 when Ṽ > V_th",
			ReleasedFile: "fits/reference.py, fits/kernels/fits_kernel.py",
			Option:       "--ts-mix=paper (carries the nesting and the comparison together)", Default: "strict >", Variant: VariantTSMixPaper,
			Why: whyReleased + "; a voltage exactly at threshold is rare in float32, so the comparison alone changes little",
		},
		{
			Aspect: "surrogate gradient", Paper: "Section 4.2 (\"a piecewise-linear triangular surrogate gradient\"; no height or width)",
			PaperForm:    "this toolkit's first form: 0.3·max(0, 1 − |Ṽ − V_th|) (height 0.3, half-width 1)",
			Released:     "α·max(0, 1 − α·|Ṽ − V_th|) with α = 2 (height 2, half-width 0.5; atan and sigmoid also offered)",
			ReleasedFile: "fits/neuron.py, fits/kernels/surrogate_kernels.py",
			Option:       "--surrogate=bellec", Default: "triangle, --surrogate-alpha=2", Variant: VariantSurrogateBellec,
			Why: whyReleased,
		},
		{
			Aspect: "trainable coordinate of f*", Paper: "Section 3.1.1 (after Theorem 1: \"FiTS instead uses Ω* as the trainable coordinate\"), Eq. 5",
			PaperForm:    "Ω* in rad/s, mapped to κ* by Eq. 5",
			Released:     "f_raw = ln(f*/Hz), f* = exp(f_raw), then Eq. 5 on 2π·f*; one learning rate for every parameter",
			ReleasedFile: "fits/neuron.py, fits/frequency.py",
			Option:       "--target-coordinate=omega", Default: "log-hz", Variant: VariantTargetOmega,
			Why: whyReleased + "; Adam moves a parameter by about the learning rate per step, so ln f* moves f* by a fraction of itself while Ω* moves it by a few hundredths of a hertz per step",
		},
		{
			Aspect: "initial spacing of f* (sMNIST)", Paper: "Section 4.2 (\"target frequencies are initialized on a log scale\"); Table A.9 gives no sMNIST recipe",
			PaperForm:    "log spacing over [f_min, f_max] for every dataset",
			Released:     "log spacing for SHD, SSC, GSC; linear spacing over [0.001, 0.1] cycles per step for sMNIST (freq_init: linear)",
			ReleasedFile: "configs/smnist/fits_o1_w256.yaml, fits/frequency.py",
			Option:       "--f-init=log (on an sMNIST recipe)", Default: "log; linear in the sMNIST recipe (smnist/fsts-m1/w256)",
			Why: whyReleased + "; the stand-in here is an audio-like task, where both spacings are log",
		},
		{
			Aspect: "stability of f*", Paper: "Appendix A.2 (the Jury bound of semi-implicit Euler, 77.2 Hz at SSC's constants; how it is enforced is not said)",
			PaperForm:    "this toolkit's first form: f* clamped in the forward pass at 0.99 of the bound (no gradient past the clamp), never projected",
			Released:     "FrequencyGuard at 0.98 of the bound on κΔt² (76.42 Hz at SHD/SSC, 30.57 Hz at GSC): outward gradients of capped neurons zeroed before each Adam step, f_raw clamped after it, negative first moments of clamped entries zeroed; the forward pass untouched",
			ReleasedFile: "fits/stability.py, experiments/common.py",
			Option:       "--freq-guard-safety=0 --forward-clip", Default: "guard at 0.98, no forward clip", Variant: VariantGuardOffClip,
			Why: whyReleased,
		},
		{
			Aspect: "dropout masks", Paper: "Table A.2 (dropout probabilities; the mask is not described)",
			PaperForm:    "this toolkit's first form: one mask per example and neuron, shared by every time step",
			Released:     "nn.Dropout on the spikes [batch, time, neurons]: an independent mask per example, time step and neuron, scaled by 1/(1 − p)",
			ReleasedFile: "fits/models.py",
			Option:       "--dropout-mode=shared", Default: "step", Variant: VariantDropoutShared,
			Why: whyReleased,
		},
		{
			Aspect: "readout", Paper: "Section 4.2, \"Model configuration\" (\"a linear classifier\"; what it reads is not said)",
			PaperForm:    "this toolkit's first form: the time average of the linear readout (mean over time)",
			Released:     "Linear(N, classes) of the sum over time of the last hidden layer's spikes (SHD, SSC, GSC); the mean over time for sMNIST",
			ReleasedFile: "fits/models.py, experiments/smnist/train.py",
			Option:       "--readout=mean", Default: "sum (mean for sMNIST)", Variant: VariantReadoutMean,
			Why: whyReleased,
		},
		{
			Aspect: "bias initialization", Paper: "silent (Section 4.2, Appendix B)",
			PaperForm:    "this toolkit's first form: dense biases start at zero",
			Released:     "nn.Linear's default: weights and biases U(±1/√fan_in)",
			ReleasedFile: "fits/models.py",
			Option:       "--bias-init=zero", Default: "uniform", Variant: VariantBiasZero,
			Why: whyReleased,
		},
		{
			Aspect: "Adam's ε", Paper: "Section 4.2 (\"Adam\"; ε not given)",
			PaperForm:    "this toolkit's first form: ε = 1e-7 (the GoMLX/Keras default)",
			Released:     "torch.optim.Adam's default ε = 1e-8 (β = 0.9, 0.999, no weight decay)",
			ReleasedFile: "experiments/common.py",
			Option:       "--adam-epsilon=1e-7", Default: "1e-8", Variant: VariantAdamEps,
			Why: whyReleased,
		},
		{
			Aspect: "cosine annealing steps", Paper: "Section 4.2 (\"cosine annealing\"; how often it steps is not said)",
			PaperForm:    "this toolkit's first form: the cosine evaluated at every optimizer step",
			Released:     "CosineAnnealingLR(T_max = epochs, η_min = 0) stepped once per epoch (constant within an epoch)",
			ReleasedFile: "experiments/common.py",
			Option:       "--lr-schedule=step", Default: "epoch", Variant: VariantLRStep,
			Why: whyReleased,
		},
		{
			Aspect: "adaptive-LIF baseline", Paper: "Eq. 2; Table 3 (\"Adapt. LIF (Frozen zero init.)\")",
			PaperForm:    "this toolkit's first form: η and γ trainable from zero (the gradient at zero is zero, so it stays a LIF)",
			Released:     "LIFNeuron(adaptive=True): one fixed κ = κ_CT(Ω* = 0) of Eq. 5 for every neuron, nothing of the neuron learned",
			ReleasedFile: "fits/neuron.py",
			Option:       "--adaptlif=learnable", Default: "fixed",
			Why: whyReleased + "; the stand-in here trains FiTS, not the adaptive LIF",
		},
		{
			Aspect: "SHD/SSC inputs", Paper: "Section 4.2, \"Input representation\" (700 channels binned by 5, T = 250 bins of 4 ms; counts or binary not said)",
			PaperForm:    "this toolkit's first form: the number of events per channel and bin",
			Released:     "binary: channel ⌊u·140/700⌋, bin ⌊t·250⌋, events at t ≥ 1 s dropped, a bin with several events is 1",
			ReleasedFile: "common/spike_data.py @6c016f1",
			Option:       "fits data convert --input-counts (data.Options.InputCounts)", Default: "binary",
			Why: whyReleased + "; the stand-in's synthetic task is not SHD/SSC",
		},
		{
			Aspect: "GSC front end", Paper: "Section 4.2, \"Input representation\" (\"40-band log-Mel spectrograms with T = 100\")",
			PaperForm:    "this toolkit's first form: natural log of HTK mel energies, uncentred frames, each band standardised with the training split's statistics",
			Released:     "librosa melspectrogram (n_fft 480, hop 160, power 1, 40 mels, 40-4000 Hz), power_to_db(ref = max, top_db 80), the first 100 frames padded with 0, one z-score per clip",
			ReleasedFile: "experiments/gsc/data.py",
			Option:       "fits data convert --frontend=logmel (data.Options.AudioFrontEnd)", Default: "released",
			Why: whyReleased + "; the stand-in's synthetic task has no audio",
		},
		{
			Aspect: "SHD* validation split", Paper: "Section 4.1 (\"holds out 20% of the training set for validation\")",
			PaperForm:    "this toolkit's first form: 20 % stratified by class, seed 20240",
			Released:     "numpy RandomState(0).permutation(n), the first max(1, int(0.2·n)) indices validate (1631 of 8156), not stratified",
			ReleasedFile: "experiments/shd/train.py",
			Option:       "--val-split=stratified", Default: "released",
			Why: whyReleased + "; the stand-in selects on the synthetic task's own validation split",
		},
		{
			Aspect: "recipe: SHD best test (Table 1, 95.31 ± 0.21)", Paper: "Table 1 (0.04 M parameters; M not given), Table A.2",
			PaperForm:    "the paper leaves M open (W = 128 from the parameter count)",
			Released:     "M = 1, W = 128, lr 7.5e-3, dropout 0.5, best test",
			ReleasedFile: "config/SHD/fits_o1_w128.yaml @6c016f1",
			Option:       "--experiment=shd-best/fsts-m1/w128", Default: "shd-best/fsts-m1/w128 (M = 1, as released)",
			Why: whyReleased,
		},
		{
			Aspect: "recipe: SSC (Table 1, 78.23 ± 0.16)", Paper: "Table 1, Table 3 (M = 2 cell 78.23 ± 0.16; M = 1 cell 78.22 ± 0.12), Table A.2",
			PaperForm:    "Table 1's number equals Table 3's M = 2 cell (lr 4.5e-4, dropout 0.55 in Table A.2)",
			Released:     "M = 1, W = 512, lr 5.5e-4, dropout 0.6 (Table A.2's M = 1 cell)",
			ReleasedFile: "configs/ssc/fits_o1_w512.yaml",
			Option:       "--experiment=ssc/fsts-m1/w512 (the released config's cell)", Default: "ssc/fsts-m2/w512 for Table 1 (the cell whose number it prints)",
			Why: "Table 1 prints the M = 2 cell's number; the two cells differ by 0.01 points, within one seed's spread",
		},
		{
			Aspect: "recipe: SHD* and GSC (Tables 1, 2)", Paper: "Tables 1, 2 (parameter counts), Table A.2",
			PaperForm:    "M and W read from the parameter counts, lr and dropout from Table A.2",
			Released:     "SHD*: M = 2, W = 256, lr 4.5e-3, dropout 0.3; GSC: M = 1, W = 512, lr 3e-3, dropout 0.65 (the same cells)",
			ReleasedFile: "configs/shd/fits_o2_w256_valid.yaml, configs/gsc/fits_o1_w512.yaml",
			Option:       "", Default: "the same cells (shd-val/fsts-m2/w256, gsc/fsts-m1/w512)",
			Why: "the paper and the released configs agree",
		},
		{
			Aspect: "recipe: sMNIST (Table A.9, 98.28)", Paper: "Table A.9, Appendix C.4 (M = 1, W = 256, 0.07 M parameters only)",
			PaperForm:    "no learning rate, batch, readout, time unit or f* range given",
			Released:     "pixels in [0, 1], T = 784, Δt = 1 pixel step, τm = 20, τa = 150, f* in [0.001, 0.1] cycles per step spaced linearly, lr 8e-3, batch 256, no dropout, mean readout, best test",
			ReleasedFile: "configs/smnist/fits_o1_w256.yaml, experiments/smnist/train.py",
			Option:       "--tau-m, --tau-a, --dt, --f-min, --f-max, --f-init, --readout on smnist/fsts-m1/w256", Default: "the released config",
			Why: whyReleased,
		},
		{
			Aspect: "seeds", Paper: "Section 4.2 (\"mean and standard deviation across 5 random seeds\")",
			PaperForm:    "this toolkit's first form: seeds 1-5",
			Released:     "seeds 0-4",
			ReleasedFile: "scripts/run_seeds.sh",
			Option:       "--seed (fits train)", Default: "0-4 in the experiment catalog's full recipes",
			Why: whyReleased + "; the quick stand-ins keep seeds 1-3",
		},
		{
			Aspect: "all-pass stage form", Paper: "Eq. 9, Algorithm 1 (the all-pass stage)",
			PaperForm:    "direct form V_m[k+1] = β_m(V_m[k] − V_{m−1}[k+1]) + V_{m−1}[k]",
			Released:     "transposed direct form II per stage (Y_m = −β_m·Y_{m−1} + W_m, W_m ← Y_{m−1} + β_m·Y_m), zero initial state",
			ReleasedFile: "fits/reference.py",
			Option:       "", Default: "Eq. 9's direct form",
			Why: "the same transfer function; outputs agree to 1e-15, so no option is needed",
		},
	}
}
