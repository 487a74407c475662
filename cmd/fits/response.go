package main

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/fits-snn/fits/fits/theory"
)

// defaultResponseOmega is the default ω grid of `fits response`: 31 points log-spaced over
// [π/1000, π] rad/sample (10 per decade).
func defaultResponseOmega() []float64 { return theory.LogSpace(math.Pi/1000, math.Pi, 31) }

// responseCurves holds one response sampled at the requested ω.
type responseCurves struct {
	Magnitude  []jsonFloat `json:"magnitude"`           // |H(e^{jω})|
	Phase      []jsonFloat `json:"phase"`               // arg H in radians, principal value in [−π, π] (atan2)
	GroupDelay []jsonFloat `json:"group_delay_samples"` // −dφ/dω in samples (null where undefined)
}

// responseOutput is the JSON form of `fits response --json`.
type responseOutput struct {
	FS     responseCurves `json:"fs"`     // H_d alone (Eq. 6)
	TS     responseCurves `json:"ts"`     // G_M alone (Eqs. 8-10)
	Neuron responseCurves `json:"neuron"` // closed loop of Algorithm 1
	Omega  []float64      `json:"omega"`  // rad/sample
	FHz    []float64      `json:"f_hz"`   // ω/(2πΔt)
	FStar  float64        `json:"fstar_ct_hz"`
	Kappa  float64        `json:"kappa"`
	M      int            `json:"m"`
}

func curves(sys theory.ZTransfer, omega []float64) responseCurves {
	r := responseCurves{
		Magnitude:  make([]jsonFloat, len(omega)),
		Phase:      make([]jsonFloat, len(omega)),
		GroupDelay: make([]jsonFloat, len(omega)),
	}
	for i, w := range omega {
		r.Magnitude[i] = jsonFloat(theory.Magnitude(sys, w))
		r.Phase[i] = jsonFloat(theory.Phase(sys, w))
		r.GroupDelay[i] = jsonFloat(theory.GroupDelay(sys, w))
	}
	return r
}

func runResponse(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("response", stderr)
	cf := addConstantsFlags(fs)
	fstarFlag := fs.String("fstar", "10", "continuous-time target frequency f* in Hz (κ by Theorem 1)")
	tsf := addTSFlags(fs)
	omegaFlag := listFlag(fs, "omega", "", "comma-separated ω in rad/sample within [0, π] (default: 31 points log-spaced over [π/1000, π])")
	asJSON := fs.Bool("json", false, "print one JSON object")
	c, err := cf.parseArgs(fs, args)
	if err != nil {
		return err
	}
	f, err := parseFloat("fstar", *fstarFlag)
	if err != nil {
		return err
	}
	k, err := targetKappa(c, c.Jury(), f)
	if err != nil {
		return err
	}
	beta, lambda, mix, err := tsf.parse()
	if err != nil {
		return err
	}
	ts := theory.TS{Beta: beta, Lambda: lambda, Nesting: mix.Nesting()}
	if err := ts.Validate(); err != nil {
		return badInput("--beta/--lambda: %v", err)
	}
	omega, err := parseFloatList("omega", *omegaFlag)
	if err != nil {
		return err
	}
	if omega == nil {
		omega = defaultResponseOmega()
	}
	for _, w := range omega {
		if !(w >= 0 && w <= math.Pi) {
			return badInput("--omega: %g rad/sample is outside [0, pi]", w)
		}
	}
	fsm := c.FS(k)
	out := responseOutput{
		FS:     curves(fsm, omega),
		TS:     curves(ts, omega),
		Neuron: curves(theory.ClosedLoop{FS: fsm, TS: ts}, omega),
		Omega:  omega,
		FHz:    make([]float64, len(omega)),
		FStar:  f,
		Kappa:  k,
		M:      ts.M(),
	}
	for i, w := range omega {
		out.FHz[i] = c.HzFromRadPerSample(w)
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "FiTS responses at tau-m = %g s, tau-a = %g s, dt = %g s, f* = %g Hz (kappa = %.6g 1/s^2), M = %d\n",
		c.TauM, c.TauA, c.Dt, f, k, ts.M())
	fmt.Fprintln(stdout, "fs: FS module H_d alone; ts: TS module G_M alone; neuron: closed loop (TS inside the FS feedback). Phase in rad, delay in samples.")
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "omega\tf [Hz]\t|fs|\tphase fs\tdelay fs\t|ts|\tphase ts\tdelay ts\t|neuron|\tphase neuron\tdelay neuron\t")
	for i, w := range omega {
		fmt.Fprintf(tw, "%.4g\t%.4g", w, out.FHz[i])
		for _, r := range []responseCurves{out.FS, out.TS, out.Neuron} {
			fmt.Fprintf(tw, "\t%.5g\t%.4f\t%.4g", float64(r.Magnitude[i]), float64(r.Phase[i]), float64(r.GroupDelay[i]))
		}
		fmt.Fprintln(tw, "\t")
	}
	return tw.Flush()
}
