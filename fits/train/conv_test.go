package train

import (
	"testing"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/dvs"
)

// TestConvLearnsDVSFixture trains the DVS conv network (model.DefaultConvConfig: two conv blocks with max
// pooling, a fully connected block, LIF neurons) on a small version of the synthetic DVS gestures — 3
// training and 3 held-out users (33 gestures each), 20 frames of 20 ms on 32×32 — and requires every block
// to fire and the held-out accuracy to reach 3× chance (11 classes: 3/11).
func TestConvLearnsDVSFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a conv network")
	}
	b := testBackend(t)
	fc := dvs.FixtureConfig()
	fc.Users, fc.TrainUsers, fc.EventsPerSec = 6, 3, 4000
	ds, err := dvs.LoadFixture(data.Options{Dir: t.TempDir()}, fc, dvs.Framing{T: 20, Dt: 0.02, Sensor: 128, Out: 32}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Dataset, cfg.Model, cfg.Protocol = dvs.FixtureName, "lif", FinalEpoch
	cfg.Width, cfg.Batch, cfg.Epochs, cfg.LR = 16, 4, 8, 5e-3
	r, err := TrainModel(cfg, Options{Backend: b, Dataset: ds})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Epochs {
		t.Logf("epoch %d: loss %.3f, train %.1f %%, test %.1f %%, firing rates %.4f", e.Epoch, e.Loss, 100*e.TrainAcc, 100*e.TestAcc, e.FiringRates)
	}
	if len(r.FinalFiringRates) != 3 {
		t.Fatalf("firing rates of %d blocks, want 3", len(r.FinalFiringRates))
	}
	for i, rate := range r.FinalFiringRates {
		if !(rate > 1e-3) {
			t.Errorf("block %d fires %.4g spikes per neuron per bin: silent", i, rate)
		}
	}
	if chance := 1.0 / dvs.Classes; r.FinalTestAcc < 3*chance {
		t.Errorf("final test accuracy %.1f %%, want at least 3× chance (%.1f %%)", 100*r.FinalTestAcc, 300*chance)
	}
}
