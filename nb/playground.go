package nb

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"

	"github.com/fits-snn/fits/data/synth"
	"github.com/fits-snn/fits/fits/sim"
	"github.com/fits-snn/fits/fits/theory"
)

// TSPanelStep returns the subthreshold pre-reset voltage Ṽ[k+1], k = 0..steps−1, of Algorithm 1 (fits/sim)
// for a unit step input I[k] = 1, with FS constants c at target fstar Hz and TS module ts (no spikes: the
// threshold is out of reach).
func TSPanelStep(c theory.Constants, fstar float64, ts theory.TS, steps int) ([]float64, error) {
	p, err := sim.Config{TauM: c.TauM, TauA: c.TauA, Dt: c.Dt, FStar: fstar, Beta: ts.Beta, Lambda: ts.Lambda,
		Vth: math.MaxFloat64, Nesting: ts.Nesting}.Params()
	if err != nil {
		return nil, err
	}
	in := make([]float64, steps)
	for k := range in {
		in[k] = 1
	}
	tr, err := sim.Run(p, in)
	if err != nil {
		return nil, err
	}
	return tr.VPre, nil
}

// Playground inputs: the names of PlaygroundInput's kinds.
var PlaygroundInputs = []string{"chirp 0.5–60 Hz", "two tones 6 + 25 Hz", "white noise", "SHD-like spike pattern"}

// Playground constants: SSC's τm, τa and Δt, T = 250 steps (1 s, as SHD after binning).
const (
	playgroundT       = 250
	playgroundChirpF0 = 0.5
	playgroundChirpF1 = 60
)

// PlaygroundInput returns the unit-scaled input u[k], k = 0..T−1, of kind (an index into PlaygroundInputs)
// at step dt:
//
//   - 0: a logarithmic chirp sin φ(t) sweeping 0.5 → 60 Hz over the T steps (instantaneous frequency
//     PlaygroundChirpHz);
//   - 1: two tones, 6 and 25 Hz, summed and scaled to peak 1;
//   - 2: Gaussian white noise (seed 1), standard deviation 0.35;
//   - 3: an SHD-like spike pattern: one example of the embedded synthetic task on SHD's time axis
//     (synth.LongConfig, test stream), the spike counts of the channel group modulated nearest 10 Hz
//     summed per bin, minus their mean, scaled to peak 1. The label names the group's frequency.
func PlaygroundInput(kind int, dt float64, steps int) (u []float64, label string, err error) {
	u = make([]float64, steps)
	switch kind {
	case 0:
		for k := range u {
			u[k] = math.Sin(playgroundChirpPhase(float64(k)*dt, float64(steps)*dt))
		}
		return u, PlaygroundInputs[0], nil
	case 1:
		peak := 0.0
		for k := range u {
			t := float64(k) * dt
			u[k] = math.Sin(2*math.Pi*6*t) + math.Sin(2*math.Pi*25*t)
			peak = math.Max(peak, math.Abs(u[k]))
		}
		for k := range u {
			u[k] /= peak
		}
		return u, PlaygroundInputs[1], nil
	case 2:
		rng := rand.New(rand.NewPCG(1, 2))
		for k := range u {
			u[k] = 0.35 * rng.NormFloat64()
		}
		return u, PlaygroundInputs[2], nil
	case 3:
		cfg := synth.LongConfig()
		cfg.Dt, cfg.T = dt, steps
		task, err := synth.NewTask(cfg)
		if err != nil {
			return nil, "", err
		}
		set := task.Sample(1, 3)
		code := task.Codes[set.Labels[0]]
		group, best := 0, math.Inf(1)
		for g, f := range code.Freq {
			if d := math.Abs(math.Log(f / 10)); d < best {
				group, best = g, d
			}
		}
		mean := 0.0
		x := set.Example(0)
		for k := range u {
			for ch := range set.F {
				if task.GroupOf[ch] == group {
					u[k] += float64(x[k*set.F+ch])
				}
			}
			mean += u[k] / float64(steps)
		}
		peak := 0.0
		for k := range u {
			u[k] -= mean
			peak = math.Max(peak, math.Abs(u[k]))
		}
		if peak > 0 {
			for k := range u {
				u[k] /= peak
			}
		}
		return u, fmt.Sprintf("SHD-like spike pattern (synthetic task, class %d, channel group %d modulated at %.1f Hz from %.0f ms)",
			set.Labels[0], group, code.Freq[group], 1000*code.Onset[group]), nil
	}
	return nil, "", fmt.Errorf("playground: input kind %d not in [0, %d)", kind, len(PlaygroundInputs))
}

func playgroundChirpPhase(t, dur float64) float64 {
	r := playgroundChirpF1 / playgroundChirpF0
	return 2 * math.Pi * playgroundChirpF0 * dur / math.Log(r) * (math.Pow(r, t/dur) - 1)
}

// PlaygroundChirpHz is the instantaneous frequency of the chirp input at time t (s) of a dur-second input.
func PlaygroundChirpHz(t, dur float64) float64 {
	return playgroundChirpF0 * math.Pow(playgroundChirpF1/playgroundChirpF0, t/dur)
}

// PlaygroundGain is the peak magnitude max_ω |H_d(e^{jω})| of the FS module alone at target fstar Hz: the
// playground's input I[k] = a·u[k]/PlaygroundGain, so amplitude a = 1 drives the FS module alone, at its
// resonance, to the threshold (Vth = 1) with a pure tone.
func PlaygroundGain(c theory.Constants, fstar float64) (float64, error) {
	kappa, err := c.KappaForTargetHz(fstar)
	if err != nil {
		return 0, err
	}
	fsm := c.FS(kappa)
	if t := fsm.Target(); t.OK {
		return fsm.Magnitude(t.Omega), nil
	}
	return fsm.Magnitude(0), nil
}

// PlaygroundConfig is the grid of the single-neuron playground.
type PlaygroundConfig struct {
	Constants theory.Constants
	Steps     int
	Amp       []float64 // input amplitudes a (see PlaygroundGain)
	FStar     []float64 // Hz
	Beta      []float64 // β of every stage
	Lambda    []float64 // λ of every stage
}

// DefaultPlaygroundConfig: SSC constants, 250 steps (1 s), a ∈ {1, 2, 4}, f* ∈ {5, 10, 20, 40} Hz,
// β ∈ {−0.5, 0, 0.5}, λ ∈ {0.2, 0.5, 0.8} shared by the stages.
func DefaultPlaygroundConfig() PlaygroundConfig {
	return PlaygroundConfig{Constants: theory.SSC, Steps: playgroundT, Amp: []float64{1, 2, 4},
		FStar: []float64{5, 10, 20, 40}, Beta: []float64{-0.5, 0, 0.5}, Lambda: []float64{0.2, 0.5, 0.8}}
}

// PlaygroundNeuron returns the sim.Config of the playground at target fstar, M stages sharing β and λ, the
// nesting, Vth = 1.
func PlaygroundNeuron(c theory.Constants, fstar float64, m int, beta, lambda float64, nesting theory.Nesting) sim.Config {
	b, l := make([]float64, m), make([]float64, m)
	for i := range b {
		b[i], l[i] = beta, lambda
	}
	return sim.Config{TauM: c.TauM, TauA: c.TauA, Dt: c.Dt, FStar: fstar, Beta: b, Lambda: l, Vth: 1, Nesting: nesting}
}

// Spectrum returns |Σ_k w[k]u[k]e^{−j2πf kΔt}| (w a Hann window) at each f in Hz, in dB relative to its
// maximum over f, clipped at floor.
func Spectrum(u []float64, dt float64, f []float64, floor float64) []float64 {
	out := make([]float64, len(f))
	ref := 0.0
	n := float64(len(u))
	for i, x := range f {
		var s complex128
		for k, v := range u {
			w := 0.5 - 0.5*math.Cos(2*math.Pi*float64(k)/(n-1))
			s += complex(w*v, 0) * cmplx.Rect(1, -2*math.Pi*x*float64(k)*dt)
		}
		out[i] = cmplx.Abs(s)
		ref = math.Max(ref, out[i])
	}
	for i := range out {
		out[i] = clipDB(db(out[i]/ref), floor)
	}
	return out
}

// PlaygroundPanel is the single-neuron playground: one FiTS neuron (fits/sim, Algorithm 1) driven by a
// chosen input. Controls input, amp, fstar, m, beta, lambda and the toggle nesting. Plots:
//
//   - input: the drive a·u[k] (in units of 1/PlaygroundGain);
//   - voltage: the pre-reset mixed voltage Ṽ[k+1] and the threshold;
//   - spikes: the spike times;
//   - spectrum: the closed-loop |H| (theory.ClosedLoop, dB re its maximum) and the input's spectrum (dB re
//     its maximum), with f* marked.
func PlaygroundPanel(cfg PlaygroundConfig) (*GridPanel, error) {
	c := cfg.Constants
	dur := float64(cfg.Steps) * c.Dt
	tGrid := make([]float64, cfg.Steps)
	for k := range tGrid {
		tGrid[k] = float64(k+1) * c.Dt
	}
	fGrid := theory.LogSpace(0.5, c.NyquistHz()*0.999, 90)
	inputs := make([][]float64, len(PlaygroundInputs))
	labels := make([]string, len(PlaygroundInputs))
	spectra := make([][]float64, len(PlaygroundInputs))
	for i := range inputs {
		var err error
		if inputs[i], labels[i], err = PlaygroundInput(i, c.Dt, cfg.Steps); err != nil {
			return nil, err
		}
		spectra[i] = Spectrum(inputs[i], c.Dt, fGrid, -40)
	}
	gains := make([]float64, len(cfg.FStar))
	for i, f := range cfg.FStar {
		var err error
		if gains[i], err = PlaygroundGain(c, f); err != nil {
			return nil, err
		}
	}
	frame := func(at []int) (PanelFrame, error) {
		kind, a, fi, m := at[0], cfg.Amp[at[1]], at[2], at[3]
		beta, lambda, nesting := cfg.Beta[at[4]], cfg.Lambda[at[5]], theory.Nesting(at[6])
		fstar := cfg.FStar[fi]
		drive := make([]float64, cfg.Steps)
		current := make([]float64, cfg.Steps)
		for k, v := range inputs[kind] {
			drive[k] = a * v
			current[k] = drive[k] / gains[fi]
		}
		nc := PlaygroundNeuron(c, fstar, m, beta, lambda, nesting)
		p, err := nc.Params()
		if err != nil {
			return PanelFrame{}, err
		}
		tr, err := sim.RunStates(p, current)
		if err != nil {
			return PanelFrame{}, err
		}
		var spikes []float64
		for k, s := range tr.Spikes {
			if s == 1 {
				spikes = append(spikes, tGrid[k])
			}
		}
		kappa, _ := c.KappaForTargetHz(fstar)
		cl := theory.ClosedLoop{FS: c.FS(kappa), TS: theory.TS{Beta: nc.Beta, Lambda: nc.Lambda, Nesting: nesting}}
		h := make([]float64, len(fGrid))
		ref, peakF := 0.0, 0.0
		for i, f := range fGrid {
			h[i] = cl.Magnitude(c.RadPerSampleFromHz(f))
			if h[i] > ref {
				ref, peakF = h[i], f
			}
		}
		for i := range h {
			h[i] = clipDB(db(h[i]/ref), -40)
		}
		ts := "no TS (M = 0)"
		if m > 0 {
			ts = fmt.Sprintf("M = %d, β = %g, λ = %g per stage, %s nesting", m, beta, lambda, nesting)
		}
		readout := fmt.Sprintf("%s, a = %g  ·  f* = %g Hz, %s  ·  %d spikes in %.1f s  ·  closed-loop |H| peaks at %.1f Hz",
			labels[kind], a, fstar, ts, len(spikes), dur, peakF)
		if kind == 0 && len(spikes) > 0 {
			readout += fmt.Sprintf("  ·  chirp at %.1f Hz at the first spike, %.1f Hz at the last", PlaygroundChirpHz(spikes[0]-c.Dt, dur), PlaygroundChirpHz(spikes[len(spikes)-1]-c.Dt, dur))
		}
		return PanelFrame{Readout: readout, Series: [][]PanelData{
			{{Y: drive}},
			{{Y: []float64{1}}, {Y: tr.VPre}},
			{{X: spikes}},
			{{Y: spectra[kind]}, {Y: h}, {X: []float64{fstar}}},
		}}, nil
	}
	return NewGridPanel(GridPanelSpec{
		Digits: 3,
		Controls: []PanelControl{
			{Name: "input", Label: "input", Values: []float64{0, 1, 2, 3}, Labels: PlaygroundInputs},
			{Name: "amp", Label: "amplitude a", Values: cfg.Amp, Initial: indexOf(cfg.Amp, 2, 0)},
			{Name: "fstar", Label: "f*", Values: cfg.FStar, Labels: unitLabels(cfg.FStar, " Hz"), Initial: indexOf(cfg.FStar, 10, 0)},
			{Name: "m", Label: "M (stages)", Values: []float64{0, 1, 2}},
			{Name: "beta", Label: "β (every stage)", Values: cfg.Beta, Initial: indexOf(cfg.Beta, 0, 0)},
			{Name: "lambda", Label: "λ (every stage)", Values: cfg.Lambda, Initial: indexOf(cfg.Lambda, 0.5, 0)},
			{Name: "nesting", Label: "Eq. 10 nesting", Values: []float64{0, 1}, Labels: []string{"off: released code (innermost first)", "on: paper (outermost first)"}, Toggle: true},
		},
		Plots: []PanelPlot{
			{Name: "input", Title: "Input drive a·u[k] (a = 1: FS alone reaches Vth at resonance)",
				X: PanelAxis{Label: "t (s)", Min: 0, Max: dur}, Y: PanelAxis{Label: "a·u", Min: -4.4, Max: 4.4}, Grid: tGrid, Width: 620, Height: 150,
				Series: []PanelSeries{{Name: "u", Color: cGrey, Width: 1.2}}},
			{Name: "voltage", Title: "Algorithm 1 (fits/sim): pre-reset voltage Ṽ[k]",
				X: PanelAxis{Label: "t (s)", Min: 0, Max: dur}, Y: PanelAxis{Label: "Ṽ (Vth = 1)", Min: -2, Max: 2}, Grid: tGrid, Width: 620, Height: 190,
				Series: []PanelSeries{{Name: "vth", Kind: SeriesHLines, Color: cOrange, Dash: "4 3", Legend: "threshold"}, {Name: "v", Color: cBlue, Width: 1.3, Legend: "Ṽ"}}},
			{Name: "spikes", Title: "Spikes S[k]",
				X: PanelAxis{Label: "t (s)", Min: 0, Max: dur}, Y: PanelAxis{Min: 0, Max: 1, Ticks: []float64{}}, Width: 620, Height: 90,
				Series: []PanelSeries{{Name: "s", Kind: SeriesVLines, Color: cBlack, Width: 1.5}}},
			{Name: "spectrum", Title: "Closed-loop |H| (Algorithm 1's subthreshold response) and the input spectrum",
				X: PanelAxis{Label: "f (Hz)", Min: 0.5, Max: c.NyquistHz(), Log: true}, Y: PanelAxis{Label: "dB re max", Min: -40, Max: 3, Ticks: dbTicks(-40, 0)},
				Grid: fGrid, Width: 420, Height: 300,
				Series: []PanelSeries{
					{Name: "input", Color: cGrey, Width: 1.2, Legend: "input spectrum"},
					{Name: "h", Color: cBlue, Legend: "closed-loop |H|"},
					{Name: "fstar", Kind: SeriesVLines, Color: cBlue, Dash: "4 3", Legend: "f*"},
				}},
		},
		Frame: frame,
	})
}
