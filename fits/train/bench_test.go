package train

import (
	"fmt"
	"testing"
	"time"

	"github.com/fits-snn/fits/data/synth"
	"github.com/fits-snn/fits/fits/neuron"
)

// BenchmarkTrainStep measures one training step (forward, backward and Adam update) of the paper's
// feedforward network on SHD-like shapes: batch 128, T = 250 bins, 140 inputs, two hidden layers of width
// W. The first call, which builds and compiles the graph, is reported separately as compile-s.
//
//	GOMLX_BACKEND=xla:cpu go test ./fits/train -run '^$' -bench TrainStep -benchtime 3x
//	GOMLX_BACKEND=go:ops_sequential go test ./fits/train -run '^$' -bench 'TrainStep/fsts' -benchtime 1x
func BenchmarkTrainStep(b *testing.B) {
	for _, bc := range []struct {
		kind         neuron.Kind
		order, width int
	}{
		{neuron.FSTS, 2, 128},
		{neuron.LIF, 0, 128},
	} {
		b.Run(fmt.Sprintf("%s-M%d-W%d", bc.kind, bc.order, bc.width), func(b *testing.B) {
			backend := testBackend(b)
			sc := synth.LongConfig() // T = 250 bins of 4 ms

			sc.Train, sc.Val, sc.Test = 128, 8, 8
			ds, err := synth.Generate(sc)
			if err != nil {
				b.Fatal(err)
			}
			cfg := DefaultConfig()
			cfg.Model, cfg.M, cfg.Width, cfg.Batch, cfg.Epochs = bc.kind.String(), bc.order, bc.width, 128, 1
			r, sp, _ := testRunner(b, cfg, ds, backend)
			defer r.close()
			r.fill(sp.train, seq(128))
			start := time.Now()
			if _, _, err := r.trainStep(); err != nil {
				b.Fatal(err)
			}
			first := time.Since(start)
			start = time.Now()
			if _, _, err := r.trainStep(); err != nil {
				b.Fatal(err)
			}
			second := time.Since(start)
			b.ResetTimer()
			for b.Loop() {
				if _, _, err := r.trainStep(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((first - second).Seconds(), "compile-s")
		})
	}
}
