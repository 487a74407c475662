package nb

import (
	"errors"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/train"
)

// fidelityTable is a table as MeasureFidelity returns it, with numbers chosen so that each reading
// occurs: ts-mix-paper lower in every seed, dropout-shared within the seed spread.
func fidelityTable() *FidelityResult {
	return &FidelityResult{
		Dataset: "synthetic-shallow", Model: "fsts", M: 2, Width: 64, Epochs: 20, Dropout: 0.3,
		Protocol: train.OfficialVal, Selection: selectionText(train.OfficialVal), Seeds: []int64{1, 2, 3},
		Rows: []FidelityRow{
			{Variant: experiment.VariantBaseline, TestAcc: NewPairedStat([]float64{0.70, 0.50, 0.60}),
				Travel: NewPairedStat([]float64{0.2, 0.3, 0.25})},
			{Variant: experiment.VariantTSMixPaper, Flags: "--ts-mix=paper", PairedSeeds: []int64{1, 2, 3},
				TestAcc: NewPairedStat([]float64{0.65, 0.46, 0.55}), Travel: NewPairedStat([]float64{0.2, 0.3, 0.25}),
				DeltaAcc: NewPairedStat([]float64{-0.05, -0.04, -0.05}), DeltaTravel: NewPairedStat([]float64{-0.0001, 0, 0})},
			{Variant: experiment.VariantDropoutShared, Flags: "--dropout-mode=shared", PairedSeeds: []int64{1, 2, 3},
				TestAcc: NewPairedStat([]float64{0.72, 0.45, 0.61}), Travel: NewPairedStat([]float64{0.25, 0.28, 0.3}),
				DeltaAcc: NewPairedStat([]float64{0.02, -0.05, 0.01}), DeltaTravel: NewPairedStat([]float64{0.05, -0.02, 0.05})},
		},
		Runs: []FidelityRun{{Variant: experiment.VariantBaseline, Seed: 1, FreqProjected: 3}, {Variant: experiment.VariantBaseline, Seed: 2, FreqProjected: 4},
			{Variant: experiment.VariantBaseline, Seed: 3}, {Variant: experiment.VariantTSMixPaper, Seed: 1, FreqProjected: 100}},
		Notes: []string{"lr-step seed 3 has not finished (dir)"},
	}
}

func TestFidelityTable(t *testing.T) {
	tab := FidelityTable(fidelityTable())
	if len(tab.Rows) != 3 || len(tab.Header) != len(tab.Rows[1]) {
		t.Fatalf("table %+v", tab)
	}
	for _, want := range []string{"best validation accuracy (official-val)", "seeds 1, 2, 3", "synthetic-shallow", "M = 2", "dropout 0.3"} {
		if !strings.Contains(tab.Caption, want) {
			t.Errorf("caption %q lacks %q", tab.Caption, want)
		}
	}
	// Baseline: 60.00 ± 10.00 %, no differences.
	if got := tab.Rows[0]; got[3] != "60.00 ± 10.00" || got[4] != "" || got[6] != "0.250 ± 0.050" {
		t.Errorf("baseline row %q", got)
	}
	if got := tab.Rows[1]; got[4] != "-4.67 ± 0.58" || got[5] != "lower in every seed" || got[7] != "+0.000 ± 0.000" || got[8] != "within the seed spread" {
		t.Errorf("ts-mix-paper row %q", got)
	}
	if got := tab.Rows[2]; got[4] != "-0.67 ± 3.79" || got[5] != "within the seed spread" {
		t.Errorf("dropout-shared row %q", got)
	}
	md := tab.Markdown()
	if !strings.Contains(md, "| dropout-shared | --dropout-mode=shared | 3 |") {
		t.Errorf("markdown:\n%s", md)
	}
	notes := FidelityNotes(fidelityTable())
	for _, want := range []string{"official-val", "spreads by 10.00 points", "lr-step seed 3 has not finished", "sample standard deviation",
		"projected 7 f* entries in the baseline's 3 runs"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	read := FidelityReading(fidelityTable())
	if strings.Count(read, "\n") != 2 || !strings.Contains(read, "**ts-mix-paper** (`--ts-mix=paper`): accuracy -4.67 ± 0.58 points (lower in every seed)") {
		t.Errorf("reading:\n%s", read)
	}
}

func TestFidelityFigure(t *testing.T) {
	fig, err := FidelityFigure("14_released_vs_paper", fidelityTable())
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Panels) != 1 || len(fig.Panels[0]) != 2 || !strings.Contains(fig.Caption, "official-val") {
		t.Fatalf("figure %d rows, caption %q", len(fig.Panels), fig.Caption)
	}
	svg, err := fig.SVG()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ts-mix-paper", "dropout-shared", "Δ accuracy (percentage points)", "mean ± std over seeds 1, 2, 3"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if strings.Contains(string(svg), ">baseline<") {
		t.Error("the baseline is drawn as a variant")
	}
	only := fidelityTable()
	only.Rows = only.Rows[:1]
	if _, err := FidelityFigure("x", only); err == nil {
		t.Error("a table without variants drew a figure")
	}
}

func TestFidelityDifferencesAndVariants(t *testing.T) {
	ds := experiment.Differences()
	tab := FidelityDifferences(ds)
	if len(tab.Rows) != len(ds) || len(tab.Header) != 8 {
		t.Fatalf("%d rows for %d differences", len(tab.Rows), len(ds))
	}
	html := tab.HTML()
	for _, want := range []string{"Eq. 10", "--ts-mix=paper", "fits/stability.py", "— (not on this stand-in)"} {
		if !strings.Contains(html, want) {
			t.Errorf("differences table lacks %q", want)
		}
	}
	vs, err := FidelityVariants(experiment.Quick)
	if err != nil || len(vs.Rows) != len(experiment.Variants()) || vs.Rows[0][1] != "(none)" ||
		!strings.Contains(vs.Caption, "quick mode: synthetic-shallow, fsts M = 2, width 64, 20 epochs, batch 64, learning rate 0.005, dropout 0.3, official-val, readout sum") {
		t.Errorf("variants table %+v, %v", vs, err)
	}
	if vs, err := FidelityVariants(experiment.Full); err != nil || !strings.Contains(vs.Caption, "full mode: ssc, fsts M = 2, width 512, 100 epochs") {
		t.Errorf("full-mode variants table %q, %v", vs.Caption, err)
	}
}

// TestFidelityWithoutRuns: no finished baseline is no finished run (the session says so and goes on); the
// plan's unfinished runs are not measured.
func TestFidelityWithoutRuns(t *testing.T) {
	runs, err := Plan(t.TempDir(), experiment.Quick, []string{experiment.Fidelity})
	if err != nil || len(runs) != 33 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	for name, f := range map[string]func() error{
		"MeasureFidelity": func() error { _, err := MeasureFidelity(runs); return err },
		"FidelityResults": func() error { _, err := FidelityResults(runs, t.TempDir()); return err },
		"FidelityEffects": func() error { _, err := FidelityEffects(runs); return err },
	} {
		if err := f(); !errors.Is(err, ErrNoRuns) {
			t.Errorf("%s: %v, want ErrNoRuns", name, err)
		}
	}
}
