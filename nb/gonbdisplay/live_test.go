package gonbdisplay

import (
	"testing"

	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/nb"
)

// Outside a GoNB kernel the monitor still collects the curves and renders them (reporting errors).
func TestTrainingMonitor(t *testing.T) {
	done := nb.Curves{Label: "lif", Epochs: []train.Epoch{{Epoch: 1, Loss: 2, TrainAcc: 0.2, TestAcc: 0.1}}}
	m := NewTrainingMonitor(3, done)
	progress := m.Progress("fs")
	if len(m.Runs) != 2 || m.Runs[1].Label != "fs" || len(m.Runs[1].Epochs) != 0 {
		t.Fatalf("runs %+v", m.Runs)
	}
	for e := 1; e <= 2; e++ {
		progress(train.Progress{Phase: train.PhaseStep, Epoch: e, Epochs: 3, Step: 1, Steps: 1, Loss: 1})
		progress(train.Progress{Phase: train.PhaseEpoch, Epoch: e, Epochs: 3, Result: &train.Epoch{Epoch: e, Loss: 1 / float64(e)}})
	}
	if got := m.Runs[1].Epochs; len(got) != 2 || got[1].Epoch != 2 || got[1].Loss != 0.5 {
		t.Errorf("epochs of the run in progress: %+v", got)
	}
	// A resumed run's result holds all its epochs: Finish takes them.
	res := &train.Result{Model: "fs", Epochs: []train.Epoch{{Epoch: 1}, {Epoch: 2}, {Epoch: 3}}, BestEpoch: 3}
	m.Finish(res)
	if len(m.Runs[1].Epochs) != 3 || len(m.Runs[0].Epochs) != 1 {
		t.Errorf("after Finish: %+v", m.Runs)
	}
	if m.Err != nil {
		t.Errorf("drawing: %v", m.Err)
	}
	if err := UpdateFigure("x", &nb.Figure{Name: "empty"}); err == nil {
		t.Error("UpdateFigure accepted a figure without panels")
	}
}
