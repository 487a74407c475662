package train

import (
	"slices"
	"testing"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/synth"
)

func TestFinalEpochProtocol(t *testing.T) {
	p, err := ParseProtocol("final-epoch")
	if err != nil || p != FinalEpoch || !slices.Contains(Protocols(), FinalEpoch) {
		t.Fatalf("ParseProtocol(final-epoch) = %q, %v; Protocols() = %v", p, err, Protocols())
	}
	cfg := DefaultConfig()
	cfg.Protocol = FinalEpoch
	if err := cfg.Validate(); err != nil {
		t.Errorf("a final-epoch configuration does not validate: %v", err)
	}
	// It trains and tests on the same splits as best-test, with no validation split.
	ds, err := synth.Generate(synth.SmallConfig())
	if err != nil {
		t.Fatal(err)
	}
	fe, err := protocolSplits(withProtocol(FinalEpoch), ds)
	if err != nil {
		t.Fatal(err)
	}
	if fe.train != ds.Train || fe.test != ds.Test || fe.val != nil {
		t.Errorf("final-epoch splits: train %p test %p val %p, want %p %p nil", fe.train, fe.test, fe.val, ds.Train, ds.Test)
	}
	if _, _, _, err := ProtocolSplits(withProtocol(FinalEpoch), &data.Dataset{Name: "x", Train: ds.Train, Test: ds.Test}); err != nil {
		t.Errorf("ProtocolSplits(final-epoch) on a dataset without validation split: %v", err)
	}
	// The summary selects the last epoch, not the best one.
	r := &Result{Protocol: FinalEpoch, Epochs: []Epoch{{Epoch: 1, TestAcc: 0.3}, {Epoch: 2, TestAcc: 0.7}, {Epoch: 3, TestAcc: 0.5}}}
	r.summarize()
	if r.BestEpoch != 3 || r.FinalTestAcc != 0.5 || r.BestTestAcc != 0.7 || r.BestValAcc != nil {
		t.Errorf("final-epoch summary: best epoch %d, final %v, best test %v", r.BestEpoch, r.FinalTestAcc, r.BestTestAcc)
	}
}

func TestSelectedTestAcc(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	epochs := []Epoch{
		{Epoch: 1, ValAcc: f(0.5), TestAcc: 0.4},
		{Epoch: 2, ValAcc: f(0.8), TestAcc: 0.6},
		{Epoch: 3, ValAcc: f(0.7), TestAcc: 0.9},
		{Epoch: 4, ValAcc: f(0.6), TestAcc: 0.75},
	}
	noVal := make([]Epoch, len(epochs))
	for i, e := range epochs {
		e.ValAcc = nil
		noVal[i] = e
	}
	for _, tc := range []struct {
		protocol Protocol
		epochs   []Epoch
		want     float64
	}{
		{BestTest, noVal, 0.9},
		{ValSplit, epochs, 0.6},
		{OfficialVal, epochs, 0.6},
		{FinalEpoch, noVal, 0.75},
	} {
		r := &Result{Protocol: tc.protocol, Epochs: tc.epochs}
		r.summarize()
		got, err := r.SelectedTestAcc()
		if err != nil || got != tc.want {
			t.Errorf("%s: SelectedTestAcc = %v, %v; want %v", tc.protocol, got, err, tc.want)
		}
	}
	bad := []*Result{
		{Protocol: BestTest},                 // no epochs
		{Protocol: ValSplit, Epochs: noVal},  // no validation numbers
		{Protocol: "cv", Epochs: epochs[:1]}, // unknown protocol
	}
	for _, r := range bad {
		r.summarize()
		if _, err := r.SelectedTestAcc(); err == nil {
			t.Errorf("SelectedTestAcc accepted %+v", r)
		}
	}
}
