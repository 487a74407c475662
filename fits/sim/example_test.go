package sim_test

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/sim"
	"github.com/fits-snn/fits/fits/theory"
)

// Run steps Algorithm 1 in float64. Sinusoidal currents of 2, 10 and 40 Hz (in threshold units per step,
// 1 s at the SSC time step) drive an FS neuron tuned to f* = 10 Hz (κ = ηγ from Theorem 1, split
// into equal gains η = γ = √κ): frequency selectivity shows as spikes at its target frequency and few or
// none away from it. A leaky integrate-and-fire neuron (η = γ = 0) is a low-pass filter: it fires most at
// the lowest frequency.
func ExampleRun() {
	c := theory.SSC // τm = 40 ms, τa = 200 ms, Δt = 4 ms
	kappa, err := c.KappaForTargetHz(10)
	if err != nil {
		panic(err)
	}
	eta, gamma := theory.EqualGains(kappa)
	for _, n := range []struct {
		name       string
		eta, gamma float64
		amplitude  float64
	}{{"LIF", 0, 0, 0.15}, {"FS, f* = 10 Hz", eta, gamma, 0.3}} {
		p := sim.Params{Mu: 1 / c.TauM, Rho: 1 / c.TauA, Dt: c.Dt, Eta: n.eta, Gamma: n.gamma, Vth: 1}
		fmt.Printf("%-15s", n.name)
		for _, f := range []float64{2, 10, 40} {
			current := make([]float64, 250)
			for k := range current {
				current[k] = n.amplitude * math.Sin(2*math.Pi*f*float64(k)*c.Dt)
			}
			tr, err := sim.Run(p, current)
			if err != nil {
				panic(err)
			}
			spikes := 0
			for _, s := range tr.Spikes {
				spikes += s
			}
			fmt.Printf("  %2.0f Hz: %2d spikes", f, spikes)
		}
		fmt.Println()
	}
	// Output:
	// LIF               2 Hz:  4 spikes  10 Hz:  0 spikes  40 Hz:  0 spikes
	// FS, f* = 10 Hz    2 Hz:  0 spikes  10 Hz: 27 spikes  40 Hz:  0 spikes
}
