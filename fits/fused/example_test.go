package fused_test

import (
	"fmt"

	"github.com/fits-snn/fits/fits/fused"
)

// A plain LIF neuron (no adaptation, no TS stage: no coefficient arrays) driven by a constant current of
// 0.3 per step with μ̄ = 0.9: V = 0.3, 0.57, 0.813, 1.032 crosses Vth = 1 at step 4 and is reset by
// subtraction, and so on every fourth step. Backward returns the cotangent of every step's current for a
// loss that reads the spike of the last step only: at step 12 the pre-reset voltage is 1.066, so
// d S/d I = σ′(0.066) = 0.3·(1 − 0.066) = 0.280; one step earlier V = 0.851 did not spike, and the
// gradient reaches I[11] through V (μ̄·0.280) and through the reset term (−σ′(−0.149)·Vth·μ̄·0.280).
func ExampleForward() {
	c := fused.Coefficients{MuBar: 0.9, Vth: 1, SurrogateWidth: 1, SurrogateScale: 0.3}
	s := fused.Shape{Batch: 1, Steps: 12, Neurons: 1}
	current := []float32{0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3}
	spikes := make([]float32, s.Steps)
	counts, err := fused.Forward(&c, s, current, nil, spikes)
	if err != nil {
		panic(err)
	}
	fmt.Println("spikes:", spikes, "count:", counts[0])

	cotSpikes := make([]float32, s.Steps)
	cotSpikes[s.Steps-1] = 1 // d loss / d S[12]
	cotCurrent := make([]float32, s.Steps)
	if _, err := fused.Backward(&c, s, current, cotSpikes, nil, cotCurrent); err != nil {
		panic(err)
	}
	fmt.Printf("d loss / d I[12] = %.4f, d loss / d I[11] = %.4f\n", cotCurrent[11], cotCurrent[10])
	// Output:
	// spikes: [0 0 0 1 0 0 0 1 0 0 0 1] count: 3
	// d loss / d I[12] = 0.2802, d loss / d I[11] = 0.1877
}
