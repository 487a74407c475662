// Command expect prints, for the browser test, the values that a notebook panel must draw at a setting,
// computed by direct fits/theory and fits/sim calls (not by the panel code):
//
//	expect -panel NAME -state '{"fstar":20,...}'
//
// NAME is target (notebook 01), disc (02), ts (03), play (03b) or pole (04); the state is the panel
// root's data-state (control name → value). The output is a JSON list of checks: plot, curve, kind
// (line: y at the drawn vertex of each x; path: a drawn vertex near each point; points; vlines) and the expected (x, y) points in data units.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/fits-snn/fits/fits/sim"
	"github.com/fits-snn/fits/fits/theory"
	"github.com/fits-snn/fits/nb"
)

type check struct {
	Plot  string       `json:"plot"`
	Curve string       `json:"curve"`
	Kind  string       `json:"kind"`
	Pts   [][2]float64 `json:"pts"`
}

func main() {
	panel := flag.String("panel", "", "target, disc, ts, play or pole")
	state := flag.String("state", "{}", "control values as JSON")
	flag.Parse()
	var s map[string]float64
	if err := json.Unmarshal([]byte(*state), &s); err != nil {
		fail(err)
	}
	compute, ok := map[string]func(map[string]float64) ([]check, error){
		"target": target, "disc": disc, "ts": ts, "play": play, "pole": pole,
	}[*panel]
	if !ok {
		fail(fmt.Errorf("unknown panel %q", *panel))
	}
	out, err := compute(s)
	if err != nil {
		fail(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "expect:", err)
	os.Exit(1)
}

func db(x float64) float64 { return 20 * math.Log10(x) }

// target: notebook 01, the CT magnitude in dB re its value at f* (Theorem 1), Δt = 4 ms.
func target(s map[string]float64) ([]check, error) {
	c := theory.Constants{TauM: s["taum"], TauA: s["taua"], Dt: 0.004}
	kappa, err := c.KappaForTargetHz(s["fstar"])
	if err != nil {
		return nil, err
	}
	ct := c.CT(kappa)
	ref := ct.Magnitude(theory.RadPerSecFromHz(s["fstar"]))
	ch := check{Plot: "mag", Curve: "ct", Kind: "line"}
	for i, f := range theory.LogSpace(0.1, 125, 120) { // the panel's frequencies, every third
		if i%3 != 0 {
			continue
		}
		ch.Pts = append(ch.Pts, [2]float64{f, db(ct.Magnitude(theory.RadPerSecFromHz(f)) / ref)})
	}
	return []check{ch, {Plot: "mag", Curve: "fstar", Kind: "vlines", Pts: [][2]float64{{s["fstar"], 0}}}}, nil
}

// disc: notebook 02, the semi-implicit zero-input trajectory (Appendix A.2) and Theorem 2's f*_DT.
func disc(s map[string]float64) ([]check, error) {
	c := theory.Constants{TauM: s["taum"], TauA: s["taua"], Dt: s["dt"]}
	kappaOf := c.KappaForTargetHz
	if s["exact"] == 1 {
		kappaOf = c.KappaDTExact
	}
	kappa, err := kappaOf(s["fstar"])
	if err != nil {
		return nil, err
	}
	eta, gamma := theory.EqualGains(kappa)
	v, a := c.SemiImplicitMatrix(eta, gamma).Trajectory(1, 0, 40)
	tr := check{Plot: "phase", Curve: "semi", Kind: "path"}
	for k := range v {
		tr.Pts = append(tr.Pts, [2]float64{v[k], a[k]})
	}
	out := []check{tr, {Plot: "stab", Curve: "kb", Kind: "vlines", Pts: [][2]float64{{c.KappaBar(kappa), 0}}}}
	if fdt, ok := c.DTTargetHz(kappa); ok {
		out = append(out, check{Plot: "target", Curve: "current", Kind: "points", Pts: [][2]float64{{s["fstar"], fdt}}})
	}
	return out, nil
}

// ts: notebook 03 at SSC and f* = 20 Hz: the TS and closed-loop group delays (Eq. 7, theory.ClosedLoop)
// and the step response of Algorithm 1.
func ts(s map[string]float64) ([]check, error) {
	c := theory.SSC
	m := int(s["m"])
	beta := []float64{s["beta1"], s["beta2"]}[:m]
	lambda := []float64{s["lambda1"], s["lambda2"]}[:m]
	nest := theory.Nesting(s["nesting"])
	kappa, err := c.KappaForTargetHz(20)
	if err != nil {
		return nil, err
	}
	g := theory.TS{Beta: beta, Lambda: lambda, Nesting: nest}
	cl := theory.ClosedLoop{FS: c.FS(kappa), TS: g}
	dts := check{Plot: "delay", Curve: "ts", Kind: "line"}
	dcl := check{Plot: "delay", Curve: "cl", Kind: "line"}
	for i, f := range theory.LogSpace(0.5, c.NyquistHz()*0.999, 100) { // the panel's frequencies, every other
		if i%2 != 0 {
			continue
		}
		w := c.RadPerSampleFromHz(f)
		dts.Pts = append(dts.Pts, [2]float64{f, g.GroupDelay(w)})
		dcl.Pts = append(dcl.Pts, [2]float64{f, cl.GroupDelay(w)})
	}
	p, err := sim.Config{TauM: c.TauM, TauA: c.TauA, Dt: c.Dt, FStar: 20, Beta: beta, Lambda: lambda, Vth: math.MaxFloat64, Nesting: nest}.Params()
	if err != nil {
		return nil, err
	}
	tr, err := sim.Run(p, slices.Repeat([]float64{1}, 100))
	if err != nil {
		return nil, err
	}
	st := check{Plot: "step", Curve: "cl", Kind: "line"}
	for k, v := range tr.VPre {
		st.Pts = append(st.Pts, [2]float64{float64(k+1) * c.Dt, v})
	}
	return []check{dts, dcl, st}, nil
}

// play: notebook 03b: the neuron's pre-reset voltage and spikes from fits/sim; the input signal is the
// playground's (nb.PlaygroundInput), scaled by the FS module's peak gain (Theorem 2).
func play(s map[string]float64) ([]check, error) {
	c := theory.SSC
	u, _, err := nb.PlaygroundInput(int(s["input"]), c.Dt, 250)
	if err != nil {
		return nil, err
	}
	kappa, err := c.KappaForTargetHz(s["fstar"])
	if err != nil {
		return nil, err
	}
	fsm := c.FS(kappa)
	gain := fsm.Magnitude(fsm.Target().Omega)
	in := make([]float64, len(u))
	for k := range u {
		in[k] = s["amp"] * u[k] / gain
	}
	m := int(s["m"])
	b, l := slices.Repeat([]float64{s["beta"]}, m), slices.Repeat([]float64{s["lambda"]}, m)
	p, err := sim.Config{TauM: c.TauM, TauA: c.TauA, Dt: c.Dt, FStar: s["fstar"], Beta: b, Lambda: l, Vth: 1, Nesting: theory.Nesting(s["nesting"])}.Params()
	if err != nil {
		return nil, err
	}
	tr, err := sim.RunStates(p, in)
	if err != nil {
		return nil, err
	}
	v := check{Plot: "voltage", Curve: "v", Kind: "line"}
	sp := check{Plot: "spikes", Curve: "s", Kind: "vlines", Pts: [][2]float64{}}
	for k := range tr.VPre {
		t := float64(k+1) * c.Dt
		v.Pts = append(v.Pts, [2]float64{t, tr.VPre[k]})
		if tr.Spikes[k] == 1 {
			sp.Pts = append(sp.Pts, [2]float64{t, 0})
		}
	}
	return []check{v, sp}, nil
}

// pole: notebook 04: the pole pair and the response peak ±jΩ* (Appendix A.6).
func pole(s map[string]float64) ([]check, error) {
	ct := theory.CT{Mu: s["mu"], Rho: s["rho"], Kappa: s["kappa"]}
	p1, p2 := ct.Poles()
	out := []check{{Plot: "splane", Curve: "poles", Kind: "points", Pts: [][2]float64{{real(p1), imag(p1)}, {real(p2), imag(p2)}}}}
	if w, ok := ct.Target(); ok {
		out = append(out, check{Plot: "splane", Curve: "peak", Kind: "points", Pts: [][2]float64{{0, w}, {0, -w}}},
			check{Plot: "mag", Curve: "star", Kind: "vlines", Pts: [][2]float64{{w, 0}}})
	}
	return out, nil
}
