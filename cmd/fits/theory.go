package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/fits-snn/fits/fits/theory"
)

// theoryOutput is the JSON form of `fits theory --json`.
type theoryOutput struct {
	Mu        float64        `json:"mu"`  // 1/τm, 1/s
	Rho       float64        `json:"rho"` // 1/τa, 1/s
	Dt        float64        `json:"dt"`  // seconds
	TauM      float64        `json:"tau_m"`
	TauA      float64        `json:"tau_a"`
	NyquistHz float64        `json:"nyquist_hz"`
	Jury      theoryJury     `json:"jury"`
	Targets   []theoryTarget `json:"targets"`
}

// theoryJury is theory.Jury with the JSON names of its bounds.
type theoryJury struct {
	KappaMaxExplicit       float64 `json:"kappa_max_explicit"`
	KappaMaxSemiImplicit   float64 `json:"kappa_max_semi_implicit"`
	FStarMaxExplicitHz     float64 `json:"fstar_max_explicit_hz"`
	FStarMaxSemiImplicitHz float64 `json:"fstar_max_semi_implicit_hz"`
}

type theoryTarget struct {
	FStarCTHz      float64  `json:"fstar_ct_hz"`       // requested CT target, Hz
	Kappa          float64  `json:"kappa"`             // Theorem 1 inverse, 1/s²
	FStarDTHz      *float64 `json:"fstar_dt_hz"`       // Theorem 2 closed form at Kappa, Hz (null: none)
	FStarDTSweepHz *float64 `json:"fstar_dt_sweep_hz"` // dense sweep at Kappa, Hz (null: none)
	KappaDTExact   *float64 `json:"kappa_dt_exact"`    // κ whose realized DT target is fstar_ct_hz, 1/s²
	OmegaStar      float64  `json:"omega_star_rad_s"`  // 2π·fstar_ct_hz
	KappaBar       float64  `json:"kappa_bar"`         // κΔt²
}

// constantsFlags registers --tau-m, --tau-a and --dt with the paper's SHD/SSC defaults.
type constantsFlags struct{ tauM, tauA, dt *string }

func addConstantsFlags(fs interface {
	String(name, value, usage string) *string
}) constantsFlags {
	return constantsFlags{
		tauM: fs.String("tau-m", "0.04", "membrane time constant τm in seconds"),
		tauA: fs.String("tau-a", "0.2", "adaptation time constant τa in seconds"),
		dt:   fs.String("dt", "0.004", "simulation timestep Δt in seconds"),
	}
}

// parse returns validated constants or an input error.
func (f constantsFlags) parse() (theory.Constants, error) {
	var c theory.Constants
	var err error
	if c.TauM, err = parseFloat("tau-m", *f.tauM); err != nil {
		return c, err
	}
	if c.TauA, err = parseFloat("tau-a", *f.tauA); err != nil {
		return c, err
	}
	if c.Dt, err = parseFloat("dt", *f.dt); err != nil {
		return c, err
	}
	err = c.Validate()
	if err != nil && !errors.Is(err, theory.ErrTooManySteps) {
		return c, badInput("%v", err)
	}
	// The stability bounds grow as 1/dt²: for a tiny dt they overflow float64 and every later number
	// (κ̄ = κΔt², the realized DT targets) loses all precision.
	if j := c.Jury(); math.IsInf(j.KappaMaxSemiImplicit, 0) || !(j.FStarMaxSemiImplicitHz > 0) ||
		math.IsInf(j.FStarMaxSemiImplicitHz, 0) {
		return c, badInput("--dt: %g s is too small: the semi-implicit Jury stability bound of Appendix A.2 "+
			"(f*max about 1/(pi dt) = %.3g Hz) cannot be computed in float64; use a larger --dt", c.Dt, 1/(math.Pi*c.Dt))
	}
	if err != nil { // a time constant too long for dt
		return c, badInput("%v", err)
	}
	return c, nil
}

// parseArgs parses args with fs (which holds these flags) and returns the constants, as parse.
func (f constantsFlags) parseArgs(fs *flag.FlagSet, args []string) (theory.Constants, error) {
	if err := parseFlags(fs, args); err != nil {
		return theory.Constants{}, err
	}
	return f.parse()
}

// targetKappa returns κ in 1/s² for the CT target frequency f in Hz (Theorem 1), rejecting an f that is
// not positive or not below the semi-implicit Jury bound j, naming the bound.
func targetKappa(c theory.Constants, j theory.Jury, f float64) (float64, error) {
	if !(f > 0) {
		return 0, badInput("--fstar: target frequency must be positive, got %g Hz", f)
	}
	if !(f < j.FStarMaxSemiImplicitHz) {
		return 0, badInput("--fstar: %g Hz is above the semi-implicit Jury stability bound f*max = %.4g Hz (κ < %.6g 1/s²) at tau-m=%g tau-a=%g dt=%g",
			f, j.FStarMaxSemiImplicitHz, j.KappaMaxSemiImplicit, c.TauM, c.TauA, c.Dt)
	}
	return c.KappaForTargetHz(f) // f is positive and finite: no error
}

// maxTheoryTargets bounds --fstar: about five seconds of sweeps.
const maxTheoryTargets = 10_000

func runTheory(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("theory", stderr)
	cf := addConstantsFlags(fs)
	fstarFlag := listFlag(fs, "fstar", "1,5,10,20,50", "comma-separated continuous-time target frequencies f* in Hz")
	asJSON := fs.Bool("json", false, "print one JSON object")
	c, err := cf.parseArgs(fs, args)
	if err != nil {
		return err
	}
	fstars, err := parseFloatList("fstar", *fstarFlag)
	if err != nil {
		return err
	}
	if len(fstars) == 0 {
		return badInput("--fstar: need at least one target frequency")
	}
	if len(fstars) > maxTheoryTargets {
		return badInput("--fstar: %d target frequencies, more than the %d that fits theory computes at once (each takes a dense frequency sweep, about half a millisecond)", len(fstars), maxTheoryTargets)
	}
	j := c.Jury()
	out := theoryOutput{
		Mu: c.Mu(), Rho: c.Rho(), Dt: c.Dt, TauM: c.TauM, TauA: c.TauA, NyquistHz: c.NyquistHz(),
		Jury: theoryJury(j),
	}
	for _, f := range fstars {
		k, err := targetKappa(c, j, f)
		if err != nil {
			return err
		}
		t := theoryTarget{FStarCTHz: f, Kappa: k, OmegaStar: theory.RadPerSecFromHz(f), KappaBar: c.KappaBar(k),
			FStarDTHz: optFloat(c.DTTargetHz(k)), FStarDTSweepHz: optFloat(c.DTSweepTargetHz(k))}
		if ke, err := c.KappaDTExact(f); err == nil {
			t.KappaDTExact = &ke
		}
		out.Targets = append(out.Targets, t)
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "FiTS theory at tau-m = %g s, tau-a = %g s, dt = %g s (mu = %g 1/s, rho = %g 1/s, Nyquist %g Hz)\n",
		c.TauM, c.TauA, c.Dt, out.Mu, out.Rho, out.NyquistHz)
	fmt.Fprintf(stdout, "Jury bounds (Appendix A.2): explicit kappa < %.6g 1/s^2 (f* < %.2f Hz), semi-implicit kappa < %.6g 1/s^2 (f* < %.2f Hz)\n\n",
		j.KappaMaxExplicit, j.FStarMaxExplicitHz, j.KappaMaxSemiImplicit, j.FStarMaxSemiImplicitHz)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "f*_CT [Hz]\tkappa [1/s^2] (Thm 1)\tf*_DT [Hz] (Thm 2)\tf*_DT sweep [Hz]\tkappa DT-exact [1/s^2]\t")
	for _, t := range out.Targets {
		fmt.Fprintf(tw, "%g\t%.6g\t%s\t%s\t%s\t\n", t.FStarCTHz, t.Kappa, fmtOpt(t.FStarDTHz, "%.6f"), fmtOpt(t.FStarDTSweepHz, "%.6f"), fmtOpt(t.KappaDTExact, "%.6g"))
	}
	return tw.Flush()
}

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
	var r responseCurves // omega is never empty
	for _, w := range omega {
		r.Magnitude = append(r.Magnitude, jsonFloat(theory.Magnitude(sys, w)))
		r.Phase = append(r.Phase, jsonFloat(theory.Phase(sys, w)))
		r.GroupDelay = append(r.GroupDelay, jsonFloat(theory.GroupDelay(sys, w)))
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
