package nb

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/experiment"
)

func TestTableA8(t *testing.T) {
	e, err := experiment.Lookup("ssc/fs/w512")
	if err != nil {
		t.Fatal(err)
	}
	// Two checkpoints: full 0.8 and 0.6, reset 0.5 and 0.5, shuffle 0.125 and 0.125.
	res := func(seed int64, full, reset, shuffle float64) analysis.PerturbResult {
		return analysis.PerturbResult{Seed: seed, Epoch: 20, Full: analysis.PerturbEval{TestAcc: full}, Reset: analysis.PerturbEval{TestAcc: reset},
			Shuffle: analysis.PerturbEval{TestAcc: shuffle}, DeltaReset: reset - full, DeltaShuffle: shuffle - full}
	}
	ms := func(v ...float64) analysis.MeanStdValue {
		m, s := analysis.MeanStd(v)
		return analysis.MeanStdValue{Mean: m, Std: s}
	}
	g := analysis.PerturbGroup{Key: analysis.GroupKey{Dataset: "synthetic-shallow", Model: "fs", Width: 64},
		Runs: []analysis.PerturbResult{res(1, 0.8, 0.5, 0.125), res(2, 0.6, 0.5, 0.125)},
		Full: ms(0.8, 0.6), Reset: ms(0.5, 0.5), Shuffle: ms(0.125, 0.125), DeltaReset: ms(-0.3, -0.1), DeltaShuffle: ms(-0.675, -0.475)}
	out, err := tableA8([]perturbCell{{e, g}}, experiment.Quick)
	if err != nil {
		t.Fatal(err)
	}
	summary, long := out.Tables[0], out.Tables[1]
	want := [][]string{
		{"512", "paper", "5", "77.78 ± 0.15", "73.43 ± 0.49", "(-4.34 ± 0.43)", "3.59 ± 0.34", "(-74.19 ± 0.30)"},
		{"512", "ours (trained at W = 64)", "2", "70.00 ± 14.14", "50.00 ± 0.00", "(-20.00 ± 14.14)", "12.50 ± 0.00", "(-57.50 ± 14.14)"},
	}
	if len(summary.Rows) != 2 || !slices.Equal(summary.Rows[0], want[0]) || !slices.Equal(summary.Rows[1], want[1]) {
		t.Errorf("rows %q, want %q", summary.Rows, want)
	}
	if !strings.Contains(summary.Caption, "latest checkpoint") || !strings.Contains(summary.Caption, "quick mode") {
		t.Errorf("caption %q", summary.Caption)
	}
	if w := []string{"ssc/fs/w512", "2", "20", "60.00", "50.00", "12.50", "-10.00", "-47.50"}; len(long.Rows) != 2 || !slices.Equal(long.Rows[1], w) {
		t.Errorf("per checkpoint %q, want the second %q", long.Rows, w)
	}
	fig := out.Figures[0]
	if fig.Name != "09_tableA8_paired_changes" {
		t.Errorf("figure %s", fig.Name)
	}
	render(t, fig)

	e.Full.Width = 100
	if _, err := tableA8([]perturbCell{{e, g}}, experiment.Quick); err == nil {
		t.Error("a width the paper does not have was accepted")
	}
	if _, err := TableA8(nil, experiment.Quick); !errors.Is(err, ErrNoRuns) {
		t.Errorf("no runs: %v", err)
	}
}
