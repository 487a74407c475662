package bench

import (
	"math"
	"slices"
	"testing"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

// TestTrainingSuiteCells checks the training suite's cells against Table A.4 (every dataset, M and W maps to
// a catalog experiment with the table's minutes beside it; sMNIST is the Table A.9 recipe without a paper
// time) and the arithmetic of its estimate from a run's result.
func TestTrainingSuiteCells(t *testing.T) {
	cells, err := TrainingCells([]string{"shd", "ssc", "gsc", "smnist"}, []int{0, 1, 2}, paper.Widths())
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 37 {
		t.Fatalf("%d cells, want 36 of Table A.4 and sMNIST", len(cells))
	}
	for _, c := range cells {
		e, err := experiment.Lookup(c.Experiment)
		if err != nil {
			t.Errorf("cell %+v: %v", c, err)
			continue
		}
		if c.Dataset != "smnist" && !slices.Contains(e.Tables, "Table A.4") {
			t.Errorf("cell %+v: experiment %s is not in Table A.4 but in %v", c, c.Experiment, e.Tables)
		}
		if p := PaperTrainingMinutes(c); (p == nil) != (c.Dataset == "smnist") {
			t.Errorf("cell %+v: paper minutes %v", c, p)
		}
	}
	if c := cells[4]; c.Experiment != "shd-val/fsts-m1/w64" || *PaperTrainingMinutes(c) != 6.0 {
		t.Errorf("cell 4 = %+v (%v), want shd-val/fsts-m1/w64 at 6.0 min", c, PaperTrainingMinutes(c))
	}
	var row TrainingRow
	r := train.Result{CompileSeconds: 3, WallSeconds: 40, Epochs: []train.Epoch{{Seconds: 13}, {Seconds: 10}, {Seconds: 12}}}
	if err := row.FillFromResult(r); err != nil {
		t.Fatal(err)
	}
	// Epochs without compile: 10, 10, 12 -> median 10; setup 40 - 35 = 5; (1000 + 3 + 5) / 60.
	if row.EpochSeconds != 10 || row.SetupSeconds != 5 || math.Abs(row.Minutes100-1008.0/60) > 1e-12 {
		t.Errorf("row = %+v", row)
	}
	if err := row.FillFromResult(train.Result{}); err == nil {
		t.Error("a result without epochs gave no error")
	}
}
