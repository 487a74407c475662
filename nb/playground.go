package nb

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"

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
	tr, err := sim.Run(p, slices.Repeat([]float64{1}, steps))
	if err != nil {
		return nil, err
	}
	return tr.VPre, nil
}

// stepTimes returns the times (k+1)·dt, k = 0..n−1, in s: when the voltages Ṽ[k+1] of n steps are reached.
func stepTimes(n int, dt float64) []float64 {
	t := make([]float64, n)
	for k := range t {
		t[k] = float64(k+1) * dt
	}
	return t
}

// Playground inputs: the names of PlaygroundInput's kinds.
var PlaygroundInputs = []string{"chirp 0.5–60 Hz", "two tones 6 + 25 Hz", "white noise", "SHD-like spike pattern"}

// Playground constants: SSC's τm, τa and Δt, T = 250 steps (1 s, as SHD after binning). The inputs other
// than the chirp are scaled to reach as far as the chirp at PlaygroundReferenceHz (see PlaygroundInput).
const (
	playgroundT           = 250
	playgroundChirpF0     = 0.5
	playgroundChirpF1     = 60
	PlaygroundReferenceHz = 10.0
)

// PlaygroundInput returns the input u[k], k = 0..T−1, of kind (an index into PlaygroundInputs) at step dt:
//
//   - 0: a logarithmic chirp sin φ(t) sweeping 0.5 → 60 Hz over the T steps (instantaneous frequency
//     PlaygroundChirpHz), amplitude 1;
//   - 1: two tones, 6 and 25 Hz, summed;
//   - 2: Gaussian white noise (seed 1);
//   - 3: an SHD-like spike pattern: one example of the embedded synthetic task on SHD's time axis
//     (synth.LongConfig, test stream), the spike counts of the channel group modulated nearest 10 Hz
//     summed per bin, minus their mean. The label names the group's frequency.
//
// Kinds 1–3 are scaled so that the FS module alone at f* = PlaygroundReferenceHz, driven as the playground
// drives it (PlaygroundGain), peaks at the same subthreshold voltage as with the chirp: at amplitude a = 1
// every input stays just below the threshold there, at a = 2 every input fires.
func PlaygroundInput(kind int, dt float64, steps int) (u []float64, label string, err error) {
	u, label, err = playgroundRawInput(kind, dt, steps)
	if err != nil || kind == 0 {
		return u, label, err
	}
	chirp, _, err := playgroundRawInput(0, dt, steps)
	if err != nil {
		return nil, "", err
	}
	c := theory.Constants{TauM: theory.SSC.TauM, TauA: theory.SSC.TauA, Dt: dt}
	want, err := playgroundReach(c, chirp)
	if err != nil {
		return nil, "", err
	}
	got, err := playgroundReach(c, u)
	if err != nil {
		return nil, "", err
	}
	if got > 0 {
		for k := range u {
			u[k] *= want / got
		}
	}
	return u, label, nil
}

// playgroundReach is the largest |Ṽ| of the FS module alone at PlaygroundReferenceHz driven by
// u/PlaygroundGain, threshold out of reach.
func playgroundReach(c theory.Constants, u []float64) (float64, error) {
	gain, err := PlaygroundGain(c, PlaygroundReferenceHz)
	if err != nil {
		return 0, err
	}
	in := make([]float64, len(u))
	for k, v := range u {
		in[k] = v / gain
	}
	p, err := sim.Config{TauM: c.TauM, TauA: c.TauA, Dt: c.Dt, FStar: PlaygroundReferenceHz, Vth: math.MaxFloat64}.Params()
	if err != nil {
		return 0, err
	}
	tr, err := sim.Run(p, in)
	if err != nil {
		return 0, err
	}
	return peakAbs(tr.VPre), nil
}

// peakAbs returns the largest |v| over v (0 for none).
func peakAbs(v []float64) float64 {
	peak := 0.0
	for _, x := range v {
		peak = math.Max(peak, math.Abs(x))
	}
	return peak
}

// playgroundRawInput is the input of kind before the scaling of PlaygroundInput: the chirp and the tones
// peak at 1, the noise has standard deviation 0.35, the spike pattern peaks at 1.
func playgroundRawInput(kind int, dt float64, steps int) (u []float64, label string, err error) {
	u = make([]float64, steps)
	switch kind {
	case 0:
		for k := range u {
			u[k] = math.Sin(playgroundChirpPhase(float64(k)*dt, float64(steps)*dt))
		}
		return u, PlaygroundInputs[0], nil
	case 1:
		for k := range u {
			t := float64(k) * dt
			u[k] = math.Sin(2*math.Pi*6*t) + math.Sin(2*math.Pi*25*t)
		}
		peak := peakAbs(u)
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
		for k := range u {
			u[k] -= mean
		}
		if peak := peakAbs(u); peak > 0 {
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

// PlaygroundChirpTime is the time (s) at which the chirp of a dur-second input passes f Hz, and whether it
// does (f within 0.5–60 Hz).
func PlaygroundChirpTime(f, dur float64) (float64, bool) {
	if !(f >= playgroundChirpF0 && f <= playgroundChirpF1) {
		return 0, false
	}
	return dur * math.Log(f/playgroundChirpF0) / math.Log(playgroundChirpF1/playgroundChirpF0), true
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

// DefaultPlaygroundConfig: SSC constants, 250 steps (1 s), a ∈ {1, 2, 4}, twelve f* from 2.5 to 113 Hz a
// half octave apart (past the semi-implicit Jury limit, 77.2 Hz, so the unstable neuron can be seen),
// β ∈ {−0.5, 0.5}, λ ∈ {0.2, 0.8} shared by the stages.
func DefaultPlaygroundConfig() PlaygroundConfig {
	return PlaygroundConfig{Constants: theory.SSC, Steps: playgroundT, Amp: []float64{1, 2, 4},
		FStar: []float64{2.5, 3.5, 5, 7, 10, 14, 20, 28, 40, 56, 80, 113}, Beta: []float64{-0.5, 0.5}, Lambda: []float64{0.2, 0.8}}
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

// Spectrum returns the input's power per log-frequency band, f·|Σ_k w[k]u[k]e^{−j2πf kΔt}|² (w a Tukey
// window with 10 % cosine tapers, so that the ends of the input, where a chirp has its lowest and highest
// frequencies, are kept), at each f in Hz, in dB relative to its maximum over f, clipped at floor. On a
// log frequency axis equal areas are equal power: a logarithmic chirp, which spends equal time per
// octave, is flat over its range.
func Spectrum(u []float64, dt float64, f []float64, floor float64) []float64 {
	out := make([]float64, len(f))
	ref := 0.0
	n := len(u)
	w := tukey(n, 0.1)
	for i, x := range f {
		var s complex128
		for k, v := range u {
			s += complex(w[k]*v, 0) * cmplx.Rect(1, -2*math.Pi*x*float64(k)*dt)
		}
		out[i] = x * real(s*cmplx.Conj(s))
		ref = math.Max(ref, out[i])
	}
	for i := range out {
		out[i] = clipDB(10*math.Log10(out[i]/ref), floor)
	}
	return out
}

// tukey is the Tukey window of n points whose cosine tapers take the fraction alpha of the length.
func tukey(n int, alpha float64) []float64 {
	w := make([]float64, n)
	edge := alpha * float64(n-1) / 2
	for k := range w {
		x := float64(k)
		switch {
		case x < edge:
			w[k] = 0.5 - 0.5*math.Cos(math.Pi*x/edge)
		case x > float64(n-1)-edge:
			w[k] = 0.5 - 0.5*math.Cos(math.Pi*(float64(n-1)-x)/edge)
		default:
			w[k] = 1
		}
	}
	return w
}

// PlaygroundPanel is the single-neuron playground: one FiTS neuron (fits/sim, Algorithm 1) driven by a
// chosen input. Controls input, amp, fstar, m, beta, lambda and the toggle nesting. Plots, stacked with
// aligned time axes:
//
//   - input: the drive a·u[k] (in units of 1/PlaygroundGain), with the chirp's instantaneous frequency as
//     a second axis on top and, for the chirp, where it passes f* and f*_DT;
//   - voltage: the pre-reset mixed voltage Ṽ[k+1] and the threshold, with the same marks;
//   - spikes: the spike times, with the same marks;
//   - spectrum: the closed-loop |H| (theory.ClosedLoop) and the FS module alone |H_d|, both in dB re the FS
//     module's peak gain (so that a TS module's drop shows), the level −20·log10(a) that a pure tone of
//     amplitude a must exceed to reach the threshold, the input's power per log-frequency band (dB re its
//     maximum), f* marked and the targets above the Jury limit shaded.
func PlaygroundPanel(cfg PlaygroundConfig) (*GridPanel, error) {
	c := cfg.Constants
	dur := float64(cfg.Steps) * c.Dt
	tGrid := stepTimes(cfg.Steps, c.Dt)
	fGrid := theory.LogSpace(0.5, c.NyquistHz()*0.999, 90)
	inputs := make([][]float64, len(PlaygroundInputs))
	labels := make([]string, len(PlaygroundInputs))
	spectra := make([][]float64, len(PlaygroundInputs))
	for i := range inputs {
		var err error
		if inputs[i], labels[i], err = PlaygroundInput(i, c.Dt, cfg.Steps); err != nil {
			return nil, err
		}
		spectra[i] = Spectrum(inputs[i], c.Dt, fGrid, -60)
	}
	jury := c.Jury().FStarMaxSemiImplicitHz
	gains := make([]float64, len(cfg.FStar))
	fsDB := make([][]float64, len(cfg.FStar))
	fstarLabels := make([]string, len(cfg.FStar))
	for i, f := range cfg.FStar {
		var err error
		if gains[i], err = PlaygroundGain(c, f); err != nil {
			return nil, err
		}
		kappa, _ := c.KappaForTargetHz(f)
		fsm := c.FS(kappa)
		fsDB[i] = make([]float64, len(fGrid))
		for j, x := range fGrid {
			fsDB[i][j] = round(db(fsm.Magnitude(c.RadPerSampleFromHz(x))/gains[i]), 2)
		}
		fstarLabels[i] = fmt.Sprintf("%g Hz", f)
		if f > jury {
			fstarLabels[i] += " (DT unstable)"
		}
	}
	var chirpTicks []float64
	var chirpLabels []string
	for _, f := range []float64{0.5, 1, 2, 5, 10, 20, 40, 60} {
		if t, ok := PlaygroundChirpTime(f, dur); ok {
			chirpTicks, chirpLabels = append(chirpTicks, t), append(chirpLabels, tickLabel(f))
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
		kappa, _ := c.KappaForTargetHz(fstar)
		fsm := c.FS(kappa)
		// Above the Jury limit the update is unstable: fits/sim refuses the neuron, and nothing is drawn.
		vpre := nans(cfg.Steps)
		var spikes []float64
		if fsm.Stable() {
			p, err := nc.Params()
			if err != nil {
				return PanelFrame{}, err
			}
			tr, err := sim.RunStates(p, current)
			if err != nil {
				return PanelFrame{}, err
			}
			vpre = tr.VPre
			for k, s := range tr.Spikes {
				if s == 1 {
					spikes = append(spikes, tGrid[k])
				}
			}
		}
		cl := theory.ClosedLoop{FS: fsm, TS: theory.TS{Beta: nc.Beta, Lambda: nc.Lambda, Nesting: nesting}}
		h := make([]float64, len(fGrid))
		peak, peakF := 0.0, 0.0
		for i, f := range fGrid {
			mag := cl.Magnitude(c.RadPerSampleFromHz(f))
			h[i] = round(db(mag/gains[fi]), 2)
			if mag > peak {
				peak, peakF = mag, f
			}
		}
		// Where the chirp passes f* and f*_DT (Theorem 2).
		var crossF, crossDT []float64
		fdt, hasDT := c.DTTargetHz(kappa)
		if kind == 0 {
			if t, ok := PlaygroundChirpTime(fstar, dur); ok {
				crossF = []float64{t}
			}
			if t, ok := PlaygroundChirpTime(fdt, dur); ok && hasDT {
				crossDT = []float64{t}
			}
		}
		ts := "no TS (M = 0)"
		if m > 0 {
			ts = fmt.Sprintf("M = %d, β = %g, λ = %g per stage, %s nesting", m, beta, lambda, nesting)
		}
		dtText := "f*_DT: none"
		if hasDT {
			dtText = fmt.Sprintf("f*_DT = %.1f Hz", fdt)
		}
		readout := fmt.Sprintf("%s, a = %g  ·  f* = %g Hz (%s), %s  ·  %d spikes in %.1f s",
			labels[kind], a, fstar, dtText, ts, len(spikes), dur)
		switch {
		case !fsm.Stable():
			readout += fmt.Sprintf("  ·  UNSTABLE: f* is above the semi-implicit Jury limit (%.1f Hz, Appendix A.2); the voltage would grow without bound, so the neuron is not simulated and has no frequency response", jury)
			h = nans(len(h))
		case !cl.Stable():
			readout += "  ·  UNSTABLE closed loop: the voltage grows without bound"
		default:
			readout += fmt.Sprintf("  ·  closed-loop |H| peaks at %.1f Hz, %+.1f dB re FS alone", peakF, db(peak/gains[fi]))
		}
		if kind == 0 && len(spikes) > 0 {
			readout += fmt.Sprintf("  ·  chirp at %.1f Hz at the first spike, %.1f Hz at the last", PlaygroundChirpHz(spikes[0]-c.Dt, dur), PlaygroundChirpHz(spikes[len(spikes)-1]-c.Dt, dur))
		}
		marks := []PanelData{{X: crossF}, {X: crossDT}}
		return PanelFrame{Readout: readout, Series: [][]PanelData{
			append([]PanelData{{Y: drive}}, marks...),
			append([]PanelData{{Y: []float64{1}}, {Y: vpre}}, marks...),
			append([]PanelData{{X: spikes}}, marks...),
			{{X: []float64{jury, c.NyquistHz()}}, {Y: spectra[kind]}, {Y: fsDB[fi]}, {Y: h}, {Y: []float64{-db(a)}}, {X: []float64{fstar}}},
		}}, nil
	}
	const width = 640
	timeAxis := PanelAxis{Label: "t (s)", Min: 0, Max: dur}
	markSeries := func(legend bool) []PanelSeries {
		s := []PanelSeries{{Name: "fcross", Kind: SeriesVLines, Color: cBlue, Dash: "4 3"}, {Name: "dtcross", Kind: SeriesVLines, Color: cOrange, Dash: "2 3"}}
		if legend {
			s[0].Legend, s[1].Legend = "chirp passes f*", "chirp passes f*_DT"
		}
		return s
	}
	return NewGridPanel(GridPanelSpec{
		Digits: 3,
		Stack:  true,
		Controls: []PanelControl{
			{Name: "input", Label: "input", Values: []float64{0, 1, 2, 3}, Labels: PlaygroundInputs},
			{Name: "amp", Label: "amplitude a", Values: cfg.Amp, Initial: indexOf(cfg.Amp, 2)},
			{Name: "fstar", Label: "f*", Values: cfg.FStar, Labels: fstarLabels, Initial: indexOf(cfg.FStar, 10)},
			{Name: "m", Label: "M (stages)", Values: []float64{0, 1, 2}},
			{Name: "beta", Label: "β (every stage)", Values: cfg.Beta, Initial: indexOf(cfg.Beta, 0.5)},
			{Name: "lambda", Label: "λ (every stage)", Values: cfg.Lambda, Initial: indexOf(cfg.Lambda, 0.2)},
			nestingControl,
		},
		Plots: []PanelPlot{
			{Name: "input", Title: fmt.Sprintf("Input drive a·u[k] (a = 1: every input stays just below Vth with f* = %g Hz, FS alone)", PlaygroundReferenceHz),
				X: timeAxis, Y: PanelAxis{Label: "a·u", Min: -4.4, Max: 4.4}, Grid: tGrid, Width: width, Height: 150,
				Top:    &PanelTopAxis{Label: "chirp frequency (Hz)", Ticks: chirpTicks, Labels: chirpLabels},
				Series: append([]PanelSeries{{Name: "u", Color: cGrey, Width: 1.2}}, markSeries(true)...)},
			{Name: "voltage", Title: "Algorithm 1 (fits/sim): pre-reset voltage Ṽ[k]",
				X: timeAxis, Y: PanelAxis{Label: "Ṽ (Vth = 1)", Min: -2, Max: 2}, Grid: tGrid, Width: width, Height: 170,
				Series: append([]PanelSeries{{Name: "vth", Kind: SeriesHLines, Color: cOrange, Dash: "4 3", Legend: "threshold"}, {Name: "v", Color: cBlue, Width: 1.3, Legend: "Ṽ"}}, markSeries(false)...)},
			{Name: "spikes", Title: "Spikes S[k]",
				X: timeAxis, Y: PanelAxis{Min: 0, Max: 1, Ticks: []float64{}}, Width: width, Height: 80,
				Series: append([]PanelSeries{{Name: "s", Kind: SeriesVLines, Color: cBlack, Width: 1.5}}, markSeries(false)...)},
			{Name: "spectrum", Title: "Subthreshold response (dB re the FS module's peak gain) and the input's content",
				X: PanelAxis{Label: "f (Hz)", Min: 0.5, Max: c.NyquistHz(), Log: true}, Y: PanelAxis{Label: "dB", Min: -40, Max: 20, Ticks: dbTicks(-40, 20)},
				Grid: fGrid, Width: width, Height: 260,
				Series: []PanelSeries{
					{Name: "unstable", Kind: SeriesBands, Color: cPink, Opacity: 0.2, Legend: fmt.Sprintf("f* here: DT update unstable (> %.1f Hz, Jury)", jury)},
					{Name: "input", Color: cGrey, Width: 1.2, Legend: "input power per log-frequency band (dB re max)"},
					{Name: "fs", Color: cGrey, Dash: "4 3", Width: 1.2, Legend: "FS alone |H_d|"},
					{Name: "h", Color: cBlue, Legend: "closed-loop |H| (TS inside the FS loop)"},
					{Name: "level", Kind: SeriesHLines, Color: cOrange, Dash: "2 3", Legend: "−20·log10(a): a pure tone above it reaches Vth"},
					{Name: "fstar", Kind: SeriesVLines, Color: cBlue, Dash: "4 3", Legend: "f*"},
				}},
		},
		Frame: frame,
	})
}
