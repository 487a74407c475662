package nb

import (
	"math"
	"testing"

	"github.com/fits-snn/fits/fits/theory"
)

func TestDTExactErrors(t *testing.T) {
	c := theory.Constants{TauM: 0.04, TauA: 0.2, Dt: 0.004}
	targets, err := theory.LogSpacedHz(1, 50, 64)
	if err != nil {
		t.Fatal(err)
	}
	mae, maxErr, n, skipped := DTExactErrors(c, append(targets, 0, 200))
	if n != 64 || skipped != 2 {
		t.Errorf("n = %d, skipped = %d; want 64 and 2 (0 Hz and 200 Hz = 1.6 × Nyquist)", n, skipped)
	}
	// The CT parameterization misses by up to several Hz at 50 Hz (Table 5: max 7.4 Hz); DT-exact by the
	// sweep's resolution only.
	if maxErr > 1e-3 || mae > maxErr {
		t.Errorf("MAE %g Hz, max %g Hz; want both below 1 mHz", mae, maxErr)
	}
	k, _ := c.KappaForTargetHz(50)
	dt, _ := c.DTSweepTargetHz(k)
	if dt-50 < 1 && 50-dt < 1 {
		t.Errorf("the CT parameterization realizes %g Hz for 50 Hz: the test's premise (a gap of Hz) fails", dt)
	}
}

func TestCategoryFigure(t *testing.T) {
	nan := math.NaN()
	fig, err := CategoryFigure("11_energy", "Energy.", []CategoryPanel{{Title: "E_layer", XLabel: "model", YLabel: "energy (µJ)",
		Categories: []string{"LIF", "FS"}, Series: []CategorySeries{{"paper", []float64{6.1, 5.0}, nil}, {"ours", []float64{2, nan}, []float64{0.1, 0}}}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRenders(t, fig, "paper", "ours", "energy (µJ)")
	if _, err := CategoryFigure("11_bad", "bad", []CategoryPanel{{Title: "x", Categories: []string{"a"}, Series: []CategorySeries{{"s", []float64{1, 2}, nil}}}}, 0); err == nil {
		t.Error("series longer than the categories accepted")
	}
}
